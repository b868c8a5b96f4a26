//! MSM bases buffers and their window planes. A G1 or G2 bases buffer of `len` points can be
//! allocated with room for `count` planes: plane j holds 2^(c·per_plane·j)·P_i for every
//! point (plane 0 the points themselves), built on the device from the staged points
//! (kernels/planes.cu). An MSM over such a buffer puts the digits of all W windows into
//! the buckets of `per_plane` windows (msm.cu's header): the bucket reduction runs
//! over per_plane windows instead of W, and larger windows (fewer bucket additions)
//! pay off, since they no longer multiply the reduction by W. The planes are the
//! bases buffer's own layout ([`BasesBuffer`]); the generic buffer knows none.
//!
//! The planes cost memory: `count` times the bases. One buffer's planes take at most
//! 1/[`BUDGET_SHARE`] of the device budget, and the tuning key `msm_planes` caps their
//! number (1 turns them off), so a prover under a small memory limit keeps plain bases.
//!
//! They also cost time to build: 164 ms for 2^20 G1 points, against about 1.3 ms saved
//! an MSM. A resident bases buffer is one its caller stages once for many MSMs (a
//! proving key), so by default (`msm_planes_build = "eager"`) the planes are built when
//! its bases are staged: on the H200 64 proofs of 2^20 with 2 workers made 10.48
//! proofs/s so, against 8.14 under `paid` below, which had not built them by the end
//! (d32de65:BENCHMARKS.md). A caller that stages resident bases for a few MSMs can
//! choose `paid`: a buffer starts with plane 0 alone
//! and rents before it buys, as in ski rental: each MSM over the staged bases runs on
//! plane 0 and adds the cost model's predicted saving to the buffer's [`Ledger`]; the
//! MSM that brings the savings to the predicted build cost builds the planes first and
//! runs over them, as does every later MSM until the bases are staged again. A one-shot
//! MSM never pays for planes (G1 2^24: 235 ms staged and summed, against 1741 ms
//! eager), a long-running prover pays at most twice what building at once would have
//! cost. `never` gives the buffer no room for them.

use std::sync::{Arc, Mutex, MutexGuard};

use crucible_core::{BufferId, Error, Lease, PlanKey, Result};
use cudarc::driver::{CudaSlice, CudaStream};

use crate::field::Group;
use crate::launch::{self, grid_with_block, Dev, Kernels};
use crate::memory::{self, DeviceWords};
use crate::msm::cost;
use crate::tuning::{CudaTuning, PlanesBuild};

/// Points one thread of planes.cu carries through the doublings: they share one
/// inversion back to affine. The launch shape depends on it, so it must be the
/// kernel's PLANES_BATCH (a test reads planes.cu), which NVRTC options must not change.
const BATCH: usize = 16;
/// planes.cu's kernels keep a batch of points in registers and local memory.
const BLOCK: u32 = 128;

/// One buffer's planes take at most this fraction (1/n) of the device budget.
pub const BUDGET_SHARE: u64 = 16;

/// The layout of a bases buffer with planes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Planes {
    /// The MSM window bits the planes were built for.
    pub c: u32,
    /// Bucket windows of an MSM over the planes (`wp` in msm.cu).
    pub per_plane: u32,
    /// Planes, plane 0 included (at least 2).
    pub count: u32,
}

impl Planes {
    /// Doublings from one plane to the next.
    pub fn shift(&self) -> u32 {
        self.c * self.per_plane
    }
}

/// A bases buffer: the points (plane 0) and, when it has room for them, its window
/// planes.
pub struct BasesBuffer {
    /// The device words, plane after plane (freed, stream-ordered, when dropped).
    pub words: CudaSlice<u32>,
    /// The window planes that follow the points, if the buffer has room for them.
    pub planes: Option<Planes>,
    /// Whether the planes are built, and what the MSMs would have saved with them.
    ledger: Mutex<Ledger>,
}

impl BasesBuffer {
    /// The buffer's planes ledger.
    pub fn ledger(&self) -> Result<MutexGuard<'_, Ledger>> {
        self.ledger
            .lock()
            .map_err(|_| Error::device("cuda", "a bases buffer's planes lock is poisoned"))
    }
}

/// A bases buffer's planes since its points were last staged: built or not, and (not
/// yet built) the savings the MSMs since would have had over them, in predicted ns.
#[derive(Debug, Default, PartialEq)]
pub struct Ledger {
    built: bool,
    saved_ns: f64,
}

impl Ledger {
    /// New points were staged: the planes (of the old points) are void, and so are
    /// the savings counted towards them.
    pub fn staged(&mut self) {
        *self = Ledger::default();
    }

    /// Whether the planes are built from the points staged now.
    pub fn built(&self) -> bool {
        self.built
    }

    /// One MSM that would save `saving_ns` over the planes, which cost `build_ns` to
    /// build: whether to build them now, before it (the savings since staging,
    /// this one's included, reach the cost). Once built, always true.
    pub fn pays(&mut self, saving_ns: f64, build_ns: f64) -> bool {
        if !self.built {
            self.saved_ns += saving_ns.max(0.0);
            self.built = self.saved_ns >= build_ns;
        }
        self.built
    }

    /// The planes were built (at staging, `eager`).
    pub fn set_built(&mut self) {
        self.built = true;
    }
}

impl DeviceWords for BasesBuffer {
    fn words_mut(&mut self) -> &mut CudaSlice<u32> {
        &mut self.words
    }
}

/// Copies of the points a buffer with `planes` holds: one per plane, or the points alone.
pub fn copies(planes: Option<Planes>) -> u32 {
    planes.map_or(1, |p| p.count)
}

/// Allocates a zeroed bases buffer of `len` points of `group` from plan item `item`,
/// with room for `planes`.
pub fn alloc(
    stream: &Arc<CudaStream>,
    lease: &mut Lease,
    item: PlanKey,
    group: Group,
    len: usize,
    planes: Option<Planes>,
) -> Result<BufferId> {
    let affine_bytes = (group.affine_words() * 4) as u64;
    let bytes = memory::buffer_bytes(affine_bytes, len, copies(planes))?.max(4);
    let count = (bytes as usize / 4).max(1);
    lease.allocate(item, bytes, || {
        Ok(BasesBuffer {
            words: memory::zeroed(stream, count)?,
            planes,
            ledger: Mutex::new(Ledger::default()),
        })
    })
}

/// The planes for a buffer of `len` points of `group` under a budget of `capacity`
/// bytes, or None when plain bases are as good (no memory for a second plane, or the
/// model prefers one plane). `max_planes` caps the count (the tuning's `msm_planes`),
/// `window_bits` fixes c (the tuning's `window_bits`).
fn choose(
    len: usize,
    group: Group,
    capacity: u64,
    max_planes: Option<u32>,
    window_bits: Option<u32>,
) -> Option<Planes> {
    if len == 0 {
        return None;
    }
    let affine_bytes = (group.affine_words() * 4) as u64;
    let by_memory = capacity / BUDGET_SHARE / (len as u64 * affine_bytes);
    let cap = by_memory.min(u64::from(max_planes.unwrap_or(u32::MAX)));
    if cap < 2 {
        return None;
    }
    let candidates = match window_bits {
        Some(c) => c..=c,
        None => 1..=cost::MAX_WINDOW_BITS,
    };
    let mut best: Option<(u128, Planes)> = None;
    for c in candidates {
        let w = group.windows(c);
        // Entries are u32 (W·len) and name points of all planes (count·len < 2^31).
        if (w as u64) * (len as u64) > u64::from(u32::MAX) {
            continue;
        }
        let most = (w as u64).min(cap).min(((1u64 << 31) - 1) / len as u64);
        if most < 2 {
            continue;
        }
        // W >= 12 (c <= 22) and most >= 2, so count >= 2.
        let wp = w.div_ceil(most as usize);
        let count = w.div_ceil(wp) as u32;
        let planes = Planes {
            c,
            per_plane: wp as u32,
            count,
        };
        let modelled = cost::cost(group, len, c, wp);
        if best.is_none_or(|(b, _)| modelled < b) {
            best = Some((modelled, planes));
        }
    }
    let (cost_planes, planes) = best?;
    // Plain bases when they model as cheap (tiny buffers, or a window override that
    // leaves one bucket window per digit window anyway).
    let c0 = cost::window_bits(group, len);
    let plain = cost::cost(group, len, c0, group.windows(c0));
    (cost_planes < plain).then_some(planes)
}

/// [`choose`] with `tuning`'s `msm_planes` and `window_bits`; none under
/// `msm_planes_build = "never"`.
pub fn choose_tuned(
    len: usize,
    group: Group,
    capacity: u64,
    tuning: &CudaTuning,
) -> Option<Planes> {
    if tuning.planes_build() == PlanesBuild::Never {
        return None;
    }
    choose(len, group, capacity, tuning.msm_planes, tuning.window_bits)
}

/// Fills planes 1.. of bases buffer `buf` (`len` points, plane 0 staged), one launch
/// per plane, on the compute stream (ordered after the staging copy by the buffer's
/// events). A buffer without planes needs nothing. The caller marks its ledger.
pub fn build(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    group: Group,
    buf: &BasesBuffer,
    len: usize,
) -> Result<()> {
    let Some(planes) = buf.planes else {
        return Ok(());
    };
    // The table's stride is its length: plane j starts at point j·len.
    let (n, shift) = (len as u32, planes.shift());
    for plane in 1..planes.count {
        launch::planes(
            k,
            stream,
            grid_with_block(len.div_ceil(BATCH), BLOCK),
            group,
            Dev::new(&buf.words),
            n,
            n,
            plane,
            shift,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::test_groups::{BLS_G1, BLS_G2, BN_G1, BN_G2};

    const H200: u64 = 140 << 30;

    #[test]
    fn full_planes_when_memory_allows() {
        let p = choose(1 << 20, BLS_G1, H200, None, None).unwrap();
        assert_eq!(p.per_plane, 1, "{p:?}");
        assert_eq!(p.count as usize, BLS_G1.windows(p.c));
        // The windows measured fastest on the H200.
        assert_eq!(p.c, 20, "{p:?}");
        assert_eq!(
            choose((1 << 21) - 1, BLS_G1, H200, None, None).unwrap().c,
            20
        );
        assert_eq!(choose(1 << 24, BLS_G1, H200, None, None).unwrap().c, 20);
        assert_eq!(choose(1 << 20, BLS_G2, H200, None, None).unwrap().c, 19);
    }

    /// BN254's planes cover its own windows (255-bit digits) and its points' bytes
    /// (64 bytes a G1 point): 2^24 points take 1 GiB a plane, so more planes fit.
    #[test]
    fn bn254_planes_cover_its_windows_in_its_points_bytes() {
        for group in [BN_G1, BN_G2] {
            let p = choose(1 << 20, group, H200, None, None).unwrap();
            assert!(p.count * p.per_plane >= group.windows(p.c) as u32, "{p:?}");
            assert!(
                (p.count - 1) * p.per_plane < group.windows(p.c) as u32,
                "{p:?}"
            );
        }
        let (bls, bn) = (
            choose(1 << 24, BLS_G1, H200, None, None).unwrap(),
            choose(1 << 24, BN_G1, H200, None, None).unwrap(),
        );
        assert!(bn.count > bls.count, "{bls:?} {bn:?}");
        assert!(
            u64::from(bn.count) * (64 << 24) <= H200 / BUDGET_SHARE,
            "{bn:?}"
        );
    }

    #[test]
    fn memory_caps_the_planes() {
        // 2^24 G1 points are 1.5 GiB a plane: at most 5 planes in 1/16 of 140 GiB.
        let p = choose(1 << 24, BLS_G1, H200, None, None).unwrap();
        assert!(p.count <= 5 && p.count >= 2, "{p:?}");
        assert!(p.count * p.per_plane >= BLS_G1.windows(p.c) as u32);
        assert!((p.count - 1) * p.per_plane < BLS_G1.windows(p.c) as u32);
        // Too little memory, or the override set to 1: plain bases.
        assert_eq!(choose(1 << 20, BLS_G1, 1 << 30, None, None), None);
        assert_eq!(choose(1 << 20, BLS_G1, H200, Some(1), None), None);
        assert_eq!(choose(0, BLS_G1, H200, None, None), None);
    }

    #[test]
    fn the_ledger_builds_once_the_savings_reach_the_build_cost() {
        let mut ledger = Ledger::default();
        assert!(!ledger.built());
        // Savings of 3 against a cost of 10: the fourth MSM builds, before it runs.
        assert!(!ledger.pays(3.0, 10.0));
        assert!(!ledger.pays(3.0, 10.0));
        // A losing MSM takes nothing back.
        assert!(!ledger.pays(-5.0, 10.0));
        assert!(!ledger.pays(3.0, 10.0));
        assert!(ledger.pays(3.0, 10.0));
        assert!(ledger.built());
        // Built: every MSM runs over the planes, whatever it would save.
        assert!(ledger.pays(0.0, 10.0));
        // New points void the planes and what was saved towards them.
        ledger.staged();
        assert_eq!(ledger, Ledger::default());
        assert!(!ledger.pays(9.0, 10.0));
        ledger.set_built();
        assert!(ledger.built());
    }

    #[test]
    fn paid_planes_cost_at_most_twice_the_best_choice_made_in_hindsight() {
        // G1 2^20 over 13 planes on the H200: the MSM's saving and the build cost of
        // the cost model.
        let p = choose(1 << 20, BLS_G1, H200, None, None).unwrap();
        let c0 = cost::window_bits(BLS_G1, 1 << 20);
        let saving = cost::saving_ns(
            BLS_G1,
            1 << 20,
            (c0, BLS_G1.windows(c0)),
            (p.c, p.per_plane as usize),
        );
        let build = cost::planes_build_ns(BLS_G1, 1 << 20, p.count, p.shift());
        assert!(saving > 0.0 && build > 0.0);
        let mut built_at = None;
        for msms in 1..=1000usize {
            // What the ledger does over `msms` MSMs of one staging, against the best of
            // never building and building at staging.
            let mut ledger = Ledger::default();
            let mut paid = 0.0;
            for i in 0..msms {
                if ledger.built() {
                    continue;
                }
                if ledger.pays(saving, build) {
                    paid += build;
                    built_at.get_or_insert(i + 1);
                } else {
                    paid += saving;
                }
            }
            let best = build.min(msms as f64 * saving);
            assert!(
                paid <= 2.0 * best + 1e-6,
                "{msms} MSMs: {paid} against {best}"
            );
        }
        // One MSM (bench's "+transfers") never builds; a prover builds after about
        // 124 MSMs (164 ms / 1.32 ms).
        let built_at = built_at.unwrap();
        assert!((100..=150).contains(&built_at), "{built_at}");
    }

    #[test]
    fn never_leaves_no_room_and_eager_is_the_default() {
        assert_eq!(CudaTuning::default().planes_build(), PlanesBuild::Eager);
        let never = CudaTuning {
            msm_planes_build: Some(PlanesBuild::Never),
            ..CudaTuning::default()
        };
        assert_eq!(choose_tuned(1 << 20, BLS_G1, H200, &never), None);
        for build in [None, Some(PlanesBuild::Eager), Some(PlanesBuild::Paid)] {
            let tuning = CudaTuning {
                msm_planes_build: build,
                ..CudaTuning::default()
            };
            assert_eq!(
                choose_tuned(1 << 20, BLS_G1, H200, &tuning),
                choose(1 << 20, BLS_G1, H200, None, None),
                "{build:?}"
            );
        }
    }

    #[test]
    fn the_launch_batch_is_the_kernels() {
        let source = include_str!("../../kernels/planes.cu");
        assert!(
            source.contains(&format!("#define PLANES_BATCH {BATCH}\n")),
            "planes.cu's PLANES_BATCH differs from planes.rs's BATCH"
        );
    }

    #[test]
    fn overrides_fix_the_window_and_cap_the_count() {
        let p = choose(1 << 20, BLS_G1, H200, Some(4), Some(16)).unwrap();
        assert_eq!(p.c, 16);
        assert_eq!(p.count, 4);
        assert_eq!(p.per_plane, 4);
        assert_eq!(p.shift(), 64);
    }

    #[test]
    fn every_window_has_a_plane_and_entries_fit() {
        for len in [
            1usize,
            2,
            7,
            100,
            4096,
            65_535,
            1 << 18,
            (1 << 21) - 1,
            1 << 26,
        ] {
            for group in [BLS_G1, BLS_G2, BN_G1, BN_G2] {
                let bytes = (group.affine_words() * 4) as u64;
                if let Some(p) = choose(len, group, H200, None, None) {
                    let w = group.windows(p.c) as u32;
                    assert!(p.count * p.per_plane >= w, "len={len} {p:?}");
                    assert!((p.count - 1) * p.per_plane < w, "len={len} {p:?}");
                    assert!((p.count as u64) * (len as u64) < 1 << 31, "len={len} {p:?}");
                    assert!(
                        u64::from(p.count) * len as u64 * bytes <= H200 / BUDGET_SHARE,
                        "len={len} {p:?}"
                    );
                }
            }
        }
    }
}
