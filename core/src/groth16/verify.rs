//! Checking a proof with ark-groth16's verifier.

use super::{Proof, StagedKey};
use crate::PairingCurve;
use crate::{Error, Result};

/// Verifies `proof` for `public_inputs` (without the constant one) against the key.
pub fn verify<E: PairingCurve>(
    key: &StagedKey<E>,
    public_inputs: &[E::ScalarField],
    proof: &Proof<E>,
) -> Result<()> {
    let ok =
        ark_groth16::Groth16::<E>::verify_proof(key.prepared_verifying_key(), proof, public_inputs)
            .map_err(|e| Error::InvalidInput(format!("verifier rejected its inputs: {e}")))?;
    if ok {
        Ok(())
    } else {
        Err(Error::Verification(format!(
            "proof made on {} does not verify; it was not returned",
            key.backend_label()
        )))
    }
}
