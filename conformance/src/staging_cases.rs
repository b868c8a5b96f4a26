//! Staging cases: `stage_scalars_padded` writes its values and zeroes the rest of the
//! buffer, whatever the buffer held before; `stage_scalars` of fewer values writes the
//! front and keeps the rest; `read_scalars_into` reads the same values
//! as `read_scalars` over whatever the destination held, and refuses a destination of
//! another length.

use ark_ff::{UniformRand, Zero};
use ark_std::rand::rngs::StdRng;
use crucible_core::{Fr, ProverBackend, ScratchNeed};

use crate::items;
use crate::ntt_cases::{first_difference, scalar_plan};
use crate::suite::Runner;
use crate::CaseError;

fn padded_case(
    backend: &dyn ProverBackend,
    rng: &mut StdRng,
    len: usize,
    live: usize,
) -> Result<(), CaseError> {
    let before: Vec<Fr> = (0..len).map(|_| Fr::rand(rng)).collect();
    let values: Vec<Fr> = (0..live).map(|_| Fr::rand(rng)).collect();
    let mut want = values.clone();
    want.resize(len, Fr::zero());
    let plan = scalar_plan(backend, &[(items::X, len)], ScratchNeed::default());
    let mut lease = backend.allocate(plan)?;
    let x = backend.alloc_scalars(&mut lease, items::X, len)?;
    // Non-zero contents first, so that a tail left alone shows.
    backend.stage_scalars(&mut lease, x, &before)?;
    backend.stage_scalars_padded(&mut lease, x, &values)?;
    let got = backend.read_scalars(&lease, x)?;
    let mut into: Vec<Fr> = (0..len).map(|_| Fr::rand(rng)).collect();
    backend.read_scalars_into(&lease, x, &mut into)?;
    if into != got {
        return Err(fail!("read_scalars_into differs from read_scalars"));
    }
    let mut short = vec![Fr::zero(); len.saturating_sub(1)];
    if backend.read_scalars_into(&lease, x, &mut short).is_ok() {
        return Err(fail!(
            "reading {len} scalars into {} was accepted",
            short.len()
        ));
    }
    // Longer than the buffer: an error, and the buffer is still usable.
    let too_long = vec![Fr::zero(); len + 1];
    if backend
        .stage_scalars_padded(&mut lease, x, &too_long)
        .is_ok()
    {
        return Err(fail!("staging {} values into {len} was accepted", len + 1));
    }
    // Fewer values than the buffer: the front is written, the rest kept.
    let front: Vec<Fr> = (0..live).map(|_| Fr::rand(rng)).collect();
    backend.stage_scalars(&mut lease, x, &front)?;
    let kept = backend.read_scalars(&lease, x)?;
    lease.release()?;
    let mut want_kept = front;
    want_kept.extend_from_slice(&want[live..]);
    first_difference(&got, &want)?;
    first_difference(&kept, &want_kept)
}

/// Padded staging at a few lengths: empty, short, half, full.
pub fn run(r: &mut Runner<'_>) {
    let backend = r.backend;
    let big = 1usize << r.config.max_log_size.min(16);
    let mut cases = vec![(1, 0), (7, 3), (big, big / 2 + 5), (big, big), (big, 1)];
    // Only valid cases (at small sizes some coincide or would not fit their buffer).
    cases.retain(|&(len, live)| live <= len);
    cases.sort_unstable();
    cases.dedup();
    for (len, live) in cases {
        r.case(&format!("stage/padded/{live}-of-{len}"), |rng| {
            padded_case(backend, rng, len, live)
        });
    }
}
