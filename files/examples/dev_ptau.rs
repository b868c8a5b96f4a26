//! Writes a development powers-of-tau file for snarkjs' Groth16 setup (secrets from a
//! seed: not a ceremony; see `crucible_files::ptau`).
//!
//!     cargo run --release -p crucible-files --example dev_ptau -- OUT.ptau POWER [SEED] [--unprepared] [--bn254]
//!
//! CI's circom interop build uses it instead of snarkjs' `powersoftau new`,
//! `contribute` and `prepare phase2` (about 25 CPU-minutes at power 14).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use crucible_files::ptau::DevPtau;

const USAGE: &str = "usage: dev_ptau OUT.ptau POWER [SEED] [--unprepared] [--bn254]";

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let unprepared = args.iter().any(|a| a == "--unprepared");
    let bn254 = args.iter().any(|a| a == "--bn254");
    args.retain(|a| a != "--unprepared" && a != "--bn254");
    let parsed = match args.as_slice() {
        [out, power] => power.parse().ok().map(|p| (out, p, 1u64)),
        [out, power, seed] => power
            .parse()
            .ok()
            .zip(seed.parse().ok())
            .map(|(p, s)| (out, p, s)),
        _ => None,
    };
    let Some((out, power, seed)) = parsed else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let started = Instant::now();
    let out_path = PathBuf::from(out);
    let written = if bn254 {
        DevPtau::<crucible_core::Bn254>::from_seed(power, seed)
            .and_then(|ptau| ptau.write_file(&out_path, !unprepared))
    } else {
        DevPtau::<crucible_core::Bls12_381>::from_seed(power, seed)
            .and_then(|ptau| ptau.write_file(&out_path, !unprepared))
    };
    match written {
        Ok(()) => {
            println!(
                "dev_ptau: {out}: power {power}, seed {seed}, {} in {:.2} s",
                if unprepared {
                    "unprepared"
                } else {
                    "prepared for phase 2"
                },
                started.elapsed().as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("dev_ptau: {e}");
            ExitCode::FAILURE
        }
    }
}
