//! Schedules: how one proof uses the device memory it is given.
//!
//! A schedule says which of the key's queries stay resident on the device (staged
//! once, shared by every proof there) and which stream from the host copy in chunks
//! through two chunk buffers per proof, and whether the domain vectors are all
//! resident or sequenced through two domain-sized buffers, and whether A·z, B·z and
//! C·z are evaluated on the host or on the device from matrices staged with the key
//! ([`Evaluation`]). Every schedule is an exact pair of
//! [`MemoryPlan`](crate::MemoryPlan)s; the chooser takes the fastest one whose key and
//! `workers` proofs fit the budget, by the backend's [`CostModel`](crate::CostModel).
//!
//! One file a concern: the queries ([`Query`], [`QuerySet`]), the schedule itself
//! ([`Schedule`]), the matrices' sizes ([`MatrixSizes`]), the byte plans
//! ([`key_plan_for`], [`proof_plan_for`]), the predicted time ([`predict`]), a
//! schedule with its plans ([`ScheduledPlan`]) and the chooser ([`choose`]).

mod byte_plans;
mod chooser;
#[cfg(test)]
mod fixtures;
mod layout;
mod matrix_sizes;
mod prediction;
mod query;
mod scheduled_plan;

pub use byte_plans::{chunk_lens, key_plan_for, proof_plan_for};
pub use chooser::{choose, describe, frontier, ScheduleChoice, MIN_CHUNK, MIN_MATRIX_CHUNK};
pub use layout::{DomainVectors, Evaluation, Schedule};
pub use matrix_sizes::MatrixSizes;
pub use prediction::{predict, Prediction};
pub use query::{Query, QuerySet};
pub use scheduled_plan::ScheduledPlan;
