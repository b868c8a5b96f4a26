//! `crucible prove`: one proof source, chosen and checked from the options before
//! anything is read or probed (the user's circuit from files, or K proofs of the
//! built-in benchmark circuit through the engine), and one progress sink handed down.

use std::process::ExitCode;

use clap::Args;

use crate::error::{CliError, Exit};
use crate::parse::{self, Devices};
use crate::plan::ProofSetup;
use crate::prove_built_in::{self, BuiltInRun};
use crate::prove_files::{self, FileInputs, FileRun};
use crate::sink::Sink;

/// Arguments of `crucible prove`.
#[derive(Args)]
pub struct ProveArgs {
    #[command(flatten)]
    setup: ProofSetup,
    /// Devices of the backend for the built-in circuit: `all` or indices `0,2`
    /// (default: the one `--backend` names).
    #[arg(long, value_parser = parse::devices)]
    devices: Option<Devices>,
    /// Number of proofs (each with its own witness and its own r, s).
    #[arg(long, value_parser = parse::size)]
    proofs: Option<usize>,
    /// Seed of the proving key's setup and of every proof's witness, r and s (default
    /// 0). With circuit files, r and s come from the OS's randomness unless a seed is
    /// given (tests only: known r and s reveal the witness).
    #[arg(long)]
    seed: Option<u64>,
    /// Also prove each with ark-groth16 (same key, circuit, r, s) and compare the
    /// compressed bytes; exit 1 on any mismatch.
    #[arg(long)]
    check: bool,
    /// Print one JSON object (reports and stats; with circuit files the proof too, in
    /// snarkjs' form and as hex) instead of the lines.
    #[arg(long)]
    json: bool,
    /// Skip verifying each proof before it is returned.
    #[arg(long)]
    no_verify: bool,
    /// Host threads synthesizing circuits ahead of the devices (each holds one
    /// synthesized circuit in host memory). Default: two a worker, at most half the
    /// cores, fewer where the assignments would take over a quarter of the host
    /// memory available.
    #[arg(long, value_parser = parse::size)]
    synthesis_threads: Option<usize>,
    /// Prove with a key of the circuit's shape and pseudo-random points, built in
    /// seconds (a real setup takes minutes from about 2^22 constraints): the same
    /// device work, for timing and memory runs; the proofs do not verify, so
    /// verification is off and `--check` is refused.
    #[arg(long)]
    synthetic_key: bool,
    #[command(flatten)]
    files: FileInputs,
}

/// Most proofs one run makes (each outcome is kept until the run's report).
pub const MAX_PROOFS: usize = 1 << 20;

/// Where the run's proofs come from, with the options that source takes.
enum ProofSource<'a> {
    /// One proof of the user's circuit from a key file and a witness.
    Files(FileRun<'a>),
    /// K proofs of the built-in benchmark circuit through the engine.
    BuiltIn(BuiltInRun<'a>),
}

impl<'a> ProofSource<'a> {
    /// The source the options name, every option checked against it: an option the
    /// other source takes is a usage error naming both.
    fn of(args: &'a ProveArgs) -> Result<Self, CliError> {
        let Some(key_flag) = args.files.key_flag() else {
            return Self::built_in(args).map(ProofSource::BuiltIn);
        };
        let setup = &args.setup;
        for (given, flag) in [
            (args.proofs.is_some(), "--proofs"),
            (args.devices.is_some(), "--devices"),
            (
                setup.workers.workers_per_device.is_some(),
                "--workers-per-device",
            ),
            (args.synthetic_key, "--synthetic-key"),
            (setup.witness.is_some(), "--witness"),
            (setup.constraints.is_some(), "--constraints"),
            (setup.inputs.is_some(), "--inputs"),
            (args.synthesis_threads.is_some(), "--synthesis-threads"),
        ] {
            if given {
                return Err(CliError::usage(format!(
                    "{flag} applies to the built-in circuit, not to {key_flag}: a key file proves one proof of its own circuit, with the witness --wtns names"
                )));
            }
        }
        if args.files.proof.is_none() && !args.json {
            return Err(CliError::usage(format!(
                "{key_flag} proves one proof: say where it goes with --proof proof.json (snarkjs' form; another name is arkworks binary) and --public public.json, or print it with --json"
            )));
        }
        Ok(ProofSource::Files(FileRun {
            backend: &setup.backend,
            files: &args.files,
            seed: args.seed,
            check: args.check,
            no_verify: args.no_verify,
        }))
    }

    fn built_in(args: &'a ProveArgs) -> Result<BuiltInRun<'a>, CliError> {
        if let Some(flag) = args.files.stray_flag() {
            return Err(CliError::usage(format!(
                "{flag} needs a key file: --zkey c.zkey, or --pk key.bin (`crucible setup` makes one)"
            )));
        }
        let proofs = args.proofs.unwrap_or(1);
        if !(1..=MAX_PROOFS).contains(&proofs) {
            return Err(CliError::usage(format!(
                "--proofs must be between 1 and {MAX_PROOFS} (2^20) in one run, got {proofs}"
            )));
        }
        if args.synthetic_key && args.check {
            return Err(CliError::usage(
                "--check needs a real key: a synthetic key's proofs do not verify",
            ));
        }
        Ok(BuiltInRun {
            setup: &args.setup,
            devices: args.devices.as_ref(),
            proofs,
            seed: args.seed.unwrap_or(0),
            check: args.check,
            verify: !args.no_verify && !args.synthetic_key,
            synthesis_threads: args.synthesis_threads,
            synthetic_key: args.synthetic_key,
        })
    }
}

/// The usage checks `run` makes before anything is read or probed, alone: for the
/// pages' commands, which must run as written.
#[cfg(test)]
pub fn check_usage(args: &ProveArgs) -> Result<(), CliError> {
    ProofSource::of(args).map(drop)
}

/// Proves from the source the options name; exit 1 on any failed proof or mismatch.
pub fn run(args: &ProveArgs) -> Result<ExitCode, CliError> {
    let sink = Sink::new(args.json);
    let ok = match ProofSource::of(args)? {
        ProofSource::Files(run) => {
            if args.seed.is_some() {
                eprintln!(
                    "warning: --seed fixes the proof's randomness r and s: anyone who knows them can recover the witness from the proof; leave it out except in tests"
                );
            }
            prove_files::run(run, sink)?
        }
        ProofSource::BuiltIn(run) => prove_built_in::run(run, sink)?,
    };
    Ok(Exit::verdict(ok))
}
