//! `crucible export-verifier`: a Solidity contract that verifies a BN254 key's Groth16
//! proofs on Ethereum, from a snarkjs `.zkey` or a verifying key file.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use crucible_files::output::{check_outputs, write_atomically};
use crucible_files::solidity::{export_verifier, CONTRACT};
use crucible_files::CurveVerifyingKey;

use crate::error::CliError;

/// Arguments of `crucible export-verifier`.
#[derive(Args)]
pub struct ExportVerifierArgs {
    /// A snarkjs Groth16 `.zkey` on BN254 (circom's default prime, snarkjs' bn128).
    #[arg(long, conflicts_with = "vk", required_unless_present = "vk")]
    zkey: Option<PathBuf>,
    /// A BN254 verifying key: snarkjs' `verification_key.json` (`*.json`) or an
    /// arkworks `VerifyingKey<Bn254>` (compressed or not).
    #[arg(long)]
    vk: Option<PathBuf>,
    /// Where to write the Solidity source.
    #[arg(long)]
    out: PathBuf,
}

/// Reads the key and writes its verifier.
pub fn run(args: &ExportVerifierArgs) -> Result<ExitCode, CliError> {
    let (key, path) = match (&args.zkey, &args.vk) {
        (Some(zkey), _) => (CurveVerifyingKey::from_zkey(zkey)?, zkey),
        (None, Some(vk)) => (CurveVerifyingKey::read(vk)?, vk),
        (None, None) => return Err(CliError::usage("give --zkey or --vk")),
    };
    check_outputs(&[("key", Some(path))], &[("--out", Some(&args.out))])?;
    let source = export_verifier(&key, &path.display().to_string())?;
    write_atomically(&args.out, "Solidity verifier", |w| {
        w.write_all(source.as_bytes())
    })?;
    println!(
        "wrote {} ({CONTRACT}, {} public inputs, EVM precompiles 0x06-0x08) for {}",
        args.out.display(),
        key.num_public(),
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}
