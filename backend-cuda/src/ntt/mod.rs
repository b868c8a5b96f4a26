//! NTTs. The transform's radix-2 stages run in the launches of the tile plan
//! (`tiles.rs`): `ntt_tile_w` launches of up to six stages on each side of one
//! centered `ntt_tile_e4` launch of up to 10 stages, each on tiles of the data held in
//! a warp's registers or in shared memory (one global round trip per launch: three at
//! 2^20, five at 2^24), with the bit reversal fused into them, the coset forward's
//! scaling into the first launch's reads and the inverses' into the last one's writes.
//! The tables (twiddles, coset powers) are built on the device from a few
//! host-computed powers the first time a lease transforms over a domain, then kept in
//! the lease for every later transform; constants go to the kernels by value. A warm
//! transform is only its own launches: no allocation, no copy.

mod tiles;

use std::sync::Arc;

use crucible_core::ntt_tiles::{
    TILE_INVERSE, TILE_PAIRED, TILE_SCALE_BY_C, TILE_SCALE_BY_POWERS, TILE_SCALE_LOADS_BY_POWERS,
};
use crucible_core::{BufferId, Domain, Lease, MemoryPlan, NttKind, PlanKey, Result, ScalarBuf};
use cudarc::driver::{CudaSlice, CudaStream};

use crate::error::CudaError;
use crate::field::{DeviceScalar, FrArg, FrSeeds, FR_WORDS};
use crate::launch::{self, grid_1d, grid_tile, Dev, Kernels, TileElems};
use crate::memory::{self, alloc_words, CudaBuffer};
use tiles::{TileLaunch, MIN_TILE_BITS};

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
    // The element its powers are of, as its words (a coset table for another offset
    // is rebuilt).
    base: FrArg,
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
pub fn scratch_plan<F>(domain: &Domain<F>, plan: &mut MemoryPlan) {
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
    (log, base): (u32, FrArg),
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
fn launch_powers<F: DeviceScalar>(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    out: &CudaSlice<u32>,
    g: F,
    first: F,
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
fn twiddles<F: DeviceScalar>(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &mut Lease,
    domain: &Domain<F>,
) -> Result<BufferId> {
    let half = domain.size / 2;
    kept_table(
        stream,
        lease,
        TWIDDLES,
        (domain.log_size, FrArg::new(domain.omega)),
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
fn build_twiddles<F: DeviceScalar>(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &Lease,
    domain: &Domain<F>,
    tw: BufferId,
    (lo, hi): (BufferId, BufferId),
) -> Result<()> {
    let (lo_bits, hi_bits) = split(domain.log_size - 1);
    let lo_t = &lease.get::<CudaBuffer>(lo)?.words;
    let hi_t = &lease.get::<CudaBuffer>(hi)?.words;
    launch_powers(stream, k, lo_t, domain.omega, F::ONE, lo_bits)?;
    let omega_hi = domain.omega.pow([1u64 << lo_bits]);
    launch_powers(stream, k, hi_t, omega_hi, F::ONE, hi_bits)?;
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
#[derive(Clone, Copy)]
struct PowerTables {
    lo: BufferId,
    hi: BufferId,
    lo_bits: u32,
}

/// The [`PowerTables`] of `first * g^i` for `domain`, kept in items `lo_item` and
/// `hi_item` (built at the lease's first use).
fn coset_tables<F: DeviceScalar>(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &mut Lease,
    domain: &Domain<F>,
    (lo_item, hi_item): (PlanKey, PlanKey),
    g: F,
    first: F,
) -> Result<PowerTables> {
    let log = domain.log_size;
    let (lo_bits, hi_bits) = split(log);
    let lo = kept_table(
        stream,
        lease,
        lo_item,
        (log, FrArg::new(g)),
        1 << lo_bits,
        |lease, id| launch_powers(stream, k, table_words(lease, id)?, g, first, lo_bits),
    )?;
    let g_hi = g.pow([1u64 << lo_bits]);
    let hi = kept_table(
        stream,
        lease,
        hi_item,
        (log, FrArg::new(g)),
        1 << hi_bits,
        |lease, id| launch_powers(stream, k, table_words(lease, id)?, g_hi, F::ONE, hi_bits),
    )?;
    Ok(PowerTables { lo, hi, lo_bits })
}

/// What the last stage's results are multiplied by: nothing, a constant (1/n), or
/// powers from split tables (g^-i / n).
#[derive(Clone, Copy)]
enum FinalScale {
    None,
    Constant(FrArg),
    Powers(PowerTables),
}

/// The stages as the tile launches of `plan`, the coset forward's scaling by `first`
/// fused into the first one's reads, the final scaling into the last one's writes.
#[allow(clippy::too_many_arguments)]
fn tiles<F: DeviceScalar>(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &Lease,
    buf: ScalarBuf,
    domain: &Domain<F>,
    tw: BufferId,
    inverse: bool,
    (first, last): (Option<PowerTables>, FinalScale),
    plan: &[TileLaunch],
) -> Result<()> {
    let log = domain.log_size;
    let a = &lease.get::<CudaBuffer>(buf.id())?.words;
    let twiddles = table_words(lease, tw)?;
    // Unused table arguments (no scaling by powers) point at the twiddles: never read.
    let (mut first_flags, mut last_flags, mut c, mut tables) = (0, 0, FrArg::new(F::ONE), None);
    if let Some(p) = first {
        first_flags = TILE_SCALE_LOADS_BY_POWERS;
        tables = Some(p);
    }
    match last {
        FinalScale::None => {}
        FinalScale::Constant(v) => (last_flags, c) = (TILE_SCALE_BY_C, v),
        FinalScale::Powers(p) => (last_flags, tables) = (TILE_SCALE_BY_POWERS, Some(p)),
    }
    let (lo, hi, lo_bits) = match tables {
        Some(p) => (
            table_words(lease, p.lo)?,
            table_words(lease, p.hi)?,
            p.lo_bits,
        ),
        None => (twiddles, twiddles, 0),
    };
    let count = plan.len();
    for (i, t) in plan.iter().enumerate() {
        let mut flags = t.layout | if inverse { TILE_INVERSE } else { 0 };
        if i == 0 {
            flags |= first_flags;
        }
        if i + 1 == count {
            flags |= last_flags;
        }
        let elems = launch_elems(t);
        launch::ntt_tile(
            k,
            stream,
            grid_tile(log, t.tile_bits(), t.layout & TILE_PAIRED != 0, elems),
            elems,
            Dev::new(a),
            Dev::new(twiddles),
            Dev::new(lo),
            Dev::new(hi),
            c,
            log,
            t.s,
            t.k,
            t.g,
            t.cshift,
            flags,
            lo_bits,
        )?;
    }
    Ok(())
}

/// The kernel of launch `t`.
fn launch_elems(t: &TileLaunch) -> TileElems {
    if t.warp {
        TileElems::Warp
    } else {
        TileElems::Four
    }
}

/// In-place NTT of `buf` over `domain`, the middle launch in tiles of 2^`tile_bits`.
#[allow(clippy::too_many_arguments)]
pub fn ntt<F: DeviceScalar>(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &mut Lease,
    buf: ScalarBuf,
    domain: &Domain<F>,
    kind: NttKind,
    tile_bits: u32,
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
    let most = TileElems::Four.max_tile_bits();
    if !(MIN_TILE_BITS..=most).contains(&tile_bits) {
        return Err(CudaError::Size(format!(
            "no NTT tile of 2^{tile_bits} elements (ntt_tile_e4 takes 2^{MIN_TILE_BITS} to 2^{most})"
        ))
        .into());
    }
    // Every transform of one point is the identity (g^0 = 1, 1/n = 1).
    if domain.size == 1 {
        return Ok(());
    }
    let tw = twiddles(stream, k, lease, domain)?;
    // fft(a_i g^i): the scaling rides on the first launch's reads. The coset inverse is
    // ifft then a_i *= g^-i, its tables carrying the ifft's 1/n.
    let (first, last) = match kind {
        NttKind::Forward => (None, FinalScale::None),
        NttKind::Inverse => (None, FinalScale::Constant(FrArg::new(domain.size_inv))),
        NttKind::CosetForward => {
            let powers = coset_tables(
                stream,
                k,
                lease,
                domain,
                (COSET_LO, COSET_HI),
                domain.coset_gen,
                F::ONE,
            )?;
            (Some(powers), FinalScale::None)
        }
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
            (None, FinalScale::Powers(powers))
        }
    };
    let inverse = matches!(kind, NttKind::Inverse | NttKind::CosetInverse);
    let plan = tiles::plan(domain.log_size, tile_bits);
    tiles(
        stream,
        k,
        lease,
        buf,
        domain,
        tw,
        inverse,
        (first, last),
        &plan,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ff::Field;
    use crucible_core::Fr;

    fn bytes(plan: &MemoryPlan, item: PlanKey) -> u64 {
        plan.bytes_of(item)
    }

    /// The planner's warp tiles are ntt_tile_w's, its tiles within ntt_tile_e4's, and
    /// every launch of every plan fits its kernel's blocks.
    #[test]
    fn every_planned_launch_fits_its_kernel() {
        assert_eq!(tiles::WARP_TILE_BITS, TileElems::Warp.max_tile_bits());
        assert_eq!(
            crate::tuning::DEFAULT_NTT_TILE_BITS,
            TileElems::Four.max_tile_bits()
        );
        for tile_bits in MIN_TILE_BITS..=TileElems::Four.max_tile_bits() {
            for log in 1..=31u32 {
                for t in tiles::plan(log, tile_bits) {
                    let elems = launch_elems(&t);
                    let paired = t.layout & TILE_PAIRED != 0;
                    assert!(t.tile_bits() + u32::from(paired) <= elems.max_tile_bits());
                    let grid = grid_tile(log, t.tile_bits(), paired, elems);
                    let most = match elems {
                        TileElems::Warp => 128,
                        TileElems::Four => 256,
                    };
                    assert!(
                        grid.block_dim.0 <= most && grid.grid_dim.0 >= 1,
                        "2^{log}, tiles of 2^{tile_bits}: {t:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn power_tables_fit_their_plan_items() {
        for log in 0..=31u32 {
            let domain = Domain::<Fr>::with_log_size(log).unwrap();
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
