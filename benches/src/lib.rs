//! crucible-benches: the one implementation of "time a backend operation", behind
//! `crucible bench`.
//!
//! A [`Workload`] allocates its leases and stages what stays resident once, then each
//! [`Workload::run`] draws fresh random full-width inputs (untimed), stages them, runs
//! the operation and reads the result back, timing both the device-resident part
//! (launch to `synchronize()`) and the whole round trip including host transfers.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod inputs;
mod op;
pub mod reference;
mod stats;
mod workload;

pub use inputs::{mixed_scalars, random_bases, random_scalars, HostMemory};
pub use op::{prove_shape, Op, PROVE_INPUTS};
pub use stats::{measure, Measurement, Stats};
pub use workload::{op_plans, total_bytes, workload_plans, ProveTask, RunTimes, Task, Workload};
