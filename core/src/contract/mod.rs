//! The contract between core and every backend: the trait, the memory it allocates
//! under (plans, budgets, leases, pinned host memory), the sizes a proof is planned
//! from, the errors, the cost model, and the registry that finds backends at run time.
//! Everything here is re-exported at the crate root.

pub(crate) mod backend;
pub(crate) mod budget;
pub(crate) mod cost;
pub mod curve;
pub(crate) mod domain;
pub(crate) mod error;
pub mod group;
pub(crate) mod lease;
pub(crate) mod pairing_curve;
pub(crate) mod pinned;
pub(crate) mod plan;
pub mod priority;
pub mod registry;
pub(crate) mod shape;
