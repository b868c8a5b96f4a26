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

use crucible_core::{BufferId, Lease, Result};

/// The plan items of the kept buffers: bucket starts and sorted entries.
pub const KEPT: [&str; 2] = ["msm-bucket-start", "msm-sorted"];

/// What a sort was computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortKey {
    /// The scalar buffer, the first scalar and how many.
    pub scalars: BufferId,
    /// Offset of the first scalar.
    pub offset: usize,
    /// Terms.
    pub len: usize,
    /// Window bits.
    pub c: u32,
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
    pub fn key(&self, scalars: BufferId, offset: usize, len: usize, c: u32) -> SortKey {
        SortKey {
            scalars,
            offset,
            len,
            c,
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
                .all(|(item, id)| work.buffer_of(item) == Some(id));
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
