//! Every MSM and NTT under the tightest budget that admits it: the rest of the budget
//! held by a filler permit, so that the operation's plans fit to the byte, and the
//! one-shot MSM pipelined from one term (its smallest slots, the most chunks), over
//! edge scalars (0, 1, r − 1, all equal) and edge bases (the identity, one point
//! repeated, opposite pairs), against arkworks. A backend that needs a byte more than
//! it planned, or computes a chunk wrongly when the chunks are smallest, fails here.

use ark_ec::{AdditiveGroup, AffineRepr, CurveGroup, VariableBaseMSM};
use ark_ff::{Field, UniformRand};
use ark_std::rand::{rngs::StdRng, Rng};
use crucible_core::group::{MsmGroup, G1, G2};
use crucible_core::streamed_msm::HostMsm;
use crucible_core::{
    BudgetPermit, BufferUse, Domain, ElementKind, MemoryPlan, NttKind, PairingCurve, ProverBackend,
    ScratchNeed,
};

use crate::compare::{first_difference, reference};
use crate::inputs::random_bases;
use crate::items::{self, scalar_plan};
use crate::runner::Runner;
use crate::CaseError;

/// A permit for every byte of the backend's budget but `room`: the budget as tight as
/// the plans that need `room` bytes allow.
fn leave_room<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    room: u64,
) -> Result<BudgetPermit, CaseError> {
    let budget = backend.budget();
    let free = budget.capacity().saturating_sub(budget.in_use());
    let Some(fill) = free.checked_sub(room) else {
        return Err(fail!("{room} bytes do not fit the {free} bytes free"));
    };
    Ok(budget.acquire(fill)?)
}

fn total(plans: &[MemoryPlan]) -> u64 {
    plans.iter().map(MemoryPlan::total_bytes).sum()
}

/// Scalar patterns of the tight cases.
#[derive(Clone, Copy, Debug)]
enum Scalars {
    Zero,
    One,
    MinusOne,
    AllEqual,
    Mixed,
}

/// Base patterns of the tight cases.
#[derive(Clone, Copy, Debug)]
enum Bases {
    Identity,
    Repeated,
    OppositePairs,
    Random,
}

fn scalars<E: PairingCurve>(rng: &mut StdRng, n: usize, kind: Scalars) -> Vec<E::ScalarField> {
    let same = E::ScalarField::rand(rng);
    (0..n)
        .map(|i| match kind {
            Scalars::Zero => E::ScalarField::ZERO,
            Scalars::One => E::ScalarField::ONE,
            Scalars::MinusOne => -E::ScalarField::ONE,
            Scalars::AllEqual => same,
            // Each edge value among random ones.
            Scalars::Mixed => match i % 4 {
                0 => E::ScalarField::ZERO,
                1 => E::ScalarField::ONE,
                2 => -E::ScalarField::ONE,
                _ => E::ScalarField::rand(rng),
            },
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
        Bases::Identity => b.iter_mut().for_each(|p| *p = G::Affine::zero()),
        Bases::Repeated => {
            let first = b.first().copied().unwrap_or_else(G::Affine::zero);
            b.iter_mut().for_each(|p| *p = first);
        }
        Bases::OppositePairs => {
            for i in (1..n).step_by(2) {
                b[i] = -b[i - 1];
            }
        }
        Bases::Random => {}
    }
    b
}

/// The one-shot MSM of `n` terms pipelined from one term, in a budget with room for
/// its slots and nothing more, against ark-ec.
fn one_shot_tight<E: PairingCurve, G: MsmGroup<Curve = E>>(
    backend: &dyn ProverBackend<E>,
    rng: &mut StdRng,
    n: usize,
    sk: Scalars,
    bk: Bases,
) -> Result<(), CaseError> {
    let points = bases::<E, G>(rng, n, bk);
    let values = scalars::<E>(rng, n, sk);
    let want = G::Projective::msm(&points, &values)
        .map_err(|l| format!("reference MSM length mismatch {l}"))?;
    let room = total(&HostMsm::<G>::plans_pipelined_from(backend, n, 1)?);
    let filler = leave_room(backend, room)?;
    let mut host = HostMsm::<G>::allocate_pipelined_from(backend, n, 1)?;
    let got = host.msm(backend, &points, &values);
    let released = host.release();
    drop(filler);
    let got = got?;
    released?;
    if got.into_affine() == want.into_affine() {
        Ok(())
    } else {
        Err(fail!(
            "{} MSM of {n} terms in a budget of {room} bytes: got {}, want {}",
            G::NAME,
            got.into_affine(),
            want.into_affine()
        ))
    }
}

/// An NTT of `domain` in a budget with room for its vector and scratch and nothing
/// more, over `input`, against ark-poly.
fn ntt_tight<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    domain: Domain<E::ScalarField>,
    kind: NttKind,
    input: &[E::ScalarField],
) -> Result<(), CaseError> {
    let mut want = input.to_vec();
    reference(&mut want, &domain, kind);
    // The backend's own answer where it has no such buffer (scalar_plan would plan
    // more bytes than any budget instead).
    backend.buffer_bytes(ElementKind::Scalar, domain.size, BufferUse::Resident)?;
    let plan = scalar_plan(
        backend,
        &[(items::X, domain.size)],
        ScratchNeed {
            ntt: Some(domain),
            ..ScratchNeed::default()
        },
    );
    let filler = leave_room(backend, plan.total_bytes())?;
    let mut work = backend.allocate(plan)?;
    let result = (|| {
        let x = backend.alloc_scalars(&mut work, items::X, domain.size)?;
        backend.stage_scalars(&mut work, x, input)?;
        backend.ntt(&mut work, x, &domain, kind)?;
        Ok::<_, CaseError>(backend.read_scalars(&work, x)?)
    })();
    let released = work.release();
    drop(filler);
    let got = result?;
    released?;
    first_difference(&got, &want)
}

/// NTT inputs at the edges: all zero, all r − 1, one nonzero element, random.
fn ntt_inputs<E: PairingCurve>(
    rng: &mut StdRng,
    n: usize,
) -> Vec<(&'static str, Vec<E::ScalarField>)> {
    let mut one_hot = vec![E::ScalarField::ZERO; n];
    one_hot[rng.gen_range(0..n)] = E::ScalarField::rand(rng);
    vec![
        ("zero", vec![E::ScalarField::ZERO; n]),
        ("minus-one", vec![-E::ScalarField::ONE; n]),
        ("one-hot", one_hot),
        (
            "random",
            (0..n).map(|_| E::ScalarField::rand(rng)).collect(),
        ),
    ]
}

fn run_msm<E: PairingCurve, G: MsmGroup<Curve = E>>(r: &mut Runner<'_, E>, lens: &[usize]) {
    let backend = r.backend;
    for &n in lens {
        for sk in [
            Scalars::Zero,
            Scalars::One,
            Scalars::MinusOne,
            Scalars::AllEqual,
            Scalars::Mixed,
        ] {
            for bk in [
                Bases::Identity,
                Bases::Repeated,
                Bases::OppositePairs,
                Bases::Random,
            ] {
                let name = format!(
                    "tight-budget/one-shot-msm/{}/scalars-{sk:?}/bases-{bk:?}/n={n}",
                    G::NAME
                );
                r.case(&name.to_lowercase(), |rng| {
                    one_shot_tight::<E, G>(backend, rng, n, sk, bk)
                });
            }
        }
    }
}

/// The tight cases: one-shot MSMs of a few lengths on both groups (G2 shorter: its
/// reference is slow), and every kind of NTT at a few sizes.
pub fn run<E: PairingCurve>(r: &mut Runner<'_, E>) {
    run_msm::<E, G1<E>>(r, &[1, 33]);
    run_msm::<E, G2<E>>(r, &[9]);
    let backend = r.backend;
    let logs = [0, 1, 5, r.config.max_log_size.min(10)];
    for log in logs {
        for kind in [
            NttKind::Forward,
            NttKind::Inverse,
            NttKind::CosetForward,
            NttKind::CosetInverse,
        ] {
            r.case(
                &format!("tight-budget/transform-{kind:?}/2^{log}").to_lowercase(),
                |rng| {
                    let domain = Domain::with_log_size(log)?;
                    for (what, input) in ntt_inputs::<E>(rng, domain.size) {
                        ntt_tight(backend, domain, kind, &input)
                            .map_err(|e| e.context(&format!("input {what}")))?;
                    }
                    Ok(())
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_std::rand::SeedableRng;
    use crucible_core::{Bls12_381, Fr, G1Projective};

    #[test]
    fn opposite_pairs_sum_to_the_identity_with_equal_scalars() {
        let mut rng = StdRng::seed_from_u64(7);
        let b = bases::<Bls12_381, G1>(&mut rng, 8, Bases::OppositePairs);
        let s = vec![Fr::from(5u64); 8];
        let sum = G1Projective::msm(&b, &s).expect("lengths match");
        assert_eq!(sum, G1Projective::ZERO);
    }
}
