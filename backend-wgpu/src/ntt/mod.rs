//! NTTs (natural order in and out, as arkworks' `Radix2EvaluationDomain`), as
//! dispatches of shaders/ntt.wgsl (whose pointwise kernels pointwise.rs runs).
//!
//! Two paths, by the adapter: where it offers the 16 KiB of workgroup storage a tile
//! takes (WebGPU's default limit), the stages run in workgroup memory, up to 9 a
//! dispatch on tiles of up to 2^9 elements (three dispatches at 2^20 and 2^24), with a
//! twiddle table built once per domain and kept in the lease, the bit reversal fused
//! into the tile dispatches on one chunk (`tiles`; a reversal pass first on several
//! chunks), the coset scalings into the first dispatch's loads (or the reversal) and
//! into the last dispatch's stores. Elsewhere the passes run (`passes`): one global
//! dispatch per radix-2 stage, the twiddles recomputed from two small tables.
//!
//! A transform is one submission, and returns with it queued:
//! its tables, its power scratch and the parameter buffer stay in the lease for the
//! next (only a failure frees them), so a repeated transform creates no buffer and
//! waits for nothing.
//!
//! The layers, each importing only those below it: `steps` (a dispatch as data),
//! `twiddles` (the power tables), `passes` and `tiles` (the workgroup path); this file
//! chooses the path, records and submits.

mod passes;
mod steps;
mod tiles;
mod twiddles;

use crucible_core::{BufferId, Domain, ElementKind, Lease, MemoryPlan, NttKind, Result, ScalarBuf};

use crate::device::batch::{Batch, ParamsBuffer};
use crate::device::context::Context;
use crate::device::profile::{self, Timer};
use crate::error::{check_len, WgpuError};
use crate::field::{fr_words, DeviceScalar};
use crate::memory::{check_kind, finish, DeviceBuffer};
use crate::wgsl::{Module, NttMul};

use passes::pass_steps;
use steps::{Kernel, Step, Table};
pub use tiles::MAX_TILE_BITS;
use tiles::{workgroup_steps, TILE_STORAGE_BYTES};
use twiddles::{
    coset_entries, coset_powers, coset_table_step, fr_bytes, kept_scratch, kept_table, kept_tables,
    table_log, twiddle_entries, twiddle_table_steps, NttTable, COSET_INV_ITEM, COSET_ITEM,
    TABLE_ITEM, TWIDDLES_ITEM,
};

/// How the radix-2 stages of a transform run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NttPath {
    /// Up to [`MAX_TILE_BITS`] stages a dispatch on tiles in workgroup memory.
    Workgroup,
    /// One global dispatch per stage: adapters with less workgroup storage than a tile
    /// takes.
    Passes,
}

/// What a transform runs with: the path, the largest tile and the workgroup path's
/// product (`None`: the adapter's tuning). Always the default but in the tests, which
/// force a path, a product or smaller tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct NttConfig {
    path: NttPath,
    tile_bits: u32,
    mul: Option<NttMul>,
}

impl Default for NttConfig {
    fn default() -> Self {
        NttConfig {
            path: NttPath::Workgroup,
            tile_bits: MAX_TILE_BITS,
            mul: None,
        }
    }
}

/// An [`NttConfig`] resolved on one adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Chosen {
    path: NttPath,
    tile_bits: u32,
    mul: NttMul,
}

impl Chosen {
    /// The pipeline of each of `steps` (a kernel used twice named twice).
    fn step_entries(&self, steps: &[Step]) -> Vec<(Module, &'static str)> {
        let (module, _) = self.module();
        steps
            .iter()
            .map(|step| (module, step.kernel.entry()))
            .collect()
    }

    /// The module this choice's kernels are in, and how reports name the path.
    fn module(&self) -> (Module, &'static str) {
        match (self.path, self.mul) {
            (NttPath::Workgroup, NttMul::Unrolled) => {
                (Module::NttUnrolled, "workgroup, unrolled products")
            }
            (NttPath::Workgroup, NttMul::Loop) => (Module::Ntt, "workgroup, loop products"),
            (NttPath::Workgroup, NttMul::Wide) => (Module::NttWide, "workgroup, wide products"),
            (NttPath::Passes, _) => (Module::Ntt, "passes"),
        }
    }

    /// An error if the device cannot run this choice: the wide product needs 64-bit
    /// integers in shaders.
    fn check(&self, ctx: &Context) -> Result<()> {
        if self.path == NttPath::Workgroup && self.mul == NttMul::Wide && !ctx.int64 {
            return Err(WgpuError::Unsupported(
                "the wide NTT product needs 64-bit integers in shaders (SHADER_INT64), which \
                 this adapter does not offer"
                    .into(),
            )
            .into());
        }
        Ok(())
    }
}

impl NttConfig {
    /// The configuration on `ctx`: the product asked for or the adapter's tuned one,
    /// and the passes where the adapter offers less workgroup storage than a tile
    /// takes (WebGPU guarantees 16 KiB; a downlevel adapter may not).
    fn on(self, ctx: &Context) -> Chosen {
        let mut path = self.path;
        if ctx.device.limits().max_compute_workgroup_storage_size < TILE_STORAGE_BYTES {
            path = NttPath::Passes;
        }
        Chosen {
            path,
            tile_bits: self.tile_bits,
            mul: self.mul.unwrap_or(ctx.tuned.ntt_mul),
        }
    }
}

/// Scratch of the largest NTT of `domain`: the per-transform power tables, the kept
/// tables of the workgroup path, and, when the domain is larger than one binding, a
/// note saying how it is chunked.
pub fn scratch_plan<F: DeviceScalar>(ctx: &Context, domain: &Domain<F>) -> MemoryPlan {
    scratch_plan_for(ctx, domain, NttConfig::default().on(ctx))
}

/// [`scratch_plan`] on `config`'s path.
fn scratch_plan_for<F: DeviceScalar>(
    ctx: &Context,
    domain: &Domain<F>,
    config: Chosen,
) -> MemoryPlan {
    let mut plan = MemoryPlan::new("wgpu NTT scratch");
    let log_n = domain.log_size;
    let chunk_len = ctx
        .limits
        .chunk_len(ctx.curve.element_bytes(ElementKind::Scalar));
    if log_n > 0 {
        plan.item(TWIDDLES_ITEM, fr_bytes(twiddle_entries(log_n)));
        if config.path == NttPath::Workgroup {
            let t = table_log(log_n, chunk_len);
            if t > 0 {
                plan.item(TABLE_ITEM, fr_bytes(1 << (t - 1)));
            }
            plan.item(COSET_ITEM, fr_bytes(coset_entries(log_n)))
                .item(COSET_INV_ITEM, fr_bytes(coset_entries(log_n)));
        }
    }
    for (key, bytes) in profile::plan_items(ctx) {
        plan.item(key, bytes);
    }
    if domain.size > chunk_len {
        plan.note(format!(
            "wgpu: scalar buffers in {} chunks of 2^{} (binding limit {} B)",
            domain.size / chunk_len,
            chunk_len.trailing_zeros(),
            ctx.limits.binding_bytes
        ));
    }
    plan
}

/// The buffers one transform binds besides its data, all kept in the lease between
/// transforms.
#[derive(Default)]
struct KeptBuffers {
    scratch: Option<BufferId>,
    twiddles: Option<BufferId>,
    coset: Option<BufferId>,
    params: Option<BufferId>,
}

impl KeptBuffers {
    fn all(&self) -> impl Iterator<Item = BufferId> + '_ {
        [self.scratch, self.twiddles, self.coset, self.params]
            .into_iter()
            .flatten()
    }
}

/// Every pipeline the transforms of `domain` (each kind, tables built fresh) run, for a
/// warm-up.
pub fn pipelines<F: DeviceScalar>(
    ctx: &Context,
    domain: &Domain<F>,
) -> Result<Vec<(Module, &'static str)>> {
    let config = NttConfig::default().on(ctx);
    config.check(ctx)?;
    let chunk_len = ctx
        .limits
        .chunk_len(ctx.curve.element_bytes(ElementKind::Scalar));
    let mut steps = Vec::new();
    for kind in [
        NttKind::Forward,
        NttKind::Inverse,
        NttKind::CosetForward,
        NttKind::CosetInverse,
    ] {
        match config.path {
            NttPath::Passes => steps.extend(pass_steps(domain, kind, chunk_len)),
            NttPath::Workgroup => {
                let tables = kept_tables(domain, kind, chunk_len);
                if tables.twiddles {
                    steps.extend(twiddle_table_steps(domain, chunk_len));
                }
                if tables.coset {
                    steps.push(coset_table_step(domain, kind));
                }
                steps.extend(workgroup_steps(domain, kind, chunk_len, config.tile_bits));
            }
        }
    }
    Ok(config.step_entries(&steps))
}

/// In-place NTT of `buf` over `domain`, on the adapter's path.
pub fn ntt<F: DeviceScalar>(
    ctx: &Context,
    lease: &mut Lease,
    buf: ScalarBuf,
    domain: &Domain<F>,
    kind: NttKind,
) -> Result<()> {
    ntt_with(ctx, lease, buf, domain, kind, NttConfig::default())
}

/// In-place NTT of `buf` over `domain` on `config`'s path.
fn ntt_with<F: DeviceScalar>(
    ctx: &Context,
    lease: &mut Lease,
    buf: ScalarBuf,
    domain: &Domain<F>,
    kind: NttKind,
    config: NttConfig,
) -> Result<()> {
    if domain.log_size >= 32 {
        return Err(WgpuError::Unsupported(format!(
            "NTT of 2^{} points: the wgpu backend indexes with 32-bit integers",
            domain.log_size
        ))
        .into());
    }
    let chunk_len = {
        let data = lease.get::<DeviceBuffer>(buf.id())?;
        check_kind(data, ElementKind::Scalar)?;
        check_len("NTT input", domain.size, data.len)?;
        data.chunk_len
    };
    let config = config.on(ctx);
    config.check(ctx)?;
    let mut steps = match config.path {
        NttPath::Passes => pass_steps(domain, kind, chunk_len),
        NttPath::Workgroup => workgroup_steps(domain, kind, chunk_len, config.tile_bits),
    };
    if steps.is_empty() {
        return Ok(());
    }
    let tw_bytes = fr_bytes(twiddle_entries(domain.log_size));
    let coset_bytes = match config.path {
        NttPath::Workgroup => fr_bytes(coset_entries(domain.log_size)),
        NttPath::Passes => 0,
    };
    if tw_bytes.max(coset_bytes) > ctx.limits.binding_bytes {
        return Err(WgpuError::Unsupported(format!(
            "NTT of 2^{}: its power tables ({} B) exceed one binding ({} B)",
            domain.log_size,
            tw_bytes.max(coset_bytes),
            ctx.limits.binding_bytes
        ))
        .into());
    }
    let mut ids = KeptBuffers::default();
    let mut profiled = Vec::new();
    let result = (|| -> Result<()> {
        if config.path == NttPath::Workgroup {
            let mut build = Vec::new();
            let tables = kept_tables(domain, kind, chunk_len);
            if tables.twiddles {
                let t = table_log(domain.log_size, chunk_len);
                let root = domain.omega.pow([1u64 << (domain.log_size - t)]);
                let key = (t, fr_words(root));
                let (id, fresh) = kept_table(ctx, lease, TABLE_ITEM, key, 1 << (t - 1))?;
                ids.twiddles = Some(id);
                if fresh {
                    build.extend(twiddle_table_steps(domain, chunk_len));
                }
            }
            if tables.coset {
                let item = if kind == NttKind::CosetInverse {
                    COSET_INV_ITEM
                } else {
                    COSET_ITEM
                };
                let key = (domain.log_size, fr_words(coset_powers(domain, kind).0));
                let (id, fresh) =
                    kept_table(ctx, lease, item, key, coset_entries(domain.log_size))?;
                ids.coset = Some(id);
                if fresh {
                    build.push(coset_table_step(domain, kind));
                }
            }
            build.append(&mut steps);
            steps = build;
        }
        let scratch = steps.iter().any(|s| {
            let (tw, pw) = s.kernel.tables();
            (tw && s.tw == Table::Scratch) || (pw && s.pw == Table::Scratch)
        });
        if scratch {
            ids.scratch = Some(kept_scratch(ctx, lease, tw_bytes)?);
        }
        ids.params = Some(ParamsBuffer::kept(ctx, lease)?);
        let timer = profile::allocate(ctx, lease, &mut profiled)?;
        record(ctx, lease, buf, domain, kind, &steps, &ids, timer, config)
    })();
    match result {
        // Nothing to free: the transform stays queued, its buffers kept for the next.
        Ok(()) if profiled.is_empty() => Ok(()),
        Ok(()) => finish(ctx, lease, Ok(()), &profiled),
        // No later transform reads a table whose build did not run, or anything else
        // a failed one left.
        Err(e) => {
            profiled.extend(ids.all());
            finish(ctx, lease, Err(e), &profiled)
        }
    }
}

/// Records and submits `steps`.
#[allow(clippy::too_many_arguments)]
fn record<F: DeviceScalar>(
    ctx: &Context,
    lease: &Lease,
    buf: ScalarBuf,
    domain: &Domain<F>,
    kind: NttKind,
    steps: &[Step],
    ids: &KeptBuffers,
    timer: Option<(BufferId, BufferId)>,
    config: Chosen,
) -> Result<()> {
    let started = std::time::Instant::now();
    let (module, path) = config.module();
    let data = lease.get::<DeviceBuffer>(buf.id())?;
    let table = |id: Option<BufferId>| -> Result<Option<&wgpu::Buffer>> {
        id.map(|id| lease.get::<NttTable>(id).map(|t| &t.buffer))
            .transpose()
    };
    let scratch = ids
        .scratch
        .map(|id| lease.get::<wgpu::Buffer>(id))
        .transpose()?;
    let twiddles = table(ids.twiddles)?;
    let coset = table(ids.coset)?;
    let resolve = |t: Table| -> Result<&wgpu::Buffer> {
        let found = match t {
            Table::Scratch => scratch,
            Table::Twiddles => twiddles,
            Table::Coset => coset,
        };
        found.ok_or_else(|| {
            WgpuError::Validation {
                during: format!("{kind:?} NTT of 2^{}", domain.log_size),
                message: format!("a dispatch binds the {t:?} table, which is not allocated"),
            }
            .into()
        })
    };
    let title = format!("{kind:?} NTT of 2^{} ({})", domain.log_size, path);
    let params = ids
        .params
        .map(|id| lease.get::<ParamsBuffer>(id))
        .transpose()?;
    let mut batch = Batch::new(ctx, params, title.clone());
    if let Some((resolve, readback)) = timer {
        let (resolve, readback) = (lease.get(resolve)?, lease.get(readback)?);
        batch.time_with(Timer::new(ctx, resolve, readback));
    }
    // The transform's pipelines compile together on a cold start.
    ctx.prepare(&config.step_entries(steps))?;
    let mut tiles = 0;
    for step in steps {
        batch.phase(step.kernel.phase(&mut tiles));
        let p = step.params;
        let mut bindings = Vec::new();
        if step.kernel.data() {
            bindings.push((1, &data.chunks[p.lo_chunk as usize]));
            if !matches!(
                step.kernel,
                Kernel::Scale | Kernel::ScalePowers | Kernel::TileStages
            ) {
                bindings.push((2, &data.chunks[p.hi_chunk as usize]));
            }
        }
        let (tw, pw) = step.kernel.tables();
        if tw {
            bindings.push((3, resolve(step.tw)?));
        }
        if pw {
            bindings.push((4, resolve(step.pw)?));
        }
        let pipeline = ctx.pipeline(module, step.kernel.entry())?;
        batch.dispatch(pipeline, &p, bindings, step.threads())?;
    }
    if timer.is_some() {
        let times = batch.submit_timed()?;
        eprint!("{}", times.table(&title, started.elapsed()));
    } else {
        batch.submit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{WgpuBackend, WgpuOptions};
    use ark_ff::UniformRand;
    use ark_poly::EvaluationDomain;
    use ark_std::rand::{rngs::StdRng, SeedableRng};
    use crucible_core::registry::ProbeOptions;
    use crucible_core::{Bls12_381, Bn254, BufferUse, PlanKey, ProverBackend, ScratchNeed};

    use crate::field::DeviceCurve;

    fn reference<F: DeviceScalar>(values: &[F], domain: &Domain<F>, kind: NttKind) -> Vec<F> {
        let d = domain.to_ark();
        let mut v = values.to_vec();
        match kind {
            NttKind::Forward => d.fft_in_place(&mut v),
            NttKind::Inverse => d.ifft_in_place(&mut v),
            NttKind::CosetForward => d.get_coset(F::GENERATOR).unwrap().fft_in_place(&mut v),
            NttKind::CosetInverse => d.get_coset(F::GENERATOR).unwrap().ifft_in_place(&mut v),
        }
        v
    }

    fn open<E: DeviceCurve>(max_binding_bytes: Option<u64>) -> Option<WgpuBackend<E>> {
        let options = WgpuOptions {
            max_binding_bytes,
            ..WgpuOptions::default()
        };
        match WgpuBackend::<E>::open(&ProbeOptions::default(), &options) {
            Ok(b) => Some(b),
            Err(e) => {
                assert!(
                    !crucible_core::registry::is_required("wgpu"),
                    "wgpu is required (CRUCIBLE_REQUIRE) but unavailable: {e}"
                );
                println!("skipped, wgpu unavailable: {e}");
                None
            }
        }
    }

    /// Every kind at each of `logs` (largest first) on `config`'s path against
    /// arkworks, all in one lease planned for the largest (so the kept tables are
    /// reused across kinds and replaced across sizes), fresh random inputs.
    fn check<E: DeviceCurve>(
        backend: &WgpuBackend<E>,
        config: NttConfig,
        logs: &[u32],
        rng: &mut StdRng,
        at: &str,
    ) {
        let largest = Domain::<E::ScalarField>::with_log_size(logs[0]).unwrap();
        let x_item = PlanKey::new("test", "x");
        let mut plan = MemoryPlan::new("ntt path test");
        plan.item(
            x_item,
            backend
                .buffer_bytes(ElementKind::Scalar, largest.size, BufferUse::Resident)
                .unwrap(),
        );
        plan.merge(&backend.scratch_plan(&ScratchNeed::default()));
        plan.merge(&scratch_plan_for(
            &backend.ctx,
            &largest,
            config.on(&backend.ctx),
        ));
        let dynamic: &dyn ProverBackend<E> = backend;
        let mut lease = dynamic.allocate(plan).unwrap();
        for &log in logs {
            let domain = Domain::<E::ScalarField>::with_log_size(log).unwrap();
            let x = dynamic
                .alloc_scalars(&mut lease, x_item, domain.size)
                .unwrap();
            for kind in NttKind::ALL {
                let values: Vec<E::ScalarField> = (0..domain.size)
                    .map(|_| E::ScalarField::rand(rng))
                    .collect();
                backend.stage_scalars(&mut lease, x, &values).unwrap();
                ntt_with(&backend.ctx, &mut lease, x, &domain, kind, config).unwrap();
                let got = backend.read_scalars(&lease, x).unwrap();
                assert!(
                    got == reference(&values, &domain, kind),
                    "{at}, {config:?}: {kind:?} NTT of 2^{log} differs from arkworks"
                );
            }
            lease.free(x.id()).unwrap();
        }
        lease.release().unwrap();
    }

    /// The workgroup path with every product (the wide one where the adapter has
    /// 64-bit integers) and the passes, on one chunk and on buffers split into chunks of
    /// 32 elements (stages across chunks, as passes, and the scaling after them); the
    /// tile plans of every size are checked on the host (crucible_core::ntt_tiles), and
    /// the conformance suite runs the adapter's own path and product. The sizes are the
    /// plan shapes, one each.
    #[test]
    fn every_path_matches_arkworks_with_and_without_chunks() {
        every_path_matches_arkworks::<Bls12_381>();
    }

    /// The same on BN254's scalar field.
    #[test]
    fn every_path_matches_arkworks_on_bn254() {
        every_path_matches_arkworks::<Bn254>();
    }

    fn every_path_matches_arkworks<E: DeviceCurve>() {
        let seed = crucible_conformance::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        let at = format!(
            "{}, seed {seed} (CRUCIBLE_SEED={seed} repeats it)",
            E::CURVE.name()
        );
        let workgroup = NttConfig {
            path: NttPath::Workgroup,
            ..NttConfig::default()
        };
        let unrolled = NttConfig {
            mul: Some(NttMul::Unrolled),
            ..workgroup
        };
        // 2^10: three fused tile dispatches, the centered one of eight stages; 2^1: one
        // tile, read reversed (2^0 is nothing to do, tests/wgpu/ntt.rs's). 32-element
        // chunks: 2^7 in four, the reversal pass, two stages as passes and the scaling
        // after them.
        let wide = NttConfig {
            mul: Some(NttMul::Wide),
            ..workgroup
        };
        // Tiles of 2^3 (ntt_tiles' tests check the plans): fused in one dispatch (2^3),
        // three with a centered one of two stages (2^4, 2^6, 2^8) or one (2^5, 2^7),
        // and five (2^10: two on each side); the reversal pass and three (2^9).
        let tiles3 = NttConfig {
            tile_bits: 3,
            ..workgroup
        };
        let looped = NttConfig {
            mul: Some(NttMul::Loop),
            ..workgroup
        };
        // The passes (adapters with less workgroup storage than a tile), on one chunk
        // and on four.
        let passes = NttConfig {
            path: NttPath::Passes,
            ..NttConfig::default()
        };
        let small: &[u32] = &[10, 9, 8, 7, 6, 5, 4, 3];
        let cases: [(Option<u64>, NttConfig, &[u32]); 8] = [
            (None, workgroup, &[10, 1]),
            (Some(1024), unrolled, &[7]),
            (None, looped, &[10, 1]),
            (None, wide, &[10, 1]),
            (Some(1024), wide, &[7]),
            (None, tiles3, small),
            (None, passes, &[10, 1]),
            (Some(1024), passes, &[7]),
        ];
        let mut opened: Vec<(Option<u64>, WgpuBackend<E>)> = Vec::new();
        for (binding, config, logs) in cases {
            if !opened.iter().any(|(b, _)| *b == binding) {
                let Some(backend) = open::<E>(binding) else {
                    return;
                };
                opened.push((binding, backend));
            }
            let Some((_, backend)) = opened.iter().find(|(b, _)| *b == binding) else {
                continue;
            };
            if config.mul == Some(NttMul::Wide) && !backend.ctx.int64 {
                // Not a pass: the adapter cannot run the wide product at all.
                println!(
                    "wide product skipped: {} has no SHADER_INT64",
                    backend.info().device_name
                );
                continue;
            }
            let at = format!("{at}, bindings of {binding:?} B");
            check(backend, config, logs, &mut rng, &at);
        }
    }
}
