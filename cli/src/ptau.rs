//! `crucible ptau`: a development powers-of-tau file over BLS12-381 or BN254 for snarkjs'
//! Groth16 setup (`snarkjs groth16 setup c.r1cs pot.ptau c.zkey`), in about a second
//! where snarkjs' own `powersoftau` takes minutes. Its secrets come from a seed: not a
//! ceremony, never for production.

use std::path::PathBuf;
use std::process::ExitCode;

use ark_std::rand::{rngs::OsRng, RngCore};
use clap::Args;
use crucible_core::curve::Curve;
use crucible_core::{Bls12_381, Bn254};
use crucible_files::ptau::{DevPtau, MAX_POWER};
use crucible_files::FileCurve;

use crate::error::CliError;
use crate::output::{check_writable, spinner};

/// Arguments of `crucible ptau`.
#[derive(Args)]
pub struct PtauArgs {
    /// Domains up to 2^POWER points: circuits of up to 2^POWER constraints plus public
    /// inputs (1 to 28).
    #[arg(long)]
    power: u32,
    /// Where to write the `.ptau` file.
    #[arg(long)]
    out: PathBuf,
    /// Draw the secrets from this seed (reproducible files for tests) instead of the
    /// OS's randomness. Either way the secrets pass through this machine.
    #[arg(long)]
    seed: Option<u64>,
    /// Leave out the phase-2 sections (snarkjs' `prepare phase2`), as `powersoftau new`
    /// and `contribute` leave them.
    #[arg(long)]
    unprepared: bool,
    /// The curve: `bls12-381` (snarkjs' `bls12381`, circom `--prime bls12381`) or
    /// `bn254` (snarkjs' `bn128`, circom's default prime).
    #[arg(long, default_value = "bls12-381")]
    curve: Curve,
}

/// The warning printed before every file.
pub const INSECURE: &str = "warning: development powers of tau, INSECURE: the secrets were made on this machine from a 64-bit seed, and whoever knows them can forge proofs for every key set up from this file. Use it for tests and development; for production, use a public ceremony's file (e.g. the Perpetual Powers of Tau) or run snarkjs' powersoftau ceremony.";

/// Writes the file.
pub fn run(args: &PtauArgs) -> Result<ExitCode, CliError> {
    eprintln!("{INSECURE}");
    if !(1..=MAX_POWER).contains(&args.power) {
        return Err(CliError::usage(format!(
            "--power must be between 1 and {MAX_POWER}, got {}",
            args.power
        )));
    }
    check_writable(&args.out, "--out")?;
    let seed = args.seed.unwrap_or_else(|| OsRng.next_u64());
    match args.curve {
        Curve::Bls12_381 => write::<Bls12_381>(args, seed),
        Curve::Bn254 => write::<Bn254>(args, seed),
    }
}

fn write<E: FileCurve>(args: &PtauArgs, seed: u64) -> Result<ExitCode, CliError> {
    let ptau = DevPtau::<E>::from_seed(args.power, seed)?;
    let prepared = !args.unprepared;
    spinner(
        &format!(
            "writing powers of tau 2^{} to {}",
            args.power,
            args.out.display()
        ),
        || ptau.write_file(&args.out, prepared),
    )?;
    println!(
        "wrote {} ({}, power {}, {}; development only)",
        args.out.display(),
        E::CURVE,
        args.power,
        if prepared {
            "prepared for phase 2"
        } else {
            "unprepared"
        }
    );
    Ok(ExitCode::SUCCESS)
}
