//! The daemon's state: its keys, each loading or resident, and its job table.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard};

use tonic::Status;

use super::ServeConfig;
use crate::admission::{KeyMemory, Reservation};
use crate::hot_key::HotKey;
use crate::job_circuit::JobCircuit;
use crate::job_table::JobTable;
use crate::key_circuit::KeyCircuit;
use crate::load_ticket::LoadTicket;
use crate::metrics::{gauge_value, Metrics};

#[derive(Default)]
pub(super) struct KeyCounters {
    pub(super) proofs: AtomicU64,
    pub(super) failures: AtomicU64,
    pub(super) cancelled: AtomicU64,
}

pub(super) struct Resident {
    pub(super) circuit: KeyCircuit,
    /// The largest witness a job of this key may send, in bytes.
    pub(super) max_witness_bytes: u64,
    /// Host memory held for the key while it is resident.
    pub(super) _memory: Reservation,
    pub(super) hot: HotKey<JobCircuit>,
    pub(super) counters: Arc<KeyCounters>,
}

pub(super) enum Slot {
    Loading(LoadTicket),
    Resident(Arc<Resident>),
}

pub(super) struct State {
    pub(super) config: ServeConfig,
    pub(super) keys: Mutex<HashMap<String, Slot>>,
    pub(super) jobs: Arc<JobTable>,
    pub(super) metrics: Arc<Metrics>,
    pub(super) key_memory: KeyMemory,
}

impl State {
    pub(super) fn keys(&self) -> MutexGuard<'_, HashMap<String, Slot>> {
        self.keys.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn resident(&self, key_id: &str) -> Result<Arc<Resident>, Status> {
        match self.keys().get(key_id) {
            Some(Slot::Resident(r)) => Ok(Arc::clone(r)),
            Some(Slot::Loading(_)) => Err(Status::failed_precondition(format!(
                "key `{key_id}` is still loading"
            ))),
            None => Err(Status::not_found(format!("no key `{key_id}` is loaded"))),
        }
    }

    /// The resident keys, by id.
    pub(super) fn residents(&self) -> Vec<(String, Arc<Resident>)> {
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

    pub(super) fn refresh_metrics(&self) {
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
}
