//! crucible-core: the contract every crucible backend implements, and the Groth16
//! pipeline written once against it.
//!
//! - [`ProverBackend`]: allocate / stage / compute / release on one device;
//! - [`Lease`]: the only way device memory is allocated, sized by a [`MemoryPlan`]
//!   and paid for from a shared [`DeviceBudget`];
//! - [`Domain`] and [`ProofShape`]: sizes computed once, here;
//! - [`registry`]: backends found at run time, never a panic when one is missing;
//! - [`groth16`]: proofs byte-identical to ark-groth16's.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod contract;
pub mod engine;
pub mod fixtures;
mod gpu;
pub mod groth16;
mod util;

pub use contract::backend::{
    check_front, check_padded, check_read_len, check_span, check_sparse_product, plain_bytes,
    BackendInfo, BufferUse, DeviceMarker, DeviceMemory, ElementKind, G1Buf, G2Buf, IndexBuf,
    MsmSpan, NttKind, ProverBackend, ScalarBuf, ScratchNeed, SparseMatrixBufs,
};
pub use contract::budget::{BudgetPermit, BudgetStats, DeviceBudget, MAX_DEFERRED_ERRORS};
pub use contract::cost::{CostModel, MsmScaling};
pub use contract::domain::{Domain, MAX_LOG_SIZE};
pub use contract::error::{panic_message, Error, Phase, PhaseExt, Result};
pub use contract::lease::{BufferId, DeviceAllocation, DeviceSync, HostSync, Lease, LeaseUsage};
pub use contract::pairing_curve::PairingCurve;
pub use contract::pinned::{HostPin, PinnedScalars};
pub use contract::plan::{human_bytes, MemoryPlan, PlanItem, PlanKey};
pub use contract::shape::ProofShape;
pub use contract::{curve, group, priority, registry};
pub use engine::{fault, host, host_stages, report, synthesis_threads};
pub use gpu::scalar_mix::ScalarMix;
pub use gpu::windows::combine_windows;
pub use gpu::{limbs, ntt_tiles, streamed_msm};
pub use util::byte_size::parse_byte_size;
pub use util::{cache_dir, hash, key_file, run_seed, tuning_file};

/// BLS12-381, the default curve of every generic type (`ProverBackend` is
/// `ProverBackend<Bls12_381>`).
pub use ark_bls12_381::Bls12_381;
/// Base field of BLS12-381.
pub use ark_bls12_381::Fq;
/// Scalar field of BLS12-381.
pub use ark_bls12_381::Fr;
/// BLS12-381's G1 and G2 points, affine and projective (Jacobian).
pub use ark_bls12_381::{G1Affine, G1Projective, G2Affine, G2Projective};
/// BN254 (alt_bn128), circom's default curve.
pub use ark_bn254::Bn254;
/// Re-exported so callers name the same arkworks version crucible uses.
pub use {
    ark_bls12_381, ark_bn254, ark_ec, ark_ff, ark_groth16, ark_poly, ark_relations, ark_serialize,
    ark_std,
};
