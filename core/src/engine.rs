//! The prover engine: a stream of proofs over every device of a backend, several
//! workers per device, synthesis overlapping device work, never out of memory.
//!
//! Each device stages the proving key once, in a long-lived lease, shared by its
//! workers. Each worker acquires a proof lease from its device's budget before
//! allocating, so workers wait for memory instead of crashing. A failed proof is an
//! error naming its phase; its lease is released and the engine keeps serving.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ark_relations::gr1cs::ConstraintSynthesizer;

use crate::groth16::{
    key_plan, proof_plan, prove_synthesized, synthesize, KeyOptions, ProofOutput, ProveOptions,
    ProvingKey, Reduction, Schedule, StagedKey, Synthesized,
};
use crate::{BudgetStats, Error, Fr, Phase, PhaseExt, ProofShape, ProverBackend, Result};

/// How the engine runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineConfig {
    /// Workers per device (each holds at most one proof lease at a time).
    pub workers_per_device: usize,
    /// Host threads synthesizing circuits ahead of the devices.
    pub synthesis_threads: usize,
    /// Verify every proof before returning it.
    pub verify: bool,
    /// The reduction the key was made for.
    pub reduction: Reduction,
    /// A cap below each device's budget for the key and the workers' proofs; the
    /// schedule is the fastest whose key and `workers_per_device` proofs fit it.
    pub memory_limit: Option<u64>,
    /// A fixed schedule instead of the fastest that fits (tests, tuning).
    pub schedule: Option<Schedule>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            workers_per_device: 1,
            synthesis_threads: 1,
            verify: true,
            reduction: Reduction::Libsnark,
            memory_limit: None,
            schedule: None,
        }
    }
}

/// One proof to make.
pub struct Job<C> {
    /// Caller's identifier, returned with the outcome.
    pub id: u64,
    /// The circuit with its witness.
    pub circuit: C,
    /// Randomness r.
    pub r: Fr,
    /// Randomness s.
    pub s: Fr,
}

/// The outcome of one job.
#[derive(Debug)]
pub struct JobOutcome {
    /// The job's id.
    pub id: u64,
    /// Label of the device that made (or last tried) the proof.
    pub device: String,
    /// The proof, or an error naming the phase that failed.
    pub result: Result<ProofOutput>,
    /// Set when the job failed on this device and was retried elsewhere.
    pub retried_from: Option<String>,
}

/// Counters of one device after a run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DeviceStats {
    /// Device label.
    pub label: String,
    /// Its budget's counters (high-water mark, time waited).
    pub budget: BudgetStats,
    /// Proofs made there.
    pub proofs: usize,
    /// Proofs that failed there.
    pub failures: usize,
    /// False once the device was taken out of rotation.
    pub healthy: bool,
}

/// What a run did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct EngineStats {
    /// Proofs returned.
    pub proofs: usize,
    /// Jobs that ended in an error.
    pub failures: usize,
    /// Wall time of the run.
    #[serde(serialize_with = "crate::report::serialize_duration")]
    pub wall: Duration,
    /// Per-device counters.
    pub devices: Vec<DeviceStats>,
}

impl EngineStats {
    /// Proofs per second over the run's wall time.
    pub fn proofs_per_second(&self) -> f64 {
        self.proofs as f64 / self.wall.as_secs_f64().max(1e-9)
    }
}

struct Device {
    backend: Arc<dyn ProverBackend>,
    key: StagedKey,
    healthy: AtomicBool,
    proofs: AtomicUsize,
    failures: AtomicUsize,
    // Jobs placed on this device and not finished yet.
    pending: AtomicUsize,
    // Bytes one proof's lease takes here.
    proof_bytes: u64,
}

impl Device {
    fn free_budget(&self) -> u64 {
        let b = self.backend.budget();
        b.capacity().saturating_sub(b.in_use())
    }
}

/// Proves a stream of circuits for one proving key on one or more devices.
pub struct Prover {
    devices: Vec<Device>,
    config: EngineConfig,
    shape: ProofShape,
}

fn synthesize_job<C: ConstraintSynthesizer<Fr>>(job: Job<C>) -> Synthesis {
    let t = Instant::now();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| synthesize(job.circuit)))
        .unwrap_or_else(|panic| {
            Err(Error::InvalidInput(format!(
                "circuit panicked during synthesis: {}",
                crate::panic_message(&*panic)
            )))
        })
        .phase(Phase::Synthesize);
    Synthesis {
        id: job.id,
        r: job.r,
        s: job.s,
        result,
        time: t.elapsed(),
    }
}

struct Synthesis {
    id: u64,
    r: Fr,
    s: Fr,
    result: Result<Synthesized>,
    time: Duration,
}

/// How many proofs of the resident schedule fit at once on `backend` next to one
/// staged key of `shape`.
pub fn proofs_that_fit(backend: &dyn ProverBackend, shape: &ProofShape) -> Result<u64> {
    let key = key_plan(backend, shape)?.total_bytes();
    let proof = proof_plan(backend, shape)?.total_bytes().max(1);
    Ok(backend.budget().capacity().saturating_sub(key) / proof)
}

impl Prover {
    /// Chooses each device's schedule (the fastest whose key and
    /// `workers_per_device` proofs fit its budget) and stages `pk` there. Fails at
    /// once if the budget is below the shape's floor.
    pub fn new(
        backends: Vec<Arc<dyn ProverBackend>>,
        pk: Arc<ProvingKey>,
        config: EngineConfig,
    ) -> Result<Prover> {
        if backends.is_empty() {
            return Err(Error::InvalidInput(
                "the engine needs at least one device".into(),
            ));
        }
        if config.workers_per_device == 0 || config.synthesis_threads == 0 {
            return Err(Error::InvalidInput(
                "workers and synthesis threads must be at least 1".into(),
            ));
        }
        let shape = crate::groth16::key_shape_for(&pk, config.reduction)?;
        let options = KeyOptions {
            reduction: config.reduction,
            workers: config.workers_per_device,
            memory_limit: config.memory_limit,
            schedule: config.schedule,
        };
        let mut devices = Vec::with_capacity(backends.len());
        for backend in backends {
            let key = StagedKey::stage_with(&*backend, Arc::clone(&pk), &options)?;
            let proof_bytes = key.schedule_choice().chosen.proof.total_bytes();
            devices.push(Device {
                backend,
                key,
                healthy: AtomicBool::new(true),
                proofs: AtomicUsize::new(0),
                failures: AtomicUsize::new(0),
                pending: AtomicUsize::new(0),
                proof_bytes,
            });
        }
        Ok(Prover {
            devices,
            config,
            shape,
        })
    }

    /// The sizes the key was made for.
    pub fn shape(&self) -> &ProofShape {
        &self.shape
    }

    /// The staged key of each device (its schedule and plans).
    pub fn keys(&self) -> impl Iterator<Item = &StagedKey> {
        self.devices.iter().map(|d| &d.key)
    }

    /// Proves every job, calling `on_done` as each finishes (in completion order).
    ///
    /// Synthesis threads feed a dispatcher, which places each job on the healthy
    /// device with the most free budget (less what its queued jobs will need); each
    /// device's workers take jobs from its own queue, so a job never moves between
    /// devices mid-proof.
    pub fn run<C, I>(&self, jobs: I, mut on_done: impl FnMut(JobOutcome)) -> EngineStats
    where
        C: ConstraintSynthesizer<Fr> + Send,
        I: IntoIterator<Item = Job<C>>,
        I::IntoIter: Send,
    {
        let start = Instant::now();
        let per_device = self.config.workers_per_device;
        let jobs = Mutex::new(jobs.into_iter());
        let (synth_tx, synth_rx) = sync_channel::<Synthesis>(per_device * self.devices.len());
        let (done_tx, done_rx) = channel::<JobOutcome>();
        let mut queues = Vec::new();
        let mut senders = Vec::new();
        for _ in &self.devices {
            let (tx, rx) = sync_channel::<Synthesis>(per_device);
            senders.push(tx);
            queues.push(Mutex::new(rx));
        }
        let mut proofs = 0;
        let mut failures = 0;
        std::thread::scope(|scope| {
            for _ in 0..self.config.synthesis_threads {
                let tx = synth_tx.clone();
                let jobs = &jobs;
                scope.spawn(move || loop {
                    let next = jobs.lock().unwrap_or_else(|p| p.into_inner()).next();
                    let Some(job) = next else { break };
                    if tx.send(synthesize_job(job)).is_err() {
                        break;
                    }
                });
            }
            drop(synth_tx);
            scope.spawn(move || {
                for item in synth_rx {
                    let d = self.place();
                    self.devices[d].pending.fetch_add(1, Ordering::SeqCst);
                    if senders[d].send(item).is_err() {
                        break;
                    }
                }
            });
            for (device, queue) in self.devices.iter().zip(&queues) {
                for _ in 0..per_device {
                    let tx = done_tx.clone();
                    scope.spawn(move || loop {
                        let next = queue.lock().unwrap_or_else(|p| p.into_inner()).recv();
                        let Ok(item) = next else { break };
                        let outcome = self.prove_one(device, item);
                        device.pending.fetch_sub(1, Ordering::SeqCst);
                        if tx.send(outcome).is_err() {
                            break;
                        }
                    });
                }
            }
            drop(done_tx);
            for outcome in done_rx {
                if outcome.result.is_ok() {
                    proofs += 1;
                } else {
                    failures += 1;
                }
                on_done(outcome);
            }
        });
        EngineStats {
            proofs,
            failures,
            wall: start.elapsed(),
            devices: self
                .devices
                .iter()
                .map(|d| DeviceStats {
                    label: d.backend.info().label(),
                    budget: d.backend.budget().stats(),
                    proofs: d.proofs.load(Ordering::SeqCst),
                    failures: d.failures.load(Ordering::SeqCst),
                    healthy: d.healthy.load(Ordering::SeqCst),
                })
                .collect(),
        }
    }

    // The healthy device with the most free budget once its queued jobs are counted
    // (all devices are candidates if none is healthy; ties go to the lower index).
    fn place(&self) -> usize {
        let any_healthy = self
            .devices
            .iter()
            .any(|d| d.healthy.load(Ordering::SeqCst));
        let score = |d: &Device| {
            i128::from(d.free_budget())
                - i128::from(d.proof_bytes) * d.pending.load(Ordering::SeqCst) as i128
        };
        let mut best = 0;
        for (i, d) in self.devices.iter().enumerate() {
            if any_healthy && !d.healthy.load(Ordering::SeqCst) {
                continue;
            }
            let best_usable = !any_healthy || self.devices[best].healthy.load(Ordering::SeqCst);
            if !best_usable || score(d) > score(&self.devices[best]) {
                best = i;
            }
        }
        best
    }

    fn attempt(
        &self,
        device: &Device,
        synthesized: &Synthesized,
        item: &Synthesis,
    ) -> Result<ProofOutput> {
        let options = ProveOptions {
            verify: self.config.verify,
        };
        let result = prove_synthesized(
            &*device.backend,
            &device.key,
            synthesized,
            item.r,
            item.s,
            options,
        );
        match &result {
            Ok(_) => device.proofs.fetch_add(1, Ordering::SeqCst),
            Err(_) => device.failures.fetch_add(1, Ordering::SeqCst),
        };
        result.map(|mut out| {
            out.report.times.synthesize = item.time;
            out
        })
    }

    fn prove_one(&self, device: &Device, item: Synthesis) -> JobOutcome {
        let synthesized = match &item.result {
            Ok(s) => s,
            Err(e) => {
                return JobOutcome {
                    id: item.id,
                    device: "host".into(),
                    result: Err(Error::InvalidInput(e.to_string()).in_phase(Phase::Synthesize)),
                    retried_from: None,
                }
            }
        };
        // A job queued on a device that has since left the rotation goes elsewhere.
        let device = if device.healthy.load(Ordering::SeqCst) {
            device
        } else {
            self.healthiest_other(device).unwrap_or(device)
        };
        let label = device.backend.info().label();
        let result = self.attempt(device, synthesized, &item);
        let device_failed = matches!(&result, Err(e) if matches!(e.root(), Error::Device { .. }));
        if device_failed {
            if let Some(other) = self.healthiest_other(device) {
                device.healthy.store(false, Ordering::SeqCst);
                return JobOutcome {
                    id: item.id,
                    device: other.backend.info().label(),
                    result: self.attempt(other, synthesized, &item),
                    retried_from: Some(label),
                };
            }
        }
        JobOutcome {
            id: item.id,
            device: label,
            result,
            retried_from: None,
        }
    }

    // Another healthy device, the one with the most free budget.
    fn healthiest_other(&self, failed: &Device) -> Option<&Device> {
        self.devices
            .iter()
            .filter(|d| !std::ptr::eq(*d, failed) && d.healthy.load(Ordering::SeqCst))
            .max_by_key(|d| d.free_budget())
    }

    /// Frees every device's staged key.
    pub fn release(self) -> Result<()> {
        let mut first_error = None;
        for d in self.devices {
            if let Err(e) = d.key.release() {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}
