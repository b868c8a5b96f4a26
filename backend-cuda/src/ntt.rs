//! NTTs. The transform is a bit reversal then passes of a few
//! radix-2 stages each, held in registers (one global round trip per pass). Its tables
//! (twiddles, coset powers) are built on the device from a few host-computed powers
//! the first time a lease transforms over a domain, then kept in the lease for every
//! later transform; constants go to the kernels by value. A warm transform is only
//! its own launches: no allocation, no copy.

use std::sync::Arc;

use ark_ff::Field;
use crucible_core::{BufferId, Domain, Fr, Lease, MemoryPlan, NttKind, PlanKey, Result, ScalarBuf};
use cudarc::driver::{CudaSlice, CudaStream};

use crate::error::CudaError;
use crate::field::{FrArg, FrSeeds, FR_WORDS};
use crate::launch::{self, grid_1d, Dev, Kernels, PassStages};
use crate::memory::{self, alloc_words, CudaBuffer};
use crate::pointwise;
use crate::tuning::CudaTuning;

/// Radix-2 stages per pass unless `CRUCIBLE_CUDA_NTT_PASS_STAGES` says otherwise (the
/// kernels go up to ntt_pass_r4). A pass is latency-bound (one thread's chain of
/// dependent products), so what counts is the threads in flight: radix 16 took 241
/// registers a thread (8 warps per SM) and 1.7-2.3 ms for 2^20 on the H200; radix 4
/// takes 64 (32 warps per SM) for 2.5 times the global passes.
pub const DEFAULT_PASS_STAGES: u32 = 2;

/// Radix-2 stages per NTT pass: `CRUCIBLE_CUDA_NTT_PASS_STAGES` (1 to 4, for tuning
/// measurements) or [`DEFAULT_PASS_STAGES`].
pub fn pass_stages(tuning: &CudaTuning) -> u32 {
    tuning.ntt_pass_stages.unwrap_or(DEFAULT_PASS_STAGES)
}

/// tw[i] = omega^i, i < n/2: kept; the inverse reads it mirrored.
const TWIDDLES: PlanKey = PlanKey::new("cuda", "ntt_twiddles");
/// The split tables the twiddles are built from: freed once they are.
const POWERS_LO: PlanKey = PlanKey::new("cuda", "ntt_powers_lo");
const POWERS_HI: PlanKey = PlanKey::new("cuda", "ntt_powers_hi");
/// g^i, i < n, split: kept, for the coset forward transform.
const COSET_LO: PlanKey = PlanKey::new("cuda", "ntt_coset_lo");
const COSET_HI: PlanKey = PlanKey::new("cuda", "ntt_coset_hi");
/// g^-i / n, i < n, split (the lo table carries the 1/n): kept, for the coset inverse.
const COSET_INV_LO: PlanKey = PlanKey::new("cuda", "ntt_coset_inv_lo");
const COSET_INV_HI: PlanKey = PlanKey::new("cuda", "ntt_coset_inv_hi");

/// A table kept in a lease between transforms, and the domain (2^log points) it was
/// built for: a transform over another domain frees it and builds its own.
pub struct NttTable {
    words: CudaSlice<u32>,
    log: u32,
    // The element its powers are of (a coset table for another offset is rebuilt).
    base: Fr,
}

/// g^i for i < 2^log is built as lo[i mod 2^lo_bits] * hi[i >> lo_bits]: two tables
/// of about sqrt(2^log) entries each.
fn split(log: u32) -> (u32, u32) {
    let lo = log.div_ceil(2);
    (lo, log - lo)
}

fn fr_bytes(count: u64) -> u64 {
    count * (FR_WORDS * 4) as u64
}

/// Scratch items of NTTs over `domain`: the twiddles (n/2) and the two split tables
/// they are built from (about sqrt(n/2) each, freed after), and the coset tables of g
/// and of g^-1 (about sqrt(n) each, lo and hi), all but the build tables kept in the
/// lease once built. A domain of one point needs none: its transforms are identities.
pub fn scratch_plan(domain: &Domain, plan: &mut MemoryPlan) {
    let log = domain.log_size;
    if log == 0 {
        return;
    }
    let (tw_lo, tw_hi) = split(log - 1);
    let (lo, hi) = split(log);
    plan.at_least(TWIDDLES, fr_bytes(domain.size as u64 / 2))
        .at_least(POWERS_LO, fr_bytes(1 << tw_lo))
        .at_least(POWERS_HI, fr_bytes(1 << tw_hi))
        .at_least(COSET_LO, fr_bytes(1 << lo))
        .at_least(COSET_HI, fr_bytes(1 << hi))
        .at_least(COSET_INV_LO, fr_bytes(1 << lo))
        .at_least(COSET_INV_HI, fr_bytes(1 << hi));
}

fn table_words(lease: &Lease, id: BufferId) -> Result<&CudaSlice<u32>> {
    Ok(&lease.get::<NttTable>(id)?.words)
}

/// The table of plan item `item` kept in the lease, if it was built for 2^log points;
/// otherwise (none yet, or one for another domain, which is freed first) a new table
/// of `count` Fr, filled by `build`. A table whose build fails is freed, never kept.
fn kept_table(
    stream: &Arc<CudaStream>,
    lease: &mut Lease,
    item: PlanKey,
    (log, base): (u32, Fr),
    count: usize,
    build: impl FnOnce(&mut Lease, BufferId) -> Result<()>,
) -> Result<BufferId> {
    if let Some(id) = lease.buffer_of(item) {
        let table = lease.get::<NttTable>(id)?;
        if table.log == log && table.base == base {
            return Ok(id);
        }
        lease.free(id)?;
    }
    let words = count * FR_WORDS;
    let id = lease.allocate(item, fr_bytes(count as u64), || {
        Ok(NttTable {
            words: memory::zeroed(stream, words)?,
            log,
            base,
        })
    })?;
    if let Err(e) = build(lease, id) {
        lease.free(id)?;
        return Err(e);
    }
    Ok(id)
}

/// Queues out[i] = first * g^i for i < 2^bits (`fr_powers`, seeds by value).
fn launch_powers(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    out: &CudaSlice<u32>,
    g: Fr,
    first: Fr,
    bits: u32,
) -> Result<()> {
    let seeds = FrSeeds::powers_of(g, bits)
        .ok_or_else(|| CudaError::Size(format!("a table of 2^{bits} powers")))?;
    let count = 1u32 << bits;
    launch::fr_powers(
        k,
        stream,
        grid_1d(count as usize),
        Dev::new(out),
        seeds,
        FrArg::new(first),
        count,
    )?;
    Ok(())
}

/// The twiddle table of `domain` (n > 1), built at the lease's first transform over it.
fn twiddles(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &mut Lease,
    domain: &Domain,
) -> Result<BufferId> {
    let half = domain.size / 2;
    kept_table(
        stream,
        lease,
        TWIDDLES,
        (domain.log_size, domain.omega),
        half,
        |lease, tw| {
            let (lo_bits, hi_bits) = split(domain.log_size - 1);
            let lo = alloc_words(stream, lease, POWERS_LO, FR_WORDS << lo_bits)?;
            let hi = match alloc_words(stream, lease, POWERS_HI, FR_WORDS << hi_bits) {
                Ok(hi) => hi,
                Err(e) => {
                    lease.free(lo)?;
                    return Err(e);
                }
            };
            let built = build_twiddles(stream, k, lease, domain, tw, (lo, hi));
            // Stream-ordered frees: the launches queued above read them first.
            lease.free(lo)?;
            lease.free(hi)?;
            built
        },
    )
}

/// tw[i] = omega^i = lo[i mod 2^lo_bits] * hi[i >> lo_bits], from the two small
/// tables `lo` and `hi` filled first.
fn build_twiddles(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &Lease,
    domain: &Domain,
    tw: BufferId,
    (lo, hi): (BufferId, BufferId),
) -> Result<()> {
    let (lo_bits, hi_bits) = split(domain.log_size - 1);
    let lo_t = &lease.get::<CudaBuffer>(lo)?.words;
    let hi_t = &lease.get::<CudaBuffer>(hi)?.words;
    launch_powers(stream, k, lo_t, domain.omega, Fr::ONE, lo_bits)?;
    let omega_hi = domain.omega.pow([1u64 << lo_bits]);
    launch_powers(stream, k, hi_t, omega_hi, Fr::ONE, hi_bits)?;
    let half = domain.size / 2;
    launch::fr_power_table(
        k,
        stream,
        grid_1d(half),
        Dev::new(table_words(lease, tw)?),
        Dev::new(lo_t),
        Dev::new(hi_t),
        half as u32,
        lo_bits,
    )?;
    Ok(())
}

/// Split tables of `first * g^i` for i < n (see [`split`]), on the device.
struct PowerTables {
    lo: BufferId,
    hi: BufferId,
    lo_bits: u32,
}

/// The [`PowerTables`] of `first * g^i` for `domain`, kept in items `lo_item` and
/// `hi_item` (built at the lease's first use).
fn coset_tables(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &mut Lease,
    domain: &Domain,
    (lo_item, hi_item): (PlanKey, PlanKey),
    g: Fr,
    first: Fr,
) -> Result<PowerTables> {
    let log = domain.log_size;
    let (lo_bits, hi_bits) = split(log);
    let lo = kept_table(
        stream,
        lease,
        lo_item,
        (log, g),
        1 << lo_bits,
        |lease, id| launch_powers(stream, k, table_words(lease, id)?, g, first, lo_bits),
    )?;
    let g_hi = g.pow([1u64 << lo_bits]);
    let hi = kept_table(
        stream,
        lease,
        hi_item,
        (log, g),
        1 << hi_bits,
        |lease, id| launch_powers(stream, k, table_words(lease, id)?, g_hi, Fr::ONE, hi_bits),
    )?;
    Ok(PowerTables { lo, hi, lo_bits })
}

/// Bit reversal (scaling a[i] by g^i on the way when `powers` are given), then the
/// passes with the twiddles of `tw`, read inverted when `inverse`.
#[allow(clippy::too_many_arguments)]
fn transform(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &Lease,
    buf: ScalarBuf,
    domain: &Domain,
    tw: BufferId,
    powers: Option<PowerTables>,
    inverse: bool,
    pass_stages: u32,
) -> Result<()> {
    let (n, log) = (domain.size, domain.log_size);
    let n32 = n as u32;
    let a = &lease.get::<CudaBuffer>(buf.id())?.words;
    match powers {
        None => launch::ntt_bit_reverse(k, stream, grid_1d(n), Dev::new(a), n32, log)?,
        Some(p) => launch::ntt_bit_reverse_scale(
            k,
            stream,
            grid_1d(n),
            Dev::new(a),
            Dev::new(table_words(lease, p.lo)?),
            Dev::new(table_words(lease, p.hi)?),
            n32,
            log,
            p.lo_bits,
        )?,
    }
    let twiddles = table_words(lease, tw)?;
    let inverse = u32::from(inverse);
    let mut s = 0;
    while s < log {
        let r = (log - s).min(pass_stages);
        let stages = PassStages::new(r)
            .ok_or_else(|| CudaError::Size(format!("no NTT pass of {r} stages")))?;
        launch::ntt_pass(
            k,
            stream,
            grid_1d(n >> r),
            stages,
            Dev::new(a),
            Dev::new(twiddles),
            n32,
            log,
            s,
            inverse,
        )?;
        s += r;
    }
    Ok(())
}

/// In-place NTT of `buf` over `domain`, in passes of `pass_stages` radix-2 stages.
pub fn ntt(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &mut Lease,
    buf: ScalarBuf,
    domain: &Domain,
    kind: NttKind,
    pass_stages: u32,
) -> Result<()> {
    if buf.len() != domain.size {
        return Err(crucible_core::Error::InvalidInput(format!(
            "NTT of {} points on a buffer of {}",
            domain.size,
            buf.len()
        )));
    }
    if domain.log_size > 31 {
        return Err(CudaError::Size(format!(
            "NTT 2^{} exceeds the kernels' 32-bit indices",
            domain.log_size
        ))
        .into());
    }
    if PassStages::new(pass_stages).is_none() {
        return Err(CudaError::Size(format!("no NTT pass of {pass_stages} stages")).into());
    }
    // Every transform of one point is the identity (g^0 = 1, 1/n = 1).
    if domain.size == 1 {
        return Ok(());
    }
    let tw = twiddles(stream, k, lease, domain)?;
    let run = |lease: &Lease, powers: Option<PowerTables>, inverse: bool| {
        transform(
            stream,
            k,
            lease,
            buf,
            domain,
            tw,
            powers,
            inverse,
            pass_stages,
        )
    };
    match kind {
        NttKind::Forward => run(lease, None, false),
        NttKind::Inverse => {
            run(lease, None, true)?;
            pointwise::scale(stream, k, lease, buf, domain.size_inv)
        }
        // fft(a_i g^i): the scaling rides on the bit reversal's memory pass.
        NttKind::CosetForward => {
            let powers = coset_tables(
                stream,
                k,
                lease,
                domain,
                (COSET_LO, COSET_HI),
                domain.coset_gen,
                Fr::ONE,
            )?;
            run(lease, Some(powers), false)
        }
        // ifft, then a_i *= g^-i: the tables carry the ifft's 1/n, so one pointwise pass.
        NttKind::CosetInverse => {
            let powers = coset_tables(
                stream,
                k,
                lease,
                domain,
                (COSET_INV_LO, COSET_INV_HI),
                domain.coset_gen_inv,
                domain.size_inv,
            )?;
            run(lease, None, true)?;
            let tables = (
                table_words(lease, powers.lo)?,
                table_words(lease, powers.hi)?,
                powers.lo_bits,
            );
            pointwise::scale_by_powers(stream, k, lease, buf, tables)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(plan: &MemoryPlan, item: PlanKey) -> u64 {
        plan.bytes_of(item)
    }

    #[test]
    fn power_tables_fit_their_plan_items() {
        for log in 0..=31u32 {
            let domain = Domain::with_log_size(log).unwrap();
            let mut plan = MemoryPlan::new("t");
            scratch_plan(&domain, &mut plan);
            if log == 0 {
                assert!(plan.items().is_empty(), "one point needs no table");
                continue;
            }
            // Exactly what the transforms allocate: the twiddles (n/2) and their build
            // tables (split of n/2), the coset tables of g and of g^-1 (split of n).
            let (tw_lo, tw_hi) = split(log - 1);
            let (lo, hi) = split(log);
            assert_eq!(bytes(&plan, TWIDDLES), fr_bytes(domain.size as u64 / 2));
            assert_eq!(bytes(&plan, POWERS_LO), fr_bytes(1 << tw_lo), "log {log}");
            assert_eq!(bytes(&plan, POWERS_HI), fr_bytes(1 << tw_hi), "log {log}");
            for (lo_item, hi_item) in [(COSET_LO, COSET_HI), (COSET_INV_LO, COSET_INV_HI)] {
                assert_eq!(bytes(&plan, lo_item), fr_bytes(1 << lo), "log {log}");
                assert_eq!(bytes(&plan, hi_item), fr_bytes(1 << hi), "log {log}");
            }
            assert_eq!(plan.items().len(), 7, "no other item: {plan}");
            // The split tables cover every exponent: 2^lo * 2^hi = the table's length,
            // and their seeds fit one by-value argument.
            assert_eq!(tw_lo + tw_hi, log - 1);
            assert_eq!(lo + hi, log);
            for bits in [tw_lo, tw_hi, lo, hi] {
                assert!(FrSeeds::powers_of(Fr::ONE, bits).is_some(), "log {log}");
            }
        }
    }
}
