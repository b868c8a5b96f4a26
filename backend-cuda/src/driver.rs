//! Every raw (unsafe) driver call of the CUDA backend, in one place.

use std::sync::Arc;

use cudarc::driver::{result, CudaContext, LaunchArgs, LaunchConfig};

use crate::error::CudaResult;

/// Why CUDA cannot be used here, if it cannot: libcuda and libnvrtc must both load.
pub fn missing_library() -> Option<&'static str> {
    // SAFETY: only tries to dlopen the driver library by its usual names; no symbol
    // of it is called.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Some("libcuda not found (no NVIDIA driver on this machine)");
    }
    // SAFETY: as above, for the NVRTC library.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Some("libnvrtc not found (install the CUDA runtime compiler, or add its folder to LD_LIBRARY_PATH)");
    }
    None
}

/// Returns the stream-ordered pool's unused memory to the device, so that other
/// processes see it free once a lease is released.
pub fn trim_memory_pool(ctx: &Arc<CudaContext>) -> CudaResult<()> {
    if !ctx.has_async_alloc() {
        return Ok(());
    }
    ctx.bind_to_thread()?;
    // SAFETY: `cu_device()` is a valid device of a live context (we hold the Arc).
    let pool = unsafe { result::device::get_default_mem_pool(ctx.cu_device()) }?;
    // SAFETY: `pool` was just returned by the driver for this device.
    unsafe { result::mem_pool::trim_to(pool, 0) }?;
    Ok(())
}

/// Launches a kernel whose arguments are already pushed.
pub fn launch(args: &mut LaunchArgs<'_>, config: LaunchConfig) -> CudaResult<()> {
    // SAFETY: each caller pushes exactly the arguments, in the order and with the
    // types, that the kernel's signature in backend-cuda/kernels/*.cu declares, and
    // passes buffers long enough for the indices the launch shape covers (checked
    // by the callers before launching).
    unsafe { args.launch(config) }?;
    Ok(())
}

/// The driver's CUDA version as `major * 1000 + minor * 10` (0 if it cannot say).
pub fn driver_version() -> i32 {
    let mut version = 0i32;
    // SAFETY: writes one int through a valid pointer; the library is loaded (callers
    // probe `missing_library` first).
    let status = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) };
    if status == cudarc::driver::sys::CUresult::CUDA_SUCCESS {
        version
    } else {
        0
    }
}
