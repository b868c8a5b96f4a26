//! K proofs of the built-in benchmark circuit through the engine: what `prove` reports
//! on and `bench --op prove --proofs K` times. The circuit's matrices are built once,
//! each device's key is staged for its workers, the jobs are fed as the synthesis
//! threads take them, and the devices are released at the end.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ark_ff::UniformRand;
use ark_std::rand::{rngs::StdRng, Rng, SeedableRng};
use crucible_benches::Stats;
use crucible_core::engine::{EngineConfig, EngineStats, Job, JobOutcome, Prover};
use crucible_core::fixtures::circuit::BitHeavyCircuit;
use crucible_core::groth16::schedule::ScheduleChoice;
use crucible_core::groth16::{CircuitMatrices, FixedShape, ProvingKey};
use crucible_core::report::ProofReport;
use crucible_core::{Fr, ProverBackend};

use crate::error::CliError;
use crate::host_memory;
use crate::memory_watch::MemoryWatch;
use crate::output::{count, predicted_time_assumes, progress_bar};

/// The built-in circuit of one run: its size, its witness mix and the run's seed.
#[derive(Clone, Copy, Debug)]
pub struct BuiltIn {
    /// Constraints.
    pub constraints: usize,
    /// Public inputs.
    pub inputs: usize,
    /// Seed of every proof's witness, r and s.
    pub seed: u64,
    /// Thousandths of the constraints that check a bit.
    pub bits_per_mille: u16,
}

/// Everything one proof is made from.
#[derive(Clone, Copy)]
pub struct ProofInputs {
    /// The circuit with this proof's witness seed.
    pub circuit: BitHeavyCircuit,
    /// The proof's randomness r.
    pub r: Fr,
    /// The proof's randomness s.
    pub s: Fr,
}

impl BuiltIn {
    /// Proof `id`'s witness seed and r, s, from an RNG seeded by the run's seed and `id`
    /// alone, so the jobs are produced one at a time and any one can be recomputed.
    pub fn proof(&self, id: usize) -> ProofInputs {
        // Kept apart from the key's setup randomness, which is also derived from the
        // seed; the odd multiplier makes every id's stream distinct.
        let stream =
            self.seed ^ 0x9e37_79b9_7f4a_7c15 ^ (id as u64).wrapping_mul(0xd1b5_4a32_d192_ed03);
        let mut rng = StdRng::seed_from_u64(stream);
        ProofInputs {
            circuit: BitHeavyCircuit {
                constraints: self.constraints,
                inputs: self.inputs,
                seed: rng.gen(),
                bits_per_mille: self.bits_per_mille,
            },
            r: Fr::rand(&mut rng),
            s: Fr::rand(&mut rng),
        }
    }
}

/// How a run proves: on which devices, with which key and engine configuration.
pub struct RunSpec {
    /// One backend instance per device.
    pub backends: Vec<Arc<dyn ProverBackend>>,
    /// The proving key.
    pub pk: Arc<ProvingKey>,
    /// Whether the devices can evaluate A·z, B·z and C·z (the matrices are then built
    /// in the device layout too, and the schedule may use them).
    pub device_evaluation: bool,
    /// Workers, synthesis threads, verification.
    pub config: EngineConfig,
    /// Proofs to make.
    pub proofs: usize,
    /// Whether the host's peak memory starts over at the first proof
    /// ([`Ran::setup_peak_rss`] keeps the setup's).
    pub split_peak_rss: bool,
}

/// What a run did.
pub struct Ran {
    /// Every proof's outcome, by id.
    pub outcomes: Vec<JobOutcome>,
    /// Wall time, device busy time, budgets.
    pub stats: EngineStats,
    /// When each proof ended, from the start of the run, in the order they ended.
    pub ended_at: Vec<Duration>,
    /// The schedule the devices ran (chosen with the circuit's matrices).
    pub choice: Option<ScheduleChoice>,
    /// Devices that proved.
    pub devices: usize,
    /// Seconds building the circuit's matrices (once, before the first proof).
    pub matrices_seconds: f64,
    /// The device memory sampled during the run, described (where the backend reports it).
    pub memory: Option<String>,
    /// What releasing the devices' keys returned.
    pub released: crucible_core::Result<()>,
    /// The host's peak memory before the first proof (building the matrices, staging
    /// the key), where [`RunSpec::split_peak_rss`] asked for it.
    pub setup_peak_rss: Option<u64>,
    /// The host memory resident at the first proof (the key, the matrices), where
    /// [`RunSpec::split_peak_rss`] asked for it.
    pub rss_at_first_proof: Option<u64>,
    /// The host's peak memory from the first proof on, where
    /// [`RunSpec::split_peak_rss`] asked for it.
    pub proving_peak_rss: Option<u64>,
}

/// Proves `spec.proofs` proofs of `circuit`, saying each step through `say`.
pub fn prove_built_in(
    circuit: &BuiltIn,
    spec: RunSpec,
    say: &dyn Fn(String),
) -> Result<Ran, CliError> {
    let RunSpec {
        backends,
        pk,
        device_evaluation,
        config,
        proofs,
        split_peak_rss,
    } = spec;
    let first = Arc::clone(
        backends
            .first()
            .ok_or_else(|| CliError::device("no device"))?,
    );
    // The circuit's shape is fixed: its matrices are built once, and each proof's
    // synthesis computes only its assignment (about 9x less host work a proof); in the
    // device layout too where the devices evaluate A·z, B·z and C·z themselves.
    let t = Instant::now();
    let mut matrices = CircuitMatrices::of(circuit.proof(0).circuit)?;
    let qap = if device_evaluation {
        matrices = matrices.into_device_layout()?;
        Some(matrices.qap()?)
    } else {
        None
    };
    let matrices_seconds = t.elapsed().as_secs_f64();
    say(format!(
        "circuit matrices built once in {matrices_seconds:.1} s{}; each proof synthesizes its assignment only",
        if qap.is_some() {
            ", in the device layout too"
        } else {
            ""
        }
    ));
    let workers = config.workers_per_device;
    let prover = Prover::for_circuit(backends, pk, qap, config)?;
    for key in prover.keys() {
        let pinned: Vec<&str> = key.pinned_queries().iter().map(|q| q.name()).collect();
        say(format!(
            "{}: {}{}",
            key.backend_label(),
            crucible_core::groth16::schedule::describe(key.schedule_choice()),
            if pinned.is_empty() {
                String::new()
            } else {
                format!(
                    "; streamed from the key's host copy, pinned and copied as it lies: {}",
                    pinned.join(",")
                )
            }
        ));
    }
    say(format!(
        "the predicted time assumes {}",
        predicted_time_assumes(&*first)
    ));
    say(format!(
        "proving {} on {} with {}",
        count(proofs as u64, "proof"),
        first.info().label(),
        count(workers as u64, "worker"),
    ));
    let jobs = (0..proofs).map(|id| {
        let p = circuit.proof(id);
        Job {
            id: id as u64,
            circuit: FixedShape {
                matrices: matrices.clone(),
                circuit: p.circuit,
            },
            r: p.r,
            s: p.s,
        }
    });
    let watch = MemoryWatch::start(Arc::clone(&first));
    let bar = progress_bar(proofs as u64, "proving");
    let mut outcomes: Vec<JobOutcome> = Vec::new();
    let mut ended_at = Vec::new();
    let (setup_peak_rss, proving_watch) = if split_peak_rss {
        (
            host_memory::peak_rss(),
            Some(host_memory::PeakWatch::start()),
        )
    } else {
        (None, None)
    };
    let rss_at_first_proof = proving_watch.as_ref().and_then(|w| w.at_start());
    if let Some(resident) = rss_at_first_proof {
        say(format!(
            "host memory resident at the first proof (the key, the matrices): {}",
            crucible_core::human_bytes(resident)
        ));
    }
    let started = Instant::now();
    let stats = prover.run(jobs, |outcome| {
        ended_at.push(started.elapsed());
        tracing::debug!(proof = outcome.id, device = %outcome.device, ok = outcome.result.is_ok(), "proof finished");
        bar.inc(1);
        outcomes.push(outcome);
    });
    bar.finish_and_clear();
    let proving_peak_rss = proving_watch.and_then(host_memory::PeakWatch::finish);
    let memory = watch
        .and_then(MemoryWatch::finish)
        .map(|sampled| sampled.describe(first.budget().capacity()));
    let devices = prover.keys().count();
    let choice = prover.keys().next().map(|k| k.schedule_choice().clone());
    let released = prover.release();
    outcomes.sort_by_key(|o| o.id);
    Ok(Ran {
        outcomes,
        stats,
        ended_at,
        choice,
        devices,
        matrices_seconds,
        memory,
        released,
        setup_peak_rss,
        rss_at_first_proof,
        proving_peak_rss,
    })
}

/// Median and max of each phase across the successful proofs.
pub fn phase_stats(reports: &[&ProofReport]) -> Vec<(&'static str, Stats)> {
    let Some(first) = reports.first() else {
        return Vec::new();
    };
    let mut phases: Vec<(&'static str, Stats)> = first
        .times
        .named()
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            (
                *name,
                Stats::of(
                    &reports
                        .iter()
                        .map(|r| r.times.named()[i].1)
                        .collect::<Vec<_>>(),
                ),
            )
        })
        .collect();
    phases.push((
        "stage+compute",
        Stats::of(
            &reports
                .iter()
                .map(|r| r.times.stage_and_compute())
                .collect::<Vec<_>>(),
        ),
    ));
    phases.push((
        "total",
        Stats::of(&reports.iter().map(|r| r.times.total()).collect::<Vec<_>>()),
    ));
    phases
}
