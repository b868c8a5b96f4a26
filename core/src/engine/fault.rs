//! Fault injection: a backend wrapper that fails, panics in, or corrupts chosen calls
//! of any method of [`ProverBackend`] and of the [`DeviceSync`] its leases wait on, to
//! test that every error path releases its lease and the engine keeps serving.

use crate::PairingCurve;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ark_ec::{CurveGroup, PrimeGroup};
use ark_ff::One;

use crate::{
    BackendInfo, BufferId, BufferUse, CostModel, DeviceBudget, DeviceMarker, DeviceMemory,
    DeviceSync, Domain, ElementKind, Error, G1Buf, G2Buf, HostPin, HostSync, Lease, MemoryPlan,
    MsmSpan, NttKind, PinnedScalars, PlanKey, ProverBackend, Result, ScalarBuf, ScratchNeed,
};
use crate::{IndexBuf, SparseMatrixBufs};

/// The calls a fault can be injected into: one per method of [`ProverBackend`], and
/// [`FaultOp::LeaseSync`] for [`DeviceSync::synchronize`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultOp {
    /// `info`.
    Info,
    /// `budget`.
    Budget,
    /// `device_sync` (handing out the sync object).
    DeviceSync,
    /// `element_bytes`.
    ElementBytes,
    /// `buffer_bytes`.
    BufferBytes,
    /// `scratch_plan`.
    ScratchPlan,
    /// `check_plan`, called as a lease is allocated (the lease itself).
    Allocate,
    /// `alloc` (one buffer).
    Alloc,
    /// `stage_scalars`.
    StageScalars,
    /// `stage_scalars_padded`.
    StageScalarsPadded,
    /// `stage_g1`.
    StageG1,
    /// `stage_g2`.
    StageG2,
    /// `read_scalars`.
    ReadScalars,
    /// `stage_indices`.
    StageIndices,
    /// `sparse_product`.
    SparseProduct,
    /// `ntt`.
    Ntt,
    /// `mul_assign`.
    MulAssign,
    /// `sub_mul_assign`.
    SubMulAssign,
    /// `msm_g1`.
    MsmG1,
    /// `msm_g2`.
    MsmG2,
    /// `synchronize`.
    Synchronize,
    /// `device_marker`.
    DeviceMarker,
    /// `device_memory`.
    DeviceMemory,
    /// `cost_model`.
    CostModel,
    /// `pin_g1_bases`.
    PinG1Bases,
    /// `pin_g2_bases`.
    PinG2Bases,
    /// [`DeviceSync::synchronize`] of the sync object a lease waits on when released.
    LeaseSync,
}

impl FaultOp {
    /// Every call a fault can be injected into.
    pub const ALL: [FaultOp; 27] = [
        FaultOp::Info,
        FaultOp::Budget,
        FaultOp::DeviceSync,
        FaultOp::ElementBytes,
        FaultOp::BufferBytes,
        FaultOp::ScratchPlan,
        FaultOp::Allocate,
        FaultOp::Alloc,
        FaultOp::StageScalars,
        FaultOp::StageScalarsPadded,
        FaultOp::StageG1,
        FaultOp::StageG2,
        FaultOp::ReadScalars,
        FaultOp::StageIndices,
        FaultOp::SparseProduct,
        FaultOp::Ntt,
        FaultOp::MulAssign,
        FaultOp::SubMulAssign,
        FaultOp::MsmG1,
        FaultOp::MsmG2,
        FaultOp::Synchronize,
        FaultOp::DeviceMarker,
        FaultOp::DeviceMemory,
        FaultOp::CostModel,
        FaultOp::PinG1Bases,
        FaultOp::PinG2Bases,
        FaultOp::LeaseSync,
    ];
}

/// What happens when a fault fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// The call returns a device error (a method that returns no `Result` panics).
    Error,
    /// The call panics.
    Panic,
    /// The call returns a wrong result: a corrupted MSM, NTT, product, read-back or
    /// staged value; plans and sizes too small; a plan not checked by the backend; a
    /// buffer one element short; a sync that does not wait; no device marker or
    /// memory figures; the default cost model; another device's name; bases left
    /// unpinned. `budget` has no
    /// wrong result and runs normally.
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
    /// Error, panic or wrong result.
    pub kind: FaultKind,
}

impl FaultRule {
    fn due(&self, op: FaultOp, n: u64) -> bool {
        self.op == op
            && (n == self.first
                || (self.every > 0 && n > self.first && (n - self.first) % self.every == 0))
    }
}

// Shared by the backend wrapper and the sync objects it hands out.
struct FaultState {
    backend: String,
    rules: Mutex<Vec<FaultRule>>,
    counts: [AtomicU64; FaultOp::ALL.len()],
    injected: AtomicU64,
}

impl FaultState {
    /// Counts a call of `op` and applies the fault due there, if any: an error, a
    /// panic, or `Ok(true)` when the call's result must be corrupted.
    fn check(&self, op: FaultOp) -> Result<bool> {
        let n = self.counts[op as usize].fetch_add(1, Ordering::SeqCst) + 1;
        let due = self
            .rules
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(|rule| rule.due(op, n))
            .map(|rule| rule.kind);
        let Some(kind) = due else { return Ok(false) };
        self.injected.fetch_add(1, Ordering::SeqCst);
        match kind {
            FaultKind::Error => Err(Error::device(
                self.backend.clone(),
                format!("injected fault in {op:?} call {n}"),
            )),
            FaultKind::Panic => panic!("injected panic in {op:?} call {n}"),
            FaultKind::WrongResult => Ok(true),
        }
    }

    /// For methods that cannot return an error: an injected error panics instead.
    fn check_infallible(&self, op: FaultOp) -> bool {
        self.check(op)
            .unwrap_or_else(|e| panic!("{e} (this method cannot return an error)"))
    }
}

/// Wraps a backend and injects faults into its calls according to its rules.
pub struct FaultyBackend<E: PairingCurve = crate::Bls12_381> {
    inner: Arc<dyn ProverBackend<E>>,
    state: Arc<FaultState>,
    // What `info` returns for a wrong result: the same backend under another name.
    wrong_info: BackendInfo,
}

impl<E: PairingCurve> FaultyBackend<E> {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn ProverBackend<E>>, rules: Vec<FaultRule>) -> Self {
        let info = inner.info().clone();
        let wrong_info = BackendInfo {
            device_name: format!("not {}", info.device_name),
            device_index: info.device_index.wrapping_add(1),
            ..info.clone()
        };
        FaultyBackend {
            state: Arc::new(FaultState {
                backend: info.name,
                rules: Mutex::new(rules),
                counts: Default::default(),
                injected: AtomicU64::new(0),
            }),
            inner,
            wrong_info,
        }
    }

    /// Number of faults injected so far.
    pub fn injected(&self) -> u64 {
        self.state.injected.load(Ordering::SeqCst)
    }

    /// Number of calls of `op` so far (faulted or not): a rule armed now at
    /// `calls(op) + k` fires on the k-th call from here.
    pub fn calls(&self, op: FaultOp) -> u64 {
        self.state.counts[op as usize].load(Ordering::SeqCst)
    }

    /// Adds a rule (call counts are kept).
    pub fn add_rule(&self, rule: FaultRule) {
        self.lock_rules().push(rule);
    }

    /// Removes every rule: from now on every call runs normally.
    pub fn clear_rules(&self) {
        self.lock_rules().clear();
    }

    fn lock_rules(&self) -> std::sync::MutexGuard<'_, Vec<FaultRule>> {
        self.state.rules.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn check(&self, op: FaultOp) -> Result<bool> {
        self.state.check(op)
    }

    fn check_infallible(&self, op: FaultOp) -> bool {
        self.state.check_infallible(op)
    }

    fn faulty_sync(&self) -> Arc<dyn DeviceSync> {
        Arc::new(FaultySync {
            inner: self.inner.device_sync(),
            state: Arc::clone(&self.state),
        })
    }
}

/// The sync object of a [`FaultyBackend`]: faults as [`FaultOp::LeaseSync`].
struct FaultySync {
    inner: Arc<dyn DeviceSync>,
    state: Arc<FaultState>,
}

impl DeviceSync for FaultySync {
    fn synchronize(&self) -> Result<()> {
        if self.state.check(FaultOp::LeaseSync)? {
            return Ok(());
        }
        self.inner.synchronize()
    }
}

// A staged copy with its first value changed (wrong results of the stage calls).
fn corrupt_first<T: Copy>(src: &[T], change: impl FnOnce(T) -> T) -> Vec<T> {
    let mut v = src.to_vec();
    if let Some(first) = v.first_mut() {
        *first = change(*first);
    }
    v
}

// The transform a wrong NTT runs instead of the one asked for.
fn other_kind(kind: NttKind) -> NttKind {
    match kind {
        NttKind::Forward => NttKind::Inverse,
        NttKind::Inverse => NttKind::Forward,
        NttKind::CosetForward => NttKind::CosetInverse,
        NttKind::CosetInverse => NttKind::CosetForward,
    }
}

impl<E: PairingCurve> ProverBackend<E> for FaultyBackend<E> {
    fn info(&self) -> &BackendInfo {
        if self.check_infallible(FaultOp::Info) {
            return &self.wrong_info;
        }
        self.inner.info()
    }
    fn budget(&self) -> &Arc<DeviceBudget> {
        self.check_infallible(FaultOp::Budget);
        self.inner.budget()
    }
    fn device_sync(&self) -> Arc<dyn DeviceSync> {
        if self.check_infallible(FaultOp::DeviceSync) {
            return Arc::new(HostSync);
        }
        self.faulty_sync()
    }
    fn element_bytes(&self, kind: ElementKind) -> u64 {
        let bytes = self.inner.element_bytes(kind);
        if self.check_infallible(FaultOp::ElementBytes) {
            return bytes.saturating_sub(1);
        }
        bytes
    }
    fn buffer_bytes(&self, kind: ElementKind, len: usize, usage: BufferUse) -> Result<u64> {
        let bytes = self.inner.buffer_bytes(kind, len, usage)?;
        if self.check(FaultOp::BufferBytes)? {
            return Ok(bytes / 2);
        }
        Ok(bytes)
    }
    fn device_memory(&self) -> Result<Option<DeviceMemory>> {
        if self.check(FaultOp::DeviceMemory)? {
            return Ok(None);
        }
        self.inner.device_memory()
    }
    fn cost_model(&self) -> CostModel {
        if self.check_infallible(FaultOp::CostModel) {
            return CostModel::default();
        }
        self.inner.cost_model()
    }
    fn scratch_plan(&self, need: &ScratchNeed<E::ScalarField>) -> MemoryPlan {
        if self.check_infallible(FaultOp::ScratchPlan) {
            return MemoryPlan::new("wrong (empty) scratch");
        }
        self.inner.scratch_plan(need)
    }
    // Called as a lease is allocated (`allocate` on `dyn ProverBackend`, which waits
    // on this wrapper's `device_sync`, so `DeviceSync` and `LeaseSync` faults reach a
    // lease too).
    fn check_plan(&self, plan: &MemoryPlan) -> Result<()> {
        if self.check(FaultOp::Allocate)? {
            // Wrong: the backend's own check is skipped.
            return Ok(());
        }
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
        if self.check(FaultOp::Alloc)? {
            return self
                .inner
                .alloc(lease, key, kind, len.saturating_sub(1), usage);
        }
        self.inner.alloc(lease, key, kind, len, usage)
    }
    fn stage_scalars(
        &self,
        lease: &mut Lease,
        dst: ScalarBuf,
        src: &[E::ScalarField],
    ) -> Result<()> {
        if self.check(FaultOp::StageScalars)? {
            let wrong = corrupt_first(src, |x| x + E::ScalarField::one());
            return self.inner.stage_scalars(lease, dst, &wrong);
        }
        self.inner.stage_scalars(lease, dst, src)
    }
    fn stage_scalars_padded(
        &self,
        lease: &mut Lease,
        dst: ScalarBuf,
        src: &[E::ScalarField],
    ) -> Result<()> {
        if self.check(FaultOp::StageScalarsPadded)? {
            let wrong = corrupt_first(src, |x| x + E::ScalarField::one());
            return self.inner.stage_scalars_padded(lease, dst, &wrong);
        }
        self.inner.stage_scalars_padded(lease, dst, src)
    }
    fn stage_g1(&self, lease: &mut Lease, dst: G1Buf, src: &[E::G1Affine]) -> Result<()> {
        if self.check(FaultOp::StageG1)? {
            let wrong = corrupt_first(src, |p| (p + E::G1::generator()).into_affine());
            return self.inner.stage_g1(lease, dst, &wrong);
        }
        self.inner.stage_g1(lease, dst, src)
    }
    fn stage_g2(&self, lease: &mut Lease, dst: G2Buf, src: &[E::G2Affine]) -> Result<()> {
        if self.check(FaultOp::StageG2)? {
            let wrong = corrupt_first(src, |p| (p + E::G2::generator()).into_affine());
            return self.inner.stage_g2(lease, dst, &wrong);
        }
        self.inner.stage_g2(lease, dst, src)
    }
    fn read_scalars(&self, lease: &Lease, src: ScalarBuf) -> Result<Vec<E::ScalarField>> {
        let corrupt = self.check(FaultOp::ReadScalars)?;
        let values = self.inner.read_scalars(lease, src)?;
        Ok(if corrupt {
            corrupt_first(&values, |x| x + E::ScalarField::one())
        } else {
            values
        })
    }
    fn pin_scalars<'a>(
        &self,
        scalars: &'a mut [E::ScalarField],
    ) -> Result<PinnedScalars<'a, E::ScalarField>> {
        self.inner.pin_scalars(scalars)
    }
    // A wrong result pins nothing: the bases stream as any others.
    fn pin_g1_bases(&self, bases: &[E::G1Affine]) -> Result<Option<Box<dyn HostPin>>> {
        if self.check(FaultOp::PinG1Bases)? {
            return Ok(None);
        }
        self.inner.pin_g1_bases(bases)
    }
    fn pin_g2_bases(&self, bases: &[E::G2Affine]) -> Result<Option<Box<dyn HostPin>>> {
        if self.check(FaultOp::PinG2Bases)? {
            return Ok(None);
        }
        self.inner.pin_g2_bases(bases)
    }
    fn ntt(
        &self,
        lease: &mut Lease,
        buf: ScalarBuf,
        domain: &Domain<E::ScalarField>,
        kind: NttKind,
    ) -> Result<()> {
        let kind = if self.check(FaultOp::Ntt)? {
            other_kind(kind)
        } else {
            kind
        };
        self.inner.ntt(lease, buf, domain, kind)
    }
    fn stage_indices(&self, lease: &mut Lease, dst: IndexBuf, src: &[u32]) -> Result<()> {
        if self.check(FaultOp::StageIndices)? {
            // A wrong column: still in range, so the product is wrong, not unsafe.
            let mut wrong = src.to_vec();
            if let Some(first) = wrong.first_mut() {
                *first = 0;
            }
            return self.inner.stage_indices(lease, dst, &wrong);
        }
        self.inner.stage_indices(lease, dst, src)
    }
    fn supports_sparse_product(&self) -> bool {
        self.inner.supports_sparse_product()
    }
    fn sparse_product(
        &self,
        work: &mut Lease,
        matrices: &Lease,
        matrix: SparseMatrixBufs,
        z: ScalarBuf,
        out: ScalarBuf,
    ) -> Result<()> {
        self.inner.sparse_product(work, matrices, matrix, z, out)?;
        if self.check(FaultOp::SparseProduct)? {
            // Every value squared.
            return self.inner.mul_assign(work, out, out).map(|_| ());
        }
        Ok(())
    }
    fn mul_assign(&self, lease: &mut Lease, dst: ScalarBuf, rhs: ScalarBuf) -> Result<()> {
        if self.check(FaultOp::MulAssign)? {
            return self
                .inner
                .sub_mul_assign(lease, dst, rhs, E::ScalarField::one());
        }
        self.inner.mul_assign(lease, dst, rhs)
    }
    fn sub_mul_assign(
        &self,
        lease: &mut Lease,
        dst: ScalarBuf,
        rhs: ScalarBuf,
        k: E::ScalarField,
    ) -> Result<()> {
        let k = if self.check(FaultOp::SubMulAssign)? {
            k + E::ScalarField::one()
        } else {
            k
        };
        self.inner.sub_mul_assign(lease, dst, rhs, k)
    }
    fn msm_g1(&self, work: &mut Lease, bases: &Lease, span: MsmSpan<G1Buf>) -> Result<E::G1> {
        let corrupt = self.check(FaultOp::MsmG1)?;
        let p = self.inner.msm_g1(work, bases, span)?;
        Ok(if corrupt { p + E::G1::generator() } else { p })
    }
    fn msm_g2(&self, work: &mut Lease, bases: &Lease, span: MsmSpan<G2Buf>) -> Result<E::G2> {
        let corrupt = self.check(FaultOp::MsmG2)?;
        let p = self.inner.msm_g2(work, bases, span)?;
        Ok(if corrupt { p + E::G2::generator() } else { p })
    }
    fn synchronize(&self) -> Result<()> {
        if self.check(FaultOp::Synchronize)? {
            return Ok(());
        }
        self.inner.synchronize()
    }
    fn device_marker(&self) -> Result<Option<Box<dyn DeviceMarker>>> {
        if self.check(FaultOp::DeviceMarker)? {
            return Ok(None);
        }
        self.inner.device_marker()
    }
}
