//! Planning written once for every GPU backend: NTT tile plans, MSM window
//! combination on the host, the scalar mix an MSM's cost depends on, MSMs streamed
//! over host-resident bases, and field elements as 32-bit limbs. Re-exported at the
//! crate root.

pub mod limbs;
pub mod ntt_tiles;
pub(crate) mod scalar_mix;
pub mod streamed_msm;
pub(crate) mod windows;
