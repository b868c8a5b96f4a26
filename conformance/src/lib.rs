//! crucible-conformance: runs any `&dyn ProverBackend` against arkworks.
//!
//! NTTs (forward, inverse, coset, every size 2^0 … 2^k), pointwise ops, MSM on G1 and
//! G2 at edge sizes and edge scalars, whole proofs on domain boundaries compared byte
//! for byte with ark-groth16, and lease invariants. Each case yields one line; inputs
//! are fresh random values from a printed seed, so any failure can be replayed.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod cases;
pub mod items;
mod lease_checks;
mod msm_cases;
mod ntt_cases;
mod proof_cases;
mod schedule_cases;
mod staging_cases;
mod suite;

pub use cases::{CaseResult, Outcome, Summary};
pub use proof_cases::{compare_with_arkworks, compare_with_arkworks_under, hex, proof_bytes};
pub use suite::{required_backends, run, run_registered, run_seed, Config};
