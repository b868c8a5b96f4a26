//! MSM cases on G1 and G2 against ark-ec: edge sizes, edge scalars, edge bases.

use ark_ec::{AffineRepr, CurveGroup, VariableBaseMSM};
use ark_ff::{Field, UniformRand, Zero};
use ark_std::rand::{rngs::StdRng, Rng};
use crucible_core::{
    BufferUse, ElementKind, Lease, MemoryPlan, MsmSpan, PairingCurve, PlanKey, ProverBackend,
    Result as CoreResult, ScalarBuf, ScratchNeed,
};

use crate::inputs::random_bases;
use crate::items;
use crate::items::scalar_plan;
use crate::runner::Runner;
use crate::CaseError;

pub use crucible_core::group::{MsmGroup, G1, G2};

/// Allocates `bases.len()` resident bases from `key` and stages them.
pub fn stage_bases<E: PairingCurve, G: MsmGroup<Curve = E>>(
    backend: &dyn ProverBackend<E>,
    lease: &mut Lease,
    key: PlanKey,
    bases: &[G::Affine],
) -> CoreResult<G::Buf> {
    let buf = G::alloc(backend, lease, key, bases.len(), BufferUse::Resident)?;
    G::stage(backend, lease, buf, bases)?;
    Ok(buf)
}

/// Scalar patterns of the edge cases.
#[derive(Clone, Copy, Debug)]
enum Scalars {
    Random,
    Zero,
    MinusOne,
    AllEqual,
    TopBits,
    SmallAndSparse,
    /// 0 or 1, as most witness values of real circuits: one bucket of window 0 holds
    /// about half the terms.
    Boolean,
    /// Nine in ten 0 or 1, the rest full width: a bit-decomposition circuit's witness.
    BitHeavy,
    /// Every scalar 1: a backend that sums the ones apart has no other term.
    AllOnes,
    /// Every scalar 1 but one random one.
    OneAmongOnes,
    /// Random, with 1 at the first and the last term.
    OnesAtEdges,
}

/// Base patterns of the edge cases.
#[derive(Clone, Copy, Debug)]
enum Bases {
    Random,
    SomeIdentity,
    AllIdentity,
    Repeated,
    Opposite,
}

fn scalars<E: PairingCurve>(rng: &mut StdRng, n: usize, kind: Scalars) -> Vec<E::ScalarField> {
    let same = E::ScalarField::rand(rng);
    let odd_one = rng.gen_range(0..n.max(1));
    (0..n)
        .map(|i| match kind {
            Scalars::Random => E::ScalarField::rand(rng),
            Scalars::Zero => E::ScalarField::zero(),
            Scalars::MinusOne => -E::ScalarField::ONE,
            Scalars::AllEqual => same,
            // r − k for small k: the 255th bit and most of the top bits are set.
            Scalars::TopBits => -E::ScalarField::from(rng.gen::<u64>() | 1),
            Scalars::SmallAndSparse => {
                if i % 3 == 0 {
                    E::ScalarField::zero()
                } else {
                    E::ScalarField::from(rng.gen::<u8>())
                }
            }
            Scalars::Boolean => E::ScalarField::from(rng.gen::<bool>()),
            Scalars::BitHeavy => {
                if rng.gen_ratio(9, 10) {
                    E::ScalarField::from(rng.gen::<bool>())
                } else {
                    E::ScalarField::rand(rng)
                }
            }
            Scalars::AllOnes => E::ScalarField::ONE,
            Scalars::OneAmongOnes if i == odd_one => E::ScalarField::rand(rng),
            Scalars::OneAmongOnes => E::ScalarField::ONE,
            Scalars::OnesAtEdges if i == 0 || i + 1 == n => E::ScalarField::ONE,
            Scalars::OnesAtEdges => E::ScalarField::rand(rng),
        })
        .collect()
}

fn bases<E: PairingCurve, G: MsmGroup<Curve = E>>(
    rng: &mut StdRng,
    n: usize,
    kind: Bases,
) -> Vec<G::Affine> {
    let mut b = random_bases::<G>(rng, n);
    match kind {
        Bases::Random => {}
        Bases::SomeIdentity => b.iter_mut().step_by(3).for_each(|p| *p = G::Affine::zero()),
        Bases::AllIdentity => b.iter_mut().for_each(|p| *p = G::Affine::zero()),
        Bases::Repeated => {
            let first = b.first().copied().unwrap_or_else(G::Affine::zero);
            b.iter_mut().for_each(|p| *p = first);
        }
        Bases::Opposite => {
            for i in (1..n).step_by(2) {
                b[i] = -b[i - 1];
            }
        }
    }
    b
}

/// Runs one MSM on the backend with offsets and compares with ark-ec.
fn check<E: PairingCurve, G: MsmGroup<Curve = E>>(
    backend: &dyn ProverBackend<E>,
    base_values: &[G::Affine],
    scalar_values: &[E::ScalarField],
    base_offset: usize,
    scalar_offset: usize,
    len: usize,
) -> Result<(), CaseError> {
    let want = G::Projective::msm(
        &base_values[base_offset..][..len],
        &scalar_values[scalar_offset..][..len],
    )
    .map_err(|e| format!("reference MSM failed: {e}"))?;
    let mut key_plan = MemoryPlan::new("conformance bases");
    key_plan.item(
        items::BASES,
        items::bytes(backend, G::KIND, base_values.len()),
    );
    let mut work_plan = MemoryPlan::new("conformance scalars");
    work_plan.item(
        items::SCALARS,
        items::bytes(backend, ElementKind::Scalar, scalar_values.len()),
    );
    work_plan.merge(&backend.scratch_plan(&G::need(len)));
    let mut key = backend.allocate(key_plan)?;
    let b = stage_bases::<E, G>(backend, &mut key, items::BASES, base_values)?;
    let mut work = backend.allocate(work_plan)?;
    let s = backend.alloc_scalars(&mut work, items::SCALARS, scalar_values.len())?;
    backend.stage_scalars(&mut work, s, scalar_values)?;
    let span = MsmSpan {
        bases: b,
        base_offset,
        scalars: s,
        scalar_offset,
        len,
    };
    let got = G::msm(backend, &mut work, &key, span)?;
    work.release()?;
    key.release()?;
    if got.into_affine() == want.into_affine() {
        Ok(())
    } else {
        Err(fail!(
            "{} MSM of {len} terms differs from ark-ec: got {}, want {}",
            G::NAME,
            got.into_affine(),
            want.into_affine()
        ))
    }
}

fn sizes(max_log: u32) -> Vec<usize> {
    let big = 1usize << max_log;
    let mut v = vec![0, 1, 2, 3, 5, 100, 1000, big - 1, big, big + 1];
    v.sort_unstable();
    v.dedup();
    v
}

fn run_group<E: PairingCurve, G: MsmGroup<Curve = E>>(r: &mut Runner<'_, E>, max_log: u32) {
    let backend = r.backend;
    for n in sizes(max_log) {
        r.case(&format!("msm-{}/random/n={n}", G::NAME), |rng| {
            let b = bases::<E, G>(rng, n, Bases::Random);
            let s = scalars::<E>(rng, n, Scalars::Random);
            check::<E, G>(backend, &b, &s, 0, 0, n)
        });
    }
    // The largest size once more with boolean, bit-heavy and all-one scalars: a bucket
    // that spans thousands of a GPU's work chunks, or a sum of ones apart over as many
    // threads as the backend gives it.
    let largest = 1usize << max_log;
    for sk in [Scalars::Boolean, Scalars::BitHeavy, Scalars::AllOnes] {
        r.case(
            &format!("msm-{}/scalars-{sk:?}/n={largest}", G::NAME).to_lowercase(),
            |rng| {
                let b = bases::<E, G>(rng, largest, Bases::Random);
                check::<E, G>(backend, &b, &scalars::<E>(rng, largest, sk), 0, 0, largest)
            },
        );
    }
    let n = (1usize << max_log.min(10)) + 3;
    for sk in [
        Scalars::Zero,
        Scalars::MinusOne,
        Scalars::AllEqual,
        Scalars::TopBits,
        Scalars::SmallAndSparse,
        Scalars::Boolean,
        Scalars::BitHeavy,
        Scalars::AllOnes,
        Scalars::OneAmongOnes,
        Scalars::OnesAtEdges,
    ] {
        r.case(
            &format!("msm-{}/scalars-{sk:?}/n={n}", G::NAME).to_lowercase(),
            |rng| {
                let b = bases::<E, G>(rng, n, Bases::Random);
                check::<E, G>(backend, &b, &scalars::<E>(rng, n, sk), 0, 0, n)
            },
        );
    }
    for bk in [
        Bases::SomeIdentity,
        Bases::AllIdentity,
        Bases::Repeated,
        Bases::Opposite,
    ] {
        r.case(
            &format!("msm-{}/bases-{bk:?}/n={n}", G::NAME).to_lowercase(),
            |rng| {
                let s = scalars::<E>(rng, n, Scalars::Random);
                check::<E, G>(backend, &bases::<E, G>(rng, n, bk), &s, 0, 0, n)
            },
        );
    }
    r.case(&format!("msm-{}/offsets/n={n}", G::NAME), |rng| {
        let b = bases::<E, G>(rng, n + 3, Bases::Random);
        let s = scalars::<E>(rng, n + 5, Scalars::Random);
        check::<E, G>(backend, &b, &s, 3, 5, n)
    });
    // Ones at the span's first and last terms, and at the scalars just outside it (a
    // sum of the ones must not reach past the span).
    r.case(
        &format!("msm-{}/ones-at-span-edges/n={n}", G::NAME),
        |rng| {
            let b = bases::<E, G>(rng, n + 3, Bases::Random);
            let mut s = scalars::<E>(rng, n + 6, Scalars::BitHeavy);
            for i in [4, 5, 4 + n, 5 + n] {
                s[i] = E::ScalarField::ONE;
            }
            check::<E, G>(backend, &b, &s, 3, 5, n)
        },
    );
    r.case(
        &format!("msm-{}/span-out-of-range-is-an-error", G::NAME),
        |rng| out_of_range::<E, G>(backend, &bases::<E, G>(rng, 4, Bases::Random)),
    );
}

/// A span past the end of the bases must be refused with an error, not read.
fn out_of_range<E: PairingCurve, G: MsmGroup<Curve = E>>(
    backend: &dyn ProverBackend<E>,
    base_values: &[G::Affine],
) -> Result<(), CaseError> {
    let n = base_values.len();
    let mut key_plan = MemoryPlan::new("conformance bases");
    key_plan.item(items::BASES, items::bytes(backend, G::KIND, n));
    let mut work_plan = MemoryPlan::new("conformance scalars");
    work_plan.item(
        items::SCALARS,
        items::bytes(backend, ElementKind::Scalar, n),
    );
    work_plan.merge(&backend.scratch_plan(&G::need(n)));
    let mut key = backend.allocate(key_plan)?;
    let b = stage_bases::<E, G>(backend, &mut key, items::BASES, base_values)?;
    let mut work = backend.allocate(work_plan)?;
    let s = backend.alloc_scalars(&mut work, items::SCALARS, n)?;
    let span = MsmSpan {
        bases: b,
        base_offset: 1,
        scalars: s,
        scalar_offset: 0,
        len: n,
    };
    match G::msm(backend, &mut work, &key, span) {
        Err(crucible_core::Error::InvalidInput(msg)) if msg.contains("out of range") => Ok(()),
        Err(other) => Err(CaseError::from(other).context("wrong error for a span out of range")),
        Ok(_) => Err("a span past the end of the bases was accepted".into()),
    }
}

/// The backend's MSM over `bases[offset..]` and `scalars[offset..]` (staged from
/// `base_values` and `values`) against ark-ec's.
#[allow(clippy::too_many_arguments)]
fn msm_matches<E: PairingCurve, G: MsmGroup<Curve = E>>(
    backend: &dyn ProverBackend<E>,
    work: &mut Lease,
    key: &Lease,
    bases: G::Buf,
    base_values: &[G::Affine],
    scalars: ScalarBuf,
    offset: usize,
    values: &[E::ScalarField],
) -> Result<(), CaseError> {
    let span = MsmSpan {
        bases,
        base_offset: offset,
        scalars,
        scalar_offset: offset,
        len: values.len() - offset,
    };
    let got = G::msm(backend, work, key, span)?.into_affine();
    let want = G::Projective::msm(&base_values[offset..], &values[offset..])
        .map_err(|e| format!("reference MSM failed: {e}"))?
        .into_affine();
    if got == want {
        Ok(())
    } else {
        Err(fail!("got {got}, want {want}"))
    }
}

/// Several MSMs in one work lease over one scalar buffer of `kind`, as a proof runs
/// them: the same span twice, in G1 then G2, another span, then after each kind of
/// write to the scalars (staging, a pointwise product, an NTT). A backend that reuses
/// work between MSMs over the same scalars (the CUDA backend keeps its sort and its
/// classification of the ones) must notice every change; each result is compared with
/// ark-ec.
fn msm_sequence<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    rng: &mut StdRng,
    log: u32,
    kind: Scalars,
) -> Result<(), CaseError> {
    use crucible_core::{Domain, NttKind};
    let n = 1usize << log;
    let domain = Domain::with_log_size(log)?;
    let g1_bases = bases::<E, G1<E>>(rng, n, Bases::Random);
    let g2_bases = bases::<E, G2<E>>(rng, n, Bases::Random);
    let mut key_plan = MemoryPlan::new("conformance bases");
    key_plan.item(items::G1_BASES, items::bytes(backend, ElementKind::G1, n));
    key_plan.item(items::G2_BASES, items::bytes(backend, ElementKind::G2, n));
    let work_plan = scalar_plan(
        backend,
        &[(items::SCALARS, n), (items::FACTORS, n)],
        ScratchNeed {
            ntt: Some(domain),
            msm_g1: n,
            msm_g2: n,
        },
    );
    let mut key = backend.allocate(key_plan)?;
    let b1 = stage_bases::<E, G1<E>>(backend, &mut key, items::G1_BASES, &g1_bases)?;
    let b2 = stage_bases::<E, G2<E>>(backend, &mut key, items::G2_BASES, &g2_bases)?;
    let mut work = backend.allocate(work_plan)?;
    let s = backend.alloc_scalars(&mut work, items::SCALARS, n)?;
    let f = backend.alloc_scalars(&mut work, items::FACTORS, n)?;
    let mut values = scalars::<E>(rng, n, kind);
    backend.stage_scalars(&mut work, s, &values)?;
    let factors = scalars::<E>(rng, n, Scalars::Random);
    backend.stage_scalars(&mut work, f, &factors)?;

    let step =
        |work: &mut Lease, what: &str, g2: bool, offset: usize, values: &[E::ScalarField]| {
            let compared = if g2 {
                msm_matches::<E, G2<E>>(backend, work, &key, b2, &g2_bases, s, offset, values)
            } else {
                msm_matches::<E, G1<E>>(backend, work, &key, b1, &g1_bases, s, offset, values)
            };
            compared.map_err(|why| why.context(what))
        };
    step(&mut work, "first G1 MSM", false, 0, &values)?;
    step(&mut work, "the same G1 MSM again", false, 0, &values)?;
    step(&mut work, "G2 over the same scalars", true, 0, &values)?;
    step(&mut work, "G1 over a shorter span", false, 3, &values)?;
    step(&mut work, "G1 over the whole span again", false, 0, &values)?;
    values = scalars::<E>(rng, n, kind);
    backend.stage_scalars(&mut work, s, &values)?;
    step(
        &mut work,
        "G1 after restaging the scalars",
        false,
        0,
        &values,
    )?;
    backend.mul_assign(&mut work, s, f)?;
    values.iter_mut().zip(&factors).for_each(|(v, f)| *v *= f);
    step(&mut work, "G1 after a pointwise product", false, 0, &values)?;
    backend.ntt(&mut work, s, &domain, NttKind::Inverse)?;
    values = backend.read_scalars(&work, s)?;
    step(&mut work, "G2 after an inverse NTT", true, 0, &values)?;
    work.release()?;
    key.release()?;
    Ok(())
}

/// MSM cases on both groups (G2 two sizes smaller: its reference is slow).
pub fn run<E: PairingCurve>(r: &mut Runner<'_, E>) {
    let max = r.config.max_log_size;
    run_group::<E, G1<E>>(r, max.max(2));
    run_group::<E, G2<E>>(r, max.saturating_sub(2).max(2));
    // The sequence's shorter span starts at 3: at least 4 terms.
    let log = max.clamp(2, 12);
    let backend = r.backend;
    r.case(
        &format!("msm/sequence-over-one-scalar-buffer/n=2^{log}"),
        |rng| msm_sequence(backend, rng, log, Scalars::Random),
    );
    r.case(
        &format!("msm/sequence-over-one-scalar-buffer/scalars-bitheavy/n=2^{log}"),
        |rng| msm_sequence(backend, rng, log, Scalars::BitHeavy),
    );
}
