//! MSM over G1 and G2 by the bucket method.
//!
//! On the device (shaders/msm_sort.wgsl, shaders/msm.wgsl): scalars out of Montgomery
//! form, a counting sort of the terms by bucket in every window, bucket sums by tasks
//! of at most [`TASK_SIZE`] points, the tasks of each bucket merged pairwise, and each
//! window's Σ b·B_b by levels of groups of four buckets, so that no thread's work
//! depends on the scalars. On the host: one point per window, combined by Horner's
//! rule. Terms are processed in batches that fit every scratch buffer into one binding
//! and never straddle a chunk of the bases or scalars.

use ark_ec::short_weierstrass::{Projective, SWCurveConfig};
use ark_ff::Zero;
use crucible_core::ark_bls12_381::{g1, g2};
use crucible_core::{
    check_span, combine_windows, BufferId, ElementKind, Lease, MemoryPlan, MsmSpan, Result,
};

use crate::batch::Batch;
use crate::context::Context;
use crate::field::{projective_words, read_projective, DeviceElement, Program, FR_WORDS};
use crate::memory::{check_kind, read_words, DeviceBuffer};
use crate::ntt::{finish, PARAMS_ITEM};
use crate::params::MsmParams;
use crate::shaders::Module;

/// Points one accumulation task adds at most. Small enough that a G2 task stays well
/// under llvmpipe's 65535 loop iterations per invocation (see shaders/msm_common.wgsl).
pub const TASK_SIZE: usize = 16;

/// Elements each thread of a reduction level combines (LEVEL_GROUP in msm.wgsl).
const LEVEL_GROUP: usize = 4;

/// Largest window: the bucket scan walks 2^MAX_WINDOW_BITS buckets in one thread.
const MAX_WINDOW_BITS: usize = 14;

/// Scalar bits covered by the windows (Fr's modulus has 255 bits).
const SCALAR_BITS: usize = 255;

/// Plan items of the MSM's scratch buffers.
pub mod items {
    use crucible_core::PlanKey;

    /// Canonical (non-Montgomery) scalars of a batch.
    pub const SCALARS: PlanKey = PlanKey::new("wgpu", "msm_scalars");
    /// Points per bucket.
    pub const COUNTS: PlanKey = PlanKey::new("wgpu", "msm_counts");
    /// Bucket ends in the sorted order.
    pub const CURSOR: PlanKey = PlanKey::new("wgpu", "msm_cursor");
    /// First task of every bucket.
    pub const TASK_OFFSETS: PlanKey = PlanKey::new("wgpu", "msm_task_offsets");
    /// Term indices sorted by bucket, per window.
    pub const SORTED: PlanKey = PlanKey::new("wgpu", "msm_sorted");
    /// Sums of the accumulation tasks.
    pub const PARTIALS: PlanKey = PlanKey::new("wgpu", "msm_partials");
    /// Odd reduction levels' outputs (and even levels' inputs).
    pub const LEVEL_A: PlanKey = PlanKey::new("wgpu", "msm_level_a");
    /// Even reduction levels' outputs.
    pub const LEVEL_B: PlanKey = PlanKey::new("wgpu", "msm_level_b");
    /// Host-readable copy of the last level: one point pair per window.
    pub const READBACK: PlanKey = PlanKey::new("wgpu", "msm_readback");
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
}

impl Config {
    /// Window size grows with the batch: about log2(n) − 3 bits, 2 to 14.
    fn new(n: usize) -> Config {
        let log = usize::BITS as usize - 1 - n.max(1).leading_zeros() as usize;
        let window_bits = log.saturating_sub(3).clamp(2, MAX_WINDOW_BITS);
        let buckets = 1usize << window_bits;
        Config {
            n,
            window_bits,
            windows: SCALAR_BITS.div_ceil(window_bits),
            buckets,
            // Σ_b ceil(count_b / T) over at most min(n, buckets − 1) non-empty buckets.
            max_tasks: (n + (TASK_SIZE - 1) * n.min(buckets - 1)) / TASK_SIZE,
        }
    }

    /// Merge rounds: a bucket has at most ceil(n / T) tasks.
    fn merge_rounds(&self) -> u32 {
        self.n
            .div_ceil(TASK_SIZE)
            .next_power_of_two()
            .trailing_zeros()
    }

    /// Elements per window after each reduction level, down to 1.
    fn levels(&self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut m = self.buckets;
        while m > 1 {
            m = m.div_ceil(LEVEL_GROUP);
            out.push(m);
        }
        out
    }

    /// Bytes of every scratch item, by name.
    fn items(&self, point_words: usize) -> [(crucible_core::PlanKey, u64); 9] {
        let w = self.windows as u64;
        let b = self.buckets as u64;
        let pair = 2 * 4 * point_words as u64;
        let levels = self.levels();
        let level_a = levels.first().copied().unwrap_or(1) as u64;
        let level_b = levels.get(1).copied().unwrap_or(1) as u64;
        [
            (items::SCALARS, self.n as u64 * 4 * FR_WORDS as u64),
            (items::COUNTS, w * b * 4),
            (items::CURSOR, w * b * 4),
            (items::TASK_OFFSETS, w * (b + 1) * 4),
            (items::SORTED, w * self.n as u64 * 4),
            (items::PARTIALS, w * self.max_tasks as u64 * pair / 2),
            (items::LEVEL_A, w * level_a * pair),
            (items::LEVEL_B, w * level_b * pair),
            (items::READBACK, w * pair),
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
            plan.at_least(name, bytes);
        }
        k += 1;
    }
    let chunk = ctx.limits.chunk_len(crate::field::element_bytes(P::KIND));
    if chunk < terms {
        plan.note(format!(
            "wgpu: {:?} bases in chunks of 2^{} (binding limit {} B)",
            P::KIND,
            chunk.trailing_zeros(),
            ctx.limits.binding_bytes
        ));
    }
    if most < terms {
        plan.note(format!(
            "wgpu: {:?} MSM in batches of at most {most} terms (binding limit {} B)",
            P::KIND,
            ctx.limits.binding_bytes
        ));
    }
    plan
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
    let scalar_buf = work.get::<DeviceBuffer>(span.scalars.id())?;
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
    let (canon, counts, cursor, task_off, sorted) = (buf(0)?, buf(1)?, buf(2)?, buf(3)?, buf(4)?);
    let (partials, level_a, level_b, readback, params) =
        (buf(5)?, buf(6)?, buf(7)?, buf(8)?, buf(9)?);
    let n = config.n;
    let program = P::ADD.range();
    let base = MsmParams {
        n: n as u32,
        windows: config.windows as u32,
        window_bits: config.window_bits as u32,
        buckets: config.buckets as u32,
        task_size: TASK_SIZE as u32,
        max_tasks: config.max_tasks as u32,
        scalar_offset: scalar_offset as u32,
        base_offset: base_offset as u32,
        ext: P::ADD.ext() as u32,
        prog_start: program.start,
        prog_len: program.len,
        ..MsmParams::default()
    };
    let with_count = |count: usize| MsmParams {
        count: count as u32,
        ..base
    };
    let terms_windows = n * config.windows;
    let tasks = config.windows * config.max_tasks;
    let mut batch = Batch::new(
        ctx,
        Some(params),
        format!("{:?} MSM batch of {n} terms", P::KIND),
    );
    batch.clear(counts);
    let sort = |entry| ctx.pipeline(Module::MsmSort, entry);
    let curve_module = Module::msm_buckets(P::ADD, ctx.formulas);
    let buckets = |entry| ctx.pipeline(curve_module, entry);
    batch.dispatch(
        sort("to_canonical")?,
        &with_count(n),
        vec![(1, scalars), (2, canon)],
        n as u32,
    )?;
    batch.dispatch(
        sort("histogram")?,
        &with_count(terms_windows),
        vec![(2, canon), (3, counts)],
        terms_windows as u32,
    )?;
    batch.dispatch(
        sort("scan")?,
        &with_count(config.windows),
        vec![(3, counts), (4, cursor), (5, task_off)],
        config.windows as u32,
    )?;
    batch.dispatch(
        sort("scatter")?,
        &with_count(terms_windows),
        vec![(2, canon), (4, cursor), (6, sorted)],
        terms_windows as u32,
    )?;
    batch.dispatch(
        buckets("accumulate")?,
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
    for round in 0..config.merge_rounds() {
        batch.dispatch(
            buckets("merge_tasks")?,
            &MsmParams {
                round,
                ..with_count(tasks)
            },
            vec![(5, task_off), (8, partials)],
            tasks as u32,
        )?;
    }
    // Level ℓ reads level_b (ℓ odd: level_a) and writes level_a (ℓ odd: level_b).
    let mut m_in = config.buckets;
    let mut last = level_a;
    for (level, m_out) in config.levels().into_iter().enumerate() {
        let (input, output) = if level % 2 == 0 {
            (level_b, level_a)
        } else {
            (level_a, level_b)
        };
        let threads = config.windows * m_out;
        batch.dispatch(
            buckets("reduce_level")?,
            &MsmParams {
                level: level as u32,
                m_in: m_in as u32,
                m_out: m_out as u32,
                ..with_count(threads)
            },
            vec![(5, task_off), (8, partials), (9, input), (10, output)],
            threads as u32,
        )?;
        m_in = m_out;
        last = output;
    }
    batch.submit()?;
    let point_words = projective_words::<P>();
    let bytes = (config.windows * 2 * point_words * 4) as u64;
    let words = read_words(ctx, last, 0, bytes, readback)?;
    combine::<P>(config, &words)
}

/// The batch's sum from each window's last-level pair (A, C), whose C is the window's
/// Σ b·B_b: Σ_w 2^(c·w)·C_w by Horner's rule.
fn combine<P: SWCurveConfig>(config: &Config, words: &[u32]) -> Result<Projective<P>>
where
    P::BaseField: DeviceElement,
{
    let pair = 2 * projective_words::<P>();
    let sums = (0..config.windows)
        .map(|w| {
            let c = words.get(w * pair + pair / 2..(w + 1) * pair).ok_or(
                crate::error::WgpuError::Corrupt {
                    what: "MSM readback",
                },
            )?;
            read_projective::<P>(c)
        })
        .collect::<std::result::Result<Vec<_>, crate::error::WgpuError>>()?;
    Ok(combine_windows(&sums, config.window_bits as u32))
}
