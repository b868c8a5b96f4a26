//! msm.cu steps 5-7, the curve arithmetic: bucket sums over equal chunks of the sorted
//! entries (with carries for buckets that span chunks, folded in a tree as deep as the
//! longest span needs, all in one launch), then each bucket window's reduction.
//!
//! The reduction splits window v's weighted sum with the bits of
//! the segment index: sum_b (b + 1) B_b = G + sum_k 2^(seg_bits + k) U_k, where G sums
//! the segments' running sums and U_k the segment sums whose index has bit k set (the
//! identity in msm.cu's header). G and every U_k are plain sums, so the device computes
//! them as trees in shared memory, a whole tree per launch, with a chain of log2 S
//! additions after the segments' running sums, and leaves the weights to the host's
//! double-and-add (c - 1 doublings, which one CPU core runs in microseconds and one GPU
//! thread in about a millisecond). A pairwise tree of one level per launch instead
//! added two dependent additions of about 30 µs at low occupancy a level, ~15 levels
//! at 2^20.

use std::sync::Arc;

use crucible_core::{BufferId, Lease, Result};
use cudarc::driver::{CudaSlice, CudaStream, CudaView, LaunchConfig};

use crate::field::Group;
use crate::launch::{self, grid_with_block, Dev, Kernels};
use crate::memory::CudaBuffer;
use crate::msm::layout::{Layout, Scratch};

// The curve kernels use up to 255 registers per thread: blocks of 128 always fit.
const CURVE_BLOCK: u32 = 128;

/// Where a reduction left the MSM: the first `exponents.len()` XYZZ points of `buffer`,
/// the MSM being the sum of 2^e · point i over the points with `exponents[i] = Some(e)`.
pub struct Reduced {
    /// The buffer holding the points.
    pub buffer: BufferId,
    /// Each point's weight, as a power of two; `None` for a point read but not added
    /// (each window's total in the reduction's last record).
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
    let chunk = layout.chunk(n);
    let m32 = layout.all_buckets() as u32;
    let sum_threads = (layout.windows * n).div_ceil(chunk as usize);
    launch::msm_accumulate(
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
    )?;
    // Step 5b: one launch, whatever the longest run of carries.
    launch::msm_fold_tree(
        k,
        stream,
        grid_with_block(sum_threads, CURVE_BLOCK),
        group,
        Dev::new(buf(work, scratch.carries)?),
        Dev::new(buf(work, scratch.bucket_start)?),
        Dev::new(buf(work, scratch.fold_tickets)?),
        m32,
        chunk,
    )?;
    let steps = Steps {
        stream,
        k,
        group,
        work,
        layout,
        scratch,
        chunk,
    };
    steps.tree()
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
    /// Steps 6-7: step 6 into reduce_a, then the step-7 passes alternating between
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
}
