//! `crucible serve`: the gRPC daemon. Keys are staged once on every device of the
//! backend and stay resident, each with one long engine run fed by a bounded queue;
//! `Submit` answers "busy" instead of growing that queue without bound; every proof
//! is verified by the engine before it is returned.

// tonic's handlers return `Status` by value; the helpers they call do the same
// rather than box it only for the handler to unbox it.
#![allow(clippy::result_large_err)]

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use ark_serialize::CanonicalSerialize;
use ark_std::rand::rngs::OsRng;
use ark_std::rand::RngCore;
use crucible_core::engine::{EngineConfig, JobOutcome};
use crucible_core::{Error, ProofShape, ProverBackend};
use tokio::net::TcpListener;
use tokio_stream::Stream;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};

use crate::admission::{KeyMemory, Limits, Reservation};
use crate::auth::Auth;
use crate::feed::Push;
use crate::hot_key::HotKey;
use crate::job_circuit::JobCircuit;
use crate::job_table::{has_ended, JobTable};
use crate::key_circuit::KeyCircuit;
use crate::key_dir::KeyDir;
use crate::key_ref::KeyRef;
use crate::load_ticket::LoadTicket;
use crate::metrics::{gauge_value, Metrics};
use crate::proto::prover_server::{Prover, ProverServer};
use crate::proto::{self, JobResult, JobState};
use crate::tls::ServerTls;
use crate::tls_handshakes::TlsHandshakes;
use crate::witness::Witness;
use crate::{metrics_http, ServiceError, ServiceResult};

/// How the server runs.
#[derive(Clone)]
pub struct ServeConfig {
    /// The backend's name, as reported by `Status`.
    pub backend: String,
    /// Its devices: every key is staged on each.
    pub devices: Vec<Arc<dyn ProverBackend>>,
    /// Workers per device and synthesis threads of each key's engine (proofs are
    /// always verified).
    pub engine: EngineConfig,
    /// Size each key's synthesis threads for its shape instead of taking
    /// `engine.synthesis_threads`.
    pub auto_synthesis_threads: bool,
    /// The largest request accepted, in bytes (a `.wtns` of 2^20 wires is 32 MiB);
    /// a witness is further held to its key's size.
    pub max_message_bytes: usize,
    /// Bytes of witnesses all queued and in-flight jobs may hold together; `Submit`
    /// answers `RESOURCE_EXHAUSTED` beyond.
    pub max_queued_witness_bytes: u64,
    /// What a key may ask of the host and devices.
    pub limits: Limits,
    /// Where `zkey:` keys are read from.
    pub key_dir: KeyDir,
    /// Who may call what.
    pub auth: Auth,
    /// TLS (mutual with a client CA); plain text when `None`, which the front end
    /// allows only on a loopback address.
    pub tls: Option<ServerTls>,
    /// The most jobs one key holds, queued or in flight; `Submit` answers busy beyond.
    pub queue_capacity: usize,
    /// Ended jobs whose results stay available to `Await`.
    pub retain_results: usize,
    /// At shutdown, how long open calls and in-flight proofs may take before the
    /// daemon closes every connection and exits.
    pub drain_timeout: Duration,
}

#[derive(Default)]
struct KeyCounters {
    proofs: AtomicU64,
    failures: AtomicU64,
    cancelled: AtomicU64,
}

struct Resident {
    circuit: KeyCircuit,
    /// The largest witness a job of this key may send, in bytes.
    max_witness_bytes: u64,
    /// Host memory held for the key while it is resident.
    _memory: Reservation,
    hot: HotKey<JobCircuit>,
    counters: Arc<KeyCounters>,
}

enum Slot {
    Loading(LoadTicket),
    Resident(Arc<Resident>),
}

struct State {
    config: ServeConfig,
    keys: Mutex<HashMap<String, Slot>>,
    jobs: Arc<JobTable>,
    metrics: Arc<Metrics>,
    key_memory: KeyMemory,
}

/// The gRPC service (see `proto/crucible/v1/prover.proto`).
#[derive(Clone)]
pub struct ProverService {
    state: Arc<State>,
}

fn status_of(e: ServiceError) -> Status {
    match &e {
        ServiceError::Invalid(_) => Status::invalid_argument(e.to_string()),
        ServiceError::Limit(_) => Status::resource_exhausted(e.to_string()),
        ServiceError::Cancelled(_) => Status::cancelled(e.to_string()),
        ServiceError::Prover(p) => match p.root() {
            Error::OutOfBudget { .. } => Status::resource_exhausted(e.to_string()),
            Error::InvalidInput(_) | Error::Synthesis(_) => Status::invalid_argument(e.to_string()),
            Error::Unavailable { .. } => Status::unavailable(e.to_string()),
            _ => Status::internal(e.to_string()),
        },
        _ => Status::internal(e.to_string()),
    }
}

fn failed(error: String, phase: &str) -> JobResult {
    JobResult {
        state: JobState::Failed.into(),
        error,
        failed_phase: phase.to_string(),
        ..JobResult::default()
    }
}

fn compressed(value: &impl CanonicalSerialize) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::with_capacity(value.compressed_size());
    value
        .serialize_compressed(&mut bytes)
        .map_err(|e| format!("cannot serialize the proof: {e}"))?;
    Ok(bytes)
}

/// The largest witness of a key of `shape`: a `.wtns` or an assignment of its
/// variables, 32 bytes each, and their headers.
fn max_witness_bytes(shape: &ProofShape) -> u64 {
    (shape.num_variables() as u64)
        .saturating_mul(32)
        .saturating_add(1024)
}

/// A finished engine job as the API's result.
fn job_result(outcome: JobOutcome) -> JobResult {
    let out = match outcome.result {
        Ok(out) => out,
        Err(e) => {
            let phase = e.phase().map(|p| p.to_string()).unwrap_or_default();
            return failed(format!("on {}: {e}", outcome.device), &phase);
        }
    };
    let encoded = compressed(&out.proof).and_then(|proof| {
        let inputs = out
            .public_inputs
            .iter()
            .map(compressed)
            .collect::<Result<Vec<_>, _>>()?;
        Ok((proof, inputs))
    });
    let (proof, public_inputs) = match encoded {
        Ok(e) => e,
        Err(e) => return failed(e, ""),
    };
    let r = &out.report;
    JobResult {
        state: JobState::Done.into(),
        proof,
        public_inputs,
        report: Some(proto::ProofReport {
            backend: r.backend.clone(),
            device: r.device.clone(),
            log_domain: r.shape.log_domain,
            phases: r
                .times
                .named()
                .iter()
                .map(|(phase, time)| proto::PhaseTime {
                    phase: phase.to_string(),
                    ms: time.as_secs_f64() * 1e3,
                })
                .collect(),
            bytes_planned: r.bytes_planned,
            peak_bytes: r.peak_bytes,
            verified: r.verified,
        }),
        ..JobResult::default()
    }
}

impl State {
    fn keys(&self) -> MutexGuard<'_, HashMap<String, Slot>> {
        self.keys.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn resident(&self, key_id: &str) -> Result<Arc<Resident>, Status> {
        match self.keys().get(key_id) {
            Some(Slot::Resident(r)) => Ok(Arc::clone(r)),
            Some(Slot::Loading(_)) => Err(Status::failed_precondition(format!(
                "key `{key_id}` is still loading"
            ))),
            None => Err(Status::not_found(format!("no key `{key_id}` is loaded"))),
        }
    }

    /// Admits, loads and stages a key and starts its engine (blocking).
    /// Checks `ticket` between its phases: a load called off stops at the next one.
    fn start_key(
        &self,
        key_id: &str,
        key_ref: KeyRef,
        ticket: &LoadTicket,
    ) -> ServiceResult<Resident> {
        let config = &self.config;
        let admitted = config.limits.admit(
            &key_ref,
            &config.key_dir,
            &config.devices,
            config.engine.workers_per_device,
            &self.key_memory,
        )?;
        ticket.check(key_id, "reading the key")?;
        let loaded = key_ref.load(&config.key_dir)?;
        ticket.check(key_id, "staging it on the devices")?;
        let engine = loaded.engine_config(
            &EngineConfig {
                verify: true,
                ..self.config.engine
            },
            self.config.auto_synthesis_threads,
            self.config.devices.len(),
        )?;
        let pk = Arc::new(loaded.pk);
        let counters = Arc::new(KeyCounters::default());
        let on_take = {
            let jobs = Arc::clone(&self.jobs);
            move |id| jobs.set_proving(id)
        };
        let on_done = {
            let (jobs, metrics, counters) = (
                Arc::clone(&self.jobs),
                Arc::clone(&self.metrics),
                Arc::clone(&counters),
            );
            let key_id = key_id.to_string();
            move |outcome: JobOutcome| {
                metrics.record_outcome(&key_id, &outcome);
                let counter = match &outcome.result {
                    Ok(_) => &counters.proofs,
                    Err(_) => &counters.failures,
                };
                counter.fetch_add(1, Ordering::SeqCst);
                let id = outcome.id;
                if let Some(seconds) = jobs.finish(id, job_result(outcome)) {
                    metrics
                        .job_seconds
                        .with_label_values(&[key_id.as_str()])
                        .observe(seconds);
                }
            }
        };
        let hot = HotKey::start(
            self.config.devices.clone(),
            pk,
            engine,
            self.config.queue_capacity,
            on_take,
            on_done,
        )?;
        Ok(Resident {
            circuit: loaded.circuit,
            max_witness_bytes: max_witness_bytes(&admitted.shape),
            _memory: admitted.reservation,
            hot,
            counters,
        })
    }

    /// Loads `key_id` (blocking) and fills its slot: with the resident key, or, if
    /// the load failed or was called off, by removing the slot (a key staged before
    /// its load was called off is freed on every device first).
    fn load_into_slot(
        &self,
        key_id: &str,
        key_ref: KeyRef,
        ticket: &LoadTicket,
    ) -> ServiceResult<Arc<Resident>> {
        let loaded = self.start_key(key_id, key_ref, ticket).map(Arc::new);
        // Under the lock, so an eviction sees either the loading slot (and calls the
        // load off, which this check then sees) or the resident key.
        let mut keys = self.keys();
        let error = match (loaded, ticket.check(key_id, "serving it")) {
            (Ok(resident), Ok(())) => {
                keys.insert(key_id.to_string(), Slot::Resident(Arc::clone(&resident)));
                return Ok(resident);
            }
            (Err(e), _) => {
                keys.remove(key_id);
                e
            }
            (Ok(resident), Err(cancelled)) => {
                keys.remove(key_id);
                drop(keys);
                resident.hot.close();
                if let Some(Err(e)) = resident.hot.wait().map(|end| end.release) {
                    tracing::error!(
                        key = key_id,
                        "freeing a key whose load was called off failed: {e}"
                    );
                }
                cancelled
            }
        };
        tracing::warn!(key = key_id, error = error.to_string(), "loading failed");
        Err(error)
    }

    /// Fails the key's queued jobs, waits for its in-flight proofs and frees it.
    async fn evict(&self, key_id: &str, resident: Arc<Resident>) -> proto::EvictKeyResponse {
        let queued = resident.hot.close();
        let queued_failed = queued.len() as u64;
        for job in queued {
            let error = format!("key `{key_id}` was evicted before the job started");
            if self.jobs.finish(job.id, failed(error, "")).is_some() {
                resident.counters.failures.fetch_add(1, Ordering::SeqCst);
                self.metrics
                    .failures
                    .with_label_values(&[key_id, "evicted"])
                    .inc();
            }
        }
        let in_flight = resident.hot.depth().1 as u64;
        tracing::info!(key = key_id, queued_failed, in_flight, "evicting");
        let waiter = Arc::clone(&resident);
        let end = tokio::task::spawn_blocking(move || waiter.hot.wait())
            .await
            .ok()
            .flatten();
        match end.map(|e| e.release) {
            Some(Ok(())) => tracing::info!(key = key_id, "evicted; freed on every device"),
            Some(Err(e)) => tracing::error!(key = key_id, "freeing the key failed: {e}"),
            None => tracing::error!(key = key_id, "the engine thread could not be joined"),
        }
        // A job the engine never reported (it would have to have panicked) still ends.
        for id in self.jobs.unended_of(key_id) {
            let error = "the engine ended without an outcome for this job".to_string();
            if self.jobs.finish(id, failed(error, "")).is_some() {
                self.metrics
                    .failures
                    .with_label_values(&[key_id, "other"])
                    .inc();
            }
        }
        // Series of a key that left would otherwise linger for good.
        self.metrics.forget_key(key_id);
        proto::EvictKeyResponse {
            queued_failed,
            in_flight_finished: in_flight,
            load_called_off: false,
        }
    }

    fn residents(&self) -> Vec<(String, Arc<Resident>)> {
        let mut all: Vec<_> = self
            .keys()
            .iter()
            .filter_map(|(id, slot)| match slot {
                Slot::Resident(r) => Some((id.clone(), Arc::clone(r))),
                Slot::Loading(_) => None,
            })
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    fn refresh_metrics(&self) {
        self.metrics.observe_devices(&self.config.devices);
        for (id, r) in self.residents() {
            let (queued, in_flight) = r.hot.depth();
            self.metrics
                .queue_depth
                .with_label_values(&[id.as_str()])
                .set(gauge_value(queued));
            self.metrics
                .in_flight
                .with_label_values(&[id.as_str()])
                .set(gauge_value(in_flight));
        }
    }

    /// A fresh job id: random, so ids are not reused across restarts or daemons and
    /// cannot be guessed (63 bits, never 0).
    fn new_job_id(&self) -> u64 {
        loop {
            let id = OsRng.next_u64() >> 1;
            if id != 0 && !self.jobs.contains(id) {
                return id;
            }
        }
    }

    fn submit(
        &self,
        owner: &str,
        request: proto::SubmitRequest,
    ) -> Result<proto::SubmitResponse, Status> {
        use proto::submit_response::Outcome;
        let resident = self.resident(&request.key_id)?;
        let witness = Witness::from_proto(request.witness.as_ref()).map_err(status_of)?;
        let bytes = witness.byte_len() as u64;
        if bytes > resident.max_witness_bytes {
            return Err(Status::invalid_argument(format!(
                "the witness has {bytes} bytes, more than a witness of key `{}` can hold ({} bytes)",
                request.key_id, resident.max_witness_bytes
            )));
        }
        let id = self.new_job_id();
        let job = witness.job(id, &resident.circuit).map_err(status_of)?;
        self.jobs
            .insert(id, &request.key_id, owner, bytes)
            .map_err(|held| {
                Status::resource_exhausted(format!(
                    "queued witnesses hold {held} bytes; {bytes} more would pass the limit max_queued_witness_bytes = {}",
                    self.config.max_queued_witness_bytes
                ))
            })?;
        let outcome = match resident.hot.try_push(job) {
            Push::Queued => Outcome::JobId(id),
            Push::Busy { depth, .. } => {
                self.jobs.remove(id);
                self.metrics
                    .busy
                    .with_label_values(&[request.key_id.as_str()])
                    .inc();
                Outcome::Busy(proto::Busy {
                    depth: depth as u64,
                    capacity: resident.hot.capacity() as u64,
                })
            }
            Push::Closed(_) => {
                self.jobs.remove(id);
                return Err(Status::not_found(format!(
                    "key `{}` is being evicted",
                    request.key_id
                )));
            }
        };
        Ok(proto::SubmitResponse {
            outcome: Some(outcome),
        })
    }

    async fn wait(&self, owner: &str, job_id: u64) -> Result<JobResult, Status> {
        let mut rx = self
            .jobs
            .subscribe(job_id, owner)
            .ok_or_else(|| Status::not_found(format!("no job {job_id}")))?;
        let result = rx
            .wait_for(|r| has_ended(r.state()))
            .await
            .map(|r| r.clone())
            .map_err(|_| Status::internal(format!("job {job_id} was dropped before it ended")))?;
        Ok(result)
    }
}

impl ProverService {
    /// A service with no key loaded.
    pub fn new(config: ServeConfig, metrics: Arc<Metrics>) -> Self {
        let jobs = Arc::new(JobTable::new(
            config.retain_results,
            config.max_queued_witness_bytes,
        ));
        ProverService {
            state: Arc::new(State {
                config,
                keys: Mutex::new(HashMap::new()),
                jobs,
                metrics,
                key_memory: KeyMemory::default(),
            }),
        }
    }

    /// Evicts every key (queued jobs fail, in-flight proofs finish), as at shutdown.
    pub async fn evict_all(&self) {
        let all: Vec<_> = {
            let mut keys = self.state.keys();
            let ids: Vec<String> = keys.keys().cloned().collect();
            ids.into_iter()
                .filter_map(|id| match keys.remove(&id) {
                    Some(Slot::Resident(r)) => Some((id, r)),
                    Some(Slot::Loading(ticket)) => {
                        ticket.call_off("the daemon is shutting down");
                        keys.insert(id, Slot::Loading(ticket));
                        None
                    }
                    None => None,
                })
                .collect()
        };
        for (id, resident) in all {
            self.state.evict(&id, resident).await;
        }
    }
}

#[tonic::async_trait]
impl Prover for ProverService {
    async fn load_key(
        &self,
        request: Request<proto::LoadKeyRequest>,
    ) -> Result<Response<proto::LoadKeyResponse>, Status> {
        self.state
            .config
            .auth
            .identify(&request)?
            .require_operator("loading a key")?;
        let request = request.into_inner();
        let key_id = request.key_id;
        if key_id.is_empty()
            || key_id.len() > 128
            || !key_id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(&b))
        {
            return Err(Status::invalid_argument(
                "a key id is 1 to 128 bytes of ASCII letters, digits and . _ : -".to_string(),
            ));
        }
        let key_ref = KeyRef::from_proto(request.source.as_ref()).map_err(status_of)?;
        let ticket = LoadTicket::default();
        {
            let mut keys = self.state.keys();
            match keys.get(&key_id) {
                Some(Slot::Resident(_)) => {
                    return Err(Status::already_exists(format!(
                        "key `{key_id}` is already loaded"
                    )))
                }
                Some(Slot::Loading(_)) => {
                    return Err(Status::already_exists(format!(
                        "key `{key_id}` is loading (or its called-off load is stopping)"
                    )))
                }
                None => {}
            }
            keys.insert(key_id.clone(), Slot::Loading(ticket.clone()));
        }
        let started = Instant::now();
        tracing::info!(
            key = key_id.as_str(),
            source = key_ref.to_string(),
            "loading"
        );
        // The load runs on a blocking thread and fills the slot itself, so a client
        // that goes away (its deadline passed, it disconnected) leaves no slot behind:
        // dropping this request's future calls the load off at its next phase.
        let called_off = ticket.call_off_on_drop(
            "the client that asked for it went away (its deadline passed or it disconnected)",
        );
        let state = Arc::clone(&self.state);
        let id = key_id.clone();
        let loaded =
            tokio::task::spawn_blocking(move || state.load_into_slot(&id, key_ref, &ticket)).await;
        called_off.disarm();
        let resident = match loaded {
            Ok(Ok(resident)) => resident,
            Ok(Err(e)) => return Err(status_of(e)),
            Err(e) => {
                self.state.keys().remove(&key_id);
                return Err(Status::internal(format!("loading the key panicked: {e}")));
            }
        };
        let info = resident.hot.info().clone();
        let (constraints, public_inputs) = resident.circuit.sizes();
        let load_seconds = started.elapsed().as_secs_f64();
        tracing::info!(key = key_id.as_str(), devices = ?info.devices, load_seconds, "resident");
        let verifying_key = compressed(&info.verifying_key).map_err(Status::internal)?;
        Ok(Response::new(proto::LoadKeyResponse {
            key_id,
            constraints: constraints as u64,
            public_inputs: public_inputs as u64,
            log_domain: info.shape.log_domain,
            devices: info.devices,
            staged_bytes: info.staged_bytes,
            verifying_key,
            load_seconds,
        }))
    }

    async fn evict_key(
        &self,
        request: Request<proto::EvictKeyRequest>,
    ) -> Result<Response<proto::EvictKeyResponse>, Status> {
        self.state
            .config
            .auth
            .identify(&request)?
            .require_operator("evicting a key")?;
        let key_id = request.into_inner().key_id;
        let resident = {
            let mut keys = self.state.keys();
            match keys.remove(&key_id) {
                Some(Slot::Resident(r)) => r,
                Some(Slot::Loading(ticket)) => {
                    // The load stops at its next phase, frees what it holds and
                    // removes the slot; its caller is answered CANCELLED.
                    ticket.call_off("it was evicted while loading");
                    keys.insert(key_id.clone(), Slot::Loading(ticket));
                    tracing::info!(
                        key = key_id.as_str(),
                        "evicted while loading: the load stops at its next phase"
                    );
                    return Ok(Response::new(proto::EvictKeyResponse {
                        load_called_off: true,
                        ..Default::default()
                    }));
                }
                None => return Err(Status::not_found(format!("no key `{key_id}` is loaded"))),
            }
        };
        Ok(Response::new(self.state.evict(&key_id, resident).await))
    }

    async fn submit(
        &self,
        request: Request<proto::SubmitRequest>,
    ) -> Result<Response<proto::SubmitResponse>, Status> {
        let who = self.state.config.auth.identify(&request)?;
        self.state
            .submit(&who.name, request.into_inner())
            .map(Response::new)
    }

    async fn r#await(
        &self,
        request: Request<proto::AwaitRequest>,
    ) -> Result<Response<JobResult>, Status> {
        let who = self.state.config.auth.identify(&request)?;
        self.state
            .wait(&who.name, request.into_inner().job_id)
            .await
            .map(Response::new)
    }

    async fn prove(
        &self,
        request: Request<proto::SubmitRequest>,
    ) -> Result<Response<proto::ProveResponse>, Status> {
        use proto::prove_response::Outcome;
        use proto::submit_response::Outcome as Submitted;
        let who = self.state.config.auth.identify(&request)?;
        let submitted = self.state.submit(&who.name, request.into_inner())?;
        let outcome = match submitted.outcome {
            Some(Submitted::JobId(id)) => Outcome::Result(self.state.wait(&who.name, id).await?),
            Some(Submitted::Busy(busy)) => Outcome::Busy(busy),
            None => return Err(Status::internal("submit gave no outcome")),
        };
        Ok(Response::new(proto::ProveResponse {
            outcome: Some(outcome),
        }))
    }

    async fn cancel(
        &self,
        request: Request<proto::CancelRequest>,
    ) -> Result<Response<proto::CancelResponse>, Status> {
        let who = self.state.config.auth.identify(&request)?;
        let id = request.into_inner().job_id;
        let state = &self.state;
        let (key_id, current) = state
            .jobs
            .get(id, &who.name)
            .ok_or_else(|| Status::not_found(format!("no job {id}")))?;
        let mut cancelled = false;
        if current.state() == JobState::Queued {
            if let Ok(resident) = state.resident(&key_id) {
                if resident.hot.remove(id).is_some() {
                    let result = JobResult {
                        state: JobState::Cancelled.into(),
                        ..JobResult::default()
                    };
                    if state.jobs.finish(id, result).is_some() {
                        cancelled = true;
                        resident.counters.cancelled.fetch_add(1, Ordering::SeqCst);
                        state
                            .metrics
                            .cancelled
                            .with_label_values(&[key_id.as_str()])
                            .inc();
                    }
                }
            }
        }
        let now = state
            .jobs
            .get(id, &who.name)
            .map_or(current.state(), |(_, r)| r.state());
        Ok(Response::new(proto::CancelResponse {
            cancelled,
            state: now.into(),
        }))
    }

    async fn status(
        &self,
        request: Request<proto::StatusRequest>,
    ) -> Result<Response<proto::StatusResponse>, Status> {
        self.state.config.auth.identify(&request)?;
        let state = &self.state;
        state.refresh_metrics();
        let devices = state
            .config
            .devices
            .iter()
            .map(|b| {
                let budget = b.budget();
                proto::DeviceStatus {
                    label: b.info().label(),
                    capacity_bytes: budget.capacity(),
                    in_use_bytes: budget.in_use(),
                    high_water_bytes: budget.stats().high_water,
                }
            })
            .collect();
        let mut queued = 0;
        let mut in_flight = 0;
        let keys = state
            .residents()
            .into_iter()
            .map(|(key_id, r)| {
                let (q, f) = r.hot.depth();
                queued += q as u64;
                in_flight += f as u64;
                proto::KeyStatus {
                    key_id,
                    log_domain: r.hot.info().shape.log_domain,
                    queued: q as u64,
                    in_flight: f as u64,
                    capacity: r.hot.capacity() as u64,
                    proofs: r.counters.proofs.load(Ordering::SeqCst),
                    failures: r.counters.failures.load(Ordering::SeqCst),
                    cancelled: r.counters.cancelled.load(Ordering::SeqCst),
                }
            })
            .collect();
        Ok(Response::new(proto::StatusResponse {
            backend: state.config.backend.clone(),
            workers_per_device: state.config.engine.workers_per_device as u32,
            devices,
            keys,
            queued,
            in_flight,
        }))
    }
}

/// The server's connections until the stop signal, which closes the listener at
/// once (the server stops polling it but would keep it open through the drain), so
/// a new connection is refused instead of waiting.
struct Closing<S>(Arc<Mutex<Option<S>>>);

impl<S> Clone for Closing<S> {
    fn clone(&self) -> Self {
        Closing(Arc::clone(&self.0))
    }
}

impl<S> Closing<S> {
    fn new(incoming: S) -> Self {
        Closing(Arc::new(Mutex::new(Some(incoming))))
    }

    fn close(&self) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}

impl<S: Stream + Unpin> Stream for Closing<S> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.0.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            Some(incoming) => Pin::new(incoming).poll_next(cx),
            None => Poll::Ready(None),
        }
    }
}

/// The server on `incoming` until `shutdown`, when the listener closes (new
/// connections are refused at once) and `stopping` says so.
fn serving<S, IO, E>(
    api: ProverServer<ProverService>,
    incoming: S,
    shutdown: impl Future<Output = ()> + Send + 'static,
    stopping: tokio::sync::watch::Sender<bool>,
) -> Pin<Box<dyn Future<Output = Result<(), tonic::transport::Error>> + Send>>
where
    S: Stream<Item = Result<IO, E>> + Unpin + Send + 'static,
    IO: tokio::io::AsyncRead
        + tokio::io::AsyncWrite
        + tonic::transport::server::Connected
        + Unpin
        + Send
        + 'static,
    IO::ConnectInfo: Clone + Send + Sync + 'static,
    E: Into<Box<dyn std::error::Error + Send + Sync>> + 'static,
{
    let incoming = Closing::new(incoming);
    let listener = incoming.clone();
    let signal = async move {
        shutdown.await;
        listener.close();
        let _ = stopping.send(true);
    };
    Box::pin(
        tonic::transport::Server::builder()
            .add_service(api)
            .serve_with_incoming_shutdown(incoming, signal),
    )
}

/// Serves the API on `grpc` (and metrics on `metrics_listener`) until `shutdown`
/// completes, then evicts every key: queued jobs fail, in-flight proofs finish, every
/// device's budget is returned.
pub async fn serve(
    config: ServeConfig,
    grpc: TcpListener,
    metrics_listener: Option<TcpListener>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> ServiceResult<()> {
    let metrics = Metrics::new();
    let max_message_bytes = config.max_message_bytes;
    let service = ProverService::new(config, Arc::clone(&metrics));
    let exporter = metrics_listener.map(|listener| {
        let state = Arc::clone(&service.state);
        metrics_http::spawn(
            listener,
            Arc::clone(&metrics),
            Arc::new(move || state.refresh_metrics()),
        )
    });
    let drain = service.state.config.drain_timeout;
    let (stopping_tx, stopping) = tokio::sync::watch::channel(false);
    let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    let api = ProverServer::new(service.clone()).max_decoding_message_size(max_message_bytes);
    let tcp = TcpIncoming::from(grpc);
    // The listener closes with the signal: new connections are refused at once.
    let mut server = match &service.state.config.tls {
        Some(tls) => serving(
            api,
            TlsHandshakes::new(tcp, tls.acceptor()?, tls.handshake_timeout),
            shutdown,
            stopping_tx,
        ),
        None => serving(api, tcp, shutdown, stopping_tx),
    };
    // Open calls get the drain timeout, then the server and its connections are
    // dropped.
    let result = tokio::select! {
        result = &mut server => result,
        () = async {
            stopped(stopping).await;
            tokio::time::sleep(drain).await;
        } => {
            tracing::warn!(seconds = drain.as_secs_f64(), "drain timeout: closing the open calls");
            Ok(())
        }
    };
    // Dropping the server closes the connections still open.
    drop(server);
    tracing::info!("shutting down: evicting every key");
    if tokio::time::timeout(drain, service.evict_all())
        .await
        .is_err()
    {
        tracing::warn!("in-flight proofs did not finish within the drain timeout");
    }
    if let Some(exporter) = exporter {
        exporter.abort();
    }
    result.map_err(ServiceError::from)
}
