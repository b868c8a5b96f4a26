//! NTTs and pointwise ops. Twiddles and coset powers are built on the device from a
//! few host-computed powers (g^(2^b)); the transform is a bit reversal then passes of
//! two radix-2 stages each, held in registers (one global round trip per pass).

use std::sync::Arc;

use ark_ff::Field;
use crucible_core::{BufferId, Domain, Fr, Lease, MemoryPlan, NttKind, Result, ScalarBuf};
use cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};

use crate::driver::launch;
use crate::error::CudaError;
use crate::field::{fr_to_words, FR_WORDS};
use crate::kernels::Kernels;
use crate::memory::{alloc_words, upload, CudaBuffer};

const BLOCK: u32 = 256;
// Radix-2 stages per pass (the kernels go up to ntt_pass_r4). A pass is latency-bound
// (one thread's chain of dependent products), so what counts is the threads in flight:
// radix 16 took 241 registers a thread (8 warps per SM) and 1.7-2.3 ms for 2^20 on the
// H200; radix 4 takes 64 (32 warps per SM) for 2.5 times the global passes.
const PASS_STAGES: u32 = 2;

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
const POWERS_LO: &str = "ntt-powers-lo";
const POWERS_HI: &str = "ntt-powers-hi";
const SEEDS: &str = "ntt-power-seeds";
const CONSTANT: &str = "ntt-constant";

/// g^i for i < 2^log is built as lo[i mod 2^lo_bits] * hi[i >> lo_bits]: two tables
/// of about sqrt(2^log) entries each.
fn split(log: u32) -> (u32, u32) {
    let lo = log.div_ceil(2);
    (lo, log - lo)
}

/// Scratch items of an NTT over `domain`: the twiddle table (n/2), the two power
/// tables (about sqrt(n) each, shared by twiddles and coset powers), their seeds and
/// one constant.
pub fn scratch_plan(domain: &Domain, plan: &mut MemoryPlan) {
    let fr = (FR_WORDS * 4) as u64;
    // The coset powers (2^log_size of them) need the larger split.
    let (lo, hi) = split(domain.log_size);
    plan.item(TWIDDLES, (domain.size / 2).max(1) as u64 * fr)
        .item(POWERS_LO, (1u64 << lo) * fr)
        .item(POWERS_HI, (1u64 << hi) * fr)
        .item(SEEDS, u64::from(domain.log_size.max(1)) * fr)
        .item(CONSTANT, fr);
}

fn stage_table(
    stream: &Arc<CudaStream>,
    lease: &mut Lease,
    item: &str,
    values: &[Fr],
) -> Result<BufferId> {
    let id = alloc_words(stream, lease, item, values.len() * FR_WORDS)?;
    let mut words = vec![0u32; values.len() * FR_WORDS];
    fr_to_words(values, &mut words);
    upload(stream, lease, id, &words)?;
    Ok(id)
}

/// The two tables of g^i, i < 2^log (see [`split`]); returns (lo, hi, lo_bits).
fn power_tables(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &mut Lease,
    g: Fr,
    log: u32,
) -> Result<(BufferId, BufferId, u32)> {
    let (lo_bits, hi_bits) = split(log);
    // seeds[b] = g^(2^b): lo uses seeds[..lo_bits], hi (powers of g^(2^lo_bits)) the rest.
    let mut seeds = Vec::with_capacity(log.max(1) as usize);
    let mut x = g;
    for _ in 0..log.max(1) {
        seeds.push(x);
        x.square_in_place();
    }
    let seeds_id = stage_table(stream, lease, SEEDS, &seeds)?;
    let lo = alloc_words(stream, lease, POWERS_LO, (1usize << lo_bits) * FR_WORDS)?;
    let hi = alloc_words(stream, lease, POWERS_HI, (1usize << hi_bits) * FR_WORDS)?;
    {
        let seeds = &lease.get::<CudaBuffer>(seeds_id)?.words;
        let seeds_hi = seeds.slice(lo_bits as usize * FR_WORDS..);
        let f = k.get("fr_powers")?;
        let (lo_len, hi_len) = (1u32 << lo_bits, 1u32 << hi_bits);
        let lo_t = &lease.get::<CudaBuffer>(lo)?.words;
        launch(
            stream.launch_builder(f).arg(lo_t).arg(seeds).arg(&lo_len),
            grid_1d(lo_len as usize),
        )?;
        let hi_t = &lease.get::<CudaBuffer>(hi)?.words;
        launch(
            stream
                .launch_builder(f)
                .arg(hi_t)
                .arg(&seeds_hi)
                .arg(&hi_len),
            grid_1d(hi_len as usize),
        )?;
    }
    lease.free(seeds_id)?;
    Ok((lo, hi, lo_bits))
}

fn forward(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &mut Lease,
    buf: ScalarBuf,
    domain: &Domain,
    omega: Fr,
) -> Result<()> {
    let n = domain.size;
    if n == 1 {
        return Ok(());
    }
    let log = domain.log_size;
    // tw[i] = omega^i for i < n/2.
    let (lo, hi, lo_bits) = power_tables(stream, k, lease, omega, log - 1)?;
    let tw = alloc_words(stream, lease, TWIDDLES, (n / 2) * FR_WORDS)?;
    let (n32, half) = (n as u32, (n / 2) as u32);
    {
        let twiddles = &lease.get::<CudaBuffer>(tw)?.words;
        let lo_t = &lease.get::<CudaBuffer>(lo)?.words;
        let hi_t = &lease.get::<CudaBuffer>(hi)?.words;
        launch(
            stream
                .launch_builder(k.get("fr_power_table")?)
                .arg(twiddles)
                .arg(lo_t)
                .arg(hi_t)
                .arg(&half)
                .arg(&lo_bits),
            grid_1d(n / 2),
        )?;
    }
    lease.free(lo)?;
    lease.free(hi)?;
    {
        let a = &lease.get::<CudaBuffer>(buf.id)?.words;
        let twiddles = &lease.get::<CudaBuffer>(tw)?.words;
        launch(
            stream
                .launch_builder(k.get("ntt_bit_reverse")?)
                .arg(a)
                .arg(&n32)
                .arg(&log),
            grid_1d(n),
        )?;
        let mut s = 0;
        while s < log {
            let r = (log - s).min(PASS_STAGES);
            let f = k.get(
                ["ntt_pass_r1", "ntt_pass_r2", "ntt_pass_r3", "ntt_pass_r4"][r as usize - 1],
            )?;
            launch(
                stream
                    .launch_builder(f)
                    .arg(a)
                    .arg(twiddles)
                    .arg(&n32)
                    .arg(&log)
                    .arg(&s),
                grid_1d(n >> r),
            )?;
            s += r;
        }
    }
    lease.free(tw)
}

fn scale_by_powers(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &mut Lease,
    buf: ScalarBuf,
    domain: &Domain,
    g: Fr,
) -> Result<()> {
    let (lo, hi, lo_bits) = power_tables(stream, k, lease, g, domain.log_size)?;
    {
        let a = &lease.get::<CudaBuffer>(buf.id)?.words;
        let lo_t = &lease.get::<CudaBuffer>(lo)?.words;
        let hi_t = &lease.get::<CudaBuffer>(hi)?.words;
        let n32 = domain.size as u32;
        let f = k.get("fr_scale_by_powers")?;
        launch(
            stream
                .launch_builder(f)
                .arg(a)
                .arg(lo_t)
                .arg(hi_t)
                .arg(&n32)
                .arg(&lo_bits),
            grid_1d(domain.size),
        )?;
    }
    lease.free(lo)?;
    lease.free(hi)
}

fn scale(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &mut Lease,
    buf: ScalarBuf,
    c: Fr,
) -> Result<()> {
    let constant = stage_table(stream, lease, CONSTANT, &[c])?;
    {
        let a = &lease.get::<CudaBuffer>(buf.id)?.words;
        let c = &lease.get::<CudaBuffer>(constant)?.words;
        let n32 = buf.len as u32;
        launch(
            stream
                .launch_builder(k.get("fr_scale")?)
                .arg(a)
                .arg(c)
                .arg(&n32),
            grid_1d(buf.len),
        )?;
    }
    lease.free(constant)
}

/// In-place NTT of `buf` over `domain`.
pub fn ntt(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &mut Lease,
    buf: ScalarBuf,
    domain: &Domain,
    kind: NttKind,
) -> Result<()> {
    if buf.len != domain.size {
        return Err(crucible_core::Error::InvalidInput(format!(
            "NTT of {} points on a buffer of {}",
            domain.size, buf.len
        )));
    }
    if domain.log_size > 31 {
        return Err(CudaError::Size(format!(
            "NTT 2^{} exceeds the kernels' 32-bit indices",
            domain.log_size
        ))
        .into());
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
pub fn mul_assign(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &mut Lease,
    dst: ScalarBuf,
    rhs: ScalarBuf,
) -> Result<()> {
    check_pair(dst, rhs)?;
    let a = &lease.get::<CudaBuffer>(dst.id)?.words;
    let b = &lease.get::<CudaBuffer>(rhs.id)?.words;
    let n32 = dst.len as u32;
    launch(
        stream
            .launch_builder(k.get("fr_mul_assign")?)
            .arg(a)
            .arg(b)
            .arg(&n32),
        grid_1d(dst.len),
    )
    .map_err(Into::into)
}

/// `dst[i] = (dst[i] - rhs[i]) * c`.
pub fn sub_mul_assign(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &mut Lease,
    dst: ScalarBuf,
    rhs: ScalarBuf,
    c: Fr,
) -> Result<()> {
    check_pair(dst, rhs)?;
    let constant = stage_table(stream, lease, CONSTANT, &[c])?;
    {
        let a = &lease.get::<CudaBuffer>(dst.id)?.words;
        let b = &lease.get::<CudaBuffer>(rhs.id)?.words;
        let c = &lease.get::<CudaBuffer>(constant)?.words;
        let n32 = dst.len as u32;
        launch(
            stream
                .launch_builder(k.get("fr_sub_scale")?)
                .arg(a)
                .arg(b)
                .arg(c)
                .arg(&n32),
            grid_1d(dst.len),
        )?;
    }
    lease.free(constant)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_tables_fit_their_plan_items() {
        for log in 0..=31u32 {
            let domain = Domain::with_log_size(log).unwrap();
            let mut plan = MemoryPlan::new("t");
            scratch_plan(&domain, &mut plan);
            let bytes = |item: &str| {
                plan.items()
                    .iter()
                    .find(|i| i.name == item)
                    .map_or(0, |i| i.bytes)
            };
            let fr = (FR_WORDS * 4) as u64;
            // Twiddles (powers of omega below n/2, when n > 1) and coset powers (below n).
            for table_log in [log.saturating_sub(1), log] {
                let (lo, hi) = split(table_log);
                assert!((1u64 << lo) * fr <= bytes(POWERS_LO), "log {log}");
                assert!((1u64 << hi) * fr <= bytes(POWERS_HI), "log {log}");
                assert!(
                    u64::from(table_log.max(1)) * fr <= bytes(SEEDS),
                    "log {log}"
                );
            }
            assert!((domain.size as u64 / 2).max(1) * fr <= bytes(TWIDDLES));
        }
    }
}
