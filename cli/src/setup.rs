//! `crucible setup`: ark-groth16's random setup for a circom circuit, for users who
//! have no key. Not a ceremony: whoever runs it can forge proofs.

use std::path::PathBuf;
use std::process::ExitCode;

use ark_serialize::Compress;
use ark_std::rand::{rngs::OsRng, rngs::StdRng, RngCore, SeedableRng};
use clap::Args;
use crucible_core::curve::Curve;
use crucible_core::groth16::ProvingKey;
use crucible_core::{Bls12_381, Bn254};
use crucible_files::artifacts::{finish_proving_key, write_vk};
use crucible_files::output::{check_outputs, PendingFile};
use crucible_files::{curve_of, FileCurve, JsonCurve, R1cs, R1csCircuit};

use crate::error::CliError;
use crate::output::{count, spinner};

/// Arguments of `crucible setup`.
#[derive(Args)]
pub struct SetupArgs {
    /// circom's constraints (`circom --r1cs`, either curve: the key is made on the
    /// curve whose prime the file names).
    #[arg(long)]
    r1cs: PathBuf,
    /// Where to write the arkworks proving key (for `crucible prove --pk`).
    #[arg(long)]
    out: PathBuf,
    /// Also write the verifying key here (`*.json`: snarkjs' form; else arkworks').
    #[arg(long)]
    vk: Option<PathBuf>,
    /// Write the key uncompressed (larger, faster to load) instead of compressed.
    #[arg(long)]
    uncompressed: bool,
    /// Draw the setup's randomness from this seed instead of the OS (tests only:
    /// anyone with the seed can forge proofs).
    #[arg(long)]
    seed: Option<u64>,
}

/// The warning printed before every setup.
pub const NOT_A_CEREMONY: &str =
    "warning: this is ark-groth16's random setup on this machine, not a ceremony: \
whoever ran it could keep its secret randomness and forge proofs. Use it for tests and benchmarks; \
for production, run a multi-party ceremony (e.g. snarkjs' powers of tau and phase 2).";

/// Runs the setup on the curve the `.r1cs` names and writes the keys.
pub fn run(args: &SetupArgs) -> Result<ExitCode, CliError> {
    eprintln!("{NOT_A_CEREMONY}");
    check_outputs(
        &[("--r1cs", Some(&args.r1cs))],
        &[("--out", Some(&args.out)), ("--vk", args.vk.as_deref())],
    )?;
    match curve_of(&args.r1cs)? {
        Curve::Bls12_381 => setup::<Bls12_381>(args),
        Curve::Bn254 => setup::<Bn254>(args),
    }
}

fn setup<E: FileCurve + JsonCurve>(args: &SetupArgs) -> Result<ExitCode, CliError> {
    // Created now, so a path that cannot be written fails before the setup's minutes;
    // an interrupt removes it (see `crate::interrupt`).
    let pk_out = PendingFile::create(&args.out, "proving key")?;
    let r1cs = spinner(&format!("reading {}", args.r1cs.display()), || {
        R1cs::<E>::read(&args.r1cs)
    })?;
    let shape = r1cs.shape()?;
    println!(
        "circuit on {}: {}, {}, domain 2^{}",
        E::CURVE.name(),
        count(shape.num_constraints as u64, "constraint"),
        count(r1cs.num_public as u64, "public signal"),
        shape.log_domain
    );
    let mut rng: Box<dyn RngCore> = match args.seed {
        Some(seed) => Box::new(StdRng::seed_from_u64(seed)),
        None => Box::new(OsRng),
    };
    let circuit = R1csCircuit {
        r1cs: &r1cs,
        witness: None,
    };
    let pk: ProvingKey<E> = spinner("generating the proving key (ark-groth16 setup)", || {
        ark_groth16::Groth16::<E>::generate_random_parameters_with_reduction(circuit, &mut rng)
            .map_err(|e| CliError::file(format!("setup of {} failed: {e}", args.r1cs.display())))
    })?;
    let compress = if args.uncompressed {
        Compress::No
    } else {
        Compress::Yes
    };
    spinner(&format!("writing {}", args.out.display()), || {
        finish_proving_key(pk_out, &pk, compress)
    })?;
    println!("wrote the proving key to {}", args.out.display());
    if let Some(vk) = &args.vk {
        write_vk(vk, &pk.vk)?;
        println!("wrote the verifying key to {}", vk.display());
    }
    Ok(ExitCode::SUCCESS)
}
