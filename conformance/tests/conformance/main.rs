//! The conformance crate's integration tests, one binary: the suite on every
//! registered backend, the engine, faults, the key cache and the public API's edges,
//! each in its file below.

mod common;
mod empty_queries;
mod engine;
mod faults;
mod host_msm;
mod key_cache;
mod registered;
mod small_sizes;
