//! Pointwise ops on scalar buffers: the trait's products for the quotient.

use std::sync::Arc;

use crucible_core::{Lease, Result, ScalarBuf};
use cudarc::driver::CudaStream;

use crate::field::{DeviceScalar, FrArg};
use crate::launch::{self, grid_1d, Dev, Kernels};
use crate::memory::CudaBuffer;

fn check_pair(dst: ScalarBuf, rhs: ScalarBuf) -> Result<()> {
    if dst.len() == rhs.len() {
        Ok(())
    } else {
        Err(crucible_core::Error::InvalidInput(format!(
            "pointwise operands of {} and {} scalars",
            dst.len(),
            rhs.len()
        )))
    }
}

/// `dst[i] *= rhs[i]`.
pub fn mul_assign(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &mut Lease,
    dst: ScalarBuf,
    rhs: ScalarBuf,
) -> Result<()> {
    check_pair(dst, rhs)?;
    let a = &lease.get::<CudaBuffer>(dst.id())?.words;
    let b = &lease.get::<CudaBuffer>(rhs.id())?.words;
    launch::fr_mul_assign(
        k,
        stream,
        grid_1d(dst.len()),
        Dev::new(a),
        Dev::new(b),
        dst.len() as u32,
    )?;
    Ok(())
}

/// `dst[i] = (dst[i] - rhs[i]) * c`, c by value.
pub fn sub_mul_assign<F: DeviceScalar>(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &mut Lease,
    dst: ScalarBuf,
    rhs: ScalarBuf,
    c: F,
) -> Result<()> {
    check_pair(dst, rhs)?;
    let a = &lease.get::<CudaBuffer>(dst.id())?.words;
    let b = &lease.get::<CudaBuffer>(rhs.id())?.words;
    launch::fr_sub_scale(
        k,
        stream,
        grid_1d(dst.len()),
        Dev::new(a),
        Dev::new(b),
        FrArg::new(c),
        dst.len() as u32,
    )?;
    Ok(())
}
