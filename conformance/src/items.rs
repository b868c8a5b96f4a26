//! Plan items of the suite's own buffers (the cases allocate from them), and the plans
//! made of them.

use crucible_core::{MemoryPlan, PlanKey, ProverBackend, ScratchNeed};

const OWNER: &str = "conformance";

/// A scalar buffer under test.
pub const X: PlanKey = PlanKey::new(OWNER, "x");
/// A second scalar buffer under test.
pub const Y: PlanKey = PlanKey::new(OWNER, "y");
/// The first operand of a pointwise case.
pub const A: PlanKey = PlanKey::new(OWNER, "a");
/// The second operand of a pointwise case.
pub const B: PlanKey = PlanKey::new(OWNER, "b");
/// MSM bases.
pub const BASES: PlanKey = PlanKey::new(OWNER, "bases");
/// MSM scalars.
pub const SCALARS: PlanKey = PlanKey::new(OWNER, "scalars");
/// G1 bases of a mixed case.
pub const G1_BASES: PlanKey = PlanKey::new(OWNER, "g1");
/// G2 bases of a mixed case.
pub const G2_BASES: PlanKey = PlanKey::new(OWNER, "g2");
/// Factors a case multiplies scalars by.
pub const FACTORS: PlanKey = PlanKey::new(OWNER, "factors");
/// A plan larger than every budget.
pub const HUGE: PlanKey = PlanKey::new(OWNER, "huge");
/// A key no plan holds.
pub const NOT_IN_PLAN: PlanKey = PlanKey::new(OWNER, "not_in_plan");
/// A sparse matrix's row starts.
pub const ROW_STARTS: PlanKey = PlanKey::new(OWNER, "row_starts");
/// A sparse matrix's entries.
pub const ENTRIES: PlanKey = PlanKey::new(OWNER, "entries");
/// Streamed chunk buffers.
pub const CHUNK: PlanKey = PlanKey::new(OWNER, "chunk");

/// Bytes of a buffer for a case's plan (an overflow, impossible at the suite's sizes,
/// becomes a plan no budget holds, which the case reports).
pub fn bytes<E: crucible_core::PairingCurve>(
    backend: &dyn crucible_core::ProverBackend<E>,
    kind: crucible_core::ElementKind,
    len: usize,
) -> u64 {
    backend
        .buffer_bytes(kind, len, crucible_core::BufferUse::Resident)
        .unwrap_or(u64::MAX)
}

/// A plan for scalar buffers `(item, length)` plus the scratch of `need`.
pub fn scalar_plan<E: crucible_core::PairingCurve>(
    backend: &dyn ProverBackend<E>,
    buffers: &[(crucible_core::PlanKey, usize)],
    need: ScratchNeed<E::ScalarField>,
) -> MemoryPlan {
    let mut plan = MemoryPlan::new("conformance");
    for (name, len) in buffers {
        plan.item(
            *name,
            bytes(backend, crucible_core::ElementKind::Scalar, *len),
        );
    }
    plan.merge(&backend.scratch_plan(&need));
    plan
}
