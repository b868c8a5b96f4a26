//! Element layout: the host uses arkworks' own types, so conversion is the identity.

use crucible_core::{ElementKind, Fr, G1Affine, G2Affine};

/// Bytes of one element of `kind` in host memory.
pub fn element_bytes(kind: ElementKind) -> u64 {
    (match kind {
        ElementKind::Scalar => size_of::<Fr>(),
        ElementKind::G1 => size_of::<G1Affine>(),
        ElementKind::G2 => size_of::<G2Affine>(),
        ElementKind::Index => size_of::<u32>(),
    }) as u64
}
