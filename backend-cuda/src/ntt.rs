//! NTTs and pointwise ops: radix-2 stages on the device with twiddle tables staged
//! from the host into leased scratch buffers.

use std::sync::Arc;

use ark_ff::{Field, One};
use cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};
use crucible_core::{Domain, Fr, Lease, MemoryPlan, NttKind, Result, ScalarBuf};
use rayon::prelude::*;

use crate::driver::launch;
use crate::error::CudaError;
use crate::field::{fr_to_words, FR_WORDS};
use crate::kernels::Kernels;
use crate::memory::{alloc_words, upload, CudaBuffer};

const BLOCK: u32 = 256;

/// A 1-D launch covering `threads` threads (never zero blocks).
pub fn grid_1d(threads: usize) -> LaunchConfig {
    grid_with_block(threads, BLOCK)
}

/// A 1-D launch covering `threads` threads in blocks of `block`.
pub fn grid_with_block(threads: usize, block: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((threads as u32).div_ceil(block).max(1), 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}

const TWIDDLES: &str = "ntt-twiddles";
const POWERS_LO: &str = "ntt-coset-powers-lo";
const POWERS_HI: &str = "ntt-coset-powers-hi";
const CONSTANT: &str = "ntt-constant";

fn lo_bits(domain: &Domain) -> u32 {
    domain.log_size.div_ceil(2)
}

fn table_lens(domain: &Domain) -> (usize, usize, usize) {
    let lo = lo_bits(domain);
    let twiddles = (domain.size / 2).max(1);
    (twiddles, 1usize << lo, domain.size.div_ceil(1usize << lo))
}

/// Scratch items of an NTT over `domain`: the twiddle table, the two coset power
/// tables (about √n each) and one constant.
pub fn scratch_plan(domain: &Domain, plan: &mut MemoryPlan) {
    let (tw, lo, hi) = table_lens(domain);
    let fr = (FR_WORDS * 4) as u64;
    plan.item(TWIDDLES, tw as u64 * fr)
        .item(POWERS_LO, lo as u64 * fr)
        .item(POWERS_HI, hi as u64 * fr)
        .item(CONSTANT, fr);
}

/// base^start, base^(start+1), ... (len values), computed in parallel chunks.
fn powers(base: Fr, len: usize) -> Vec<Fr> {
    const CHUNK: usize = 1 << 12;
    let mut out = vec![Fr::one(); len];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
        let mut x = base.pow([(c * CHUNK) as u64]);
        for v in chunk {
            *v = x;
            x *= base;
        }
    });
    out
}

fn stage_table(stream: &Arc<CudaStream>, lease: &mut Lease, item: &str, values: &[Fr]) -> Result<crucible_core::BufferId> {
    let id = alloc_words(stream, lease, item, values.len() * FR_WORDS)?;
    let mut words = vec![0u32; values.len() * FR_WORDS];
    fr_to_words(values, &mut words);
    upload(stream, lease, id, &words)?;
    Ok(id)
}

fn forward(stream: &Arc<CudaStream>, k: &Kernels, lease: &mut Lease, buf: ScalarBuf, domain: &Domain, omega: Fr) -> Result<()> {
    let n = domain.size;
    if n == 1 {
        return Ok(());
    }
    let (tw_len, _, _) = table_lens(domain);
    let tw = stage_table(stream, lease, TWIDDLES, &powers(omega, tw_len))?;
    let (n32, log) = (n as u32, domain.log_size);
    {
        let a = &lease.get::<CudaBuffer>(buf.id)?.words;
        let twiddles = &lease.get::<CudaBuffer>(tw)?.words;
        let f = k.get("ntt_bit_reverse")?;
        launch(stream.launch_builder(f).arg(a).arg(&n32).arg(&log), grid_1d(n))?;
        let f = k.get("ntt_butterfly_stage")?;
        for stage in 0..log {
            launch(
                stream.launch_builder(f).arg(a).arg(twiddles).arg(&n32).arg(&log).arg(&stage),
                grid_1d(n / 2),
            )?;
        }
    }
    lease.free(tw)
}

fn scale_by_powers(stream: &Arc<CudaStream>, k: &Kernels, lease: &mut Lease, buf: ScalarBuf, domain: &Domain, g: Fr) -> Result<()> {
    let (_, lo_len, hi_len) = table_lens(domain);
    let lo = stage_table(stream, lease, POWERS_LO, &powers(g, lo_len))?;
    let hi = stage_table(stream, lease, POWERS_HI, &powers(g.pow([lo_len as u64]), hi_len))?;
    {
        let a = &lease.get::<CudaBuffer>(buf.id)?.words;
        let lo_t = &lease.get::<CudaBuffer>(lo)?.words;
        let hi_t = &lease.get::<CudaBuffer>(hi)?.words;
        let (n32, bits) = (domain.size as u32, lo_bits(domain));
        let f = k.get("fr_scale_by_powers")?;
        launch(stream.launch_builder(f).arg(a).arg(lo_t).arg(hi_t).arg(&n32).arg(&bits), grid_1d(domain.size))?;
    }
    lease.free(lo)?;
    lease.free(hi)
}

fn scale(stream: &Arc<CudaStream>, k: &Kernels, lease: &mut Lease, buf: ScalarBuf, c: Fr) -> Result<()> {
    let constant = stage_table(stream, lease, CONSTANT, &[c])?;
    {
        let a = &lease.get::<CudaBuffer>(buf.id)?.words;
        let c = &lease.get::<CudaBuffer>(constant)?.words;
        let n32 = buf.len as u32;
        launch(stream.launch_builder(k.get("fr_scale")?).arg(a).arg(c).arg(&n32), grid_1d(buf.len))?;
    }
    lease.free(constant)
}

/// In-place NTT of `buf` over `domain`.
pub fn ntt(stream: &Arc<CudaStream>, k: &Kernels, lease: &mut Lease, buf: ScalarBuf, domain: &Domain, kind: NttKind) -> Result<()> {
    if buf.len != domain.size {
        return Err(crucible_core::Error::InvalidInput(format!(
            "NTT of {} points on a buffer of {}",
            domain.size, buf.len
        )));
    }
    if domain.log_size > 31 {
        return Err(CudaError::Size(format!("NTT 2^{} exceeds the kernels' 32-bit indices", domain.log_size)).into());
    }
    match kind {
        NttKind::Forward => forward(stream, k, lease, buf, domain, domain.omega),
        NttKind::Inverse => {
            forward(stream, k, lease, buf, domain, domain.omega_inv)?;
            scale(stream, k, lease, buf, domain.size_inv)
        }
        NttKind::CosetForward => {
            scale_by_powers(stream, k, lease, buf, domain, domain.coset_gen)?;
            forward(stream, k, lease, buf, domain, domain.omega)
        }
        NttKind::CosetInverse => {
            forward(stream, k, lease, buf, domain, domain.omega_inv)?;
            scale(stream, k, lease, buf, domain.size_inv)?;
            scale_by_powers(stream, k, lease, buf, domain, domain.coset_gen_inv)
        }
    }
}

fn check_pair(dst: ScalarBuf, rhs: ScalarBuf) -> Result<()> {
    if dst.len == rhs.len {
        Ok(())
    } else {
        Err(crucible_core::Error::InvalidInput(format!(
            "pointwise operands of {} and {} scalars",
            dst.len, rhs.len
        )))
    }
}

/// `dst[i] *= rhs[i]`.
pub fn mul_assign(stream: &Arc<CudaStream>, k: &Kernels, lease: &mut Lease, dst: ScalarBuf, rhs: ScalarBuf) -> Result<()> {
    check_pair(dst, rhs)?;
    let a = &lease.get::<CudaBuffer>(dst.id)?.words;
    let b = &lease.get::<CudaBuffer>(rhs.id)?.words;
    let n32 = dst.len as u32;
    launch(stream.launch_builder(k.get("fr_mul_assign")?).arg(a).arg(b).arg(&n32), grid_1d(dst.len))
        .map_err(Into::into)
}

/// `dst[i] = (dst[i] - rhs[i]) * c`.
pub fn sub_mul_assign(stream: &Arc<CudaStream>, k: &Kernels, lease: &mut Lease, dst: ScalarBuf, rhs: ScalarBuf, c: Fr) -> Result<()> {
    check_pair(dst, rhs)?;
    let constant = stage_table(stream, lease, CONSTANT, &[c])?;
    {
        let a = &lease.get::<CudaBuffer>(dst.id)?.words;
        let b = &lease.get::<CudaBuffer>(rhs.id)?.words;
        let c = &lease.get::<CudaBuffer>(constant)?.words;
        let n32 = dst.len as u32;
        launch(stream.launch_builder(k.get("fr_sub_scale")?).arg(a).arg(b).arg(c).arg(&n32), grid_1d(dst.len))?;
    }
    lease.free(constant)
}
