//! Multi-scalar multiplication over G1 and G2 on device-resident bases and scalars.

use crucible_core::{
    G1Buf, G1Projective, G2Buf, G2Projective, Lease, MemoryPlan, MsmSpan, Result, ScratchNeed,
};

use crate::error::not_implemented;

const FILE: &str = "msm.rs";

/// Scratch items (exact bytes) of the MSMs in `need`: buckets, sorted digits and the
/// like, sized for the largest MSM of each group. None yet.
pub fn scratch_plan(_need: &ScratchNeed, _plan: &mut MemoryPlan) {}

/// `Σ scalars[i]·bases[i]` over G1, scratch from `work`.
pub fn msm_g1(_work: &mut Lease, _bases: &Lease, _span: MsmSpan<G1Buf>) -> Result<G1Projective> {
    not_implemented(
        "msm_g1",
        FILE,
        "check the span (`crucible_core::check_span`), sum the windows on the device, and \
         combine them on the host (`crucible_core::combine_windows`)",
    )
}

/// `Σ scalars[i]·bases[i]` over G2, scratch from `work`.
pub fn msm_g2(_work: &mut Lease, _bases: &Lease, _span: MsmSpan<G2Buf>) -> Result<G2Projective> {
    not_implemented(
        "msm_g2",
        FILE,
        "as msm_g1, over Fq2 (the same kernels, another field, as backend-cuda's)",
    )
}
