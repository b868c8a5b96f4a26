//! `crucible plan`: the memory plans of a proof, the budget, and how many proofs (and
//! workers) fit at once. Nothing is allocated.

use std::process::ExitCode;

use clap::Args;
use crucible_benches::prove_shape;
use crucible_core::engine::{proofs_that_fit, MAX_WORKERS_PER_DEVICE};
use crucible_core::groth16::{key_plan, proof_plan};
use crucible_core::registry::{select, ProbeOptions, Selected};
use crucible_core::{human_bytes, MemoryPlan, ProofShape, ProverBackend};

use crate::output::count;
use crate::{parse, CliError};

/// The circuit, backend and memory options `plan` and `prove` share.
#[derive(Args)]
pub struct ProofSetup {
    /// Backend: a registered name (`cpu`, `cuda`, `cuda:1`) or `auto` (the best available).
    #[arg(long, default_value = "auto")]
    pub backend: String,
    /// Constraints of the benchmark circuit (`4096` or `2^12`).
    #[arg(long, value_parser = parse::size)]
    pub constraints: usize,
    /// Public inputs of the circuit.
    #[arg(long, default_value = "1", value_parser = parse::size)]
    pub inputs: usize,
    /// Cap on the device budget (`512MiB`, `1.5GiB`, bytes). The budget must hold the
    /// staged proving key plus one proof lease per proof in flight (`crucible plan`
    /// prints both).
    #[arg(long, value_parser = parse::memory)]
    pub memory_limit: Option<u64>,
    /// Workers per device; each holds at most one proof lease at a time.
    #[arg(long, default_value = "1", value_parser = parse::size)]
    pub workers_per_device: usize,
}

/// A [`ProofSetup`] checked and resolved: the backend chosen, the sizes planned.
pub struct Resolved {
    /// The proof's sizes.
    pub shape: ProofShape,
    /// The backend and why it was chosen.
    pub selected: Selected,
    /// Its plans against its budget.
    pub memory: MemorySummary,
}

impl ProofSetup {
    /// Probe options carrying `--memory-limit`.
    pub fn probe_options(&self) -> ProbeOptions {
        ProbeOptions {
            memory_limit: self.memory_limit,
            ..ProbeOptions::default()
        }
    }

    /// Checks the counts, computes the domain, selects the backend and sizes its plans
    /// (nothing is allocated); says so when `--memory-limit` was capped.
    pub fn resolve(&self) -> Result<Resolved, CliError> {
        if self.constraints == 0 {
            return Err(CliError("--constraints must be at least 1".into()));
        }
        if !(1..=MAX_WORKERS_PER_DEVICE).contains(&self.workers_per_device) {
            return Err(CliError(format!(
                "--workers-per-device must be between 1 and {MAX_WORKERS_PER_DEVICE}, got {}",
                self.workers_per_device
            )));
        }
        let shape = prove_shape(self.constraints, self.inputs)?;
        let options = self.probe_options();
        let selected = select(&self.backend, &options)?;
        let memory = MemorySummary::new(&*selected.backend, &shape, &options);
        if let Some(note) = &memory.capped {
            eprintln!("note: {note}");
        }
        Ok(Resolved {
            shape,
            selected,
            memory,
        })
    }
}

/// Arguments of `crucible plan`.
#[derive(Args)]
pub struct PlanArgs {
    #[command(flatten)]
    setup: ProofSetup,
}

/// The numbers that decide whether proofs fit a device's budget.
pub struct MemorySummary {
    /// The staged proving key (once per device).
    pub key: MemoryPlan,
    /// One proof in flight.
    pub proof: MemoryPlan,
    /// The device budget's capacity.
    pub capacity: u64,
    /// Where the capacity comes from.
    pub capacity_source: String,
    /// Whether `--memory-limit` set the capacity.
    pub limited: bool,
    /// Proofs that fit next to the key at once.
    pub proofs_at_once: u64,
    /// Set when `--memory-limit` asked for more than the device offers (and so was
    /// capped): says so, with both numbers.
    pub capped: Option<String>,
}

impl MemorySummary {
    /// Plans `shape` on `backend` (allocating nothing).
    pub fn new(backend: &dyn ProverBackend, shape: &ProofShape, options: &ProbeOptions) -> Self {
        let capacity = backend.budget().capacity();
        let device = backend.info().memory_bytes;
        let limited = options.memory_limit == Some(capacity);
        let capacity_source = match options.memory_limit {
            Some(limit) if limited => format!("--memory-limit {}", human_bytes(limit)),
            _ => format!(
                "device memory {} minus {} headroom",
                human_bytes(device),
                human_bytes(options.headroom)
            ),
        };
        let capped = options.memory_limit.filter(|l| *l > capacity).map(|limit| {
            format!(
                "--memory-limit {} ({limit} B) is more than {} offers: its budget is {} ({capacity} B, {capacity_source})",
                human_bytes(limit),
                backend.info().label(),
                human_bytes(capacity),
            )
        });
        MemorySummary {
            key: key_plan(backend, shape),
            proof: proof_plan(backend, shape),
            capacity,
            capacity_source,
            limited,
            proofs_at_once: proofs_that_fit(backend, shape),
            capped,
        }
    }

    /// Key plus `proofs` proof leases, in bytes.
    pub fn needed_for(&self, proofs: u64) -> u64 {
        self.key
            .total_bytes()
            .saturating_add(self.proof.total_bytes().saturating_mul(proofs))
    }

    /// Whether the key and one proof fit.
    pub fn fits(&self) -> bool {
        self.needed_for(1) <= self.capacity
    }

    /// The error when even one proof does not fit.
    pub fn does_not_fit(&self, label: &str) -> CliError {
        let what = if self.limited {
            "the memory limit is smaller than the plan"
        } else {
            "the plan does not fit the device"
        };
        CliError(format!(
            "{what}: the budget of {label} holds {} ({}), \
             but the staged proving key ({}) plus one proof ({}) need {} ({} bytes); \
             give at least --memory-limit {} (see `crucible plan`)",
            human_bytes(self.capacity),
            self.capacity_source,
            human_bytes(self.key.total_bytes()),
            human_bytes(self.proof.total_bytes()),
            human_bytes(self.needed_for(1)),
            self.needed_for(1),
            self.needed_for(1),
        ))
    }
}

/// Prints the plans and what fits; exits 1 (after printing) when one proof does not fit.
pub fn run(args: &PlanArgs) -> Result<ExitCode, CliError> {
    let setup = &args.setup;
    let Resolved {
        shape,
        selected,
        memory: summary,
    } = setup.resolve()?;
    let label = selected.backend.info().label();
    let workers = setup.workers_per_device as u64;

    println!("{}", selected.reason);
    println!(
        "circuit: {}, {} ({} with the constant one, {})",
        count(shape.num_constraints as u64, "constraint"),
        count(setup.inputs as u64, "public input"),
        count(shape.num_instance as u64, "instance variable"),
        count(shape.num_witness as u64, "witness variable"),
    );
    println!(
        "domain: 2^{} = {} points (the power of two ≥ constraints + instance variables = {})",
        shape.log_domain,
        shape.domain_size(),
        shape.num_constraints + shape.num_instance
    );
    println!();
    println!("key plan (staged once per device, shared by its workers):");
    println!("{}", summary.key);
    println!();
    println!("proof plan (one lease per proof in flight):");
    println!("{}", summary.proof);
    println!();
    println!(
        "budget of {label}: {} ({} B), from {}",
        human_bytes(summary.capacity),
        summary.capacity,
        summary.capacity_source
    );
    println!(
        "key + one proof: {} ({} B): {}",
        human_bytes(summary.needed_for(1)),
        summary.needed_for(1),
        if summary.fits() {
            "fits"
        } else {
            "does not fit"
        }
    );
    println!("proofs that fit at once: {}", summary.proofs_at_once);
    let all_workers = summary.needed_for(workers);
    if summary.proofs_at_once >= workers {
        println!(
            "{} per device: fit (key + {} = {})",
            count(workers, "worker"),
            count(workers, "proof"),
            human_bytes(all_workers)
        );
    } else if summary.fits() {
        println!(
            "{} per device: do not all fit at once; {} at a time, the other workers wait for memory (all {workers} need --memory-limit {} = {})",
            count(workers, "worker"),
            count(summary.proofs_at_once, "proof"),
            all_workers,
            human_bytes(all_workers)
        );
    } else {
        println!("{} per device: do not fit", count(workers, "worker"));
    }
    println!("--memory-limit caps the device budget, which must hold the staged key plus one proof lease per proof in flight");
    if !summary.fits() {
        return Err(summary.does_not_fit(&label));
    }
    Ok(ExitCode::SUCCESS)
}
