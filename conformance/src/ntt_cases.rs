//! NTT and pointwise cases against ark-poly.

use ark_ff::{Field, UniformRand};
use ark_std::rand::rngs::StdRng;
use crucible_core::{Domain, NttKind, PairingCurve, ProverBackend, ScratchNeed};

use crate::compare::{first_difference, reference};
use crate::inputs::random_scalars;
use crate::items;
use crate::items::scalar_plan;
use crate::runner::Runner;
use crate::CaseError;

fn kind_name(kind: NttKind) -> &'static str {
    match kind {
        NttKind::Forward => "forward",
        NttKind::Inverse => "inverse",
        NttKind::CosetForward => "coset-forward",
        NttKind::CosetInverse => "coset-inverse",
    }
}

fn ntt_case<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    rng: &mut StdRng,
    domain: Domain<E::ScalarField>,
    kind: NttKind,
) -> Result<(), CaseError> {
    let input: Vec<E::ScalarField> = random_scalars(rng, domain.size);
    let mut want = input.clone();
    reference(&mut want, &domain, kind);
    let plan = scalar_plan(
        backend,
        &[(items::X, domain.size)],
        ScratchNeed {
            ntt: Some(domain),
            ..Default::default()
        },
    );
    let mut lease = backend.allocate(plan)?;
    let x = backend.alloc_scalars(&mut lease, items::X, domain.size)?;
    backend.stage_scalars(&mut lease, x, &input)?;
    backend.ntt(&mut lease, x, &domain, kind)?;
    let got = backend.read_scalars(&lease, x)?;
    lease.release()?;
    first_difference(&got, &want)
}

fn pointwise_case<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    rng: &mut StdRng,
    n: usize,
    sub: bool,
) -> Result<(), CaseError> {
    let a: Vec<E::ScalarField> = random_scalars(rng, n);
    let b: Vec<E::ScalarField> = random_scalars(rng, n);
    let k = E::ScalarField::rand(rng);
    let want: Vec<E::ScalarField> = a
        .iter()
        .zip(&b)
        .map(|(x, y)| if sub { (*x - y) * k } else { *x * y })
        .collect();
    let plan = scalar_plan(
        backend,
        &[(items::A, n), (items::B, n)],
        ScratchNeed::default(),
    );
    let mut lease = backend.allocate(plan)?;
    let da = backend.alloc_scalars(&mut lease, items::A, n)?;
    let db = backend.alloc_scalars(&mut lease, items::B, n)?;
    backend.stage_scalars(&mut lease, da, &a)?;
    backend.stage_scalars(&mut lease, db, &b)?;
    if sub {
        backend.sub_mul_assign(&mut lease, da, db, k)
    } else {
        backend.mul_assign(&mut lease, da, db)
    }?;
    let got = backend.read_scalars(&lease, da)?;
    lease.release()?;
    first_difference(&got, &want)
}

/// Every NTT kind at every size up to the configured maximum, plus pointwise ops.
pub fn run<E: PairingCurve>(r: &mut Runner<'_, E>) {
    let backend = r.backend;
    for log in 0..=r.config.max_log_size {
        let domain = match Domain::<E::ScalarField>::with_log_size(log) {
            Ok(d) => d,
            Err(e) => {
                r.case(&format!("ntt/2^{log}"), |_| Err(e.into()));
                continue;
            }
        };
        for kind in NttKind::ALL {
            r.case(&format!("ntt/{}/2^{log}", kind_name(kind)), |rng| {
                ntt_case(backend, rng, domain, kind)
            });
        }
    }
    let mut sizes = vec![1usize, 7, 1 << r.config.max_log_size.min(16)];
    sizes.sort_unstable();
    sizes.dedup();
    for n in sizes {
        r.case(&format!("pointwise/mul/{n}"), |rng| {
            pointwise_case(backend, rng, n, false)
        });
        r.case(&format!("pointwise/sub-mul/{n}"), |rng| {
            pointwise_case(backend, rng, n, true)
        });
        r.case(&format!("pointwise/mul-aliased-squares/{n}"), |rng| {
            aliased_case(backend, rng, n, false)
        });
        r.case(&format!("pointwise/sub-mul-aliased-zeroes/{n}"), |rng| {
            aliased_case(backend, rng, n, true)
        });
    }
}

/// `mul_assign(x, x)` squares `x` and `sub_mul_assign(x, x, k)` zeroes it, on every
/// backend (the trait defines aliasing), in a plan with no scratch need.
fn aliased_case<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    rng: &mut StdRng,
    n: usize,
    sub: bool,
) -> Result<(), CaseError> {
    let x: Vec<E::ScalarField> = random_scalars(rng, n);
    let want: Vec<E::ScalarField> = if sub {
        vec![E::ScalarField::from(0u64); n]
    } else {
        x.iter().map(|v| v.square()).collect()
    };
    let plan = scalar_plan(backend, &[(items::X, n)], ScratchNeed::default());
    let mut lease = backend.allocate(plan)?;
    let dx = backend.alloc_scalars(&mut lease, items::X, n)?;
    backend.stage_scalars(&mut lease, dx, &x)?;
    if sub {
        backend.sub_mul_assign(&mut lease, dx, dx, E::ScalarField::rand(rng))
    } else {
        backend.mul_assign(&mut lease, dx, dx)
    }?;
    let got = backend.read_scalars(&lease, dx)?;
    lease.release()?;
    first_difference(&got, &want)
}
