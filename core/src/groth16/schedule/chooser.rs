//! The chooser: every candidate schedule of a shape, the one of the most proofs per
//! second that fits a budget, and the memory–time frontier.

use crate::PairingCurve;
use std::collections::HashSet;

use super::{DomainVectors, Evaluation, MatrixSizes, Query, QuerySet, Schedule, ScheduledPlan};
use crate::groth16::Reduction;
use crate::host_stages::HostStages;
use crate::{human_bytes, Error, ProofShape, ProverBackend, Result, ScalarMix};

/// The smallest chunk the chooser considers: below it the per-call cost of an MSM
/// dominates. The floor is computed with it.
pub const MIN_CHUNK: usize = 1 << 12;

/// The smallest run of a streamed matrix the chooser considers (entries, and rows).
pub const MIN_MATRIX_CHUNK: usize = 1 << 14;

/// Every schedule the chooser considers for `shape`: each resident set, each domain
/// layout, chunks from [`MIN_CHUNK`] up by powers of two to the longest MSM, and each
/// evaluation `backend` can run with `matrices`; each as the key runs it
/// ([`Schedule::for_shape`]), once.
fn candidates<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    shape: &ProofShape,
    reduction: Reduction,
    matrices: Option<&MatrixSizes>,
) -> Vec<Schedule> {
    let longest = Query::ALL
        .iter()
        .map(|q| q.msm_terms(shape, reduction))
        .max()
        .unwrap_or(0)
        .max(1);
    let mut chunks = Vec::new();
    let mut c = MIN_CHUNK.min(longest);
    while c < longest {
        chunks.push(c);
        c = c.saturating_mul(2);
    }
    chunks.push(longest);
    let mut evaluations = vec![Evaluation::Host];
    if let Some(m) = matrices.filter(|_| backend.supports_sparse_product()) {
        evaluations.push(Evaluation::Device);
        // Runs from MIN_MATRIX_CHUNK up by fours to one that holds any matrix whole.
        let whole = m.rows.iter().chain(&m.entries).copied().max().unwrap_or(1);
        let mut chunk = MIN_MATRIX_CHUNK.max(m.longest_row.next_power_of_two());
        loop {
            evaluations.push(Evaluation::DeviceStreamed {
                chunk: chunk.min(whole),
            });
            if chunk >= whole {
                break;
            }
            chunk = chunk.saturating_mul(4);
        }
    }
    let mut out = Vec::new();
    for resident in QuerySet::all_subsets() {
        for domain in [DomainVectors::Resident, DomainVectors::Sequenced] {
            for &evaluation in &evaluations {
                let chunks: &[usize] = if resident == QuerySet::ALL {
                    &[0]
                } else {
                    &chunks
                };
                for &chunk in chunks {
                    out.push(Schedule {
                        resident,
                        domain,
                        chunk,
                        evaluation,
                    });
                }
            }
        }
    }
    let mut seen = HashSet::new();
    out.into_iter()
        .map(|s| s.for_shape(shape, reduction))
        .filter(|s| s.validate(matrices).is_ok() && seen.insert(*s))
        .collect()
}

/// The schedule chosen for a budget, with the floor of its shape.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ScheduleChoice {
    /// The schedule of the most proofs per second for the workers asked (with one
    /// worker, the fastest) whose key and proofs in flight fit.
    pub chosen: ScheduledPlan,
    /// The schedule with the fewest bytes (key plus the workers' proofs).
    pub floor: ScheduledPlan,
    /// The budget chosen for, in bytes.
    pub capacity: u64,
    /// Proofs that fit at once beside the key (at most the workers asked for; the
    /// other workers wait for memory).
    pub workers: usize,
    /// Predicted proofs per second of one device with that many in flight.
    pub proofs_per_second: f64,
}

impl ScheduleChoice {
    /// The floor in bytes: the smallest budget at which `workers` proofs of this
    /// shape run at once.
    pub fn floor_bytes(&self) -> u64 {
        self.floor.bytes_for(self.workers)
    }
}

/// Chooses the schedule of the most proofs per second for `workers` proofs at once
/// ([`ScheduledPlan::proofs_per_second`]) among those whose key plus the proofs that
/// run at once fit `capacity` bytes: each schedule runs as many of the workers'
/// proofs at once as fit (down to one; the other workers wait for memory), so a
/// streamed schedule that fits two proofs competes with a resident one that fits one.
/// Ties go to the lower latency, then to fewer bytes. With one worker this is the
/// fastest schedule that fits. Below the floor of one proof: [`Error::BelowFloor`],
/// at once. With the circuit's `matrices` (and a backend with a sparse product),
/// schedules that evaluate on the device are candidates too: the matrices staged with
/// the key, or, only where no such schedule fits, streamed per proof. Times are predicted for
/// witnesses of `witness` ([`ScalarMix::FULL`] when nothing is known of them), and
/// capped by what the `host` supplies where its stages are known (so a schedule that
/// evaluates on the device wins where the host's evaluation would starve it).
#[allow(clippy::too_many_arguments)]
pub fn choose<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    shape: &ProofShape,
    reduction: Reduction,
    capacity: u64,
    workers: usize,
    matrices: Option<&MatrixSizes>,
    witness: ScalarMix,
    host: Option<&HostStages>,
) -> Result<ScheduleChoice> {
    let plans = candidates(backend, shape, reduction, matrices)
        .into_iter()
        .map(|s| ScheduledPlan::new(backend, shape, reduction, s, matrices, witness))
        .collect::<Result<Vec<_>>>()?;
    let floor_of = |w: usize| {
        plans
            .iter()
            .min_by_key(|p| p.bytes_for(w))
            .cloned()
            .ok_or_else(|| Error::InvalidInput("no schedule for this shape".into()))
    };
    let overlaps = backend.cost_model().overlaps_staging;
    // Matrices are streamed for budgets too small to hold them: only where no schedule
    // that stages them with the key fits.
    let staged_fits = plans
        .iter()
        .any(|p| p.schedule.evaluation == Evaluation::Device && p.bytes_for(1) <= capacity);
    // Each schedule with the most of the workers' proofs that fit beside its key.
    let best = plans
        .iter()
        .filter(|p| {
            !(staged_fits && matches!(p.schedule.evaluation, Evaluation::DeviceStreamed { .. }))
        })
        .filter_map(|p| {
            let fit = (1..=workers.max(1))
                .rev()
                .find(|&w| p.bytes_for(w) <= capacity)?;
            Some((p, fit, p.proofs_per_second(fit, overlaps, host)))
        })
        .max_by(|(a, wa, ra), (b, wb, rb)| {
            ra.total_cmp(rb)
                .then(b.predicted_seconds.total_cmp(&a.predicted_seconds))
                .then(b.bytes_for(*wb).cmp(&a.bytes_for(*wa)))
        });
    match best {
        Some((chosen, fit, rate)) => Ok(ScheduleChoice {
            chosen: chosen.clone(),
            floor: floor_of(fit)?,
            capacity,
            workers: fit,
            proofs_per_second: rate,
        }),
        None => Err(Error::BelowFloor {
            budget: backend.budget().name().to_string(),
            capacity,
            floor: floor_of(1)?.bytes_for(1),
            workers: 1,
        }),
    }
}

/// The memory–time curve of a shape: the schedules that no other beats on both
/// bytes (key plus `workers` proofs) and predicted time, fewest bytes first.
pub fn frontier<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    shape: &ProofShape,
    reduction: Reduction,
    workers: usize,
    matrices: Option<&MatrixSizes>,
    witness: ScalarMix,
) -> Result<Vec<ScheduledPlan>> {
    let workers = workers.max(1);
    let mut all = candidates(backend, shape, reduction, matrices)
        .into_iter()
        .map(|s| ScheduledPlan::new(backend, shape, reduction, s, matrices, witness))
        .collect::<Result<Vec<_>>>()?;
    all.sort_by(|a, b| {
        a.bytes_for(workers)
            .cmp(&b.bytes_for(workers))
            .then(a.predicted_seconds.total_cmp(&b.predicted_seconds))
    });
    let mut out: Vec<ScheduledPlan> = Vec::new();
    for plan in all {
        if out
            .last()
            .is_none_or(|last| plan.predicted_seconds < last.predicted_seconds)
        {
            out.push(plan);
        }
    }
    Ok(out)
}

/// A one-line summary of a choice, for logs and the CLI.
pub fn describe(choice: &ScheduleChoice) -> String {
    format!(
        "schedule {} ({} for the key and {} per proof, workers: {}; floor {}), predicted {:.1} ms a proof, {:.2} proofs/s",
        choice.chosen.schedule,
        human_bytes(choice.chosen.key.total_bytes()),
        human_bytes(choice.chosen.proof.total_bytes()),
        choice.workers,
        human_bytes(choice.floor_bytes()),
        choice.chosen.predicted_seconds * 1e3,
        choice.proofs_per_second
    )
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{matrices, shape, PlanningBackend};
    use super::*;

    fn choose_for(
        backend: &PlanningBackend,
        capacity: u64,
        workers: usize,
        matrices: Option<&MatrixSizes>,
    ) -> Result<ScheduleChoice> {
        choose(
            backend,
            &shape(),
            Reduction::Libsnark,
            capacity,
            workers,
            matrices,
            ScalarMix::FULL,
            None,
        )
    }

    /// The memory–time curve for one worker.
    fn curve(backend: &PlanningBackend) -> Vec<ScheduledPlan> {
        frontier(
            backend,
            &shape(),
            Reduction::Libsnark,
            1,
            None,
            ScalarMix::FULL,
        )
        .unwrap()
    }

    /// Seconds of one proof with everything resident under the default (CPU) rates:
    /// seven NTTs of 2^10 at 3.04 ns a butterfly stage, G1 MSMs of 1023 + 997 + 999 +
    /// 999 terms and a G2 MSM of 999 (50 µs a call, 1763 and 4785 ns a term), and
    /// 3 · 1024 + 1000 scalars staged at 4 GB/s.
    const RESIDENT_SECONDS: f64 = 7.0 * 1024.0 * 10.0 * 3.04e-9
        + (4.0 * 50_000.0 + 1763.0 * 4018.0 + 50_000.0 + 4785.0 * 999.0) * 1e-9
        + 130_304.0 / 4.0e9;

    #[test]
    fn with_room_for_everything_the_key_is_resident() {
        let backend = PlanningBackend::new(1 << 40);
        let choice = choose_for(&backend, 1 << 40, 1, None).unwrap();
        // Without a copy stream both domain layouts take as long: the tie goes to the
        // fewer bytes, two domain buffers.
        assert_eq!(
            choice.chosen.schedule,
            Schedule {
                domain: DomainVectors::Sequenced,
                ..Schedule::RESIDENT
            }
        );
        assert!((choice.chosen.predicted_seconds - RESIDENT_SECONDS).abs() < 1e-12);
        assert!((choice.proofs_per_second - 1.0 / RESIDENT_SECONDS).abs() < 1e-6);
        assert_eq!(choice.chosen.key.total_bytes(), 577_920);
        assert_eq!(choice.chosen.proof.total_bytes(), 2 * 32 * 1024 + 56_936);
        assert_eq!(choice.workers, 1);
        assert_eq!(choice.capacity, 1 << 40);

        // With a copy stream, resident vectors hide half their staging.
        let mut overlapping = PlanningBackend::new(1 << 40);
        overlapping.cost.overlaps_staging = true;
        let choice = choose_for(&overlapping, 1 << 40, 1, None).unwrap();
        assert_eq!(choice.chosen.schedule, Schedule::RESIDENT);
        let hidden = 0.5 * 130_304.0 / 4.0e9;
        assert!((choice.chosen.predicted_seconds - (RESIDENT_SECONDS - hidden)).abs() < 1e-12);
    }

    #[test]
    fn below_the_floor_the_chooser_refuses_at_once_naming_the_floor() {
        let backend = PlanningBackend::new(1 << 40);
        let floor = curve(&backend)[0].bytes_for(1);
        match choose_for(&backend, floor - 1, 1, None) {
            Err(Error::BelowFloor {
                budget,
                capacity,
                floor: named,
                workers,
            }) => {
                assert_eq!(budget, "planning:0");
                assert_eq!(capacity, floor - 1);
                assert_eq!(named, floor);
                assert_eq!(workers, 1);
            }
            other => panic!("expected BelowFloor, got {other:?}"),
        }
        let at_floor = choose_for(&backend, floor, 1, None).unwrap();
        assert_eq!(at_floor.chosen.bytes_for(1), floor);
        assert_eq!(at_floor.floor_bytes(), floor);
        // The floor streams the G1 queries through two chunk buffers; b_g2 stays
        // resident, as its two chunk buffers (the whole MSM, 999 points, each: the
        // chunks start at 1023) would take twice its resident 1000 points.
        assert_eq!(
            at_floor.chosen.schedule.resident,
            QuerySet::NONE.with(Query::BG2)
        );
        assert_eq!(at_floor.chosen.key.total_bytes(), 1000 * 192);
        assert_eq!(at_floor.chosen.schedule.domain, DomainVectors::Sequenced);
    }

    #[test]
    fn each_budget_gets_the_fastest_schedule_that_fits() {
        let backend = PlanningBackend::new(1 << 40);
        let points = curve(&backend);
        assert!(points.len() > 2, "{} points", points.len());
        // Fewest bytes first, each point faster than the last.
        for pair in points.windows(2) {
            assert!(pair[0].bytes_for(1) < pair[1].bytes_for(1));
            assert!(pair[0].predicted_seconds > pair[1].predicted_seconds);
        }
        let fastest = points.last().unwrap();
        assert!((fastest.predicted_seconds - RESIDENT_SECONDS).abs() < 1e-12);
        for point in &points {
            for capacity in [point.bytes_for(1), point.bytes_for(1) + 1] {
                let choice = choose_for(&backend, capacity, 1, None).unwrap();
                let best = points
                    .iter()
                    .filter(|p| p.bytes_for(1) <= capacity)
                    .map(|p| p.predicted_seconds)
                    .fold(f64::INFINITY, f64::min);
                assert_eq!(choice.chosen.predicted_seconds, best);
                assert!(choice.chosen.bytes_for(1) <= capacity);
            }
        }
    }

    #[test]
    fn workers_share_the_key_and_each_holds_a_proof() {
        let mut backend = PlanningBackend::new(1 << 40);
        backend.cost.overlaps_staging = true;
        let choice = choose_for(&backend, 1 << 40, 3, None).unwrap();
        assert_eq!(choice.workers, 3);
        let plan = &choice.chosen;
        assert_eq!(
            plan.bytes_for(3),
            plan.key.total_bytes() + 3 * plan.proof.total_bytes()
        );
        // Three proofs overlap up to the device's own limit, its compute.
        let rate = (3.0 / plan.predicted_seconds).min(1.0 / plan.compute_seconds);
        assert!((choice.proofs_per_second - rate).abs() < 1e-9);

        // Room for the key and one proof: the other workers wait for memory.
        let one = plan.bytes_for(1);
        let choice = choose_for(&backend, one, 3, None).unwrap();
        assert!(choice.chosen.bytes_for(choice.workers) <= one);
        assert!(choice.workers >= 1);
    }

    #[test]
    fn a_backend_with_a_sparse_product_evaluates_on_the_device_where_the_matrices_fit() {
        let m = matrices(true);
        let mut backend = PlanningBackend::new(1 << 40);
        // Without a sparse product the matrices change nothing.
        let host = choose_for(&backend, 1 << 40, 1, Some(&m)).unwrap();
        assert_eq!(host.chosen.schedule.evaluation, Evaluation::Host);
        assert_eq!(host.chosen.host_entries, 4500);

        backend.sparse_product = true;
        let device = choose_for(&backend, 1 << 40, 1, Some(&m)).unwrap();
        assert_eq!(device.chosen.schedule.evaluation, Evaluation::Device);
        assert_eq!(device.chosen.host_entries, 0);
        // Only z is staged (1000 scalars), then 4500 entries at 1 ns.
        let saved = 130_304.0 / 4.0e9 - (32_000.0 / 4.0e9 + 4500e-9);
        assert!(
            (device.chosen.predicted_seconds - (RESIDENT_SECONDS - saved)).abs() < 1e-12,
            "{}",
            device.chosen.predicted_seconds
        );
    }

    #[test]
    fn the_summary_names_the_schedule_its_bytes_and_its_rate() {
        let backend = PlanningBackend::new(1 << 40);
        let choice = choose_for(&backend, 1 << 40, 1, None).unwrap();
        assert_eq!(
            describe(&choice),
            format!(
                "schedule bases resident; domain vectors sequenced ({} for the key and {} per \
                 proof, workers: 1; floor {}), predicted 12.4 ms a proof, {:.2} proofs/s",
                human_bytes(577_920),
                human_bytes(2 * 32 * 1024 + 56_936),
                human_bytes(choice.floor_bytes()),
                1.0 / RESIDENT_SECONDS
            )
        );
    }
}
