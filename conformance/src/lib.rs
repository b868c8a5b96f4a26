//! crucible-conformance: runs any `&dyn ProverBackend` against arkworks.
//!
//! NTTs (forward, inverse, coset, every size 2^0 … 2^k), pointwise ops, MSM on G1 and
//! G2 at edge sizes and edge scalars, whole proofs on domain boundaries compared byte
//! for byte with ark-groth16, and lease invariants. Each case yields one line; inputs
//! are fresh random values from a printed seed, so any failure can be replayed.
//!
//! The same byte-for-byte check for any circuit and key is exported for CI pipelines:
//! [`compare_with_arkworks`] (any `ConstraintSynthesizer<Fr>`) and [`cross_check`]
//! (an already synthesized circuit, several backends), with ark-groth16's
//! `LibsnarkReduction` or snarkjs' reduction ([`circom_reduction::CircomReduction`]).
//! [`json_report`] and [`junit_report`] turn a run into files CI systems read.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[macro_use]
mod cases;
pub mod circom_reduction;
mod compare;
mod config;
mod cross_check;
mod empty_query_cases;
mod evaluation_cases;
mod exact_shape_circuit;
pub mod fuzz;
mod inputs;
pub mod items;
mod lease_checks;
mod msm_cases;
mod ntt_cases;
mod proof_cases;
mod report;
mod runner;
mod schedule_cases;
mod staging_cases;
mod suite;
mod tight_budget_cases;

pub use cases::{CaseError, CaseResult, Outcome, Summary};
pub use config::Config;
pub use cross_check::{
    compare_staged, compare_with_arkworks, compare_with_arkworks_under, cross_check,
    reference_proof, verify_with_arkworks, BackendProof, CMatrix, CrossCheck,
};
pub use crucible_core::groth16::{hex, proof_bytes};
pub use crucible_core::registry::required_backends;
pub use crucible_core::run_seed::run_seed;
pub use exact_shape_circuit::ExactShapeCircuit;
pub use report::{json_report, junit_report};
pub use suite::{run, run_registered};
