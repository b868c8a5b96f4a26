//! A proof as the bytes every comparison uses (the conformance suite, `--check`, the
//! benches): arkworks' compressed encoding, and hex.

use super::Proof;
use crate::PairingCurve;
use ark_serialize::CanonicalSerialize;

/// Compressed bytes of a proof.
pub fn proof_bytes<E: PairingCurve>(proof: &Proof<E>) -> Vec<u8> {
    let mut out = Vec::with_capacity(proof.compressed_size());
    proof
        .serialize_compressed(&mut out)
        .expect("writing to a Vec cannot fail");
    out
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use ark_ec::{AffineRepr, CurveGroup};

    use super::*;
    use crate::{G1Affine, G2Affine};

    #[test]
    fn a_proof_is_two_g1_points_and_a_g2_point_compressed() {
        let g1 = G1Affine::generator();
        let proof = Proof::<crate::Bls12_381> {
            a: g1,
            b: G2Affine::generator(),
            c: (g1 + g1).into_affine(),
        };
        let bytes = proof_bytes(&proof);
        assert_eq!(bytes.len(), 48 + 96 + 48);
        let mut a = Vec::new();
        g1.serialize_compressed(&mut a).unwrap();
        assert_eq!(bytes[..48], a[..]);
    }

    #[test]
    fn hex_is_two_lowercase_digits_a_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xab, 0xff]), "000fabff");
        assert_eq!(hex(&[]), "");
    }
}
