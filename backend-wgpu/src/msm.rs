//! MSM over G1 and G2 by the bucket method.
//!
//! On the device (shaders/msm_sort.wgsl, shaders/msm.wgsl): scalars out of Montgomery
//! form, a counting sort of the terms by bucket in every window, bucket sums by tasks
//! of at most [`TASK_SIZE`] points, and a running-sum reduction of each group of
//! buckets to two points. On the host: combining the groups of a window (a few hundred
//! additions) and the windows (Horner). Terms are processed in batches that fit every
//! scratch buffer into one binding and never straddle a chunk of the bases or scalars.

use ark_ec::short_weierstrass::{Projective, SWCurveConfig};
use ark_ec::PrimeGroup;
use ark_ff::{AdditiveGroup, Zero};
use crucible_core::ark_bls12_381::{g1, g2};
use crucible_core::{check_span, BufferId, ElementKind, Lease, MemoryPlan, MsmSpan, Result};

use crate::device::{Batch, Context, Module};
use crate::field::{projective_words, read_projective, DeviceElement, Program, FR_WORDS};
use crate::memory::{check_kind, read_words, DeviceBuffer};
use crate::ntt::{finish, PARAMS_ITEM};

/// Points one accumulation task adds at most.
pub const TASK_SIZE: usize = 64;

/// Most bucket groups per window in the device-side reduction.
const MAX_GROUPS: usize = 256;

/// Scalar bits covered by the windows (Fr's modulus has 255 bits).
const SCALAR_BITS: usize = 255;

/// Plan items of the MSM's scratch buffers.
pub mod items {
    /// Canonical (non-Montgomery) scalars of a batch.
    pub const SCALARS: &str = "wgpu-msm-scalars";
    /// Points per bucket.
    pub const COUNTS: &str = "wgpu-msm-counts";
    /// Bucket ends in the sorted order.
    pub const CURSOR: &str = "wgpu-msm-cursor";
    /// First task of every bucket.
    pub const TASK_OFFSETS: &str = "wgpu-msm-task-offsets";
    /// Term indices sorted by bucket, per window.
    pub const SORTED: &str = "wgpu-msm-sorted";
    /// Sums of the accumulation tasks.
    pub const PARTIALS: &str = "wgpu-msm-partials";
    /// Two points per bucket group.
    pub const GROUPS: &str = "wgpu-msm-groups";
    /// Host-readable copy of the groups.
    pub const READBACK: &str = "wgpu-msm-readback";
}

/// Which curve an MSM runs on.
pub trait MsmCurve: SWCurveConfig
where
    Self::BaseField: DeviceElement,
{
    /// Its point-addition program.
    const ADD: Program;
    /// Its bases' element kind.
    const KIND: ElementKind;
}

impl MsmCurve for g1::Config {
    const ADD: Program = Program::G1Add;
    const KIND: ElementKind = ElementKind::G1;
}

impl MsmCurve for g2::Config {
    const ADD: Program = Program::G2Add;
    const KIND: ElementKind = ElementKind::G2;
}

/// The shape of one batch of up to `n` terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Config {
    n: usize,
    window_bits: usize,
    windows: usize,
    buckets: usize,
    max_tasks: usize,
    groups: usize,
    group_len: usize,
}

impl Config {
    /// Window size grows with the batch: about log2(n) − 3 bits, 2 to 16.
    fn new(n: usize) -> Config {
        let log = usize::BITS as usize - 1 - n.max(1).leading_zeros() as usize;
        let window_bits = log.saturating_sub(3).clamp(2, 16);
        let buckets = 1usize << window_bits;
        let groups = buckets.min(MAX_GROUPS);
        Config {
            n,
            window_bits,
            windows: SCALAR_BITS.div_ceil(window_bits),
            buckets,
            // Σ_b ceil(count_b / T) over at most min(n, buckets − 1) non-empty buckets.
            max_tasks: (n + (TASK_SIZE - 1) * n.min(buckets - 1)) / TASK_SIZE,
            groups,
            group_len: buckets / groups,
        }
    }

    /// Bytes of every scratch item, by name.
    fn items(&self, point_words: usize) -> [(&'static str, u64); 8] {
        let w = self.windows as u64;
        let b = self.buckets as u64;
        let point = 4 * point_words as u64;
        let groups = w * self.groups as u64 * 2 * point;
        [
            (items::SCALARS, self.n as u64 * 4 * FR_WORDS as u64),
            (items::COUNTS, w * b * 4),
            (items::CURSOR, w * b * 4),
            (items::TASK_OFFSETS, w * (b + 1) * 4),
            (items::SORTED, w * self.n as u64 * 4),
            (items::PARTIALS, w * self.max_tasks as u64 * point),
            (items::GROUPS, groups),
            (items::READBACK, groups),
        ]
    }

    fn fits(&self, ctx: &Context, point_words: usize) -> bool {
        self.items(point_words)
            .iter()
            .all(|(_, bytes)| *bytes <= ctx.limits.binding_bytes)
    }
}

/// Largest batch for `P`: the end of the last window-size range (n = 2^(k+1) − 1)
/// whose scratch, and every smaller range's, fits one binding. None if not even one
/// term fits.
fn max_batch(ctx: &Context, point_words: usize) -> Option<usize> {
    let mut best = None;
    for k in 0..31 {
        let top = (1usize << (k + 1)) - 1;
        if !Config::new(top).fits(ctx, point_words) {
            break;
        }
        best = Some(top);
    }
    best
}

/// The batch size an MSM of `len` terms uses.
fn batch_len(ctx: &Context, point_words: usize, len: usize) -> Result<usize> {
    let most = max_batch(ctx, point_words).ok_or_else(|| {
        crucible_core::Error::Unsupported(format!(
            "MSM scratch does not fit a binding of {} bytes",
            ctx.limits.binding_bytes
        ))
    })?;
    Ok(len.min(most))
}

/// Scratch for MSMs over `P` of up to `terms` terms: for every window size a batch of
/// at most that many terms can get, its largest batch (items keep the maximum).
pub fn scratch_plan<P: MsmCurve>(ctx: &Context, terms: usize) -> MemoryPlan
where
    P::BaseField: DeviceElement,
{
    let mut plan = MemoryPlan::new("wgpu MSM scratch");
    let point_words = projective_words::<P>();
    if terms == 0 {
        return plan;
    }
    let Ok(most) = batch_len(ctx, point_words, terms) else {
        return plan;
    };
    let mut k = 0;
    while (1usize << k) <= most {
        let top = ((1usize << (k + 1)) - 1).min(most);
        for (name, bytes) in Config::new(top).items(point_words) {
            plan.item(name, bytes);
        }
        k += 1;
    }
    if most < terms {
        plan.item(
            format!(
                "wgpu: {:?} MSM in batches of at most {most} terms (binding limit {} B)",
                P::KIND,
                ctx.limits.binding_bytes
            ),
            0,
        );
    }
    plan
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct MsmParams {
    n: u32,
    windows: u32,
    window_bits: u32,
    buckets: u32,
    task_size: u32,
    max_tasks: u32,
    groups: u32,
    group_len: u32,
    scalar_offset: u32,
    base_offset: u32,
    count: u32,
    ext: u32,
    prog_start: u32,
    prog_len: u32,
    pad: [u32; 2],
}

struct Scratch {
    ids: Vec<BufferId>,
}

impl Scratch {
    fn allocate(
        ctx: &Context,
        work: &mut Lease,
        config: &Config,
        point_words: usize,
    ) -> Result<Scratch> {
        let mut scratch = Scratch { ids: Vec::new() };
        let storage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST;
        let result = (|| -> Result<()> {
            for (name, bytes) in config.items(point_words) {
                let usage = if name == items::READBACK {
                    wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST
                } else {
                    storage
                };
                let id =
                    work.allocate(name, bytes, || Ok(ctx.create_buffer(name, bytes, usage)?))?;
                scratch.ids.push(id);
            }
            let params = ctx.limits.params_bytes();
            let id = work.allocate(PARAMS_ITEM, params, || {
                Ok(ctx.create_buffer(
                    PARAMS_ITEM,
                    params,
                    wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                )?)
            })?;
            scratch.ids.push(id);
            Ok(())
        })();
        match result {
            Ok(()) => Ok(scratch),
            Err(e) => {
                for id in &scratch.ids {
                    let _ = work.free(*id);
                }
                Err(e)
            }
        }
    }

    fn buffer<'l>(&self, work: &'l Lease, index: usize) -> Result<&'l wgpu::Buffer> {
        work.get::<wgpu::Buffer>(self.ids[index])
    }
}

/// Σ scalars·bases over curve `P` for `span`.
pub fn msm<P: MsmCurve, B: Copy>(
    ctx: &Context,
    work: &mut Lease,
    bases: &Lease,
    bases_id: BufferId,
    bases_len: usize,
    span: &MsmSpan<B>,
) -> Result<Projective<P>>
where
    P::BaseField: DeviceElement,
{
    check_span(span, bases_len)?;
    if span.len == 0 {
        return Ok(Projective::zero());
    }
    let point_words = projective_words::<P>();
    let batch = batch_len(ctx, point_words, span.len)?;
    let config = Config::new(batch);
    let scratch = Scratch::allocate(ctx, work, &config, point_words)?;
    let result = run_batches::<P, B>(ctx, work, bases, bases_id, span, &config, &scratch);
    let mut total = Projective::zero();
    let done = result.map(|sum| total = sum);
    finish(ctx, work, done, &scratch.ids)?;
    Ok(total)
}

fn run_batches<P: MsmCurve, B: Copy>(
    ctx: &Context,
    work: &Lease,
    bases: &Lease,
    bases_id: BufferId,
    span: &MsmSpan<B>,
    config: &Config,
    scratch: &Scratch,
) -> Result<Projective<P>>
where
    P::BaseField: DeviceElement,
{
    let base_buf = bases.get::<DeviceBuffer>(bases_id)?;
    let scalar_buf = work.get::<DeviceBuffer>(span.scalars.id)?;
    check_kind(base_buf, P::KIND)?;
    check_kind(scalar_buf, ElementKind::Scalar)?;
    let mut total = Projective::<P>::zero();
    let mut done = 0;
    while done < span.len {
        let (bc, bi) = base_buf.locate(span.base_offset + done);
        let (sc, si) = scalar_buf.locate(span.scalar_offset + done);
        let n = (span.len - done)
            .min(config.n)
            .min(base_buf.chunk_elems(bc) - bi)
            .min(scalar_buf.chunk_elems(sc) - si);
        let batch = Config { n, ..*config };
        total += run_batch::<P>(
            ctx,
            work,
            &base_buf.chunks[bc],
            bi,
            &scalar_buf.chunks[sc],
            si,
            &batch,
            scratch,
        )?;
        done += n;
    }
    Ok(total)
}

#[allow(clippy::too_many_arguments)]
fn run_batch<P: MsmCurve>(
    ctx: &Context,
    work: &Lease,
    bases: &wgpu::Buffer,
    base_offset: usize,
    scalars: &wgpu::Buffer,
    scalar_offset: usize,
    config: &Config,
    scratch: &Scratch,
) -> Result<Projective<P>>
where
    P::BaseField: DeviceElement,
{
    let buf = |i| scratch.buffer(work, i);
    let (canon, counts, cursor, task_off, sorted, partials, groups, readback, params) = (
        buf(0)?,
        buf(1)?,
        buf(2)?,
        buf(3)?,
        buf(4)?,
        buf(5)?,
        buf(6)?,
        buf(7)?,
        buf(8)?,
    );
    let n = config.n;
    let base = MsmParams {
        n: n as u32,
        windows: config.windows as u32,
        window_bits: config.window_bits as u32,
        buckets: config.buckets as u32,
        task_size: TASK_SIZE as u32,
        max_tasks: config.max_tasks as u32,
        groups: config.groups as u32,
        group_len: config.group_len as u32,
        scalar_offset: scalar_offset as u32,
        base_offset: base_offset as u32,
        count: 0,
        ext: P::ADD.ext() as u32,
        prog_start: P::ADD.range().start,
        prog_len: P::ADD.range().len,
        pad: [0; 2],
    };
    let with_count = |count: usize| MsmParams {
        count: count as u32,
        ..base
    };
    let terms_windows = n * config.windows;
    let mut batch = Batch::new(
        ctx,
        Some(params),
        format!("{:?} MSM batch of {n} terms", P::KIND),
    );
    batch.clear(counts);
    batch.dispatch(
        ctx.pipeline(Module::MsmSort, "to_canonical")?,
        &with_count(n),
        vec![(1, scalars), (2, canon)],
        n as u32,
    )?;
    batch.dispatch(
        ctx.pipeline(Module::MsmSort, "histogram")?,
        &with_count(terms_windows),
        vec![(2, canon), (3, counts)],
        terms_windows as u32,
    )?;
    batch.dispatch(
        ctx.pipeline(Module::MsmSort, "scan")?,
        &with_count(config.windows),
        vec![(3, counts), (4, cursor), (5, task_off)],
        config.windows as u32,
    )?;
    batch.dispatch(
        ctx.pipeline(Module::MsmSort, "scatter")?,
        &with_count(terms_windows),
        vec![(2, canon), (4, cursor), (6, sorted)],
        terms_windows as u32,
    )?;
    let tasks = config.windows * config.max_tasks;
    batch.dispatch(
        ctx.pipeline(Module::MsmBuckets, "accumulate")?,
        &with_count(tasks),
        vec![
            (3, counts),
            (4, cursor),
            (5, task_off),
            (6, sorted),
            (7, bases),
            (8, partials),
        ],
        tasks as u32,
    )?;
    let group_threads = config.windows * config.groups;
    batch.dispatch(
        ctx.pipeline(Module::MsmBuckets, "bucket_reduce")?,
        &with_count(group_threads),
        vec![(5, task_off), (8, partials), (9, groups)],
        group_threads as u32,
    )?;
    batch.submit()?;
    let point_words = projective_words::<P>();
    let bytes = (group_threads * 2 * point_words * 4) as u64;
    let words = read_words(ctx, groups, 0, bytes, readback)?;
    combine::<P>(config, &words)
}

/// The batch's sum from each group's (S, U): a window is
/// Σ_g (group_len·g·S_g + U_g), and the windows combine as Σ_w 2^(c·w)·window_w.
fn combine<P: SWCurveConfig>(config: &Config, words: &[u32]) -> Result<Projective<P>>
where
    P::BaseField: DeviceElement,
{
    let point_words = projective_words::<P>();
    let mut points = words.chunks_exact(point_words);
    let mut windows = Vec::with_capacity(config.windows);
    for _ in 0..config.windows {
        let mut sums = Vec::with_capacity(config.groups);
        let mut weighted = Projective::<P>::zero();
        for _ in 0..config.groups {
            let (Some(s), Some(u)) = (points.next(), points.next()) else {
                return Err(crate::error::WgpuError::Corrupt {
                    what: "MSM readback",
                }
                .into());
            };
            sums.push(read_projective::<P>(s)?);
            weighted += read_projective::<P>(u)?;
        }
        // Σ_g g·S_g by running sums, top down.
        let mut running = Projective::<P>::zero();
        let mut by_index = Projective::<P>::zero();
        for s in sums.iter().skip(1).rev() {
            running += s;
            by_index += running;
        }
        windows.push(by_index.mul_bigint([config.group_len as u64]) + weighted);
    }
    let mut total = Projective::<P>::zero();
    for window in windows.iter().rev() {
        for _ in 0..config.window_bits {
            total.double_in_place();
        }
        total += window;
    }
    Ok(total)
}
