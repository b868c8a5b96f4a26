//! Pointwise ops on scalar buffers: the trait's products for the quotient, and the
//! scalings the NTTs end with (by 1/n, by the coset's powers).

use std::sync::Arc;

use crucible_core::{Fr, Lease, Result, ScalarBuf};
use cudarc::driver::{CudaSlice, CudaStream};

use crate::field::FrArg;
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
pub fn sub_mul_assign(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &mut Lease,
    dst: ScalarBuf,
    rhs: ScalarBuf,
    c: Fr,
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

/// `buf[i] *= c`, c by value.
pub fn scale(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &Lease,
    buf: ScalarBuf,
    c: Fr,
) -> Result<()> {
    let a = &lease.get::<CudaBuffer>(buf.id())?.words;
    launch::fr_scale(
        k,
        stream,
        grid_1d(buf.len()),
        Dev::new(a),
        FrArg::new(c),
        buf.len() as u32,
    )?;
    Ok(())
}

/// `buf[i] *= lo[i mod 2^lo_bits] * hi[i >> lo_bits]` (tables of powers, split).
pub fn scale_by_powers(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &Lease,
    buf: ScalarBuf,
    (lo, hi, lo_bits): (&CudaSlice<u32>, &CudaSlice<u32>, u32),
) -> Result<()> {
    let a = &lease.get::<CudaBuffer>(buf.id())?.words;
    launch::fr_scale_by_powers(
        k,
        stream,
        grid_1d(buf.len()),
        Dev::new(a),
        Dev::new(lo),
        Dev::new(hi),
        buf.len() as u32,
        lo_bits,
    )?;
    Ok(())
}
