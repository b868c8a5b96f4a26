//! Whole proofs on domain boundaries, byte for byte against ark-groth16.

use std::sync::Arc;

use ark_ff::UniformRand;
use ark_serialize::CanonicalSerialize;
use ark_std::rand::rngs::StdRng;
use crucible_core::circuit::BenchCircuit;
use crucible_core::groth16::{prove, KeyOptions, Proof, ProveOptions, ProvingKey, StagedKey};
use crucible_core::key_file::generate_key;
use crucible_core::{Bls12_381, Fr, ProverBackend};

use crate::suite::Runner;

/// Compressed bytes of a proof.
pub fn proof_bytes(proof: &Proof) -> Vec<u8> {
    let mut out = Vec::new();
    proof
        .serialize_compressed(&mut out)
        .expect("writing to a Vec cannot fail");
    out
}

/// Proves `circuit` on `backend` and with ark-groth16 for the same `r`, `s`; compares
/// compressed bytes and verifies with ark-groth16's verifier.
pub fn compare_with_arkworks(
    backend: &dyn ProverBackend,
    pk: Arc<ProvingKey>,
    circuit: BenchCircuit,
    rng: &mut StdRng,
) -> Result<(), String> {
    compare_with_arkworks_under(backend, pk, circuit, rng, &KeyOptions::default())
}

/// [`compare_with_arkworks`] with the key staged under `options` (a fixed schedule, a
/// memory limit).
pub fn compare_with_arkworks_under(
    backend: &dyn ProverBackend,
    pk: Arc<ProvingKey>,
    circuit: BenchCircuit,
    rng: &mut StdRng,
    options: &KeyOptions,
) -> Result<(), String> {
    let (r, s) = (Fr::rand(rng), Fr::rand(rng));
    let want = ark_groth16::Groth16::<Bls12_381>::create_proof_with_reduction(circuit, &pk, r, s)
        .map_err(|e| format!("ark-groth16 failed: {e}"))?;
    let key = StagedKey::stage_with(backend, pk.clone(), options).map_err(|e| e.to_string())?;
    let out = prove(backend, &key, circuit, r, s, ProveOptions { verify: false });
    key.release().map_err(|e| e.to_string())?;
    let out = out.map_err(|e| e.to_string())?;
    let (got_bytes, want_bytes) = (proof_bytes(&out.proof), proof_bytes(&want));
    if got_bytes != want_bytes {
        return Err(format!(
            "proof bytes differ from ark-groth16 (r = {r}, s = {s}): got {}, want {}",
            hex(&got_bytes),
            hex(&want_bytes)
        ));
    }
    let pvk = ark_groth16::prepare_verifying_key(&pk.vk);
    match ark_groth16::Groth16::<Bls12_381>::verify_proof(
        &pvk,
        &out.proof,
        &circuit.public_inputs(),
    ) {
        Ok(true) => Ok(()),
        Ok(false) => Err("identical to ark-groth16 but does not verify".into()),
        Err(e) => Err(format!("verifier error: {e}")),
    }
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Circuits whose constraints + inputs + 1 land on 2^k − 1, 2^k and 2^k + 1, with 0, 1
/// and several public inputs.
pub fn run(r: &mut Runner<'_>) {
    let backend = r.backend;
    let k = r.config.proof_log_size;
    for inputs in [0usize, 1, 5] {
        for delta in [-1i64, 0, 1] {
            let total = (1i64 << k) + delta;
            let constraints = (total - inputs as i64 - 1).max(1) as usize;
            let name = format!("proof/constraints={constraints}/inputs={inputs}/2^{k}{delta:+}");
            r.case(&name, |rng| {
                let seed = ark_std::rand::Rng::gen::<u64>(rng);
                let pk = generate_key(constraints, inputs, seed).map_err(|e| e.to_string())?;
                let circuit = BenchCircuit {
                    constraints,
                    inputs,
                    seed: seed.wrapping_add(1),
                };
                compare_with_arkworks(backend, Arc::new(pk), circuit, rng)
            });
        }
    }
}
