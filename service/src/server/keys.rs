//! How a key loads (admitted, read or generated, staged, its engine started, each
//! phase called off when its load is) and how it leaves (evicted).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crucible_core::engine::{EngineConfig, JobOutcome};

use super::results::{failed, job_result, max_submit_bytes, max_witness_bytes};
use super::state::{KeyCounters, Resident, Slot, State};
use crate::hot_key::HotKey;
use crate::key_ref::KeyRef;
use crate::load_ticket::LoadTicket;
use crate::proto;
use crate::{ServiceError, ServiceResult};

impl State {
    /// Admits, loads and stages a key and starts its engine (blocking).
    /// Checks `ticket` between its phases, and a key's setup inside its own: a load
    /// called off stops there.
    pub(super) fn start_key(
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
        let largest_request = max_submit_bytes(&admitted.shape);
        if largest_request > config.max_message_bytes as u64 {
            return Err(ServiceError::Limit(format!(
                "key {key_ref}: its largest witness makes a request of {} bytes, over the limit --max-message-bytes = {} bytes, so none of its proofs could be asked for",
                largest_request, config.max_message_bytes
            )));
        }
        ticket.check(key_id, "reading the key")?;
        let loaded = key_ref.load(&config.key_dir, ticket)?;
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
    pub(super) fn load_into_slot(
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
    pub(super) async fn evict(
        &self,
        key_id: &str,
        resident: Arc<Resident>,
    ) -> proto::EvictKeyResponse {
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
}
