//! MSM on the device: Pippenger with signed c-bit digits, (point, sign) entries
//! counting-sorted by bucket, buckets summed in equal chunks of the sorted entries,
//! then reduced per window by segmented running sums and a pairwise tree, all in XYZZ
//! coordinates (the kernel contract is the header of kernels/msm.cu). Over bases with
//! window planes (`planes.rs`) all W windows' digits share the buckets of wp windows.
//! The host combines the window sums (Horner: a serial chain of doublings, which one
//! CPU core runs far faster than one GPU thread; none left with wp = 1).

use std::sync::Arc;

use ark_ec::CurveGroup;
use crucible_core::{check_span, BufferId, Lease, MemoryPlan, MsmSpan, PlanKey, Result};
use cudarc::driver::{CudaSlice, CudaStream, CudaView, LaunchConfig, PushKernelArg};

use crate::driver::launch;
use crate::error::CudaError;
use crate::field::{FR_WORDS, G1_WORDS, G1_XYZZ_WORDS, G2_WORDS, G2_XYZZ_WORDS};
use crate::kernels::Kernels;
use crate::memory::{alloc_words, alloc_words_uninit, download, CudaBuffer};
use crate::ntt::{grid_1d, grid_with_block};
use crate::planes::{self, Planes};
use crate::sort_reuse::{SortReuse, KEPT, MSM_BUCKET_START, MSM_SORTED};
use crate::tuning;

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
    /// u32 words of one XYZZ point.
    pub fn xyzz_words(self) -> usize {
        match self {
            Group::G1 => G1_XYZZ_WORDS,
            Group::G2 => G2_XYZZ_WORDS,
        }
    }
}

// The MSM's scratch items (msm.cu's opening contract lists each buffer); the two the
// next MSM may reuse are sort_reuse.rs's.
const MSM_DIGITS: PlanKey = PlanKey::new("cuda", "msm_digits");
const MSM_BUCKET_COUNT: PlanKey = PlanKey::new("cuda", "msm_bucket_count");
const MSM_SCAN: PlanKey = PlanKey::new("cuda", "msm_scan");
const MSM_BUCKETS: PlanKey = PlanKey::new("cuda", "msm_buckets");
const MSM_CARRIES: PlanKey = PlanKey::new("cuda", "msm_carries");
const MSM_CARRY_SPAN: PlanKey = PlanKey::new("cuda", "msm_carry_span");
const MSM_TREE_W: PlanKey = PlanKey::new("cuda", "msm_tree_w");
const MSM_TREE_V: PlanKey = PlanKey::new("cuda", "msm_tree_v");
const MSM_TREE_W2: PlanKey = PlanKey::new("cuda", "msm_tree_w2");
const MSM_TREE_V2: PlanKey = PlanKey::new("cuda", "msm_tree_v2");

/// Sorted entries one thread sums (msm.cu step 5), unless tuned: [`SHORT_CHUNK`] for
/// MSMs of fewer than [`LONG_CHUNK_FROM`] entries (W·n), else [`LONG_CHUNK`]. On the
/// H200 over window planes, 64 against 128: G1 2^20 10.08 against 10.49 ms, G2 2^20
/// 29.7 against 32.2, proof 2^20 83.5 against 88.0, but G1 2^24 124.7 against 120.0
/// (fewer threads in the last wave, against half the carries); 256 was slower at 2^20.
const SHORT_CHUNK: u32 = 64;
/// See [`SHORT_CHUNK`].
const LONG_CHUNK: u32 = 128;
/// See [`SHORT_CHUNK`]: G1 2^20 has 13·2^20 entries, G1 2^24 13·2^24.
const LONG_CHUNK_FROM: usize = 1 << 26;
/// Entries per thread of the prefix sum (msm.cu step 2).
const SCAN_CHUNK: usize = 64;
/// log2 of the buckets per segment of the first reduction step (msm.cu step 6),
/// unless tuned.
const SEG_BITS: u32 = 4;

/// The kernels' work split, read once per process: `CRUCIBLE_CUDA_MSM_CHUNK` and
/// `CRUCIBLE_CUDA_MSM_SEG_BITS` override the chunk and [`SEG_BITS`], for tuning
/// measurements (checked when the device is opened: [`crate::tuning`]). The plan reads
/// the same values.
#[derive(Clone, Copy, Debug)]
struct Split {
    /// None: by the MSM's entries ([`SHORT_CHUNK`]).
    chunk: Option<u32>,
    seg_bits: u32,
}

fn work_split() -> Split {
    static SPLIT: std::sync::OnceLock<Split> = std::sync::OnceLock::new();
    *SPLIT.get_or_init(|| {
        // Unreachable errors fall back to the default: open() checked the variables.
        let or = |var, default| tuning::read(var).ok().flatten().unwrap_or(default);
        Split {
            chunk: tuning::read(&tuning::MSM_CHUNK).ok().flatten(),
            seg_bits: or(&tuning::MSM_SEG_BITS, SEG_BITS),
        }
    })
}

/// The largest window: 12 windows of 2^21 buckets (the cost model picks it from about
/// 2^27 terms on).
pub const MAX_WINDOW_BITS: u32 = 22;

/// Digit windows of c bits: W = ceil(256 / c).
pub fn windows(c: u32) -> usize {
    256usize.div_ceil(c as usize)
}

/// The MSM cost model, in quarter additions: 4 per bucket addition (W·n of them), plus
/// `quarter_weight` per bucket of the `wp` bucket windows for their reduction (the
/// weights are fitted to measurements: [`window_bits`], `planes::cost`).
pub fn model_cost(n: usize, c: u32, wp: usize, quarter_weight: u128) -> u128 {
    4 * windows(c) as u128 * n as u128 + quarter_weight * wp as u128 * (1u128 << (c - 1))
}

/// Window bits for `n` terms: the c that minimises W(c) * (n + 4.5 * 2^(c-1)), the
/// bucket-sum additions plus the reduction's cost per bucket, in additions (ties go to
/// the smaller c); 16 from 2^15 to 2^22 terms, 20 for 2^24 to 2^26. The weight 4.5 is
/// the range (3.65, 5.35) in which this model picks the fastest c measured on the H200
/// at 2^20 (c = 13..17), 2^24 (18..20) and 2^26 (20..22): BENCHMARKS.md. Below 2^20
/// terms the model would pick c = 11 to 14, never measured fast there (c = 16 was, at
/// 2^15 to 2^18), so c = 16 is kept from 2^15 terms on.
pub fn window_bits(n: usize) -> u32 {
    // 4.5 additions a bucket, over all W windows.
    let cost = |c: u32| model_cost(n, c, windows(c), 18);
    let model = (1..=MAX_WINDOW_BITS)
        .min_by_key(|&c| (cost(c), c))
        .unwrap_or(1);
    if n >= 1 << 15 {
        model.max(16)
    } else {
        model
    }
}

/// `CRUCIBLE_CUDA_WINDOW_BITS` (1 to 22, checked when the device is opened)
/// overrides the window size, for tuning measurements; otherwise [`window_bits`].
pub fn chosen_window_bits(n: usize) -> u32 {
    tuning::read(&tuning::WINDOW_BITS)
        .ok()
        .flatten()
        .unwrap_or_else(|| window_bits(n))
}

struct Layout {
    c: u32,
    /// Digit windows, W.
    windows: usize,
    /// Bucket windows: W, or fewer over window planes (msm.cu's wp).
    bucket_windows: usize,
    /// Points per plane (window planes only; 0 without).
    stride: u32,
    /// Buckets per window, 2^(c-1).
    buckets: usize,
    seg_bits: u32,
    /// Sorted entries per thread of the bucket sums, if tuned ([`Layout::chunk`]).
    chunk: Option<u32>,
}

impl Layout {
    fn new(c: u32) -> Layout {
        let split = work_split();
        Layout {
            c,
            windows: windows(c),
            bucket_windows: windows(c),
            stride: 0,
            buckets: 1 << (c - 1),
            seg_bits: split.seg_bits.min(c - 1),
            chunk: split.chunk,
        }
    }
    /// Over bases with window `planes` of `stride` points each.
    fn with_planes(planes: Planes, stride: usize) -> Layout {
        Layout {
            bucket_windows: planes.per_plane as usize,
            stride: stride as u32,
            ..Layout::new(planes.c)
        }
    }
    /// Sorted entries per thread of the bucket sums for `n` terms.
    fn chunk(&self, n: usize) -> u32 {
        self.chunk.unwrap_or(if self.windows * n < LONG_CHUNK_FROM {
            SHORT_CHUNK
        } else {
            LONG_CHUNK
        })
    }
    fn all_buckets(&self) -> usize {
        self.bucket_windows * self.buckets
    }
    fn segments(&self) -> usize {
        self.buckets >> self.seg_bits
    }
    /// (item, words) of every scratch buffer for `n` terms.
    fn items(&self, n: usize, xyzz: usize) -> [(PlanKey, usize); 12] {
        let (w, m, s) = (self.bucket_windows, self.all_buckets(), self.segments());
        let entries = self.windows * n;
        [
            (MSM_DIGITS, entries),
            (MSM_BUCKET_COUNT, m),
            (MSM_BUCKET_START, m + 1),
            (MSM_SCAN, scan_words(m)),
            (MSM_SORTED, entries),
            (MSM_BUCKETS, m * xyzz),
            (MSM_CARRIES, entries.div_ceil(self.chunk(n) as usize) * xyzz),
            (MSM_CARRY_SPAN, 1),
            (MSM_TREE_W, w * s * xyzz),
            (MSM_TREE_V, w * s * xyzz),
            (MSM_TREE_W2, w * (s / 2) * xyzz),
            (MSM_TREE_V2, w * (s / 2) * xyzz),
        ]
    }
}

/// The layout of an MSM of `n` terms over bases with `planes` (`stride` points a
/// plane): over the planes when the model prefers them and the lease's plan holds
/// their scratch, otherwise plain (plane 0 holds the bases themselves).
fn choose_layout(
    group: Group,
    n: usize,
    planes: Option<Planes>,
    stride: usize,
    work: &Lease,
) -> Layout {
    let plain = Layout::new(chosen_window_bits(n));
    let Some(p) = planes else {
        return plain;
    };
    let over = Layout::with_planes(p, stride);
    let cost = |l: &Layout| planes::cost(group, n, l.c, l.bucket_windows);
    let plan = work.plan();
    let fits = over
        .items(n, group.xyzz_words())
        .iter()
        .all(|(item, words)| plan.bytes_of(*item) >= (words.max(&1) * 4) as u64);
    if fits && cost(&over) <= cost(&plain) {
        over
    } else {
        plain
    }
}

/// The scratch items the kernels need cleared (msm.cu's "MUST BE ZEROED", and the
/// prefix sum's zero word at the start of its scratch); the kernels write every other
/// word they read first.
const ZEROED: [PlanKey; 3] = [MSM_BUCKET_COUNT, MSM_SCAN, MSM_CARRY_SPAN];

/// Words of the prefix sum's scratch for `m` counts: one zero word, then each level's
/// partial sums (plus the total).
fn scan_words(m: usize) -> usize {
    let mut words = 1;
    let mut len = m;
    while len > SCAN_CHUNK {
        len = len.div_ceil(SCAN_CHUNK);
        words += len + 1;
    }
    words
}

/// The largest number of terms (at most `n`) for which [`window_bits`] picks at most
/// `c` ([`window_bits`] never decreases as terms grow).
fn largest_terms_with(c: u32, n: usize) -> usize {
    if window_bits(n) <= c {
        return n;
    }
    let (mut lo, mut hi) = (0usize, n); // window_bits(lo) <= c (or lo = 0) < window_bits(hi)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if window_bits(mid) <= c {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Scratch items for MSMs of up to `n` terms: for each window size an MSM of at most
/// `n` terms can choose, the buffers of the largest such MSM; each item takes the max.
/// Also the layout over the window planes of bases buffers of `n` and `n + 1` points
/// (a proving key's queries skip their first point) under a budget of `capacity`
/// bytes; an MSM whose planes' layout is not planned runs on plane 0 alone.
pub fn scratch_plan(group: Group, n: usize, capacity: u64, plan: &mut MemoryPlan) {
    for len in [n, n + 1] {
        if let Some(planes) = planes::choose_from_env(len, group, capacity) {
            plan_layout(plan, &Layout::with_planes(planes, len), n, group);
        }
    }
    // A tuning override applies to every MSM size, so it is planned at `n` itself.
    let chosen = chosen_window_bits(n);
    if chosen != window_bits(n) && n > 0 {
        plan_layout(plan, &Layout::new(chosen), n, group);
    }
    for c in 1..=window_bits(n) {
        let terms = largest_terms_with(c, n);
        if terms > 0 {
            plan_layout(plan, &Layout::new(c), terms, group);
        }
    }
}

/// Plans `layout`'s items for MSMs of up to `terms` terms: the largest, and the largest
/// that still sums with the short chunk (more carries per entry).
fn plan_layout(plan: &mut MemoryPlan, layout: &Layout, terms: usize, group: Group) {
    let short = (LONG_CHUNK_FROM - 1) / layout.windows;
    for m in [terms, terms.min(short)] {
        for (item, words) in layout.items(m, group.xyzz_words()) {
            plan.at_least(item, (words.max(1) * 4) as u64);
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

/// The per-window sums of an MSM: the result is sum_w 2^(c w) sums[w].
pub struct WindowSums {
    /// XYZZ words of each window's sum, window 0 first.
    pub words: Vec<u32>,
    /// Window bits.
    pub c: u32,
}

impl WindowSums {
    /// The MSM's result: each window's XYZZ words (`words_per` each) read by `point`,
    /// then combined on the host.
    pub fn combine<P: CurveGroup>(&self, words_per: usize, point: fn(&[u32]) -> P) -> P {
        let points: Vec<P> = self.words.chunks_exact(words_per).map(point).collect();
        combine(&points, self.c)
    }
}

/// sum_w 2^(c w) sums[w] (Horner, from the top window).
pub fn combine<P: CurveGroup>(sums: &[P], c: u32) -> P {
    let mut acc = P::zero();
    for s in sums.iter().rev() {
        for _ in 0..c {
            acc.double_in_place();
        }
        acc += s;
    }
    acc
}

/// Σ scalars·bases on the device; returns the window sums (none for an empty MSM).
/// The sort of the scalars (steps 1-4) is reused from the previous MSM when `reuse`
/// holds one of the same scalars, and kept for the next.
#[allow(clippy::too_many_arguments)]
pub fn msm<B>(
    stream: &Arc<CudaStream>,
    k: &Kernels,
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
        return Ok(WindowSums {
            words: Vec::new(),
            c: 1,
        });
    }
    let table = bases.get::<CudaBuffer>(bases_id)?.planes;
    let layout = choose_layout(group, n, table, bases_len, work);
    if n >= 1 << 31 || layout.windows * n > u32::MAX as usize {
        return Err(CudaError::Size(format!(
            "an MSM of {n} terms exceeds the kernels' 32-bit indices"
        ))
        .into());
    }
    let key = reuse.key(
        span.scalars.id(),
        span.scalar_offset,
        n,
        [layout.c, layout.bucket_windows as u32, layout.stride],
    );
    let kept = reuse.take(&key, work)?;
    let mut scratch = Vec::new();
    for (item, words) in layout.items(n, group.xyzz_words()) {
        let id = match (kept, KEPT.iter().position(|k| *k == item)) {
            (Some(ids), Some(i)) => Ok(ids[i]),
            _ if ZEROED.contains(&item) => alloc_words(stream, work, item, words),
            _ => alloc_words_uninit(stream, work, item, words),
        };
        match id {
            Ok(id) => scratch.push(id),
            Err(e) => {
                for id in scratch {
                    work.free(id)?;
                }
                return Err(e);
            }
        }
    }
    let sorted = kept.is_some();
    let result = run(
        stream, k, group, work, bases, bases_id, span, &layout, &scratch, sorted,
    );
    let words = result.and_then(|sums| {
        download(
            stream,
            work,
            sums,
            layout.bucket_windows * group.xyzz_words(),
        )
    });
    // On success the sort stays for the next MSM over the same scalars.
    let keep = KEPT.map(|item| work.buffer_of(item));
    for id in scratch {
        if words.is_err() || !keep.contains(&Some(id)) {
            work.free(id)?;
        }
    }
    let words = words?;
    if let [Some(start), Some(sorted)] = keep {
        reuse.keep(key, [start, sorted]);
    }
    Ok(WindowSums { words, c: layout.c })
}

/// The prefix-sum launches of msm.cu step 2: `counts` (m) into `starts` (m + 1).
fn prefix_sum(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    counts: &CudaSlice<u32>,
    starts: &CudaSlice<u32>,
    scan: &CudaSlice<u32>,
    m: usize,
) -> Result<()> {
    let chunk = SCAN_CHUNK as u32;
    let (sums_k, scan_k) = (k.get("u32_chunk_sums")?, k.get("u32_chunk_scan")?);
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
        let len32 = if l == 0 { m } else { levels[l - 1].1 } as u32;
        if l == 0 {
            launch(
                stream
                    .launch_builder(sums_k)
                    .arg(counts)
                    .arg(&out)
                    .arg(&len32)
                    .arg(&chunk),
                grid_1d(parts),
            )?;
        } else {
            let (prev_off, prev_len) = levels[l - 1];
            let input = scan.slice(prev_off..prev_off + prev_len + 1);
            launch(
                stream
                    .launch_builder(sums_k)
                    .arg(&input)
                    .arg(&out)
                    .arg(&len32)
                    .arg(&chunk),
                grid_1d(parts),
            )?;
        }
    }
    // The top level in one thread, then each level's scan from the one above, top down.
    match levels.last() {
        None => {
            let m32 = m as u32;
            launch(
                stream
                    .launch_builder(scan_k)
                    .arg(counts)
                    .arg(&zero)
                    .arg(starts)
                    .arg(&m32)
                    .arg(&chunk),
                grid_1d(1),
            )?;
        }
        Some(&(off, parts)) => {
            let top = scan.slice(off..off + parts + 1);
            let parts32 = parts as u32;
            launch(
                stream
                    .launch_builder(scan_k)
                    .arg(&top)
                    .arg(&zero)
                    .arg(&top)
                    .arg(&parts32)
                    .arg(&chunk),
                grid_1d(1),
            )?;
        }
    }
    for l in (0..levels.len()).rev() {
        let (off, parts) = levels[l];
        let offsets = scan.slice(off..off + parts + 1);
        if l == 0 {
            let m32 = m as u32;
            launch(
                stream
                    .launch_builder(scan_k)
                    .arg(counts)
                    .arg(&offsets)
                    .arg(starts)
                    .arg(&m32)
                    .arg(&chunk),
                grid_1d(parts),
            )?;
        } else {
            let (prev_off, prev_len) = levels[l - 1];
            let data = scan.slice(prev_off..prev_off + prev_len + 1);
            let len32 = prev_len as u32;
            launch(
                stream
                    .launch_builder(scan_k)
                    .arg(&data)
                    .arg(&offsets)
                    .arg(&data)
                    .arg(&len32)
                    .arg(&chunk),
                grid_1d(parts),
            )?;
        }
    }
    Ok(())
}

/// msm.cu steps 1-4: digits, bucket counts, their prefix sum, and the scatter into
/// sorted entries (`scratch` in [`Layout::items`] order).
fn sort(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    work: &Lease,
    scalars: &CudaView<'_, u32>,
    layout: &Layout,
    scratch: &[BufferId],
    n: usize,
) -> Result<()> {
    let buf = |id: BufferId| -> Result<&CudaSlice<u32>> { Ok(&work.get::<CudaBuffer>(id)?.words) };
    let [digits, count, start, scan, sorted] = std::array::from_fn(|i| scratch[i]);
    let (n32, c) = (n as u32, layout.c);
    let (wp, stride) = (layout.bucket_windows as u32, layout.stride);
    launch(
        stream
            .launch_builder(k.get("msm_digits")?)
            .arg(scalars)
            .arg(buf(digits)?)
            .arg(buf(count)?)
            .arg(&n32)
            .arg(&c)
            .arg(&wp),
        grid_1d(n),
    )?;
    prefix_sum(
        stream,
        k,
        buf(count)?,
        buf(start)?,
        buf(scan)?,
        layout.all_buckets(),
    )?;
    launch(
        stream
            .launch_builder(k.get("msm_scatter")?)
            .arg(buf(digits)?)
            .arg(buf(start)?)
            .arg(buf(count)?)
            .arg(buf(sorted)?)
            .arg(&n32)
            .arg(&c)
            .arg(&wp)
            .arg(&stride),
        grid_2d(n, layout.windows, 256),
    )?;
    Ok(())
}

/// Launches msm.cu's steps 1-7; returns the buffer holding the window sums.
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
    sorted_already: bool,
) -> Result<BufferId> {
    let n = span.len;
    let buf = |id: BufferId| -> Result<&CudaSlice<u32>> { Ok(&work.get::<CudaBuffer>(id)?.words) };
    let [_, _, start, _, sorted, buckets, carries, span_id, tree_w, tree_v, tree_w2, tree_v2] =
        std::array::from_fn(|i| scratch[i]);
    let (c, seg_bits, chunk) = (layout.c, layout.seg_bits, layout.chunk(n));
    let (w, m, s) = (layout.windows, layout.all_buckets(), layout.segments());
    let wp = layout.bucket_windows;
    let m32 = m as u32;
    let scalars = work.get::<CudaBuffer>(span.scalars.id())?;
    let scalars = scalars
        .words
        .slice(span.scalar_offset * FR_WORDS..(span.scalar_offset + n) * FR_WORDS);
    // From the span's first point to the end of the last plane: entries name point i
    // of plane j as j·stride + i.
    let points = bases.get::<CudaBuffer>(bases_id)?;
    let aw = group.affine_words();
    let points = points.words.slice(span.base_offset * aw..);
    let f = |name: &str| k.get(name);
    if !sorted_already {
        sort(stream, k, work, &scalars, layout, scratch, n)?;
    }
    let p = group.prefix();
    launch(
        stream
            .launch_builder(f(&format!("{p}_accumulate"))?)
            .arg(&points)
            .arg(buf(sorted)?)
            .arg(buf(start)?)
            .arg(buf(buckets)?)
            .arg(buf(carries)?)
            .arg(buf(span_id)?)
            .arg(&m32)
            .arg(&chunk),
        grid_with_block((w * n).div_ceil(chunk as usize), CURVE_BLOCK),
    )?;
    // Step 5b: as many tree levels as the longest run of carries needs (none for
    // spread-out digits; about log2(n / CHUNK) when one bucket holds a whole window).
    let max_span = download(stream, work, span_id, 1)?[0];
    let fold = f(&format!("{p}_fold_carries"))?;
    let mut level = 0u32;
    while (1u64 << level) < u64::from(max_span) {
        launch(
            stream
                .launch_builder(fold)
                .arg(buf(carries)?)
                .arg(buf(start)?)
                .arg(&m32)
                .arg(&chunk)
                .arg(&level),
            grid_with_block((w * n).div_ceil(chunk as usize), CURVE_BLOCK),
        )?;
        level += 1;
    }
    launch(
        stream
            .launch_builder(f(&format!("{p}_reduce_segments"))?)
            .arg(buf(buckets)?)
            .arg(buf(carries)?)
            .arg(buf(start)?)
            .arg(buf(tree_w)?)
            .arg(buf(tree_v)?)
            .arg(&c)
            .arg(&seg_bits)
            .arg(&chunk),
        grid_2d(s, wp, CURVE_BLOCK),
    )?;
    let pairs = f(&format!("{p}_reduce_pairs"))?;
    let (mut from, mut to) = ((tree_w, tree_v), (tree_w2, tree_v2));
    let mut nodes = s;
    while nodes > 1 {
        let (nodes32, with_v) = (nodes as u32, u32::from(nodes > 2));
        launch(
            stream
                .launch_builder(pairs)
                .arg(buf(from.0)?)
                .arg(buf(from.1)?)
                .arg(buf(to.0)?)
                .arg(buf(to.1)?)
                .arg(&nodes32)
                .arg(&with_v),
            grid_2d(nodes, wp, CURVE_BLOCK),
        )?;
        std::mem::swap(&mut from, &mut to);
        nodes /= 2;
    }
    Ok(from.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ec::PrimeGroup;
    use crucible_core::{Fr, G1Projective};

    #[test]
    fn window_bits_never_decreases_and_hits_the_planned_sizes() {
        let mut last = 1;
        let mut n = 1usize;
        while n < 1 << 28 {
            let c = window_bits(n);
            assert!(c >= last, "n={n}: {c} < {last}");
            last = c;
            n += 1 + n / 64;
        }
        assert_eq!(window_bits(1 << 16), 16);
        assert_eq!(window_bits(1 << 20), 16);
        assert_eq!(window_bits(1 << 24), 20);
        assert_eq!(window_bits(1 << 26), 20);
    }

    /// Every scratch item of `layout` for `m` terms fits its plan item.
    fn assert_planned(plan: &MemoryPlan, layout: &Layout, m: usize, group: Group, case: &str) {
        for (item, words) in layout.items(m, group.xyzz_words()) {
            let planned = plan
                .items()
                .iter()
                .find(|i| i.key == item)
                .map_or(0, |i| i.bytes);
            assert!(
                (words.max(1) * 4) as u64 <= planned,
                "{case} {item}: {words} words > {planned} B"
            );
        }
    }

    #[test]
    fn plan_covers_every_msm_up_to_its_size() {
        for n in [
            0usize,
            1,
            2,
            7,
            8,
            15,
            16,
            17,
            100,
            1000,
            1027,
            4095,
            4096,
            65537,
            1 << 18,
            (1 << 20) + 1,
            // Around the switch to the long chunk (W·n = 2^26): 16 windows.
            (1 << 22) + 5,
        ] {
            for group in [Group::G1, Group::G2] {
                let mut plan = MemoryPlan::new("t");
                scratch_plan(group, n, 0, &mut plan);
                let mut ms: Vec<usize> = [1, n / 3, n / 2, n.saturating_sub(1), n].into();
                // Every size just below a change of window.
                ms.extend((1..=window_bits(n)).map(|c| largest_terms_with(c, n)));
                // The largest size that still sums with the short chunk.
                ms.extend((1..=window_bits(n)).map(|c| (LONG_CHUNK_FROM - 1) / windows(c)));
                for m in ms.into_iter().filter(|m| (1..=n).contains(m)) {
                    let layout = Layout::new(window_bits(m));
                    assert_planned(&plan, &layout, m, group, &format!("n={n} m={m}"));
                }
            }
        }
    }

    #[test]
    fn plan_covers_the_planes_of_bases_of_n_and_n_plus_one_points() {
        let capacity = 140u64 << 30;
        for n in [
            1usize,
            64,
            1000,
            1 << 16,
            (1 << 20) - 1,
            1 << 20,
            (1 << 21) - 1,
        ] {
            for group in [Group::G1, Group::G2] {
                let mut plan = MemoryPlan::new("t");
                scratch_plan(group, n, capacity, &mut plan);
                for len in [n, n + 1] {
                    let p = planes::choose(len, group, capacity, None, None)
                        .expect("planes at these sizes");
                    let layout = Layout::with_planes(p, len);
                    assert_planned(&plan, &layout, n, group, &format!("n={n} len={len}"));
                }
            }
        }
    }

    #[test]
    fn an_msm_runs_over_the_planes_only_when_its_plan_holds_their_scratch() {
        use crucible_core::{DeviceBudget, HostSync};
        let (capacity, n) = (140u64 << 30, 1usize << 16);
        let planes = planes::choose(n, Group::G1, capacity, None, None).unwrap();
        let budget = DeviceBudget::new("t", 1 << 40);
        let layout = |planned_terms: usize, planned_capacity: u64, terms: usize| {
            let mut plan = MemoryPlan::new("t");
            scratch_plan(Group::G1, planned_terms, planned_capacity, &mut plan);
            let permit = budget.acquire(plan.total_bytes()).unwrap();
            let work = Lease::new(plan, permit, Arc::new(HostSync)).unwrap();
            let l = choose_layout(Group::G1, terms, Some(planes), n, &work);
            (l.c, l.bucket_windows, l.stride)
        };
        // Planned with the planes: over them, one bucket window.
        assert_eq!(layout(n, capacity, n), (planes.c, 1, n as u32));
        // A plan without room for the planes' scratch: plain bases.
        let c = window_bits(n);
        assert_eq!(layout(1000, 0, n), (c, windows(c), 0));
        // Three terms over a buffer of 2^16: the planes' 2^(c-1) buckets would cost more
        // than plain windows.
        let c3 = window_bits(3);
        assert_eq!(layout(n, capacity, 3), (c3, windows(c3), 0));
    }

    #[test]
    fn scan_scratch_holds_every_level() {
        assert_eq!(scan_words(1), 1);
        assert_eq!(scan_words(SCAN_CHUNK), 1);
        assert_eq!(scan_words(SCAN_CHUNK + 1), 1 + 3);
        assert_eq!(scan_words(1 << 19), 1 + (8192 + 1) + (128 + 1) + (2 + 1));
    }

    #[test]
    fn combine_is_horner_over_windows() {
        let g = G1Projective::generator();
        let sums: Vec<G1Projective> = (1..=5u64).map(|i| g * Fr::from(i)).collect();
        // sum_w 2^(3w) (w + 1) g
        let want: u64 = (0..5u64).map(|w| (w + 1) << (3 * w)).sum();
        assert_eq!(combine(&sums, 3), g * Fr::from(want));
        assert_eq!(combine::<G1Projective>(&[], 3), G1Projective::default());
    }
}
