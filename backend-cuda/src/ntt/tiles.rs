//! The NTT's tile plan: which launches run a transform's radix-2 stages, each on tiles
//! of the data that a block holds at once (kernels/ntt.cu's `ntt_tile_e4` and
//! `ntt_tile_w`), and in which layout each reads and writes. Pure planning: no device,
//! no kernel; `ntt/mod.rs` launches what this returns.
//!
//! The plan: the stages on each side of one centered, paired `ntt_tile_e4` launch of up
//! to 2^tile_bits elements, in `ntt_tile_w` launches of up to six stages (a tile of 2^6
//! a warp, shuffles between stages instead of shared memory and barriers), with the
//! bit reversal fused into the launches. 2^20 takes three launches, 2^24 five; on the
//! H200 0.301 / 4.652 ms against 0.352 / 5.050 for three `ntt_tile_e4` launches of up
//! to ten stages (BENCHMARKS.md, CUDA NTT).

/// ntt_tile_*'s layout flags (kernels/ntt.cu's CRU_NTT_*): the launch reads element i
/// at bitrev(i), writes it there, and pairs each tile with its mirror image.
pub const TILE_LOAD_REVERSED: u32 = 8;
/// See [`TILE_LOAD_REVERSED`].
pub const TILE_STORE_REVERSED: u32 = 16;
/// See [`TILE_LOAD_REVERSED`].
pub const TILE_PAIRED: u32 = 32;

/// The smallest tiles the plans use: a centered launch then has two stages or more.
pub const MIN_TILE_BITS: u32 = 4;

/// Stages of the largest `ntt_tile_w` tile (a warp's 32 threads, two elements each).
pub const WARP_TILE_BITS: u32 = 6;

/// One tile launch (kernels/ntt.cu): stages s .. s+k-1 on tiles that also span the g
/// A-index bits from `cshift` (below the stages or above them), in the layout of
/// `layout` (its LOAD_REVERSED, STORE_REVERSED and PAIRED flags), by `ntt_tile_w` when
/// `warp`, else by `ntt_tile_e4`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileLaunch {
    /// The first stage.
    pub s: u32,
    /// Stages.
    pub k: u32,
    /// Batch bits a tile spans beside its stages.
    pub g: u32,
    /// Where the batch bits start.
    pub cshift: u32,
    /// Layout flags.
    pub layout: u32,
    /// Whether `ntt_tile_w` runs it.
    pub warp: bool,
}

impl TileLaunch {
    /// log2 of the elements of its tiles.
    pub fn tile_bits(&self) -> u32 {
        self.k + self.g
    }
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

/// The launches of a transform of 2^log_n points (log_n >= 1) in `ntt_tile_e4` tiles
/// of at most 2^tile_bits, the bit reversal fused in.
///
/// Reversing the data cannot be done in place by launches that each keep to their own
/// tiles, except by a launch whose tiles map onto tiles under the reversal: one
/// centered on the middle stages, s = log_n - s - k. So the stages below that launch
/// run on the data where it lies, element i at bitrev(i) (batch bits at the top of i,
/// which are the neighbours in memory there); the centered launch does each tile with
/// its mirror image (paired blocks: both read before either is written) and writes
/// element i at i; the stages above it run in natural layout. Three launches for 2^11
/// to 2^29 (one for 2^10 or less), and the coset forward's scaling rides on the first
/// launch's reads.
fn fused_plan(log_n: u32, tile_bits: u32) -> Vec<TileLaunch> {
    let mut launches = Vec::new();
    let mut s = 0;
    if log_n <= tile_bits {
        // One block holds the domain: it reads all before it writes.
        launches.push(TileLaunch {
            s: 0,
            k: log_n,
            g: 0,
            cshift: log_n,
            layout: TILE_LOAD_REVERSED,
            warp: false,
        });
        return launches;
    }
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
    for k in split_even(side, tile_bits) {
        let (g, cshift) = batch_below(log_n, s, k, tile_bits);
        launches.push(TileLaunch {
            s,
            k,
            g,
            cshift,
            layout: 0,
            warp: false,
        });
        s += k;
    }
    launches
}

/// The launches of a transform of 2^log_n points (log_n >= 1), the middle in tiles of
/// at most 2^tile_bits.
///
/// The fused plan of [`fused_plan`] (its rules for where a launch may write), with
/// each side's stages in `ntt_tile_w` launches of at most six stages instead of
/// `ntt_tile_e4`'s ten: the centered, paired middle launch stays e4's (`ntt_tile_w`
/// does not pair). A domain of 2^6 or less is one warp launch, of up to 2^tile_bits
/// one e4 launch (one block, reading reversed). 2^20: 6, 8 (e4), 6 stages; 2^24: 4, 4,
/// 8 (e4), 4, 4: two more round trips than the fused plan's for lighter stages.
pub fn plan(log_n: u32, tile_bits: u32) -> Vec<TileLaunch> {
    let mut fused = fused_plan(log_n, tile_bits);
    let [first, .., last] = fused[..] else {
        // One launch holds the domain: the warp kernel's if its tile fits.
        fused[0].warp = log_n <= WARP_TILE_BITS;
        return fused;
    };
    let middle = fused
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
    launches
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `plan` runs every stage once, in order, in tiles the kernels take (2^6 a
    /// warp launch, 2^tile_bits an e4 launch, half when paired), each launch's blocks
    /// keeping to their own elements, and ends in natural layout.
    fn check_plan(log: u32, tile_bits: u32, plan: &[TileLaunch]) {
        let case = format!("2^{log} in tiles of 2^{tile_bits}: {plan:?}");
        let mut s = 0;
        // Where element i lies: bitrev(i) until the data is reversed.
        let mut reversed = true;
        for t in plan {
            assert_eq!(t.s, s, "{case}");
            let paired = t.layout & TILE_PAIRED != 0;
            let most = if t.warp {
                assert!(!paired, "{case}");
                WARP_TILE_BITS
            } else {
                tile_bits
            };
            assert!(
                t.k >= 1 && t.tile_bits() + u32::from(paired) <= most,
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
            s += t.k;
        }
        assert_eq!(s, log, "{case}");
        assert!(!reversed, "{case}");
    }

    fn launch(s: u32, k: u32, g: u32, cshift: u32, layout: u32, warp: bool) -> TileLaunch {
        TileLaunch {
            s,
            k,
            g,
            cshift,
            layout,
            warp,
        }
    }

    #[test]
    fn fused_plans_cover_every_stage_once_in_tiles_that_fit() {
        for tile_bits in MIN_TILE_BITS..=10 {
            for log in 1..=31u32 {
                let fused = fused_plan(log, tile_bits);
                assert!(fused.iter().all(|t| !t.warp));
                check_plan(log, tile_bits, &fused);
            }
        }
        let (rev, both) = (TILE_LOAD_REVERSED, TILE_LOAD_REVERSED | TILE_STORE_REVERSED);
        let pair = TILE_LOAD_REVERSED | TILE_PAIRED;
        assert_eq!(
            fused_plan(20, 10),
            [
                launch(0, 6, 4, 16, both, false),
                launch(6, 8, 0, 14, pair, false),
                launch(14, 6, 4, 0, 0, false)
            ]
        );
        assert_eq!(
            fused_plan(24, 10),
            [
                launch(0, 8, 2, 22, both, false),
                launch(8, 8, 0, 16, pair, false),
                launch(16, 8, 2, 0, 0, false)
            ]
        );
        assert_eq!(fused_plan(5, 10), [launch(0, 5, 0, 5, rev, false)]);
    }

    #[test]
    fn plans_cover_every_stage_once_with_warp_tiles_on_the_sides() {
        for tile_bits in MIN_TILE_BITS..=10 {
            for log in 1..=31u32 {
                let plan = plan(log, tile_bits);
                check_plan(log, tile_bits, &plan);
                // Every launch but a paired middle or one holding the domain (of more
                // than 2^6) is a warp launch, with tiles as full as the domain allows.
                for t in &plan {
                    let whole = plan.len() == 1 && log > WARP_TILE_BITS;
                    let middle = t.layout & TILE_PAIRED != 0;
                    assert_eq!(t.warp, !whole && !middle, "2^{log}: {plan:?}");
                    if t.warp {
                        assert_eq!(t.tile_bits(), log.min(WARP_TILE_BITS), "2^{log}: {plan:?}");
                    }
                }
                // The middle is the fused plan's: the same paired launch.
                let paired = |p: &[TileLaunch]| -> Vec<TileLaunch> {
                    p.iter()
                        .copied()
                        .filter(|t| t.layout & TILE_PAIRED != 0)
                        .collect()
                };
                assert_eq!(
                    paired(&plan),
                    paired(&fused_plan(log, tile_bits)),
                    "2^{log}"
                );
            }
        }
        let both = TILE_LOAD_REVERSED | TILE_STORE_REVERSED;
        let pair = TILE_LOAD_REVERSED | TILE_PAIRED;
        assert_eq!(
            plan(20, 10),
            [
                launch(0, 6, 0, 20, both, true),
                launch(6, 8, 0, 14, pair, false),
                launch(14, 6, 0, 0, 0, true)
            ]
        );
        assert_eq!(
            plan(24, 10),
            [
                launch(0, 4, 2, 22, both, true),
                launch(4, 4, 2, 22, both, true),
                launch(8, 8, 0, 16, pair, false),
                launch(16, 4, 2, 0, 0, true),
                launch(20, 4, 2, 0, 0, true)
            ]
        );
        let rev = TILE_LOAD_REVERSED;
        assert_eq!(plan(6, 10), [launch(0, 6, 0, 6, rev, true)]);
        assert_eq!(plan(9, 10), [launch(0, 9, 0, 9, rev, false)]);
    }
}
