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

mod backend;
mod budget;
mod busy_clock;
mod byte_size;
pub mod cache_dir;
mod cost;
pub mod curve;
mod domain;
pub mod engine;
mod error;
pub mod fault;
pub mod fixtures;
pub mod groth16;
pub mod group;
pub mod hash;
pub mod host;
pub mod host_stages;
pub mod key_file;
mod lease;
pub mod limbs;
pub mod ntt_tiles;
mod pinned;
mod plan;
pub mod priority;
pub mod registry;
pub mod report;
pub mod run_seed;
mod scalar_mix;
mod shape;
pub mod streamed_msm;
pub mod synthesis_threads;
pub mod tuning_file;
mod windows;

pub use backend::{
    check_front, check_padded, check_read_len, check_span, check_sparse_product, plain_bytes,
    BackendInfo, BufferUse, DeviceMarker, DeviceMemory, ElementKind, G1Buf, G2Buf, IndexBuf,
    MsmSpan, NttKind, ProverBackend, ScalarBuf, ScratchNeed, SparseMatrixBufs,
};
pub use budget::{BudgetPermit, BudgetStats, DeviceBudget, MAX_DEFERRED_ERRORS};
pub use byte_size::parse_byte_size;
pub use cost::{CostModel, MsmScaling};
pub use domain::{Domain, MAX_LOG_SIZE};
pub use error::{panic_message, Error, Phase, PhaseExt, Result};
pub use lease::{BufferId, DeviceAllocation, DeviceSync, HostSync, Lease, LeaseUsage};
pub use pinned::{HostPin, PinnedScalars};
pub use plan::{human_bytes, MemoryPlan, PlanItem, PlanKey};
pub use scalar_mix::ScalarMix;
pub use shape::ProofShape;
pub use windows::combine_windows;

/// The pairing-friendly curve crucible proves over.
pub use ark_bls12_381::Bls12_381;
/// Base field of BLS12-381.
pub use ark_bls12_381::Fq;
/// Scalar field of BLS12-381.
pub use ark_bls12_381::Fr;
/// G1 and G2 points, affine and projective (Jacobian).
pub use ark_bls12_381::{G1Affine, G1Projective, G2Affine, G2Projective};
/// Re-exported so callers name the same arkworks version crucible uses.
pub use {
    ark_bls12_381, ark_ec, ark_ff, ark_groth16, ark_poly, ark_relations, ark_serialize, ark_std,
};
