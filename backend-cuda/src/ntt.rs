//! NTTs. The transform's radix-2 stages run in a few launches of `ntt_tile_e4`, each
//! doing up to 10 stages on tiles of the data held in shared memory (one global round
//! trip per launch: three at 2^20 and at 2^24), four elements a thread in rounds of
//! two stages, with the bit reversal fused into them
//! (see [`tile_plan`]), the coset forward's scaling into the first launch's reads and
//! the inverses' into the last one's writes. `CRUCIBLE_CUDA_NTT=shared-e8` runs the
//! same plans with `ntt_tile_e8` (eight elements a thread, rounds of three stages:
//! fewer barriers but fewer warps, slower on the H200), `shared-e2` with
//! `ntt_tile_e2` (two elements a thread, tiles of up to 2^9: more warps an SM, more
//! barriers), `shared-w` the same middle launch with the stages on each side of it
//! in `ntt_tile_w` launches of up to six stages (a tile of 2^6 a warp, shuffles
//! between stages instead of shared memory and barriers; see [`warp_plan`]).
//! `CRUCIBLE_CUDA_NTT=shared-swap` runs a
//! bit-reversal pass first and the tiles after it (two launches at 2^20),
//! `CRUCIBLE_CUDA_NTT=passes` the kernels of before: the reversal, global passes of a
//! few stages each held in registers, the scaling as its own pass (A/B measurements).
//! The tables
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
use crate::launch::{self, grid_1d, grid_tile, Dev, Kernels, PassStages, TileElems};
use crate::memory::{self, alloc_words, CudaBuffer};
use crate::pointwise;
use crate::tuning::{CudaTuning, NttPath};

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
#[derive(Clone, Copy)]
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

/// How the transforms run, from the tuning overrides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NttConfig {
    /// Shared-memory tiles or global passes.
    pub path: NttPath,
    /// Radix-2 stages per global pass (the passes path).
    pub pass_stages: u32,
    /// log2 elements per shared-memory tile (the shared paths).
    pub tile_bits: u32,
}

/// The tile kernel of a shared-memory path.
fn tile_elems(path: NttPath) -> TileElems {
    match path {
        NttPath::SharedE8 => TileElems::Eight,
        NttPath::SharedE2 => TileElems::Two,
        // shared-w: e4 for its middle launch (the sides' ntt_tile_w is per launch).
        NttPath::Shared | NttPath::SharedW | NttPath::SharedSwap | NttPath::Passes => {
            TileElems::Four
        }
    }
}

/// The configuration `tuning` asks for: by default the shared-memory tiles of
/// `ntt_tile_e4`, each as large as its kernel takes.
///
/// Elements per tile (log2) unless `CRUCIBLE_CUDA_NTT_TILE_BITS` says otherwise: the
/// kernel's most (2^10 for `ntt_tile_e8`, 32 KiB of dynamic shared memory and 128
/// threads; 2^10 for `ntt_tile_e4`, 2^9 for `ntt_tile_e2`: 33 or 17 KiB of static
/// shared memory, 256 threads). A launch costs one global round trip of the data, so
/// fewer, fuller tiles are fewer round trips: 2^20 and 2^24 are three launches each.
pub fn config(tuning: &CudaTuning) -> NttConfig {
    // Warp tiles on each side of e4's paired middle: on the H200 0.301 / 4.652 ms at
    // 2^20 / 2^24 against e4's 0.352 / 5.050 (sixteenth session). e4, not e8, for the
    // middle: e8 took 0.385 / 6.24 against e4's 0.358 / 5.05 (twelfth session).
    let path = tuning.ntt_path.unwrap_or(NttPath::SharedW);
    NttConfig {
        path,
        pass_stages: pass_stages(tuning),
        tile_bits: tuning
            .ntt_tile_bits
            .unwrap_or(tile_elems(path).max_tile_bits()),
    }
}

/// The smallest tiles the plans use: a centered launch then has two stages or more.
const MIN_TILE_BITS: u32 = 4;

/// ntt_tile_e*'s flags (kernels/ntt.cu's CRU_NTT_*).
const TILE_INVERSE: u32 = 1;
const TILE_SCALE_BY_C: u32 = 2;
const TILE_SCALE_BY_POWERS: u32 = 4;
const TILE_LOAD_REVERSED: u32 = 8;
const TILE_STORE_REVERSED: u32 = 16;
const TILE_PAIRED: u32 = 32;
const TILE_SCALE_LOADS_BY_POWERS: u32 = 64;

/// One `ntt_tile_e*` launch (kernels/ntt.cu): stages s .. s+k-1 on tiles that also span
/// the g A-index bits from `cshift` (below the stages or above them), in the layout
/// of `layout` (its LOAD_REVERSED, STORE_REVERSED and PAIRED flags), by `ntt_tile_w`
/// when `warp`, else by the path's kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TileLaunch {
    s: u32,
    k: u32,
    g: u32,
    cshift: u32,
    layout: u32,
    warp: bool,
}

impl TileLaunch {
    /// log2 of the elements of its tiles.
    fn tile_bits(&self) -> u32 {
        self.k + self.g
    }
}

/// How a transform's stages run on the shared-memory path.
#[derive(Debug, PartialEq, Eq)]
struct TilePlan {
    /// A bit-reversal pass first (else the first launch reads the data reversed).
    swap: bool,
    launches: Vec<TileLaunch>,
}

/// `total` stages in ceil(total / most) parts as equal as possible, the longer first.
fn split_even(total: u32, most: u32) -> impl Iterator<Item = u32> {
    let parts = total.div_ceil(most);
    (0..parts).map(move |i| total / parts + u32::from(i < total % parts))
}

/// The batch (g, cshift) of a launch of stages s .. s+k-1 in natural layout: the lowest
/// bits below its stages (its neighbours in memory, for coalesced accesses) that fill
/// the tile, or, with none below, those just above (its groups are contiguous
/// already). Where fewer bits are below than the tile has room for, the tile is smaller.
fn batch_below(log_n: u32, s: u32, k: u32, tile_bits: u32) -> (u32, u32) {
    let room = tile_bits - k;
    if s >= room {
        (room, 0)
    } else if s == 0 {
        (room.min(log_n - k), k)
    } else {
        (s, 0)
    }
}

/// The launches of a transform of 2^log_n points (log_n >= 1) in tiles of at most
/// 2^tile_bits (see [`TilePlan`]).
///
/// `swap`: the bit-reversal pass, then ceil(log_n / tile_bits) launches in natural
/// layout, the stages split as evenly as possible.
///
/// Fused (no pass): reversing the data cannot be done in place by launches that each
/// keep to their own tiles, except by a launch whose tiles map onto tiles under the
/// reversal: one centered on the middle stages, s = log_n - s - k. So the stages
/// below that launch run on the data where it lies, element i at bitrev(i) (batch bits
/// at the top of i, which are the neighbours in memory there); the centered launch
/// does each tile with its mirror image (paired blocks: both read before either is
/// written) and writes element i at i; the stages above it run in natural layout.
/// Three launches for 2^11 to 2^29 (one for 2^10 or less): one round trip fewer than
/// the pass and three launches at 2^24, the same as the pass and two at 2^20, and the
/// coset forward's scaling rides on the first launch's reads.
fn tile_plan(log_n: u32, tile_bits: u32, swap: bool) -> TilePlan {
    let mut launches = Vec::new();
    let mut s = 0;
    let natural = |launches: &mut Vec<TileLaunch>, s: &mut u32, total: u32| {
        for k in split_even(total, tile_bits) {
            let (g, cshift) = batch_below(log_n, *s, k, tile_bits);
            launches.push(TileLaunch {
                s: *s,
                k,
                g,
                cshift,
                layout: 0,
                warp: false,
            });
            *s += k;
        }
    };
    if swap {
        natural(&mut launches, &mut s, log_n);
    } else if log_n <= tile_bits {
        // One block holds the domain: it reads all before it writes.
        launches.push(TileLaunch {
            s: 0,
            k: log_n,
            g: 0,
            cshift: log_n,
            layout: TILE_LOAD_REVERSED,
            warp: false,
        });
    } else {
        // Paired tiles take twice the shared memory; log_n - mid must be even.
        let mid = if (tile_bits - 1 + log_n) % 2 == 0 {
            tile_bits - 1
        } else {
            tile_bits - 2
        };
        let side = (log_n - mid) / 2;
        for k in split_even(side, tile_bits) {
            let g = (tile_bits - k).min(log_n - s - k);
            launches.push(TileLaunch {
                s,
                k,
                g,
                cshift: log_n - g,
                layout: TILE_LOAD_REVERSED | TILE_STORE_REVERSED,
                warp: false,
            });
            s += k;
        }
        launches.push(TileLaunch {
            s,
            k: mid,
            g: 0,
            cshift: s + mid,
            layout: TILE_LOAD_REVERSED | TILE_PAIRED,
            warp: false,
        });
        s += mid;
        natural(&mut launches, &mut s, side);
    }
    TilePlan { swap, launches }
}

/// Stages of the largest `ntt_tile_w` tile.
const WARP_TILE_BITS: u32 = 6;

/// The launches of `shared-w` over 2^log_n points (log_n >= 1), the middle in tiles of
/// at most 2^tile_bits.
///
/// The fused plan of [`tile_plan`] (its rules for where a launch may write), with
/// each side's stages in `ntt_tile_w` launches of at most six stages instead of
/// `ntt_tile_e4`'s ten: the centered, paired middle launch stays e4's (`ntt_tile_w`
/// does not pair). A domain of 2^6 or less is one warp
/// launch, of up to 2^tile_bits one e4 launch (one block, reading reversed). 2^20: 6,
/// 8 (e4), 6 stages; 2^24: 4, 4, 8 (e4), 4, 4: two more round trips than e4's plan
/// for lighter stages.
fn warp_plan(log_n: u32, tile_bits: u32) -> TilePlan {
    let mut plan = tile_plan(log_n, tile_bits, false);
    let [first, .., last] = plan.launches[..] else {
        // One launch holds the domain: the warp kernel's if its tile fits.
        plan.launches[0].warp = log_n <= WARP_TILE_BITS;
        return plan;
    };
    let middle = plan
        .launches
        .iter()
        .copied()
        .find(|t| t.layout & TILE_PAIRED != 0)
        .expect("a fused plan of more than one launch is centered on a paired one");
    let side = middle.s;
    let mut launches = Vec::new();
    let mut s = 0;
    for k in split_even(side, WARP_TILE_BITS) {
        let g = (WARP_TILE_BITS - k).min(log_n - s - k);
        launches.push(TileLaunch {
            s,
            k,
            g,
            cshift: log_n - g,
            layout: first.layout,
            warp: true,
        });
        s += k;
    }
    launches.push(middle);
    s += middle.k;
    for k in split_even(log_n - s, WARP_TILE_BITS) {
        let (g, cshift) = batch_below(log_n, s, k, WARP_TILE_BITS);
        launches.push(TileLaunch {
            s,
            k,
            g,
            cshift,
            layout: last.layout,
            warp: true,
        });
        s += k;
    }
    TilePlan {
        swap: false,
        launches,
    }
}

/// What the last stage's results are multiplied by: nothing, a constant (1/n), or
/// powers from split tables (g^-i / n).
#[derive(Clone, Copy)]
enum FinalScale {
    None,
    Constant(Fr),
    Powers(PowerTables),
}

/// Bit reversal (scaling a[i] by g^i on the way when `powers` are given).
fn bit_reverse(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &Lease,
    buf: ScalarBuf,
    domain: &Domain,
    powers: Option<PowerTables>,
) -> Result<()> {
    let (n, log) = (domain.size, domain.log_size);
    let a = &lease.get::<CudaBuffer>(buf.id())?.words;
    match powers {
        None => launch::ntt_bit_reverse(k, stream, grid_1d(n), Dev::new(a), n as u32, log)?,
        Some(p) => launch::ntt_bit_reverse_scale(
            k,
            stream,
            grid_1d(n),
            Dev::new(a),
            Dev::new(table_words(lease, p.lo)?),
            Dev::new(table_words(lease, p.hi)?),
            n as u32,
            log,
            p.lo_bits,
        )?,
    }
    Ok(())
}

/// The stages as global passes of `pass_stages` each, then the final scaling as its
/// own pointwise pass.
#[allow(clippy::too_many_arguments)]
fn passes(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &Lease,
    buf: ScalarBuf,
    domain: &Domain,
    tw: BufferId,
    inverse: bool,
    scale: FinalScale,
    pass_stages: u32,
) -> Result<()> {
    let (n, log) = (domain.size, domain.log_size);
    let a = &lease.get::<CudaBuffer>(buf.id())?.words;
    let twiddles = table_words(lease, tw)?;
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
            n as u32,
            log,
            s,
            u32::from(inverse),
        )?;
        s += r;
    }
    match scale {
        FinalScale::None => Ok(()),
        FinalScale::Constant(c) => pointwise::scale(stream, k, lease, buf, c),
        FinalScale::Powers(p) => {
            let tables = (
                table_words(lease, p.lo)?,
                table_words(lease, p.hi)?,
                p.lo_bits,
            );
            pointwise::scale_by_powers(stream, k, lease, buf, tables)
        }
    }
}

/// The stages as the `ntt_tile_e*` launches of `plan` (threads of `elems` elements),
/// the coset forward's scaling by `first` fused into the first one's reads (fused
/// plans; a swap plan's pass did it), the final scaling into the last one's writes.
#[allow(clippy::too_many_arguments)]
fn tiles(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &Lease,
    buf: ScalarBuf,
    domain: &Domain,
    tw: BufferId,
    inverse: bool,
    (first, last): (Option<PowerTables>, FinalScale),
    (plan, path_elems): (&TilePlan, TileElems),
) -> Result<()> {
    let log = domain.log_size;
    let a = &lease.get::<CudaBuffer>(buf.id())?.words;
    let twiddles = table_words(lease, tw)?;
    // Unused table arguments (no scaling by powers) point at the twiddles: never read.
    let (mut first_flags, mut last_flags, mut c, mut tables) = (0, 0, Fr::ONE, None);
    if let (Some(p), false) = (first, plan.swap) {
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
    let count = plan.launches.len();
    for (i, t) in plan.launches.iter().enumerate() {
        let mut flags = t.layout | if inverse { TILE_INVERSE } else { 0 };
        if i == 0 {
            flags |= first_flags;
        }
        if i + 1 == count {
            flags |= last_flags;
        }
        let elems = if t.warp { TileElems::Warp } else { path_elems };
        launch::ntt_tile(
            k,
            stream,
            grid_tile(log, t.tile_bits(), t.layout & TILE_PAIRED != 0, elems),
            elems,
            Dev::new(a),
            Dev::new(twiddles),
            Dev::new(lo),
            Dev::new(hi),
            FrArg::new(c),
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

/// In-place NTT of `buf` over `domain`, by the path and sizes of `config`.
pub fn ntt(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lease: &mut Lease,
    buf: ScalarBuf,
    domain: &Domain,
    kind: NttKind,
    config: NttConfig,
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
    if PassStages::new(config.pass_stages).is_none() {
        return Err(
            CudaError::Size(format!("no NTT pass of {} stages", config.pass_stages)).into(),
        );
    }
    let elems = tile_elems(config.path);
    if !(MIN_TILE_BITS..=elems.max_tile_bits()).contains(&config.tile_bits) {
        return Err(CudaError::Size(format!(
            "no NTT tile of 2^{} elements ({:?} takes 2^{} to 2^{})",
            config.tile_bits,
            config.path,
            MIN_TILE_BITS,
            elems.max_tile_bits()
        ))
        .into());
    }
    // Every transform of one point is the identity (g^0 = 1, 1/n = 1).
    if domain.size == 1 {
        return Ok(());
    }
    let tw = twiddles(stream, k, lease, domain)?;
    // fft(a_i g^i): the scaling rides on the bit reversal's memory pass. The coset
    // inverse is ifft then a_i *= g^-i, its tables carrying the ifft's 1/n.
    let (first, last) = match kind {
        NttKind::Forward => (None, FinalScale::None),
        NttKind::Inverse => (None, FinalScale::Constant(domain.size_inv)),
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
    let plan = match config.path {
        NttPath::Passes => None,
        NttPath::SharedE8 | NttPath::Shared | NttPath::SharedE2 => {
            Some(tile_plan(domain.log_size, config.tile_bits, false))
        }
        NttPath::SharedSwap => Some(tile_plan(domain.log_size, config.tile_bits, true)),
        NttPath::SharedW => Some(warp_plan(domain.log_size, config.tile_bits)),
    };
    if plan.as_ref().is_none_or(|p| p.swap) {
        bit_reverse(stream, k, lease, buf, domain, first)?;
    }
    match plan {
        None => passes(
            stream,
            k,
            lease,
            buf,
            domain,
            tw,
            inverse,
            last,
            config.pass_stages,
        ),
        Some(plan) => tiles(
            stream,
            k,
            lease,
            buf,
            domain,
            tw,
            inverse,
            (first, last),
            (&plan, elems),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(plan: &MemoryPlan, item: PlanKey) -> u64 {
        plan.bytes_of(item)
    }

    /// Whether `plan` runs every stage once, in order, in tiles the kernel takes, each
    /// launch's blocks keeping to their own elements, and ends in natural layout.
    fn check_plan(log: u32, tile_bits: u32, plan: &TilePlan, elems: TileElems) {
        let case = format!("2^{log} in tiles of 2^{tile_bits}: {plan:?}");
        let mut s = 0;
        // Where element i lies: bitrev(i) until the data is reversed.
        let mut reversed = !plan.swap;
        for t in &plan.launches {
            assert_eq!(t.s, s, "{case}");
            let paired = t.layout & TILE_PAIRED != 0;
            let (elems, tile_bits) = if t.warp {
                assert!(!paired, "{case}");
                (TileElems::Warp, TileElems::Warp.max_tile_bits())
            } else {
                (elems, tile_bits)
            };
            assert!(
                t.k >= 1 && t.tile_bits() + u32::from(paired) <= tile_bits,
                "{case}"
            );
            assert!(t.tile_bits() <= log, "{case}");
            // The batch bits apart from the stages.
            let below = t.cshift + t.g <= t.s;
            let above = t.cshift == t.s + t.k && t.cshift + t.g <= log;
            let top = t.cshift >= t.s + t.k && t.cshift + t.g == log;
            assert!(below || above || top, "{case}");
            assert_eq!(t.layout & TILE_LOAD_REVERSED != 0, reversed, "{case}");
            let store_reversed = t.layout & TILE_STORE_REVERSED != 0;
            if reversed && !store_reversed {
                // A layout change: one block holds all, or mirror tiles are paired.
                let centered = t.g == 0 && 2 * t.s + t.k == log;
                assert!(t.tile_bits() == log || (paired && centered), "{case}");
            }
            assert!(!store_reversed || reversed, "{case}");
            reversed = store_reversed;
            let grid = grid_tile(log, t.tile_bits(), paired, elems);
            let most = match elems {
                TileElems::Eight | TileElems::Warp => 128,
                TileElems::Four | TileElems::Two => 256,
            };
            assert!(grid.block_dim.0 <= most && grid.grid_dim.0 >= 1, "{case}");
            s += t.k;
        }
        assert_eq!(s, log, "{case}");
        assert!(!reversed, "{case}");
    }

    #[test]
    fn tile_plans_cover_every_stage_once_in_tiles_that_fit() {
        for elems in [TileElems::Eight, TileElems::Four, TileElems::Two] {
            for tile_bits in MIN_TILE_BITS..=elems.max_tile_bits() {
                for log in 1..=31u32 {
                    let swap = tile_plan(log, tile_bits, true);
                    check_plan(log, tile_bits, &swap, elems);
                    assert!(swap.swap);
                    assert_eq!(swap.launches.len() as u32, log.div_ceil(tile_bits));
                    let fused = tile_plan(log, tile_bits, false);
                    check_plan(log, tile_bits, &fused, elems);
                    assert!(!fused.swap);
                }
            }
        }
        let launch = |s, k, g, cshift, layout| TileLaunch {
            s,
            k,
            g,
            cshift,
            layout,
            warp: false,
        };
        let (rev, both) = (TILE_LOAD_REVERSED, TILE_LOAD_REVERSED | TILE_STORE_REVERSED);
        let pair = TILE_LOAD_REVERSED | TILE_PAIRED;
        // The sizes the targets name: three launches, full tiles.
        assert_eq!(
            tile_plan(20, 10, false).launches,
            [
                launch(0, 6, 4, 16, both),
                launch(6, 8, 0, 14, pair),
                launch(14, 6, 4, 0, 0)
            ]
        );
        assert_eq!(
            tile_plan(24, 10, false).launches,
            [
                launch(0, 8, 2, 22, both),
                launch(8, 8, 0, 16, pair),
                launch(16, 8, 2, 0, 0)
            ]
        );
        assert_eq!(
            tile_plan(20, 10, true).launches,
            [launch(0, 10, 0, 0, 0), launch(10, 10, 0, 0, 0)]
        );
        assert_eq!(
            tile_plan(24, 10, true).launches,
            [
                launch(0, 8, 2, 8, 0),
                launch(8, 8, 2, 0, 0),
                launch(16, 8, 2, 0, 0)
            ]
        );
        assert_eq!(tile_plan(5, 10, false).launches, [launch(0, 5, 0, 5, rev)]);
        // ntt_tile_e2's tiles of 2^9: three launches too.
        assert_eq!(
            tile_plan(20, 9, false).launches,
            [
                launch(0, 6, 3, 17, both),
                launch(6, 8, 0, 14, pair),
                launch(14, 6, 3, 0, 0)
            ]
        );
        assert_eq!(
            tile_plan(24, 9, false).launches,
            [
                launch(0, 8, 1, 23, both),
                launch(8, 8, 0, 16, pair),
                launch(16, 8, 1, 0, 0)
            ]
        );
    }

    #[test]
    fn warp_plans_cover_every_stage_once_with_warp_tiles_on_the_sides() {
        for tile_bits in MIN_TILE_BITS..=TileElems::Four.max_tile_bits() {
            for log in 1..=31u32 {
                let plan = warp_plan(log, tile_bits);
                check_plan(log, tile_bits, &plan, TileElems::Four);
                assert!(!plan.swap);
                // Every launch but a paired middle or one holding the domain (of more
                // than 2^6) is a warp launch, with tiles as full as the domain allows.
                for t in &plan.launches {
                    let whole = plan.launches.len() == 1 && log > WARP_TILE_BITS;
                    let middle = t.layout & TILE_PAIRED != 0;
                    assert_eq!(t.warp, !whole && !middle, "2^{log}: {plan:?}");
                    if t.warp {
                        assert_eq!(t.tile_bits(), log.min(WARP_TILE_BITS), "2^{log}: {plan:?}");
                    }
                }
                // The middle is the fused plan's: the same paired launch.
                let fused = tile_plan(log, tile_bits, false);
                let paired = |p: &TilePlan| -> Vec<TileLaunch> {
                    p.launches
                        .iter()
                        .copied()
                        .filter(|t| t.layout & TILE_PAIRED != 0)
                        .collect()
                };
                assert_eq!(paired(&plan), paired(&fused), "2^{log}");
            }
        }
        let launch = |s, k, g, cshift, layout, warp| TileLaunch {
            s,
            k,
            g,
            cshift,
            layout,
            warp,
        };
        let both = TILE_LOAD_REVERSED | TILE_STORE_REVERSED;
        let pair = TILE_LOAD_REVERSED | TILE_PAIRED;
        assert_eq!(
            warp_plan(20, 10).launches,
            [
                launch(0, 6, 0, 20, both, true),
                launch(6, 8, 0, 14, pair, false),
                launch(14, 6, 0, 0, 0, true)
            ]
        );
        assert_eq!(
            warp_plan(24, 10).launches,
            [
                launch(0, 4, 2, 22, both, true),
                launch(4, 4, 2, 22, both, true),
                launch(8, 8, 0, 16, pair, false),
                launch(16, 4, 2, 0, 0, true),
                launch(20, 4, 2, 0, 0, true)
            ]
        );
        let rev = TILE_LOAD_REVERSED;
        assert_eq!(warp_plan(6, 10).launches, [launch(0, 6, 0, 6, rev, true)]);
        assert_eq!(warp_plan(9, 10).launches, [launch(0, 9, 0, 9, rev, false)]);
        let with = |path| CudaTuning {
            ntt_path: Some(path),
            ..CudaTuning::default()
        };
        assert_eq!(config(&with(NttPath::SharedW)).tile_bits, 10);
    }

    #[test]
    fn each_path_defaults_to_the_largest_tile_of_its_kernel() {
        let with = |path| CudaTuning {
            ntt_path: Some(path),
            ..CudaTuning::default()
        };
        assert_eq!(config(&CudaTuning::default()).tile_bits, 10);
        assert_eq!(config(&CudaTuning::default()).path, NttPath::SharedW);
        assert_eq!(config(&with(NttPath::Shared)).tile_bits, 10);
        assert_eq!(config(&with(NttPath::SharedE2)).tile_bits, 9);
        assert_eq!(config(&with(NttPath::SharedSwap)).tile_bits, 10);
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
