//! A proof's predicted time under a schedule, from the backend's cost model.

use super::{DomainVectors, Evaluation, MatrixSizes, Query, Schedule};
use crate::groth16::Reduction;
use crate::PairingCurve;
use crate::{ElementKind, ProofShape, ProverBackend, ScalarMix};

/// A proof's predicted seconds: its latency, and the device's compute and copies in it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prediction {
    /// Stage + compute, start to end.
    pub latency: f64,
    /// Transforms, sparse products and MSMs.
    pub compute: f64,
    /// Host-to-device copies.
    pub copy: f64,
}

/// Predicted seconds of one proof under `schedule` (`matrices`: the circuit's, for a
/// device evaluation) whose witness is of `witness`.
pub fn predict<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    shape: &ProofShape,
    reduction: Reduction,
    schedule: &Schedule,
    matrices: Option<&MatrixSizes>,
    witness: ScalarMix,
) -> Prediction {
    let model = backend.cost_model();
    let n = shape.domain_size();
    let scalar_bytes = backend.element_bytes(ElementKind::Scalar);
    let ntt = f64::from(reduction.transforms()) * model.ntt_seconds(shape.log_domain);
    let z_bytes = shape.num_variables() as u64 * scalar_bytes;
    let (staging, mut copy, sparse) = match (schedule.evaluation, matrices) {
        // Only z crosses the bus, before anything can run; then the products.
        (Evaluation::Device, Some(m)) => {
            let z = model.stage_seconds(z_bytes);
            let sparse = model.sparse_seconds(m.product_entries());
            (z + sparse, z, sparse)
        }
        // z, then each run of each matrix, staged while nothing else runs.
        (Evaluation::DeviceStreamed { chunk }, Some(m)) => {
            let copied = model.stage_seconds(z_bytes + m.streamed_bytes(chunk, scalar_bytes));
            let sparse = model.sparse_seconds(m.product_entries());
            (copied + sparse, copied, sparse)
        }
        _ => {
            // a, b, c and z; with a copy stream the later vectors hide behind the
            // transforms of the earlier ones, unless they wait for a buffer
            // (sequenced).
            let vectors = model.stage_seconds(3 * n as u64 * scalar_bytes + z_bytes);
            let hidden = match (model.overlaps_staging, schedule.domain) {
                (false, _) => 0.0,
                (true, DomainVectors::Resident) => 0.5,
                (true, DomainVectors::Sequenced) => 0.25,
            };
            (vectors * (1.0 - hidden), vectors, 0.0)
        }
    };
    let mut compute = ntt + sparse;
    let mut msm = 0.0;
    for q in Query::ALL {
        let terms = q.msm_terms(shape, reduction);
        let g2 = q.kind() == ElementKind::G2;
        let mix = q.scalars(witness);
        if schedule.resident.contains(q) || terms == 0 {
            msm += model.msm_seconds(terms, g2, mix);
            compute += model.msm_seconds(terms, g2, mix);
            continue;
        }
        let chunk = schedule.chunk.max(1);
        let full = terms / chunk;
        let rest = terms % chunk;
        let chunks =
            full as f64 * model.msm_seconds(chunk, g2, mix) + model.msm_seconds(rest, g2, mix);
        let point = backend.element_bytes(q.kind());
        let bases = model.stream_seconds(terms as u64 * point);
        msm += if model.overlaps_staging {
            // The first chunk's copy is not hidden; then each copy runs beside an MSM.
            chunks.max(bases) + model.stream_seconds(chunk.min(terms) as u64 * point)
        } else {
            chunks + bases
        };
        compute += chunks;
        copy += bases;
    }
    Prediction {
        latency: ntt + staging + msm,
        compute,
        copy,
    }
}
