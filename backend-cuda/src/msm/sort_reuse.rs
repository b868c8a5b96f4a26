//! The MSM's sorted entries (msm.cu steps 1-4: digits, bucket counts, prefix sum,
//! scatter) depend only on the scalars and the window size, not on the bases or the
//! group. A Groth16 proof runs three MSMs over the same scalars (A and B in G1, B in
//! G2), so the last MSM's bucket starts and sorted entries stay in its work lease and
//! the next MSM over the same scalars skips the sort (0.76 ms at 2^20 on the H200).
//!
//! The witness-aware MSM's classification of the scalars (ones.rs: the list of the
//! ones' and the rest's indices, and how many of each) depends on the scalars alone: it
//! is kept the same way, apart from the sort, since a G1 and a G2 MSM over the same
//! scalars share the classification but not the sort (their window planes differ).
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
/// The witness-aware MSM's list of term indices, [ones | rest], kept for reuse.
pub const MSM_ONES_LIST: PlanKey = PlanKey::new("cuda", "msm_ones_list");

/// The classification of an MSM's scalars (kernels/ones.cu): the buffer `list` holds
/// the indices of the `ones` scalars equal to 1, then those of the `rest` (nonzero,
/// not 1), each part in increasing order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Classes {
    /// The list buffer (plan item [`MSM_ONES_LIST`]); none when every scalar is in the
    /// rest (full-width scalars: Pippenger runs over every term, as without the
    /// classification).
    pub list: Option<BufferId>,
    /// Scalars equal to 1.
    pub ones: usize,
    /// Other nonzero scalars.
    pub rest: usize,
}

/// What a classification was computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassKey {
    /// The scalar buffer.
    pub scalars: BufferId,
    /// Offset of the first scalar.
    pub offset: usize,
    /// Terms.
    pub len: usize,
    /// The backend's scalar-write count when the classification was made.
    pub writes: u64,
}

/// What a sort was computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortKey {
    /// The scalar buffer, the first scalar and how many.
    pub scalars: BufferId,
    /// Offset of the first scalar.
    pub offset: usize,
    /// Terms.
    pub len: usize,
    /// The sort's shape: window bits, bucket windows, plane stride (msm.rs's layout;
    /// the entries name points by plane), and 1 for a sort of the rest of a
    /// witness-aware MSM (ones.rs), 0 for one of every term.
    pub shape: [u32; 4],
    /// The backend's scalar-write count when the sort was made.
    pub writes: u64,
}

/// The last sort and the last classification kept, and the count of scalar writes.
#[derive(Default)]
pub struct SortReuse {
    writes: AtomicU64,
    kept: Mutex<Option<(SortKey, [BufferId; 2])>>,
    classes: Mutex<Option<(ClassKey, Classes)>>,
}

impl SortReuse {
    /// Called before any operation that may write a scalar buffer.
    pub fn scalars_written(&self) {
        self.writes.fetch_add(1, Ordering::SeqCst);
    }

    /// The key of a sort of `len` scalars from `scalars[offset..]` with window `c`, now.
    pub fn key(&self, scalars: BufferId, offset: usize, len: usize, shape: [u32; 4]) -> SortKey {
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

    /// The key of a classification of `len` scalars from `scalars[offset..]`, now.
    pub fn class_key(&self, scalars: BufferId, offset: usize, len: usize) -> ClassKey {
        ClassKey {
            scalars,
            offset,
            len,
            writes: self.writes.load(Ordering::SeqCst),
        }
    }

    /// The kept classification if it is the one `key` names and its list belongs to
    /// `work`. Otherwise frees whatever list `work` still holds (its plan item must be
    /// free for this MSM's own) and returns None.
    pub fn take_classes(&self, key: &ClassKey, work: &mut Lease) -> Result<Option<Classes>> {
        // As `lock`: a stale entry is checked before use.
        let kept = self
            .classes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some((k, classes)) = kept {
            let live = classes
                .list
                .is_none_or(|list| work.buffer_of(MSM_ONES_LIST) == Some(list));
            if k == *key && live {
                return Ok(Some(classes));
            }
        }
        if let Some(id) = work.buffer_of(MSM_ONES_LIST) {
            work.free(id)?;
        }
        Ok(None)
    }

    /// Keeps `classes`, the classification `key` names, for the next MSM.
    pub fn keep_classes(&self, key: ClassKey, classes: Classes) {
        *self.classes.lock().unwrap_or_else(|e| e.into_inner()) = Some((key, classes));
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
            .item(MSM_ONES_LIST, 8)
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
        reuse.keep(reuse.key(s, 0, 100, [16, 16, 0, 0]), ids);
        assert_eq!(
            reuse
                .take(&reuse.key(s, 0, 100, [16, 16, 0, 0]), &mut work)
                .unwrap(),
            Some(ids)
        );

        // Any other span or window: not reused, and the old sort is freed so that the
        // MSM can allocate its own from the same plan items.
        for other in [
            reuse.key(s, 1, 100, [16, 16, 0, 0]),
            reuse.key(s, 0, 99, [16, 16, 0, 0]),
            reuse.key(s, 0, 100, [15, 16, 0, 0]),
            reuse.key(s, 0, 100, [16, 1, 100, 0]),
            // A sort of the rest of a witness-aware MSM is not one of every term.
            reuse.key(s, 0, 100, [16, 16, 0, 1]),
        ] {
            reuse.keep(reuse.key(s, 0, 100, [16, 16, 0, 0]), ids);
            assert_eq!(reuse.take(&other, &mut work).unwrap(), None);
            assert!(KEPT.iter().all(|item| work.buffer_of(*item).is_none()));
            let again = sorted(&mut work);
            assert_ne!(again, ids, "a lease never reuses a freed buffer's id");
        }

        // A write to any scalars since the sort: not reused.
        reuse.keep(reuse.key(s, 0, 100, [16, 16, 0, 0]), ids);
        let before = reuse.key(s, 0, 100, [16, 16, 0, 0]);
        reuse.scalars_written();
        assert_eq!(
            reuse
                .take(&reuse.key(s, 0, 100, [16, 16, 0, 0]), &mut work)
                .unwrap(),
            None
        );
        assert_ne!(before, reuse.key(s, 0, 100, [16, 16, 0, 0]));
        work.release().unwrap();
    }

    #[test]
    fn a_kept_classification_is_reused_only_for_the_same_unchanged_scalars_in_its_lease() {
        let budget = DeviceBudget::new("classes", 1000);
        let reuse = SortReuse::default();
        let (mut work, mut other) = (lease(&budget), lease(&budget));
        let s = work.allocate(SCALARS, 8, || Ok(0u8)).unwrap();
        let key = reuse.class_key(s, 0, 10);
        let classify = |work: &mut Lease| Classes {
            list: Some(work.allocate(MSM_ONES_LIST, 8, || Ok(0u8)).unwrap()),
            ones: 3,
            rest: 4,
        };
        // Same scalars, nothing written since: reused.
        let mut classes = classify(&mut work);
        reuse.keep_classes(key, classes);
        assert_eq!(reuse.take_classes(&key, &mut work).unwrap(), Some(classes));
        // Another span: not reused, and the old list freed for the MSM's own.
        for other_span in [reuse.class_key(s, 1, 10), reuse.class_key(s, 0, 9)] {
            reuse.keep_classes(key, classes);
            assert_eq!(reuse.take_classes(&other_span, &mut work).unwrap(), None);
            assert_eq!(work.buffer_of(MSM_ONES_LIST), None);
            classes = classify(&mut work);
        }
        // Another lease: not reused there, and the list stays its own lease's.
        reuse.keep_classes(key, classes);
        assert_eq!(reuse.take_classes(&key, &mut other).unwrap(), None);
        assert_eq!(work.buffer_of(MSM_ONES_LIST), classes.list);
        // A write to any scalars since: not reused.
        reuse.keep_classes(key, classes);
        reuse.scalars_written();
        let now = reuse.class_key(s, 0, 10);
        assert_eq!(reuse.take_classes(&now, &mut work).unwrap(), None);
        assert_eq!(work.buffer_of(MSM_ONES_LIST), None);
        // Full-width scalars need no list: the record alone is reused.
        let full = Classes {
            list: None,
            ones: 0,
            rest: 10,
        };
        let now = reuse.class_key(s, 0, 10);
        reuse.keep_classes(now, full);
        assert_eq!(reuse.take_classes(&now, &mut work).unwrap(), Some(full));
        work.release().unwrap();
        other.release().unwrap();
    }

    #[test]
    fn another_lease_never_sees_a_sort_and_a_reused_slot_is_not_mistaken_for_one() {
        let budget = DeviceBudget::new("sort", 1000);
        let reuse = SortReuse::default();
        let (mut x, mut y) = (lease(&budget), lease(&budget));
        let sx = x.allocate(SCALARS, 8, || Ok(0u8)).unwrap();
        let sy = y.allocate(SCALARS, 8, || Ok(0u8)).unwrap();
        let ids = sorted(&mut x);
        reuse.keep(reuse.key(sx, 0, 10, [16, 16, 0, 0]), ids);
        // Lease y's MSM: no reuse, and x's buffers stay x's.
        assert_eq!(
            reuse
                .take(&reuse.key(sy, 0, 10, [16, 16, 0, 0]), &mut y)
                .unwrap(),
            None
        );
        assert_eq!(x.buffer_of(KEPT[1]), Some(ids[1]));
        // x's kept buffers freed behind the cache's back, a slot taken by another
        // item: the same key must not reuse it.
        reuse.keep(reuse.key(sx, 0, 10, [16, 16, 0, 0]), ids);
        x.free(ids[0]).unwrap();
        x.free(ids[1]).unwrap();
        let other = x.allocate(OTHER, 8, || Ok(1u8)).unwrap();
        assert!(other != ids[0] && other != ids[1]);
        assert_eq!(
            reuse
                .take(&reuse.key(sx, 0, 10, [16, 16, 0, 0]), &mut x)
                .unwrap(),
            None
        );
        x.release().unwrap();
        y.release().unwrap();
    }
}
