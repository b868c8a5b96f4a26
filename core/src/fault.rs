//! Fault injection: a backend wrapper that fails (or panics in) chosen calls, to test
//! that every error path releases its lease and the engine keeps serving.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ark_ec::PrimeGroup;

use crate::{
    BackendInfo, BufferId, BufferUse, DeviceBudget, DeviceSync, Domain, ElementKind, Error, Fr,
    G1Affine, G1Buf, G1Projective, G2Affine, G2Buf, G2Projective, Lease, MemoryPlan, MsmSpan,
    NttKind, PlanKey, ProverBackend, Result, ScalarBuf, ScratchNeed,
};

/// The kinds of call a fault can be injected into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultOp {
    /// `check_plan`, called as a lease is allocated (the lease itself).
    Allocate,
    /// `alloc` (one buffer).
    Alloc,
    /// `stage_*`.
    Stage,
    /// `ntt`.
    Ntt,
    /// `msm_g1` / `msm_g2`.
    Msm,
}

/// What happens when a fault fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// The call returns a device error.
    Error,
    /// The call panics.
    Panic,
    /// The call succeeds but returns a wrong result (MSM calls; other calls run normally).
    WrongResult,
}

/// Fails every `every`-th call of `op` (counting from 1), from call `first` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultRule {
    /// Which calls.
    pub op: FaultOp,
    /// First call (1-based) that fails.
    pub first: u64,
    /// Then every `every` calls after it (0: only `first`).
    pub every: u64,
    /// Error or panic.
    pub kind: FaultKind,
}

/// Wraps a backend and injects faults into its calls according to `rules`.
pub struct FaultyBackend {
    inner: Arc<dyn ProverBackend>,
    rules: Vec<FaultRule>,
    counts: [AtomicU64; 5],
    injected: AtomicU64,
}

impl FaultyBackend {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn ProverBackend>, rules: Vec<FaultRule>) -> Self {
        FaultyBackend {
            inner,
            rules,
            counts: Default::default(),
            injected: AtomicU64::new(0),
        }
    }

    /// Number of faults injected so far.
    pub fn injected(&self) -> u64 {
        self.injected.load(Ordering::SeqCst)
    }

    /// Counts a call of `op` and applies the fault due there, if any: an error, a
    /// panic, or `Ok(true)` when the call's result must be corrupted.
    fn check(&self, op: FaultOp) -> Result<bool> {
        let n = self.counts[op as usize].fetch_add(1, Ordering::SeqCst) + 1;
        let due = self.rules.iter().find(|rule| {
            rule.op == op
                && (n == rule.first
                    || (rule.every > 0 && n > rule.first && (n - rule.first) % rule.every == 0))
        });
        let Some(rule) = due else { return Ok(false) };
        self.injected.fetch_add(1, Ordering::SeqCst);
        match rule.kind {
            FaultKind::Error => Err(Error::device(
                self.inner.info().name.clone(),
                format!("injected fault in {op:?} call {n}"),
            )),
            FaultKind::Panic => panic!("injected panic in {op:?} call {n}"),
            FaultKind::WrongResult => Ok(true),
        }
    }
}

impl ProverBackend for FaultyBackend {
    fn info(&self) -> &BackendInfo {
        self.inner.info()
    }
    fn budget(&self) -> &Arc<DeviceBudget> {
        self.inner.budget()
    }
    fn device_sync(&self) -> Arc<dyn DeviceSync> {
        self.inner.device_sync()
    }
    fn element_bytes(&self, kind: ElementKind) -> u64 {
        self.inner.element_bytes(kind)
    }
    fn buffer_bytes(&self, kind: ElementKind, len: usize, usage: BufferUse) -> Result<u64> {
        self.inner.buffer_bytes(kind, len, usage)
    }
    fn cost_model(&self) -> crate::CostModel {
        self.inner.cost_model()
    }
    fn scratch_plan(&self, need: &ScratchNeed) -> MemoryPlan {
        self.inner.scratch_plan(need)
    }
    fn check_plan(&self, plan: &MemoryPlan) -> Result<()> {
        self.check(FaultOp::Allocate)?;
        self.inner.check_plan(plan)
    }
    fn alloc(
        &self,
        lease: &mut Lease,
        key: PlanKey,
        kind: ElementKind,
        len: usize,
        usage: BufferUse,
    ) -> Result<BufferId> {
        self.check(FaultOp::Alloc)?;
        self.inner.alloc(lease, key, kind, len, usage)
    }
    fn stage_scalars(&self, lease: &mut Lease, dst: ScalarBuf, src: &[Fr]) -> Result<()> {
        self.check(FaultOp::Stage)?;
        self.inner.stage_scalars(lease, dst, src)
    }
    fn stage_scalars_padded(&self, lease: &mut Lease, dst: ScalarBuf, src: &[Fr]) -> Result<()> {
        self.check(FaultOp::Stage)?;
        self.inner.stage_scalars_padded(lease, dst, src)
    }
    fn stage_g1(&self, lease: &mut Lease, dst: G1Buf, src: &[G1Affine]) -> Result<()> {
        self.check(FaultOp::Stage)?;
        self.inner.stage_g1(lease, dst, src)
    }
    fn stage_g2(&self, lease: &mut Lease, dst: G2Buf, src: &[G2Affine]) -> Result<()> {
        self.check(FaultOp::Stage)?;
        self.inner.stage_g2(lease, dst, src)
    }
    fn read_scalars(&self, lease: &Lease, src: ScalarBuf) -> Result<Vec<Fr>> {
        self.inner.read_scalars(lease, src)
    }
    fn ntt(&self, lease: &mut Lease, buf: ScalarBuf, domain: &Domain, kind: NttKind) -> Result<()> {
        self.check(FaultOp::Ntt)?;
        self.inner.ntt(lease, buf, domain, kind)
    }
    fn mul_assign(&self, lease: &mut Lease, dst: ScalarBuf, rhs: ScalarBuf) -> Result<()> {
        self.inner.mul_assign(lease, dst, rhs)
    }
    fn sub_mul_assign(
        &self,
        lease: &mut Lease,
        dst: ScalarBuf,
        rhs: ScalarBuf,
        k: Fr,
    ) -> Result<()> {
        self.inner.sub_mul_assign(lease, dst, rhs, k)
    }
    fn msm_g1(
        &self,
        work: &mut Lease,
        bases: &Lease,
        span: MsmSpan<G1Buf>,
    ) -> Result<G1Projective> {
        let corrupt = self.check(FaultOp::Msm)?;
        let p = self.inner.msm_g1(work, bases, span)?;
        Ok(if corrupt {
            p + G1Projective::generator()
        } else {
            p
        })
    }
    fn msm_g2(
        &self,
        work: &mut Lease,
        bases: &Lease,
        span: MsmSpan<G2Buf>,
    ) -> Result<G2Projective> {
        let corrupt = self.check(FaultOp::Msm)?;
        let p = self.inner.msm_g2(work, bases, span)?;
        Ok(if corrupt {
            p + G2Projective::generator()
        } else {
            p
        })
    }
    fn synchronize(&self) -> Result<()> {
        self.inner.synchronize()
    }
    fn device_marker(&self) -> Result<Option<Box<dyn crate::DeviceMarker>>> {
        self.inner.device_marker()
    }
}
