//! `crucible`: list backends, prove, plan memory, run the conformance suite and
//! benchmark, on every backend linked into this binary.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod backends;
mod bench;
mod conformance;
mod memory_watch;
mod output;
mod parse;
mod plan;
mod plot;
mod prove;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

// The roster links every backend crate, or the linker would drop them and their
// `inventory` registrations with them.
use crucible_backends as _;

/// Groth16 over BLS12-381 on interchangeable backends.
#[derive(Parser)]
#[command(name = "crucible", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List every registered backend and device: available or why not, device, memory.
    Backends,
    /// Prove K proofs of the built-in benchmark circuit through the engine.
    Prove(prove::ProveArgs),
    /// Print the memory plans of a proof, the budget, and how many proofs fit at once.
    Plan(plan::PlanArgs),
    /// Run the conformance suite (byte-for-byte against arkworks) on backends.
    Conformance(conformance::ConformanceArgs),
    /// Time one operation across sizes and backends; table, JSON, CSV and SVG plot.
    Bench(bench::BenchArgs),
}

/// A failure reported as `error: ...` with exit status 1.
#[derive(Debug)]
pub struct CliError(String);

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<crucible_core::Error> for CliError {
    fn from(e: crucible_core::Error) -> Self {
        CliError(e.to_string())
    }
}

impl From<String> for CliError {
    fn from(message: String) -> Self {
        CliError(message)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Backends => backends::run(),
        Command::Prove(args) => prove::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Conformance(args) => conformance::run(args),
        Command::Bench(args) => bench::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
