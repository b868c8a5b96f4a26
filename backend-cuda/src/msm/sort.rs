//! msm.cu steps 1-4: the scalars' signed digits and bucket counts, the counts' prefix
//! sum (each bucket's first entry), and the scatter of every nonzero digit into its
//! bucket's range of sorted entries; over every term, or over the terms an index list
//! names (the rest of a witness-aware MSM, ones.rs). The sort depends on the scalars and the layout
//! only, so a proof's MSMs over the same scalars share it (sort_reuse.rs).

use std::sync::Arc;

use crucible_core::{BufferId, Lease, Result};
use cudarc::driver::{CudaSlice, CudaStream, CudaView};

use crate::launch::{self, grid_1d, grid_2d, Dev, Kernels};
use crate::memory::CudaBuffer;
use crate::msm::layout::{Layout, Scratch, SCAN_CHUNK};

/// Sorts the entries of `n` terms into `scratch` for `layout`: term i is scalar i of
/// the view `scalars`, or scalar `index[i]` when an index is given (the rest of a
/// witness-aware MSM, ones.rs), its entries naming point `index[i]`.
#[allow(clippy::too_many_arguments)]
pub fn sort(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    work: &Lease,
    scalars: &CudaView<'_, u32>,
    index: Option<&CudaView<'_, u32>>,
    layout: &Layout,
    scratch: &Scratch,
    n: usize,
) -> Result<()> {
    let buf = |id: BufferId| -> Result<&CudaSlice<u32>> { Ok(&work.get::<CudaBuffer>(id)?.words) };
    let (n32, c) = (n as u32, layout.c);
    let (wp, stride) = (layout.bucket_windows as u32, layout.stride);
    let (digits, counts) = (buf(scratch.digits)?, buf(scratch.bucket_count)?);
    match index {
        None => launch::msm_digits(
            k,
            stream,
            grid_1d(n),
            Dev::view(scalars),
            Dev::new(digits),
            Dev::new(counts),
            n32,
            c,
            wp,
        )?,
        Some(index) => launch::msm_digits_indexed(
            k,
            stream,
            grid_1d(n),
            Dev::view(scalars),
            Dev::view(index),
            Dev::new(digits),
            Dev::new(counts),
            n32,
            c,
            wp,
        )?,
    }
    prefix_sum(
        stream,
        k,
        counts,
        buf(scratch.bucket_start)?,
        buf(scratch.scan)?,
        layout.all_buckets(),
    )?;
    let (grid, starts, sorted) = (
        grid_2d(n, layout.windows, 256),
        buf(scratch.bucket_start)?,
        buf(scratch.sorted)?,
    );
    match index {
        None => launch::msm_scatter(
            k,
            stream,
            grid,
            Dev::new(digits),
            Dev::new(starts),
            Dev::new(counts),
            Dev::new(sorted),
            n32,
            c,
            wp,
            stride,
        )?,
        Some(index) => launch::msm_scatter_indexed(
            k,
            stream,
            grid,
            Dev::new(digits),
            Dev::view(index),
            Dev::new(starts),
            Dev::new(counts),
            Dev::new(sorted),
            n32,
            c,
            wp,
            stride,
        )?,
    }
    Ok(())
}

/// The prefix-sum launches of msm.cu step 2: `counts` (m) into `starts` (m + 1),
/// through `scan` (layout.rs's `scan_words(m)`): its word 0 is a zero, then each
/// level's partial sums (plus total). Also ones.rs's classification counts.
pub fn prefix_sum(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    counts: &CudaSlice<u32>,
    starts: &CudaSlice<u32>,
    scan: &CudaSlice<u32>,
    m: usize,
) -> Result<()> {
    let chunk = SCAN_CHUNK as u32;
    // levels[l] = (offset in `scan`, length) of the partial sums of level l + 1.
    let mut levels = Vec::new();
    let (mut offset, mut len) = (1usize, m);
    while len > SCAN_CHUNK {
        let parts = len.div_ceil(SCAN_CHUNK);
        levels.push((offset, parts));
        offset += parts + 1;
        len = parts;
    }
    let zero = scan.slice(0..1);
    // Partial sums, bottom up.
    for (l, &(off, parts)) in levels.iter().enumerate() {
        let out = scan.slice(off..off + parts + 1);
        if l == 0 {
            launch::u32_chunk_sums(
                k,
                stream,
                grid_1d(parts),
                Dev::new(counts),
                Dev::view(&out),
                m as u32,
                chunk,
            )?;
        } else {
            let (prev_off, prev_len) = levels[l - 1];
            let input = scan.slice(prev_off..prev_off + prev_len + 1);
            launch::u32_chunk_sums(
                k,
                stream,
                grid_1d(parts),
                Dev::view(&input),
                Dev::view(&out),
                prev_len as u32,
                chunk,
            )?;
        }
    }
    // The top level in one thread, then each level's scan from the one above, top down.
    match levels.last() {
        None => launch::u32_chunk_scan(
            k,
            stream,
            grid_1d(1),
            Dev::new(counts),
            Dev::view(&zero),
            Dev::new(starts),
            m as u32,
            chunk,
        )?,
        Some(&(off, parts)) => {
            // In place: each thread reads in[k] before it writes out[k].
            let top = scan.slice(off..off + parts + 1);
            launch::u32_chunk_scan(
                k,
                stream,
                grid_1d(1),
                Dev::view(&top),
                Dev::view(&zero),
                Dev::view(&top),
                parts as u32,
                chunk,
            )?;
        }
    }
    for l in (0..levels.len()).rev() {
        let (off, parts) = levels[l];
        let offsets = scan.slice(off..off + parts + 1);
        if l == 0 {
            launch::u32_chunk_scan(
                k,
                stream,
                grid_1d(parts),
                Dev::new(counts),
                Dev::view(&offsets),
                Dev::new(starts),
                m as u32,
                chunk,
            )?;
        } else {
            let (prev_off, prev_len) = levels[l - 1];
            let data = scan.slice(prev_off..prev_off + prev_len + 1);
            launch::u32_chunk_scan(
                k,
                stream,
                grid_1d(parts),
                Dev::view(&data),
                Dev::view(&offsets),
                Dev::view(&data),
                prev_len as u32,
                chunk,
            )?;
        }
    }
    Ok(())
}
