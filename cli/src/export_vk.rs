//! `crucible export-vk`: the verifying key of a snarkjs `.zkey` or an arkworks
//! proving key, in snarkjs' JSON (`*.json`) and/or arkworks' binary form.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use crucible_files::artifacts::{is_json, read_proving_key, write_vk};
use crucible_files::Zkey;

use crate::error::CliError;
use crate::output::spinner;

/// Arguments of `crucible export-vk`.
#[derive(Args)]
pub struct ExportVkArgs {
    /// A snarkjs Groth16 `.zkey`.
    #[arg(long, conflicts_with = "pk", required_unless_present = "pk")]
    zkey: Option<PathBuf>,
    /// An arkworks `ProvingKey<Bls12_381>` (compressed or not).
    #[arg(long)]
    pk: Option<PathBuf>,
    /// Where to write it; repeat for both forms (`--out vk.json --out vk.bin`):
    /// snarkjs' `verification_key.json` form for `*.json`, arkworks binary otherwise.
    #[arg(long, required = true)]
    out: Vec<PathBuf>,
}

/// Reads the key and writes its verifying key to every `--out`.
pub fn run(args: &ExportVkArgs) -> Result<ExitCode, CliError> {
    let vk = match (&args.zkey, &args.pk) {
        (Some(zkey), _) => {
            spinner(&format!("reading {}", zkey.display()), || Zkey::read(zkey))?
                .proving_key
                .vk
        }
        (None, Some(pk)) => {
            spinner(&format!("reading {}", pk.display()), || {
                read_proving_key(pk)
            })?
            .vk
        }
        (None, None) => return Err(CliError("give --zkey or --pk".into())),
    };
    for out in &args.out {
        write_vk(out, &vk)?;
        let form = if is_json(out) {
            "snarkjs JSON"
        } else {
            "arkworks binary"
        };
        println!(
            "wrote the verifying key ({} public signals) to {} ({form})",
            vk.gamma_abc_g1.len() - 1,
            out.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
