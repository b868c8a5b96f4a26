//! crucible as a service. The engine of `crucible prove`
//! ([`crucible_core::engine::Prover`]) behind two more front ends:
//!
//! - [`server`]: `crucible serve`, a gRPC daemon (API in `proto/crucible/v1/prover.proto`)
//!   that keeps proving keys staged on every device between requests, queues proofs
//!   per key with backpressure, and verifies every proof before returning it;
//! - [`worker`]: `crucible worker`, the same engine fed from a Postgres job queue
//!   ([`queue`]) shared by machines: jobs claimed with `FOR UPDATE SKIP LOCKED`,
//!   leases kept by heartbeats and requeued when a worker stops, the verified proof
//!   committed in the transaction that marks its job done.
//!
//! The daemon speaks TLS ([`tls`]) with bearer tokens or client certificates
//! ([`auth`]); the queue reaches Postgres over TLS when its URL asks (`sslmode`).
//!
//! Both export Prometheus [`metrics`] and log through `tracing` ([`logging`]).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod admission;
pub mod auth;
pub mod cgroup_memory;
pub mod client;
pub mod connection_caps;
pub mod error;
pub mod feed;
pub mod guarded_connections;
pub mod hot_key;
pub mod identity;
pub mod job_circuit;
pub mod job_table;
pub mod key_circuit;
pub mod key_dir;
pub mod key_ref;
pub mod load_ticket;
pub mod logging;
pub mod metrics;
pub mod metrics_http;
mod migrations;
pub mod oom_watch;
pub mod proto;
pub mod queue;
pub mod server;
pub mod small_file;
pub mod tls;
pub mod tls_handshakes;
pub mod witness;
pub mod worker;

pub use error::{ServiceError, ServiceResult};
