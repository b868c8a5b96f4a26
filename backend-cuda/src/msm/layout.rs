//! The shape of one MSM on the device: window bits, digit and bucket windows, the work
//! split of the kernels, and every scratch buffer it takes (msm.cu's opening contract
//! lists them), both for the plan (sized for the largest MSM a lease may run) and for
//! the allocation.

use crucible_core::{BufferId, Lease, MemoryPlan, PlanKey};

use crate::field::Group;
use crate::msm::cost::{self, chosen_window_bits, window_bits, windows};
use crate::msm::passes::{self, Passes};
use crate::msm::planes::{self, Planes};
use crate::msm::sort_reuse::{MSM_BUCKET_START, MSM_SORTED};
use crate::tuning::{CudaTuning, MsmAccumulate, MsmFold, MsmReduce};

// The MSM's scratch items (msm.cu's opening contract lists each buffer); the two the
// next MSM may reuse are sort_reuse.rs's.
const MSM_DIGITS: PlanKey = PlanKey::new("cuda", "msm_digits");
const MSM_BUCKET_COUNT: PlanKey = PlanKey::new("cuda", "msm_bucket_count");
const MSM_SCAN: PlanKey = PlanKey::new("cuda", "msm_scan");
const MSM_BUCKETS: PlanKey = PlanKey::new("cuda", "msm_buckets");
const MSM_CARRIES: PlanKey = PlanKey::new("cuda", "msm_carries");
const MSM_CARRY_SPAN: PlanKey = PlanKey::new("cuda", "msm_carry_span");
const MSM_FOLD_TICKETS: PlanKey = PlanKey::new("cuda", "msm_fold_tickets");
const MSM_REDUCE_A: PlanKey = PlanKey::new("cuda", "msm_reduce_a");
const MSM_REDUCE_B: PlanKey = PlanKey::new("cuda", "msm_reduce_b");
const MSM_AFFINE_LANES: PlanKey = PlanKey::new("cuda", "msm_affine_lanes");

/// Sorted entries one thread sums (msm.cu step 5), unless tuned: [`SHORT_CHUNK`] for
/// MSMs of fewer than [`LONG_CHUNK_FROM`] entries (W·n), else [`LONG_CHUNK`]; fewer
/// than [`SHORT_CHUNK`] (down to [`MIN_CHUNK`]) where W·n / [`SHORT_CHUNK`] would leave
/// fewer than [`FILL_THREADS`] threads. On the
/// H200 over window planes, 64 against 128: G1 2^20 10.08 against 10.49 ms, G2 2^20
/// 29.7 against 32.2, proof 2^20 83.5 against 88.0, but G1 2^24 124.7 against 120.0
/// (fewer threads in the last wave, against half the carries); 256 was slower at 2^20.
const SHORT_CHUNK: u32 = 64;
/// See [`SHORT_CHUNK`].
const LONG_CHUNK: u32 = 128;
/// See [`SHORT_CHUNK`]: G1 2^20 has 13·2^20 entries, G1 2^24 13·2^24.
pub const LONG_CHUNK_FROM: usize = 1 << 26;
/// Threads the bucket sums of a small MSM get, through a chunk below [`SHORT_CHUNK`]:
/// each thread's chunk is a chain of dependent additions (tens of microseconds each on
/// the H200, msm.cu's reduction measured), so a few thousand threads of 64 entries
/// (the rest of a witness-aware MSM at 99 % 0/1 scalars: 2^20 / 100 terms, 26 windows)
/// take longer than twice as many of fewer. The MSMs of 2^20 terms and more keep their
/// chunk (W·n >= 2^22 = [`SHORT_CHUNK`] · [`FILL_THREADS`]).
const FILL_THREADS: usize = 1 << 16;
/// The smallest chunk [`FILL_THREADS`] (and [`affine_fill_threads`]) leads to.
const MIN_CHUNK: u32 = 8;
/// Threads a block of the XYZZ bucket sums, unless tuned: G1's 168 registers fit 12
/// warps an SM in blocks of 128 or of 32, G2's 255 fit 8 either way (smaller blocks
/// paid nothing on the H200 with 152 registers: BENCHMARKS.md, sixteenth session).
const SUMS_BLOCK: u32 = 128;
/// Chunks a thread of the batch-affine bucket sums runs at once (msm.cu's
/// `msm_*_accumulate_affine`), at most, unless tuned: a block of [`AFFINE_BLOCK`]
/// threads then shares one inversion (~60 000 instructions) among up to 2048 additions
/// a round.
pub const AFFINE_LANES: u32 = 16;
/// Threads a block of the batch-affine bucket sums (msm.cu's `CRU_AFFINE_BLOCK`, the
/// size of its shared products and the stride of its lanes' word planes; a test
/// compares them): the block shares one inversion.
pub const AFFINE_BLOCK: u32 = 128;
/// Threads the batch-affine bucket sums of `group` get, through their lanes and chunk:
/// one wave of blocks of [`AFFINE_BLOCK`], about what the H200's 132 SMs hold, so that
/// no second wave runs a few blocks: for G1 384 blocks (three an SM, 148 registers),
/// for G2 256 (two an SM, 242 registers; msm.cu).
fn affine_fill_threads(group: Group) -> usize {
    match group {
        Group::G1 => 3 << 14,
        Group::G2 => 1 << 15,
    }
}
/// The chunk the batch-affine sums take lanes away for: below it each thread runs
/// fewer lanes of longer chunks, so that an MSM that fills the device has chunks of
/// at least this many entries (fewer carries to fold and reduce: at 2^20, chunks of 13
/// cost ~2.5 ms of carries more than XYZZ's 64), and only smaller ones run shorter.
/// G1 2^20 (13·2^20 entries): 8 lanes of 35; 2^22: 16 of 70; 2^24: 16 of 278.
const AFFINE_LONG_CHUNK: usize = 32;
/// The longest chunk of the batch-affine bucket sums (more threads beyond it).
const AFFINE_MAX_CHUNK: u32 = 1024;
/// u32 words of one lane of the batch-affine bucket sums of `group` (msm.cu's
/// `msm_lane_words<F>::ALL`: two affine points, a field element and three words; a
/// test reads msm.cu's `static_assert`s of them).
pub fn affine_lane_words(group: Group) -> usize {
    match group {
        Group::G1 => 63,
        Group::G2 => 123,
    }
}
/// Entries per thread of the prefix sum (msm.cu step 2).
pub const SCAN_CHUNK: usize = 64;
/// log2 of the buckets per segment of the first reduction step (msm.cu step 6) of the
/// "levels" reduction, unless tuned (`CRUCIBLE_CUDA_MSM_SEG_BITS`).
const SEG_BITS: u32 = 4;
/// [`SEG_BITS`] for the "tree" reduction: its segments' running sums are its longest
/// chain of additions, so it takes shorter ones. With 8 buckets a thread, G1 2^20 over
/// window planes (2^19 buckets) has 2^16 segment threads, more than the ~45000 that
/// keep the H200's SMs busy at ~8 warps each; 16 a thread left half of them idle.
/// Fewer buckets get shorter segments, down to one bucket a thread, until there are
/// [`FILL_SEGMENTS`] segment threads ([`tree_seg_bits`]).
const TREE_SEG_BITS: u32 = 3;
/// Segment threads below which the "tree" reduction shortens its segments: a small
/// MSM's reduction is a chain of dependent additions (about 30 µs each on a nearly idle
/// H200), 2^(seg_bits + 1) of them in a segment's running sums and one a level of the
/// tree above (c - 1 - seg_bits levels). The rest of a witness-aware MSM at 99 % 0/1
/// scalars (2^20 / 100 terms, c = 10, 26 windows of 512 buckets) had 1664 segment
/// threads of 8 buckets: 16 + 6 additions deep, 0.63 ms (ncu); one bucket a thread is
/// 9 levels deep. G1 and G2 2^20 over planes (2^19 and 2^18 buckets) keep 8.
const FILL_SEGMENTS: usize = 1 << 15;

/// log2 buckets per segment of the "tree" reduction over `buckets` buckets in all:
/// [`TREE_SEG_BITS`], or fewer where that leaves fewer than [`FILL_SEGMENTS`] segments
/// (never more than the `window_buckets` of one window).
fn tree_seg_bits(buckets: usize, window_buckets: usize) -> u32 {
    let most = TREE_SEG_BITS.min(window_buckets.trailing_zeros());
    (0..=most)
        .rev()
        .find(|&s| buckets >> s >= FILL_SEGMENTS)
        .unwrap_or(0)
}

/// The shape of an MSM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Window bits.
    pub c: u32,
    /// Digit windows, W.
    pub windows: usize,
    /// Bucket windows: W, or fewer over window planes (msm.cu's wp).
    pub bucket_windows: usize,
    /// Points per plane (window planes only; 0 without).
    pub stride: u32,
    /// Buckets per window, 2^(c-1).
    pub buckets: usize,
    /// log2 buckets per segment of the reduction.
    pub seg_bits: u32,
    /// How the buckets are reduced.
    pub reduce: MsmReduce,
    /// How the carries are folded.
    pub fold: MsmFold,
    /// How the buckets are summed (msm.cu step 5), in both groups alike.
    pub accumulate: MsmAccumulate,
    /// Chunks a thread of the `affine` bucket sums, at most ([`Layout::lanes_per_thread`]).
    affine_lanes: u32,
    /// Sorted entries per thread of the bucket sums, if tuned ([`Layout::chunk`]).
    tuned_chunk: Option<u32>,
    /// Threads a block of the XYZZ bucket sums.
    pub sums_block: u32,
}

/// The scratch buffers of one MSM, allocated in [`Layout::items`]'s order.
#[derive(Clone, Copy, Debug)]
pub struct Scratch {
    /// Every term's digit in every window.
    pub digits: BufferId,
    /// Terms per bucket (zeroed).
    pub bucket_count: BufferId,
    /// The prefix sum of the counts: each bucket's first sorted entry.
    pub bucket_start: BufferId,
    /// The prefix sum's partial sums (word 0 zeroed).
    pub scan: BufferId,
    /// The entries, sorted by bucket.
    pub sorted: BufferId,
    /// Each bucket's sum.
    pub buckets: BufferId,
    /// Sums of chunks whose bucket continues in the next chunk.
    pub carries: BufferId,
    /// The longest run of carries (one word, zeroed).
    pub carry_span: BufferId,
    /// The one-launch fold's tickets, one a chunk (zeroed).
    pub fold_tickets: BufferId,
    /// The reduction's first output (msm.cu steps 6-7).
    pub reduce_a: BufferId,
    /// The reduction's other output, swapped with `reduce_a` step by step.
    pub reduce_b: BufferId,
    /// The `affine` bucket sums' lane state, one a chunk (one word otherwise).
    pub affine_lanes: BufferId,
}

/// The scratch items of one MSM.
pub const ITEMS: usize = 12;

impl Scratch {
    /// The buffers in [`Layout::items`]'s order.
    pub fn new(ids: [BufferId; ITEMS]) -> Scratch {
        Scratch {
            digits: ids[0],
            bucket_count: ids[1],
            bucket_start: ids[2],
            scan: ids[3],
            sorted: ids[4],
            buckets: ids[5],
            carries: ids[6],
            carry_span: ids[7],
            fold_tickets: ids[8],
            reduce_a: ids[9],
            reduce_b: ids[10],
            affine_lanes: ids[11],
        }
    }
}

/// The scratch items the kernels need cleared (msm.cu's "MUST BE ZEROED", and the
/// prefix sum's zero word at the start of its scratch); the kernels write every other
/// word they read first.
pub const ZEROED: [PlanKey; 4] = [MSM_BUCKET_COUNT, MSM_SCAN, MSM_CARRY_SPAN, MSM_FOLD_TICKETS];

impl Layout {
    /// Plain bases with window bits `c`.
    pub fn new(c: u32, tuning: &CudaTuning) -> Layout {
        Layout::shaped(c, windows(c), 0, tuning)
    }

    /// Over bases with window `planes` of `stride` points each.
    pub fn with_planes(planes: Planes, stride: usize, tuning: &CudaTuning) -> Layout {
        Layout::shaped(planes.c, planes.per_plane as usize, stride as u32, tuning)
    }

    /// Window bits `c` with `bucket_windows` windows of buckets, `stride` points a plane.
    fn shaped(c: u32, bucket_windows: usize, stride: u32, tuning: &CudaTuning) -> Layout {
        let reduce = tuning.msm_reduce.unwrap_or(MsmReduce::Tree);
        let buckets = 1usize << (c - 1);
        let seg_bits = tuning.msm_seg_bits.unwrap_or(match reduce {
            MsmReduce::Tree => tree_seg_bits(bucket_windows * buckets, buckets),
            MsmReduce::Levels => SEG_BITS,
        });
        Layout {
            c,
            windows: windows(c),
            bucket_windows,
            stride,
            buckets,
            seg_bits: seg_bits.min(c - 1),
            reduce,
            fold: tuning.msm_fold.unwrap_or(MsmFold::Tree),
            accumulate: tuning.msm_accumulate.unwrap_or(MsmAccumulate::Xyzz),
            affine_lanes: tuning.msm_affine_lanes.unwrap_or(AFFINE_LANES),
            tuned_chunk: tuning.msm_chunk,
            sums_block: tuning.msm_sums_block.unwrap_or(SUMS_BLOCK),
        }
    }

    /// Chunks a thread of the `affine` bucket sums of `group` over `chunks` chunks: the
    /// tuned or default lanes, or fewer where those would leave fewer than
    /// [`affine_fill_threads`] threads (a small MSM, such as the rest of a bit-heavy
    /// witness-aware one, whose time is its latency; or one whose chunk [`Layout::chunk`]
    /// kept at [`AFFINE_LONG_CHUNK`] entries).
    pub fn lanes_per_thread(&self, chunks: usize, group: Group) -> u32 {
        (chunks.div_ceil(affine_fill_threads(group)) as u64).clamp(1, u64::from(self.affine_lanes))
            as u32
    }

    /// Sorted entries per chunk of the bucket sums of `group` for `n` terms (a
    /// thread's, or with `affine`, a lane's): for `affine`, the lanes that fill the
    /// device with chunks of [`AFFINE_LONG_CHUNK`] or more (at most the tuned or
    /// default lanes), and the chunk that fills it with those lanes.
    pub fn chunk(&self, n: usize, group: Group) -> u32 {
        let entries = self.windows * n;
        if self.accumulate == MsmAccumulate::Affine {
            let fill = affine_fill_threads(group);
            let lanes = (entries / (fill * AFFINE_LONG_CHUNK)).clamp(1, self.affine_lanes as usize);
            return self.tuned_chunk.unwrap_or(
                (entries.div_ceil(fill * lanes) as u64)
                    .clamp(u64::from(MIN_CHUNK), u64::from(AFFINE_MAX_CHUNK))
                    as u32,
            );
        }
        self.tuned_chunk.unwrap_or(if entries >= LONG_CHUNK_FROM {
            LONG_CHUNK
        } else {
            (entries.div_ceil(FILL_THREADS) as u64)
                .clamp(u64::from(MIN_CHUNK), u64::from(SHORT_CHUNK)) as u32
        })
    }

    /// Buckets of all bucket windows.
    pub fn all_buckets(&self) -> usize {
        self.bucket_windows * self.buckets
    }

    /// Segments per bucket window of the reduction.
    pub fn segments(&self) -> usize {
        self.buckets >> self.seg_bits
    }

    /// The passes of the "tree" reduction over groups of `group`.
    pub fn passes(&self, group: Group) -> Passes {
        Passes::new(self.segments(), passes::tile(group))
    }

    /// Points of the reduction's two buffers over groups of `group`: for "levels",
    /// tree_w and tree_v of every segment, then the second pair of the next level.
    fn reduce_points(&self, group: Group) -> [usize; 2] {
        let (w, s) = (self.bucket_windows, self.segments());
        match self.reduce {
            MsmReduce::Tree => self.passes(group).buffer_points(w),
            MsmReduce::Levels => [2 * w * s, 2 * (w * (s / 2)).max(1)],
        }
    }

    /// (item, words) of every scratch buffer for `n` terms of `group`, in
    /// [`Scratch::new`]'s order.
    pub fn items(&self, n: usize, group: Group) -> [(PlanKey, usize); ITEMS] {
        let m = self.all_buckets();
        let entries = self.windows * n;
        let xyzz = group.xyzz_words();
        let [a, b] = self.reduce_points(group);
        let chunks = entries.div_ceil(self.chunk(n, group) as usize);
        let lanes = match self.accumulate {
            MsmAccumulate::Affine => {
                affine_lanes_buffer(group, chunks, self.lanes_per_thread(chunks, group))
            }
            MsmAccumulate::Xyzz => 0,
        };
        [
            (MSM_DIGITS, entries),
            (MSM_BUCKET_COUNT, m),
            (MSM_BUCKET_START, m + 1),
            (MSM_SCAN, scan_words(m)),
            (MSM_SORTED, entries),
            (MSM_BUCKETS, m * xyzz),
            (MSM_CARRIES, chunks * xyzz),
            (MSM_CARRY_SPAN, 1),
            (MSM_FOLD_TICKETS, chunks),
            (MSM_REDUCE_A, a * xyzz),
            (MSM_REDUCE_B, b * xyzz),
            (MSM_AFFINE_LANES, lanes),
        ]
    }
}

/// The layout of an MSM of `n` terms over bases with `planes` (`stride` points a
/// plane): over the planes when the model prefers them and the lease's plan holds
/// their scratch, otherwise plain (plane 0 holds the bases themselves).
pub fn choose(
    group: Group,
    n: usize,
    planes: Option<Planes>,
    stride: usize,
    work: &Lease,
    tuning: &CudaTuning,
) -> Layout {
    let plain = Layout::new(chosen_window_bits(group, n, tuning), tuning);
    let Some(p) = planes else {
        return plain;
    };
    let over = Layout::with_planes(p, stride, tuning);
    let modelled = |l: &Layout| cost::cost(group, n, l.c, l.bucket_windows);
    let plan = work.plan();
    let fits = over
        .items(n, group)
        .iter()
        .all(|(item, words)| plan.bytes_of(*item) >= (words.max(&1) * 4) as u64);
    if fits && modelled(&over) <= modelled(&plain) {
        over
    } else {
        plain
    }
}

/// Words of the batch-affine sums' lanes of `group` for `chunks` chunks, `per_thread`
/// a thread (msm.cu's word planes: every block's `per_thread` lanes of
/// [`AFFINE_BLOCK`] threads, the last block's whole): at most (`chunks` + `per_thread`
/// [`AFFINE_BLOCK`]) [`affine_lane_words`].
pub fn affine_lanes_buffer(group: Group, chunks: usize, per_thread: u32) -> usize {
    let per = per_thread as usize;
    let block = AFFINE_BLOCK as usize;
    chunks.div_ceil(per).div_ceil(block) * per * block * affine_lane_words(group)
}

/// Words of the prefix sum's scratch for `m` counts: one zero word, then the chunks'
/// sums (none for `m` <= [`SCAN_CHUNK`]: one thread scans them all).
pub fn scan_words(m: usize) -> usize {
    if m > SCAN_CHUNK {
        1 + m.div_ceil(SCAN_CHUNK)
    } else {
        1
    }
}

/// The largest number of terms (at most `n`) of `group` for which [`window_bits`]
/// picks at most `c` ([`window_bits`] never decreases as terms grow).
fn largest_terms_with(group: Group, c: u32, n: usize) -> usize {
    if window_bits(group, n) <= c {
        return n;
    }
    let (mut lo, mut hi) = (0usize, n); // window_bits(lo) <= c (or lo = 0) < window_bits(hi)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if window_bits(group, mid) <= c {
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
pub fn scratch_plan(
    group: Group,
    n: usize,
    capacity: u64,
    tuning: &CudaTuning,
    plan: &mut MemoryPlan,
) {
    for len in [n, n + 1] {
        if let Some(planes) = planes::choose_tuned(len, group, capacity, tuning) {
            plan_layout(plan, &Layout::with_planes(planes, len, tuning), n, group);
        }
    }
    // A tuning override applies to every MSM size, so it is planned at `n` itself.
    let chosen = chosen_window_bits(group, n, tuning);
    if chosen != window_bits(group, n) && n > 0 {
        plan_layout(plan, &Layout::new(chosen, tuning), n, group);
    }
    for c in 1..=window_bits(group, n) {
        let terms = largest_terms_with(group, c, n);
        if terms > 0 {
            plan_layout(plan, &Layout::new(c, tuning), terms, group);
        }
    }
}

/// Plans `layout`'s items for MSMs of up to `terms` terms: the largest, the largest
/// that still sums with the short chunk (more carries per entry), and the carries of
/// the smaller chunks below it (at most [`FILL_THREADS`], at most one per
/// [`MIN_CHUNK`] entries). With `affine` the chunks of the MSMs below the largest are
/// at most lanes · [`affine_fill_threads`] (and one per [`MIN_CHUNK`] entries): their
/// carries, tickets and lanes (whole blocks of lanes: [`affine_lanes_buffer`]).
fn plan_layout(plan: &mut MemoryPlan, layout: &Layout, terms: usize, group: Group) {
    let short = (LONG_CHUNK_FROM - 1) / layout.windows;
    for m in [terms, terms.min(short)] {
        for (item, words) in layout.items(m, group) {
            plan.at_least(item, (words.max(1) * 4) as u64);
        }
    }
    if layout.tuned_chunk.is_some() {
        return;
    }
    let affine = layout.accumulate == MsmAccumulate::Affine;
    let most = if affine {
        affine_fill_threads(group) * layout.affine_lanes as usize
    } else {
        FILL_THREADS
    };
    let chunks = most
        .min((layout.windows * terms).div_ceil(MIN_CHUNK as usize))
        .max(1);
    plan.at_least(MSM_CARRIES, (chunks * group.xyzz_words() * 4) as u64);
    plan.at_least(MSM_FOLD_TICKETS, (chunks * 4) as u64);
    if affine {
        let most_lanes =
            (chunks + (layout.affine_lanes * AFFINE_BLOCK) as usize) * affine_lane_words(group);
        plan.at_least(MSM_AFFINE_LANES, (most_lanes * 4) as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    const UNTUNED: CudaTuning = CudaTuning {
        window_bits: None,
        msm_chunk: None,
        msm_seg_bits: None,
        msm_planes: None,
        msm_reduce: None,
        msm_ones: None,
        msm_fold: None,
        msm_accumulate: None,
        msm_affine_lanes: None,
        msm_sums_block: None,
        msm_ones_sum: None,
        ntt_pass_stages: None,
        ntt_path: None,
        ntt_tile_bits: None,
        staging_mib: None,
        staging_cached: false,
        pageable_reads: false,
        read_huge_pages: false,
        portable_arith: false,
        nvrtc_options: Vec::new(),
        nvrtc_programs: None,
        ignore_embedded: false,
        msm_planes_build: None,
    };

    /// Every scratch item of `layout` for `m` terms fits its plan item.
    fn assert_planned(plan: &MemoryPlan, layout: &Layout, m: usize, group: Group, case: &str) {
        for (item, words) in layout.items(m, group) {
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
            for (group, reduce) in [Group::G1, Group::G2]
                .into_iter()
                .flat_map(|g| [(g, MsmReduce::Tree), (g, MsmReduce::Levels)])
            {
                let tuning = CudaTuning {
                    msm_reduce: Some(reduce),
                    ..UNTUNED
                };
                let mut plan = MemoryPlan::new("t");
                scratch_plan(group, n, 0, &tuning, &mut plan);
                let mut ms: Vec<usize> = [1, n / 3, n / 2, n.saturating_sub(1), n].into();
                // Every size just below a change of window.
                ms.extend((1..=window_bits(group, n)).map(|c| largest_terms_with(group, c, n)));
                // The largest size that still sums with the short chunk.
                ms.extend((1..=window_bits(group, n)).map(|c| (LONG_CHUNK_FROM - 1) / windows(c)));
                // Around the sizes where the chunk shrinks below the short one.
                for c in 1..=window_bits(group, n) {
                    let w = windows(c);
                    for e in [
                        MIN_CHUNK as usize * FILL_THREADS,
                        SHORT_CHUNK as usize * FILL_THREADS,
                    ] {
                        ms.extend([e / w - 1, e / w, e / w + 1]);
                    }
                }
                for m in ms.into_iter().filter(|m| (1..=n).contains(m)) {
                    let layout = Layout::new(window_bits(group, m), &tuning);
                    let case = format!("n={n} m={m} {reduce:?}");
                    assert_planned(&plan, &layout, m, group, &case);
                }
            }
        }
    }

    #[test]
    fn plan_covers_every_affine_msm_up_to_its_size() {
        for lanes in [None, Some(1), Some(64)] {
            let tuning = CudaTuning {
                msm_accumulate: Some(MsmAccumulate::Affine),
                msm_affine_lanes: lanes,
                ..UNTUNED
            };
            for n in [1usize, 7, 100, 4096, 65537, (1 << 20) + 1, (1 << 22) + 5] {
                for group in [Group::G1, Group::G2] {
                    let fill = affine_fill_threads(group) * lanes.unwrap_or(AFFINE_LANES) as usize;
                    let mut plan = MemoryPlan::new("t");
                    scratch_plan(group, n, 0, &tuning, &mut plan);
                    let mut ms: Vec<usize> = [1, n / 3, n / 2, n.saturating_sub(1), n].into();
                    ms.extend((1..=window_bits(group, n)).map(|c| largest_terms_with(group, c, n)));
                    // Around the sizes where the chunk leaves its bounds.
                    for c in 1..=window_bits(group, n) {
                        let w = windows(c);
                        for e in [MIN_CHUNK as usize * fill, AFFINE_MAX_CHUNK as usize * fill] {
                            ms.extend([e / w - 1, e / w, e / w + 1]);
                        }
                        // Where the lanes step up (chunks of AFFINE_LONG_CHUNK or more).
                        for k in 1..=lanes.unwrap_or(AFFINE_LANES) as usize {
                            let e = k * affine_fill_threads(group) * AFFINE_LONG_CHUNK;
                            ms.extend([e / w - 1, e / w, e / w + 1]);
                        }
                    }
                    for m in ms.into_iter().filter(|m| (1..=n).contains(m)) {
                        let layout = Layout::new(window_bits(group, m), &tuning);
                        let case = format!("n={n} m={m} {group:?} lanes {lanes:?}");
                        assert_planned(&plan, &layout, m, group, &case);
                    }
                    // At least a block of lanes.
                    let lanes_bytes = plan
                        .items()
                        .iter()
                        .find(|i| i.key == MSM_AFFINE_LANES)
                        .map_or(0, |i| i.bytes);
                    let block = AFFINE_BLOCK as usize * affine_lane_words(group) * 4;
                    assert!(lanes_bytes >= block as u64, "{group:?}");
                }
            }
        }
        // Untuned: no lanes beyond the one word.
        for group in [Group::G1, Group::G2] {
            let mut plan = MemoryPlan::new("t");
            scratch_plan(group, 1 << 20, 0, &UNTUNED, &mut plan);
            let lanes = plan.items().iter().find(|i| i.key == MSM_AFFINE_LANES);
            assert_eq!(lanes.map(|i| i.bytes), Some(4));
        }
    }

    #[test]
    fn affine_sums_take_chunks_that_fill_the_device_with_their_lanes() {
        let affine = CudaTuning {
            msm_accumulate: Some(MsmAccumulate::Affine),
            ..UNTUNED
        };
        let layout = |c| Layout::new(c, &affine);
        // G1 2^20: 13·2^20 entries, 8 lanes of 35 (chunks of 32 or more) in 3·2^14
        // threads; 2^22 and 2^24 16 lanes of 70 and 278. G2 (2^15 threads): 13 lanes of
        // 32 at 2^20.
        let l = layout(20);
        assert_eq!(l.accumulate, MsmAccumulate::Affine);
        assert_eq!(l.chunk(1 << 20, Group::G1), 35);
        assert_eq!(l.chunk(1 << 22, Group::G1), 70);
        assert_eq!(l.chunk(1 << 24, Group::G1), 278);
        assert_eq!(l.chunk(1 << 30, Group::G1), AFFINE_MAX_CHUNK);
        assert_eq!(l.chunk(100, Group::G1), MIN_CHUNK);
        assert_eq!(l.chunk(1 << 20, Group::G2), 32);
        // Each fills the device (one wave, all but the last block full) at its lanes.
        for (group, log_n, lanes) in [
            (Group::G1, 20, 8),
            (Group::G1, 22, 16),
            (Group::G1, 24, 16),
            (Group::G2, 20, 13),
            (Group::G2, 22, 16),
        ] {
            let entries = 13usize << log_n;
            let chunks = entries.div_ceil(l.chunk(1 << log_n, group) as usize);
            assert_eq!(l.lanes_per_thread(chunks, group), lanes, "2^{log_n}");
            let threads = chunks.div_ceil(lanes as usize);
            let fill = affine_fill_threads(group);
            assert!(threads <= fill, "{group:?} 2^{log_n}: {threads} threads");
            assert!(threads > fill - AFFINE_BLOCK as usize * 4, "2^{log_n}");
        }
        // XYZZ keeps its chunk.
        assert_eq!(
            Layout::new(20, &UNTUNED).chunk(1 << 20, Group::G2),
            SHORT_CHUNK
        );
        // Lanes: 16 a thread, fewer where they would leave fewer threads than a wave.
        let fill = affine_fill_threads(Group::G1);
        assert_eq!(l.lanes_per_thread(1 << 20, Group::G1), AFFINE_LANES);
        assert_eq!(l.lanes_per_thread(1 << 30, Group::G1), AFFINE_LANES);
        assert_eq!(l.lanes_per_thread(5 * fill, Group::G1), 5);
        assert_eq!(l.lanes_per_thread(5 * fill + 1, Group::G1), 6);
        assert_eq!(l.lanes_per_thread(1, Group::G1), 1);
        // The lanes' words: whole blocks of planes.
        let block = AFFINE_BLOCK as usize;
        for group in [Group::G1, Group::G2] {
            let words = affine_lane_words(group);
            assert_eq!(affine_lanes_buffer(group, 1, 1), block * words);
            assert_eq!(
                affine_lanes_buffer(group, 16 * block, 16),
                16 * block * words
            );
            assert_eq!(
                affine_lanes_buffer(group, 16 * block + 1, 16),
                32 * block * words
            );
        }
        // A tuned chunk is the chunk.
        let tuned = CudaTuning {
            msm_chunk: Some(40),
            ..affine
        };
        assert_eq!(Layout::new(20, &tuned).chunk(1 << 20, Group::G1), 40);
        // Lanes of 63 and 123 words, as msm.cu's static_asserts say.
        let source = include_str!("../../kernels/msm.cu");
        for (group, field) in [(Group::G1, "Fq"), (Group::G2, "Fq2")] {
            let words = affine_lane_words(group);
            let assert = format!("msm_lane_words<{field}>::ALL == {words}");
            assert!(source.contains(&assert), "msm.cu lacks {assert:?}");
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
                scratch_plan(group, n, capacity, &UNTUNED, &mut plan);
                for len in [n, n + 1] {
                    let p = planes::choose_tuned(len, group, capacity, &UNTUNED)
                        .expect("planes at these sizes");
                    let layout = Layout::with_planes(p, len, &UNTUNED);
                    assert_planned(&plan, &layout, n, group, &format!("n={n} len={len}"));
                }
            }
        }
    }

    #[test]
    fn an_msm_runs_over_the_planes_only_when_its_plan_holds_their_scratch() {
        use crucible_core::{DeviceBudget, HostSync};
        let (capacity, n) = (140u64 << 30, 1usize << 16);
        let planes = planes::choose_tuned(n, Group::G1, capacity, &UNTUNED).unwrap();
        let budget = DeviceBudget::new("t", 1 << 40);
        let layout = |planned_terms: usize, planned_capacity: u64, terms: usize| {
            let mut plan = MemoryPlan::new("t");
            scratch_plan(
                Group::G1,
                planned_terms,
                planned_capacity,
                &UNTUNED,
                &mut plan,
            );
            let permit = budget.acquire(plan.total_bytes()).unwrap();
            let work = Lease::new(plan, permit, Arc::new(HostSync)).unwrap();
            let l = choose(Group::G1, terms, Some(planes), n, &work, &UNTUNED);
            (l.c, l.bucket_windows, l.stride)
        };
        // Planned with the planes: over them, one bucket window.
        assert_eq!(layout(n, capacity, n), (planes.c, 1, n as u32));
        // A plan without room for the planes' scratch: plain bases.
        let c = window_bits(Group::G1, n);
        assert_eq!(layout(1000, 0, n), (c, windows(c), 0));
        // Three terms over a buffer of 2^16: the planes' 2^(c-1) buckets would cost more
        // than plain windows.
        let c3 = window_bits(Group::G1, 3);
        assert_eq!(layout(n, capacity, 3), (c3, windows(c3), 0));
    }

    #[test]
    fn scratch_fields_follow_the_items_order() {
        use crucible_core::{DeviceBudget, HostSync};
        let items = Layout::new(4, &UNTUNED).items(10, Group::G1);
        let mut plan = MemoryPlan::new("t");
        for (item, _) in items {
            plan.at_least(item, 1);
        }
        let budget = DeviceBudget::new("t", 1 << 20);
        let permit = budget.acquire(plan.total_bytes()).unwrap();
        let mut lease = Lease::new(plan, permit, Arc::new(HostSync)).unwrap();
        let ids = items.map(|(item, _)| lease.allocate(item, 1, || Ok(0u8)).unwrap());
        let debug = format!("{:?}", Scratch::new(ids));
        for ((item, _), id) in items.iter().zip(ids) {
            let field = item.name().trim_start_matches("msm_");
            let want = format!("{field}: {id:?}");
            assert!(
                debug.contains(&want),
                "{item} is not Scratch::{field}: {debug}"
            );
        }
        lease.release().unwrap();
    }

    #[test]
    fn each_reduction_has_its_segment_default_and_the_tuned_one_wins() {
        let with = |reduce, seg_bits| CudaTuning {
            msm_reduce: reduce,
            msm_seg_bits: seg_bits,
            ..UNTUNED
        };
        assert_eq!(Layout::new(20, &UNTUNED).reduce, MsmReduce::Tree);
        assert_eq!(Layout::new(20, &UNTUNED).seg_bits, TREE_SEG_BITS);
        // Few buckets: shorter segments, so that the reduction has threads enough.
        assert_eq!(Layout::new(10, &UNTUNED).seg_bits, 0);
        assert_eq!(Layout::new(13, &UNTUNED).seg_bits, 1);
        assert_eq!(Layout::new(14, &UNTUNED).seg_bits, 2);
        assert_eq!(Layout::new(16, &UNTUNED).seg_bits, TREE_SEG_BITS);
        assert_eq!(Layout::new(10, &with(None, Some(3))).seg_bits, 3);
        let levels = Layout::new(20, &with(Some(MsmReduce::Levels), None));
        assert_eq!(
            (levels.reduce, levels.seg_bits),
            (MsmReduce::Levels, SEG_BITS)
        );
        assert_eq!(Layout::new(20, &with(None, Some(5))).seg_bits, 5);
        // Never more than the window's buckets.
        assert_eq!(Layout::new(2, &with(None, Some(3))).seg_bits, 1);
        assert_eq!(tree_seg_bits(1 << 30, 2), 1);
    }

    #[test]
    fn small_msms_sum_in_smaller_chunks_and_large_ones_keep_theirs() {
        let chunk = |c: u32, n: usize| Layout::new(c, &UNTUNED).chunk(n, Group::G1);
        // G1 2^20 (16 windows plain, 13 over planes) and more: as before.
        assert_eq!(chunk(16, 1 << 20), SHORT_CHUNK);
        assert_eq!(chunk(20, 1 << 20), SHORT_CHUNK);
        assert_eq!(chunk(20, 1 << 24), LONG_CHUNK);
        // 1 % of 2^20 terms, c = 10 (26 windows): 2^16 threads or more instead of 4260.
        let n = (1 << 20) / 100;
        let c = chunk(10, n);
        assert_eq!(c, MIN_CHUNK);
        assert!((26 * n).div_ceil(c as usize) >= 26 * n / 8);
        // Between: about FILL_THREADS threads.
        let c = chunk(16, 1 << 17);
        assert_eq!(c, 32);
        assert_eq!((16usize << 17).div_ceil(c as usize), FILL_THREADS);
        // A tuned chunk is the chunk.
        let tuned = CudaTuning {
            msm_chunk: Some(64),
            ..UNTUNED
        };
        assert_eq!(Layout::new(10, &tuned).chunk(n, Group::G1), 64);
    }

    #[test]
    fn scan_scratch_holds_the_zero_and_the_chunks_sums() {
        assert_eq!(scan_words(1), 1);
        assert_eq!(scan_words(SCAN_CHUNK), 1);
        assert_eq!(scan_words(SCAN_CHUNK + 1), 1 + 2);
        assert_eq!(scan_words(1 << 19), 1 + 8192);
    }
}
