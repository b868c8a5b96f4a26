//! The shape of one MSM on the device: window bits, digit and bucket windows, the work
//! split of the kernels, and every scratch buffer it takes (msm.cu's opening contract
//! lists them), both for the plan (sized for the largest MSM a lease may run) and for
//! the allocation.

use crucible_core::{BufferId, Lease, MemoryPlan, PlanKey};

use crate::field::Group;
use crate::msm::cost::{self, chosen_window_bits, window_bits};
use crate::msm::passes::{self, Passes};
use crate::msm::planes::{self, Planes};
use crate::msm::sort_reuse::{MSM_BUCKET_START, MSM_SORTED};
use crate::tuning::CudaTuning;

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
/// The smallest chunk [`FILL_THREADS`] leads to.
const MIN_CHUNK: u32 = 8;
/// Entries per thread of the prefix sum (msm.cu step 2).
pub const SCAN_CHUNK: usize = 64;
/// log2 of the buckets per segment of the reduction (msm.cu step 6), unless tuned
/// (`msm_seg_bits`): its segments' running sums are its longest chain of additions, so
/// it takes short ones. With 8 buckets a thread, G1 2^20 over
/// window planes (2^19 buckets) has 2^16 segment threads, more than the ~45000 that
/// keep the H200's SMs busy at ~8 warps each; 16 a thread left half of them idle.
/// Fewer buckets get shorter segments, down to one bucket a thread, until there are
/// [`FILL_SEGMENTS`] segment threads ([`tree_seg_bits`]).
const TREE_SEG_BITS: u32 = 3;
/// Segment threads below which the reduction shortens its segments: a small
/// MSM's reduction is a chain of dependent additions (about 30 µs each on a nearly idle
/// H200), 2^(seg_bits + 1) of them in a segment's running sums and one a level of the
/// tree above (c - 1 - seg_bits levels). The rest of a witness-aware MSM at 99 % 0/1
/// scalars (2^20 / 100 terms, c = 10, 26 windows of 512 buckets) had 1664 segment
/// threads of 8 buckets: 16 + 6 additions deep, 0.63 ms (ncu); one bucket a thread is
/// 9 levels deep. G1 and G2 2^20 over planes (2^19 and 2^18 buckets) keep 8.
const FILL_SEGMENTS: usize = 1 << 15;

/// log2 buckets per segment of the reduction over `buckets` buckets in all:
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
    /// Sorted entries per thread of the bucket sums, if tuned ([`Layout::chunk`]).
    tuned_chunk: Option<u32>,
    /// Threads a block of the bucket sums.
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
}

/// The scratch items of one MSM.
pub const ITEMS: usize = 11;

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
        }
    }
}

/// The scratch items the kernels need cleared (msm.cu's "MUST BE ZEROED", and the
/// prefix sum's zero word at the start of its scratch); the kernels write every other
/// word they read first.
pub const ZEROED: [PlanKey; 4] = [MSM_BUCKET_COUNT, MSM_SCAN, MSM_CARRY_SPAN, MSM_FOLD_TICKETS];

impl Layout {
    /// Plain bases of `group` with window bits `c`.
    pub fn new(group: Group, c: u32, tuning: &CudaTuning) -> Layout {
        Layout::shaped(group, c, group.windows(c), 0, tuning)
    }

    /// Over bases of `group` with window `planes` of `stride` points each.
    pub fn with_planes(group: Group, planes: Planes, stride: usize, tuning: &CudaTuning) -> Layout {
        Layout::shaped(
            group,
            planes.c,
            planes.per_plane as usize,
            stride as u32,
            tuning,
        )
    }

    /// Window bits `c` over `group`'s scalars with `bucket_windows` windows of buckets,
    /// `stride` points a plane.
    fn shaped(
        group: Group,
        c: u32,
        bucket_windows: usize,
        stride: u32,
        tuning: &CudaTuning,
    ) -> Layout {
        let buckets = 1usize << (c - 1);
        let seg_bits = tuning
            .msm_seg_bits
            .unwrap_or_else(|| tree_seg_bits(bucket_windows * buckets, buckets));
        Layout {
            c,
            windows: group.windows(c),
            bucket_windows,
            stride,
            buckets,
            seg_bits: seg_bits.min(c - 1),
            tuned_chunk: tuning.msm_chunk,
            sums_block: tuning.sums_block(),
        }
    }

    /// Sorted entries per thread of the bucket sums for `n` terms: [`SHORT_CHUNK`],
    /// [`LONG_CHUNK`] from [`LONG_CHUNK_FROM`] entries, fewer for small MSMs.
    pub fn chunk(&self, n: usize) -> u32 {
        let entries = self.windows * n;
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

    /// The passes of the reduction over groups of `group`.
    pub fn passes(&self, group: Group) -> Passes {
        Passes::new(self.segments(), passes::tile(group))
    }

    /// Points of the reduction's two buffers over groups of `group`.
    fn reduce_points(&self, group: Group) -> [usize; 2] {
        self.passes(group).buffer_points(self.bucket_windows)
    }

    /// (item, words) of every scratch buffer for `n` terms of `group`, in
    /// [`Scratch::new`]'s order.
    pub fn items(&self, n: usize, group: Group) -> [(PlanKey, usize); ITEMS] {
        let m = self.all_buckets();
        let entries = self.windows * n;
        let xyzz = group.xyzz_words();
        let [a, b] = self.reduce_points(group);
        let chunks = entries.div_ceil(self.chunk(n) as usize);
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
    let plain = Layout::new(group, chosen_window_bits(group, n, tuning), tuning);
    let Some(p) = planes else {
        return plain;
    };
    let over = Layout::with_planes(group, p, stride, tuning);
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
            plan_layout(
                plan,
                &Layout::with_planes(group, planes, len, tuning),
                n,
                group,
            );
        }
    }
    // A tuned `window_bits` applies to every MSM size, so it is planned at `n` itself.
    let chosen = chosen_window_bits(group, n, tuning);
    if chosen != window_bits(group, n) && n > 0 {
        plan_layout(plan, &Layout::new(group, chosen, tuning), n, group);
    }
    for c in 1..=window_bits(group, n) {
        let terms = largest_terms_with(group, c, n);
        if terms > 0 {
            plan_layout(plan, &Layout::new(group, c, tuning), terms, group);
        }
    }
}

/// Plans `layout`'s items for MSMs of up to `terms` terms: the largest, the largest
/// that still sums with the short chunk (more carries per entry), and the carries of
/// the smaller chunks below it (at most [`FILL_THREADS`], at most one per
/// [`MIN_CHUNK`] entries).
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
    let chunks = FILL_THREADS
        .min((layout.windows * terms).div_ceil(MIN_CHUNK as usize))
        .max(1);
    plan.at_least(MSM_CARRIES, (chunks * group.xyzz_words() * 4) as u64);
    plan.at_least(MSM_FOLD_TICKETS, (chunks * 4) as u64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::test_groups::{BLS_G1, BLS_G2, BN_G1, BN_G2};
    use std::sync::Arc;

    const UNTUNED: CudaTuning = CudaTuning {
        window_bits: None,
        msm_chunk: None,
        msm_seg_bits: None,
        msm_planes: None,
        msm_planes_build: None,
        msm_sums_block: None,
        ntt_tile_bits: None,
        staging_mib: None,
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
            for group in [BLS_G1, BLS_G2, BN_G1, BN_G2] {
                let tuning = UNTUNED;
                let mut plan = MemoryPlan::new("t");
                scratch_plan(group, n, 0, &tuning, &mut plan);
                let mut ms: Vec<usize> = [1, n / 3, n / 2, n.saturating_sub(1), n].into();
                // Every size just below a change of window.
                ms.extend((1..=window_bits(group, n)).map(|c| largest_terms_with(group, c, n)));
                // The largest size that still sums with the short chunk.
                ms.extend(
                    (1..=window_bits(group, n)).map(|c| (LONG_CHUNK_FROM - 1) / group.windows(c)),
                );
                // Around the sizes where the chunk shrinks below the short one.
                for c in 1..=window_bits(group, n) {
                    let w = group.windows(c);
                    for e in [
                        MIN_CHUNK as usize * FILL_THREADS,
                        SHORT_CHUNK as usize * FILL_THREADS,
                    ] {
                        ms.extend([e / w - 1, e / w, e / w + 1]);
                    }
                }
                for m in ms.into_iter().filter(|m| (1..=n).contains(m)) {
                    let layout = Layout::new(group, window_bits(group, m), &tuning);
                    let case = format!("n={n} m={m} {group:?}");
                    assert_planned(&plan, &layout, m, group, &case);
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
            for group in [BLS_G1, BLS_G2, BN_G1, BN_G2] {
                let mut plan = MemoryPlan::new("t");
                scratch_plan(group, n, capacity, &UNTUNED, &mut plan);
                for len in [n, n + 1] {
                    let p = planes::choose_tuned(len, group, capacity, &UNTUNED)
                        .expect("planes at these sizes");
                    let layout = Layout::with_planes(group, p, len, &UNTUNED);
                    assert_planned(&plan, &layout, n, group, &format!("n={n} len={len}"));
                }
            }
        }
    }

    #[test]
    fn an_msm_runs_over_the_planes_only_when_its_plan_holds_their_scratch() {
        use crucible_core::{DeviceBudget, HostSync};
        let (capacity, n) = (140u64 << 30, 1usize << 16);
        let planes = planes::choose_tuned(n, BLS_G1, capacity, &UNTUNED).unwrap();
        let budget = DeviceBudget::new("t", 1 << 40);
        let layout = |planned_terms: usize, planned_capacity: u64, terms: usize| {
            let mut plan = MemoryPlan::new("t");
            scratch_plan(BLS_G1, planned_terms, planned_capacity, &UNTUNED, &mut plan);
            let permit = budget.acquire(plan.total_bytes()).unwrap();
            let work = Lease::new(plan, permit, Arc::new(HostSync)).unwrap();
            let l = choose(BLS_G1, terms, Some(planes), n, &work, &UNTUNED);
            (l.c, l.bucket_windows, l.stride)
        };
        // Planned with the planes: over them, one bucket window.
        assert_eq!(layout(n, capacity, n), (planes.c, 1, n as u32));
        // A plan without room for the planes' scratch: plain bases.
        let c = window_bits(BLS_G1, n);
        assert_eq!(layout(1000, 0, n), (c, BLS_G1.windows(c), 0));
        // Three terms over a buffer of 2^16: the planes' 2^(c-1) buckets would cost more
        // than plain windows.
        let c3 = window_bits(BLS_G1, 3);
        assert_eq!(layout(n, capacity, 3), (c3, BLS_G1.windows(c3), 0));
    }

    #[test]
    fn scratch_fields_follow_the_items_order() {
        use crucible_core::{DeviceBudget, HostSync};
        let items = Layout::new(BLS_G1, 4, &UNTUNED).items(10, BLS_G1);
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
    fn the_reduction_has_its_segment_default_and_the_tuned_one_wins() {
        let with = |seg_bits| CudaTuning {
            msm_seg_bits: seg_bits,
            ..UNTUNED
        };
        assert_eq!(Layout::new(BLS_G1, 20, &UNTUNED).seg_bits, TREE_SEG_BITS);
        // Few buckets: shorter segments, so that the reduction has threads enough.
        assert_eq!(Layout::new(BLS_G1, 10, &UNTUNED).seg_bits, 0);
        assert_eq!(Layout::new(BLS_G1, 13, &UNTUNED).seg_bits, 1);
        assert_eq!(Layout::new(BLS_G1, 14, &UNTUNED).seg_bits, 2);
        assert_eq!(Layout::new(BLS_G1, 16, &UNTUNED).seg_bits, TREE_SEG_BITS);
        assert_eq!(Layout::new(BLS_G1, 10, &with(Some(3))).seg_bits, 3);
        assert_eq!(Layout::new(BLS_G1, 20, &with(Some(5))).seg_bits, 5);
        // Never more than the window's buckets.
        assert_eq!(Layout::new(BLS_G1, 2, &with(Some(3))).seg_bits, 1);
        assert_eq!(tree_seg_bits(1 << 30, 2), 1);
    }

    #[test]
    fn small_msms_sum_in_smaller_chunks_and_large_ones_keep_theirs() {
        let chunk = |c: u32, n: usize| Layout::new(BLS_G1, c, &UNTUNED).chunk(n);
        // G1 2^20 (16 windows plain, 13 over planes) and more: the short or long chunk.
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
        assert_eq!(Layout::new(BLS_G1, 10, &tuned).chunk(n), 64);
    }

    /// The same window bits over BN254 count its 255-bit digits' windows (one fewer at
    /// c = 15) and its smaller points (XYZZ of 64 words in G2 against 96).
    #[test]
    fn each_curve_sizes_its_scratch_by_its_own_windows_and_points() {
        let (bls, bn) = (
            Layout::new(BLS_G2, 15, &UNTUNED),
            Layout::new(BN_G2, 15, &UNTUNED),
        );
        assert_eq!((bls.windows, bn.windows), (18, 17));
        assert_eq!((bls.bucket_windows, bn.bucket_windows), (18, 17));
        let n = 1000;
        let b = bls.items(n, BLS_G2).map(|(_, w)| w);
        let k = bn.items(n, BN_G2).map(|(_, w)| w);
        // Digits and sorted entries: W·n.
        assert_eq!((b[0], k[0]), (18 * n, 17 * n));
        assert_eq!((b[4], k[4]), (18 * n, 17 * n));
        // Buckets: 2^14 a window, XYZZ points.
        assert_eq!((b[5], k[5]), ((18 << 14) * 96, (17 << 14) * 64));
        // At c = 16 the windows agree and only the points differ.
        let g1 = |group| Layout::new(group, 16, &UNTUNED).items(n, group)[5].1;
        assert_eq!((g1(BLS_G1), g1(BN_G1)), ((16 << 15) * 48, (16 << 15) * 32));
    }

    #[test]
    fn scan_scratch_holds_the_zero_and_the_chunks_sums() {
        assert_eq!(scan_words(1), 1);
        assert_eq!(scan_words(SCAN_CHUNK), 1);
        assert_eq!(scan_words(SCAN_CHUNK + 1), 1 + 2);
        assert_eq!(scan_words(1 << 19), 1 + 8192);
    }
}
