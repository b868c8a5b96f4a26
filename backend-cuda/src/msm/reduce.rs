//! msm.cu steps 5-7, the curve arithmetic: bucket sums over equal chunks of the sorted
//! entries (with carries for buckets that span chunks, folded in a tree as deep as the
//! longest span needs), then each bucket window's reduction, by segmented running sums
//! and a pairwise tree, down to one XYZZ point per window.

use std::sync::Arc;

use crucible_core::{BufferId, Lease, Result};
use cudarc::driver::{CudaSlice, CudaStream, CudaView};

use crate::error::CudaError;
use crate::field::Group;
use crate::launch::{self, grid_2d, grid_with_block, Dev, Kernels};
use crate::memory::{download, CudaBuffer};
use crate::msm::layout::{Layout, Scratch};

// The curve kernels use up to 255 registers per thread: blocks of 128 always fit.
const CURVE_BLOCK: u32 = 128;

/// Sums the sorted entries of `n` terms over `points` (from the span's first point to
/// the end of the last plane) into one point per bucket window; returns the buffer
/// that holds them.
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
) -> Result<BufferId> {
    let buf = |id: BufferId| -> Result<&CudaSlice<u32>> { Ok(&work.get::<CudaBuffer>(id)?.words) };
    let (c, seg_bits, chunk) = (layout.c, layout.seg_bits, layout.chunk(n));
    let (w, m, s) = (layout.windows, layout.all_buckets(), layout.segments());
    let wp = layout.bucket_windows;
    let m32 = m as u32;
    let sum_threads = (w * n).div_ceil(chunk as usize);
    launch::msm_accumulate(
        k,
        stream,
        grid_with_block(sum_threads, CURVE_BLOCK),
        group,
        Dev::view(points),
        Dev::new(buf(scratch.sorted)?),
        Dev::new(buf(scratch.bucket_start)?),
        Dev::new(buf(scratch.buckets)?),
        Dev::new(buf(scratch.carries)?),
        Dev::new(buf(scratch.carry_span)?),
        m32,
        chunk,
    )?;
    // Step 5b: as many tree levels as the longest run of carries needs (none for
    // spread-out digits; about log2(n / CHUNK) when one bucket holds a whole window).
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
            Dev::new(buf(scratch.carries)?),
            Dev::new(buf(scratch.bucket_start)?),
            m32,
            chunk,
            level,
        )?;
        level += 1;
    }
    launch::msm_reduce_segments(
        k,
        stream,
        grid_2d(s, wp, CURVE_BLOCK),
        group,
        Dev::new(buf(scratch.buckets)?),
        Dev::new(buf(scratch.carries)?),
        Dev::new(buf(scratch.bucket_start)?),
        Dev::new(buf(scratch.tree_w)?),
        Dev::new(buf(scratch.tree_v)?),
        c,
        seg_bits,
        chunk,
    )?;
    let (mut from, mut to) = (
        (scratch.tree_w, scratch.tree_v),
        (scratch.tree_w2, scratch.tree_v2),
    );
    let mut nodes = s;
    while nodes > 1 {
        launch::msm_reduce_pairs(
            k,
            stream,
            grid_2d(nodes, wp, CURVE_BLOCK),
            group,
            Dev::new(buf(from.0)?),
            Dev::new(buf(from.1)?),
            Dev::new(buf(to.0)?),
            Dev::new(buf(to.1)?),
            nodes as u32,
            u32::from(nodes > 2),
        )?;
        std::mem::swap(&mut from, &mut to);
        nodes /= 2;
    }
    Ok(from.0)
}
