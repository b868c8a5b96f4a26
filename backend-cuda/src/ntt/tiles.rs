//! The NTT's tile plan in the kernels' terms: core's fused plan
//! ([`crucible_core::ntt_tiles::fused_plan_with_sides`]) with its side stages in warp
//! tiles, each launch turned into the arguments of kernels/ntt.cu's `ntt_tile_w` (a
//! tile of up to 2^6 in a warp's registers, shuffles between stages) or `ntt_tile_e4`
//! (the centered, paired middle launch of up to 2^tile_bits in shared memory). 2^20
//! takes three launches (6, 8, 6 stages), 2^24 five (4, 4, 8, 4, 4); on the H200
//! 0.301 / 4.652 ms against 0.352 / 5.050 for three `ntt_tile_e4` launches of up to
//! ten stages (d32de65:BENCHMARKS.md). Pure planning: `ntt/mod.rs` launches it.

use crucible_core::ntt_tiles::{fused_plan_with_sides, Tile};

/// The smallest tiles the plans use: a centered launch then has two stages or more.
pub const MIN_TILE_BITS: u32 = 4;

/// Stages of the largest `ntt_tile_w` tile (a warp's 32 threads, two elements each).
pub const WARP_TILE_BITS: u32 = 6;

/// One tile launch (kernels/ntt.cu): stages s .. s+k-1 on tiles that also span the g
/// index bits from `cshift` (below the stages or above them), in the layout of
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

/// The launches of a transform of 2^log_n points (log_n >= 1), the middle in tiles of
/// at most 2^tile_bits (`MIN_TILE_BITS` or more), the sides in warp tiles, the bit
/// reversal fused in. A domain of 2^6 or less is one warp launch, of up to
/// 2^tile_bits one `ntt_tile_e4` launch (one block, reading reversed).
pub fn plan(log_n: u32, tile_bits: u32) -> Vec<TileLaunch> {
    let tiles = fused_plan_with_sides(log_n, tile_bits, WARP_TILE_BITS)
        .expect("tiles of 2^MIN_TILE_BITS or more leave room for a centered launch");
    let whole = tiles.len() == 1;
    tiles
        .iter()
        .map(|t: &Tile| {
            let (g, cshift) = t.batch();
            TileLaunch {
                s: t.stage,
                k: t.stages,
                g,
                cshift,
                layout: t.layout.flags(),
                warp: !t.layout.paired && (!whole || log_n <= WARP_TILE_BITS),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crucible_core::ntt_tiles::{TILE_LOAD_REVERSED, TILE_PAIRED, TILE_STORE_REVERSED};

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

    /// Every launch but a paired middle or one holding the domain (of more than 2^6) is
    /// a warp launch, with tiles as full as the domain allows; the plans of the common
    /// sizes in the default tiles.
    #[test]
    fn the_sides_run_in_full_warp_tiles() {
        for tile_bits in MIN_TILE_BITS..=10 {
            for log in 1..=31u32 {
                let plan = plan(log, tile_bits);
                for t in &plan {
                    let whole = plan.len() == 1 && log > WARP_TILE_BITS;
                    let middle = t.layout & TILE_PAIRED != 0;
                    assert_eq!(t.warp, !whole && !middle, "2^{log}: {plan:?}");
                    if t.warp {
                        assert_eq!(t.tile_bits(), log.min(WARP_TILE_BITS), "2^{log}: {plan:?}");
                    }
                }
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
