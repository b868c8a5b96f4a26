//! Device buffers, allocated only through a lease, and small reads back to the host
//! (bulk copies go through the pinned buffers of staging.rs). A buffer is words: what
//! they hold, and any layout beyond "elements in a row", is its owner's (MSM bases
//! and their window planes are msm/planes.rs's).

use std::sync::Arc;

use crucible_core::{plain_bytes, BufferId, DeviceAllocation, Error, Lease, PlanKey, Result};

use cudarc::driver::{CudaSlice, CudaStream, DriverError};

use crate::driver;
use crate::error::CudaError;

/// One device allocation of u32 words: scalars and scratch.
pub struct CudaBuffer {
    /// The device memory (freed, stream-ordered, when dropped).
    pub words: CudaSlice<u32>,
}

/// A lease allocation that staging copies words into.
pub trait DeviceWords: DeviceAllocation {
    /// Its device words.
    fn words_mut(&mut self) -> &mut CudaSlice<u32>;
}

impl DeviceWords for CudaBuffer {
    fn words_mut(&mut self) -> &mut CudaSlice<u32> {
        &mut self.words
    }
}

/// `count` zeroed device words, stream-ordered on `stream`.
pub fn zeroed(stream: &Arc<CudaStream>, count: usize) -> Result<CudaSlice<u32>> {
    stream
        .alloc_zeros::<u32>(count)
        .map_err(|e| alloc_error(count * 4, e))
}

/// The error of a failed device allocation of `bytes`: out of memory inside a lease
/// means something outside the budget took the memory (another process), which the
/// caller can act on; anything else is a device error.
pub fn alloc_error(bytes: usize, e: DriverError) -> Error {
    if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        Error::DeviceOutOfMemory {
            backend: "cuda".into(),
            bytes: bytes as u64,
            message: e.to_string(),
        }
    } else {
        CudaError::from(e).into()
    }
}

/// Allocates `count` zeroed words from plan item `item`.
pub fn alloc_words(
    stream: &Arc<CudaStream>,
    lease: &mut Lease,
    item: PlanKey,
    count: usize,
) -> Result<BufferId> {
    alloc_words_cleared(stream, lease, item, count, true)
}

/// Allocates `count` words from plan item `item` without clearing them: for scratch
/// that the kernels write before they read it (clearing a G2 MSM's scratch at 2^20
/// writes about 0.5 GB). The caller names the kernels that write every word read.
pub fn alloc_words_uninit(
    stream: &Arc<CudaStream>,
    lease: &mut Lease,
    item: PlanKey,
    count: usize,
) -> Result<BufferId> {
    alloc_words_cleared(stream, lease, item, count, false)
}

fn alloc_words_cleared(
    stream: &Arc<CudaStream>,
    lease: &mut Lease,
    item: PlanKey,
    count: usize,
    cleared: bool,
) -> Result<BufferId> {
    // A zero-length allocation is legal in a plan but not for every driver call.
    let count = count.max(1);
    lease.allocate(item, (count * 4) as u64, || {
        let words = if cleared {
            zeroed(stream, count)?
        } else {
            driver::alloc_uninit(stream, count).map_err(|e| alloc_error(count * 4, e))?
        };
        Ok(CudaBuffer { words })
    })
}

/// Bytes of a buffer of `copies` times `len` elements of `element_bytes` each (bases
/// with window planes hold several copies of their points), or an error naming the
/// overflow.
pub fn buffer_bytes(element_bytes: u64, len: usize, copies: u32) -> Result<u64> {
    plain_bytes(element_bytes, len)?
        .checked_mul(u64::from(copies))
        .ok_or_else(|| Error::InvalidInput(format!("{len} bases with {copies} planes overflow")))
}

/// Allocates `len` zeroed elements of `element_bytes` each from plan item `item`.
pub fn alloc(
    stream: &Arc<CudaStream>,
    lease: &mut Lease,
    item: PlanKey,
    element_bytes: u64,
    len: usize,
) -> Result<BufferId> {
    let bytes = buffer_bytes(element_bytes, len, 1)?.max(4);
    let count = (bytes as usize / 4).max(1);
    lease.allocate(item, bytes, || {
        Ok(CudaBuffer {
            words: zeroed(stream, count)?,
        })
    })
}

/// Zeroes the words of buffer `id` from word `from` on, on the `copy` stream (after
/// the staging copies queued there).
pub fn zero_tail(
    copy: &Arc<CudaStream>,
    lease: &mut Lease,
    id: BufferId,
    from: usize,
) -> Result<()> {
    let buf = lease.get_mut::<CudaBuffer>(id)?;
    if from < buf.words.len() {
        let mut tail = buf.words.slice_mut(from..);
        copy.memset_zeros(&mut tail).map_err(CudaError::from)?;
    }
    Ok(())
}

/// Copies the first `count` words of a buffer to the host (waits for the stream),
/// through the driver's pageable path: for small reads (window sums, a count).
pub fn download(
    stream: &Arc<CudaStream>,
    lease: &Lease,
    id: BufferId,
    count: usize,
) -> Result<Vec<u32>> {
    download_at(stream, lease, id, 0, count)
}

/// Copies `count` words of a buffer from word `offset` on to the host (waits for the
/// stream); fewer where the buffer ends first.
pub fn download_at(
    stream: &Arc<CudaStream>,
    lease: &Lease,
    id: BufferId,
    offset: usize,
    count: usize,
) -> Result<Vec<u32>> {
    let buf = lease.get::<CudaBuffer>(id)?;
    let len = buf.words.len();
    let view = buf
        .words
        .slice(offset.min(len)..offset.saturating_add(count).min(len));
    Ok(stream.clone_dtoh(&view).map_err(CudaError::from)?)
}
