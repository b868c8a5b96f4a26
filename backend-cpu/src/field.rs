//! Element layout: the host uses arkworks' own types, so conversion is the identity.

use crucible_core::{ElementKind, PairingCurve};

/// Bytes of one element of `kind` of the curve `E` in host memory.
pub fn element_bytes<E: PairingCurve>(kind: ElementKind) -> u64 {
    (match kind {
        ElementKind::Scalar => size_of::<E::ScalarField>(),
        ElementKind::G1 => size_of::<E::G1Affine>(),
        ElementKind::G2 => size_of::<E::G2Affine>(),
        ElementKind::Index => size_of::<u32>(),
    }) as u64
}
