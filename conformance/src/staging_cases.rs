//! Staging cases: `stage_scalars_padded` writes its values and zeroes the rest of the
//! buffer, whatever the buffer held before; `stage_scalars` of fewer values writes the
//! front and keeps the rest; `read_scalars_into` reads the same values
//! as `read_scalars` over whatever the destination held, and refuses a destination of
//! another length. Scalars pinned by the backend (`pin_scalars`) stage, transform and
//! read back the same values as any others, and stay the caller's when unpinned.

use ark_ff::Zero;
use ark_std::rand::rngs::StdRng;
use crucible_core::{Domain, NttKind, PairingCurve, ProverBackend, ScratchNeed};

use crate::compare::{first_difference, reference};
use crate::inputs::random_scalars;
use crate::items;
use crate::items::scalar_plan;
use crate::runner::Runner;
use crate::CaseError;

fn padded_case<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    rng: &mut StdRng,
    len: usize,
    live: usize,
) -> Result<(), CaseError> {
    let before: Vec<E::ScalarField> = random_scalars(rng, len);
    let values: Vec<E::ScalarField> = random_scalars(rng, live);
    let mut want = values.clone();
    want.resize(len, E::ScalarField::zero());
    let plan = scalar_plan(backend, &[(items::X, len)], ScratchNeed::default());
    let mut lease = backend.allocate(plan)?;
    let x = backend.alloc_scalars(&mut lease, items::X, len)?;
    // Non-zero contents first, so that a tail left alone shows.
    backend.stage_scalars(&mut lease, x, &before)?;
    backend.stage_scalars_padded(&mut lease, x, &values)?;
    let got = backend.read_scalars(&lease, x)?;
    let mut into: Vec<E::ScalarField> = random_scalars(rng, len);
    backend.read_scalars_into(&lease, x, &mut into)?;
    if into != got {
        return Err(fail!("read_scalars_into differs from read_scalars"));
    }
    let mut short = vec![E::ScalarField::zero(); len.saturating_sub(1)];
    if backend.read_scalars_into(&lease, x, &mut short).is_ok() {
        return Err(fail!(
            "reading {len} scalars into {} was accepted",
            short.len()
        ));
    }
    // Longer than the buffer: an error, and the buffer is still usable.
    let too_long = vec![E::ScalarField::zero(); len + 1];
    if backend
        .stage_scalars_padded(&mut lease, x, &too_long)
        .is_ok()
    {
        return Err(fail!("staging {} values into {len} was accepted", len + 1));
    }
    // Fewer values than the buffer: the front is written, the rest kept.
    let front: Vec<E::ScalarField> = random_scalars(rng, live);
    backend.stage_scalars(&mut lease, x, &front)?;
    let kept = backend.read_scalars(&lease, x)?;
    lease.release()?;
    let mut want_kept = front;
    want_kept.extend_from_slice(&want[live..]);
    first_difference(&got, &want)?;
    first_difference(&kept, &want_kept)
}

/// A transform from pinned scalars into pinned scalars (a backend that pins nothing
/// copies them as it copies any), padded staging from a pinned front, and the
/// length checks on pinned memory.
fn pinned_case<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    rng: &mut StdRng,
    log: u32,
) -> Result<(), CaseError> {
    let domain = Domain::with_log_size(log)?;
    let n = domain.size;
    let input: Vec<E::ScalarField> = random_scalars(rng, n);
    let mut want = input.clone();
    reference(&mut want, &domain, NttKind::Forward);
    let live = n / 2 + 1;
    let mut want_padded = input[..live].to_vec();
    want_padded.resize(n, E::ScalarField::zero());
    let need = ScratchNeed {
        ntt: Some(domain),
        ..Default::default()
    };
    let plan = scalar_plan(backend, &[(items::X, n), (items::Y, n)], need);
    let mut lease = backend.allocate(plan)?;
    let x = backend.alloc_scalars(&mut lease, items::X, n)?;
    let y = backend.alloc_scalars(&mut lease, items::Y, n)?;
    let mut src = input.clone();
    let mut out: Vec<E::ScalarField> = random_scalars(rng, n);
    let padded = {
        let src = backend.pin_scalars(&mut src)?;
        let mut dst = backend.pin_scalars(&mut out)?;
        backend.stage_scalars(&mut lease, x, &src)?;
        backend.ntt(&mut lease, x, &domain, NttKind::Forward)?;
        backend.read_scalars_into(&lease, x, &mut dst)?;
        if backend.read_scalars_into(&lease, x, &mut dst[1..]).is_ok() {
            return Err(fail!(
                "reading {n} scalars into {} pinned was accepted",
                n - 1
            ));
        }
        backend.stage_scalars(&mut lease, y, &src)?;
        backend.stage_scalars_padded(&mut lease, y, &src[..live])?;
        backend.read_scalars(&lease, y)?
    };
    lease.release()?;
    if src != input {
        return Err(fail!("staging changed the pinned source"));
    }
    first_difference(&out, &want)?;
    first_difference(&padded, &want_padded)
}

/// Padded staging at a few lengths: empty, short, half, full; pinned scalars.
pub fn run<E: PairingCurve>(r: &mut Runner<'_, E>) {
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
    for log in [1, r.config.max_log_size.min(16)] {
        r.case(&format!("stage/pinned/2^{log}"), |rng| {
            pinned_case(backend, rng, log)
        });
    }
}
