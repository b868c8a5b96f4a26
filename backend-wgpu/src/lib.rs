//! crucible-backend-wgpu: NTT and MSM over BLS12-381 in WGSL compute shaders, on any
//! Vulkan, Metal or DX12 adapter wgpu finds (on Linux without a GPU, Mesa's llvmpipe).
//!
//! Field elements are stored as arkworks' own Montgomery words ([`field`] explains
//! why) and computed on in limbs: 16-bit limbs in `u32` by the interpreter and the
//! loop code, and, where the adapter has 64-bit integers in shaders (`SHADER_INT64`),
//! wide limbs in `u64` columns (field_code.rs, fr_code.rs: Fr's NTT product over
//! eight 32-bit limbs, Fq over 28-bit limbs for G1 and 32-bit for G2); every device
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
//! straight-line WGSL functions on values generated from field.rs's instruction lists
//! over Fq code of each curve's limb width ([`LimbBits`]), loop-free (`straight`, G1's
//! default on hardware adapters), or run from the instruction lists by a loop over a
//! register file (`registers`: a fraction of the code, G2's default on hardware
//! adapters, whose straight G2 kernels take a driver minutes to compile); or through an
//! Fq interpreter shader over the same lists over 16-bit loop code (`interpreted`:
//! software adapters' default, where llvmpipe compiles the others for minutes).
//!
//! Every choice that depends on the adapter is typed tuning ([`WgpuTuning`], the
//! `[wgpu]` table of the tuning file), each key's default chosen by the adapter's
//! class: the formulas, the limb width, the NTT's product, the upload buffers, the
//! device memory where wgpu cannot report it, per-pass GPU timings (`profile`) and
//! the pipeline cache (under `$CRUCIBLE_CACHE_DIR/wgpu`).
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod adapter;
mod batch;
mod context;
mod error;
pub mod field;
mod field_code;
mod fr_code;
mod memory;
mod msm;
mod ntt;
mod params;
mod pipeline_cache;
mod profile;
mod readback;
mod shaders;
mod sparse_product;
mod straight;
mod tuning;
mod upload;

use std::sync::Arc;

use crucible_core::ark_bls12_381::{g1, g2};
use crucible_core::registry::{BackendRegistration, Probe, ProbeOptions};
use crucible_core::{
    BackendInfo, BufferId, BufferUse, DeviceBudget, DeviceSync, Domain, ElementKind, Fr, G1Affine,
    G1Buf, G1Projective, G2Affine, G2Buf, G2Projective, IndexBuf, Lease, MemoryPlan, MsmSpan,
    NttKind, PlanKey, ProverBackend, Result, ScalarBuf, ScratchNeed, SparseMatrixBufs,
};

pub use adapter::{WgpuOptions, ADAPTER_ENV};
pub use context::{Activity, DeviceLimits, PipelineCompile};
pub use error::WgpuError;
pub use field_code::LimbBits;
pub use ntt::MAX_TILE_BITS;
pub use pipeline_cache::CacheUse;
pub use shaders::{Formulas, NttMul, PerCurve};
pub use tuning::{AdapterClass, Tuned, WgpuTuning, DEFAULT_UPLOAD_MIB, MSM_WINDOW_BITS};

use batch::{Batch, ParamsBuffer, PARAMS_ITEM};
use context::{Context, QueueSync};
use field::Program;
use memory::DeviceBuffer;
use params::{FrTestParams, ProgramTestParams};
use shaders::Module;

/// The wgpu backend on one adapter.
pub struct WgpuBackend {
    info: BackendInfo,
    budget: Arc<DeviceBudget>,
    ctx: Arc<Context>,
    uploads: upload::Uploads,
}

impl WgpuBackend {
    fn from_opened(opened: adapter::Opened) -> Self {
        WgpuBackend {
            info: opened.info,
            budget: opened.budget,
            ctx: opened.ctx,
            uploads: opened.uploads,
        }
    }

    /// Opens the first adapter that works (the one `--backend wgpu` names `wgpu:0`).
    pub fn open(options: &ProbeOptions, wgpu_options: &WgpuOptions) -> Result<Self, WgpuError> {
        adapter::open_first(options, wgpu_options).map(WgpuBackend::from_opened)
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
        context::compile_report(&self.ctx.compiles())
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

    /// The test module and entry point running `program`, in this instance's form.
    fn program_entry(&self, program: Program) -> (Module, &'static str) {
        let module = match (self.ctx.formulas.of(program), program.ext()) {
            (Formulas::Interpreted, _) => return (Module::ProgramTest, "program_op"),
            (_, 1) => Module::FormulaTestG1,
            _ => Module::FormulaTestG2,
        };
        (module, program.straight_entry())
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

    /// Runs `op` elementwise on packed words (`a[i] op b[i]`) through the shaders'
    /// test entry points; operands and results use [`field::DeviceElement`]'s layout.
    pub fn field_op(&self, op: FieldOp, a: &[u32], b: &[u32]) -> Result<Vec<u32>> {
        let program = match op {
            FieldOp::FrAdd | FieldOp::FrSub | FieldOp::FrMul | FieldOp::FrFromMont => {
                return self.run_test(
                    Module::FrTest,
                    "fr_op",
                    fr_test_params(op),
                    field::FR_WORDS,
                    a,
                    b,
                );
            }
            FieldOp::FqAdd => Program::FqAdd,
            FieldOp::FqSub => Program::FqSub,
            FieldOp::FqMul => Program::FqMul,
            FieldOp::Fq2Add => Program::Fq2Add,
            FieldOp::Fq2Sub => Program::Fq2Sub,
            FieldOp::Fq2Mul => Program::Fq2Mul,
        };
        let e = program.ext() as u32;
        let params = program_test_params(program, [e, e, e, 2 * e, e], 0);
        let (module, entry) = self.program_entry(program);
        let out_words = e as usize * field::FQ_WORDS;
        if self.ctx.formulas.of(program) == Formulas::Interpreted {
            return self.run_test(module, entry, params, out_words, a, b);
        }
        // The straight-line form computes in R' form: operands convert here, so that
        // the kernel runs the operation alone.
        let limbs = self.ctx.limbs.of(program);
        let (mut a, mut b) = (a.to_vec(), b.to_vec());
        field_code::words_to_internal(limbs, &mut a)?;
        field_code::words_to_internal(limbs, &mut b)?;
        let mut out = self.run_test(module, entry, params, out_words, &a, &b)?;
        field_code::words_from_internal(limbs, &mut out)?;
        Ok(out)
    }

    /// Runs `op` elementwise on G1 points through the curve test entry point: `a` and
    /// the result are projective, `b` projective or affine as `op` says.
    pub fn g1_op(&self, op: CurveOp, a: &[u32], b: &[u32]) -> Result<Vec<u32>> {
        self.curve_op(Program::G1Add, op, a, b)
    }

    /// Like [`WgpuBackend::g1_op`], over G2.
    pub fn g2_op(&self, op: CurveOp, a: &[u32], b: &[u32]) -> Result<Vec<u32>> {
        self.curve_op(Program::G2Add, op, a, b)
    }

    fn curve_op(&self, program: Program, op: CurveOp, a: &[u32], b: &[u32]) -> Result<Vec<u32>> {
        let e = program.ext() as u32;
        let b_fqs = match op {
            CurveOp::Add => 3 * e,
            CurveOp::AddAffine => 2 * e,
            CurveOp::Double => 0,
        };
        let params = program_test_params(program, [3 * e, 3 * e, b_fqs, 6 * e, 3 * e], op as u32);
        let (module, entry) = self.program_entry(program);
        self.run_test(
            module,
            entry,
            params,
            3 * e as usize * field::FQ_WORDS,
            a,
            b,
        )
    }
}

/// Field operations of the test entry points (shaders/fr_test.wgsl for Fr, programs
/// of shaders/program.wgsl for Fq and Fq2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldOp {
    /// Fr a + b.
    FrAdd,
    /// Fr a − b.
    FrSub,
    /// Fr a · b.
    FrMul,
    /// Fr a out of Montgomery form (the canonical integer's words).
    FrFromMont,
    /// Fq a + b.
    FqAdd,
    /// Fq a − b.
    FqSub,
    /// Fq a · b.
    FqMul,
    /// Fq2 a + b.
    Fq2Add,
    /// Fq2 a − b.
    Fq2Sub,
    /// Fq2 a · b.
    Fq2Mul,
}

/// Curve operations of the test entry point (shaders/program_test.wgsl).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CurveOp {
    /// Projective a + projective b (complete addition).
    Add = 0,
    /// Projective a + affine b, where b may be the stored identity (0, 0).
    AddAffine = 1,
    /// 2a (the addition program with Q = P).
    Double = 2,
}

/// The parameters of a test kernel, with the element count set when run.
trait TestParams: bytemuck::Pod {
    fn with_count(self, count: u32) -> Self;
}

impl TestParams for FrTestParams {
    fn with_count(self, count: u32) -> Self {
        FrTestParams { count, ..self }
    }
}

impl TestParams for ProgramTestParams {
    fn with_count(self, count: u32) -> Self {
        ProgramTestParams { count, ..self }
    }
}

fn fr_test_params(op: FieldOp) -> FrTestParams {
    let op = match op {
        FieldOp::FrAdd => 0,
        FieldOp::FrSub => 1,
        FieldOp::FrMul => 2,
        _ => 3,
    };
    FrTestParams {
        op,
        ..FrTestParams::default()
    }
}

/// `fqs`: a_fqs, b_reg, b_fqs, out_reg, out_fqs.
fn program_test_params(program: Program, fqs: [u32; 5], mode: u32) -> ProgramTestParams {
    let range = program.range();
    let [a_fqs, b_reg, b_fqs, out_reg, out_fqs] = fqs;
    ProgramTestParams {
        start: range.start,
        len: range.len,
        ext: program.ext() as u32,
        a_fqs,
        b_reg,
        b_fqs,
        out_reg,
        out_fqs,
        mode,
        ..ProgramTestParams::default()
    }
}

impl WgpuBackend {
    /// Runs one test kernel over `a.len() / out_words` elements.
    fn run_test<P: TestParams>(
        &self,
        module: Module,
        entry: &'static str,
        params: P,
        out_words: usize,
        a: &[u32],
        b: &[u32],
    ) -> Result<Vec<u32>> {
        let ctx = &*self.ctx;
        let count = a.len() / out_words;
        if count == 0 {
            return Ok(Vec::new());
        }
        let params = params.with_count(count as u32);
        let out_bytes = (count * out_words * 4) as u64;
        // Storage bindings must not be empty: a unary op still binds a one-word `b`.
        let b_words: Vec<u32> = if b.is_empty() { vec![0] } else { b.to_vec() };
        let storage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC;
        const TEST: &str = "wgpu_test";
        let buffers = [
            (PlanKey::new(TEST, "a"), 4 * a.len() as u64, storage),
            (PlanKey::new(TEST, "b"), 4 * b_words.len() as u64, storage),
            (PlanKey::new(TEST, "out"), out_bytes, storage),
            (
                PlanKey::new(TEST, "readback"),
                out_bytes,
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
        ];
        let mut plan = MemoryPlan::new("wgpu test op");
        for (item, bytes, _) in &buffers {
            plan.item(*item, *bytes);
        }
        plan.item(PARAMS_ITEM, ctx.limits.params_bytes());
        let mut lease = (self as &dyn ProverBackend).allocate(plan)?;
        let mut ids = Vec::new();
        for (item, bytes, usage) in buffers {
            ids.push(lease.allocate(item, bytes, || Ok(ctx.create_buffer(item, bytes, usage)?))?);
        }
        let params_id = ParamsBuffer::kept(ctx, &mut lease)?;
        let get = |i: usize| lease.get::<wgpu::Buffer>(ids[i]);
        let (a_buf, b_buf, out, readback) = (get(0)?, get(1)?, get(2)?, get(3)?);
        let params_buf = lease.get::<ParamsBuffer>(params_id)?;
        ctx.scoped("uploading test operands", || {
            ctx.queue.write_buffer(a_buf, 0, bytemuck::cast_slice(a));
            ctx.queue
                .write_buffer(b_buf, 0, bytemuck::cast_slice(&b_words));
        })?;
        let mut batch = Batch::new(ctx, Some(params_buf), "test op");
        batch.dispatch(
            ctx.pipeline(module, entry)?,
            &params,
            vec![(1, a_buf), (2, b_buf), (3, out)],
            count as u32,
        )?;
        batch.submit()?;
        let words = memory::read_words(ctx, out, 0, out_bytes, readback)?;
        lease.release()?;
        Ok(words)
    }
}

fn probe(options: &ProbeOptions) -> Vec<Probe> {
    match WgpuOptions::from_probe(options) {
        Ok(wgpu_options) => probe_with(options, &wgpu_options),
        Err(e) => vec![Probe::Unavailable {
            reason: e.to_string(),
        }],
    }
}

/// Probes with explicit options (the registry uses [`WgpuOptions::from_probe`]): one
/// backend per adapter, or why there is none.
pub fn probe_with(options: &ProbeOptions, wgpu_options: &WgpuOptions) -> Vec<Probe> {
    let unavailable = |e: WgpuError| Probe::Unavailable {
        reason: e.to_string(),
    };
    match adapter::open_each(options, wgpu_options) {
        Ok(opened) => opened
            .into_iter()
            .map(|o| match o {
                Ok(o) => Probe::Available(Arc::new(WgpuBackend::from_opened(o))),
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
        probe,
    }
}

fn buffer(lease: &Lease, id: BufferId) -> Result<&DeviceBuffer> {
    lease.get::<DeviceBuffer>(id)
}

impl ProverBackend for WgpuBackend {
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
        field::element_bytes(kind)
    }

    /// Scalar buffers carry a host-readable staging buffer of up to 4 MiB for
    /// `read_scalars` (which gets no `&mut Lease` to allocate one), so they take more
    /// than `element_bytes · len`.
    fn buffer_bytes(&self, kind: ElementKind, len: usize, _usage: BufferUse) -> Result<u64> {
        memory::buffer_bytes(kind, len)
    }

    fn scratch_plan(&self, need: &ScratchNeed) -> MemoryPlan {
        let mut plan = MemoryPlan::new(format!("wgpu scratch on {}", self.info.label()));
        // Every operation (pointwise ones too) leases its dispatch parameters.
        plan.item(PARAMS_ITEM, self.ctx.limits.params_bytes());
        if let Some(domain) = need.ntt {
            plan.merge(&ntt::scratch_plan(&self.ctx, &domain));
        }
        plan.merge(&msm::scratch_plan::<g1::Config>(&self.ctx, need.msm_g1));
        plan.merge(&msm::scratch_plan::<g2::Config>(&self.ctx, need.msm_g2));
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

    fn stage_scalars(&self, lease: &mut Lease, dst: ScalarBuf, src: &[Fr]) -> Result<()> {
        Ok(memory::stage(
            &self.ctx,
            &self.uploads,
            buffer(lease, dst.id())?,
            ElementKind::Scalar,
            src,
        )?)
    }

    fn stage_scalars_padded(&self, lease: &mut Lease, dst: ScalarBuf, src: &[Fr]) -> Result<()> {
        crucible_core::check_padded(src, dst)?;
        let buf = buffer(lease, dst.id())?;
        memory::stage(&self.ctx, &self.uploads, buf, ElementKind::Scalar, src)?;
        Ok(memory::zero_from(&self.ctx, buf, src.len())?)
    }

    fn stage_g1(&self, lease: &mut Lease, dst: G1Buf, src: &[G1Affine]) -> Result<()> {
        Ok(memory::stage(
            &self.ctx,
            &self.uploads,
            buffer(lease, dst.id())?,
            ElementKind::G1,
            src,
        )?)
    }

    fn stage_g2(&self, lease: &mut Lease, dst: G2Buf, src: &[G2Affine]) -> Result<()> {
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

    fn read_scalars(&self, lease: &Lease, src: ScalarBuf) -> Result<Vec<Fr>> {
        Ok(memory::read(&self.ctx, buffer(lease, src.id())?)?)
    }

    fn warm_up(&self, domain: &Domain) -> Result<()> {
        let started = std::time::Instant::now();
        let mut wanted = ntt::pipelines(&self.ctx, domain)?;
        wanted.extend(msm::pipelines::<g1::Config>(&self.ctx)?);
        wanted.extend(msm::pipelines::<g2::Config>(&self.ctx)?);
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

    fn ntt(&self, lease: &mut Lease, buf: ScalarBuf, domain: &Domain, kind: NttKind) -> Result<()> {
        ntt::ntt(&self.ctx, lease, buf, domain, kind)
    }

    fn mul_assign(&self, lease: &mut Lease, dst: ScalarBuf, rhs: ScalarBuf) -> Result<()> {
        ntt::pointwise(&self.ctx, lease, dst, rhs, None)
    }

    fn sub_mul_assign(
        &self,
        lease: &mut Lease,
        dst: ScalarBuf,
        rhs: ScalarBuf,
        k: Fr,
    ) -> Result<()> {
        ntt::pointwise(&self.ctx, lease, dst, rhs, Some(k))
    }

    fn msm_g1(
        &self,
        work: &mut Lease,
        bases: &Lease,
        span: MsmSpan<G1Buf>,
    ) -> Result<G1Projective> {
        msm::msm::<g1::Config, _>(
            &self.ctx,
            work,
            bases,
            span.bases.id(),
            span.bases.len(),
            &span,
        )
    }

    fn msm_g2(
        &self,
        work: &mut Lease,
        bases: &Lease,
        span: MsmSpan<G2Buf>,
    ) -> Result<G2Projective> {
        msm::msm::<g2::Config, _>(
            &self.ctx,
            work,
            bases,
            span.bases.id(),
            span.bases.len(),
            &span,
        )
    }
}
