//! Device buffers, allocated only through a lease; copies to and from the host.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream};
use crucible_core::{BufferId, ElementKind, Error, Lease, Result};

use crate::error::CudaError;
use crate::field::words;

/// One device allocation of u32 words.
pub struct CudaBuffer {
    /// The device memory (freed, stream-ordered, when dropped).
    pub words: CudaSlice<u32>,
}

/// Allocates `count` zeroed words from plan item `item`.
pub fn alloc_words(stream: &Arc<CudaStream>, lease: &mut Lease, item: &str, count: usize) -> Result<BufferId> {
    // A zero-length allocation is legal in a plan but not for every driver call.
    let count = count.max(1);
    lease.allocate(item, (count * 4) as u64, || {
        let words = stream.alloc_zeros::<u32>(count).map_err(CudaError::from)?;
        Ok(CudaBuffer { words })
    })
}

/// Allocates `len` elements of `kind` from plan item `item`.
pub fn alloc(stream: &Arc<CudaStream>, lease: &mut Lease, item: &str, kind: ElementKind, len: usize) -> Result<BufferId> {
    let bytes = crate::field::element_bytes(kind) * len as u64;
    let count = (len * words(kind)).max(1);
    lease.allocate(item, bytes, || {
        let words = stream.alloc_zeros::<u32>(count).map_err(CudaError::from)?;
        Ok(CudaBuffer { words })
    })
}

/// Copies host words into the buffer, checking the length first.
pub fn upload(stream: &Arc<CudaStream>, lease: &mut Lease, id: BufferId, host: &[u32]) -> Result<()> {
    let buf = lease.get_mut::<CudaBuffer>(id)?;
    if host.len() > buf.words.len() {
        return Err(Error::InvalidInput(format!(
            "staging {} words into a buffer of {}",
            host.len(),
            buf.words.len()
        )));
    }
    let mut view = buf.words.slice_mut(..host.len());
    stream.memcpy_htod(host, &mut view).map_err(CudaError::from)?;
    Ok(())
}

/// Copies the first `count` words of a buffer to the host (waits for the stream).
pub fn download(stream: &Arc<CudaStream>, lease: &Lease, id: BufferId, count: usize) -> Result<Vec<u32>> {
    let buf = lease.get::<CudaBuffer>(id)?;
    let view = buf.words.slice(..count.min(buf.words.len()));
    Ok(stream.clone_dtoh(&view).map_err(CudaError::from)?)
}
