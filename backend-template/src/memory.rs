//! Device buffers, allocated only through a lease, and copies to and from the host.

use crucible_core::{
    BufferId, BufferUse, ElementKind, Fr, G1Affine, G2Affine, Lease, PlanKey, Result,
};

use crate::error::not_implemented;

const FILE: &str = "memory.rs";

/// Allocates `len` elements of `kind`, laid out for `usage`, from plan item `key`.
pub fn alloc(
    _lease: &mut Lease,
    _key: PlanKey,
    _kind: ElementKind,
    _len: usize,
    _usage: BufferUse,
) -> Result<BufferId> {
    not_implemented(
        "alloc",
        FILE,
        "allocate the device buffer inside `lease.allocate(key, bytes, || ...)`, which \
         checks the plan item first and owns the buffer until the lease frees it; \
         `bytes` is `buffer_bytes(kind, len, usage)`",
    )
}

/// Copies `src` into buffer `dst` (lengths checked by the caller).
pub fn stage_scalars(_lease: &mut Lease, _dst: BufferId, _src: &[Fr]) -> Result<()> {
    not_implemented(
        "stage_scalars",
        FILE,
        "copy the scalars' Montgomery limbs into the buffer (`lease.get_mut` gives it back)",
    )
}

/// Copies G1 bases into the front of buffer `dst`.
pub fn stage_g1(_lease: &mut Lease, _dst: BufferId, _src: &[G1Affine]) -> Result<()> {
    not_implemented(
        "stage_g1",
        FILE,
        "copy the points (x, y) into the front of the buffer (a streamed MSM restages a \
         chunk buffer with shorter last chunks), the identity in a form your MSM knows",
    )
}

/// Copies G2 bases into buffer `dst`.
pub fn stage_g2(_lease: &mut Lease, _dst: BufferId, _src: &[G2Affine]) -> Result<()> {
    not_implemented(
        "stage_g2",
        FILE,
        "copy the points (x, y) over Fq2 into the buffer, as for G1",
    )
}

/// Copies `len` scalars of buffer `src` back to the host.
pub fn read_scalars(_lease: &Lease, _src: BufferId, _len: usize) -> Result<Vec<Fr>> {
    not_implemented(
        "read_scalars",
        FILE,
        "wait for the device, then copy the buffer's words back into Fr values",
    )
}
