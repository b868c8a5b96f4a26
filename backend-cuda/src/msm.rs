//! MSM on the device: Pippenger with unsigned c-bit windows, points sorted into
//! buckets by a counting sort, buckets summed one thread each, then segmented bucket
//! and window reductions (the kernel contract is the header of kernels/msm.cu).

use std::sync::Arc;

use cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};
use crucible_core::{check_span, BufferId, Lease, MemoryPlan, MsmSpan, Result};

use crate::driver::launch;
use crate::field::{FR_WORDS, G1_JAC_WORDS, G1_WORDS, G2_JAC_WORDS, G2_WORDS};
use crate::kernels::Kernels;
use crate::memory::{alloc_words, download, CudaBuffer};
use crate::ntt::{grid_1d, grid_with_block};

/// The group of an MSM: kernel prefix and word sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// G1 over Fq.
    G1,
    /// G2 over Fq2.
    G2,
}

impl Group {
    fn prefix(self) -> &'static str {
        match self {
            Group::G1 => "msm_g1",
            Group::G2 => "msm_g2",
        }
    }
    /// u32 words of one affine base.
    pub fn affine_words(self) -> usize {
        match self {
            Group::G1 => G1_WORDS,
            Group::G2 => G2_WORDS,
        }
    }
    /// u32 words of one Jacobian point.
    pub fn jacobian_words(self) -> usize {
        match self {
            Group::G1 => G1_JAC_WORDS,
            Group::G2 => G2_JAC_WORDS,
        }
    }
}

/// Window bits for `n` terms: about log2(n) − 2, between 1 and 16 (1 below 16 terms,
/// `k` for 2^(k+2) ≤ n < 2^(k+3), 16 from 2^18 on).
pub fn window_bits(n: usize) -> u32 {
    (n.max(1).ilog2().saturating_sub(2)).clamp(1, 16)
}

struct Layout {
    c: u32,
    windows: usize,
    buckets: usize,
    segments: usize,
}

impl Layout {
    fn new(c: u32) -> Layout {
        Layout {
            c,
            windows: 255usize.div_ceil(c as usize),
            buckets: 1 << c,
            segments: 1 << (c / 2),
        }
    }
    fn seg_bits(&self) -> u32 {
        self.c / 2
    }
    /// (item, words) of every scratch buffer for `n` terms.
    fn items(&self, n: usize, jac: usize) -> [(&'static str, usize); 9] {
        let (w, b, s) = (self.windows, self.buckets, self.segments);
        [
            ("msm-canonical-scalars", n * FR_WORDS),
            ("msm-bucket-start", w * b),
            ("msm-bucket-end", w * b),
            ("msm-sorted-indices", w * n),
            ("msm-buckets", w * b * jac),
            ("msm-segment-sums", w * s * jac),
            ("msm-segment-accumulators", w * s * jac),
            ("msm-window-sums", w * jac),
            ("msm-result", jac),
        ]
    }
}

/// The largest number of terms (at most `n`) for which [`window_bits`] picks `c`.
fn largest_terms_with(c: u32, n: usize) -> usize {
    if c >= 16 {
        n
    } else {
        n.min((1usize << (c + 3)) - 1)
    }
}

/// Scratch items for MSMs of up to `n` terms: for each window size an MSM of at most
/// `n` terms can choose, the buffers of the largest such MSM; each item takes the max.
pub fn scratch_plan(group: Group, n: usize, plan: &mut MemoryPlan) {
    for c in 1..=window_bits(n) {
        let terms = largest_terms_with(c, n);
        for (item, words) in Layout::new(c).items(terms, group.jacobian_words()) {
            plan.item(item, (words.max(1) * 4) as u64);
        }
    }
}

// The curve kernels use up to 255 registers per thread: blocks of 128 always fit.
const CURVE_BLOCK: u32 = 128;

fn grid_2d(x: usize, windows: usize, block: u32) -> LaunchConfig {
    let mut config = grid_with_block(x, block);
    config.grid_dim.1 = windows as u32;
    config
}

/// Σ scalars·bases on the device; returns the result's Jacobian words.
pub fn msm<B>(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    group: Group,
    work: &mut Lease,
    bases: &Lease,
    bases_id: BufferId,
    bases_len: usize,
    span: &MsmSpan<B>,
) -> Result<Vec<u32>> {
    check_span(span, bases_len)?;
    let n = span.len;
    let jac = group.jacobian_words();
    if n == 0 {
        // The empty sum: Z = 0 is the point at infinity; no scratch, no launch.
        return Ok(vec![0; jac]);
    }
    let layout = Layout::new(window_bits(n));
    let mut scratch = Vec::new();
    for (item, words) in layout.items(n, jac) {
        scratch.push(alloc_words(stream, work, item, words)?);
    }
    let result = run(stream, k, group, work, bases, bases_id, span, &layout, &scratch);
    let words = result.and_then(|()| download(stream, work, scratch[8], jac));
    for id in scratch {
        work.free(id)?;
    }
    words
}

#[allow(clippy::too_many_arguments)]
fn run<B>(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    group: Group,
    work: &Lease,
    bases: &Lease,
    bases_id: BufferId,
    span: &MsmSpan<B>,
    layout: &Layout,
    scratch: &[BufferId],
) -> Result<()> {
    let n = span.len;
    let buf = |id: BufferId| -> Result<&cudarc::driver::CudaSlice<u32>> { Ok(&work.get::<CudaBuffer>(id)?.words) };
    let [canon, start, end, sorted, buckets, seg_sum, seg_acc, window_sums, out] =
        std::array::from_fn(|i| scratch[i]);
    let (n32, c, seg_bits) = (n as u32, layout.c, layout.seg_bits());
    let (w, b, s) = (layout.windows, layout.buckets, layout.segments);
    {
        let scalars = work.get::<CudaBuffer>(span.scalars.id)?;
        let scalars = scalars.words.slice(span.scalar_offset * FR_WORDS..(span.scalar_offset + n) * FR_WORDS);
        let points = bases.get::<CudaBuffer>(bases_id)?;
        let aw = group.affine_words();
        let points = points.words.slice(span.base_offset * aw..(span.base_offset + n) * aw);
        let f = |name: &str| k.get(name);
        launch(stream.launch_builder(f("msm_scalars_to_canonical")?).arg(&scalars).arg(buf(canon)?).arg(&n32), grid_1d(n))?;
        launch(stream.launch_builder(f("msm_count_digits")?).arg(buf(canon)?).arg(buf(end)?).arg(&n32).arg(&c), grid_2d(n, w, 256))?;
        launch(stream.launch_builder(f("msm_prefix_sum")?).arg(buf(start)?).arg(buf(end)?).arg(&c), grid_1d(w))?;
        launch(
            stream.launch_builder(f("msm_scatter")?).arg(buf(canon)?).arg(buf(end)?).arg(buf(sorted)?).arg(&n32).arg(&c),
            grid_2d(n, w, 256),
        )?;
        let p = group.prefix();
        launch(
            stream
                .launch_builder(f(&format!("{p}_bucket_accumulate"))?)
                .arg(&points)
                .arg(buf(sorted)?)
                .arg(buf(start)?)
                .arg(buf(end)?)
                .arg(buf(buckets)?)
                .arg(&n32)
                .arg(&c),
            grid_2d(b, w, CURVE_BLOCK),
        )?;
        launch(
            stream
                .launch_builder(f(&format!("{p}_bucket_reduce"))?)
                .arg(buf(buckets)?)
                .arg(buf(seg_sum)?)
                .arg(buf(seg_acc)?)
                .arg(&c)
                .arg(&seg_bits),
            grid_2d(s, w, CURVE_BLOCK),
        )?;
        launch(
            stream
                .launch_builder(f(&format!("{p}_window_reduce"))?)
                .arg(buf(seg_sum)?)
                .arg(buf(seg_acc)?)
                .arg(buf(window_sums)?)
                .arg(&c)
                .arg(&seg_bits),
            grid_with_block(w, CURVE_BLOCK),
        )?;
        launch(
            stream.launch_builder(f(&format!("{p}_final"))?).arg(buf(window_sums)?).arg(buf(out)?).arg(&c),
            grid_with_block(1, CURVE_BLOCK),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_covers_every_msm_up_to_its_size() {
        for n in [0usize, 1, 2, 7, 8, 15, 16, 17, 100, 1000, 4095, 4096, 65537, 1 << 18, (1 << 20) + 1] {
            for group in [Group::G1, Group::G2] {
                let mut plan = MemoryPlan::new("t");
                scratch_plan(group, n, &mut plan);
                for m in [1, n / 3, n / 2, n.saturating_sub(1), n].into_iter().filter(|m| (1..=n).contains(m)) {
                    let layout = Layout::new(window_bits(m));
                    for (item, words) in layout.items(m, group.jacobian_words()) {
                        let planned = plan.items().iter().find(|i| i.name == item).map_or(0, |i| i.bytes);
                        assert!((words.max(1) * 4) as u64 <= planned, "n={n} m={m} {item}: {words} words > {planned} B");
                    }
                }
            }
        }
    }
}
