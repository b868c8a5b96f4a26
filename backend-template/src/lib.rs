//! crucible-backend-template: a backend that compiles, registers, and answers
//! `Unsupported` to every operation, each answer naming the method, the file it belongs
//! in and what to write there. A vendor starts a port by copying it
//! (`scripts/new-backend.sh NAME`) and replacing one answer after another, running the
//! conformance suite as they go: a case moves from unsupported to passed.
//!
//! The files are the ones every backend has, for the same roles: `lib.rs` (the
//! registration and the trait impl, delegating), `device.rs` (probe, limits),
//! `memory.rs` (allocation under a lease, staging, read-back), `ntt.rs`, `msm.rs`,
//! `field.rs` (element layout) and `error.rs`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod device;
mod error;
mod field;
mod memory;
mod msm;
mod ntt;

use std::sync::Arc;

use crucible_core::registry::{BackendRegistration, Probe, ProbeOptions};
use crucible_core::{
    BackendInfo, BufferId, BufferUse, DeviceBudget, DeviceSync, Domain, ElementKind, Fr, G1Affine,
    G1Buf, G1Projective, G2Affine, G2Buf, G2Projective, HostSync, Lease, MemoryPlan, MsmSpan,
    NttKind, PlanKey, ProverBackend, Result, ScalarBuf, ScratchNeed,
};

pub use error::TemplateError;

/// This backend on one (placeholder) device.
pub struct TemplateBackend {
    device: device::Device,
}

fn probe(options: &ProbeOptions) -> Vec<Probe> {
    device::probe(options)
        .into_iter()
        .map(|device| Probe::Available(Arc::new(TemplateBackend { device })))
        .collect()
}

inventory::submit! {
    BackendRegistration {
        name: "template",
        description: "every operation unsupported until implemented, each saying what to write where",
        probe,
        // A port starts with one curve; `probe` again, generic over the curve, once its
        // kernels take the field as a parameter (the cpu backend's shape).
        probe_bn254: |_| crucible_core::registry::bn254_not_built("template"),
    }
}

impl ProverBackend for TemplateBackend {
    fn info(&self) -> &BackendInfo {
        &self.device.info
    }

    fn budget(&self) -> &Arc<DeviceBudget> {
        &self.device.budget
    }

    // Nothing is ever queued. A GPU backend waits for its queues here, then frees
    // what its driver caches (backend-cuda's StreamSync).
    fn device_sync(&self) -> Arc<dyn DeviceSync> {
        Arc::new(HostSync)
    }

    fn element_bytes(&self, kind: ElementKind) -> u64 {
        field::element_bytes(kind)
    }

    fn scratch_plan(&self, need: &ScratchNeed) -> MemoryPlan {
        let mut plan = MemoryPlan::new("template scratch");
        ntt::scratch_plan(need, &mut plan);
        msm::scratch_plan(need, &mut plan);
        plan
    }

    fn alloc(
        &self,
        lease: &mut Lease,
        key: PlanKey,
        kind: ElementKind,
        len: usize,
        usage: BufferUse,
    ) -> Result<BufferId> {
        memory::alloc(lease, key, kind, len, usage)
    }

    fn stage_scalars(&self, lease: &mut Lease, dst: ScalarBuf, src: &[Fr]) -> Result<()> {
        memory::stage_scalars(lease, dst.id(), src)
    }

    fn stage_g1(&self, lease: &mut Lease, dst: G1Buf, src: &[G1Affine]) -> Result<()> {
        memory::stage_g1(lease, dst.id(), src)
    }

    fn stage_g2(&self, lease: &mut Lease, dst: G2Buf, src: &[G2Affine]) -> Result<()> {
        memory::stage_g2(lease, dst.id(), src)
    }

    fn read_scalars(&self, lease: &Lease, src: ScalarBuf) -> Result<Vec<Fr>> {
        memory::read_scalars(lease, src.id(), src.len())
    }

    fn ntt(&self, lease: &mut Lease, buf: ScalarBuf, domain: &Domain, kind: NttKind) -> Result<()> {
        ntt::ntt(lease, buf, domain, kind)
    }

    fn mul_assign(&self, lease: &mut Lease, dst: ScalarBuf, rhs: ScalarBuf) -> Result<()> {
        ntt::mul_assign(lease, dst, rhs)
    }

    fn sub_mul_assign(
        &self,
        lease: &mut Lease,
        dst: ScalarBuf,
        rhs: ScalarBuf,
        k: Fr,
    ) -> Result<()> {
        ntt::sub_mul_assign(lease, dst, rhs, k)
    }

    fn msm_g1(
        &self,
        work: &mut Lease,
        bases: &Lease,
        span: MsmSpan<G1Buf>,
    ) -> Result<G1Projective> {
        msm::msm_g1(work, bases, span)
    }

    fn msm_g2(
        &self,
        work: &mut Lease,
        bases: &Lease,
        span: MsmSpan<G2Buf>,
    ) -> Result<G2Projective> {
        msm::msm_g2(work, bases, span)
    }
}
