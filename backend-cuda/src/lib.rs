//! crucible-backend-cuda: NTT and MSM on NVIDIA GPUs, over BLS12-381 or BN254
//! ([`CudaBackend<E>`](CudaBackend), [`CudaCurve`]): one pipeline, its sizes taken from
//! the curve's fields (`field.rs`), its kernels compiled for the curve by one define
//! (`programs.rs`).
//!
//! cudarc with dynamic loading (builds with no CUDA installed; a missing driver is
//! reported as unavailable, never a panic), kernels in `kernels/*.cu` compiled with
//! NVRTC to machine code for the device's own architecture at first use (and cached
//! on disk under `CRUCIBLE_CACHE_DIR`'s `cuda` folder), or built into the binary for
//! sm_80 and sm_90 (BLS12-381's programs only: BN254's compile at first use). Every
//! device byte comes from a [`Lease`]; release frees stream-ordered, synchronizes,
//! trims the memory pool, and only then returns the budget. Kernels run on one
//! stream, host-to-device copies on a second (so staging overlaps compute; cudarc's
//! per-buffer events order the two). Two things stay in a lease between operations,
//! under their own plan items: the NTT tables of its domain (`ntt/`), and the last
//! MSM's sort of its scalars, reused by the next MSM over the same unchanged scalars
//! (`msm/sort_reuse.rs`). MSM bases buffers are allocated with room for window planes
//! (multiples of each point, built on the device when the bases are staged) as far as
//! the budget allows (`msm/planes.rs`). The tuning file's
//! `[cuda]` table (`tuning.rs`) overrides the defaults, read once when a device opens.
//!
//! Layers, each module importing only those below it (a test lists the edges and
//! fails on a cycle): `driver` (every unsafe call), `error`, `field`, `programs` (the
//! NVRTC programs' layout, shared with the build script), `embedded` (the CUBINs the
//! build compiled) and `tuning` at the bottom; `kernels` (the CUBINs: embedded, cached
//! on disk or compiled by NVRTC) and `launch` (one typed function per kernel);
//! `memory` (buffers under a lease) and `staging` (bulk copies through pinned host
//! buffers, both ways); then the operations, `pointwise`, `sparse_product` (A·z, B·z
//! and C·z from the matrices staged with the key), `ntt/` and `msm/`; `pinned_bases`
//! (streamed bases copied straight from a pinned key into `msm/`'s buffers); this file
//! registers the backend and implements the trait by delegating.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod cost;
mod device;
#[allow(unsafe_code)]
mod driver;
mod embedded;
mod error;
mod field;
mod kernels;
mod launch;
mod memory;
mod msm;
mod ntt;
mod pinned;
mod pinned_bases;
mod pointwise;
mod programs;
mod sparse_product;
mod staging;
mod tuning;

use std::marker::PhantomData;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use crucible_core::registry::{BackendRegistration, Probe, ProbeOptions};
use crucible_core::{
    BackendInfo, Bls12_381, Bn254, BufferId, BufferUse, CostModel, DeviceBudget, DeviceMarker,
    DeviceMemory, DeviceSync, Domain, ElementKind, Error, G1Buf, G2Buf, HostPin, IndexBuf, Lease,
    MemoryPlan, MsmSpan, NttKind, PinnedScalars, PlanKey, ProverBackend, Result, ScalarBuf,
    ScratchNeed, SparseMatrixBufs,
};

pub use error::CudaError;
pub use field::{CudaCurve, CurveShape, DeviceElement, DeviceScalar};

use device::Device;
use field::{Group, Which};
use launch::Kernels;
use memory::{CudaBuffer, DeviceWords};
use msm::BasesBuffer;
use tuning::CudaTuning;

/// The CUDA backend for one device, proving over the curve `E` (BLS12-381 unless named;
/// BN254 too, [`CudaCurve`]): its kernels are compiled for `E`, and every size follows
/// from `E`'s fields. One pipeline serves both curves.
pub struct CudaBackend<E = Bls12_381> {
    device: Device,
    budget: Arc<DeviceBudget>,
    kernels: OnceLock<std::result::Result<Kernels, String>>,
    /// Pinned host buffers for staging, allocated at the first upload.
    staging: staging::SharedStaging,
    /// Pinned host buffers for read-backs, allocated at the first read.
    reads: staging::SharedStaging,
    /// The `[cuda]` table of the tuning file, read once at open.
    tuning: CudaTuning,
    /// The last MSM's sort, for the next MSM over the same scalars.
    sorts: msm::SortReuse,
    /// The caller's host memory pinned through this backend, copied without staging.
    pins: pinned::Pins,
    /// The curve: its kernels and its element sizes.
    curve: PhantomData<fn() -> E>,
}

/// A timing event recorded on the compute stream.
struct EventMarker(cudarc::driver::CudaEvent);

impl DeviceMarker for EventMarker {
    fn since(&self, start: &dyn DeviceMarker) -> Result<std::time::Duration> {
        let start = start
            .as_any()
            .downcast_ref::<EventMarker>()
            .ok_or_else(|| Error::InvalidInput("a device marker of another backend".into()))?;
        let ms = start.0.elapsed_ms(&self.0).map_err(CudaError::from)?;
        Ok(std::time::Duration::from_secs_f64(
            f64::from(ms.max(0.0)) / 1e3,
        ))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Waits for the device's stream, then trims the memory pool so freed memory is
/// visible as free to every process.
struct StreamSync {
    device_ctx: Arc<cudarc::driver::CudaContext>,
    stream: Arc<cudarc::driver::CudaStream>,
    copy: Arc<cudarc::driver::CudaStream>,
}

impl DeviceSync for StreamSync {
    fn synchronize(&self) -> Result<()> {
        self.copy.synchronize().map_err(CudaError::from)?;
        self.stream.synchronize().map_err(CudaError::from)?;
        driver::trim_memory_pool(&self.device_ctx)?;
        Ok(())
    }
}

impl<E: CudaCurve> CudaBackend<E> {
    /// Opens CUDA device `ordinal` with a budget from `options`, to prove over `E`.
    pub fn open(ordinal: usize, options: &ProbeOptions) -> Result<CudaBackend<E>> {
        // Evaluated per curve: a curve whose scalars are not the kernels' size fails to build.
        let () = E::SCALARS_FIT;
        if let Some(reason) = driver::missing_library() {
            return Err(Error::Unavailable {
                backend: "cuda".into(),
                reason: reason.into(),
            });
        }
        let tuning = CudaTuning::from_file(&options.tuning)?;
        let device = device::open(ordinal)?;
        // Sized from what is free now, not from the total: another process's memory
        // is not ours to plan with.
        let (free, _) = device::memory_info(&device.ctx)?;
        let budget = DeviceBudget::new(device.info.label(), options.budget_capacity(free));
        let chunk_words = staging::chunk_words(tuning.staging_mib());
        Ok(CudaBackend {
            device,
            budget,
            kernels: OnceLock::new(),
            staging: staging::SharedStaging::new(staging::HostMapping::WriteCombined, chunk_words),
            reads: staging::SharedStaging::new(staging::HostMapping::Cached, chunk_words),
            tuning,
            sorts: msm::SortReuse::default(),
            pins: pinned::Pins::default(),
            curve: PhantomData,
        })
    }

    /// `which` of the curve's groups, with the curve's sizes.
    fn group(which: Which) -> Group {
        Group::new(which, E::SHAPE)
    }

    /// How NVRTC compiled the kernels (each program, and the wall time), once they are.
    pub fn kernel_compile_report(&self) -> Option<String> {
        self.kernels
            .get()
            .and_then(|k| k.as_ref().ok())
            .map(|k| k.report.to_string())
    }

    /// Bytes of staged keys' streamed bases that are pinned and ready to be copied as
    /// they lie, over every device of the process (pinning runs in the background
    /// after a key is staged, pinned_bases.rs). For tests and diagnostics.
    pub fn pinned_bases_ready(&self) -> usize {
        pinned_bases::ready_bytes()
    }

    /// Whether the window planes of bases buffer `id` of `lease` are built
    /// (msm/planes.rs): None for a buffer without room for planes. For tests and
    /// diagnostics.
    pub fn planes_built(&self, lease: &Lease, id: BufferId) -> Result<Option<bool>> {
        let buf = lease.get::<BasesBuffer>(id)?;
        buf.planes
            .map(|_| buf.ledger().map(|l| l.built()))
            .transpose()
    }

    /// The kernels of the curve, compiled on first use (NVRTC, for this device's
    /// architecture); the compile's report is logged (`RUST_LOG=crucible_backend_cuda=info`
    /// shows it).
    fn kernels(&self) -> Result<&Kernels> {
        self.kernels
            .get_or_init(|| {
                let kernels = Kernels::load(&self.device.ctx, self.device.arch, E::CURVE)
                    .map_err(|e| e.to_string())?;
                tracing::info!("{}: {}", self.device.info.label(), kernels.report);
                Ok(kernels)
            })
            .as_ref()
            .map_err(|e| Error::device("cuda", e))
    }

    /// The per-window sums of an MSM over `group`, computed on the device.
    fn window_sums<B>(
        &self,
        group: Group,
        work: &mut Lease,
        bases: &Lease,
        bases_id: BufferId,
        bases_len: usize,
        span: &MsmSpan<B>,
    ) -> Result<msm::WindowSums> {
        let cx = msm::MsmContext {
            stream: self.stream(),
            kernels: self.kernels()?,
            tuning: &self.tuning,
        };
        msm::msm(
            &cx,
            group,
            work,
            bases,
            bases_id,
            bases_len,
            span,
            &self.sorts,
        )
    }

    fn stream(&self) -> &Arc<cudarc::driver::CudaStream> {
        &self.device.stream
    }

    /// The window planes a bases buffer of `len` elements of `kind` gets
    /// (msm/planes.rs): resident bases only; a streamed chunk is restaged too often to
    /// pay for them.
    fn planes_for(&self, kind: ElementKind, len: usize, usage: BufferUse) -> Option<msm::Planes> {
        let group = match (kind, usage) {
            (_, BufferUse::Plain) | (ElementKind::Scalar | ElementKind::Index, _) => return None,
            (ElementKind::G1, BufferUse::Resident) => Self::group(Which::G1),
            (ElementKind::G2, BufferUse::Resident) => Self::group(Which::G2),
        };
        msm::planes_for(len, group, self.budget.capacity(), &self.tuning)
    }

    /// Bases were just staged into buffer `id` (`len` points): eagerly built planes
    /// are built now (msm/planes.rs).
    fn bases_staged(&self, group: Group, lease: &Lease, id: BufferId, len: usize) -> Result<()> {
        msm::bases_staged(
            self.stream(),
            || self.kernels(),
            &self.tuning,
            group,
            lease,
            id,
            len,
        )
    }

    /// Reads scalar buffer `src` back through the pinned read-back buffers, handing
    /// each chunk's words (and the range of scalars they hold) to `take` while the
    /// next chunk copies.
    fn read_chunks(
        &self,
        lease: &Lease,
        src: ScalarBuf,
        take: impl FnMut(std::ops::Range<usize>, &[u32]),
    ) -> Result<()> {
        self.reads.with(&self.device.ctx, |reads| {
            staging::download_chunked(
                self.stream(),
                lease,
                src.id(),
                reads,
                src.len(),
                field::FR_WORDS,
                take,
            )
        })
    }

    /// Stages `len` points of `group` into bases buffer `id` (of `expected` points):
    /// into its front, or the whole buffer where it has window planes (built from every
    /// point, here once staged). In one copy straight from a pinned key where the
    /// points' device `words` lie in one (pinned_bases.rs), else through the staging
    /// buffers, `fill` converting them.
    fn stage_bases(
        &self,
        group: Group,
        lease: &mut Lease,
        (id, len, expected): (BufferId, usize, usize),
        words: Option<&[u32]>,
        fill: impl Fn(Range<usize>, &mut [u32]),
    ) -> Result<()> {
        let whole = msm::void_planes(lease, id)?;
        if len > expected || (whole && len != expected) {
            return Err(Error::InvalidInput(format!(
                "staging {len} elements into a buffer of {expected}"
            )));
        }
        if !pinned_bases::upload(&self.device.copy, lease, id, words)? {
            self.upload::<BasesBuffer>(lease, id, len, group.affine_words(), fill)?;
        }
        self.bases_staged(group, lease, id, expected)
    }

    /// Copies `src` to the front of scalar buffer `id`: pinned scalars in one copy,
    /// straight from the caller's memory; the rest through the staging buffers,
    /// converted on every core.
    fn upload_scalars(
        &self,
        lease: &mut Lease,
        id: BufferId,
        src: &[E::ScalarField],
    ) -> Result<()> {
        match self.pins.words(src) {
            Some(words) => pinned::upload::<CudaBuffer>(&self.device.copy, lease, id, words),
            None => self.upload::<CudaBuffer>(lease, id, src.len(), field::FR_WORDS, |r, w| {
                field::to_words(&src[r], w)
            }),
        }
    }

    /// Copies `len` elements of `words` words each, as `fill` converts them, to the
    /// front of buffer `id`, through the pinned staging buffers on the copy stream.
    fn upload<B: DeviceWords>(
        &self,
        lease: &mut Lease,
        id: BufferId,
        len: usize,
        words: usize,
        fill: impl Fn(Range<usize>, &mut [u32]),
    ) -> Result<()> {
        self.staging.with(&self.device.ctx, |staging| {
            staging::upload_chunked::<B>(&self.device.copy, lease, id, staging, len, words, fill)
        })
    }
}

/// The devices proving over `E`: one backend per device, or why there are none.
fn probe<E: CudaCurve>(options: &ProbeOptions) -> Vec<Probe<E>> {
    if let Some(reason) = driver::missing_library() {
        return vec![Probe::Unavailable {
            reason: reason.into(),
        }];
    }
    let count = match device::count() {
        Ok(0) => {
            return vec![Probe::Unavailable {
                reason: "no CUDA device found".into(),
            }]
        }
        Ok(n) => n,
        Err(e) => {
            return vec![Probe::Unavailable {
                reason: e.to_string(),
            }]
        }
    };
    (0..count)
        .map(|i| match CudaBackend::<E>::open(i, options) {
            Ok(b) => Probe::Available(Arc::new(b)),
            Err(e) => Probe::Unavailable {
                reason: format!("device {i}: {e}"),
            },
        })
        .collect()
}

inventory::submit! {
    BackendRegistration {
        name: "cuda",
        description: "NVIDIA GPUs through CUDA (cudarc, NVRTC)",
        probe: probe::<Bls12_381>,
        probe_bn254: probe::<Bn254>,
    }
}

impl<E: CudaCurve> ProverBackend<E> for CudaBackend<E> {
    fn info(&self) -> &BackendInfo {
        &self.device.info
    }

    fn budget(&self) -> &Arc<DeviceBudget> {
        &self.budget
    }

    // Phase boundaries wait for both streams but keep the memory pool: trimming it
    // there (as the lease's release does, so that other processes see the memory
    // free) made the next allocations map fresh pages, inside the timed phases.
    fn synchronize(&self) -> Result<()> {
        self.device.copy.synchronize().map_err(CudaError::from)?;
        self.device.stream.synchronize().map_err(CudaError::from)?;
        Ok(())
    }

    // CUDA events with timing on the compute stream.
    fn device_marker(&self) -> Result<Option<Box<dyn DeviceMarker>>> {
        let event = self
            .device
            .stream
            .record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(CudaError::from)?;
        Ok(Some(Box::new(EventMarker(event))))
    }

    fn device_sync(&self) -> Arc<dyn DeviceSync> {
        Arc::new(StreamSync {
            device_ctx: self.device.ctx.clone(),
            stream: self.device.stream.clone(),
            copy: self.device.copy.clone(),
        })
    }

    fn element_bytes(&self, kind: ElementKind) -> u64 {
        E::SHAPE.element_bytes(kind)
    }

    // Zero-length buffers still take one word on the device; resident bases take
    // their window planes (msm/planes.rs).
    fn buffer_bytes(&self, kind: ElementKind, len: usize, usage: BufferUse) -> Result<u64> {
        if len == 0 {
            Ok(4)
        } else {
            let planes = self.planes_for(kind, len, usage);
            memory::buffer_bytes(E::SHAPE.element_bytes(kind), len, msm::copies(planes))
        }
    }

    // Every program compiles (or loads from the binary or the disk cache) at once, on
    // the first use of any kernel: beside the key's staging rather than in its first
    // proof.
    fn warm_up(&self, domain: &Domain<E::ScalarField>) -> Result<()> {
        let _ = domain;
        self.kernels().map(|_| ())
    }

    fn device_memory(&self) -> Result<Option<DeviceMemory>> {
        let (free, total) = device::memory_info(&self.device.ctx)?;
        Ok(Some(DeviceMemory { free, total }))
    }

    // Fitted to BLS12-381 on the H200 and used for both curves: BN254's rates, on its
    // smaller base field, are unmeasured.
    fn cost_model(&self) -> CostModel {
        cost::cost_model()
    }

    fn scratch_plan(&self, need: &ScratchNeed<E::ScalarField>) -> MemoryPlan {
        let mut plan = MemoryPlan::new("cuda scratch");
        if let Some(domain) = &need.ntt {
            ntt::scratch_plan(domain, &mut plan);
        }
        let capacity = self.budget.capacity();
        if need.msm_g1 > 0 {
            let g1 = Self::group(Which::G1);
            msm::scratch_plan(g1, need.msm_g1, capacity, &self.tuning, &mut plan);
        }
        if need.msm_g2 > 0 {
            let g2 = Self::group(Which::G2);
            msm::scratch_plan(g2, need.msm_g2, capacity, &self.tuning, &mut plan);
        }
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
        self.sorts.scalars_written();
        let group = match kind {
            ElementKind::Scalar | ElementKind::Index => {
                let bytes = E::SHAPE.element_bytes(kind);
                return memory::alloc(self.stream(), lease, key, bytes, len);
            }
            ElementKind::G1 => Self::group(Which::G1),
            ElementKind::G2 => Self::group(Which::G2),
        };
        let planes = self.planes_for(kind, len, usage);
        msm::alloc_bases(self.stream(), lease, key, group, len, planes)
    }

    fn pin_scalars<'a>(
        &self,
        scalars: &'a mut [E::ScalarField],
    ) -> Result<PinnedScalars<'a, E::ScalarField>> {
        self.pins.pin(&self.device.ctx, scalars)
    }

    fn pin_g1_bases(&self, bases: &[E::G1Affine]) -> Result<Option<Box<dyn HostPin>>> {
        pinned_bases::pin(&self.device.ctx, driver::point_device_words(bases))
    }

    fn pin_g2_bases(&self, bases: &[E::G2Affine]) -> Result<Option<Box<dyn HostPin>>> {
        pinned_bases::pin(&self.device.ctx, driver::point_device_words(bases))
    }

    fn stage_scalars(
        &self,
        lease: &mut Lease,
        dst: ScalarBuf,
        src: &[E::ScalarField],
    ) -> Result<()> {
        crucible_core::check_front("scalars", src.len(), dst.len())?;
        self.sorts.scalars_written();
        self.upload_scalars(lease, dst.id(), src)
    }

    // The live rows are copied, the zero tail is set on the device (a 2^20-constraint
    // proof's domain vectors are 2^21 long, half of them zero).
    fn stage_scalars_padded(
        &self,
        lease: &mut Lease,
        dst: ScalarBuf,
        src: &[E::ScalarField],
    ) -> Result<()> {
        crucible_core::check_padded(src, dst)?;
        self.sorts.scalars_written();
        self.upload_scalars(lease, dst.id(), src)?;
        memory::zero_tail(
            &self.device.copy,
            lease,
            dst.id(),
            src.len() * field::FR_WORDS,
        )
    }

    fn stage_g1(&self, lease: &mut Lease, dst: G1Buf, src: &[E::G1Affine]) -> Result<()> {
        let words = driver::point_device_words(src);
        self.stage_bases(
            Self::group(Which::G1),
            lease,
            (dst.id(), src.len(), dst.len()),
            words,
            |r, w| field::to_words(&src[r], w),
        )
    }

    fn stage_g2(&self, lease: &mut Lease, dst: G2Buf, src: &[E::G2Affine]) -> Result<()> {
        let words = driver::point_device_words(src);
        self.stage_bases(
            Self::group(Which::G2),
            lease,
            (dst.id(), src.len(), dst.len()),
            words,
            |r, w| field::to_words(&src[r], w),
        )
    }

    // As stage_scalars: through the staging buffers on the copy stream; a kernel that
    // reads the words waits for the copy (cudarc's buffer events).
    fn stage_indices(&self, lease: &mut Lease, dst: IndexBuf, src: &[u32]) -> Result<()> {
        crucible_core::check_front("indices", src.len(), dst.len())?;
        self.upload::<CudaBuffer>(lease, dst.id(), src.len(), 1, |r, w| {
            field::copy_words(&src[r], w)
        })
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
        self.sorts.scalars_written();
        sparse_product::sparse_product(
            self.stream(),
            self.kernels()?,
            work,
            matrices,
            matrix,
            z,
            out,
        )
    }

    // Through the pinned read-back buffers, converted on every core while the next
    // chunk is copied.
    fn read_scalars(&self, lease: &Lease, src: ScalarBuf) -> Result<Vec<E::ScalarField>> {
        let mut out = Vec::with_capacity(src.len());
        self.read_chunks(lease, src, |_, words| {
            field::extend_from_words(&mut out, words)
        })?;
        Ok(out)
    }

    // As read_scalars, each chunk converted straight into its place in `dst`.
    fn read_scalars_into(
        &self,
        lease: &Lease,
        src: ScalarBuf,
        dst: &mut [E::ScalarField],
    ) -> Result<()> {
        crucible_core::check_read_len(src, dst)?;
        if let Some(words) = self.pins.words_mut(dst) {
            return pinned::download(self.stream(), lease, src.id(), words);
        }
        self.read_chunks(lease, src, |range, words| {
            field::words_into(&mut dst[range], words)
        })
    }

    fn ntt(
        &self,
        lease: &mut Lease,
        buf: ScalarBuf,
        domain: &Domain<E::ScalarField>,
        kind: NttKind,
    ) -> Result<()> {
        self.sorts.scalars_written();
        ntt::ntt(
            self.stream(),
            self.kernels()?,
            lease,
            buf,
            domain,
            kind,
            self.tuning.ntt_tile_bits(),
        )
    }

    fn mul_assign(&self, lease: &mut Lease, dst: ScalarBuf, rhs: ScalarBuf) -> Result<()> {
        self.sorts.scalars_written();
        pointwise::mul_assign(self.stream(), self.kernels()?, lease, dst, rhs)
    }

    fn sub_mul_assign(
        &self,
        lease: &mut Lease,
        dst: ScalarBuf,
        rhs: ScalarBuf,
        k: E::ScalarField,
    ) -> Result<()> {
        self.sorts.scalars_written();
        pointwise::sub_mul_assign(self.stream(), self.kernels()?, lease, dst, rhs, k)
    }

    fn msm_g1(&self, work: &mut Lease, bases: &Lease, span: MsmSpan<G1Buf>) -> Result<E::G1> {
        let g1 = Self::group(Which::G1);
        let sums = self.window_sums(g1, work, bases, span.bases.id(), span.bases.len(), &span)?;
        Ok(sums.combine(g1.xyzz_words(), field::xyzz_words_to_point::<E::G1Config>))
    }

    fn msm_g2(&self, work: &mut Lease, bases: &Lease, span: MsmSpan<G2Buf>) -> Result<E::G2> {
        let g2 = Self::group(Which::G2);
        let sums = self.window_sums(g2, work, bases, span.bases.id(), span.bases.len(), &span)?;
        Ok(sums.combine(g2.xyzz_words(), field::xyzz_words_to_point::<E::G2Config>))
    }
}
