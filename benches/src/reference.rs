//! The arkworks reference: ark-groth16's own prover, for `--check` and the overhead
//! baseline bench, and the compressed proof bytes they are compared by.

use ark_serialize::CanonicalSerialize;
use crucible_core::ark_relations::gr1cs::ConstraintSynthesizer;
use crucible_core::groth16::{Proof, ProvingKey};
use crucible_core::{Bls12_381, Error, Fr, Result};

/// `ark_groth16::Groth16::<Bls12_381>::create_proof_with_reduction` (the
/// `LibsnarkReduction`, as crucible's pipeline) for `circuit` with `r` and `s`.
pub fn ark_groth16_prove<C: ConstraintSynthesizer<Fr>>(
    pk: &ProvingKey,
    circuit: C,
    r: Fr,
    s: Fr,
) -> Result<Proof> {
    Ok(ark_groth16::Groth16::<Bls12_381>::create_proof_with_reduction(circuit, pk, r, s)?)
}

/// The proof's compressed arkworks serialization.
pub fn proof_bytes(proof: &Proof) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(proof.compressed_size());
    proof
        .serialize_compressed(&mut out)
        .map_err(|e| Error::InvalidInput(format!("cannot serialize proof: {e}")))?;
    Ok(out)
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
