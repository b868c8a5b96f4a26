//! msm.cu steps 1-4: the scalars' signed digits and bucket counts, the counts' prefix
//! sum (each bucket's first entry), and the scatter of every nonzero digit into its
//! bucket's range of sorted entries; over every term, or over the terms an index list
//! names (the rest of a witness-aware MSM, ones.rs). The sort depends on the scalars and the layout
//! only, so a proof's MSMs over the same scalars share it (sort_reuse.rs).

use std::sync::Arc;

use crucible_core::{BufferId, Lease, Result};
use cudarc::driver::{CudaSlice, CudaStream, CudaView};

use crate::launch::{self, grid_1d, grid_2d, grid_with_block, Dev, Kernels};
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

/// Threads of msm.cu's `u32_block_scan` block (its `CRU_SCAN_BLOCK`, which a test
/// compares).
const SCAN_BLOCK: u32 = 1024;

/// The prefix-sum launches of msm.cu step 2: `counts` (m) into `starts` (m + 1),
/// through `scan` (layout.rs's `scan_words(m)`): its word 0 is a zero, then the
/// chunks' sums. Also ones.rs's classification counts.
pub fn prefix_sum(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    counts: &CudaSlice<u32>,
    starts: &CudaSlice<u32>,
    scan: &CudaSlice<u32>,
    m: usize,
) -> Result<()> {
    let chunk = SCAN_CHUNK as u32;
    if m <= SCAN_CHUNK {
        // One thread, from the zero word.
        return Ok(launch::u32_chunk_scan(
            k,
            stream,
            grid_1d(1),
            Dev::new(counts),
            Dev::view(&scan.slice(0..1)),
            Dev::new(starts),
            m as u32,
            chunk,
        )?);
    }
    // The chunks' sums after the zero word, scanned in place by one block, then each
    // chunk's scan from its offset: three launches whatever m (one level of partial
    // sums a launch took 5 to 7 launches of a few microseconds each).
    let parts = m.div_ceil(SCAN_CHUNK);
    let sums = scan.slice(1..1 + parts);
    launch::u32_chunk_sums(
        k,
        stream,
        grid_1d(parts),
        Dev::new(counts),
        Dev::view(&sums),
        m as u32,
        chunk,
    )?;
    launch::u32_block_scan(
        k,
        stream,
        grid_with_block(SCAN_BLOCK as usize, SCAN_BLOCK),
        Dev::view(&sums),
        parts as u32,
    )?;
    launch::u32_chunk_scan(
        k,
        stream,
        grid_1d(parts),
        Dev::new(counts),
        Dev::view(&sums),
        Dev::new(starts),
        m as u32,
        chunk,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scan_block_is_the_one_msm_cu_declares() {
        let source = include_str!("../../kernels/msm.cu");
        let define = format!("#define CRU_SCAN_BLOCK {SCAN_BLOCK}\n");
        assert!(source.contains(&define), "msm.cu lacks {define:?}");
        assert!(SCAN_BLOCK.is_power_of_two());
    }
}
