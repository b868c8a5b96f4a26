//! Prometheus metrics of the server and the workers: proofs, failures by phase,
//! per-phase latency, budget in use, queue depth.

use std::collections::HashMap;
use std::sync::Arc;

use crucible_core::engine::JobOutcome;
use crucible_core::ProverBackend;
use prometheus::{
    exponential_buckets, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry,
};

/// Every metric crucible exports, in one registry.
pub struct Metrics {
    /// The registry the exporter encodes.
    pub registry: Registry,
    /// `crucible_proofs_total{key,device}`: proofs made and verified.
    pub proofs: IntCounterVec,
    /// `crucible_failures_total{key,phase}`: jobs that ended failed, by the prover
    /// phase that failed (`evicted`, `lost` or `other` outside a prover phase).
    pub failures: IntCounterVec,
    /// `crucible_phase_seconds{phase}`: wall time of each phase of each proof.
    pub phase_seconds: HistogramVec,
    /// `crucible_job_seconds{key}`: from submission (or claim) to the end of a job.
    pub job_seconds: HistogramVec,
    /// `crucible_busy_total{key}`: submissions refused because the key's queue was full.
    pub busy: IntCounterVec,
    /// `crucible_cancelled_total{key}`: jobs cancelled before they started.
    pub cancelled: IntCounterVec,
    /// `crucible_queue_depth{key}`: jobs waiting for the engine.
    pub queue_depth: IntGaugeVec,
    /// `crucible_in_flight{key}`: jobs the engine is proving.
    pub in_flight: IntGaugeVec,
    /// `crucible_budget_in_use_bytes{device}`: device bytes leased now.
    pub budget_in_use: IntGaugeVec,
    /// `crucible_budget_capacity_bytes{device}`: each device budget's capacity.
    pub budget_capacity: IntGaugeVec,
    /// `crucible_queue_jobs{state}`: jobs in the shared Postgres queue, by state.
    pub queue_jobs: IntGaugeVec,
    /// `crucible_queue_requeued_total{reason}`: jobs a worker returned to the queue
    /// (`failed`, `lost`: another worker's lease expired, `released`: shutdown).
    pub requeued: IntCounterVec,
    /// `crucible_queue_results_dropped_total`: proofs not committed because the
    /// lease had been lost meanwhile (another worker owns the job now).
    pub results_dropped: IntCounterVec,
}

fn counter(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    let metric = IntCounterVec::new(Opts::new(name, help), labels).expect("valid metric");
    registry
        .register(Box::new(metric.clone()))
        .expect("metric registered once");
    metric
}

fn gauge(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
    let metric = IntGaugeVec::new(Opts::new(name, help), labels).expect("valid metric");
    registry
        .register(Box::new(metric.clone()))
        .expect("metric registered once");
    metric
}

fn histogram(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> HistogramVec {
    // 100 µs to about 100 s, ×4 a bucket.
    let buckets = exponential_buckets(1e-4, 4.0, 11).expect("valid buckets");
    let metric = HistogramVec::new(HistogramOpts::new(name, help).buckets(buckets), labels)
        .expect("valid metric");
    registry
        .register(Box::new(metric.clone()))
        .expect("metric registered once");
    metric
}

impl Metrics {
    /// A fresh registry with every metric at zero.
    pub fn new() -> Arc<Self> {
        let r = Registry::new();
        Arc::new(Metrics {
            proofs: counter(
                &r,
                "crucible_proofs_total",
                "Proofs made and verified.",
                &["key", "device"],
            ),
            failures: counter(
                &r,
                "crucible_failures_total",
                "Jobs that ended failed, by phase.",
                &["key", "phase"],
            ),
            phase_seconds: histogram(
                &r,
                "crucible_phase_seconds",
                "Wall time of each proof phase.",
                &["phase"],
            ),
            job_seconds: histogram(
                &r,
                "crucible_job_seconds",
                "Submission (or claim) to the end of a job.",
                &["key"],
            ),
            busy: counter(
                &r,
                "crucible_busy_total",
                "Submissions refused because the key's queue was full.",
                &["key"],
            ),
            cancelled: counter(
                &r,
                "crucible_cancelled_total",
                "Jobs cancelled before they started.",
                &["key"],
            ),
            queue_depth: gauge(
                &r,
                "crucible_queue_depth",
                "Jobs waiting for the engine.",
                &["key"],
            ),
            in_flight: gauge(
                &r,
                "crucible_in_flight",
                "Jobs the engine is proving.",
                &["key"],
            ),
            budget_in_use: gauge(
                &r,
                "crucible_budget_in_use_bytes",
                "Device bytes leased now.",
                &["device"],
            ),
            budget_capacity: gauge(
                &r,
                "crucible_budget_capacity_bytes",
                "Capacity of each device budget.",
                &["device"],
            ),
            queue_jobs: gauge(
                &r,
                "crucible_queue_jobs",
                "Jobs in the shared job queue, by state.",
                &["state"],
            ),
            requeued: counter(
                &r,
                "crucible_queue_requeued_total",
                "Jobs returned to the shared queue.",
                &["reason"],
            ),
            results_dropped: counter(
                &r,
                "crucible_queue_results_dropped_total",
                "Proofs dropped because their lease was lost.",
                &["worker"],
            ),
            registry: r,
        })
    }

    /// Counts one job's outcome and observes its phases.
    pub fn record_outcome(&self, key: &str, outcome: &JobOutcome) {
        match &outcome.result {
            Ok(out) => {
                self.proofs
                    .with_label_values(&[key, outcome.device.as_str()])
                    .inc();
                for (phase, time) in out.report.times.named() {
                    self.phase_seconds
                        .with_label_values(&[phase])
                        .observe(time.as_secs_f64());
                }
            }
            Err(e) => {
                let phase = e
                    .phase()
                    .map_or_else(|| "other".to_string(), |p| p.to_string());
                self.failures
                    .with_label_values(&[key, phase.as_str()])
                    .inc();
            }
        }
    }

    /// Sets the budget gauges from the devices' budgets.
    pub fn observe_devices(&self, backends: &[Arc<dyn ProverBackend>]) {
        for b in backends {
            let label = b.info().label();
            let budget = b.budget();
            self.budget_in_use
                .with_label_values(&[label.as_str()])
                .set(gauge_value(budget.in_use()));
            self.budget_capacity
                .with_label_values(&[label.as_str()])
                .set(gauge_value(budget.capacity()));
        }
    }

    /// Removes every series labelled with `key` (a key that was evicted), so the
    /// exposition does not grow with every key ever loaded.
    pub fn forget_key(&self, key: &str) {
        let families = self.registry.gather();
        for family in &families {
            for metric in family.get_metric() {
                let labels = metric.get_label();
                if !labels.iter().any(|l| l.name() == "key" && l.value() == key) {
                    continue;
                }
                let series: HashMap<&str, &str> =
                    labels.iter().map(|l| (l.name(), l.value())).collect();
                let _ = match family.name() {
                    "crucible_proofs_total" => self.proofs.remove(&series),
                    "crucible_failures_total" => self.failures.remove(&series),
                    "crucible_job_seconds" => self.job_seconds.remove(&series),
                    "crucible_busy_total" => self.busy.remove(&series),
                    "crucible_cancelled_total" => self.cancelled.remove(&series),
                    "crucible_queue_depth" => self.queue_depth.remove(&series),
                    "crucible_in_flight" => self.in_flight.remove(&series),
                    _ => Ok(()),
                };
            }
        }
    }

    /// The text exposition format.
    pub fn encode(&self) -> String {
        prometheus::TextEncoder::new()
            .encode_to_string(&self.registry.gather())
            .unwrap_or_else(|e| format!("# cannot encode metrics: {e}\n"))
    }
}

/// A count as a gauge value (saturating: a gauge is an `i64`).
pub fn gauge_value(n: impl TryInto<i64>) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}
