//! crucible-backend-cpu: the reference backend. Every primitive goes through arkworks
//! (ark-poly domains, ark-ec MSM), rayon-parallel; host memory is counted against a
//! budget exactly as a GPU's device memory is.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod cost;
mod cost_cache;
mod device;
mod error;
mod field;
mod memory;
mod msm;
mod ntt;
mod sparse_product;

use std::marker::PhantomData;
use std::sync::Arc;

use ark_ff::Zero;

use crucible_core::registry::{BackendRegistration, Probe, ProbeOptions};
use crucible_core::{
    BackendInfo, Bls12_381, Bn254, BufferId, BufferUse, CostModel, DeviceBudget, DeviceSync,
    Domain, ElementKind, G1Buf, G2Buf, HostSync, IndexBuf, Lease, MemoryPlan, MsmSpan, NttKind,
    PairingCurve, PlanKey, ProverBackend, Result, ScalarBuf, ScratchNeed, SparseMatrixBufs,
};

pub use error::CpuError;

/// The CPU backend: one instance for the host, proving over the curve `E`
/// (BLS12-381 unless named; BN254 too).
pub struct CpuBackend<E = Bls12_381> {
    info: BackendInfo,
    budget: Arc<DeviceBudget>,
    curve: PhantomData<fn() -> E>,
}

impl<E: PairingCurve> CpuBackend<E> {
    /// A CPU backend whose budget is the host's memory (minus headroom, capped by the
    /// options' memory limit).
    pub fn new(options: &ProbeOptions) -> Self {
        let memory = device::host_memory_bytes();
        let budget = DeviceBudget::new("cpu:0", options.budget_capacity(memory));
        Self::with_budget(budget)
    }

    /// A CPU backend drawing on an existing budget (tests use small fixed budgets;
    /// several logical devices can each get their own).
    pub fn with_budget(budget: Arc<DeviceBudget>) -> Self {
        Self::with_budget_and_index(budget, 0)
    }

    /// Like [`CpuBackend::with_budget`], reporting itself as logical device `index`.
    pub fn with_budget_and_index(budget: Arc<DeviceBudget>, index: usize) -> Self {
        CpuBackend {
            info: device::info(index),
            budget,
            curve: PhantomData,
        }
    }
}

/// Environment variable splitting the host into N logical devices.
pub const DEVICES_ENV: &str = "CRUCIBLE_CPU_DEVICES";

/// Most logical CPU devices.
pub const MAX_DEVICES: usize = 64;

/// The device count in [`DEVICES_ENV`] (`None`: unset or empty, one device).
fn device_count(value: Option<&str>) -> std::result::Result<usize, String> {
    let Some(text) = value.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(1);
    };
    match text.parse::<usize>() {
        Ok(n) if (1..=MAX_DEVICES).contains(&n) => Ok(n),
        _ => Err(format!(
            "{DEVICES_ENV}=`{text}` is not a device count (expected 1 to {MAX_DEVICES})"
        )),
    }
}

/// `CRUCIBLE_CPU_DEVICES=N` splits the host into N logical devices, each with its
/// own budget (an equal share), so multi-device placement can be exercised anywhere.
/// A value that is not a count makes the backend unavailable, saying why.
fn probe<E: PairingCurve>(options: &ProbeOptions) -> Vec<Probe<E>> {
    let devices = match device_count(std::env::var(DEVICES_ENV).ok().as_deref()) {
        Ok(n) => n,
        Err(reason) => return vec![Probe::Unavailable { reason }],
    };
    let capacity = options.budget_capacity(device::host_memory_bytes()) / devices as u64;
    (0..devices)
        .map(|i| {
            let budget = DeviceBudget::new(format!("cpu:{i}"), capacity);
            Probe::Available(Arc::new(CpuBackend::<E>::with_budget_and_index(budget, i))
                as Arc<dyn ProverBackend<E>>)
        })
        .collect()
}

inventory::submit! {
    BackendRegistration {
        name: "cpu",
        description: "arkworks on the host (reference), rayon-parallel",
        probe: probe::<Bls12_381>,
        probe_bn254: probe::<Bn254>,
    }
}

impl<E: PairingCurve> ProverBackend<E> for CpuBackend<E> {
    fn info(&self) -> &BackendInfo {
        &self.info
    }

    fn cost_model(&self) -> CostModel {
        cost::measured()
    }

    fn budget(&self) -> &Arc<DeviceBudget> {
        &self.budget
    }

    fn device_sync(&self) -> Arc<dyn DeviceSync> {
        Arc::new(HostSync)
    }

    fn element_bytes(&self, kind: ElementKind) -> u64 {
        field::element_bytes::<E>(kind)
    }

    fn scratch_plan(&self, need: &ScratchNeed<E::ScalarField>) -> MemoryPlan {
        msm::scratch_plan(need)
    }

    fn alloc(
        &self,
        lease: &mut Lease,
        key: PlanKey,
        kind: ElementKind,
        len: usize,
        _usage: BufferUse,
    ) -> Result<BufferId> {
        memory::alloc::<E>(lease, key, kind, len)
    }

    fn stage_scalars(
        &self,
        lease: &mut Lease,
        dst: ScalarBuf,
        src: &[E::ScalarField],
    ) -> Result<()> {
        memory::copy_front(lease, dst.id(), src)
    }

    fn stage_scalars_padded(
        &self,
        lease: &mut Lease,
        dst: ScalarBuf,
        src: &[E::ScalarField],
    ) -> Result<()> {
        crucible_core::check_padded(src, dst)?;
        memory::copy_in_padded(lease, dst.id(), src)
    }

    fn stage_g1(&self, lease: &mut Lease, dst: G1Buf, src: &[E::G1Affine]) -> Result<()> {
        memory::copy_front(lease, dst.id(), src)
    }

    fn stage_g2(&self, lease: &mut Lease, dst: G2Buf, src: &[E::G2Affine]) -> Result<()> {
        memory::copy_front(lease, dst.id(), src)
    }

    fn stage_indices(&self, lease: &mut Lease, dst: IndexBuf, src: &[u32]) -> Result<()> {
        memory::copy_front(lease, dst.id(), src)
    }

    fn supports_sparse_product(&self) -> bool {
        true
    }

    fn sparse_product(
        &self,
        work: &mut Lease,
        matrices: &Lease,
        matrix: SparseMatrixBufs,
        z: ScalarBuf,
        out: ScalarBuf,
    ) -> Result<()> {
        sparse_product::sparse_product::<E::ScalarField>(work, matrices, matrix, z, out)
    }

    fn read_scalars(&self, lease: &Lease, src: ScalarBuf) -> Result<Vec<E::ScalarField>> {
        Ok(lease.get::<Vec<E::ScalarField>>(src.id())?.clone())
    }

    fn ntt(
        &self,
        lease: &mut Lease,
        buf: ScalarBuf,
        domain: &Domain<E::ScalarField>,
        kind: NttKind,
    ) -> Result<()> {
        ntt::ntt(
            lease.get_mut::<Vec<E::ScalarField>>(buf.id())?,
            domain,
            kind,
        )
    }

    fn mul_assign(&self, lease: &mut Lease, dst: ScalarBuf, rhs: ScalarBuf) -> Result<()> {
        if dst.id() == rhs.id() {
            ntt::square_assign(lease.get_mut::<Vec<E::ScalarField>>(dst.id())?);
            return Ok(());
        }
        let [d, r] = lease.get_disjoint_mut::<Vec<E::ScalarField>, 2>([dst.id(), rhs.id()])?;
        ntt::mul_assign(d, r)
    }

    fn sub_mul_assign(
        &self,
        lease: &mut Lease,
        dst: ScalarBuf,
        rhs: ScalarBuf,
        k: E::ScalarField,
    ) -> Result<()> {
        if dst.id() == rhs.id() {
            // (x − x)·k
            lease
                .get_mut::<Vec<E::ScalarField>>(dst.id())?
                .fill(E::ScalarField::zero());
            return Ok(());
        }
        let [d, r] = lease.get_disjoint_mut::<Vec<E::ScalarField>, 2>([dst.id(), rhs.id()])?;
        ntt::sub_mul_assign(d, r, k)
    }

    fn msm_g1(&self, work: &mut Lease, bases: &Lease, span: MsmSpan<G1Buf>) -> Result<E::G1> {
        msm::msm::<E::G1>(work, bases, span.bases.id(), span.bases.len(), &span)
    }

    fn msm_g2(&self, work: &mut Lease, bases: &Lease, span: MsmSpan<G2Buf>) -> Result<E::G2> {
        msm::msm::<E::G2>(work, bases, span.bases.id(), span.bases.len(), &span)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_counts_parse_or_say_why_not() {
        assert_eq!(device_count(None), Ok(1));
        assert_eq!(device_count(Some("")), Ok(1));
        assert_eq!(device_count(Some(" 3 ")), Ok(3));
        for bad in ["abc", "0", "-1", "65", "1.5"] {
            let e = device_count(Some(bad)).unwrap_err();
            assert!(e.contains("is not a device count"), "{bad}: {e}");
        }
    }
}
