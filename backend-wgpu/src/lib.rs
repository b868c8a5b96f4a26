//! crucible-backend-wgpu: NTT and MSM over BLS12-381 and BN254 in WGSL compute
//! shaders, on any Vulkan, Metal or DX12 adapter wgpu finds (on Linux without a GPU,
//! Mesa's llvmpipe). [`WgpuBackend<E>`] proves over the curve `E`; the shaders are
//! generated for it from its arkworks fields and constants (wgsl/curve.rs), one
//! generator for both curves.
//!
//! Field elements are stored as arkworks' own Montgomery words ([`field`] explains
//! why) and computed on in limbs: 16-bit limbs in `u32` by the interpreter and the
//! loop code, and, where the adapter has 64-bit integers in shaders (`SHADER_INT64`),
//! wide limbs in `u64` columns (wgsl/field_code.rs, wgsl/fr_code.rs: Fr's NTT product
//! over eight 32-bit limbs, Fq over 28-bit limbs for G1 and 32-bit for G2); every device
//! buffer, scratch included, is allocated through the proof's [`Lease`] and split into
//! chunks that fit the adapter's binding limit. The QAP's A·z, B·z and C·z run on the
//! device too (`sparse_product`: the matrices staged once with the key, compressed
//! rows of 32-bit words). One backend instance per adapter;
//! `CRUCIBLE_WGPU_ADAPTER` picks one when there are several. Host data reaches the
//! device through two kept upload buffers (16 MiB each by default, left out of the
//! budget), converted on every core; a proof's domain vectors are zeroed past their
//! rows on the device.
//!
//! The Fq2 and curve formulas run, per curve ([`Formulas`], [`PerCurve`]), as
//! straight-line WGSL functions on values generated from wgsl/programs.rs's
//! instruction lists over Fq code of each curve's limb width ([`LimbBits`]), loop-free
//! (`straight`, G1's default on hardware adapters), or run from the instruction lists
//! by a loop over a register file (`registers`: a fraction of the code, G2's default on
//! hardware adapters, whose straight G2 kernels take a driver minutes to compile); or
//! through an Fq interpreter shader over the same lists over 16-bit loop code
//! (`interpreted`: software adapters' default, where llvmpipe compiles the others for
//! minutes).
//!
//! Every choice that depends on the adapter is typed tuning ([`WgpuTuning`], the
//! `[wgpu]` table of the tuning file), each key's default chosen by the adapter's
//! class: the formulas, the limb width, the NTT's product, the upload buffers, the
//! device memory where wgpu cannot report it, per-pass GPU timings (`profile`) and
//! the pipeline cache (under `$CRUCIBLE_CACHE_DIR/wgpu`).
//!
//! Layers, each module importing only those below it (as backend-cuda's, whose file
//! names it shares for the same roles): `error` and `field` (the device layout of
//! elements and points) at the bottom; `wgsl/` (the shader modules and the generator
//! of their WGSL: the curve's parameters, field constants, loop-free field code, the
//! formulas' instruction lists and their straight-line form, the parameter blocks) and
//! `tuning`; `device/`
//! (finding and opening adapters, the device and queue with their pipelines and
//! pipeline cache, command batches, per-pass timings, upload and readback buffers);
//! `memory` (buffers under a lease, staging and readback); then the operations,
//! `pointwise`, `sparse_product`, `ntt/`, `msm/` and `test_entries` (the shaders' test
//! entry points); this file registers the backend and implements the trait by
//! delegating.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod device;
mod error;
pub mod field;
mod memory;
mod msm;
mod ntt;
mod pointwise;
mod sparse_product;
mod test_entries;
mod tuning;
mod wgsl;

use std::marker::PhantomData;
use std::sync::Arc;

use crucible_core::registry::{BackendRegistration, Probe, ProbeOptions};
use crucible_core::{
    BackendInfo, Bls12_381, Bn254, BufferId, BufferUse, DeviceBudget, DeviceSync, Domain,
    ElementKind, G1Buf, G2Buf, IndexBuf, Lease, MemoryPlan, MsmSpan, NttKind, PlanKey,
    ProverBackend, Result, ScalarBuf, ScratchNeed, SparseMatrixBufs,
};

pub use device::context::{Activity, DeviceLimits, PipelineCompile};
pub use device::pipeline_cache::CacheUse;
pub use device::{WgpuOptions, ADAPTER_ENV};
pub use error::WgpuError;
pub use ntt::MAX_TILE_BITS;
pub use test_entries::{CurveOp, FieldOp};
pub use tuning::{AdapterClass, Tuned, WgpuTuning, DEFAULT_UPLOAD_MIB, MSM_WINDOW_BITS};
pub use wgsl::field_code::LimbBits;
pub use wgsl::{Formulas, NttMul, PerCurve};

use device::batch::PARAMS_ITEM;
use device::context::{Context, QueueSync};
use field::DeviceCurve;
use memory::DeviceBuffer;
use msm::{G1, G2};
use wgsl::curve::CurveParams;
use wgsl::programs::Program;

/// The wgpu backend on one adapter, proving over the curve `E` (BLS12-381 unless
/// named; BN254 too).
pub struct WgpuBackend<E = Bls12_381> {
    info: BackendInfo,
    budget: Arc<DeviceBudget>,
    ctx: Arc<Context>,
    uploads: device::upload::Uploads,
    curve: PhantomData<fn() -> E>,
}

/// `E`'s shader parameters, shared by its devices.
fn curve_params<E: DeviceCurve>() -> Result<Arc<CurveParams>, WgpuError> {
    CurveParams::of::<E>().map(Arc::new)
}

impl<E: DeviceCurve> WgpuBackend<E> {
    fn from_opened(opened: device::Opened) -> Self {
        WgpuBackend {
            info: opened.info,
            budget: opened.budget,
            ctx: opened.ctx,
            uploads: opened.uploads,
            curve: PhantomData,
        }
    }

    /// Opens the first adapter that works (the one `--backend wgpu` names `wgpu:0`).
    pub fn open(options: &ProbeOptions, wgpu_options: &WgpuOptions) -> Result<Self, WgpuError> {
        device::open_first(options, wgpu_options, &curve_params::<E>()?)
            .map(WgpuBackend::from_opened)
    }

    /// The form each curve's formulas take on this instance.
    pub fn formulas(&self) -> PerCurve<Formulas> {
        self.ctx.formulas
    }

    /// Every compute pipeline this instance has created, with its creation time
    /// (shader compilation, which the first use of an operation pays once, less what
    /// the pipeline cache saves) and what the cache did.
    pub fn pipeline_compiles(&self) -> Vec<PipelineCompile> {
        self.ctx.compiles()
    }

    /// One line on the pipelines created so far: how many, their total creation time,
    /// how many came with saved cache data (each creation is also logged at `info`:
    /// `RUST_LOG=crucible_backend_wgpu=info`).
    pub fn pipeline_compile_report(&self) -> String {
        device::context::compile_report(&self.ctx.compiles())
    }

    /// The straight-line form's Fq limb width of each curve on this instance.
    pub fn limb_bits(&self) -> PerCurve<LimbBits> {
        self.ctx.limbs
    }

    /// Every tuning choice this instance was opened with.
    pub fn tuned(&self) -> Tuned {
        self.ctx.tuned
    }

    /// Whether the device was opened with 64-bit integers in shaders (`SHADER_INT64`,
    /// where the adapter offers them): the wide NTT product and Fq limbs of 17 to 32
    /// bits need them.
    pub fn has_int64(&self) -> bool {
        self.ctx.int64
    }

    /// Runs `op` elementwise on packed words (`a[i] op b[i]`) through the shaders'
    /// test entry points; operands and results use [`field::DeviceElement`]'s layout.
    pub fn field_op(&self, op: FieldOp, a: &[u32], b: &[u32]) -> Result<Vec<u32>> {
        test_entries::field_op::<E>(self, &self.ctx, op, a, b)
    }

    /// Runs `op` elementwise on G1 points through the curve test entry point: `a` and
    /// the result are projective, `b` projective or affine as `op` says.
    pub fn g1_op(&self, op: CurveOp, a: &[u32], b: &[u32]) -> Result<Vec<u32>> {
        test_entries::curve_op::<E>(self, &self.ctx, Program::G1Add, op, a, b)
    }

    /// Like [`WgpuBackend::g1_op`], over G2.
    pub fn g2_op(&self, op: CurveOp, a: &[u32], b: &[u32]) -> Result<Vec<u32>> {
        test_entries::curve_op::<E>(self, &self.ctx, Program::G2Add, op, a, b)
    }

    /// The limits this instance works within.
    pub fn limits(&self) -> DeviceLimits {
        self.ctx.limits
    }

    /// The buffers, submissions and parameter uploads this instance has made so far:
    /// a repeated operation on a lease should make no buffer and at most one
    /// submission.
    pub fn activity(&self) -> Activity {
        self.ctx.activity()
    }
}

fn probe<E: DeviceCurve>(options: &ProbeOptions) -> Vec<Probe<E>> {
    match WgpuOptions::from_probe(options) {
        Ok(wgpu_options) => probe_with(options, &wgpu_options),
        Err(e) => vec![Probe::Unavailable {
            reason: e.to_string(),
        }],
    }
}

/// Probes with explicit options (the registry uses [`WgpuOptions::from_probe`]): one
/// backend per adapter proving over `E`, or why there is none.
pub fn probe_with<E: DeviceCurve>(
    options: &ProbeOptions,
    wgpu_options: &WgpuOptions,
) -> Vec<Probe<E>> {
    let unavailable = |e: WgpuError| Probe::Unavailable {
        reason: e.to_string(),
    };
    let curve = match curve_params::<E>() {
        Ok(curve) => curve,
        Err(e) => return vec![unavailable(e)],
    };
    match device::open_each(options, wgpu_options, &curve) {
        Ok(opened) => opened
            .into_iter()
            .map(|o| match o {
                Ok(o) => Probe::Available(
                    Arc::new(WgpuBackend::<E>::from_opened(o)) as Arc<dyn ProverBackend<E>>
                ),
                Err(e) => unavailable(e),
            })
            .collect(),
        Err(e) => vec![unavailable(e)],
    }
}

inventory::submit! {
    BackendRegistration {
        name: "wgpu",
        description: "WGSL compute shaders through wgpu (Vulkan, Metal, DX12; llvmpipe without a GPU)",
        probe: probe::<Bls12_381>,
        probe_bn254: probe::<Bn254>,
    }
}

fn buffer(lease: &Lease, id: BufferId) -> Result<&DeviceBuffer> {
    lease.get::<DeviceBuffer>(id)
}

impl<E: DeviceCurve> ProverBackend<E> for WgpuBackend<E> {
    fn info(&self) -> &BackendInfo {
        &self.info
    }

    fn budget(&self) -> &Arc<DeviceBudget> {
        &self.budget
    }

    fn device_sync(&self) -> Arc<dyn DeviceSync> {
        Arc::new(QueueSync(Arc::clone(&self.ctx)))
    }

    fn element_bytes(&self, kind: ElementKind) -> u64 {
        self.ctx.curve.element_bytes(kind)
    }

    /// Scalar buffers carry a host-readable staging buffer of up to 4 MiB for
    /// `read_scalars` (which gets no `&mut Lease` to allocate one), so they take more
    /// than `element_bytes · len`.
    fn buffer_bytes(&self, kind: ElementKind, len: usize, _usage: BufferUse) -> Result<u64> {
        memory::buffer_bytes(&self.ctx.curve, kind, len)
    }

    fn scratch_plan(&self, need: &ScratchNeed<E::ScalarField>) -> MemoryPlan {
        let mut plan = MemoryPlan::new(format!("wgpu scratch on {}", self.info.label()));
        // Every operation (pointwise ones too) leases its dispatch parameters.
        plan.item(PARAMS_ITEM, self.ctx.limits.params_bytes());
        if let Some(domain) = need.ntt {
            plan.merge(&ntt::scratch_plan(&self.ctx, &domain));
        }
        plan.merge(&msm::scratch_plan::<G1<E>>(&self.ctx, need.msm_g1));
        plan.merge(&msm::scratch_plan::<G2<E>>(&self.ctx, need.msm_g2));
        plan
    }

    fn alloc(
        &self,
        lease: &mut Lease,
        key: PlanKey,
        kind: ElementKind,
        len: usize,
        _usage: BufferUse,
    ) -> Result<BufferId> {
        memory::alloc(&self.ctx, lease, key, kind, len)
    }

    fn stage_scalars(
        &self,
        lease: &mut Lease,
        dst: ScalarBuf,
        src: &[E::ScalarField],
    ) -> Result<()> {
        Ok(memory::stage(
            &self.ctx,
            &self.uploads,
            buffer(lease, dst.id())?,
            ElementKind::Scalar,
            src,
        )?)
    }

    fn stage_scalars_padded(
        &self,
        lease: &mut Lease,
        dst: ScalarBuf,
        src: &[E::ScalarField],
    ) -> Result<()> {
        crucible_core::check_padded(src, dst)?;
        let buf = buffer(lease, dst.id())?;
        memory::stage(&self.ctx, &self.uploads, buf, ElementKind::Scalar, src)?;
        Ok(memory::zero_from(&self.ctx, buf, src.len())?)
    }

    fn stage_g1(&self, lease: &mut Lease, dst: G1Buf, src: &[E::G1Affine]) -> Result<()> {
        Ok(memory::stage(
            &self.ctx,
            &self.uploads,
            buffer(lease, dst.id())?,
            ElementKind::G1,
            src,
        )?)
    }

    fn stage_g2(&self, lease: &mut Lease, dst: G2Buf, src: &[E::G2Affine]) -> Result<()> {
        Ok(memory::stage(
            &self.ctx,
            &self.uploads,
            buffer(lease, dst.id())?,
            ElementKind::G2,
            src,
        )?)
    }

    fn stage_indices(&self, lease: &mut Lease, dst: IndexBuf, src: &[u32]) -> Result<()> {
        Ok(memory::stage(
            &self.ctx,
            &self.uploads,
            buffer(lease, dst.id())?,
            ElementKind::Index,
            src,
        )?)
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
        sparse_product::sparse_product(&self.ctx, work, matrices, matrix, z, out)
    }

    fn read_scalars(&self, lease: &Lease, src: ScalarBuf) -> Result<Vec<E::ScalarField>> {
        Ok(memory::read(&self.ctx, buffer(lease, src.id())?)?)
    }

    fn warm_up(&self, domain: &Domain<E::ScalarField>) -> Result<()> {
        let started = std::time::Instant::now();
        let mut wanted = ntt::pipelines(&self.ctx, domain)?;
        wanted.extend(msm::pipelines::<G1<E>>(&self.ctx)?);
        wanted.extend(msm::pipelines::<G2<E>>(&self.ctx)?);
        wanted.extend(pointwise::pipelines());
        wanted.extend(sparse_product::pipelines(&self.ctx));
        // All at once, each on a thread of its own: the slowest one is the wait (both
        // curves' MSMs name the sort's pipelines: created once).
        let created = self.ctx.prepare(&wanted)?;
        if created > 0 {
            tracing::info!(
                "{}: warm-up for proofs over 2^{}: {created} pipelines created in {:.2} s",
                self.info.label(),
                domain.log_size,
                started.elapsed().as_secs_f64()
            );
        }
        Ok(())
    }

    fn ntt(
        &self,
        lease: &mut Lease,
        buf: ScalarBuf,
        domain: &Domain<E::ScalarField>,
        kind: NttKind,
    ) -> Result<()> {
        ntt::ntt(&self.ctx, lease, buf, domain, kind)
    }

    fn mul_assign(&self, lease: &mut Lease, dst: ScalarBuf, rhs: ScalarBuf) -> Result<()> {
        pointwise::pointwise::<E::ScalarField>(&self.ctx, lease, dst, rhs, None)
    }

    fn sub_mul_assign(
        &self,
        lease: &mut Lease,
        dst: ScalarBuf,
        rhs: ScalarBuf,
        k: E::ScalarField,
    ) -> Result<()> {
        pointwise::pointwise(&self.ctx, lease, dst, rhs, Some(k))
    }

    fn msm_g1(&self, work: &mut Lease, bases: &Lease, span: MsmSpan<G1Buf>) -> Result<E::G1> {
        msm::msm::<G1<E>, _>(
            &self.ctx,
            work,
            bases,
            span.bases.id(),
            span.bases.len(),
            &span,
        )
    }

    fn msm_g2(&self, work: &mut Lease, bases: &Lease, span: MsmSpan<G2Buf>) -> Result<E::G2> {
        msm::msm::<G2<E>, _>(
            &self.ctx,
            work,
            bases,
            span.bases.id(),
            span.bases.len(),
            &span,
        )
    }
}
