//! The prover: the devices, their workers and the synthesis threads that feed them,
//! and the stream of jobs through them.

use crate::PairingCurve;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::busy_clock::BusyClock;
use super::host_stages::HostStages;
use crate::groth16::{
    evaluate, key_plan, proof_plan, prove_evaluated, Evaluations, KeyOptions, ProofOutput,
    ProveOptions, ProvingKey, QapMatrices, Reduction, Schedule, StagedKey, Synthesize, Synthesized,
};
use crate::{
    panic_message, BudgetStats, DeviceBudget, Error, Fr, Phase, PhaseExt, ProofShape,
    ProverBackend, Result, ScalarMix,
};

/// Most workers per device (each is a thread holding at most one proof lease).
pub const MAX_WORKERS_PER_DEVICE: usize = 256;

/// Most synthesis threads.
pub const MAX_SYNTHESIS_THREADS: usize = 256;

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
    /// Bytes the schedule may plan for the key and the workers' proofs, below each
    /// device's budget (`None`: the whole budget); the schedule is the fastest whose key
    /// and `workers_per_device` proofs fit it. It caps what is planned, not the budget
    /// (that is [`crate::registry::ProbeOptions::budget_cap`]).
    pub schedule_cap: Option<u64>,
    /// A fixed schedule instead of the fastest that fits (tests, tuning).
    pub schedule: Option<Schedule>,
    /// What the jobs' witnesses are known to look like, for the chooser's predicted
    /// times ([`ScalarMix::FULL`] when nothing is known).
    pub witness: ScalarMix,
    /// One job's synthesis on one thread, where the caller can tell (the built-in
    /// circuits' [`crate::fixtures::circuit::synthesis_time`]): the chooser then serves no more
    /// proofs per second than the synthesis threads supply. Their host evaluations
    /// are counted either way ([`crate::host_stages`]).
    pub synthesis_time: Option<Duration>,
}

impl EngineConfig {
    /// Checks the counts (at least 1, at most [`MAX_WORKERS_PER_DEVICE`] and
    /// [`MAX_SYNTHESIS_THREADS`]): callers check before any work, [`Prover::new`] again.
    pub fn check(&self) -> Result<()> {
        for (what, value, most) in [
            (
                "workers per device",
                self.workers_per_device,
                MAX_WORKERS_PER_DEVICE,
            ),
            (
                "synthesis threads",
                self.synthesis_threads,
                MAX_SYNTHESIS_THREADS,
            ),
        ] {
            if value == 0 || value > most {
                return Err(Error::InvalidInput(format!(
                    "{what} must be between 1 and {most}, got {value}"
                )));
            }
        }
        Ok(())
    }
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            workers_per_device: 1,
            synthesis_threads: 1,
            verify: true,
            reduction: Reduction::Libsnark,
            schedule_cap: None,
            schedule: None,
            witness: ScalarMix::FULL,
            synthesis_time: None,
        }
    }
}

/// One proof to make.
pub struct Job<C, F = Fr> {
    /// Caller's identifier, returned with the outcome.
    pub id: u64,
    /// The circuit with its witness (any [`Synthesize`]: an arkworks circuit, a
    /// [`crate::groth16::FixedShape`] one, or one already synthesized).
    pub circuit: C,
    /// Randomness r.
    pub r: F,
    /// Randomness s.
    pub s: F,
}

/// The outcome of one job.
#[derive(Debug)]
pub struct JobOutcome<E: PairingCurve = crate::Bls12_381> {
    /// The job's id.
    pub id: u64,
    /// Label of the device that made (or last tried) the proof.
    pub device: String,
    /// The proof, or an error naming the phase that failed.
    pub result: Result<ProofOutput<E>>,
    /// Set when the job failed on this device and was retried elsewhere.
    pub retried_from: Option<String>,
    /// Errors recorded while releasing leases on the job's device since the last job
    /// there finished (with one worker a device, exactly this job's). A device with
    /// any is taken out of rotation.
    pub release_errors: Vec<Error>,
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
    /// Errors recorded while releasing leases there (also in their jobs' outcomes).
    pub release_errors: usize,
    /// Proof attempts there that panicked outside the backend's guarded phases.
    pub panics: usize,
    /// Time in this run with at least one proof in flight there (from its allocation
    /// to its release and verification; overlapping proofs counted once).
    #[serde(serialize_with = "crate::report::serialize_duration")]
    pub busy: Duration,
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
    /// Panics in the caller's code (the job iterator, the `on_done` callback), caught:
    /// the run went on and every job still got its outcome.
    pub caller_panics: Vec<String>,
}

impl EngineStats {
    /// The fraction of the run's wall time device `index` had a proof in flight: near
    /// 1 when the host keeps it fed, lower when it waits for synthesis.
    pub fn busy_fraction(&self, index: usize) -> f64 {
        self.devices.get(index).map_or(0.0, |d| {
            d.busy.as_secs_f64() / self.wall.as_secs_f64().max(1e-9)
        })
    }

    /// Proofs per second over the run's wall time.
    pub fn proofs_per_second(&self) -> f64 {
        self.proofs as f64 / self.wall.as_secs_f64().max(1e-9)
    }
}

struct Device<E: PairingCurve> {
    backend: Arc<dyn ProverBackend<E>>,
    // Read from the backend once: the engine's own bookkeeping calls no backend code.
    label: String,
    budget: Arc<DeviceBudget>,
    key: StagedKey<E>,
    healthy: AtomicBool,
    proofs: AtomicUsize,
    failures: AtomicUsize,
    release_errors: AtomicUsize,
    panics: AtomicUsize,
    // Jobs placed on this device and not finished yet.
    pending: AtomicUsize,
    // Bytes one proof's lease takes here.
    proof_bytes: u64,
    // Time with a proof in flight here, over every run.
    busy: BusyClock,
}

impl<E: PairingCurve> Device<E> {
    fn free_budget(&self) -> u64 {
        self.budget.capacity().saturating_sub(self.budget.in_use())
    }

    // Counters now; `busy_before` is the busy time when the run began.
    fn stats(&self, busy_before: Duration) -> DeviceStats {
        DeviceStats {
            busy: self.busy.total().saturating_sub(busy_before),
            label: self.label.clone(),
            budget: self.budget.stats(),
            proofs: self.proofs.load(Ordering::SeqCst),
            failures: self.failures.load(Ordering::SeqCst),
            healthy: self.healthy.load(Ordering::SeqCst),
            release_errors: self.release_errors.load(Ordering::SeqCst),
            panics: self.panics.load(Ordering::SeqCst),
        }
    }

    // Stages the key on `backend` with the schedule chosen for its workers (which
    // fails at once when the budget is below the shape's floor).
    fn open(
        backend: Arc<dyn ProverBackend<E>>,
        pk: &Arc<ProvingKey<E>>,
        matrices: Option<&Arc<QapMatrices<E::ScalarField>>>,
        options: &KeyOptions,
    ) -> Result<Device<E>> {
        let label = backend.info().label();
        let budget = Arc::clone(backend.budget());
        let key =
            StagedKey::stage_for_circuit(&*backend, Arc::clone(pk), matrices.cloned(), options)?;
        let proof_bytes = key.schedule_choice().chosen.proof.total_bytes();
        Ok(Device {
            backend,
            label,
            budget,
            key,
            healthy: AtomicBool::new(true),
            proofs: AtomicUsize::new(0),
            failures: AtomicUsize::new(0),
            release_errors: AtomicUsize::new(0),
            panics: AtomicUsize::new(0),
            pending: AtomicUsize::new(0),
            proof_bytes,
            busy: BusyClock::default(),
        })
    }
}

/// Proves a stream of circuits for one proving key on one or more devices.
pub struct Prover<E: PairingCurve = crate::Bls12_381> {
    devices: Vec<Device<E>>,
    config: EngineConfig,
    shape: ProofShape,
}

// Synthesizes a job and evaluates it on the host unless every device evaluates it.
fn synthesize_job<E: PairingCurve, C: Synthesize<E::ScalarField>>(
    job: Job<C, E::ScalarField>,
    devices: &[Device<E>],
) -> Synthesis<E> {
    let t = Instant::now();
    // Synthesis turns a panicking circuit into an error.
    let result = job
        .circuit
        .synthesize()
        .phase(Phase::Synthesize)
        .and_then(|synthesized| {
            let synthesize_time = t.elapsed();
            let t = Instant::now();
            // A·z, B·z, C·z here too, not on the device worker: a worker evaluating leaves
            // its device to the other workers (at 2^20 on the H200, 70-80 ms of a proof's
            // ~180). Unless the devices evaluate them from their staged matrices.
            let on_devices = devices.iter().all(|d| d.key.evaluates(&synthesized));
            let evals = if on_devices {
                None
            } else {
                Some(evaluate(&synthesized).phase(Phase::Evaluate)?)
            };
            Ok(Ready {
                synthesized,
                evals,
                r: job.r,
                s: job.s,
                synthesize_time,
                evaluate_time: t.elapsed(),
                ready_at: Instant::now(),
            })
        });
    Synthesis { id: job.id, result }
}

// A job ready for a device: its circuit synthesized and evaluated (or to be
// evaluated on the device: `None`), its randomness.
struct Ready<E: PairingCurve> {
    synthesized: Synthesized<E::ScalarField>,
    evals: Option<Evaluations<E::ScalarField>>,
    r: E::ScalarField,
    s: E::ScalarField,
    synthesize_time: Duration,
    evaluate_time: Duration,
    // When it was ready, for the time it then waited for a device worker.
    ready_at: Instant,
}

// A job off the synthesis threads: ready, or failed on the host (its error as it came).
struct Synthesis<E: PairingCurve> {
    id: u64,
    result: Result<Ready<E>>,
}

/// How many proofs of the resident schedule fit at once on `backend` next to one
/// staged key of `shape`.
pub fn proofs_that_fit<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    shape: &ProofShape,
) -> Result<u64> {
    let key = key_plan(backend, shape)?.total_bytes();
    let proof = proof_plan(backend, shape)?.total_bytes().max(1);
    Ok(backend.budget().capacity().saturating_sub(key) / proof)
}

impl<E: PairingCurve> Prover<E> {
    /// Chooses each device's schedule (the fastest whose key and
    /// `workers_per_device` proofs fit its budget) and stages `pk` there. Fails at
    /// once if the budget is below the shape's floor.
    pub fn new(
        backends: Vec<Arc<dyn ProverBackend<E>>>,
        pk: Arc<ProvingKey<E>>,
        config: EngineConfig,
    ) -> Result<Prover<E>> {
        Self::for_circuit(backends, pk, None, config)
    }

    /// [`Prover::new`] for jobs of one circuit whose `matrices` are known: a device
    /// whose chosen schedule evaluates on the device stages them with the key, and
    /// the jobs carrying them ([`Synthesized::qap`]: a
    /// [`crate::groth16::FixedShape`] circuit made from the same
    /// [`crate::groth16::CircuitMatrices`]) stage only their assignment.
    pub fn for_circuit(
        backends: Vec<Arc<dyn ProverBackend<E>>>,
        pk: Arc<ProvingKey<E>>,
        matrices: Option<Arc<QapMatrices<E::ScalarField>>>,
        config: EngineConfig,
    ) -> Result<Prover<E>> {
        if backends.is_empty() {
            return Err(Error::InvalidInput(
                "the engine needs at least one device".into(),
            ));
        }
        config.check()?;
        let shape = crate::groth16::key_shape_for(&pk, config.reduction)?;
        // The synthesis threads feed every device: each gets its share.
        let host = HostStages {
            threads: config.synthesis_threads as f64 / backends.len() as f64,
            synthesis_seconds: config.synthesis_time.unwrap_or_default().as_secs_f64(),
        };
        let options = KeyOptions {
            reduction: config.reduction,
            workers: config.workers_per_device,
            schedule_cap: config.schedule_cap,
            schedule: config.schedule,
            witness: config.witness,
            host: Some(host),
        };
        let mut devices = Vec::with_capacity(backends.len());
        for backend in backends {
            // A backend that panics while planning or staging is a failed device.
            let opened = catch_unwind(AssertUnwindSafe(|| {
                Device::open(backend, &pk, matrices.as_ref(), &options)
            }))
            .unwrap_or_else(|panic| {
                Err(Error::device(
                    "backend",
                    format!("panicked while staging the key: {}", panic_message(&*panic)),
                ))
            });
            devices.push(opened?);
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
    pub fn keys(&self) -> impl Iterator<Item = &StagedKey<E>> {
        self.devices.iter().map(|d| &d.key)
    }

    /// Proves every job, calling `on_done` as each finishes (in completion order).
    ///
    /// Synthesis threads feed a dispatcher, which places each job on the healthy
    /// device with the most free budget (less what its queued jobs will need); each
    /// device's workers take jobs from its own queue, so a job never moves between
    /// devices mid-proof. Jobs are drawn from `jobs` as the devices take them, never
    /// collected first. A panic in `jobs` ends the stream there; a panic in `on_done`
    /// is recorded in [`EngineStats::caller_panics`] and the run goes on.
    pub fn run<C, I>(&self, jobs: I, mut on_done: impl FnMut(JobOutcome<E>)) -> EngineStats
    where
        C: Synthesize<E::ScalarField>,
        I: IntoIterator<Item = Job<C, E::ScalarField>>,
        I::IntoIter: Send,
    {
        let start = Instant::now();
        let busy_before: Vec<Duration> = self.devices.iter().map(|d| d.busy.total()).collect();
        let per_device = self.config.workers_per_device;
        let jobs = Mutex::new(jobs.into_iter());
        let caller_panics = Mutex::new(Vec::new());
        let record_panic = |what: &str, panic: Box<dyn std::any::Any + Send>| {
            lock(&caller_panics).push(format!("{what} panicked: {}", panic_message(&*panic)));
        };
        // A rendezvous: a synthesis thread keeps its proof until the dispatcher takes
        // it. A buffer here would hold more assignments on the host (2 GiB each at 2^26)
        // without feeding a device any sooner: each device's queue already holds one
        // proof a worker ahead of its workers.
        let (synth_tx, synth_rx) = sync_channel::<Synthesis<E>>(0);
        let (done_tx, done_rx) = channel::<JobOutcome<E>>();
        let mut queues = Vec::new();
        let mut senders = Vec::new();
        for _ in &self.devices {
            let (tx, rx) = sync_channel::<Synthesis<E>>(per_device);
            senders.push(tx);
            queues.push(Mutex::new(rx));
        }
        let mut proofs = 0;
        let mut failures = 0;
        std::thread::scope(|scope| {
            for _ in 0..self.config.synthesis_threads {
                let tx = synth_tx.clone();
                let (jobs, record_panic) = (&jobs, &record_panic);
                scope.spawn(move || loop {
                    let next = catch_unwind(AssertUnwindSafe(|| lock(jobs).next()));
                    let job = match next {
                        Ok(Some(job)) => job,
                        Ok(None) => break,
                        Err(panic) => {
                            record_panic("the job iterator", panic);
                            break;
                        }
                    };
                    if tx.send(synthesize_job(job, &self.devices)).is_err() {
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
                    // Nothing in this loop unwinds: `prove_one` catches every panic, so
                    // the device's queue always has its workers.
                    scope.spawn(move || loop {
                        let next = lock(queue).recv();
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
                if let Err(panic) = catch_unwind(AssertUnwindSafe(|| on_done(outcome))) {
                    record_panic("the on_done callback", panic);
                }
            }
        });
        EngineStats {
            proofs,
            failures,
            wall: start.elapsed(),
            devices: self
                .devices
                .iter()
                .zip(&busy_before)
                .map(|(d, before)| d.stats(*before))
                .collect(),
            caller_panics: caller_panics
                .into_inner()
                .unwrap_or_else(|p| p.into_inner()),
        }
    }

    // The healthy device with the most free budget once its queued jobs are counted
    // (all devices are candidates if none is healthy; ties go to the lower index).
    fn place(&self) -> usize {
        let any_healthy = self
            .devices
            .iter()
            .any(|d| d.healthy.load(Ordering::SeqCst));
        let score = |d: &Device<E>| {
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

    // One try on `device`. Every panic is caught here (a backend outside its guarded
    // phases, a device sync during a release), and the release errors recorded on the
    // device meanwhile are collected.
    fn attempt(&self, device: &Device<E>, ready: &Ready<E>) -> Attempt<E> {
        let options = ProveOptions {
            verify: self.config.verify,
        };
        // A job left to the devices' sparse products is evaluated here should this
        // device's key not hold its matrices.
        let host_evals = match &ready.evals {
            None if !device.key.evaluates(&ready.synthesized) => {
                match evaluate(&ready.synthesized).phase(Phase::Evaluate) {
                    Ok(evals) => Some(evals),
                    Err(e) => {
                        return Attempt {
                            result: Err(e),
                            release_errors: Vec::new(),
                            device_failed: false,
                        }
                    }
                }
            }
            _ => None,
        };
        let evals = ready.evals.as_ref().or(host_evals.as_ref());
        let queued = ready.ready_at.elapsed();
        let in_flight = device.busy.enter();
        let proved = catch_unwind(AssertUnwindSafe(|| {
            prove_evaluated(
                &*device.backend,
                &device.key,
                &ready.synthesized,
                evals,
                ready.r,
                ready.s,
                options,
            )
        }));
        drop(in_flight);
        let panicked = proved.is_err();
        let result = proved.unwrap_or_else(|panic| {
            device.panics.fetch_add(1, Ordering::SeqCst);
            Err(Error::device(
                device.label.clone(),
                format!("panicked while proving: {}", panic_message(&*panic)),
            ))
        });
        let release_errors = device.budget.take_deferred_errors();
        device
            .release_errors
            .fetch_add(release_errors.len(), Ordering::SeqCst);
        match &result {
            Ok(_) => device.proofs.fetch_add(1, Ordering::SeqCst),
            Err(_) => device.failures.fetch_add(1, Ordering::SeqCst),
        };
        let device_failed = panicked
            || !release_errors.is_empty()
            || matches!(&result, Err(e) if matches!(e.root(), Error::Device { .. }) || e.phase() == Some(Phase::Release));
        Attempt {
            result: result.map(|mut out| {
                out.report.times.synthesize = ready.synthesize_time;
                out.report.times.evaluate = ready.evaluate_time;
                out.report.times.queued = queued;
                out
            }),
            release_errors,
            device_failed,
        }
    }

    fn prove_one(&self, device: &Device<E>, item: Synthesis<E>) -> JobOutcome<E> {
        let ready = match item.result {
            Ok(ready) => ready,
            Err(e) => {
                return JobOutcome {
                    id: item.id,
                    device: "host".into(),
                    result: Err(e),
                    retried_from: None,
                    release_errors: Vec::new(),
                };
            }
        };
        // A job queued on a device that has since left the rotation goes elsewhere.
        let device = if device.healthy.load(Ordering::SeqCst) {
            device
        } else {
            self.healthiest_other(device).unwrap_or(device)
        };
        let first = self.attempt(device, &ready);
        if first.device_failed {
            if let Some(other) = self.healthiest_other(device) {
                device.healthy.store(false, Ordering::SeqCst);
                if first.result.is_err() {
                    let mut retry = self.attempt(other, &ready);
                    if retry.device_failed && self.healthiest_other(other).is_some() {
                        other.healthy.store(false, Ordering::SeqCst);
                    }
                    let mut release_errors = first.release_errors;
                    release_errors.append(&mut retry.release_errors);
                    return JobOutcome {
                        id: item.id,
                        device: other.label.clone(),
                        result: retry.result,
                        retried_from: Some(device.label.clone()),
                        release_errors,
                    };
                }
            }
        }
        JobOutcome {
            id: item.id,
            device: device.label.clone(),
            result: first.result,
            retried_from: None,
            release_errors: first.release_errors,
        }
    }

    // Another healthy device, the one with the most free budget.
    fn healthiest_other(&self, failed: &Device<E>) -> Option<&Device<E>> {
        self.devices
            .iter()
            .filter(|d| !std::ptr::eq(*d, failed) && d.healthy.load(Ordering::SeqCst))
            .max_by_key(|d| d.free_budget())
    }

    /// Frees every device's staged key; the first error, including one recorded while
    /// releasing and not yet reported with a job.
    pub fn release(self) -> Result<()> {
        let mut first_error = None;
        for d in self.devices {
            let budget = Arc::clone(&d.budget);
            let released =
                catch_unwind(AssertUnwindSafe(|| d.key.release())).unwrap_or_else(|panic| {
                    Err(Error::device(
                        d.label.clone(),
                        format!(
                            "panicked while releasing the key: {}",
                            panic_message(&*panic)
                        ),
                    ))
                });
            if let Err(e) = released {
                first_error.get_or_insert(e);
            }
            if let Some(e) = budget.take_deferred_errors().into_iter().next() {
                first_error.get_or_insert(e.in_phase(Phase::Release));
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

struct Attempt<E: PairingCurve> {
    result: Result<ProofOutput<E>>,
    release_errors: Vec<Error>,
    // The device panicked, failed, or failed to release: it should leave the rotation.
    device_failed: bool,
}

// The engine's locks guard plain data left consistent by every update, so a poisoned
// lock (a panic while it was held) is safe to use.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
