//! A proving key kept hot: staged on every device of a backend, with one engine run
//! that lasts as long as the key is resident, fed through a [`JobFeed`].

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crucible_core::ark_groth16::VerifyingKey;
use crucible_core::engine::{EngineConfig, EngineStats, Job, JobOutcome, Prover};
use crucible_core::groth16::{ProvingKey, Synthesize};
use crucible_core::{Bls12_381, Error, ProofShape, ProverBackend};

use crate::feed::{JobFeed, Push};
use crate::ServiceResult;

/// What is known about a staged key.
#[derive(Clone, Debug)]
pub struct KeyInfo {
    /// The sizes it was made for.
    pub shape: ProofShape,
    /// Labels of the devices it is staged on.
    pub devices: Vec<String>,
    /// Bytes its lease holds on each device (under the schedule chosen for it).
    pub staged_bytes: u64,
    /// Its verifying key.
    pub verifying_key: VerifyingKey<Bls12_381>,
}

/// How the engine run of a key ended.
#[derive(Debug)]
pub struct EngineEnd {
    /// The run's counters (`None` if the run panicked).
    pub stats: Option<EngineStats>,
    /// Freeing the key on every device.
    pub release: Result<(), Error>,
}

/// A staged key and the engine proving with it.
pub struct HotKey<C> {
    feed: Arc<JobFeed<C>>,
    engine: Mutex<Option<JoinHandle<EngineEnd>>>,
    info: KeyInfo,
}

impl<C: Synthesize + 'static> HotKey<C> {
    /// Stages `pk` on every device in `backends` (blocking) and starts the engine:
    /// at most `capacity` jobs queued or in flight; `on_take` is called with a job's
    /// id as the engine takes it, `on_done` with each job's outcome.
    pub fn start(
        backends: Vec<Arc<dyn ProverBackend>>,
        pk: Arc<ProvingKey>,
        config: EngineConfig,
        capacity: usize,
        on_take: impl FnMut(u64) + Send + 'static,
        mut on_done: impl FnMut(JobOutcome) + Send + 'static,
    ) -> ServiceResult<Self> {
        let devices = backends.iter().map(|b| b.info().label()).collect();
        let verifying_key = pk.vk.clone();
        let prover = Prover::new(backends, pk, config)?;
        let shape = *prover.shape();
        // What the key holds under the schedule chosen for it (the same on each device).
        let staged_bytes = prover
            .keys()
            .next()
            .map_or(0, |k| k.lease().plan().total_bytes());
        let feed = JobFeed::new(capacity);
        let engine = {
            let feed = Arc::clone(&feed);
            std::thread::Builder::new()
                .name("crucible-engine".into())
                .spawn(move || {
                    let jobs = feed.jobs(on_take);
                    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        prover.run(jobs, |outcome| {
                            feed.finished();
                            on_done(outcome);
                        })
                    }));
                    let stats = match run {
                        Ok(stats) => Some(stats),
                        Err(panic) => {
                            tracing::error!(
                                "the engine panicked: {}",
                                crucible_core::panic_message(&*panic)
                            );
                            None
                        }
                    };
                    EngineEnd {
                        stats,
                        release: prover.release(),
                    }
                })
                .map_err(|e| crate::ServiceError::io("cannot start the engine thread", e))?
        };
        Ok(HotKey {
            feed,
            engine: Mutex::new(Some(engine)),
            info: KeyInfo {
                shape,
                devices,
                staged_bytes,
                verifying_key,
            },
        })
    }
}

impl<C> HotKey<C> {
    /// What the key is and where it is staged.
    pub fn info(&self) -> &KeyInfo {
        &self.info
    }

    /// Queues a job unless the key is full or closing.
    pub fn try_push(&self, job: Job<C>) -> Push<C> {
        self.feed.try_push(job)
    }

    /// Takes back a job the engine has not started.
    pub fn remove(&self, id: u64) -> Option<Job<C>> {
        self.feed.remove(id)
    }

    /// Jobs queued, and jobs in flight.
    pub fn depth(&self) -> (usize, usize) {
        self.feed.depth()
    }

    /// The most jobs queued or in flight at once.
    pub fn capacity(&self) -> usize {
        self.feed.capacity()
    }

    /// Stops taking jobs: returns those not started; the engine finishes the jobs in
    /// flight, then frees the key.
    pub fn close(&self) -> Vec<Job<C>> {
        self.feed.close()
    }

    /// Waits (blocking) until the engine has ended and the key is freed; `None` if
    /// another caller already waited.
    pub fn wait(&self) -> Option<EngineEnd> {
        let handle = self
            .engine
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()?;
        Some(handle.join().unwrap_or_else(|_| EngineEnd {
            stats: None,
            release: Err(Error::InvalidInput(
                "the engine thread panicked while freeing the key".into(),
            )),
        }))
    }
}
