//! MSM over G1 and G2 by the bucket method, with signed digits.
//!
//! On the device: scalars out of Montgomery form into signed digits and a counting
//! sort of the terms by bucket in every window (`sort`, shaders/msm_sort.wgsl), bucket
//! sums by tasks of at most [`TASK_SIZE`](cost::TASK_SIZE) points, the tasks of each
//! bucket merged pairwise, and each window's Σ b·B_b by levels of groups of four
//! buckets (`reduce`, shaders/msm.wgsl or msm_values.wgsl), so that no thread's work
//! depends on the scalars. On the host: one point per window, combined by Horner's
//! rule (`weighted`). Terms are processed in batches that fit every scratch buffer into
//! one binding and never straddle a chunk of the bases or scalars (`layout`).
//!
//! # Signed digits and the window size
//!
//! Digits in [−2^(c−1), 2^(c−1)] halve the buckets of a c-bit window (a negative digit
//! adds −B = (x, −y), which costs one subtraction), so a window can be one bit wider
//! for the same reduction work, and the point additions, n per window, fall with the
//! windows ⌈256 / c⌉. The window size minimises [`signed_cost`](cost::signed_cost),
//! the cost of a batch at the top of its power-of-two range under the curve form's
//! weights (at 2^20 terms by additions alone c = 16: 16 windows of 32769 buckets, about
//! 19.1 M additions); the per-window scan of the buckets runs on 64 threads.
//!
//! # Bucket sums
//!
//! A task's first point starts its sum instead of being added to the identity (one
//! addition fewer a task: 1.3 M of 19 M at 2^20). On G1 in the straight-line form, the
//! tasks add in XYZZ coordinates (shaders/msm_xyzz.wgsl: 10 products and 7 additions
//! a mixed addition against 12 and about 19 for the complete formula, about 0.7 of the
//! instructions) and leave projective points for the merges and the reduction. The
//! tuning file's `profile = true` prints where the GPU time goes, per phase.
//!
//! The layers, each importing only those below it: `cost` (the window's cost model),
//! `layout` (a batch's shape and scratch), `sort` (steps 1-4), `reduce` (steps 5-7)
//! and `weighted` (the host's sum); this file runs them in order.

mod cost;
mod layout;
mod reduce;
mod sort;
mod weighted;

use ark_ec::short_weierstrass::Projective;
use ark_ff::Zero;
use crucible_core::{check_span, BufferId, ElementKind, Lease, MemoryPlan, MsmSpan, Result};

use crate::device::batch::{Batch, ParamsBuffer, PARAMS_ITEM};
use crate::device::context::Context;
use crate::device::profile::{self, PassTimes};
use crate::field::projective_words;
use crate::memory::{check_kind, finish, read_words, DeviceBuffer};
use crate::wgsl::params::MsmParams;
use crate::wgsl::Module;

use cost::{CostWeights, TASK_SIZE};
use layout::{batch_len, items, Choice, Config, Scratch};
use reduce::{accumulate_entry, curve_entries};
pub use reduce::{MsmCurve, G1, G2};

/// `C`'s window choice on `ctx`: the weights of its formulas' form, the window the
/// tuning fixes.
fn choice<C: MsmCurve>(ctx: &Context) -> Choice {
    Choice {
        weights: CostWeights::of(C::ADD, ctx.formulas.of(C::ADD)),
        window: ctx.tuned.msm_window_bits.map(|c| c as usize),
    }
}

/// Scratch for MSMs over `C` of up to `terms` terms: for every window size a batch of
/// at most that many terms can get, its largest batch (items keep the maximum).
pub fn scratch_plan<C: MsmCurve>(ctx: &Context, terms: usize) -> MemoryPlan {
    let mut plan = MemoryPlan::new("wgpu MSM scratch");
    let point_words = projective_words::<C::Config>();
    if terms == 0 {
        return plan;
    }
    let choice = choice::<C>(ctx);
    let Ok(most) = batch_len(ctx, point_words, terms, choice) else {
        return plan;
    };
    let mut k = 0;
    while (1usize << k) <= most {
        let top = ((1usize << (k + 1)) - 1).min(most);
        for (name, bytes) in Config::new(top, choice).items(ctx, point_words) {
            plan.at_least(name, bytes);
        }
        k += 1;
    }
    let chunk = ctx.limits.chunk_len(ctx.curve.element_bytes(C::KIND));
    if chunk < terms {
        plan.note(format!(
            "wgpu: {:?} bases in chunks of 2^{} (binding limit {} B)",
            C::KIND,
            chunk.trailing_zeros(),
            ctx.limits.binding_bytes
        ));
    }
    if most < terms {
        plan.note(format!(
            "wgpu: {:?} MSM in batches of at most {most} terms (binding limit {} B)",
            C::KIND,
            ctx.limits.binding_bytes
        ));
    }
    plan
}

/// Σ scalars·bases over the group `C` for `span`.
pub fn msm<C: MsmCurve, B: Copy>(
    ctx: &Context,
    work: &mut Lease,
    bases: &Lease,
    bases_id: BufferId,
    bases_len: usize,
    span: &MsmSpan<B>,
) -> Result<Projective<C::Config>> {
    check_span(span, bases_len)?;
    if span.len == 0 {
        return Ok(Projective::zero());
    }
    let started = std::time::Instant::now();
    let choice = choice::<C>(ctx);
    let point_words = projective_words::<C::Config>();
    let batch = batch_len(ctx, point_words, span.len, choice)?;
    let config = Config::new(batch, choice);
    // The curve module's pipelines compile together on a cold start.
    ctx.prepare(&curve_entries::<C>(ctx))?;
    let prepared = started.elapsed();
    let scratch = Scratch::allocate(ctx, work, &config, point_words)?;
    let allocated = started.elapsed();
    let mut times = PassTimes::default();
    let result = run_batches::<C, B>(
        ctx, work, bases, bases_id, span, &config, &scratch, &mut times,
    );
    let ran = started.elapsed();
    let mut total = Projective::zero();
    let failed = result.is_err();
    let done = result.map(|sum| total = sum);
    finish(ctx, work, done, &scratch.to_free(failed))?;
    if profile::enabled(ctx) {
        let [_, _, reduce] = curve_entries::<C>(ctx);
        // Where the wall time beside the passes goes, on the host's clock.
        eprintln!(
            "wgpu MSM host phases: pipelines {:.3} ms, scratch allocation {:.3} ms, batches \
             (record, submit, wait, read back, combine) {:.3} ms, release {:.3} ms",
            prepared.as_secs_f64() * 1e3,
            (allocated - prepared).as_secs_f64() * 1e3,
            (ran - allocated).as_secs_f64() * 1e3,
            (started.elapsed() - ran).as_secs_f64() * 1e3
        );
        eprint!(
            "{}",
            times.table(
                &format!(
                    "{:?} MSM of {} terms (c = {}, {} windows of {} buckets, batches of {}; \
                     {} formulas, buckets {}, reduction {:?}::{})",
                    C::KIND,
                    span.len,
                    config.window_bits,
                    config.windows,
                    config.buckets,
                    config.n,
                    ctx.formulas.of(C::ADD).name(),
                    accumulate_entry::<C>(ctx),
                    reduce.0,
                    reduce.1
                ),
                started.elapsed()
            )
        );
    }
    Ok(total)
}

/// Every pipeline an MSM over `C` runs (the sort's and the curve module's), for a
/// warm-up.
pub fn pipelines<C: MsmCurve>(ctx: &Context) -> Result<Vec<(Module, &'static str)>> {
    let mut entries: Vec<_> = sort::ENTRIES
        .into_iter()
        .map(|entry| (Module::MsmSort, entry))
        .collect();
    entries.extend(curve_entries::<C>(ctx));
    Ok(entries)
}
#[allow(clippy::too_many_arguments)]
fn run_batches<C: MsmCurve, B: Copy>(
    ctx: &Context,
    work: &Lease,
    bases: &Lease,
    bases_id: BufferId,
    span: &MsmSpan<B>,
    config: &Config,
    scratch: &Scratch,
    times: &mut PassTimes,
) -> Result<Projective<C::Config>> {
    let base_buf = bases.get::<DeviceBuffer>(bases_id)?;
    let scalar_buf = work.get::<DeviceBuffer>(span.scalars.id())?;
    check_kind(base_buf, C::KIND)?;
    check_kind(scalar_buf, ElementKind::Scalar)?;
    let mut total = Projective::<C::Config>::zero();
    let mut done = 0;
    while done < span.len {
        let (bc, bi) = base_buf.locate(span.base_offset + done);
        let (sc, si) = scalar_buf.locate(span.scalar_offset + done);
        let n = (span.len - done)
            .min(config.n)
            .min(base_buf.chunk_elems(bc) - bi)
            .min(scalar_buf.chunk_elems(sc) - si);
        let batch = Config { n, ..*config };
        let (sum, batch_times) = run_batch::<C>(
            ctx,
            work,
            &base_buf.chunks[bc],
            bi,
            &scalar_buf.chunks[sc],
            si,
            &batch,
            scratch,
        )?;
        total += sum;
        times.extend(batch_times);
        done += n;
    }
    Ok(total)
}

/// One batch: recorded, submitted, its windows read back and combined.
#[allow(clippy::too_many_arguments)]
fn run_batch<C: MsmCurve>(
    ctx: &Context,
    work: &Lease,
    bases: &wgpu::Buffer,
    base_offset: usize,
    scalars: &wgpu::Buffer,
    scalar_offset: usize,
    config: &Config,
    scratch: &Scratch,
) -> Result<(Projective<C::Config>, PassTimes)> {
    let readback = scratch.buffer(work, items::READBACK)?;
    let params = work.get::<ParamsBuffer>(scratch.id(PARAMS_ITEM)?)?;
    let n = config.n;
    let program = C::ADD.range(&ctx.curve);
    let base = MsmParams {
        n: n as u32,
        windows: config.windows as u32,
        window_bits: config.window_bits as u32,
        buckets: config.buckets as u32,
        task_size: TASK_SIZE as u32,
        max_tasks: config.max_tasks as u32,
        scalar_offset: scalar_offset as u32,
        base_offset: base_offset as u32,
        ext: C::ADD.ext() as u32,
        prog_start: program.start,
        prog_len: program.len,
        ..MsmParams::default()
    };
    let mut batch = Batch::new(
        ctx,
        Some(params),
        format!("{:?} MSM batch of {n} terms", C::KIND),
    );
    if let Some(timer) = scratch.timer(ctx, work)? {
        batch.time_with(timer);
    }
    sort::record(ctx, &mut batch, work, scratch, scalars, config, base)?;
    let last = reduce::record::<C>(ctx, &mut batch, work, scratch, bases, config, base)?;
    let times = batch.submit_timed()?;
    let point_words = projective_words::<C::Config>();
    let bytes = (config.windows * 2 * point_words * 4) as u64;
    let words = read_words(ctx, last, 0, bytes, readback)?;
    Ok((weighted::combine::<C::Config>(config, &words)?, times))
}
