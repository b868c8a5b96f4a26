//! Schedules on every backend: streamed MSMs at chunk sizes around their length, the
//! one-shot MSM from the host pipelined through its slots, and whole proofs under each
//! kind of schedule (bases streamed or resident, domain vectors sequenced or resident),
//! byte for byte against ark-groth16.

use std::sync::Arc;

use ark_ec::VariableBaseMSM;
use ark_std::rand::{rngs::StdRng, Rng};
use crucible_core::fixtures::circuit::BenchCircuit;
use crucible_core::fixtures::key_cache::generate_key;
use crucible_core::groth16::{DomainVectors, Evaluation, KeyOptions, Query, QuerySet, Schedule};
use crucible_core::group::{MsmGroup, G1, G2};
use crucible_core::streamed_msm::{streamed_msm, HostMsm};
use crucible_core::{BufferUse, ElementKind, MemoryPlan, PairingCurve, ProverBackend};

use crate::cross_check::compare_with_arkworks_under;
use crate::inputs::random_bases;
use crate::inputs::random_scalars;
use crate::items;
use crate::runner::Runner;
use crate::CaseError;

/// `Σ s·P` with the bases streamed from the host through two chunk buffers of
/// `chunk` points, against ark-ec.
fn streamed_case<E: PairingCurve, G: MsmGroup<Curve = E>>(
    backend: &dyn ProverBackend<E>,
    rng: &mut StdRng,
    n: usize,
    chunk: usize,
) -> Result<(), CaseError> {
    let points = random_bases::<G>(rng, n);
    // One scalar in front that the MSM must skip (a non-zero offset).
    let scalars: Vec<E::ScalarField> = random_scalars(rng, n + 1);
    let chunk_bytes = backend.buffer_bytes(G::KIND, chunk, BufferUse::Plain)?;
    let chunk_plan = |j: u32| {
        let mut plan = MemoryPlan::new(format!("conformance chunk {j}"));
        plan.item(items::CHUNK.at(j), chunk_bytes);
        plan
    };
    let mut work_plan = MemoryPlan::new("conformance streamed MSM");
    work_plan.item(
        items::SCALARS,
        items::bytes(backend, ElementKind::Scalar, n + 1),
    );
    work_plan.merge(&backend.scratch_plan(&G::need(chunk.min(n))));
    let mut chunks = [
        backend.allocate(chunk_plan(0))?,
        backend.allocate(chunk_plan(1))?,
    ];
    let mut work = backend.allocate(work_plan)?;
    let [c0, c1] = &mut chunks;
    let buffers = [
        G::alloc(backend, c0, items::CHUNK.at(0), chunk, BufferUse::Plain)?,
        G::alloc(backend, c1, items::CHUNK.at(1), chunk, BufferUse::Plain)?,
    ];
    let s = backend.alloc_scalars(&mut work, items::SCALARS, n + 1)?;
    backend.stage_scalars(&mut work, s, &scalars)?;
    let got = streamed_msm::<G>(
        backend,
        &mut work,
        chunks.each_mut(),
        buffers,
        &points,
        s,
        1,
    )?;
    for lease in chunks {
        lease.release()?;
    }
    work.release()?;
    let want = G::Projective::msm(&points, &scalars[1..])
        .map_err(|l| format!("reference MSM length mismatch {l}"))?;
    if got == want {
        Ok(())
    } else {
        Err(fail!(
            "streamed MSM of {n} terms in chunks of {chunk} differs"
        ))
    }
}

/// One-shot MSMs from the host of each length in `lens`, through one [`HostMsm`] whose
/// slots were made for the longest and that pipelines from `from` terms, each against
/// ark-ec (the slots reused from one MSM to the next, shorter ones included).
fn one_shot_case<E: PairingCurve, G: MsmGroup<Curve = E>>(
    backend: &dyn ProverBackend<E>,
    rng: &mut StdRng,
    lens: &[usize],
    from: usize,
) -> Result<(), CaseError> {
    let max = lens.iter().copied().max().unwrap_or(0);
    let mut host = HostMsm::<G>::allocate_pipelined_from(backend, max, from)?;
    let mut result = Ok(());
    for &n in lens {
        let points = random_bases::<G>(rng, n);
        let scalars: Vec<E::ScalarField> = random_scalars(rng, n);
        let got = match host.msm(backend, &points, &scalars) {
            Ok(got) => got,
            Err(e) => {
                result = Err(e.into());
                break;
            }
        };
        let want = G::Projective::msm(&points, &scalars)
            .map_err(|l| format!("reference MSM length mismatch {l}"))?;
        if got != want {
            result = Err(fail!(
                "one-shot MSM of {n} terms (slots for {max}, pipelined from {from}) differs"
            ));
            break;
        }
    }
    host.release()?;
    result
}

/// The schedules every backend proves under: one of each kind, with chunks that do
/// not divide the MSMs' lengths.
fn schedules(chunk: usize) -> Vec<Schedule> {
    let streamed = |resident, domain| Schedule {
        resident,
        domain,
        chunk,
        evaluation: Evaluation::Host,
    };
    vec![
        Schedule {
            domain: DomainVectors::Sequenced,
            ..Schedule::RESIDENT
        },
        streamed(QuerySet::NONE, DomainVectors::Resident),
        streamed(QuerySet::NONE, DomainVectors::Sequenced),
        streamed(QuerySet::NONE.with(Query::H), DomainVectors::Sequenced),
        streamed(QuerySet::ALL.without(Query::BG2), DomainVectors::Resident),
    ]
}

/// Streamed MSMs at chunks 1, 2, 7 and n ± 1; proofs under every kind of schedule on
/// domain boundaries with 0, 1 and several public inputs.
pub fn run<E: PairingCurve>(r: &mut Runner<'_, E>) {
    let backend = r.backend;
    for n in [1usize, 9, 33] {
        let mut chunks = vec![1, 2, 7, n.saturating_sub(1).max(1), n, n + 1];
        chunks.dedup();
        for chunk in chunks {
            r.case(&format!("streamed-msm/g1/n={n}/chunk={chunk}"), |rng| {
                streamed_case::<E, G1<E>>(backend, rng, n, chunk)
            });
            r.case(&format!("streamed-msm/g2/n={n}/chunk={chunk}"), |rng| {
                streamed_case::<E, G2<E>>(backend, rng, n, chunk)
            });
        }
    }
    // Pipelined in four chunks (from 8 terms) and in one, with the slots reused; every
    // shorter length fits the slots made for the longest: one below the threshold
    // (slots for 65 from 64 hold 16 and 33 terms, an MSM of 63 is one chunk), at it and
    // one over, and lengths whose last chunk outgrows the made-for one's (71 in slots
    // for 72: a last chunk of 39 against 36).
    for (lens, from) in [
        (&[40usize, 9, 8, 7, 1][..], 8usize),
        (&[33, 5][..], 1 << 22),
        (&[65, 63, 64, 65, 33, 17, 16, 1, 0][..], 64),
        (&[72, 71, 70, 69, 64, 63, 8, 7][..], 8),
    ] {
        let name = format!("one-shot-msm/{lens:?}/from={from}");
        r.case(&format!("{name}/g1"), |rng| {
            one_shot_case::<E, G1<E>>(backend, rng, lens, from)
        });
        r.case(&format!("{name}/g2"), |rng| {
            one_shot_case::<E, G2<E>>(backend, rng, lens, from)
        });
    }
    // Each kind of schedule meets every domain boundary and every count of public
    // inputs once (an orthogonal array: schedule j runs on boundary d with inputs i
    // where i + d + j = 0 mod 3): 15 proofs where the full product takes 45.
    let k = r.config.proof_log_size.min(6);
    for (i, inputs) in [0usize, 1, 5].into_iter().enumerate() {
        for (d, delta) in [-1i64, 0, 1].into_iter().enumerate() {
            let total = (1i64 << k) + delta;
            let constraints = (total - inputs as i64 - 1).max(1) as usize;
            let name =
                format!("schedules/constraints={constraints}/inputs={inputs}/2^{k}{delta:+}");
            r.case(&name, |rng| {
                let seed = rng.gen::<u64>();
                let pk = Arc::new(generate_key(constraints, inputs, seed)?);
                let circuit = BenchCircuit {
                    constraints,
                    inputs,
                    seed: seed.wrapping_add(1),
                };
                let planned = schedules(7).into_iter().enumerate();
                for (_, schedule) in planned.filter(|(j, _)| (i + d + j) % 3 == 0) {
                    let options = KeyOptions {
                        schedule: Some(schedule),
                        ..KeyOptions::default()
                    };
                    compare_with_arkworks_under(backend, pk.clone(), circuit, rng, &options)
                        .map_err(|e| e.context(&format!("schedule {schedule}")))?;
                }
                Ok(())
            });
        }
    }
}
