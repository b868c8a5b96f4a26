//! Window planes of staged MSM bases. A G1 or G2 bases buffer of `len` points can be
//! allocated with `count` planes: plane j holds 2^(c·per_plane·j)·P_i for every point
//! (plane 0 the points themselves), built on the device when the bases are staged
//! (kernels/planes.cu). An MSM over such a buffer puts the digits of all W windows into
//! the buckets of `per_plane` windows (msm.cu's header): the bucket reduction runs
//! over per_plane windows instead of W, and larger windows (fewer bucket additions)
//! pay off, since they no longer multiply the reduction by W.
//!
//! The planes cost memory: `count` times the bases. One buffer's planes take at most
//! 1/[`BUDGET_SHARE`] of the device budget, and `CRUCIBLE_CUDA_MSM_PLANES` caps their
//! number (1 turns them off), so a prover under a small memory limit keeps plain bases.

use std::sync::Arc;

use crucible_core::{BufferId, Lease, Result};
use cudarc::driver::{CudaStream, PushKernelArg};

use crate::driver::launch;
use crate::kernels::Kernels;
use crate::memory::CudaBuffer;
use crate::msm::{self, Group};
use crate::ntt::grid_with_block;
use crate::tuning;

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

/// The modelled cost of an MSM of `n` terms over `group` with window bits `c` and `wp`
/// bucket windows, in quarter additions: 4 per bucket addition, plus a weight per
/// bucket for the reduction. Over planes the reduction is bound by its chain of
/// dependent additions more than by its bucket count, so the weights are fitted to the
/// H200 rather than counted (BENCHMARKS.md, fourth session): G1 2^20 ran fastest with
/// c = 20 (10.72 ms; c = 19: 11.32), G1 2^21 with 20 (17.6; c = 22: 21.1), G1 2^24
/// with 20 (120.2; c = 22: 125.8), which bounds G1's weight to (3.55, 4) additions a
/// bucket; G2 2^20 ran fastest with c = 19 (32.3; c = 20: 33.9), a weight above 4.
pub fn cost(group: Group, n: usize, c: u32, wp: usize) -> u128 {
    let quarter_weight = match group {
        Group::G1 => 15,
        Group::G2 => 24,
    };
    msm::model_cost(n, c, wp, quarter_weight)
}

/// The planes for a buffer of `len` points of `group` under a budget of `capacity`
/// bytes, or None when plain bases are as good (no memory for a second plane, or the
/// model prefers one plane). `max_planes` caps the count (the tuning override),
/// `window_bits` fixes c (the window tuning override).
pub fn choose(
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
        None => 1..=msm::MAX_WINDOW_BITS,
    };
    let mut best: Option<(u128, Planes)> = None;
    for c in candidates {
        let w = msm::windows(c);
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
        let cost = cost(group, len, c, wp);
        if best.is_none_or(|(b, _)| cost < b) {
            best = Some((cost, planes));
        }
    }
    let (cost_planes, planes) = best?;
    // Plain bases when they model as cheap (tiny buffers, or a window override that
    // leaves one bucket window per digit window anyway).
    let c0 = msm::window_bits(len);
    let plain = cost(group, len, c0, msm::windows(c0));
    (cost_planes < plain).then_some(planes)
}

/// [`choose`] with the tuning overrides from the environment (checked at open).
pub fn choose_from_env(len: usize, group: Group, capacity: u64) -> Option<Planes> {
    let max = tuning::read(&tuning::MSM_PLANES).ok().flatten();
    let c = tuning::read(&tuning::WINDOW_BITS).ok().flatten();
    choose(len, group, capacity, max, c)
}

/// Fills planes 1.. of the staged bases buffer `id` (`len` points, plane 0 staged),
/// one launch per plane, on the compute stream (ordered after the staging copy by the
/// buffer's events). A buffer without planes needs nothing.
pub fn build(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    group: Group,
    lease: &Lease,
    id: BufferId,
    len: usize,
) -> Result<()> {
    let buf = lease.get::<CudaBuffer>(id)?;
    let Some(planes) = buf.planes else {
        return Ok(());
    };
    let name = match group {
        Group::G1 => "planes_g1",
        Group::G2 => "planes_g2",
    };
    let f = k.get(name)?;
    let (n, shift) = (len as u32, planes.shift());
    for plane in 1..planes.count {
        launch(
            stream
                .launch_builder(f)
                .arg(&buf.words)
                .arg(&n)
                .arg(&n)
                .arg(&plane)
                .arg(&shift),
            grid_with_block(len.div_ceil(BATCH), BLOCK),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const H200: u64 = 140 << 30;

    #[test]
    fn full_planes_when_memory_allows() {
        let p = choose(1 << 20, Group::G1, H200, None, None).unwrap();
        assert_eq!(p.per_plane, 1, "{p:?}");
        assert_eq!(p.count as usize, msm::windows(p.c));
        // The windows measured fastest on the H200.
        assert_eq!(p.c, 20, "{p:?}");
        assert_eq!(
            choose((1 << 21) - 1, Group::G1, H200, None, None)
                .unwrap()
                .c,
            20
        );
        assert_eq!(choose(1 << 24, Group::G1, H200, None, None).unwrap().c, 20);
        assert_eq!(choose(1 << 20, Group::G2, H200, None, None).unwrap().c, 19);
    }

    #[test]
    fn memory_caps_the_planes() {
        // 2^24 G1 points are 1.5 GiB a plane: at most 5 planes in 1/16 of 140 GiB.
        let p = choose(1 << 24, Group::G1, H200, None, None).unwrap();
        assert!(p.count <= 5 && p.count >= 2, "{p:?}");
        assert!(p.count * p.per_plane >= msm::windows(p.c) as u32);
        assert!((p.count - 1) * p.per_plane < msm::windows(p.c) as u32);
        // Too little memory, or the override set to 1: plain bases.
        assert_eq!(choose(1 << 20, Group::G1, 1 << 30, None, None), None);
        assert_eq!(choose(1 << 20, Group::G1, H200, Some(1), None), None);
        assert_eq!(choose(0, Group::G1, H200, None, None), None);
    }

    #[test]
    fn the_launch_batch_is_the_kernels() {
        let source = include_str!("../kernels/planes.cu");
        assert!(
            source.contains(&format!("#define PLANES_BATCH {BATCH}\n")),
            "planes.cu's PLANES_BATCH differs from planes.rs's BATCH"
        );
    }

    #[test]
    fn overrides_fix_the_window_and_cap_the_count() {
        let p = choose(1 << 20, Group::G1, H200, Some(4), Some(16)).unwrap();
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
            for group in [Group::G1, Group::G2] {
                let bytes = (group.affine_words() * 4) as u64;
                if let Some(p) = choose(len, group, H200, None, None) {
                    let w = msm::windows(p.c) as u32;
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
