//! A proof as the bytes the suite compares: arkworks' compressed encoding, and hex.

use ark_serialize::CanonicalSerialize;
use crucible_core::groth16::Proof;

/// Compressed bytes of a proof.
pub fn proof_bytes(proof: &Proof) -> Vec<u8> {
    let mut out = Vec::new();
    proof
        .serialize_compressed(&mut out)
        .expect("writing to a Vec cannot fail");
    out
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
