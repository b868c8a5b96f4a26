//! `crucible export-vk`: the verifying key of a snarkjs `.zkey` (of either curve) or
//! an arkworks proving key, in snarkjs' JSON (`*.json`) and/or arkworks' binary form.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use ark_groth16::VerifyingKey;
use clap::Args;
use crucible_core::curve::Curve;
use crucible_core::{Bls12_381, Bn254};
use crucible_files::artifacts::{is_json, read_proving_key, write_vk};
use crucible_files::output::check_outputs;
use crucible_files::{curve_of, JsonCurve, Zkey};

use crate::error::CliError;
use crate::output::{load_line, spinner};

/// Arguments of `crucible export-vk`.
#[derive(Args)]
pub struct ExportVkArgs {
    /// A snarkjs Groth16 `.zkey` (BLS12-381 or BN254: its header names the curve).
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

/// Reads the key and writes its verifying key to every `--out`; an `--out` that
/// names the key or another `--out` is refused before anything is read.
pub fn run(args: &ExportVkArgs) -> Result<ExitCode, CliError> {
    let outputs: Vec<(&str, Option<&Path>)> = args
        .out
        .iter()
        .map(|p| ("--out", Some(p.as_path())))
        .collect();
    check_outputs(
        &[
            ("--zkey", args.zkey.as_deref()),
            ("--pk", args.pk.as_deref()),
        ],
        &outputs,
    )?;
    let started = Instant::now();
    match (&args.zkey, &args.pk) {
        (Some(zkey), _) => match curve_of(zkey)? {
            Curve::Bls12_381 => export(args, zkey, started, read_zkey_vk::<Bls12_381>(zkey)?),
            Curve::Bn254 => export(args, zkey, started, read_zkey_vk::<Bn254>(zkey)?),
        },
        // An arkworks key file does not name its curve: it is read as BLS12-381's,
        // then as BN254's (the other curve's points fail their checks).
        (None, Some(pk)) => {
            let reading = format!("reading {}", pk.display());
            match spinner(&reading, || read_proving_key::<Bls12_381>(pk)) {
                Ok(key) => export(args, pk, started, key.vk),
                Err(bls) => match read_proving_key::<Bn254>(pk) {
                    Ok(key) => export(args, pk, started, key.vk),
                    Err(bn) => Err(CliError::file(format!("{bls}; {bn}"))),
                },
            }
        }
        (None, None) => Err(CliError::usage("give --zkey or --pk")),
    }
}

/// The verifying key of a `.zkey` of curve `E`, the whole key read and checked.
fn read_zkey_vk<E: JsonCurve>(zkey: &Path) -> Result<VerifyingKey<E>, CliError> {
    let key = spinner(&format!("reading {}", zkey.display()), || {
        Zkey::<E>::read(zkey)
    })?;
    Ok(key.proving_key.vk)
}

/// Writes `vk`, read from `path` since `started`, to every `--out`.
fn export<E: JsonCurve>(
    args: &ExportVkArgs,
    path: &Path,
    started: Instant,
    vk: VerifyingKey<E>,
) -> Result<ExitCode, CliError> {
    println!("{}", load_line(path, started.elapsed().as_secs_f64()));
    for out in &args.out {
        write_vk(out, &vk)?;
        let form = if is_json(out) {
            "snarkjs JSON"
        } else {
            "arkworks binary"
        };
        println!(
            "wrote the {} verifying key ({} public signals) to {} ({form})",
            E::CURVE.name(),
            vk.gamma_abc_g1.len() - 1,
            out.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
