//! `crucible prove` on the built-in benchmark circuit: K proofs through the engine,
//! each verified, optionally compared byte for byte with ark-groth16; a table of the
//! phases, or one JSON object.

use std::sync::Arc;

use crucible_benches::reference::{ark_groth16_prove, hex, proof_bytes};
use crucible_core::engine::{EngineConfig, EngineStats, JobOutcome};
use crucible_core::fixtures::circuit::synthesis_time;
use crucible_core::fixtures::key_cache::BenchKeyId;
use crucible_core::fixtures::synthetic_key::synthetic_key;
use crucible_core::groth16::schedule::ScheduleChoice;
use crucible_core::groth16::ProvingKey;
use crucible_core::report::ProofReport;
use crucible_core::synthesis_threads::auto_synthesis_threads_here;
use crucible_core::{human_bytes, ProverBackend};
use serde_json::json;

use crate::devices::chosen_devices;
use crate::error::CliError;
use crate::output::{count, load_key_id, predicted_time_assumes, progress_bar, table};
use crate::parse::Devices;
use crate::plan::{ProofSetup, Resolved};
use crate::proof_run::{phase_stats, prove_built_in, BuiltIn, ProofInputs, Ran, RunSpec};
use crate::sink::Sink;

/// The options of `crucible prove` the built-in circuit takes, checked.
pub struct BuiltInRun<'a> {
    /// The circuit's size, the backend and its workers.
    pub setup: &'a ProofSetup,
    /// `--devices`.
    pub devices: Option<&'a Devices>,
    /// Proofs to make.
    pub proofs: usize,
    /// Seed of the key and of every proof's witness, r and s.
    pub seed: u64,
    /// `--check`.
    pub check: bool,
    /// Whether each proof is verified before it is returned.
    pub verify: bool,
    /// `--synthesis-threads`.
    pub synthesis_threads: Option<usize>,
    /// `--synthetic-key`.
    pub synthetic_key: bool,
}

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

impl ProofResult {
    fn failed(&self) -> bool {
        self.outcome.is_err()
            || !self.release_errors.is_empty()
            || matches!(
                self.check,
                Some(Check::Mismatch { .. } | Check::ArkFailed(_))
            )
    }
}

/// The proving key and where it came from.
struct Key {
    pk: Arc<ProvingKey>,
    path: String,
    source: &'static str,
}

/// What the run proved with, for the report.
struct Setting<'a> {
    run: &'a BuiltInRun<'a>,
    backend: Arc<dyn ProverBackend>,
    reason: String,
    plan: ScheduleChoice,
    key: Key,
}

/// Proves `run.proofs` proofs, saying each step to `sink`; whether every one was
/// made, verified and (with `--check`) identical to ark-groth16's.
pub fn run(run: BuiltInRun<'_>, sink: Sink) -> Result<bool, CliError> {
    let setup = run.setup;
    let constraints = setup.constraints()?;
    let witness = setup.witness();
    let Resolved {
        shape,
        selected,
        memory,
        matrices,
        ..
    } = setup.resolve()?;
    sink.say(&selected.reason);
    sink.say(circuit_line(
        setup,
        constraints,
        shape.log_domain,
        shape.domain_size(),
    ));
    // Every check that can fail comes before the key, which can take minutes to make.
    let backends = match run.devices {
        None => vec![Arc::clone(&selected.backend)],
        Some(devices) => {
            let options = setup.backend.probe_options()?;
            let chosen = chosen_devices(&selected.backend, Some(devices), &options)?;
            let labels: Vec<_> = chosen.iter().map(|b| b.info().label()).collect();
            sink.say(format!("devices: {}", labels.join(", ")));
            chosen
        }
    };
    let workers = setup.workers_per_device() * backends.len();
    let synthesis_threads = run
        .synthesis_threads
        .unwrap_or_else(|| auto_synthesis_threads_here(workers, &shape, matrices.is_some()));
    let config = EngineConfig {
        workers_per_device: setup.workers_per_device(),
        verify: run.verify,
        synthesis_threads,
        witness,
        synthesis_time: Some(synthesis_time(constraints)),
        ..EngineConfig::default()
    };
    config.check().map_err(|e| CliError::usage(e.to_string()))?;
    if run.synthesis_threads.is_none() {
        sink.say(format!(
            "synthesis threads: {synthesis_threads} (two a worker, at most half of {} cores; --synthesis-threads sets it)",
            crucible_core::host::cores()
        ));
    }
    let circuit = BuiltIn {
        constraints,
        inputs: setup.inputs(),
        seed: run.seed,
        bits_per_mille: witness.per_mille(),
    };
    let key = key(&run, &circuit, sink)?;
    let ran = prove_built_in(
        &circuit,
        RunSpec {
            backends,
            pk: Arc::clone(&key.pk),
            device_evaluation: matrices.is_some(),
            config,
            proofs: run.proofs,
            split_peak_rss: false,
        },
        &|line| sink.say(line),
    )?;
    if let Some(memory) = &ran.memory {
        sink.say(memory);
    }
    let Ran {
        outcomes,
        stats,
        choice,
        devices,
        matrices_seconds,
        released,
        ..
    } = ran;
    let mut results: Vec<ProofResult> = outcomes.into_iter().map(to_result).collect();
    if run.check {
        check_all(&mut results, &key.pk, |id| circuit.proof(id));
    }
    let setting = Setting {
        run: &run,
        backend: selected.backend,
        reason: selected.reason,
        plan: choice.unwrap_or(memory.choice),
        key,
    };
    if sink.json() {
        sink.document(&json_report(
            &setting,
            matrices_seconds,
            devices,
            &results,
            &stats,
        ))?;
    } else {
        print_text(&setting, &results, &stats, devices);
    }
    for panic in &stats.caller_panics {
        eprintln!("error: {panic}");
    }
    released?;
    Ok(stats.caller_panics.is_empty() && !results.iter().any(ProofResult::failed))
}

/// `circuit: N constraints, M public inputs, domain 2^k (P points)`, and the share of
/// booleanity constraints where the witness has bits.
fn circuit_line(setup: &ProofSetup, constraints: usize, log_domain: u32, points: usize) -> String {
    // Bit rows are spread evenly: exactly constraints · p / 1000 of them.
    let mix = match setup.witness().per_mille() {
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
    format!(
        "circuit: {}, {}, domain 2^{log_domain} ({points} points){mix}",
        count(constraints as u64, "constraint"),
        count(setup.inputs() as u64, "public input"),
    )
}

/// The synthetic key, or the benchmark key from the key cache (made when missing).
fn key(run: &BuiltInRun<'_>, circuit: &BuiltIn, sink: Sink) -> Result<Key, CliError> {
    if run.synthetic_key {
        sink.say("proving key: synthetic (pseudo-random points; proofs are not verified)");
        let pk = synthetic_key(circuit.constraints, circuit.inputs, circuit.seed)?;
        return Ok(Key {
            pk: Arc::new(pk),
            path: "synthetic".into(),
            source: "synthetic",
        });
    }
    let loaded = load_key_id(&BenchKeyId {
        constraints: circuit.constraints,
        inputs: circuit.inputs,
        seed: circuit.seed,
        bits_per_mille: circuit.bits_per_mille,
    })?;
    sink.say(format!(
        "proving key ({}): {}",
        loaded.source_name(),
        loaded.path.display()
    ));
    Ok(Key {
        source: loaded.source_name(),
        path: loaded.path.display().to_string(),
        pk: Arc::new(loaded.key),
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

fn print_text(setting: &Setting<'_>, results: &[ProofResult], stats: &EngineStats, devices: usize) {
    let (run, choice) = (setting.run, &setting.plan);
    for r in results {
        println!("{}", proof_line(r, run.verify));
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
        count(run.setup.workers_per_device() as u64, "worker")
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
    if run.verify {
        println!(
            "{ok} of {} proofs verified with ark-groth16's verifier before being returned",
            results.len()
        );
    }
    if run.check {
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

fn json_report(
    setting: &Setting<'_>,
    matrices_seconds: f64,
    devices: usize,
    results: &[ProofResult],
    stats: &EngineStats,
) -> serde_json::Value {
    let (run, choice) = (setting.run, &setting.plan);
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
    json!({
        "selection": setting.reason,
        "circuit": { "constraints": run.setup.constraints, "inputs": run.setup.inputs(), "seed": run.seed },
        "key": { "path": setting.key.path, "source": setting.key.source, "matrices_seconds": matrices_seconds },
        "workers_per_device": run.setup.workers_per_device(),
        "verified": run.verify,
        "checked": run.check,
        "proofs": proofs,
        "phases": phases,
        "predicted": {
            "stage_and_compute_ms": choice.chosen.predicted_seconds * 1e3,
            "proofs_per_second": choice.proofs_per_second * devices as f64,
            "schedule": choice.chosen.schedule.to_string(),
            "assumes": predicted_time_assumes(&*setting.backend),
        },
        "proofs_per_second": stats.proofs_per_second(),
        "stats": stats,
    })
}
