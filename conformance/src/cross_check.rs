//! The cross-check for any circuit and key: each backend's proof, byte for byte,
//! against ark-groth16's with the matching reduction, for the same `r` and `s`, and the
//! proof checked by ark-groth16's verifier.

use crucible_core::PairingCurve;
use std::sync::Arc;

use ark_ff::UniformRand;
use ark_groth16::r1cs_to_qap::LibsnarkReduction;
use ark_relations::gr1cs::ConstraintSynthesizer;
use ark_std::rand::RngCore;
use crucible_core::groth16::{
    hex, proof_bytes, prove_synthesized, synthesize, Evaluation, KeyOptions, Proof, ProveOptions,
    ProvingKey, QapMatrices, Reduction, StagedKey, Synthesized,
};
use crucible_core::ProverBackend;

use crate::circom_reduction::CircomReduction;
use crate::CaseError;

/// ark-groth16's proof of `synthesized` with `pk`, `r`, `s` and the reduction the key
/// was made for (`LibsnarkReduction`, or [`CircomReduction`] for snarkjs keys).
pub fn reference_proof<E: PairingCurve>(
    pk: &ProvingKey<E>,
    synthesized: &Synthesized<E::ScalarField>,
    reduction: Reduction,
    r: E::ScalarField,
    s: E::ScalarField,
) -> Result<Proof<E>, String> {
    // ark-groth16 takes the matrices by value in a slice: one copy for the reference.
    let matrices = [
        (*synthesized.a).clone(),
        (*synthesized.b).clone(),
        (*synthesized.c).clone(),
    ];
    let shape = &synthesized.shape;
    let (inputs, constraints, z) = (
        shape.num_instance,
        shape.num_constraints,
        &synthesized.assignment,
    );
    match reduction {
        Reduction::Libsnark => {
            ark_groth16::Groth16::<E, LibsnarkReduction>::create_proof_with_reduction_and_matrices(
                pk,
                r,
                s,
                &matrices,
                inputs,
                constraints,
                z,
            )
        }
        Reduction::Circom => {
            ark_groth16::Groth16::<E, CircomReduction>::create_proof_with_reduction_and_matrices(
                pk,
                r,
                s,
                &matrices,
                inputs,
                constraints,
                z,
            )
        }
    }
    .map_err(|e| format!("ark-groth16 failed: {e}"))
}

/// One backend's proof in a [`CrossCheck`].
#[derive(Clone, Debug)]
pub struct BackendProof<E: PairingCurve = crucible_core::Bls12_381> {
    /// The backend's label (`cuda:0`).
    pub backend: String,
    /// The proof, or why the backend could not make it.
    pub proof: Result<Proof<E>, String>,
}

/// The proofs a cross-check compared.
#[derive(Clone, Debug)]
pub struct CrossCheck<E: PairingCurve = crucible_core::Bls12_381> {
    /// ark-groth16's proof.
    pub reference: Result<Proof<E>, String>,
    /// Each backend's proof, in the order given.
    pub backends: Vec<BackendProof<E>>,
}

impl<E: PairingCurve> CrossCheck<E> {
    /// One line per disagreement (a failed proof, or bytes that differ from the
    /// reference); empty when every proof is byte-identical to ark-groth16's.
    pub fn mismatches(&self) -> Vec<String> {
        let want = match &self.reference {
            Ok(p) => proof_bytes(p),
            Err(e) => return vec![e.clone()],
        };
        self.backends
            .iter()
            .filter_map(|b| match &b.proof {
                Err(e) => Some(format!("{} failed: {e}", b.backend)),
                Ok(p) if proof_bytes(p) != want => Some(format!(
                    "{} differs from ark-groth16: got {}, want {}",
                    b.backend,
                    hex(&proof_bytes(p)),
                    hex(&want)
                )),
                Ok(_) => None,
            })
            .collect()
    }

    /// Whether every backend's proof is byte-identical to ark-groth16's.
    pub fn identical(&self) -> bool {
        self.mismatches().is_empty()
    }
}

/// Proves `synthesized` on every backend (staging `pk` on each under `key_options`,
/// then releasing it) and with ark-groth16 with the key's reduction, all with the
/// same `r` and `s`.
pub fn cross_check<E: PairingCurve>(
    backends: &[&dyn ProverBackend<E>],
    pk: &Arc<ProvingKey<E>>,
    synthesized: &Synthesized<E::ScalarField>,
    key_options: &KeyOptions,
    r: E::ScalarField,
    s: E::ScalarField,
) -> CrossCheck<E> {
    let backends = backends
        .iter()
        .map(|backend| BackendProof {
            backend: backend.info().label(),
            proof: prove_on(*backend, pk, synthesized, key_options, r, s)
                .map_err(|e| e.to_string()),
        })
        .collect();
    CrossCheck {
        reference: reference_proof(pk, synthesized, key_options.reduction, r, s),
        backends,
    }
}

/// Whether a key is staged with its C matrix beside A and B, for the schedules that
/// evaluate on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CMatrix {
    /// A, B and C, as an arkworks circuit has them.
    Staged,
    /// A and B only, C·z taken as A·z ∘ B·z (as for a `.zkey`; the same values for a
    /// satisfied circuit).
    Omitted,
}

/// `backend`'s proof of `synthesized`: `pk` staged under `key_options` with the
/// circuit's matrices (so the chooser may evaluate on the device, and a fixed schedule
/// that evaluates there can), proved with `r` and `s` (not verified), the key
/// released.
fn prove_on<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    pk: &Arc<ProvingKey<E>>,
    synthesized: &Synthesized<E::ScalarField>,
    key_options: &KeyOptions,
    r: E::ScalarField,
    s: E::ScalarField,
) -> crucible_core::Result<Proof<E>> {
    prove_with_matrices(backend, pk, synthesized, key_options, r, s, CMatrix::Staged)
}

fn prove_with_matrices<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    pk: &Arc<ProvingKey<E>>,
    synthesized: &Synthesized<E::ScalarField>,
    key_options: &KeyOptions,
    r: E::ScalarField,
    s: E::ScalarField,
    c: CMatrix,
) -> crucible_core::Result<Proof<E>> {
    let c = match c {
        CMatrix::Staged => Some(&*synthesized.c),
        CMatrix::Omitted => None,
    };
    let qap = Arc::new(QapMatrices::new(
        synthesized.shape,
        &synthesized.a,
        &synthesized.b,
        c,
    )?);
    let synthesized = Synthesized {
        qap: Some(Arc::clone(&qap)),
        ..synthesized.clone()
    };
    let key = StagedKey::stage_for_circuit(backend, Arc::clone(pk), Some(qap), key_options)?;
    let wants_device = key_options
        .schedule
        .is_some_and(|s| s.evaluation == Evaluation::Device);
    if wants_device && !key.evaluates(&synthesized) {
        key.release()?;
        return Err(crucible_core::Error::InvalidInput(
            "the schedule evaluates on the device, but the key holds no matrices".into(),
        ));
    }
    let out = prove_synthesized(
        backend,
        &key,
        &synthesized,
        r,
        s,
        ProveOptions { verify: false },
    );
    key.release()?;
    Ok(out?.proof)
}

/// Verifies `proof` for `public_inputs` (without the constant one) with ark-groth16.
pub fn verify_with_arkworks<E: PairingCurve>(
    pk: &ProvingKey<E>,
    public_inputs: &[E::ScalarField],
    proof: &Proof<E>,
) -> Result<(), String> {
    let pvk = ark_groth16::prepare_verifying_key(&pk.vk);
    match ark_groth16::Groth16::<E>::verify_proof(&pvk, proof, public_inputs) {
        Ok(true) => Ok(()),
        Ok(false) => Err("the proof does not verify".into()),
        Err(e) => Err(format!("verifier error: {e}")),
    }
}

/// The cross-check of any circuit and arkworks key (ark-groth16's reduction) on one
/// backend with fresh `r`, `s` from `rng`: byte-identical to ark-groth16 and accepted
/// by its verifier. A backend that answers `Unsupported` gives
/// [`CaseError::Unsupported`], any other difference [`CaseError::Failed`].
pub fn compare_with_arkworks<E: PairingCurve, C: ConstraintSynthesizer<E::ScalarField>>(
    backend: &dyn ProverBackend<E>,
    pk: Arc<ProvingKey<E>>,
    circuit: C,
    rng: &mut impl RngCore,
) -> Result<(), CaseError> {
    compare_with_arkworks_under(backend, pk, circuit, rng, &KeyOptions::default())
}

/// [`compare_with_arkworks`] with the key staged under `options`: its reduction
/// (snarkjs' for a `.zkey`'s key, compared with [`CircomReduction`]), a fixed
/// schedule, a memory limit.
pub fn compare_with_arkworks_under<E: PairingCurve, C: ConstraintSynthesizer<E::ScalarField>>(
    backend: &dyn ProverBackend<E>,
    pk: Arc<ProvingKey<E>>,
    circuit: C,
    rng: &mut impl RngCore,
    options: &KeyOptions,
) -> Result<(), CaseError> {
    compare_staged(backend, pk, circuit, rng, options, CMatrix::Staged)
}

/// [`compare_with_arkworks_under`] with the key staged with or without its C matrix.
pub fn compare_staged<E: PairingCurve, C: ConstraintSynthesizer<E::ScalarField>>(
    backend: &dyn ProverBackend<E>,
    pk: Arc<ProvingKey<E>>,
    circuit: C,
    rng: &mut impl RngCore,
    options: &KeyOptions,
    c: CMatrix,
) -> Result<(), CaseError> {
    let synthesized = synthesize(circuit).map_err(|e| e.to_string())?;
    let (r, s) = (E::ScalarField::rand(rng), E::ScalarField::rand(rng));
    let want = reference_proof(&pk, &synthesized, options.reduction, r, s)?;
    let got = prove_with_matrices(backend, &pk, &synthesized, options, r, s, c)?;
    let (got_bytes, want_bytes) = (proof_bytes(&got), proof_bytes(&want));
    if got_bytes != want_bytes {
        return Err(fail!(
            "proof bytes differ from ark-groth16 (r = {r}, s = {s}): got {}, want {}",
            hex(&got_bytes),
            hex(&want_bytes)
        ));
    }
    let public = &synthesized.assignment[1..synthesized.shape.num_instance];
    verify_with_arkworks(&pk, public, &got).map_err(|e| fail!("identical to ark-groth16, but {e}"))
}
