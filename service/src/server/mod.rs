//! `crucible serve`: the gRPC daemon. Keys are staged once on every device of the
//! backend and stay resident, each with one long engine run fed by a bounded queue;
//! `Submit` answers "busy" instead of growing that queue without bound; every proof
//! is verified by the engine before it is returned.
//!
//! By concern: [`ServeConfig`] (what the operator sets), the daemon's state (its key
//! slots and job table) with how keys load and leave and how jobs enter and end,
//! the API's handlers ([`ProverService`]) and the transport ([`serve`]: TCP or TLS
//! connections, drained at shutdown).

// tonic's handlers return `Status` by value; the helpers they call do the same
// rather than box it only for the handler to unbox it.
#![allow(clippy::result_large_err)]

mod api;
mod config;
mod jobs;
mod keys;
mod results;
mod state;
mod transport;

pub use api::ProverService;
pub use config::{ConnectionPolicy, ServeConfig};
pub use transport::serve;
