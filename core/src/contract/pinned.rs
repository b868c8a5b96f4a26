//! Scalars in the caller's own host memory, page-locked (pinned) for one backend's
//! copies while a [`PinnedScalars`] lives ([`ProverBackend::pin_scalars`]).
//!
//! A GPU copies pinned host memory at the link's full speed, straight from or into
//! the caller's vector; pageable memory goes through staging buffers and a host
//! copy on the way (on the H200, an NTT of 2^20 points from the host and back took
//! 3.6 ms through staging against 1.7 ms for sppark with pinned vectors). Pinning
//! costs time of its own, about what the copy costs, so it pays for memory that is
//! copied many times: a prover's reused input and output vectors, not one transfer.
//!
//! [`ProverBackend::pin_scalars`]: crate::ProverBackend::pin_scalars

use std::ops::{Deref, DerefMut};

use crate::Fr;

/// What undoes a backend's pin when dropped (CUDA: unregisters the memory). Dropped
/// only when no copy of the backend's uses the memory any more: every copy to or
/// from pinned memory has finished when the call that made it returns.
pub trait HostPin: Send + Sync {}

/// The caller's scalars, pinned for one backend (or not, where the backend has no
/// faster copy for pinned memory: [`PinnedScalars::is_pinned`]), used as a `[F]`
/// (BLS12-381's scalars unless named).
/// The memory is unpinned when this drops; the scalars stay where they were.
pub struct PinnedScalars<'a, F = Fr> {
    scalars: &'a mut [F],
    pin: Option<Box<dyn HostPin + 'a>>,
}

impl<'a, F> PinnedScalars<'a, F> {
    /// `scalars`, pinned by `pin` until this drops.
    pub fn pinned(scalars: &'a mut [F], pin: Box<dyn HostPin + 'a>) -> PinnedScalars<'a, F> {
        PinnedScalars {
            scalars,
            pin: Some(pin),
        }
    }

    /// `scalars` as they are: what a backend without pinned copies returns.
    pub fn unpinned(scalars: &'a mut [F]) -> PinnedScalars<'a, F> {
        PinnedScalars { scalars, pin: None }
    }

    /// Whether a backend pinned the memory (copies of it skip the staging buffers).
    pub fn is_pinned(&self) -> bool {
        self.pin.is_some()
    }
}

impl<F> Deref for PinnedScalars<'_, F> {
    type Target = [F];
    fn deref(&self) -> &[F] {
        self.scalars
    }
}

impl<F> DerefMut for PinnedScalars<'_, F> {
    fn deref_mut(&mut self) -> &mut [F] {
        self.scalars
    }
}

impl<F> std::fmt::Debug for PinnedScalars<'_, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedScalars")
            .field("len", &self.scalars.len())
            .field("pinned", &self.is_pinned())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::*;

    struct CountDrops(Arc<AtomicUsize>);
    impl HostPin for CountDrops {}
    impl Drop for CountDrops {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn pinned_scalars_are_the_callers_and_unpin_once_when_dropped() {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut v = vec![Fr::from(3u64); 5];
        {
            let mut p = PinnedScalars::pinned(&mut v, Box::new(CountDrops(drops.clone())));
            assert!(p.is_pinned());
            p[2] = Fr::from(7u64);
            assert_eq!(p.len(), 5);
            assert_eq!(drops.load(Ordering::SeqCst), 0);
        }
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        assert_eq!(v[2], Fr::from(7u64));
        let p = PinnedScalars::unpinned(&mut v);
        assert!(!p.is_pinned());
        assert_eq!(format!("{p:?}"), "PinnedScalars { len: 5, pinned: false }");
    }
}
