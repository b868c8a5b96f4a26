//! What the schedule tests plan for: a backend that only plans (fixed element sizes,
//! a scratch plan that grows with what it is asked for, a cost model of the test's
//! choosing, every device operation refused), one shape and its matrices.

use std::sync::Arc;

use super::MatrixSizes;
use crate::{
    BackendInfo, BufferId, BufferUse, CostModel, DeviceBudget, DeviceSync, Domain, ElementKind,
    Error, Fr, G1Affine, G1Buf, G1Projective, G2Affine, G2Buf, G2Projective, HostSync, Lease,
    MemoryPlan, MsmSpan, NttKind, PlanKey, ProofShape, ProverBackend, Result, ScalarBuf,
    ScratchNeed,
};

/// 1000 constraints, the one and two public inputs, 997 witness variables: a domain
/// of 1024, 1000 variables, an h query of 1023 points (ark-groth16's reduction).
pub fn shape() -> ProofShape {
    ProofShape::new(1000, 3, 997).unwrap()
}

/// Matrices of `shape()`'s size: 4500 entries, C only if `has_c`.
pub fn matrices(has_c: bool) -> MatrixSizes {
    MatrixSizes {
        rows: [1003, 1000, 1000],
        entries: [2000, 1500, 1000],
        coefficients: [5, 4, 3],
        has_c,
        longest_row: 4,
    }
}

/// Bytes of a scalar, a G1 point, a G2 point and an index word on this backend.
pub const SCALAR: u64 = 32;
pub const G1: u64 = 96;
pub const G2: u64 = 192;
pub const INDEX: u64 = 4;

/// The scratch item: 32 bytes a point of the NTT, 8 a G1 term and 16 a G2 term.
pub const SCRATCH: PlanKey = PlanKey::new("planning", "scratch");

pub struct PlanningBackend {
    info: BackendInfo,
    budget: Arc<DeviceBudget>,
    pub cost: CostModel,
    pub sparse_product: bool,
}

impl PlanningBackend {
    pub fn new(capacity: u64) -> Self {
        PlanningBackend {
            info: BackendInfo {
                name: "planning".into(),
                device_index: 0,
                device_name: "none".into(),
                api: "none".into(),
                memory_bytes: capacity,
                priority: 0,
            },
            budget: DeviceBudget::new("planning:0", capacity),
            cost: CostModel::default(),
            sparse_product: false,
        }
    }
}

fn refused<T>() -> Result<T> {
    Err(Error::Unsupported("the planning backend only plans".into()))
}

impl ProverBackend for PlanningBackend {
    fn info(&self) -> &BackendInfo {
        &self.info
    }

    fn budget(&self) -> &Arc<DeviceBudget> {
        &self.budget
    }

    fn device_sync(&self) -> Arc<dyn DeviceSync> {
        Arc::new(HostSync)
    }

    fn element_bytes(&self, kind: ElementKind) -> u64 {
        match kind {
            ElementKind::Scalar => SCALAR,
            ElementKind::G1 => G1,
            ElementKind::G2 => G2,
            ElementKind::Index => INDEX,
        }
    }

    fn scratch_plan(&self, need: &ScratchNeed) -> MemoryPlan {
        let ntt = need.ntt.map_or(0, |d| 32 * d.size as u64);
        let mut plan = MemoryPlan::new("planning scratch");
        plan.item(
            SCRATCH,
            ntt + 8 * need.msm_g1 as u64 + 16 * need.msm_g2 as u64,
        );
        plan
    }

    fn supports_sparse_product(&self) -> bool {
        self.sparse_product
    }

    fn cost_model(&self) -> CostModel {
        self.cost
    }

    fn alloc(
        &self,
        _: &mut Lease,
        _: PlanKey,
        _: ElementKind,
        _: usize,
        _: BufferUse,
    ) -> Result<BufferId> {
        refused()
    }

    fn stage_scalars(&self, _: &mut Lease, _: ScalarBuf, _: &[Fr]) -> Result<()> {
        refused()
    }

    fn stage_g1(&self, _: &mut Lease, _: G1Buf, _: &[G1Affine]) -> Result<()> {
        refused()
    }

    fn stage_g2(&self, _: &mut Lease, _: G2Buf, _: &[G2Affine]) -> Result<()> {
        refused()
    }

    fn read_scalars(&self, _: &Lease, _: ScalarBuf) -> Result<Vec<Fr>> {
        refused()
    }

    fn ntt(&self, _: &mut Lease, _: ScalarBuf, _: &Domain, _: NttKind) -> Result<()> {
        refused()
    }

    fn mul_assign(&self, _: &mut Lease, _: ScalarBuf, _: ScalarBuf) -> Result<()> {
        refused()
    }

    fn sub_mul_assign(&self, _: &mut Lease, _: ScalarBuf, _: ScalarBuf, _: Fr) -> Result<()> {
        refused()
    }

    fn msm_g1(&self, _: &mut Lease, _: &Lease, _: MsmSpan<G1Buf>) -> Result<G1Projective> {
        refused()
    }

    fn msm_g2(&self, _: &mut Lease, _: &Lease, _: MsmSpan<G2Buf>) -> Result<G2Projective> {
        refused()
    }
}
