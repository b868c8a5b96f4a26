//! The Groth16 prover, written once against [`ProverBackend`](crate::ProverBackend).
//!
//! Byte-identical to `ark_groth16::Groth16::<E>` (BLS12-381 or BN254) with the key's reduction
//! (`LibsnarkReduction`, or snarkjs' for `.zkey` keys: [`Reduction`]): given
//! the same key, circuit, `r` and `s`, the same proof, under every schedule.

mod evaluate;
mod evaluations;
pub mod items;
mod key;
mod plan;
mod proof_bytes;
mod prove;
mod prove_with_rng;
mod reduction;
pub mod schedule;
mod sparse_matrix;
mod synthesize;
mod verify;

pub use evaluate::evaluate;
pub use evaluations::Evaluations;
pub use key::{
    key_shape, key_shape_for, schedule_for, HeldMatrices, KeyOptions, ResidentBases, StagedKey,
    StagedMatrices,
};
pub use plan::{key_plan, proof_plan};
pub use proof_bytes::{hex, proof_bytes};
pub use prove::{prove, prove_evaluated, prove_synthesized, ProofOutput, ProveOptions};
pub use prove_with_rng::prove_with_rng;
pub use reduction::{snarkjs_root_of_unity, Reduction};
pub use schedule::{
    DomainVectors, Evaluation, MatrixSizes, Query, QuerySet, Schedule, ScheduleChoice,
    ScheduledPlan,
};
pub use sparse_matrix::{row_value, QapMatrices, SparseMatrix};
pub use synthesize::{synthesize, CircuitMatrices, FixedShape, Synthesize, Synthesized};
pub use verify::verify;

/// arkworks' proving key over the curve `E` (BLS12-381 unless named).
pub type ProvingKey<E = crate::Bls12_381> = ark_groth16::ProvingKey<E>;
/// arkworks' proof over the curve `E` (BLS12-381 unless named).
pub type Proof<E = crate::Bls12_381> = ark_groth16::Proof<E>;
