//! The arkworks reference: ark-groth16's own prover, for `--check` and the overhead
//! baseline bench, and the compressed proof bytes they are compared by.

use crucible_core::ark_relations::gr1cs::ConstraintSynthesizer;
pub use crucible_core::groth16::hex;
use crucible_core::groth16::{Proof, ProvingKey};
use crucible_core::{PairingCurve, Result};

/// `ark_groth16::Groth16::<E>::create_proof_with_reduction` (the `LibsnarkReduction`,
/// as crucible's pipeline) for `circuit` with `r` and `s`.
pub fn ark_groth16_prove<E: PairingCurve, C: ConstraintSynthesizer<E::ScalarField>>(
    pk: &ProvingKey<E>,
    circuit: C,
    r: E::ScalarField,
    s: E::ScalarField,
) -> Result<Proof<E>> {
    Ok(ark_groth16::Groth16::<E>::create_proof_with_reduction(
        circuit, pk, r, s,
    )?)
}

/// The proof's compressed arkworks serialization ([`crucible_core::groth16::proof_bytes`]),
/// as a `Result` for callers that chain it after [`ark_groth16_prove`].
pub fn proof_bytes<E: PairingCurve>(proof: &Proof<E>) -> Result<Vec<u8>> {
    Ok(crucible_core::groth16::proof_bytes(proof))
}
