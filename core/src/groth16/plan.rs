//! The memory plans of the resident schedule, ark-groth16's reduction: the shortcuts
//! most callers want (every schedule's plans: [`ScheduledPlan`](super::ScheduledPlan)).

use super::schedule::{key_plan_for, proof_plan_for};
use super::{Reduction, Schedule};
use crate::PairingCurve;
use crate::{MemoryPlan, ProofShape, ProverBackend, Result};

/// Plan for the staged proving key with every query resident.
pub fn key_plan<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    shape: &ProofShape,
) -> Result<MemoryPlan> {
    key_plan_for(
        backend,
        shape,
        Reduction::Libsnark,
        &Schedule::RESIDENT,
        None,
    )
}

/// Plan for one proof with everything resident: the three domain vectors, the
/// assignment, and the scratch every NTT and MSM of the proof needs.
pub fn proof_plan<E: PairingCurve>(
    backend: &dyn ProverBackend<E>,
    shape: &ProofShape,
) -> Result<MemoryPlan> {
    proof_plan_for(
        backend,
        shape,
        Reduction::Libsnark,
        &Schedule::RESIDENT,
        None,
    )
}
