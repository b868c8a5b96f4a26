//! `crucible plan`: the schedule chosen for the budget, its memory plans item by item,
//! the peak, the predicted time, the floor and the memory–time curve. Nothing is
//! allocated.

use std::process::ExitCode;

use clap::Args;
use crucible_benches::prove_shape;
use crucible_core::engine::MAX_WORKERS_PER_DEVICE;
use crucible_core::fixtures::circuit::{synthesis_time, BitHeavyCircuit};
use crucible_core::groth16::schedule::{choose, frontier, ScheduleChoice};
use crucible_core::groth16::{MatrixSizes, Reduction};
use crucible_core::host_stages::HostStages;
use crucible_core::registry::{ProbeOptions, Selected};
use crucible_core::synthesis_threads::auto_synthesis_threads_here;
use crucible_core::{human_bytes, Error, ProofShape, ProverBackend, ScalarMix};

use crate::devices::{select_backend, BackendArgs, WorkersArgs};
use crate::error::CliError;
use crate::output::{count, predicted_time_assumes};
use crate::parse;

/// The circuit and device options `plan` and `prove` share.
#[derive(Args)]
pub struct ProofSetup {
    #[command(flatten)]
    pub backend: BackendArgs,
    #[command(flatten)]
    pub workers: WorkersArgs,
    /// Constraints of the built-in benchmark circuit (`4096` or `2^12`); required
    /// unless `prove` is given circuit files (`--zkey`, or `--pk` with `--r1cs`).
    #[arg(long, value_parser = parse::size)]
    pub constraints: Option<usize>,
    /// Public inputs of the built-in circuit (default 1).
    #[arg(long, value_parser = parse::size)]
    pub inputs: Option<usize>,
    /// The built-in circuit's witness: `full` (every value full width, the default),
    /// or `bits=<share>`: that share of the constraints check a bit, so that share of
    /// the witness is 0 or 1, as in bit-decomposition circuits (its own key; its MSMs
    /// are cheaper, which the predicted times count).
    #[arg(long)]
    pub witness: Option<ScalarMix>,
}

/// The built-in circuit's matrix sizes where `backend` can evaluate on the device (its
/// schedules may then stage them), else `None`.
pub fn built_in_matrices(
    backend: &dyn ProverBackend,
    constraints: usize,
    inputs: usize,
    bits_per_mille: u16,
) -> Option<MatrixSizes> {
    backend.supports_sparse_product().then(|| {
        BitHeavyCircuit {
            constraints,
            inputs,
            seed: 0,
            bits_per_mille,
        }
        .matrix_sizes()
    })
}

/// A [`ProofSetup`] checked and resolved: the backend chosen, the schedule planned.
pub struct Resolved {
    /// The proof's sizes.
    pub shape: ProofShape,
    /// The backend and why it was chosen.
    pub selected: Selected,
    /// Its schedule against its budget.
    pub memory: MemorySummary,
    /// The built-in circuit's matrix sizes, where the backend can evaluate on the
    /// device (the schedule then may).
    pub matrices: Option<MatrixSizes>,
    /// The host's stages as the engine would run them for one device.
    pub host: HostStages,
}

/// The host's stages of the built-in circuit of `constraints` constraints for one
/// device with `workers` workers: the engine's default synthesis threads and the
/// circuit's expected synthesis time.
pub fn built_in_host(
    workers: usize,
    shape: &ProofShape,
    device_evaluation: bool,
    constraints: usize,
) -> HostStages {
    HostStages {
        threads: auto_synthesis_threads_here(workers, shape, device_evaluation) as f64,
        synthesis_seconds: synthesis_time(constraints).as_secs_f64(),
    }
}

impl ProofSetup {
    /// Public inputs of the built-in circuit.
    pub fn inputs(&self) -> usize {
        self.inputs.unwrap_or(1)
    }

    /// Workers per device.
    pub fn workers_per_device(&self) -> usize {
        self.workers.workers()
    }

    /// The built-in circuit's witness mix (`--witness`, full width by default).
    pub fn witness(&self) -> ScalarMix {
        self.witness.unwrap_or(ScalarMix::FULL)
    }

    /// `--constraints`, which the built-in circuit needs.
    pub fn constraints(&self) -> Result<usize, CliError> {
        self.constraints.ok_or_else(|| {
            CliError::usage(
                "give --constraints N for the built-in circuit (or circuit files to `prove`: --zkey c.zkey --wtns w.wtns, or --pk key.bin --r1cs c.r1cs --wtns w.wtns)",
            )
        })
    }

    /// Checks the counts, selects the backend and chooses the schedule for the
    /// built-in circuit with its `--witness` (nothing is allocated). A budget below
    /// the floor is an error naming the floor; a `--memory-limit` above what the
    /// device offers is said to be capped.
    pub fn resolve(&self) -> Result<Resolved, CliError> {
        let witness = self.witness();
        let constraints = self.constraints()?;
        if constraints == 0 {
            return Err(CliError::usage("--constraints must be at least 1"));
        }
        let workers = self.workers_per_device();
        if !(1..=MAX_WORKERS_PER_DEVICE).contains(&workers) {
            return Err(CliError::usage(format!(
                "--workers-per-device must be between 1 and {MAX_WORKERS_PER_DEVICE}, got {workers}"
            )));
        }
        let shape = prove_shape(constraints, self.inputs())
            .map_err(|e| CliError::usage(format!("--constraints {constraints}: {e}")))?;
        let options = self.backend.probe_options()?;
        let selected = select_backend(self.backend.backend_or("auto"), &options)?;
        let matrices = built_in_matrices(
            &*selected.backend,
            constraints,
            self.inputs(),
            witness.per_mille(),
        );
        let host = built_in_host(workers, &shape, matrices.is_some(), constraints);
        let memory = MemorySummary::new(
            &*selected.backend,
            &shape,
            &options,
            workers,
            matrices.as_ref(),
            witness,
            Some(&host),
        )?;
        if let Some(note) = &memory.capped {
            eprintln!("note: {note}");
        }
        Ok(Resolved {
            shape,
            selected,
            memory,
            matrices,
            host,
        })
    }
}

/// Arguments of `crucible plan`.
#[derive(Args)]
pub struct PlanArgs {
    #[command(flatten)]
    setup: ProofSetup,
    /// Print every point of the memory–time curve (by default at most
    /// 12 of them: the chosen schedule, the floor, the fastest and points
    /// evenly between).
    #[arg(long)]
    full_curve: bool,
}

/// Points of the memory–time curve `plan` prints without `--full-curve`.
const CURVE_ROWS: usize = 12;

/// The indices of `len` curve points to print: all of them where `full` or where they
/// are few, else `rows` of them: the first, the last, `keep` and points evenly between.
fn curve_rows(len: usize, keep: Option<usize>, rows: usize, full: bool) -> Vec<usize> {
    if full || len <= rows {
        return (0..len).collect();
    }
    let between = rows.saturating_sub(1).max(1);
    let mut picked: Vec<usize> = (0..=between).map(|i| i * (len - 1) / between).collect();
    if let Some(keep) = keep.filter(|&k| k < len) {
        if !picked.contains(&keep) {
            // The chosen point replaces its nearest evenly spaced neighbour.
            let nearest = picked
                .iter()
                .enumerate()
                .skip(1)
                .take(picked.len().saturating_sub(2))
                .min_by_key(|(_, &p)| p.abs_diff(keep))
                .map(|(i, _)| i);
            match nearest {
                Some(i) => picked[i] = keep,
                None => picked.push(keep),
            }
        }
    }
    picked.sort_unstable();
    picked.dedup();
    picked
}

/// The schedule chosen for a device's budget and where the budget comes from.
pub struct MemorySummary {
    /// The schedule, its plans, its predicted time and the floor.
    pub choice: ScheduleChoice,
    /// Where the capacity comes from.
    pub capacity_source: String,
    /// Set when `--memory-limit` asked for more than the device offers (and so was
    /// capped): says so, with both numbers.
    pub capped: Option<String>,
}

impl MemorySummary {
    /// Chooses the schedule of `shape` (with its `matrices`, where known) on
    /// `backend` for `workers` proofs at once of witnesses of `witness`, fed by
    /// `host` where its stages are known.
    pub fn new(
        backend: &dyn ProverBackend,
        shape: &ProofShape,
        options: &ProbeOptions,
        workers: usize,
        matrices: Option<&MatrixSizes>,
        witness: ScalarMix,
        host: Option<&HostStages>,
    ) -> Result<Self, CliError> {
        let capacity = backend.budget().capacity();
        let capacity_source = match options.budget_cap {
            Some(limit) if limit == capacity => {
                format!("--memory-limit {}", human_bytes(limit))
            }
            _ => match backend.device_memory().ok().flatten() {
                Some(m) => format!(
                    "free device memory when opened (the driver says {} free of {} now) minus {} headroom",
                    human_bytes(m.free),
                    human_bytes(m.total),
                    human_bytes(options.headroom)
                ),
                None => format!(
                    "device memory {} minus {} headroom",
                    human_bytes(backend.info().memory_bytes),
                    human_bytes(options.headroom)
                ),
            },
        };
        let capped = options.budget_cap.filter(|l| *l > capacity).map(|limit| {
            format!(
                "--memory-limit {} ({limit} B) is more than {} offers: its budget is {} ({capacity} B, {capacity_source})",
                human_bytes(limit),
                backend.info().label(),
                human_bytes(capacity),
            )
        });
        match choose(
            backend,
            shape,
            Reduction::Libsnark,
            capacity,
            workers,
            matrices,
            witness,
            host,
        ) {
            Ok(choice) => Ok(MemorySummary {
                choice,
                capacity_source,
                capped,
            }),
            Err(e @ Error::BelowFloor { .. }) => Err(CliError::device(format!(
                "{e} (budget from {capacity_source}); give at least --memory-limit {}",
                match &e {
                    Error::BelowFloor { floor, .. } => *floor,
                    _ => 0,
                }
            ))),
            Err(e) => Err(e.into()),
        }
    }
}

/// Prints the schedule, its plans, the floor and the memory–time curve.
pub fn run(args: &PlanArgs) -> Result<ExitCode, CliError> {
    let setup = &args.setup;
    let Resolved {
        shape,
        selected,
        memory,
        matrices,
        host,
    } = setup.resolve()?;
    let backend = &*selected.backend;
    let label = backend.info().label();
    let workers = setup.workers_per_device();
    let choice = &memory.choice;
    let chosen = &choice.chosen;

    println!("{}", selected.reason);
    println!(
        "circuit: {}, {} ({} with the constant one, {})",
        count(shape.num_constraints as u64, "constraint"),
        count(setup.inputs() as u64, "public input"),
        count(shape.num_instance as u64, "instance variable"),
        count(shape.num_witness as u64, "witness variable"),
    );
    println!(
        "domain: 2^{} = {} points (the power of two ≥ constraints + instance variables = {})",
        shape.log_domain,
        shape.domain_size(),
        shape.num_constraints + shape.num_instance
    );
    println!(
        "budget of {label}: {} ({} B), from {}",
        human_bytes(choice.capacity),
        choice.capacity,
        memory.capacity_source
    );
    println!();
    println!("schedule: {}", chosen.schedule);
    println!(
        "predicted stage + compute: {:.1} ms a proof; {:.2} proofs/s with {} in flight\n  (assumes {}; {})",
        chosen.predicted_seconds * 1e3,
        choice.proofs_per_second,
        count(choice.workers as u64, "proof"),
        predicted_time_assumes(backend),
        host_assumes(&host, chosen.host_entries)
    );
    println!();
    println!("key plan (staged once per device, shared by its workers):");
    println!("{}", chosen.key);
    println!();
    println!("proof plan (one per worker):");
    println!("{}", chosen.proof);
    println!();
    println!(
        "peak: key + {} = {} ({} B) of the budget's {}",
        count(workers as u64, "proof"),
        human_bytes(chosen.bytes_for(workers)),
        chosen.bytes_for(workers),
        human_bytes(choice.capacity)
    );
    println!(
        "floor: {} ({} B), the smallest budget that proves this shape with {} ({})",
        human_bytes(choice.floor_bytes()),
        choice.floor_bytes(),
        count(workers as u64, "worker"),
        choice.floor.schedule
    );
    println!();
    println!(
        "memory–time curve (budget for key + {workers} proofs → schedule, predicted time, proofs/s with {workers} in flight):"
    );
    let overlaps = backend.cost_model().overlaps_staging;
    let curve = frontier(
        backend,
        &shape,
        Reduction::Libsnark,
        workers,
        matrices.as_ref(),
        setup.witness(),
    )?;
    let chosen_at = curve.iter().position(|p| p.schedule == chosen.schedule);
    let rows = curve_rows(curve.len(), chosen_at, CURVE_ROWS, args.full_curve);
    for plan in rows.iter().map(|&i| &curve[i]) {
        let mark = if plan.schedule == chosen.schedule {
            "  <- chosen"
        } else {
            ""
        };
        println!(
            "  {:>12}  {:>9.1} ms  {:>7.2}/s  {}{mark}",
            human_bytes(plan.bytes_for(workers)),
            plan.predicted_seconds * 1e3,
            plan.proofs_per_second(workers, overlaps, Some(&host)),
            plan.schedule
        );
    }
    if rows.len() < curve.len() {
        println!(
            "  ({} of the curve's {} points; --full-curve prints every one)",
            rows.len(),
            curve.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// What the host model assumes: the synthesis threads, a proof's synthesis and its
/// evaluation on the host (`entries` matrix entries, 0 where the device evaluates),
/// and the most proofs a second they supply.
fn host_assumes(host: &HostStages, entries: u64) -> String {
    let evaluation = if entries == 0 {
        "evaluated on the device".to_string()
    } else {
        format!(
            "{:.0} ms evaluating on the host",
            HostStages::evaluation_seconds(entries) * 1e3
        )
    };
    format!(
        "host: {}, each proof {:.0} ms synthesizing (the built-in circuit's expected time) and {evaluation}: at most {:.2} proofs/s",
        count(host.threads as u64, "synthesis thread"),
        host.synthesis_seconds * 1e3,
        host.proofs_per_second(entries)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_curve_is_thinned_keeping_its_ends_and_the_chosen_point() {
        assert_eq!(curve_rows(5, Some(2), 12, false), vec![0, 1, 2, 3, 4]);
        let rows = curve_rows(100, Some(37), 12, false);
        assert_eq!(rows.len(), 12, "{rows:?}");
        assert_eq!((rows[0], rows[11]), (0, 99), "{rows:?}");
        assert!(rows.contains(&37), "{rows:?}");
        assert!(rows.windows(2).all(|w| w[0] < w[1]), "{rows:?}");
        assert_eq!(curve_rows(100, Some(37), 12, true).len(), 100);
        // The chosen point at an end is already there.
        assert_eq!(curve_rows(100, Some(99), 12, false).len(), 12);
    }
}
