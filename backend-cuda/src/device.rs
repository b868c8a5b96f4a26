//! Finding CUDA devices and describing them, without ever panicking.

use std::sync::Arc;

use crucible_core::BackendInfo;
use cudarc::driver::{CudaContext, CudaStream};

use crate::error::CudaResult;

/// One opened device: its context, the stream every kernel is queued on, the stream
/// host-to-device copies go on (so staging overlaps with kernels), and what it
/// reports about itself. Ordering between the two comes from cudarc's per-buffer
/// read/write events (two streams put the context in its multi-stream mode): a copy
/// into a buffer waits for the kernels that use it, a kernel waits for the copy.
pub struct Device {
    /// The primary context.
    pub ctx: Arc<CudaContext>,
    /// The stream of this backend instance's kernels.
    pub stream: Arc<CudaStream>,
    /// The stream of its host-to-device copies.
    pub copy: Arc<CudaStream>,
    /// Compute capability (major, minor).
    pub arch: (i32, i32),
    /// Backend info for reports.
    pub info: BackendInfo,
}

/// Number of CUDA devices (the driver library must be present).
pub fn count() -> CudaResult<usize> {
    Ok(CudaContext::device_count()? as usize)
}

/// Opens device `ordinal`.
pub fn open(ordinal: usize) -> CudaResult<Device> {
    let ctx = CudaContext::new(ordinal)?;
    let stream = ctx.new_stream()?;
    let copy = ctx.new_stream()?;
    let arch = ctx.compute_capability()?;
    let name = ctx.name()?;
    let memory = ctx.total_mem()? as u64;
    let driver = crate::driver::driver_version();
    Ok(Device {
        info: BackendInfo {
            name: "cuda".into(),
            device_index: ordinal,
            device_name: name,
            api: format!(
                "CUDA driver {}.{}, sm_{}{}",
                driver / 1000,
                (driver % 1000) / 10,
                arch.0,
                arch.1
            ),
            memory_bytes: memory,
            priority: crucible_core::priority::NATIVE_GPU,
        },
        ctx,
        stream,
        copy,
        arch,
    })
}

/// (free, total) device memory as the driver reports it.
pub fn memory_info(ctx: &Arc<CudaContext>) -> CudaResult<(u64, u64)> {
    let (free, total) = ctx.mem_get_info()?;
    Ok((free as u64, total as u64))
}
