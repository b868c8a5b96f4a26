//! A schedule with its exact plans and its predicted time and rate.

use super::{key_plan_for, predict, proof_plan_for, Evaluation, MatrixSizes, Schedule};
use crate::groth16::Reduction;
use crate::host_stages::HostStages;
use crate::PairingCurve;
use crate::{MemoryPlan, ProofShape, ProverBackend, Result, ScalarMix};

/// A schedule with its exact plans and its predicted time.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ScheduledPlan {
    /// The schedule.
    pub schedule: Schedule,
    /// The staged key's plan (its resident queries).
    pub key: MemoryPlan,
    /// One proof's plan (domain vectors, chunk buffers, scratch).
    pub proof: MemoryPlan,
    /// Predicted stage + compute seconds of one proof (its latency).
    pub predicted_seconds: f64,
    /// Of which the device's compute (transforms, products, MSMs).
    pub compute_seconds: f64,
    /// And the copies from the host (vectors, streamed bases), which a backend with a
    /// copy stream runs beside another proof's compute.
    pub copy_seconds: f64,
    /// Matrix entries a proof's evaluation reads on the host: 0 where the device
    /// evaluates (or the circuit's matrices are not known).
    pub host_entries: u64,
}

impl ScheduledPlan {
    /// The plans of `schedule` for a key of `shape` (with `matrices` where the
    /// circuit's are known) on `backend` (the schedule as the key runs it:
    /// [`Schedule::for_shape`]), its time predicted for witnesses of `witness`.
    pub fn new<E: PairingCurve>(
        backend: &dyn ProverBackend<E>,
        shape: &ProofShape,
        reduction: Reduction,
        schedule: Schedule,
        matrices: Option<&MatrixSizes>,
        witness: ScalarMix,
    ) -> Result<ScheduledPlan> {
        let schedule = schedule.for_shape(shape, reduction);
        schedule.validate(matrices)?;
        let p = predict(backend, shape, reduction, &schedule, matrices, witness);
        let host_entries = match (schedule.evaluation, matrices) {
            (Evaluation::Host, Some(m)) => m.entries[..m.staged()].iter().map(|e| *e as u64).sum(),
            _ => 0,
        };
        Ok(ScheduledPlan {
            host_entries,
            key: key_plan_for(backend, shape, reduction, &schedule, matrices)?,
            proof: proof_plan_for(backend, shape, reduction, &schedule, matrices)?,
            predicted_seconds: p.latency,
            compute_seconds: p.compute,
            copy_seconds: p.copy,
            schedule,
        })
    }

    /// Predicted proofs per second with `workers` proofs in flight at once on one
    /// device: each proof takes its latency, and proofs overlap up to the device's
    /// own limit, its compute or, with a copy stream, its copies, whichever is longer
    /// (without one, copies and compute take turns). So two streamed proofs can beat
    /// one resident proof at a time, where the resident schedule fits only one. With
    /// the `host`'s stages, no more than the host supplies (its synthesis, and the
    /// evaluation where this schedule leaves it to the host).
    pub fn proofs_per_second(
        &self,
        workers: usize,
        overlaps_staging: bool,
        host: Option<&HostStages>,
    ) -> f64 {
        let device = if overlaps_staging {
            self.compute_seconds.max(self.copy_seconds)
        } else {
            self.compute_seconds + self.copy_seconds
        };
        let latency = self.predicted_seconds.max(device).max(1e-12);
        let rate = (workers.max(1) as f64 / latency).min(1.0 / device.max(1e-12));
        host.map_or(rate, |h| rate.min(h.proofs_per_second(self.host_entries)))
    }

    /// Bytes of the key and `workers` proofs at once.
    pub fn bytes_for(&self, workers: usize) -> u64 {
        self.proof
            .total_bytes()
            .saturating_mul(workers as u64)
            .saturating_add(self.key.total_bytes())
    }
}
