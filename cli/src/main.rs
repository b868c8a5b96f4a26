//! `crucible`: list backends, prove (the built-in circuit, or yours from circom /
//! snarkjs / arkworks files), verify, export verifying keys, run a test setup, plan
//! memory, run the conformance suite and benchmark, on every backend linked into this
//! binary; serve proofs over gRPC, work a shared Postgres job queue, and drive both as
//! a client.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod backends;
mod bench;
mod bench_throughput;
mod client;
mod conformance;
mod devices;
#[cfg(test)]
mod doc_commands;
mod error;
mod export_verifier;
mod export_vk;
mod host_memory;
mod interrupt;
mod memory_watch;
mod output;
mod parse;
mod peak_sampler;
mod plan;
mod plot;
mod proof_run;
mod prove;
mod prove_built_in;
mod prove_files;
mod ptau;
mod queue;
mod runtime;
mod serve;
mod setup;
mod sink;
mod verify;
mod worker;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use error::CliError;

// The roster links every backend crate, or the linker would drop them and their
// `inventory` registrations with them.
use crucible_backends as _;

/// The exit statuses, as `crucible --help` lists them ([`error::Exit`]).
const EXIT_STATUSES: &str = "Exit status: 0 done; 1 a proof does not verify, failed, or differs from the reference; 2 usage; 3 a file missing, invalid or unwritable; 4 the backend or device; 5 the network, a daemon or a database.";

/// Groth16 over BLS12-381 on interchangeable backends.
#[derive(Parser)]
#[command(name = "crucible", version, about, after_help = EXIT_STATUSES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List every registered backend and device: available or why not, device, memory.
    Backends(backends::BackendsArgs),
    /// Prove: K proofs of the built-in benchmark circuit through the engine, or one
    /// proof of your circuit from files (a snarkjs .zkey or an arkworks key, circom's
    /// .wtns and .r1cs), written as snarkjs JSON or arkworks binary.
    Prove(prove::ProveArgs),
    /// Verify a proof against a verifying key and public signals (snarkjs JSON or
    /// arkworks binary); exit 1 when it does not verify.
    Verify(verify::VerifyArgs),
    /// Write the verifying key of a .zkey or an arkworks proving key (JSON and/or binary).
    ExportVk(export_vk::ExportVkArgs),
    /// Write a Solidity verifier of a BN254 key's proofs, for Ethereum's precompiles.
    ExportVerifier(export_verifier::ExportVerifierArgs),
    /// ark-groth16's random setup for a circom .r1cs (not a ceremony: for tests).
    Setup(setup::SetupArgs),
    /// Development powers of tau over BLS12-381 for snarkjs' Groth16 setup (INSECURE:
    /// not a ceremony, for tests).
    Ptau(ptau::PtauArgs),
    /// Print the memory plans of a proof, the budget, and how many proofs fit at once.
    Plan(plan::PlanArgs),
    /// Run the conformance suite (byte-for-byte against arkworks) on backends.
    Conformance(conformance::ConformanceArgs),
    /// Time one operation across sizes and backends; table, JSON, CSV and SVG plot.
    Bench(bench::BenchArgs),
    /// The gRPC proving daemon: keys stay staged on every device between requests.
    Serve(serve::ServeArgs),
    /// Prove jobs from a Postgres job queue shared by machines.
    Worker(worker::WorkerArgs),
    /// Queue jobs for the workers, or see the queue.
    Queue(queue::QueueArgs),
    /// Talk to a `crucible serve` daemon: keys, proofs, status, a load test.
    Client(client::ClientArgs),
}

/// Mesa's Vulkan device-select layer connects to Wayland to order the GPUs, and
/// libwayland prints `error: XDG_RUNTIME_DIR is invalid or not set in the environment`
/// on every probe where no user is logged in to a desktop (servers, CI). Without one
/// there is nothing to order by, so the layer is switched off with its own variable,
/// here, before any thread starts (a user who set it keeps their choice).
fn quiet_vulkan_probe() {
    let desktop = std::env::var_os("XDG_RUNTIME_DIR")
        .is_some_and(|dir| std::path::Path::new(&dir).is_absolute());
    if !desktop && std::env::var_os("NODEVICE_SELECT").is_none() {
        std::env::set_var("NODEVICE_SELECT", "1");
    }
}

fn main() -> ExitCode {
    quiet_vulkan_probe();
    let cli = Cli::parse();
    // Logs go to stderr, filtered by RUST_LOG; the daemons say what they do by default.
    let default_log = match cli.command {
        Command::Serve(_) | Command::Worker(_) => "info",
        _ => "warn",
    };
    crucible_service::logging::init(default_log);
    if !matches!(cli.command, Command::Serve(_) | Command::Worker(_)) {
        if let Err(e) = interrupt::remove_unfinished_on_signal() {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    }
    let result = match &cli.command {
        Command::Backends(args) => backends::run(args),
        Command::Prove(args) => prove::run(args),
        Command::Verify(args) => verify::run(args),
        Command::ExportVk(args) => export_vk::run(args),
        Command::ExportVerifier(args) => export_verifier::run(args),
        Command::Setup(args) => setup::run(args),
        Command::Ptau(args) => ptau::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Conformance(args) => conformance::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Worker(args) => worker::run(args),
        Command::Queue(args) => queue::run(args),
        Command::Client(args) => client::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit.code()
        }
    }
}
