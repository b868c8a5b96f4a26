//! The caller's scalars page-locked for the backend's copies
//! ([`ProverBackend::pin_scalars`](crucible_core::ProverBackend::pin_scalars)): staged
//! and read back straight between the caller's memory and the device, one copy each
//! way at the link's speed, instead of through the staging buffers and a host copy
//! (`staging.rs`). The backend keeps the ranges it pinned, so that a copy knows
//! whether its host side is one of them.

use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};

use crucible_core::{BufferId, Error, HostPin, Lease, PinnedScalars, Result};
use cudarc::driver::{sys::CUresult, CudaContext, CudaStream};

use crate::driver;
use crate::error::CudaError;
use crate::field::DeviceScalar;
use crate::memory::{CudaBuffer, DeviceWords};

/// The host ranges (addresses) pinned through one backend, each until its pin drops.
#[derive(Default)]
pub struct Pins {
    ranges: Arc<Mutex<Vec<Range<usize>>>>,
}

impl Pins {
    /// Pins `scalars` for `ctx`'s copies until the returned value drops. Scalars the
    /// device cannot take as they lie in memory (`driver::fr_device_words`), none at
    /// all, or memory pinned already (by this process elsewhere) stay unpinned: their
    /// copies go through the staging buffers.
    pub fn pin<'a, F: DeviceScalar>(
        &self,
        ctx: &Arc<CudaContext>,
        scalars: &'a mut [F],
    ) -> Result<PinnedScalars<'a, F>> {
        let Some(words) = driver::fr_device_words(scalars) else {
            return Ok(PinnedScalars::unpinned(scalars));
        };
        let start = words.as_ptr() as usize;
        let range = start..start + std::mem::size_of_val(words);
        if range.is_empty() {
            return Ok(PinnedScalars::unpinned(scalars));
        }
        match driver::host_register(ctx, range.start, range.len()) {
            Ok(()) => {}
            Err(e) if e.0 == CUresult::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED => {
                return Ok(PinnedScalars::unpinned(scalars));
            }
            Err(e) => return Err(CudaError::from(e).into()),
        }
        self.lock().push(range.clone());
        let pin = CudaPin {
            ctx: ctx.clone(),
            range,
            ranges: self.ranges.clone(),
        };
        Ok(PinnedScalars::pinned(scalars, Box::new(pin)))
    }

    /// `scalars`' device words when the whole of them lies in one pinned range.
    pub fn words<'s, F: DeviceScalar>(&self, scalars: &'s [F]) -> Option<&'s [u32]> {
        let words = driver::fr_device_words(scalars)?;
        self.covers(words.as_ptr() as usize, std::mem::size_of_val(words))
            .then_some(words)
    }

    /// As [`Pins::words`], to be overwritten by a read-back.
    pub fn words_mut<'s, F: DeviceScalar>(&self, scalars: &'s mut [F]) -> Option<&'s mut [u32]> {
        let words = driver::fr_device_words_mut(scalars)?;
        self.covers(words.as_ptr() as usize, std::mem::size_of_val(words))
            .then_some(words)
    }

    fn covers(&self, start: usize, bytes: usize) -> bool {
        bytes > 0
            && self
                .lock()
                .iter()
                .any(|r| r.start <= start && start + bytes <= r.end)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Range<usize>>> {
        self.ranges.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Copies pinned `words` to the front of buffer `id` (a `B`: scalars, or bases
/// from a pinned key) on the `copy` stream, in one copy, and waits for it: the caller
/// may change or free the memory once this returns. Only this copy is waited for:
/// other workers' copies share the stream.
pub fn upload<B: DeviceWords>(
    copy: &Arc<CudaStream>,
    lease: &mut Lease,
    id: BufferId,
    words: &[u32],
) -> Result<()> {
    let buf = lease.get_mut::<B>(id)?.words_mut();
    let capacity = buf.len();
    let mut dst = buf
        .try_slice_mut(..words.len())
        .ok_or_else(|| too_long(words.len(), capacity))?;
    copy.memcpy_htod(words, &mut dst).map_err(CudaError::from)?;
    copy.record_event(None)
        .and_then(|e| e.synchronize())
        .map_err(CudaError::from)?;
    Ok(())
}

/// Copies the front of buffer `id` into pinned `words` on `stream` (after the kernels
/// queued there), in one copy, and waits for it.
pub fn download(
    stream: &Arc<CudaStream>,
    lease: &Lease,
    id: BufferId,
    words: &mut [u32],
) -> Result<()> {
    let buf = lease.get::<CudaBuffer>(id)?;
    let src = buf
        .words
        .try_slice(..words.len())
        .ok_or_else(|| too_long(words.len(), buf.words.len()))?;
    stream.memcpy_dtoh(&src, words).map_err(CudaError::from)?;
    stream.synchronize().map_err(CudaError::from)?;
    Ok(())
}

fn too_long(words: usize, capacity: usize) -> Error {
    Error::InvalidInput(format!(
        "copying {words} words with a buffer of {capacity} words"
    ))
}

/// One pinned range: unregistered, and forgotten by the backend, when dropped.
struct CudaPin {
    ctx: Arc<CudaContext>,
    range: Range<usize>,
    ranges: Arc<Mutex<Vec<Range<usize>>>>,
}

impl HostPin for CudaPin {}

impl Drop for CudaPin {
    // Every copy of pinned scalars has completed when its call returns, so nothing
    // uses the memory now. A failure is kept by the context for its next checked call.
    fn drop(&mut self) {
        let mut ranges = self.ranges.lock().unwrap_or_else(PoisonError::into_inner);
        ranges.retain(|r| *r != self.range);
        drop(ranges);
        self.ctx
            .record_err(driver::host_unregister(&self.ctx, self.range.start));
    }
}
