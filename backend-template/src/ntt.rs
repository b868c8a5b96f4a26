//! NTTs over a domain, and the pointwise ops of the quotient (the scalar-vector work of
//! a proof; backend-cuda gives the pointwise ops their own file).

use crucible_core::{Domain, Fr, Lease, MemoryPlan, NttKind, Result, ScalarBuf, ScratchNeed};

use crate::error::not_implemented;

const FILE: &str = "ntt.rs";

/// Scratch items (exact bytes) of the NTTs in `need`: twiddle tables and anything else
/// the kernels allocate. None yet.
pub fn scratch_plan(_need: &ScratchNeed, _plan: &mut MemoryPlan) {}

/// In-place NTT of `buf` over `domain`, natural order in and out.
pub fn ntt(_lease: &mut Lease, _buf: ScalarBuf, _domain: &Domain, _kind: NttKind) -> Result<()> {
    not_implemented(
        "ntt",
        FILE,
        "transform in place on the device with the domain's omega, coset generator and 1/n \
         (all four kinds, natural order in and out, as ark-poly)",
    )
}

/// `dst[i] *= rhs[i]`.
pub fn mul_assign(_lease: &mut Lease, _dst: ScalarBuf, _rhs: ScalarBuf) -> Result<()> {
    not_implemented(
        "mul_assign",
        FILE,
        "multiply the two buffers elementwise into `dst` (Montgomery products)",
    )
}

/// `dst[i] = (dst[i] - rhs[i]) * k`.
pub fn sub_mul_assign(_lease: &mut Lease, _dst: ScalarBuf, _rhs: ScalarBuf, _k: Fr) -> Result<()> {
    not_implemented(
        "sub_mul_assign",
        FILE,
        "subtract `rhs` from `dst` and scale by `k`, elementwise (the quotient's step)",
    )
}
