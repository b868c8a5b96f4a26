//! Host buffers allocated under a lease (fallibly: host OOM is an error, not an abort).

use ark_ec::AffineRepr;
use ark_ff::Zero;
use crucible_core::{
    check_front, plain_bytes, BufferId, ElementKind, Lease, PairingCurve, PlanKey, Result,
};

use crate::error::CpuError;
use crate::field::element_bytes;

/// A zero-filled vector, allocated without aborting on failure.
pub fn try_zeroed<T: Clone>(len: usize, zero: T) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|source| CpuError::Alloc {
        bytes: (len as u64).saturating_mul(size_of::<T>() as u64),
        source,
    })?;
    v.resize(len, zero);
    Ok(v)
}

/// Allocates `len` elements of `kind` of the curve `E` from plan item `item`.
pub fn alloc<E: PairingCurve>(
    lease: &mut Lease,
    item: PlanKey,
    kind: ElementKind,
    len: usize,
) -> Result<BufferId> {
    let bytes = plain_bytes(element_bytes::<E>(kind), len)?;
    match kind {
        ElementKind::Scalar => {
            lease.allocate(item, bytes, || try_zeroed(len, E::ScalarField::zero()))
        }
        ElementKind::G1 => lease.allocate(item, bytes, || try_zeroed(len, E::G1Affine::zero())),
        ElementKind::G2 => lease.allocate(item, bytes, || try_zeroed(len, E::G2Affine::zero())),
        ElementKind::Index => lease.allocate(item, bytes, || try_zeroed(len, 0u32)),
    }
}

/// Copies `src` into the front of buffer `dst` (the rest keeps its values).
pub fn copy_front<T: Copy + Send + Sync + 'static>(
    lease: &mut Lease,
    dst: BufferId,
    src: &[T],
) -> Result<()> {
    let buf = lease.get_mut::<Vec<T>>(dst)?;
    check_front("staged values", src.len(), buf.len())?;
    buf[..src.len()].copy_from_slice(src);
    Ok(())
}

/// Copies `src` into the front of buffer `dst` and zeroes the rest (the caller checked
/// that it fits: `crucible_core::check_padded`).
pub fn copy_in_padded<T: Copy + Default + Send + Sync + 'static>(
    lease: &mut Lease,
    dst: BufferId,
    src: &[T],
) -> Result<()> {
    let buf = lease.get_mut::<Vec<T>>(dst)?;
    check_front("scalars", src.len(), buf.len())?;
    let (front, back) = buf.split_at_mut(src.len());
    front.copy_from_slice(src);
    back.fill(T::default());
    Ok(())
}
