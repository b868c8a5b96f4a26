//! The memory plans of a proof: one for the proving key, one per proof.

use super::Reduction;
use crate::{ElementKind, MemoryPlan, ProofShape, ProverBackend, ScratchNeed};

/// Plan for a staged arkworks key (ark-groth16's reduction).
pub fn key_plan(backend: &dyn ProverBackend, shape: &ProofShape) -> MemoryPlan {
    key_plan_for(backend, shape, Reduction::Libsnark)
}

/// Plan for one proof with an arkworks key (ark-groth16's reduction).
pub fn proof_plan(backend: &dyn ProverBackend, shape: &ProofShape) -> MemoryPlan {
    proof_plan_for(backend, shape, Reduction::Libsnark)
}

/// Plan for the staged proving key: every query of the key, as device bases.
pub fn key_plan_for(
    backend: &dyn ProverBackend,
    shape: &ProofShape,
    reduction: Reduction,
) -> MemoryPlan {
    let vars = shape.num_variables();
    let g1 = |len: usize| backend.buffer_bytes(ElementKind::G1, len);
    let mut plan = MemoryPlan::new(format!("proving key on {}", backend.info().label()));
    plan.item("a_query", g1(vars))
        .item("b_g1_query", g1(vars))
        .item("h_query", g1(reduction.h_len(shape.domain_size())))
        .item("l_query", g1(shape.num_witness))
        .item("b_g2_query", backend.buffer_bytes(ElementKind::G2, vars));
    plan
}

/// Plan for one proof: the three domain vectors, the assignment, and the scratch
/// every NTT and MSM of the proof needs.
pub fn proof_plan_for(
    backend: &dyn ProverBackend,
    shape: &ProofShape,
    reduction: Reduction,
) -> MemoryPlan {
    let n = shape.domain_size();
    let vars = shape.num_variables();
    let scalars = |len: usize| backend.buffer_bytes(ElementKind::Scalar, len);
    let mut plan = MemoryPlan::new(format!(
        "proof of 2^{} domain on {}",
        shape.log_domain,
        backend.info().label()
    ));
    plan.item("a", scalars(n))
        .item("b", scalars(n))
        .item("c", scalars(n))
        .item("z", scalars(vars));
    let need = ScratchNeed {
        ntt: Some(shape.domain()),
        msm_g1: reduction.h_len(n).max(vars - 1).max(shape.num_witness),
        msm_g2: vars - 1,
    };
    plan.merge(&backend.scratch_plan(&need));
    plan
}
