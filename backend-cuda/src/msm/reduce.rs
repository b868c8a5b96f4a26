//! msm.cu steps 5-7, the curve arithmetic: bucket sums over equal chunks of the sorted
//! entries (with carries for buckets that span chunks, folded in a tree as deep as the
//! longest span needs, all in one launch unless `CRUCIBLE_CUDA_MSM_FOLD=levels`), then
//! each bucket window's reduction.
//!
//! The reduction ("tree", the default) splits window v's weighted sum with the bits of
//! the segment index: sum_b (b + 1) B_b = G + sum_k 2^(seg_bits + k) U_k, where G sums
//! the segments' running sums and U_k the segment sums whose index has bit k set (the
//! identity in msm.cu's header). G and every U_k are plain sums, so the device computes
//! them as trees in shared memory, a whole tree per launch, with a chain of log2 S
//! additions after the segments' running sums, and leaves the weights to the host's
//! double-and-add (c - 1 doublings, which one CPU core runs in microseconds and one GPU
//! thread in about a millisecond). The "levels" reduction (`CRUCIBLE_CUDA_MSM_REDUCE`)
//! keeps the pairwise tree of one level per launch, for the A/B: there each level added
//! two dependent additions of about 30 µs at low occupancy, ~15 levels at 2^20.

use std::sync::Arc;

use crucible_core::{BufferId, Lease, Result};
use cudarc::driver::{CudaSlice, CudaStream, CudaView, LaunchConfig};

use crate::error::CudaError;
use crate::field::Group;
use crate::launch::{self, grid_2d, grid_with_block, Dev, Kernels};
use crate::memory::{download, CudaBuffer};
use crate::msm::layout::{Layout, Scratch, AFFINE_BLOCK};
use crate::tuning::{MsmAccumulate, MsmFold, MsmReduce};

// The curve kernels use up to 255 registers per thread: blocks of 128 always fit.
const CURVE_BLOCK: u32 = 128;

/// Where a reduction left the MSM: the first `exponents.len()` XYZZ points of `buffer`,
/// the MSM being the sum of 2^e · point i over the points with `exponents[i] = Some(e)`.
pub struct Reduced {
    /// The buffer holding the points.
    pub buffer: BufferId,
    /// Each point's weight, as a power of two; `None` for a point read but not added
    /// (each window's total in the "tree" reduction's last record).
    pub exponents: Vec<Option<u32>>,
}

/// Sums the sorted entries of `n` terms over `points` (from the span's first point to
/// the end of the last plane) into each bucket window's weighted points.
#[allow(clippy::too_many_arguments)]
pub fn reduce(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    group: Group,
    work: &Lease,
    points: &CudaView<'_, u32>,
    layout: &Layout,
    scratch: &Scratch,
    n: usize,
) -> Result<Reduced> {
    let chunk = layout.chunk(n, group);
    let m32 = layout.all_buckets() as u32;
    // Chunks (each a thread's, or a lane's with "affine"): sum_threads.
    let sum_threads = (layout.windows * n).div_ceil(chunk as usize);
    match layout.accumulate {
        MsmAccumulate::Xyzz => launch::msm_accumulate(
            k,
            stream,
            grid_with_block(sum_threads, layout.sums_block),
            group,
            Dev::view(points),
            Dev::new(buf(work, scratch.sorted)?),
            Dev::new(buf(work, scratch.bucket_start)?),
            Dev::new(buf(work, scratch.buckets)?),
            Dev::new(buf(work, scratch.carries)?),
            Dev::new(buf(work, scratch.carry_span)?),
            m32,
            chunk,
        )?,
        MsmAccumulate::Affine => {
            let per_thread = layout.lanes_per_thread(sum_threads, group);
            launch::msm_accumulate_affine(
                k,
                stream,
                grid_with_block(sum_threads.div_ceil(per_thread as usize), AFFINE_BLOCK),
                group,
                Dev::view(points),
                Dev::new(buf(work, scratch.sorted)?),
                Dev::new(buf(work, scratch.bucket_start)?),
                Dev::new(buf(work, scratch.buckets)?),
                Dev::new(buf(work, scratch.carries)?),
                Dev::new(buf(work, scratch.carry_span)?),
                Dev::new(buf(work, scratch.affine_lanes)?),
                m32,
                chunk,
                per_thread,
            )?
        }
    }
    // Step 5b. "tree": one launch, whatever the longest run of carries. "levels": as many
    // launches as that run needs (none for spread-out digits; about log2(n / CHUNK) when
    // one bucket holds a whole window), read back first (a sync of the host).
    match layout.fold {
        MsmFold::Tree => launch::msm_fold_tree(
            k,
            stream,
            grid_with_block(sum_threads, CURVE_BLOCK),
            group,
            Dev::new(buf(work, scratch.carries)?),
            Dev::new(buf(work, scratch.bucket_start)?),
            Dev::new(buf(work, scratch.fold_tickets)?),
            m32,
            chunk,
        )?,
        MsmFold::Levels => {
            let max_span = download(stream, work, scratch.carry_span, 1)?
                .first()
                .copied()
                .ok_or_else(|| CudaError::Size("the MSM's carry span is empty".into()))?;
            let mut level = 0u32;
            while (1u64 << level) < u64::from(max_span) {
                launch::msm_fold_carries(
                    k,
                    stream,
                    grid_with_block(sum_threads, CURVE_BLOCK),
                    group,
                    Dev::new(buf(work, scratch.carries)?),
                    Dev::new(buf(work, scratch.bucket_start)?),
                    m32,
                    chunk,
                    level,
                )?;
                level += 1;
            }
        }
    }
    let steps = Steps {
        stream,
        k,
        group,
        work,
        layout,
        scratch,
        chunk,
    };
    match layout.reduce {
        MsmReduce::Tree => steps.tree(),
        MsmReduce::Levels => steps.levels(),
    }
}

/// What steps 6-7 run on.
#[derive(Clone, Copy)]
struct Steps<'a> {
    stream: &'a Arc<CudaStream>,
    k: &'a Kernels,
    group: Group,
    work: &'a Lease,
    layout: &'a Layout,
    scratch: &'a Scratch,
    chunk: u32,
}

/// The words of scratch buffer `id`.
fn buf(work: &Lease, id: BufferId) -> Result<&CudaSlice<u32>> {
    Ok(&work.get::<CudaBuffer>(id)?.words)
}

impl Steps<'_> {
    /// Steps 6-7 "tree": step 6 into reduce_a, then the step-7 passes alternating between
    /// the two buffers, as `layout.passes` lays them out.
    fn tree(&self) -> Result<Reduced> {
        let Steps {
            stream,
            k,
            group,
            work,
            layout,
            scratch,
            chunk,
        } = *self;
        let wp = layout.bucket_windows;
        let passes = layout.passes(group);
        let targets = [scratch.reduce_a, scratch.reduce_b];
        let mut written = scratch.reduce_a;
        for (i, pass) in passes.iter().enumerate() {
            let grid = |y: usize| LaunchConfig {
                grid_dim: (pass.records as u32, y as u32, 1),
                block_dim: (pass.block, 1, 1),
                shared_mem_bytes: 0,
            };
            let out = targets[i % 2];
            if i == 0 {
                launch::msm_reduce_tiles(
                    k,
                    stream,
                    grid(wp),
                    group,
                    Dev::new(buf(work, scratch.buckets)?),
                    Dev::new(buf(work, scratch.carries)?),
                    Dev::new(buf(work, scratch.bucket_start)?),
                    Dev::new(buf(work, out)?),
                    layout.c,
                    layout.seg_bits,
                    chunk,
                )?;
            } else {
                launch::msm_reduce_records(
                    k,
                    stream,
                    grid((pass.items_in as usize + 1) * wp),
                    group,
                    Dev::new(buf(work, written)?),
                    Dev::new(buf(work, out)?),
                    pass.items_in,
                )?;
            }
            written = out;
        }
        // One record a window: item q of window v at v (items + 1) + q. The host reads the
        // whole record (its total included, which the sum skips).
        let items = passes.items();
        let mut exponents = Vec::with_capacity(wp * (items as usize + 1));
        for v in 0..wp as u32 {
            let window = layout.c * v;
            exponents.push(Some(window));
            exponents.extend((0..items - 1).map(|bit| Some(window + layout.seg_bits + bit)));
            exponents.push(None);
        }
        Ok(Reduced {
            buffer: written,
            exponents,
        })
    }

    /// Steps 6-7 "levels": tree_w and tree_v are reduce_a's halves, the next level's pair
    /// reduce_b's; one launch per level.
    fn levels(&self) -> Result<Reduced> {
        let Steps {
            stream,
            k,
            group,
            work,
            layout,
            scratch,
            chunk,
        } = *self;
        let (wp, s) = (layout.bucket_windows, layout.segments());
        // Words of one half of a buffer of `nodes` nodes a window.
        let half = |nodes: usize| wp * nodes * group.xyzz_words();
        let [w, v] = halves(buf(work, scratch.reduce_a)?, half(s))?;
        launch::msm_reduce_segments(
            k,
            stream,
            grid_2d(s, wp, CURVE_BLOCK),
            group,
            Dev::new(buf(work, scratch.buckets)?),
            Dev::new(buf(work, scratch.carries)?),
            Dev::new(buf(work, scratch.bucket_start)?),
            Dev::view(&w),
            Dev::view(&v),
            layout.c,
            layout.seg_bits,
            chunk,
        )?;
        let (mut from, mut to) = (scratch.reduce_a, scratch.reduce_b);
        let mut nodes = s;
        while nodes > 1 {
            let [in_w, in_v] = halves(buf(work, from)?, half(nodes))?;
            let [out_w, out_v] = halves(buf(work, to)?, half(nodes / 2))?;
            launch::msm_reduce_pairs(
                k,
                stream,
                grid_2d(nodes, wp, CURVE_BLOCK),
                group,
                Dev::view(&in_w),
                Dev::view(&in_v),
                Dev::view(&out_w),
                Dev::view(&out_v),
                nodes as u32,
                u32::from(nodes > 2),
            )?;
            std::mem::swap(&mut from, &mut to);
            nodes /= 2;
        }
        // The last level written holds each window's sum at the start of its W half.
        Ok(Reduced {
            buffer: from,
            exponents: (0..wp as u32).map(|v| Some(layout.c * v)).collect(),
        })
    }
}

/// The (W, V) halves of a "levels" buffer, `half` words each.
fn halves(words: &CudaSlice<u32>, half: usize) -> Result<[CudaView<'_, u32>; 2]> {
    if words.len() < 2 * half {
        return Err(CudaError::Size(format!(
            "a reduction buffer of {} words for two halves of {half}",
            words.len()
        ))
        .into());
    }
    Ok([words.slice(..half), words.slice(half..2 * half)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_blocks_are_the_shared_products_msm_cu_declares() {
        let source = include_str!("../../kernels/msm.cu");
        let define = format!("#define CRU_AFFINE_BLOCK {AFFINE_BLOCK}\n");
        assert!(source.contains(&define), "msm.cu lacks {define:?}");
    }
}
