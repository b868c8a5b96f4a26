//! The MSM's sorted entries (msm.cu steps 1-4: digits, bucket counts, prefix sum,
//! scatter) depend only on the scalars and the window size, not on the bases or the
//! group. A Groth16 proof runs three MSMs over the same scalars (A and B in G1, B in
//! G2), so the last MSM's bucket starts and sorted entries stay in its work lease and
//! the next MSM over the same scalars skips the sort (0.76 ms at 2^20 on the H200).
//!
//! Reuse is safe only while the scalars are unchanged: the backend counts every call
//! that may write a scalar buffer (staging, NTTs, pointwise ops, allocations, whose
//! slots a freed buffer's id may name again) and a kept sort is reused only if the
//! count has not moved since it was made.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crucible_core::{BufferId, Lease, PlanKey, Result};

/// The plan items of the kept buffers: bucket starts and sorted entries.
pub const KEPT: [PlanKey; 2] = [MSM_BUCKET_START, MSM_SORTED];

/// The MSM's bucket offsets (one more than its buckets), kept for reuse.
pub const MSM_BUCKET_START: PlanKey = PlanKey::new("cuda", "msm_bucket_start");
/// The MSM's sorted entries, kept for reuse.
pub const MSM_SORTED: PlanKey = PlanKey::new("cuda", "msm_sorted");

/// What a sort was computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortKey {
    /// The scalar buffer, the first scalar and how many.
    pub scalars: BufferId,
    /// Offset of the first scalar.
    pub offset: usize,
    /// Terms.
    pub len: usize,
    /// The sort's shape: window bits, bucket windows and plane stride (msm.rs's
    /// layout; the entries name points by plane).
    pub shape: [u32; 3],
    /// The backend's scalar-write count when the sort was made.
    pub writes: u64,
}

/// The last sort kept, and the count of scalar writes.
#[derive(Default)]
pub struct SortReuse {
    writes: AtomicU64,
    kept: Mutex<Option<(SortKey, [BufferId; 2])>>,
}

impl SortReuse {
    /// Called before any operation that may write a scalar buffer.
    pub fn scalars_written(&self) {
        self.writes.fetch_add(1, Ordering::SeqCst);
    }

    /// The key of a sort of `len` scalars from `scalars[offset..]` with window `c`, now.
    pub fn key(&self, scalars: BufferId, offset: usize, len: usize, shape: [u32; 3]) -> SortKey {
        SortKey {
            scalars,
            offset,
            len,
            shape,
            writes: self.writes.load(Ordering::SeqCst),
        }
    }

    /// The kept buffers (in [`KEPT`] order) if they hold the sort `key` names and
    /// belong to `work`. Otherwise frees whatever `work` still holds of an older sort
    /// (its plan items must be free for this MSM's own) and returns None.
    pub fn take(&self, key: &SortKey, work: &mut Lease) -> Result<Option<[BufferId; 2]>> {
        let kept = self.lock().take();
        if let Some((k, ids)) = kept {
            // Still allocated, from its own item, in this lease (ids of other leases
            // never match; a freed id's slot may hold another item's buffer).
            let live = KEPT
                .iter()
                .zip(ids)
                .all(|(item, id)| work.buffer_of(*item) == Some(id));
            if k == *key && live {
                return Ok(Some(ids));
            }
        }
        for item in KEPT {
            if let Some(id) = work.buffer_of(item) {
                work.free(id)?;
            }
        }
        Ok(None)
    }

    /// Keeps `ids` (in [`KEPT`] order), the sort `key` names, for the next MSM.
    pub fn keep(&self, key: SortKey, ids: [BufferId; 2]) {
        *self.lock() = Some((key, ids));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(SortKey, [BufferId; 2])>> {
        // A panic while holding the lock leaves at worst a stale entry, which `take`
        // checks before use.
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crucible_core::{DeviceBudget, HostSync, MemoryPlan};
    use std::sync::Arc;

    const SCALARS: PlanKey = PlanKey::new("test", "scalars");
    const OTHER: PlanKey = PlanKey::new("test", "other");

    fn lease(budget: &Arc<DeviceBudget>) -> Lease {
        let mut plan = MemoryPlan::new("work");
        plan.item(SCALARS, 8)
            .item(KEPT[0], 8)
            .item(KEPT[1], 8)
            .item(OTHER, 8);
        let permit = budget.acquire(plan.total_bytes()).unwrap();
        Lease::new(plan, permit, Arc::new(HostSync)).unwrap()
    }

    /// Allocates the two kept items, as an MSM leaves them.
    fn sorted(work: &mut Lease) -> [BufferId; 2] {
        KEPT.map(|item| work.allocate(item, 8, || Ok(0u8)).unwrap())
    }

    #[test]
    fn a_kept_sort_is_reused_only_for_the_same_unchanged_scalars_in_its_lease() {
        let budget = DeviceBudget::new("sort", 1000);
        let reuse = SortReuse::default();
        let mut work = lease(&budget);
        let s = work.allocate(SCALARS, 8, || Ok(0u8)).unwrap();

        // Same scalars, same span and window, nothing written since: reused.
        let ids = sorted(&mut work);
        reuse.keep(reuse.key(s, 0, 100, [16, 16, 0]), ids);
        assert_eq!(
            reuse
                .take(&reuse.key(s, 0, 100, [16, 16, 0]), &mut work)
                .unwrap(),
            Some(ids)
        );

        // Any other span or window: not reused, and the old sort is freed so that the
        // MSM can allocate its own from the same plan items.
        for other in [
            reuse.key(s, 1, 100, [16, 16, 0]),
            reuse.key(s, 0, 99, [16, 16, 0]),
            reuse.key(s, 0, 100, [15, 16, 0]),
            reuse.key(s, 0, 100, [16, 1, 100]),
        ] {
            reuse.keep(reuse.key(s, 0, 100, [16, 16, 0]), ids);
            assert_eq!(reuse.take(&other, &mut work).unwrap(), None);
            assert!(KEPT.iter().all(|item| work.buffer_of(*item).is_none()));
            let again = sorted(&mut work);
            assert_ne!(again, ids, "a lease never reuses a freed buffer's id");
        }

        // A write to any scalars since the sort: not reused.
        reuse.keep(reuse.key(s, 0, 100, [16, 16, 0]), ids);
        let before = reuse.key(s, 0, 100, [16, 16, 0]);
        reuse.scalars_written();
        assert_eq!(
            reuse
                .take(&reuse.key(s, 0, 100, [16, 16, 0]), &mut work)
                .unwrap(),
            None
        );
        assert_ne!(before, reuse.key(s, 0, 100, [16, 16, 0]));
        work.release().unwrap();
    }

    #[test]
    fn another_lease_never_sees_a_sort_and_a_reused_slot_is_not_mistaken_for_one() {
        let budget = DeviceBudget::new("sort", 1000);
        let reuse = SortReuse::default();
        let (mut x, mut y) = (lease(&budget), lease(&budget));
        let sx = x.allocate(SCALARS, 8, || Ok(0u8)).unwrap();
        let sy = y.allocate(SCALARS, 8, || Ok(0u8)).unwrap();
        let ids = sorted(&mut x);
        reuse.keep(reuse.key(sx, 0, 10, [16, 16, 0]), ids);
        // Lease y's MSM: no reuse, and x's buffers stay x's.
        assert_eq!(
            reuse
                .take(&reuse.key(sy, 0, 10, [16, 16, 0]), &mut y)
                .unwrap(),
            None
        );
        assert_eq!(x.buffer_of(KEPT[1]), Some(ids[1]));
        // x's kept buffers freed behind the cache's back, a slot taken by another
        // item: the same key must not reuse it.
        reuse.keep(reuse.key(sx, 0, 10, [16, 16, 0]), ids);
        x.free(ids[0]).unwrap();
        x.free(ids[1]).unwrap();
        let other = x.allocate(OTHER, 8, || Ok(1u8)).unwrap();
        assert!(other != ids[0] && other != ids[1]);
        assert_eq!(
            reuse
                .take(&reuse.key(sx, 0, 10, [16, 16, 0]), &mut x)
                .unwrap(),
            None
        );
        x.release().unwrap();
        y.release().unwrap();
    }
}
