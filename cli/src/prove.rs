//! `crucible prove`: K proofs of the benchmark circuit through the engine, each
//! verified, optionally compared byte for byte with ark-groth16.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use crucible_benches::reference::{ark_groth16_prove, hex, proof_bytes};
use crucible_core::engine::{EngineConfig, EngineStats, JobOutcome};
use crucible_core::fixtures::circuit::synthesis_time;
use crucible_core::fixtures::key_cache::BenchKeyId;
use crucible_core::fixtures::synthetic_key::synthetic_key;
use crucible_core::groth16::schedule::ScheduleChoice;
use crucible_core::groth16::ProvingKey;
use crucible_core::human_bytes;
use crucible_core::report::ProofReport;
use crucible_core::synthesis_threads::auto_synthesis_threads_here;
use serde_json::json;

use crate::devices::{chosen_devices, Takes};
use crate::error::CliError;
use crate::output::{count, load_key_id, predicted_time_assumes, progress_bar, table};
use crate::parse;
use crate::plan::{ProofSetup, Resolved};
use crate::proof_run::{phase_stats, prove_built_in, BuiltIn, ProofInputs, Ran, RunSpec};
use crate::prove_files::{self, FileInputs, FileRun};

/// Arguments of `crucible prove`.
#[derive(Args)]
pub struct ProveArgs {
    #[command(flatten)]
    setup: ProofSetup,
    /// Number of proofs (each with its own witness and its own r, s).
    #[arg(long, default_value = "1", value_parser = parse::size)]
    proofs: usize,
    /// Seed of the proving key's setup and of every proof's witness, r and s (default
    /// 0). With circuit files, r and s come from the OS's randomness unless a seed is
    /// given (tests only: known r and s reveal the witness).
    #[arg(long)]
    seed: Option<u64>,
    /// Also prove each with ark-groth16 (same key, circuit, r, s) and compare the
    /// compressed bytes; exit 1 on any mismatch.
    #[arg(long)]
    check: bool,
    /// Print one JSON object (reports and stats) instead of the tables.
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

impl ProveArgs {
    /// Whether each proof is verified before it is returned.
    fn verifies(&self) -> bool {
        !self.no_verify && !self.synthetic_key
    }
}

/// Most proofs one run makes (each outcome is kept until the run's report).
pub const MAX_PROOFS: usize = 1 << 20;

/// How a proof compared with ark-groth16's.
enum Check {
    Identical,
    Mismatch { ours: String, theirs: String },
    ArkFailed(String),
}

/// One proof's fate.
struct ProofResult {
    id: usize,
    device: String,
    outcome: Result<(ProofReport, Vec<u8>), String>,
    check: Option<Check>,
    /// Errors recorded while releasing device memory around this proof.
    release_errors: Vec<String>,
}

/// Proves, checks and reports; exit 1 on any failed proof or mismatch.
pub fn run(args: &ProveArgs) -> Result<ExitCode, CliError> {
    if let Some(key_flag) = args.files.key_flag() {
        let device = &args.setup.device;
        for (given, flag) in [
            (args.proofs != 1, "--proofs"),
            (device.devices.is_some(), "--devices"),
            (device.workers_per_device.is_some(), "--workers-per-device"),
            (args.synthetic_key, "--synthetic-key"),
            (args.setup.witness.is_some(), "--witness"),
            (args.setup.constraints.is_some(), "--constraints"),
            (args.setup.inputs.is_some(), "--inputs"),
            (args.synthesis_threads.is_some(), "--synthesis-threads"),
        ] {
            if given {
                return Err(CliError(format!(
                    "{flag} applies to the built-in circuit, not to {key_flag}: a key file proves one proof of its own circuit, with the witness --wtns names"
                )));
            }
        }
        if args.seed.is_some() {
            eprintln!(
                "warning: --seed fixes the proof's randomness r and s: anyone who knows them can recover the witness from the proof; leave it out except in tests"
            );
        }
        return prove_files::run(FileRun {
            setup: &args.setup,
            files: &args.files,
            seed: args.seed,
            check: args.check,
            json: args.json,
            no_verify: args.no_verify,
        });
    }
    if let Some(flag) = args.files.stray_flag() {
        return Err(CliError(format!(
            "{flag} needs a key file: --zkey c.zkey, or --pk key.bin (`crucible setup` makes one)"
        )));
    }
    args.setup.device.check_takes(
        "prove",
        Takes {
            devices: true,
            workers: true,
        },
    )?;
    let seed = args.seed.unwrap_or(0);
    let witness = args.setup.witness();
    let bits_per_mille = witness.per_mille();
    if !(1..=MAX_PROOFS).contains(&args.proofs) {
        return Err(CliError(format!(
            "--proofs must be between 1 and {MAX_PROOFS} (2^20) in one run, got {}",
            args.proofs
        )));
    }
    let setup = &args.setup;
    let constraints = setup.constraints()?;
    let Resolved {
        shape,
        selected,
        memory,
        matrices: matrix_sizes,
        ..
    } = setup.resolve()?;
    let backend = Arc::clone(&selected.backend);
    let say = |line: String| {
        if !args.json {
            println!("{line}");
        }
    };
    say(selected.reason.clone());
    // Bit rows are spread evenly: exactly constraints · p / 1000 of them.
    let mix = match bits_per_mille {
        0 => String::new(),
        p => format!(
            ", {} checking a bit (so {:.1} % of the witness is 0 or 1)",
            count(
                (constraints as u64).saturating_mul(u64::from(p)) / 1000,
                "booleanity constraint"
            ),
            f64::from(p) / 10.0
        ),
    };
    say(format!(
        "circuit: {}, {}, domain 2^{} ({} points){mix}",
        count(constraints as u64, "constraint"),
        count(setup.inputs() as u64, "public input"),
        shape.log_domain,
        shape.domain_size()
    ));

    // Every check that can fail comes before the key, which can take minutes to make.
    let backends = match &setup.device.devices {
        None => vec![Arc::clone(&backend)],
        Some(devices) => {
            let chosen = chosen_devices(&backend, Some(devices), &setup.device.probe_options()?)?;
            let labels: Vec<_> = chosen.iter().map(|b| b.info().label()).collect();
            say(format!("devices: {}", labels.join(", ")));
            chosen
        }
    };
    let workers = setup.workers_per_device() * backends.len();
    let synthesis_threads = args
        .synthesis_threads
        .unwrap_or_else(|| auto_synthesis_threads_here(workers, &shape, matrix_sizes.is_some()));
    let config = EngineConfig {
        workers_per_device: setup.workers_per_device(),
        verify: args.verifies(),
        synthesis_threads,
        witness,
        synthesis_time: Some(synthesis_time(constraints)),
        ..EngineConfig::default()
    };
    config.check()?;
    if args.synthesis_threads.is_none() {
        say(format!(
            "synthesis threads: {synthesis_threads} (two a worker, at most half of {} cores; --synthesis-threads sets it)",
            crucible_core::host::cores()
        ));
    }
    if args.synthetic_key && args.check {
        return Err(CliError(
            "--check needs a real key: a synthetic key's proofs do not verify".into(),
        ));
    }
    let (pk, key_path, key_source) = if args.synthetic_key {
        say("proving key: synthetic (pseudo-random points; proofs are not verified)".into());
        let key = synthetic_key(constraints, setup.inputs(), seed)?;
        (key, "synthetic".to_string(), "synthetic")
    } else {
        let loaded = load_key_id(&BenchKeyId {
            constraints,
            inputs: setup.inputs(),
            seed,
            bits_per_mille,
        })?;
        say(format!(
            "proving key ({}): {}",
            loaded.source_name(),
            loaded.path.display()
        ));
        let source = loaded.source_name();
        (loaded.key, loaded.path.display().to_string(), source)
    };
    let pk = Arc::new(pk);
    let circuit = BuiltIn {
        constraints,
        inputs: setup.inputs(),
        seed,
        bits_per_mille,
    };
    let ran = prove_built_in(
        &circuit,
        RunSpec {
            backends,
            pk: Arc::clone(&pk),
            device_evaluation: matrix_sizes.is_some(),
            config,
            proofs: args.proofs,
            split_peak_rss: false,
        },
        &say,
    )?;
    if let Some(memory) = &ran.memory {
        say(memory.clone());
    }
    let Ran {
        outcomes,
        stats,
        choice: ran,
        devices,
        matrices_seconds,
        released,
        ..
    } = ran;
    let mut results: Vec<ProofResult> = outcomes.into_iter().map(to_result).collect();
    if args.check {
        check_all(&mut results, &pk, |id| circuit.proof(id));
    }
    if args.json {
        let key =
            json!({ "path": key_path, "source": key_source, "matrices_seconds": matrices_seconds });
        let choice = ran.as_ref().unwrap_or(&memory.choice);
        let predicted = json!({
            "stage_and_compute_ms": choice.chosen.predicted_seconds * 1e3,
            "proofs_per_second": choice.proofs_per_second * devices as f64,
            "schedule": choice.chosen.schedule.to_string(),
            "assumes": predicted_time_assumes(&*backend),
        });
        print_json(args, &selected.reason, key, predicted, &results, &stats)?;
    } else {
        print_text(
            args,
            &results,
            &stats,
            ran.as_ref().unwrap_or(&memory.choice),
            devices,
        );
    }
    for panic in &stats.caller_panics {
        eprintln!("error: {panic}");
    }
    released?;
    let failed = !stats.caller_panics.is_empty()
        || results.iter().any(|r| {
            r.outcome.is_err()
                || !r.release_errors.is_empty()
                || matches!(r.check, Some(Check::Mismatch { .. } | Check::ArkFailed(_)))
        });
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn to_result(outcome: JobOutcome) -> ProofResult {
    let result = outcome.result.map_err(|e| e.to_string()).and_then(|out| {
        let bytes = proof_bytes(&out.proof).map_err(|e| e.to_string())?;
        Ok((out.report, bytes))
    });
    ProofResult {
        id: outcome.id as usize,
        device: outcome.device,
        outcome: result,
        check: None,
        release_errors: outcome
            .release_errors
            .iter()
            .map(ToString::to_string)
            .collect(),
    }
}

fn check_all(results: &mut [ProofResult], pk: &ProvingKey, inputs: impl Fn(usize) -> ProofInputs) {
    let bar = progress_bar(results.len() as u64, "checking against ark-groth16");
    for result in results.iter_mut() {
        bar.inc(1);
        let Ok((_, ours)) = &result.outcome else {
            continue;
        };
        let p = inputs(result.id);
        let theirs =
            ark_groth16_prove(pk, p.circuit, p.r, p.s).and_then(|proof| proof_bytes(&proof));
        result.check = Some(match theirs {
            Ok(theirs) if &theirs == ours => Check::Identical,
            Ok(theirs) => Check::Mismatch {
                ours: hex(ours),
                theirs: hex(&theirs),
            },
            Err(e) => Check::ArkFailed(e.to_string()),
        });
    }
    bar.finish_and_clear();
}

fn proof_line(r: &ProofResult, verify: bool) -> String {
    let id = r.id;
    let (report, _) = match &r.outcome {
        Ok(ok) => ok,
        Err(e) => return format!("proof {id}: FAILED on {}: {e}", r.device),
    };
    let how = format!(
        "{} on {}, {:.1} ms",
        if verify {
            "verified"
        } else {
            "not verified (--no-verify)"
        },
        report.backend,
        report.times.total().as_secs_f64() * 1e3
    );
    match &r.check {
        None => format!("proof {id}: {how}"),
        Some(Check::Identical) => format!("proof {id}: byte-identical to ark-groth16 ({how})"),
        Some(Check::Mismatch { ours, theirs }) => format!(
            "proof {id}: MISMATCH with ark-groth16 ({how}):\n  crucible:    {ours}\n  ark-groth16: {theirs}"
        ),
        Some(Check::ArkFailed(e)) => format!("proof {id}: ark-groth16 failed to prove it: {e}"),
    }
}

fn reports(results: &[ProofResult]) -> Vec<&ProofReport> {
    results
        .iter()
        .filter_map(|r| r.outcome.as_ref().ok().map(|(report, _)| report))
        .collect()
}

fn print_text(
    args: &ProveArgs,
    results: &[ProofResult],
    stats: &EngineStats,
    choice: &ScheduleChoice,
    devices: usize,
) {
    for r in results {
        println!("{}", proof_line(r, !args.no_verify));
        for e in &r.release_errors {
            println!("  release error on {}: {e}", r.device);
        }
    }
    let reports = reports(results);
    let rows: Vec<Vec<String>> = phase_stats(&reports)
        .into_iter()
        .map(|(name, s)| {
            vec![
                name.to_string(),
                format!("{:.3}", s.median_ms),
                format!("{:.3}", s.max_ms),
            ]
        })
        .collect();
    println!();
    println!("{}", table(&["phase", "median ms", "max ms"], &rows, 1));
    println!();
    println!(
        "{} ok, {} failed in {:.3} s: {:.2} proofs/second ({} per device)",
        count(stats.proofs as u64, "proof"),
        stats.failures,
        stats.wall.as_secs_f64(),
        stats.proofs_per_second(),
        count(args.setup.workers_per_device() as u64, "worker")
    );
    let planned = reports.iter().map(|r| r.bytes_planned).max().unwrap_or(0);
    let peak = reports.iter().map(|r| r.peak_bytes).max().unwrap_or(0);
    println!(
        "memory per proof: {} planned ({planned} B), {} peak ({peak} B); staged key: {} ({} B)",
        human_bytes(planned),
        human_bytes(peak),
        human_bytes(choice.chosen.key.total_bytes()),
        choice.chosen.key.total_bytes()
    );
    println!(
        "predicted: {:.2} proofs/second on the devices ({:.1} ms a proof, {} in flight a device; no more than the synthesis threads supply)",
        choice.proofs_per_second * devices as f64,
        choice.chosen.predicted_seconds * 1e3,
        choice.workers
    );
    for (i, d) in stats.devices.iter().enumerate() {
        println!(
            "{}: busy {:.1} % of the run (a proof in flight {:.3} s of {:.3} s)",
            d.label,
            100.0 * stats.busy_fraction(i),
            d.busy.as_secs_f64(),
            stats.wall.as_secs_f64()
        );
        let b = &d.budget;
        println!(
            "budget of {}: high-water {} ({} B) of capacity {} ({} B){}; workers waited {:.3} s for memory in total",
            d.label,
            human_bytes(b.high_water),
            b.high_water,
            human_bytes(b.capacity),
            b.capacity,
            if b.high_water <= b.capacity { ", within the limit" } else { ", OVER THE LIMIT" },
            b.waited.as_secs_f64()
        );
    }
    let ok = reports.len();
    if args.verifies() {
        println!(
            "{ok} of {} proofs verified with ark-groth16's verifier before being returned",
            results.len()
        );
    }
    if args.check {
        let identical = results
            .iter()
            .filter(|r| matches!(r.check, Some(Check::Identical)))
            .count();
        println!(
            "{identical} of {} proofs byte-identical to ark-groth16",
            results.len()
        );
    }
}

fn print_json(
    args: &ProveArgs,
    reason: &str,
    key: serde_json::Value,
    predicted: serde_json::Value,
    results: &[ProofResult],
    stats: &EngineStats,
) -> Result<(), CliError> {
    let proofs: Vec<_> = results
        .iter()
        .map(|r| {
            let (report, proof, error) = match &r.outcome {
                Ok((report, bytes)) => (Some(report), Some(hex(bytes)), None),
                Err(e) => (None, None, Some(e.as_str())),
            };
            let (check, ark) = match &r.check {
                None => (None, None),
                Some(Check::Identical) => (Some("byte-identical"), None),
                Some(Check::Mismatch { theirs, .. }) => (Some("mismatch"), Some(theirs.as_str())),
                Some(Check::ArkFailed(_)) => (Some("ark-groth16 failed"), None),
            };
            json!({
                "id": r.id,
                "device": r.device,
                "ok": r.outcome.is_ok(),
                "error": error,
                "report": report,
                "proof": proof,
                "check": check,
                "ark_groth16_proof": ark,
                "release_errors": r.release_errors,
            })
        })
        .collect();
    let phases: serde_json::Map<String, serde_json::Value> = phase_stats(&reports(results))
        .into_iter()
        .map(|(name, s)| {
            (
                name.to_string(),
                json!({ "median_ms": s.median_ms, "max_ms": s.max_ms }),
            )
        })
        .collect();
    let out = json!({
        "selection": reason,
        "circuit": { "constraints": args.setup.constraints, "inputs": args.setup.inputs(), "seed": args.seed.unwrap_or(0) },
        "key": key,
        "workers_per_device": args.setup.workers_per_device(),
        "verified": args.verifies(),
        "checked": args.check,
        "proofs": proofs,
        "phases": phases,
        "predicted": predicted,
        "proofs_per_second": stats.proofs_per_second(),
        "stats": stats,
    });
    let text = serde_json::to_string_pretty(&out)
        .map_err(|e| CliError(format!("cannot write JSON: {e}")))?;
    println!("{text}");
    Ok(())
}
