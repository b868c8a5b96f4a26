//! `crucible bench --op prove --proofs K`: K proofs of the built-in circuit through the
//! engine with W workers a device, as a prover serving many proofs runs them; the row
//! is proofs per second, the predicted proofs per second, how busy the device was, the
//! median of each phase and the host's peak resident memory.

use std::sync::Arc;

use crucible_core::engine::EngineConfig;
use crucible_core::fixtures::circuit::synthesis_time;
use crucible_core::groth16::ProvingKey;
use crucible_core::registry::ProbeOptions;
use crucible_core::{ProverBackend, ScalarMix};
use serde_json::json;

use crate::error::CliError;
use crate::host_memory::reset_peak_rss;
use crate::output::table;
use crate::plan::{built_in_host, built_in_matrices, MemorySummary};
use crate::proof_run::{phase_stats, prove_built_in, BuiltIn, RunSpec};

/// One throughput run of one backend at one size.
pub struct ThroughputSpec<'a> {
    /// The device.
    pub backend: &'a Arc<dyn ProverBackend>,
    /// Its probe options (the budget cap).
    pub options: &'a ProbeOptions,
    /// The circuit (its constraints are the row's size).
    pub circuit: BuiltIn,
    /// The proving key.
    pub key: Arc<ProvingKey>,
    /// Proofs to make.
    pub proofs: usize,
    /// Workers on the device.
    pub workers: usize,
    /// Whether each proof is verified (not with a synthetic key).
    pub verify: bool,
}

/// What one throughput run measured.
pub struct ThroughputRow {
    /// The backend's label (`cuda:0`).
    pub label: String,
    /// The device's name.
    pub device_name: String,
    /// Constraints.
    pub size: usize,
    /// Proofs made.
    pub proofs: usize,
    /// Proofs that failed.
    pub failures: usize,
    /// Workers on the device.
    pub workers: usize,
    /// Host threads synthesizing ahead of the device.
    pub synthesis_threads: usize,
    /// Proofs per second over the run's wall time (the first proof's synthesis, before
    /// the device has work, included).
    pub proofs_per_second: f64,
    /// Proofs per second once the pipeline is full: the proofs after the first over
    /// the time from the first's end to the last's ([`steady_rate`]), what a prover
    /// serving proofs without end sustains.
    pub steady_proofs_per_second: Option<f64>,
    /// The cost model's proofs per second for the schedule it chose.
    pub predicted_proofs_per_second: f64,
    /// Share of the run the device had a proof in flight.
    pub device_busy: f64,
    /// The schedule that ran.
    pub schedule: String,
    /// Median milliseconds of each phase of a proof.
    pub phases: Vec<(&'static str, f64)>,
    /// Seconds building the circuit's matrices, once.
    pub matrices_seconds: f64,
    /// Wall time of the proofs.
    pub wall_seconds: f64,
    /// The host's peak resident memory during the run, where the kernel reports it.
    pub host_peak_rss: Option<u64>,
    /// The same from the first proof on: the key, the matrices and the proofs in
    /// flight, without the one-time build of the matrices.
    pub host_proving_peak_rss: Option<u64>,
    /// The host memory resident at the first proof: the key and the matrices, the
    /// floor under the proving peak.
    pub host_rss_at_first_proof: Option<u64>,
}

/// Runs `spec` and measures it.
pub fn measure_throughput(spec: ThroughputSpec<'_>) -> Result<ThroughputRow, CliError> {
    let backend = spec.backend;
    let circuit = spec.circuit;
    let shape = crucible_benches::prove_shape(circuit.constraints, circuit.inputs)?;
    let matrices = built_in_matrices(
        &**backend,
        circuit.constraints,
        circuit.inputs,
        circuit.bits_per_mille,
    );
    // Refused here, before any proof, where no schedule fits the budget.
    let host = built_in_host(
        spec.workers,
        &shape,
        matrices.is_some(),
        circuit.constraints,
    );
    MemorySummary::new(
        &**backend,
        &shape,
        spec.options,
        spec.workers,
        matrices.as_ref(),
        ScalarMix::from_per_mille(circuit.bits_per_mille),
        Some(&host),
    )?;
    let synthesis_threads = host.threads as usize;
    let config = EngineConfig {
        workers_per_device: spec.workers,
        verify: spec.verify,
        synthesis_time: Some(synthesis_time(circuit.constraints)),
        synthesis_threads,
        witness: ScalarMix::from_per_mille(circuit.bits_per_mille),
        ..EngineConfig::default()
    };
    config.check()?;
    reset_peak_rss();
    let ran = prove_built_in(
        &circuit,
        RunSpec {
            backends: vec![Arc::clone(backend)],
            pk: spec.key,
            device_evaluation: matrices.is_some(),
            config,
            proofs: spec.proofs,
            split_peak_rss: true,
        },
        &|line| eprintln!("{line}"),
    )?;
    let host_proving_peak_rss = ran.proving_peak_rss;
    let host_peak_rss = host_proving_peak_rss.max(ran.setup_peak_rss);
    let host_rss_at_first_proof = ran.rss_at_first_proof;
    ran.released?;
    if let Some(failed) = ran.outcomes.iter().find_map(|o| o.result.as_ref().err()) {
        return Err(CliError::failed(format!(
            "prove at {} constraints on {}: a proof failed: {failed}",
            circuit.constraints,
            backend.info().label()
        )));
    }
    let reports: Vec<_> = ran
        .outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().ok().map(|out| &out.report))
        .collect();
    let choice = ran.choice.as_ref();
    Ok(ThroughputRow {
        label: backend.info().label(),
        device_name: backend.info().device_name.clone(),
        size: circuit.constraints,
        proofs: ran.stats.proofs,
        failures: ran.stats.failures,
        workers: spec.workers,
        synthesis_threads,
        proofs_per_second: ran.stats.proofs_per_second(),
        steady_proofs_per_second: steady_rate(&ran.ended_at),
        predicted_proofs_per_second: choice.map_or(0.0, |c| c.proofs_per_second),
        device_busy: ran.stats.busy_fraction(0),
        schedule: choice.map_or_else(String::new, |c| c.chosen.schedule.to_string()),
        phases: phase_stats(&reports)
            .into_iter()
            .map(|(name, s)| (name, s.median_ms))
            .collect(),
        matrices_seconds: ran.matrices_seconds,
        wall_seconds: ran.stats.wall.as_secs_f64(),
        host_peak_rss,
        host_proving_peak_rss,
        host_rss_at_first_proof,
    })
}

/// Nanoseconds of device time a constraint costs: the share of the run the device was
/// busy, over the proofs per second it sustained (steady where known, else the run's),
/// per constraint. The figure that compares provers of different circuit sizes.
pub fn device_ns_per_constraint(
    busy: f64,
    proofs_per_second: f64,
    constraints: usize,
) -> Option<f64> {
    (proofs_per_second > 0.0 && constraints > 0)
        .then(|| busy / proofs_per_second / constraints as f64 * 1e9)
}

impl ThroughputRow {
    /// [`device_ns_per_constraint`] of the run.
    pub fn device_ns_per_constraint(&self) -> Option<f64> {
        device_ns_per_constraint(
            self.device_busy,
            self.steady_proofs_per_second
                .unwrap_or(self.proofs_per_second),
            self.size,
        )
    }

    /// The row as a JSON object of `bench --out`.
    pub fn json(&self) -> serde_json::Value {
        let phases: serde_json::Map<String, serde_json::Value> = self
            .phases
            .iter()
            .map(|(name, ms)| (name.to_string(), json!(ms)))
            .collect();
        json!({
            "backend": self.label,
            "device": self.device_name,
            "size": self.size,
            "proofs": self.proofs,
            "failures": self.failures,
            "workers_per_device": self.workers,
            "synthesis_threads": self.synthesis_threads,
            "proofs_per_second": self.proofs_per_second,
            "steady_proofs_per_second": self.steady_proofs_per_second,
            "predicted_proofs_per_second": self.predicted_proofs_per_second,
            "device_busy": self.device_busy,
            "device_ns_per_constraint": self.device_ns_per_constraint(),
            "schedule": self.schedule,
            "phase_median_ms": phases,
            "matrices_seconds": self.matrices_seconds,
            "wall_seconds": self.wall_seconds,
            "host_peak_rss_bytes": self.host_peak_rss,
            "host_proving_peak_rss_bytes": self.host_proving_peak_rss,
            "host_rss_at_first_proof_bytes": self.host_rss_at_first_proof,
        })
    }
}

/// The rows as a text table.
pub fn throughput_table(rows: &[ThroughputRow]) -> String {
    let phase = |r: &ThroughputRow, name: &str| {
        r.phases
            .iter()
            .find(|(n, _)| *n == name)
            .map_or_else(|| "-".into(), |(_, ms)| format!("{ms:.0}"))
    };
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.label.clone(),
                r.size.to_string(),
                format!("{} x {}", r.proofs, r.workers),
                format!("{:.3}", r.proofs_per_second),
                r.steady_proofs_per_second
                    .map_or_else(|| "-".into(), |p| format!("{p:.3}")),
                format!("{:.3}", r.predicted_proofs_per_second),
                format!("{:.1} %", 100.0 * r.device_busy),
                r.device_ns_per_constraint()
                    .map_or_else(|| "-".into(), |ns| format!("{ns:.1}")),
                phase(r, "synthesize"),
                phase(r, "evaluate"),
                phase(r, "queued"),
                phase(r, "stage"),
                phase(r, "ntt"),
                phase(r, "msm"),
                r.host_peak_rss
                    .map_or_else(|| "-".into(), crucible_core::human_bytes),
                r.host_proving_peak_rss
                    .map_or_else(|| "-".into(), crucible_core::human_bytes),
            ]
        })
        .collect();
    let headers = [
        "backend",
        "constraints",
        "proofs x workers",
        "proofs/s",
        "steady",
        "predicted",
        "device busy",
        "device ns/constraint",
        "synthesize",
        "evaluate",
        "queued",
        "stage",
        "ntt",
        "msm",
        "host peak RSS",
        "proving",
    ];
    format!(
        "{}\n(proofs/s: over the whole run; steady: once the first proof has ended; phases: median ms a proof; device busy: share of the run with a proof in flight on the device; device ns/constraint: device busy over the steady proofs/s, per constraint; predicted: the cost model's proofs/s for the schedule it chose; host peak RSS: over the run, proving: from the first proof on)",
        table(&headers, &cells, 1)
    )
}

/// Proofs per second after the first proof ended: the proofs after the first over the
/// time between the first's end and the last's, from the proofs' end times in the
/// order they ended. `None` with fewer than two proofs.
pub fn steady_rate(ended_at: &[std::time::Duration]) -> Option<f64> {
    let (first, last) = (ended_at.first()?, ended_at.last()?);
    let span = last.saturating_sub(*first).as_secs_f64();
    (ended_at.len() >= 2 && span > 0.0).then(|| (ended_at.len() - 1) as f64 / span)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{device_ns_per_constraint, steady_rate};

    #[test]
    fn device_time_per_constraint_is_busy_time_over_the_rate() {
        // 0.453 proofs/s at 92.7 % busy over 2^26 constraints: 30.5 ns a constraint.
        let ns = device_ns_per_constraint(0.927, 0.453, 1 << 26).expect("a rate");
        assert!((ns - 30.49).abs() < 0.01, "{ns}");
        assert_eq!(device_ns_per_constraint(0.9, 0.0, 1 << 20), None);
        assert_eq!(device_ns_per_constraint(0.9, 1.0, 0), None);
    }

    #[test]
    fn the_steady_rate_leaves_out_the_pipeline_fill() {
        let at = |s: &[f64]| {
            s.iter()
                .map(|&x| Duration::from_secs_f64(x))
                .collect::<Vec<_>>()
        };
        // The first proof ends at 10 s, then one every 2.5 s: 0.4 proofs/s, where the
        // whole run's 5 proofs in 20 s say 0.25.
        let rate = steady_rate(&at(&[10.0, 12.5, 15.0, 17.5, 20.0])).unwrap();
        assert!((rate - 0.4).abs() < 1e-9, "{rate}");
        assert_eq!(steady_rate(&at(&[3.0])), None);
        assert_eq!(steady_rate(&at(&[])), None);
        assert_eq!(steady_rate(&at(&[2.0, 2.0])), None);
    }
}
