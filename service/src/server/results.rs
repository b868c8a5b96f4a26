//! The API's answers: errors as gRPC statuses, finished engine jobs as results.

use ark_serialize::CanonicalSerialize;
use crucible_core::engine::JobOutcome;
use crucible_core::{Error, ProofShape};
use tonic::Status;

use crate::proto::{self, JobResult, JobState};
use crate::ServiceError;

pub(super) fn status_of(e: ServiceError) -> Status {
    match &e {
        ServiceError::Invalid(_) => Status::invalid_argument(e.to_string()),
        ServiceError::Limit(_) => Status::resource_exhausted(e.to_string()),
        ServiceError::Cancelled(_) => Status::cancelled(e.to_string()),
        ServiceError::Prover(p) => match p.root() {
            Error::OutOfBudget { .. } => Status::resource_exhausted(e.to_string()),
            Error::InvalidInput(_) | Error::Synthesis(_) => Status::invalid_argument(e.to_string()),
            Error::Unavailable { .. } => Status::unavailable(e.to_string()),
            _ => Status::internal(e.to_string()),
        },
        _ => Status::internal(e.to_string()),
    }
}

pub(super) fn failed(error: String, phase: &str) -> JobResult {
    JobResult {
        state: JobState::Failed.into(),
        error,
        failed_phase: phase.to_string(),
        ..JobResult::default()
    }
}

pub(super) fn compressed(value: &impl CanonicalSerialize) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::with_capacity(value.compressed_size());
    value
        .serialize_compressed(&mut bytes)
        .map_err(|e| format!("cannot serialize the proof: {e}"))?;
    Ok(bytes)
}

/// The largest witness of a key of `shape`: a `.wtns` or an assignment of its
/// variables, 32 bytes each, and their headers.
pub(super) fn max_witness_bytes(shape: &ProofShape) -> u64 {
    (shape.num_variables() as u64)
        .saturating_mul(32)
        .saturating_add(1024)
}

/// The largest `Submit` or `Prove` request of a key of `shape`: its largest witness,
/// the key id (at most 128 bytes) and protobuf's tags and lengths.
pub(super) fn max_submit_bytes(shape: &ProofShape) -> u64 {
    max_witness_bytes(shape).saturating_add(256)
}

/// A finished engine job as the API's result.
pub(super) fn job_result(outcome: JobOutcome) -> JobResult {
    let out = match outcome.result {
        Ok(out) => out,
        Err(e) => {
            let phase = e.phase().map(|p| p.to_string()).unwrap_or_default();
            return failed(format!("on {}: {e}", outcome.device), &phase);
        }
    };
    let encoded = compressed(&out.proof).and_then(|proof| {
        let inputs = out
            .public_inputs
            .iter()
            .map(compressed)
            .collect::<Result<Vec<_>, _>>()?;
        Ok((proof, inputs))
    });
    let (proof, public_inputs) = match encoded {
        Ok(e) => e,
        Err(e) => return failed(e, ""),
    };
    let r = &out.report;
    JobResult {
        state: JobState::Done.into(),
        proof,
        public_inputs,
        report: Some(proto::ProofReport {
            backend: r.backend.clone(),
            device: r.device.clone(),
            log_domain: r.shape.log_domain,
            phases: r
                .times
                .named()
                .iter()
                .map(|(phase, time)| proto::PhaseTime {
                    phase: phase.to_string(),
                    ms: time.as_secs_f64() * 1e3,
                })
                .collect(),
            bytes_planned: r.bytes_planned,
            peak_bytes: r.peak_bytes,
            verified: r.verified,
        }),
        ..JobResult::default()
    }
}
