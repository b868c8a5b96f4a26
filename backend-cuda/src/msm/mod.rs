//! MSM on the device: Pippenger with signed c-bit digits, (point, sign) entries
//! counting-sorted by bucket, buckets summed in equal chunks of the sorted entries,
//! then reduced per window to a few plain sums (segmented running sums, then trees in
//! shared memory), all in XYZZ coordinates (the kernel contract is the header of
//! kernels/msm.cu). Over bases with window planes (`planes.rs`) all W windows' digits
//! share the buckets of wp windows; the planes are built when they pay for themselves
//! (planes.rs's ledger; this file asks it before each MSM). The host weighs and adds
//! the sums (`weighted`: Horner, a serial chain of doublings, which one CPU core runs
//! far faster than one GPU thread).
//!
//! Witness-aware (`ones`): the scalars are first classified on the device; the ones are
//! summed apart and Pippenger runs over the other nonzero scalars only, with a layout
//! chosen for their number (full-width scalars get no list and run as they are).
//!
//! The layers, each importing only those below it: `weighted` (the host's sum),
//! `cost` (the model that picks the window and the planes), `planes` (bases buffers
//! and their planes), `passes` (the tree reduction's launches), `sort_reuse` (keeping
//! a sort and a classification for the next MSM over the same scalars), `layout` (an
//! MSM's shape and scratch), `sort` (steps 1-4), `reduce` (steps 5-7) and `ones` (the
//! classification and the ones' sum); this file runs them in order.

mod cost;
mod layout;
mod ones;
mod passes;
mod planes;
mod reduce;
mod sort;
mod sort_reuse;
mod weighted;

use std::sync::Arc;

use crucible_core::{check_span, BufferId, Lease, MemoryPlan, MsmSpan, PlanKey, Result};
use cudarc::driver::CudaStream;

use crate::error::CudaError;
use crate::field::{Group, FR_WORDS};
use crate::launch::Kernels;
use crate::memory::{alloc_words, alloc_words_uninit, download, CudaBuffer};
use crate::tuning::{CudaTuning, PlanesBuild};
use layout::{Layout, Scratch, ITEMS, ZEROED};
use reduce::Reduced;
use sort_reuse::{Classes, KEPT};

pub use planes::{BasesBuffer, Planes};
pub use sort_reuse::SortReuse;
pub use weighted::WindowSums;

/// The window planes a bases buffer of `len` points of `group` gets under a budget of
/// `capacity` bytes (planes.rs), if any.
pub fn planes_for(len: usize, group: Group, capacity: u64, tuning: &CudaTuning) -> Option<Planes> {
    planes::choose_tuned(len, group, capacity, tuning)
}

/// Allocates a bases buffer of `len` points of `group`, with room for `planes`.
pub fn alloc_bases(
    stream: &Arc<CudaStream>,
    lease: &mut Lease,
    item: PlanKey,
    group: Group,
    len: usize,
    planes: Option<Planes>,
) -> Result<BufferId> {
    planes::alloc(stream, lease, item, group, len, planes)
}

/// New points are about to be staged into bases buffer `id`: its planes are void from
/// now (a staging that fails leaves no planes of other points in use). Returns whether
/// the buffer has room for planes: then it is staged whole (they are built from every
/// point).
pub fn void_planes(bases: &Lease, id: BufferId) -> Result<bool> {
    let buf = bases.get::<BasesBuffer>(id)?;
    buf.ledger()?.staged();
    Ok(buf.planes.is_some())
}

/// New points were staged into bases buffer `id` (`len` points of `group`): under
/// `msm_planes_build = "eager"` (the default) its planes are built now, with the kernels
/// `kernels` gives (only asked for then).
pub fn bases_staged<'k>(
    stream: &Arc<CudaStream>,
    kernels: impl FnOnce() -> Result<&'k Kernels>,
    tuning: &CudaTuning,
    group: Group,
    bases: &Lease,
    id: BufferId,
    len: usize,
) -> Result<()> {
    let buf = bases.get::<BasesBuffer>(id)?;
    if buf.planes.is_some() && tuning.planes_build() == PlanesBuild::Eager {
        let mut ledger = buf.ledger()?;
        planes::build(stream, kernels()?, group, buf, len)?;
        ledger.set_built();
    }
    Ok(())
}

/// The planes an MSM of `n` terms over `buf` (`len` points) runs on, if any: built
/// ones, or, under the `paid` policy (planes.rs), ones built now, before it, because
/// its predicted saving brings the savings since the bases were staged to the planes'
/// predicted build cost. None: it runs on plane 0, the points themselves.
fn usable_planes(
    cx: &MsmContext<'_>,
    group: Group,
    buf: &BasesBuffer,
    len: usize,
    n: usize,
    work: &Lease,
) -> Result<Option<Planes>> {
    let Some(table) = buf.planes else {
        return Ok(None);
    };
    let mut ledger = buf.ledger()?;
    if ledger.built() {
        return Ok(Some(table));
    }
    if cx.tuning.planes_build() != PlanesBuild::Paid {
        return Ok(None);
    }
    // Only an MSM that would run over the planes (their scratch planned, the model
    // preferring them) counts towards them.
    let over = layout::choose(group, n, Some(table), len, work, cx.tuning);
    if over.stride == 0 {
        return Ok(None);
    }
    let plain = layout::choose(group, n, None, len, work, cx.tuning);
    let saving = cost::saving_ns(
        group,
        n,
        (plain.c, plain.bucket_windows),
        (over.c, over.bucket_windows),
    );
    let build = cost::planes_build_ns(group, len, table.count, table.shift());
    if !ledger.pays(saving, build) {
        return Ok(None);
    }
    if let Err(e) = planes::build(cx.stream, cx.kernels, group, buf, len) {
        // Not built after all: the next MSM tries again from nothing saved.
        ledger.staged();
        return Err(e);
    }
    Ok(Some(table))
}

/// Copies of its points a bases buffer with `planes` holds.
pub fn copies(planes: Option<Planes>) -> u32 {
    planes::copies(planes)
}

/// Scratch items for MSMs of up to `n` terms over `group` (layout.rs, and ones.rs's
/// for the witness-aware MSM).
pub fn scratch_plan(
    group: Group,
    n: usize,
    capacity: u64,
    tuning: &CudaTuning,
    plan: &mut MemoryPlan,
) {
    layout::scratch_plan(group, n, capacity, tuning, plan);
    ones::scratch_plan(group, n, plan);
}

/// What an MSM runs on: the device's stream and kernels, and the backend's tuning.
pub struct MsmContext<'a> {
    /// The compute stream.
    pub stream: &'a Arc<CudaStream>,
    /// The loaded kernels.
    pub kernels: &'a Kernels,
    /// The tuning read at open.
    pub tuning: &'a CudaTuning,
}

/// Σ scalars·bases on the device; returns its weighted sums (none for an empty MSM)
/// and, witness-aware, the ones' sum. The sort of the scalars (steps 1-4) and their
/// classification are reused from the previous MSM when `reuse` holds those of the
/// same scalars, and kept for the next.
#[allow(clippy::too_many_arguments)]
pub fn msm<B>(
    cx: &MsmContext<'_>,
    group: Group,
    work: &mut Lease,
    bases: &Lease,
    bases_id: BufferId,
    bases_len: usize,
    span: &MsmSpan<B>,
    reuse: &SortReuse,
) -> Result<WindowSums> {
    check_span(span, bases_len)?;
    let n = span.len;
    if n == 0 {
        // The empty sum: no windows, no scratch, no launch.
        return Ok(WindowSums::empty());
    }
    if n >= 1 << 31 {
        return Err(too_large(n));
    }
    let key = reuse.class_key(span.scalars.id(), span.scalar_offset, n);
    let classes = match reuse.take_classes(&key, work)? {
        Some(classes) => classes,
        None => ones::classify(
            cx.stream,
            cx.kernels,
            work,
            span.scalars.id(),
            span.scalar_offset * FR_WORDS,
            n,
        )?,
    };
    let target = (bases, bases_id, bases_len);
    let rest = |work: &mut Lease| pippenger(cx, group, work, target, span, reuse, &classes);
    let sums = if classes.ones > 0 {
        let points = bases.get::<BasesBuffer>(bases_id)?;
        let points = points
            .words
            .slice(span.base_offset * group.affine_words()..);
        ones::sum(cx.stream, cx.kernels, group, work, &points, &classes, rest).map(
            |(ones, mut sums)| {
                sums.ones = ones;
                sums
            },
        )
    } else {
        rest(work)
    };
    match sums {
        Ok(sums) => {
            reuse.keep_classes(key, classes);
            Ok(sums)
        }
        Err(e) => {
            if let Some(list) = classes.list {
                work.free(list)?;
            }
            Err(e)
        }
    }
}

fn too_large(n: usize) -> crucible_core::Error {
    CudaError::Size(format!(
        "an MSM of {n} terms exceeds the kernels' 32-bit indices"
    ))
    .into()
}

/// Pippenger over the rest of `span` that `classes` lists (every term when it has no
/// list; none when there is no rest), on the bases buffer `bases_id` of `bases_len`
/// points.
#[allow(clippy::too_many_arguments)]
fn pippenger<B>(
    cx: &MsmContext<'_>,
    group: Group,
    work: &mut Lease,
    (bases, bases_id, bases_len): (&Lease, BufferId, usize),
    span: &MsmSpan<B>,
    reuse: &SortReuse,
    classes: &Classes,
) -> Result<WindowSums> {
    let terms = classes.rest;
    if terms == 0 {
        return Ok(WindowSums::empty());
    }
    let table = usable_planes(
        cx,
        group,
        bases.get::<BasesBuffer>(bases_id)?,
        bases_len,
        terms,
        work,
    )?;
    let layout = layout::choose(group, terms, table, bases_len, work, cx.tuning);
    if layout.windows * terms > u32::MAX as usize {
        return Err(too_large(terms));
    }
    let key = reuse.key(
        span.scalars.id(),
        span.scalar_offset,
        span.len,
        [
            layout.c,
            layout.bucket_windows as u32,
            layout.stride,
            u32::from(classes.list.is_some()),
        ],
    );
    let kept = reuse.take(&key, work)?;
    let mut ids = Vec::new();
    for (item, words) in layout.items(terms, group) {
        let id = match (kept, KEPT.iter().position(|k| *k == item)) {
            (Some(kept), Some(i)) => Ok(kept[i]),
            _ if ZEROED.contains(&item) => alloc_words(cx.stream, work, item, words),
            _ => alloc_words_uninit(cx.stream, work, item, words),
        };
        match id {
            Ok(id) => ids.push(id),
            Err(e) => {
                for id in ids {
                    work.free(id)?;
                }
                return Err(e);
            }
        }
    }
    let result = match <[BufferId; ITEMS]>::try_from(ids.as_slice()) {
        Ok(all) => run(
            cx,
            group,
            work,
            bases,
            bases_id,
            span,
            classes,
            &layout,
            &Scratch::new(all),
            kept.is_some(),
        ),
        Err(_) => {
            Err(CudaError::Size(format!("{} MSM scratch buffers, not {ITEMS}", ids.len())).into())
        }
    };
    let words = result.and_then(|reduced| {
        let words = reduced.exponents.len() * group.xyzz_words();
        Ok((download(cx.stream, work, reduced.buffer, words)?, reduced))
    });
    // On success the sort stays for the next MSM over the same scalars.
    let keep = KEPT.map(|item| work.buffer_of(item));
    for id in ids {
        if words.is_err() || !keep.contains(&Some(id)) {
            work.free(id)?;
        }
    }
    let (words, reduced) = words?;
    if let [Some(start), Some(sorted)] = keep {
        reuse.keep(key, [start, sorted]);
    }
    Ok(WindowSums {
        words,
        exponents: reduced.exponents,
        ones: Vec::new(),
    })
}

/// Launches msm.cu's steps 1-7 (the sort unless `sorted_already`) over the rest
/// `classes` lists (every term of `span` without a list); returns where the weighted
/// sums are.
#[allow(clippy::too_many_arguments)]
fn run<B>(
    cx: &MsmContext<'_>,
    group: Group,
    work: &Lease,
    bases: &Lease,
    bases_id: BufferId,
    span: &MsmSpan<B>,
    classes: &Classes,
    layout: &Layout,
    scratch: &Scratch,
    sorted_already: bool,
) -> Result<Reduced> {
    let n = span.len;
    let terms = classes.rest;
    let scalars = work.get::<CudaBuffer>(span.scalars.id())?;
    let scalars = scalars
        .words
        .slice(span.scalar_offset * FR_WORDS..(span.scalar_offset + n) * FR_WORDS);
    // From the span's first point to the end of the last plane: entries name point i
    // of plane j as j·stride + i.
    let points = bases.get::<BasesBuffer>(bases_id)?;
    let points = points
        .words
        .slice(span.base_offset * group.affine_words()..);
    if !sorted_already {
        match classes.list {
            None => sort::sort(
                cx.stream, cx.kernels, work, &scalars, None, layout, scratch, n,
            )?,
            Some(list) => {
                let list = &work.get::<CudaBuffer>(list)?.words;
                let rest = list.slice(classes.ones..classes.ones + classes.rest);
                sort::sort(
                    cx.stream,
                    cx.kernels,
                    work,
                    &scalars,
                    Some(&rest),
                    layout,
                    scratch,
                    terms,
                )?
            }
        }
    }
    reduce::reduce(
        cx.stream, cx.kernels, group, work, &points, layout, scratch, terms,
    )
}
