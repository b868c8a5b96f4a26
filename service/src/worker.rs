//! `crucible worker`: the engine fed from the shared Postgres queue. A worker claims
//! jobs while it has room (two per engine worker, so synthesis runs ahead of the
//! devices), keeps their leases alive from a separate task, commits each verified
//! proof in the transaction that marks its job done, requeues the jobs of workers
//! that stopped heartbeating, and at shutdown gives back what it has not started.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ark_serialize::CanonicalSerialize;
use crucible_core::engine::{EngineConfig, JobOutcome};
use crucible_core::ProverBackend;
use tokio::sync::mpsc;

use crate::admission::{KeyMemory, Limits, Reservation};
use crate::feed::Push;
use crate::hot_key::HotKey;
use crate::job_circuit::JobCircuit;
use crate::key_circuit::KeyCircuit;
use crate::key_dir::KeyDir;
use crate::key_ref::KeyRef;
use crate::load_ticket::LoadTicket;
use crate::metrics::{gauge_value, Metrics};
use crate::oom_watch::OomWatch;
use crate::queue::{Claimed, Fenced, Queue, STATES};
use crate::witness::Witness;
use crate::{ServiceError, ServiceResult};

/// How a worker runs.
#[derive(Clone)]
pub struct WorkerConfig {
    /// The queue's database URL.
    pub url: String,
    /// This worker's name in the queue; unique per process (see [`unique_name`]).
    pub name: String,
    /// The devices the engine proves on.
    pub devices: Vec<Arc<dyn ProverBackend>>,
    /// Workers per device and synthesis threads (proofs are always verified).
    pub engine: EngineConfig,
    /// Size each key's synthesis threads for its shape instead of taking
    /// `engine.synthesis_threads`.
    pub auto_synthesis_threads: bool,
    /// A running job whose lease is not renewed for this long goes back to the queue.
    pub lease_timeout: Duration,
    /// How often leases are renewed and expired ones requeued.
    pub heartbeat: Duration,
    /// How long to wait before asking again when the queue is empty.
    pub poll: Duration,
    /// At shutdown, how long in-flight proofs may take to finish and be committed.
    pub drain_timeout: Duration,
    /// A job fails after at most this many failed attempts, whatever it asked for.
    pub max_failures: i32,
    /// What a job's key may ask of the host and devices.
    pub limits: Limits,
    /// Where `zkey:` keys are read from.
    pub key_dir: KeyDir,
}

/// The shortest `poll` a worker accepts: an idle fleet asks the database at most
/// this often per worker.
pub const MIN_POLL: Duration = Duration::from_millis(50);

/// What a worker did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkerSummary {
    /// Proofs committed.
    pub proved: u64,
    /// Attempts that failed (the job went back to the queue or failed).
    pub failed: u64,
    /// Jobs given back unstarted or unfinished at shutdown.
    pub released: u64,
    /// Proofs dropped because the lease had been lost.
    pub dropped: u64,
}

/// `prefix-host-pid-random`: a worker name no other process shares (so a restarted
/// worker never renews the leases of the one it replaced).
pub fn unique_name(prefix: Option<&str>) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "host".into());
    let random: u32 = ark_std::rand::random();
    let base = format!("{host}-{}-{random:08x}", std::process::id());
    match prefix {
        Some(p) => format!("{p}-{base}"),
        None => base,
    }
}

struct Held {
    attempt: i32,
    claimed: Instant,
}

type HeldJobs = Arc<Mutex<HashMap<i64, Held>>>;

fn lock(held: &HeldJobs) -> MutexGuard<'_, HashMap<i64, Held>> {
    held.lock().unwrap_or_else(|p| p.into_inner())
}

struct Worker {
    config: WorkerConfig,
    queue: Queue,
    metrics: Arc<Metrics>,
    held: HeldJobs,
    keys: HashMap<String, WorkerKey>,
    done_tx: mpsc::UnboundedSender<(String, JobOutcome)>,
    summary: WorkerSummary,
    room: usize,
    key_memory: KeyMemory,
}

/// Runs a worker until `shutdown` completes; returns what it did.
pub async fn run(
    config: WorkerConfig,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()>,
) -> ServiceResult<WorkerSummary> {
    if config.devices.is_empty() {
        return Err(ServiceError::Invalid(
            "a worker needs at least one device".into(),
        ));
    }
    if config.poll < MIN_POLL {
        return Err(ServiceError::Invalid(format!(
            "the poll interval {:?} is below the floor of {MIN_POLL:?}",
            config.poll
        )));
    }
    let queue = Queue::connect(&config.url, 4, Duration::from_secs(10))
        .await?
        .with_failure_cap(config.max_failures);
    queue.migrate().await?;
    let (done_tx, mut done_rx) = mpsc::unbounded_channel();
    let room = 2 * config.engine.workers_per_device * config.devices.len();
    let held: HeldJobs = Arc::default();
    let heartbeats = tokio::spawn(keep_leases(
        queue.clone(),
        config.clone(),
        Arc::clone(&held),
        Arc::clone(&metrics),
    ));
    let mut worker = Worker {
        config,
        queue,
        metrics,
        held,
        keys: HashMap::new(),
        done_tx,
        summary: WorkerSummary::default(),
        room,
        key_memory: KeyMemory::default(),
    };
    tracing::info!(worker = %worker.config.name, room, "claiming jobs");
    tokio::pin!(shutdown);
    let mut idle = false;
    loop {
        while let Ok((key, outcome)) = done_rx.try_recv() {
            worker.finish(&key, outcome).await;
        }
        if !idle && worker.held_count() < worker.room {
            match worker.claim_one().await {
                Ok(true) => continue,
                Ok(false) => idle = true,
                Err(e) => {
                    tracing::warn!(error = e.to_string(), "claiming a job failed");
                    idle = true;
                }
            }
        }
        tokio::select! {
            _ = &mut shutdown => break,
            Some((key, outcome)) = done_rx.recv() => {
                worker.finish(&key, outcome).await;
                idle = false;
            }
            _ = tokio::time::sleep(worker.config.poll), if idle => idle = false,
        }
    }
    worker.stop(&mut done_rx).await;
    heartbeats.abort();
    Ok(worker.summary)
}

/// Renews this worker's leases, requeues expired ones and samples the queue's depth,
/// every heartbeat interval, independently of the claim loop (which may be busy
/// staging a key).
async fn keep_leases(queue: Queue, config: WorkerConfig, held: HeldJobs, metrics: Arc<Metrics>) {
    let mut tick = tokio::time::interval(config.heartbeat);
    let mut oom = OomWatch::default();
    loop {
        tick.tick().await;
        let ids: Vec<i64> = lock(&held).keys().copied().collect();
        if let Err(e) = queue.heartbeat(&config.name, &ids).await {
            tracing::warn!("renewing leases failed: {e}");
        }
        oom.sample();
        let cause = oom.note(Instant::now(), config.lease_timeout, config.heartbeat);
        match queue.requeue_expired(config.lease_timeout, &cause).await {
            Ok(expired) => {
                for e in expired {
                    tracing::warn!(
                        job = e.id,
                        worker = e.worker.as_str(),
                        state = e.state.as_str(),
                        cause = cause.as_str(),
                        "lease expired"
                    );
                    metrics.requeued.with_label_values(&["lost"]).inc();
                }
            }
            Err(e) => tracing::warn!("requeueing expired leases failed: {e}"),
        }
        if let Ok(counts) = queue.counts().await {
            for state in STATES {
                metrics
                    .queue_jobs
                    .with_label_values(&[state])
                    .set(gauge_value(counts.total(state)));
            }
        }
    }
}

fn encode(value: &impl CanonicalSerialize) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::with_capacity(value.compressed_size());
    value
        .serialize_compressed(&mut bytes)
        .map_err(|e| format!("cannot serialize: {e}"))?;
    Ok(bytes)
}

/// A key this worker has staged: its engine and its circuit.
#[derive(Clone)]
struct WorkerKey {
    hot: Arc<HotKey<JobCircuit>>,
    circuit: KeyCircuit,
    /// Host memory held for the key while it is staged.
    _memory: Arc<Reservation>,
}

impl Worker {
    fn held_count(&self) -> usize {
        lock(&self.held).len()
    }

    /// Claims one job and hands it to its key's engine; false when none is queued.
    async fn claim_one(&mut self) -> ServiceResult<bool> {
        let resident: Vec<String> = self.keys.keys().cloned().collect();
        let Some(claimed) = self.queue.claim(&self.config.name, &resident).await? else {
            return Ok(false);
        };
        tracing::debug!(job = claimed.id, attempt = claimed.attempt, "claimed");
        lock(&self.held).insert(
            claimed.id,
            Held {
                attempt: claimed.attempt,
                claimed: Instant::now(),
            },
        );
        if let Err(e) = self.dispatch(&claimed).await {
            self.fail(claimed.id, claimed.attempt, &e.to_string()).await;
        }
        Ok(true)
    }

    async fn dispatch(&mut self, claimed: &Claimed) -> ServiceResult<()> {
        let key: KeyRef = claimed.key_ref.parse()?;
        let witness = Witness::decode(&claimed.witness_kind, &claimed.witness)?;
        let id = u64::try_from(claimed.id)
            .map_err(|_| ServiceError::Invalid(format!("job id {} is negative", claimed.id)))?;
        let resident = self.hot_key(&claimed.key_ref, key).await?;
        let job = witness.job(id, &resident.circuit)?;
        let hot = resident.hot;
        match hot.try_push(job) {
            Push::Queued => Ok(()),
            Push::Busy { .. } | Push::Closed(_) => {
                // Room is counted before claiming, so this is a worker bug, not the job's.
                self.release(claimed.id, "the engine had no room").await;
                Ok(())
            }
        }
    }

    /// The key's engine, staging the key first if this worker has not yet.
    async fn hot_key(&mut self, name: &str, key: KeyRef) -> ServiceResult<WorkerKey> {
        if let Some(resident) = self.keys.get(name) {
            return Ok(resident.clone());
        }
        let admitted = self.config.limits.admit(
            &key,
            &self.config.key_dir,
            &self.config.devices,
            self.config.engine.workers_per_device,
            &self.key_memory,
        )?;
        tracing::info!(key = name, "staging the key");
        let started = Instant::now();
        let key_dir = self.config.key_dir.clone();
        let auto_threads = self.config.auto_synthesis_threads;
        let (devices, engine, room) = (
            self.config.devices.clone(),
            EngineConfig {
                verify: true,
                ..self.config.engine
            },
            self.room,
        );
        let done = self.done_tx.clone();
        let label = name.to_string();
        let (hot, circuit) = tokio::task::spawn_blocking(move || {
            // A worker's key load is never called off: its ticket stays unused.
            let loaded = key.load(&key_dir, &LoadTicket::default())?;
            let engine = loaded.engine_config(&engine, auto_threads, devices.len())?;
            let hot = HotKey::start(
                devices,
                Arc::new(loaded.pk),
                engine,
                room,
                |_: u64| (),
                move |outcome| {
                    // The receiver lives as long as the worker; after it, nothing awaits.
                    let _ = done.send((label.clone(), outcome));
                },
            )?;
            ServiceResult::Ok((hot, loaded.circuit))
        })
        .await
        .map_err(|e| ServiceError::Invalid(format!("staging the key panicked: {e}")))??;
        tracing::info!(
            key = name,
            seconds = started.elapsed().as_secs_f64(),
            devices = ?hot.info().devices,
            "key staged"
        );
        let resident = WorkerKey {
            hot: Arc::new(hot),
            circuit,
            _memory: Arc::new(admitted.reservation),
        };
        self.keys.insert(name.to_string(), resident.clone());
        Ok(resident)
    }

    /// Commits a finished job (or records its failure).
    async fn finish(&mut self, key: &str, outcome: JobOutcome) {
        let id = outcome.id as i64;
        let Some(held) = lock(&self.held).remove(&id) else {
            // Released at shutdown while it was proving: no longer ours.
            return;
        };
        self.metrics.record_outcome(key, &outcome);
        self.metrics
            .job_seconds
            .with_label_values(&[key])
            .observe(held.claimed.elapsed().as_secs_f64());
        let out = match outcome.result {
            Ok(out) => out,
            Err(e) => {
                let error = format!("on {} ({}): {e}", outcome.device, self.config.name);
                self.fail_held(id, held.attempt, &error).await;
                return;
            }
        };
        let encoded = encode(&out.proof).and_then(|proof| {
            let inputs = encode(&out.public_inputs)?;
            let report = serde_json::to_string(&out.report)
                .map_err(|e| format!("cannot write the report: {e}"))?;
            Ok((proof, inputs, report))
        });
        let (proof, inputs, report) = match encoded {
            Ok(e) => e,
            Err(e) => {
                self.fail_held(id, held.attempt, &e).await;
                return;
            }
        };
        let name = &self.config.name;
        match self
            .queue
            .complete(name, id, held.attempt, &proof, &inputs, &report)
            .await
        {
            Ok(Fenced::Applied) => {
                self.summary.proved += 1;
                tracing::debug!(job = id, "proof committed");
            }
            Ok(Fenced::LeaseLost) => {
                self.summary.dropped += 1;
                self.metrics
                    .results_dropped
                    .with_label_values(&[name])
                    .inc();
                tracing::warn!(
                    job = id,
                    "lease lost before the proof was committed; dropped it"
                );
            }
            // The lease will expire and another worker will prove the job again.
            Err(e) => tracing::error!(job = id, "committing the proof failed: {e}"),
        }
    }

    /// Records a failed attempt of a job this worker holds.
    async fn fail(&mut self, id: i64, attempt: i32, error: &str) {
        lock(&self.held).remove(&id);
        self.fail_held(id, attempt, error).await;
    }

    async fn fail_held(&mut self, id: i64, attempt: i32, error: &str) {
        self.summary.failed += 1;
        // Errors carry client-supplied text: a field, which the log escapes.
        tracing::warn!(job = id, attempt, error, "attempt failed");
        match self
            .queue
            .fail_attempt(&self.config.name, id, attempt, error)
            .await
        {
            Ok(Some(state)) if state == "queued" => {
                self.metrics.requeued.with_label_values(&["failed"]).inc();
            }
            Ok(_) => {}
            Err(e) => tracing::error!(job = id, "recording the failure failed: {e}"),
        }
    }

    /// Gives a held job back to the queue.
    async fn release(&mut self, id: i64, why: &str) {
        let Some(held) = lock(&self.held).remove(&id) else {
            return;
        };
        match self
            .queue
            .release(&self.config.name, id, held.attempt, why)
            .await
        {
            Ok(Fenced::Applied) => {
                self.summary.released += 1;
                self.metrics.requeued.with_label_values(&["released"]).inc();
            }
            Ok(Fenced::LeaseLost) => {}
            Err(e) => tracing::error!(job = id, "releasing the job failed: {e}"),
        }
    }

    /// Stops claiming, gives back unstarted jobs, lets in-flight proofs finish (up to
    /// the drain timeout) and commits them, gives back the rest, frees the keys.
    async fn stop(&mut self, done_rx: &mut mpsc::UnboundedReceiver<(String, JobOutcome)>) {
        let unstarted: Vec<u64> = self
            .keys
            .values()
            .flat_map(|key| key.hot.close())
            .map(|job| job.id)
            .collect();
        tracing::info!(
            unstarted = unstarted.len(),
            in_flight = self.held_count().saturating_sub(unstarted.len()),
            "stopping"
        );
        for id in unstarted {
            self.release(id as i64, "the worker stopped before starting it")
                .await;
        }
        let deadline = tokio::time::Instant::now() + self.config.drain_timeout;
        while self.held_count() > 0 {
            match tokio::time::timeout_at(deadline, done_rx.recv()).await {
                Ok(Some((key, outcome))) => self.finish(&key, outcome).await,
                Ok(None) | Err(_) => break,
            }
        }
        let unfinished: Vec<i64> = lock(&self.held).keys().copied().collect();
        for id in unfinished {
            self.release(id, "the worker stopped before the proof finished")
                .await;
        }
        for (name, WorkerKey { hot, .. }) in self.keys.drain() {
            let freed = tokio::time::timeout(
                self.config.drain_timeout,
                tokio::task::spawn_blocking(move || hot.wait()),
            )
            .await;
            match freed {
                Ok(Ok(Some(end))) => {
                    if let Err(e) = end.release {
                        tracing::error!(
                            key = name.as_str(),
                            error = e.to_string(),
                            "freeing the key failed"
                        );
                    }
                }
                _ => tracing::warn!(key = %name, "the engine did not end in time"),
            }
        }
        tracing::info!(summary = ?self.summary, "stopped");
    }
}
