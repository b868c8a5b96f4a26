//! Element layout on the device. The sizes below are arkworks' own Montgomery limbs as
//! little-endian 32-bit words (`crucible_core::limbs`), so that staging is a copy and
//! not a conversion; the CUDA and WGSL backends use them. A device that wants another
//! layout (other limbs, projective bases) changes them here, with the conversions to
//! and from arkworks' types next to them.

use crucible_core::ElementKind;

/// Bytes of one Fr (4 limbs of 64 bits).
const FR_BYTES: u64 = 32;
/// Bytes of one Fq (6 limbs of 64 bits).
const FQ_BYTES: u64 = 48;

/// Bytes one element of `kind` occupies on the device: a scalar, or an affine point
/// (x, y) over Fq for G1 and over Fq2 for G2.
pub fn element_bytes(kind: ElementKind) -> u64 {
    match kind {
        ElementKind::Scalar => FR_BYTES,
        ElementKind::G1 => 2 * FQ_BYTES,
        ElementKind::G2 => 4 * FQ_BYTES,
        ElementKind::Index => 4,
    }
}
