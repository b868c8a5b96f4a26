//! The prover engine: a stream of proofs over every device of a backend, several
//! workers per device, synthesis and evaluation overlapping device work, never out of memory.
//!
//! Each device stages the proving key once, in a long-lived lease, shared by its
//! workers. Each worker acquires a proof lease from its device's budget before
//! allocating, so workers wait for memory instead of crashing. A failed proof is an
//! error naming its phase; its lease is released and the engine keeps serving.
//!
//! Every job ends with an outcome whatever panics: a backend (in any method), a
//! device's sync during a release, the circuit, or the caller's own callback. A device
//! whose work panicked, failed, or failed to release is taken out of rotation.

//!
//! Its room holds what the engine is made of: the prover itself ([`Prover`]), how
//! long a device was busy, how many synthesis threads run, what a proof costs the
//! host, the host machine's size, per-proof reports and fault injection for tests.

mod busy_clock;
pub mod fault;
pub mod host;
pub mod host_stages;
mod prover;
pub mod report;
pub mod synthesis_threads;

pub use prover::{
    proofs_that_fit, DeviceStats, EngineConfig, EngineStats, Job, JobOutcome, Prover,
    MAX_SYNTHESIS_THREADS, MAX_WORKERS_PER_DEVICE,
};
