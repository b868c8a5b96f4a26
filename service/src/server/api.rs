//! The API's handlers (see `proto/crucible/v1/prover.proto`): each identifies its
//! caller, checks what it may do, and hands the work to the daemon's state.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tonic::{Request, Response, Status};

use super::results::{compressed, status_of};
use super::state::{Slot, State};
use super::ServeConfig;
use crate::admission::KeyMemory;
use crate::job_table::JobTable;
use crate::key_ref::KeyRef;
use crate::load_ticket::LoadTicket;
use crate::metrics::Metrics;
use crate::proto::prover_server::Prover;
use crate::proto::{self, JobResult, JobState};

/// The gRPC service (see `proto/crucible/v1/prover.proto`).
#[derive(Clone)]
pub struct ProverService {
    pub(super) state: Arc<State>,
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
