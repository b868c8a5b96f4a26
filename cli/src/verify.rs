//! `crucible verify`: a proof against a verifying key and public signals, each in
//! snarkjs' JSON (`*.json`) or arkworks' binary form, on the curve the key names
//! (BLS12-381 or BN254); exit 1 when it does not verify.

use std::path::PathBuf;
use std::process::ExitCode;

use ark_groth16::VerifyingKey;
use clap::Args;
use crucible_core::{Bls12_381, Bn254};
use crucible_files::artifacts::{read_proof, read_public};
use crucible_files::{CurveVerifyingKey, JsonCurve};

use crate::error::{CliError, Exit};

/// Arguments of `crucible verify`.
#[derive(Args)]
pub struct VerifyArgs {
    /// Verifying key: `verification_key.json` (snarkjs) or arkworks binary.
    #[arg(long)]
    vk: PathBuf,
    /// Proof: `proof.json` (snarkjs) or arkworks binary.
    #[arg(long)]
    proof: PathBuf,
    /// Public signals: `public.json` (snarkjs) or arkworks binary `Vec<Fr>`.
    #[arg(long)]
    public: PathBuf,
}

/// Prints `valid` (exit 0) or `INVALID` with the reason (exit 1). The key names the
/// curve; a proof or public signals of the other curve are refused naming both.
pub fn run(args: &VerifyArgs) -> Result<ExitCode, CliError> {
    match CurveVerifyingKey::read(&args.vk)? {
        CurveVerifyingKey::Bls12_381(vk) => verify_on::<Bls12_381>(args, &vk),
        CurveVerifyingKey::Bn254(vk) => verify_on::<Bn254>(args, &vk),
    }
}

/// [`run`] on the key's curve `E`.
fn verify_on<E: JsonCurve>(args: &VerifyArgs, vk: &VerifyingKey<E>) -> Result<ExitCode, CliError> {
    let proof = read_proof::<E>(&args.proof)?;
    let public = read_public::<E>(&args.public)?;
    let expected = vk.gamma_abc_g1.len() - 1;
    if public.len() != expected {
        println!(
            "INVALID: {} has {} public signals, the key {} expects {expected}",
            args.public.display(),
            public.len(),
            args.vk.display()
        );
        return Ok(Exit::Failed.code());
    }
    let pvk = ark_groth16::prepare_verifying_key(vk);
    match ark_groth16::Groth16::<E>::verify_proof(&pvk, &proof, &public) {
        Ok(true) => {
            println!(
                "valid: {} verifies for {} under {}",
                args.proof.display(),
                args.public.display(),
                args.vk.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Ok(false) => {
            println!(
                "INVALID: {} does not verify for {} under {}",
                args.proof.display(),
                args.public.display(),
                args.vk.display()
            );
            Ok(Exit::Failed.code())
        }
        Err(e) => Err(CliError::file(format!(
            "the verifier rejected its inputs: {e}"
        ))),
    }
}
