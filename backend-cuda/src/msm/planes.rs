//! MSM bases buffers and their window planes. A G1 or G2 bases buffer of `len` points can be
//! allocated with `count` planes: plane j holds 2^(c·per_plane·j)·P_i for every point
//! (plane 0 the points themselves), built on the device when the bases are staged
//! (kernels/planes.cu). An MSM over such a buffer puts the digits of all W windows into
//! the buckets of `per_plane` windows (msm.cu's header): the bucket reduction runs
//! over per_plane windows instead of W, and larger windows (fewer bucket additions)
//! pay off, since they no longer multiply the reduction by W. The planes are the
//! bases buffer's own layout ([`BasesBuffer`]); the generic buffer knows none.
//!
//! The planes cost memory: `count` times the bases. One buffer's planes take at most
//! 1/[`BUDGET_SHARE`] of the device budget, and `CRUCIBLE_CUDA_MSM_PLANES` caps their
//! number (1 turns them off), so a prover under a small memory limit keeps plain bases.

use std::sync::Arc;

use crucible_core::{BufferId, Lease, PlanKey, Result};
use cudarc::driver::{CudaSlice, CudaStream};

use crate::field::Group;
use crate::launch::{self, grid_with_block, Dev, Kernels};
use crate::memory::{self, DeviceWords};
use crate::msm::cost;
use crate::tuning::CudaTuning;

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

/// A bases buffer: the points (plane 0) and, when it has them, its window planes.
pub struct BasesBuffer {
    /// The device words, plane after plane (freed, stream-ordered, when dropped).
    pub words: CudaSlice<u32>,
    /// The window planes that follow the points, if any.
    pub planes: Option<Planes>,
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
    let bytes = memory::buffer_bytes(group.kind(), len, copies(planes))?.max(4);
    let count = (bytes as usize / 4).max(1);
    lease.allocate(item, bytes, || {
        Ok(BasesBuffer {
            words: memory::zeroed(stream, count)?,
            planes,
        })
    })
}

/// The planes for a buffer of `len` points of `group` under a budget of `capacity`
/// bytes, or None when plain bases are as good (no memory for a second plane, or the
/// model prefers one plane). `max_planes` caps the count (the tuning override),
/// `window_bits` fixes c (the window tuning override).
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
        let w = cost::windows(c);
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
    let c0 = cost::window_bits(len);
    let plain = cost::cost(group, len, c0, cost::windows(c0));
    (cost_planes < plain).then_some(planes)
}

/// [`choose`] with the tuning overrides of `tuning` (`CRUCIBLE_CUDA_MSM_PLANES` and
/// `CRUCIBLE_CUDA_WINDOW_BITS`).
pub fn choose_tuned(
    len: usize,
    group: Group,
    capacity: u64,
    tuning: &CudaTuning,
) -> Option<Planes> {
    choose(len, group, capacity, tuning.msm_planes, tuning.window_bits)
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
    let buf = lease.get::<BasesBuffer>(id)?;
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

    const H200: u64 = 140 << 30;

    #[test]
    fn full_planes_when_memory_allows() {
        let p = choose(1 << 20, Group::G1, H200, None, None).unwrap();
        assert_eq!(p.per_plane, 1, "{p:?}");
        assert_eq!(p.count as usize, cost::windows(p.c));
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
        assert!(p.count * p.per_plane >= cost::windows(p.c) as u32);
        assert!((p.count - 1) * p.per_plane < cost::windows(p.c) as u32);
        // Too little memory, or the override set to 1: plain bases.
        assert_eq!(choose(1 << 20, Group::G1, 1 << 30, None, None), None);
        assert_eq!(choose(1 << 20, Group::G1, H200, Some(1), None), None);
        assert_eq!(choose(0, Group::G1, H200, None, None), None);
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
                    let w = cost::windows(p.c) as u32;
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
