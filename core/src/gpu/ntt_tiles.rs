//! Tile plans of a radix-2 NTT: which stages each launch of a tile kernel runs, on
//! which bits of the element index, and in which layout it reads and writes, for a GPU
//! backend whose kernels hold a tile of 2^b elements in fast local memory (CUDA shared
//! memory, WGSL workgroup memory). Pure functions; the backends turn a [`Tile`] into
//! their kernel's parameters.
//!
//! # The transform
//!
//! Decimation in time on natural-order data of 2^log_n elements: a bit reversal, then
//! stages 0 .. log_n − 1; stage s joins elements i and i + 2^s (bit s of i clear). A
//! launch of stages s .. s + k − 1 splits the index bits into the k stage bits and the
//! rest; a tile is the 2^(k + g) elements that share every bit but the stage bits and g
//! batch bits, so each stage's partner of an element lies in its tile.
//!
//! # The two plans
//!
//! - [`natural_plan`]: the data already bit-reversed (a reversal pass first, or data
//!   split over several buffers), ⌈log_n / tile_bits⌉ launches in natural layout, the
//!   stages split as evenly as possible.
//! - [`fused_plan`]: the reversal fused into the launches, no pass. A launch may read
//!   elements from other places than it writes them to only where each tile (or pair
//!   of tiles) writes the very places it read: one tile for the whole domain (read
//!   reversed), or a launch centered on the middle stages (2s + k = log_n, no batch),
//!   whose tiles the reversal maps onto each other in pairs. So the stages below it run
//!   on the data where it lies, element i at bitrev(i) ([`Layout::REVERSED`]); the
//!   centered launch reads at bitrev(i), pairs each
//!   tile with its mirror ([`Tile::partner`]) and writes at i; the stages above it run
//!   in natural order. Three launches from 2^(b+1) to about 2^(3b−1) for tiles of 2^b.
//!   [`fused_plan_with_sides`] runs the side stages in smaller tiles than the middle
//!   (a kernel whose side tiles fit one warp).
//!
//! Every plan's tiles fit 2^tile_bits elements, a paired launch's two tiles together,
//! and every stage is covered once, in order (the tests below check both, and run the
//! fused plans on the host against arkworks).

/// Where a launch's tile elements lie before and after it, and whether each tile is
/// done with its mirror.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Layout {
    /// Element of index i is read from position bitrev(i).
    pub load_reversed: bool,
    /// Element of index i is written to position bitrev(i).
    pub store_reversed: bool,
    /// Each tile is done together with its [`Tile::partner`] (both read before either
    /// is written); the two take twice one tile's local memory.
    pub paired: bool,
}

impl Layout {
    /// Natural order in and out.
    pub const NATURAL: Layout = Layout {
        load_reversed: false,
        store_reversed: false,
        paired: false,
    };
    /// Reversed in and out (the stages below a fused plan's centered launch).
    pub const REVERSED: Layout = Layout {
        load_reversed: true,
        store_reversed: true,
        paired: false,
    };
    /// Read reversed, written in natural order, one tile at a time (a whole domain in
    /// one tile).
    pub const LOAD_REVERSED: Layout = Layout {
        load_reversed: true,
        store_reversed: false,
        paired: false,
    };
    /// Read reversed, written in natural order, tiles in mirror pairs (a fused plan's
    /// centered launch).
    pub const CENTERED: Layout = Layout {
        load_reversed: true,
        store_reversed: false,
        paired: true,
    };
}

/// The flag word a tile kernel reads, one bit a choice, the same in every backend's
/// kernels (kernels/ntt.cu's `CRU_NTT_*`, shaders/ntt.wgsl's `TILE_*`): the inverse's
/// twiddles, where the scalings ride, and the tile's [`Layout`] ([`Layout::flags`]).
pub const TILE_INVERSE: u32 = 1;
/// Each result the launch stores times one constant (the inverse's 1/n).
pub const TILE_SCALE_BY_C: u32 = 2;
/// The result stored at position i times entry i of the power table (the inverse
/// coset's g^−i / n).
pub const TILE_SCALE_BY_POWERS: u32 = 4;
/// [`Layout::load_reversed`]: element i read from position bitrev(i).
pub const TILE_LOAD_REVERSED: u32 = 8;
/// [`Layout::store_reversed`]: element i written to position bitrev(i).
pub const TILE_STORE_REVERSED: u32 = 16;
/// [`Layout::paired`]: each tile done with its [`Tile::partner`].
pub const TILE_PAIRED: u32 = 32;
/// The value read from position p times entry p of the power table (the coset
/// forward's g^p, on the first launch's loads).
pub const TILE_SCALE_LOADS_BY_POWERS: u32 = 64;

impl Layout {
    /// The layout's bits of a tile kernel's flag word.
    pub fn flags(&self) -> u32 {
        let flag = |on: bool, flag: u32| if on { flag } else { 0 };
        flag(self.load_reversed, TILE_LOAD_REVERSED)
            | flag(self.store_reversed, TILE_STORE_REVERSED)
            | flag(self.paired, TILE_PAIRED)
    }
}

/// One launch of a tile kernel: stages `stage` .. `stage + stages − 1` on tiles of the
/// 2^(w1 + w2) elements whose indices differ only in bits p1 .. p1 + w1 − 1 ("range 1")
/// and p2 .. p2 + w2 − 1 ("range 2"), p1 + w1 ≤ p2. One range is the stages' bits, the
/// other the batch (empty when its width is 0): the batch lies below the stages
/// (neighbours in memory, for coalesced accesses) or, where nothing is below, above
/// them. Tile element x holds range 1 in its low w1 bits ([`Tile::index`]), so that x
/// ascends with the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tile {
    /// The first stage.
    pub stage: u32,
    /// How many stages (at least 1).
    pub stages: u32,
    /// Range 1's lowest bit.
    pub p1: u32,
    /// Range 1's width.
    pub w1: u32,
    /// Range 2's lowest bit.
    pub p2: u32,
    /// Range 2's width.
    pub w2: u32,
    /// Where the elements lie before and after the launch.
    pub layout: Layout,
}

impl Tile {
    /// log2 of the elements of one tile.
    pub fn bits(&self) -> u32 {
        self.w1 + self.w2
    }

    /// The batch as (width, lowest bit): the range that is not the stages'.
    pub fn batch(&self) -> (u32, u32) {
        if self.stages_first() {
            (self.w2, self.p2)
        } else {
            (self.w1, self.p1)
        }
    }

    /// Whether range 1 is the stages' (the batch above them, or empty).
    fn stages_first(&self) -> bool {
        self.p1 == self.stage && self.w1 == self.stages
    }

    /// The tile bit of stage `stage + j`.
    pub fn stage_bit(&self, j: u32) -> u32 {
        if self.stages_first() {
            j
        } else {
            self.w1 + j
        }
    }

    /// The element index of element x of tile b (tiles numbered by their fixed bits,
    /// in order, below range 1, between the ranges, above range 2).
    pub fn index(&self, b: u32, x: u32) -> u32 {
        let mask = |w: u32| if w >= 32 { u32::MAX } else { (1u32 << w) - 1 };
        let gap = self.p2 - self.p1 - self.w1;
        let fixed = (b & mask(self.p1))
            | (((b >> self.p1) & mask(gap)) << (self.p1 + self.w1))
            | (b.checked_shr(self.p1 + gap).unwrap_or(0) << (self.p2 + self.w2));
        fixed | ((x & mask(self.w1)) << self.p1) | (x >> self.w1).checked_shl(self.p2).unwrap_or(0)
    }

    /// The tile a centered (paired) launch does with tile b: the one whose `stage`
    /// fixed bits below the stages and `stage` above are b's, reversed (the reversal
    /// maps tile b's elements onto it).
    pub fn partner(&self, b: u32) -> u32 {
        let s = self.stage;
        if s == 0 {
            return b;
        }
        let rev = |x: u32| x.reverse_bits() >> (32 - s);
        rev(b >> s) | (rev(b & ((1 << s) - 1)) << s)
    }
}

/// `total` stages in ⌈total / most⌉ parts as equal as possible, the longer first.
pub fn split_even(total: u32, most: u32) -> impl Iterator<Item = u32> {
    let parts = total.div_ceil(most.max(1));
    (0..parts).map(move |i| total / parts + u32::from(i < total % parts))
}

/// A natural-layout launch of stages s .. s + k − 1 over 2^log_n elements in tiles of
/// at most 2^tile_bits: its batch the lowest bits below the stages that fill the tile,
/// or, with none below (s = 0), the bits just above them (its tiles are contiguous).
/// Where fewer bits are there than the tile has room for, the tile is smaller.
fn natural_tile(log_n: u32, s: u32, k: u32, tile_bits: u32, layout: Layout) -> Tile {
    let room = tile_bits - k;
    if s == 0 {
        Tile {
            stage: 0,
            stages: k,
            p1: 0,
            w1: k,
            p2: k,
            w2: room.min(log_n - k),
            layout,
        }
    } else {
        Tile {
            stage: s,
            stages: k,
            p1: 0,
            w1: room.min(s),
            p2: s,
            w2: k,
            layout,
        }
    }
}

/// The launches of stages 0 .. log_n − 1 over data already in bit-reversed order, in
/// natural layout: ⌈log_n / tile_bits⌉ launches, the stages split evenly. log_n ≥ 1,
/// tile_bits ≥ 1.
pub fn natural_plan(log_n: u32, tile_bits: u32) -> Vec<Tile> {
    let mut s = 0;
    split_even(log_n, tile_bits)
        .map(|k| {
            let tile = natural_tile(log_n, s, k, tile_bits, Layout::NATURAL);
            s += k;
            tile
        })
        .collect()
}

/// The launches of a transform of natural-order data, the reversal fused in (see the
/// module's doc), in tiles of at most 2^tile_bits; `None` where fusing takes more
/// launches than a reversal pass and [`natural_plan`] (with tiles of 2^9: 2^27 alone;
/// of 2^10: 2^30 alone), or tile_bits < 2 leaves no room for a centered launch.
pub fn fused_plan(log_n: u32, tile_bits: u32) -> Option<Vec<Tile>> {
    let plan = fused_plan_with_sides(log_n, tile_bits, tile_bits)?;
    let unfused = 1 + log_n.div_ceil(tile_bits) as usize;
    (plan.len() <= unfused).then_some(plan)
}

/// [`fused_plan`] with the stages on each side of the centered launch in tiles of at
/// most 2^side_bits: a backend whose side launches run another kernel than its paired
/// middle's, e.g. one with a warp's tiles (smaller, or larger than a small middle's). A domain of at most 2^tile_bits is one
/// launch (its kernel's choice). A plan for every size, however many launches (for a
/// backend with no reversal pass); `None` only where tile_bits < 2 leaves no room for
/// a centered launch.
pub fn fused_plan_with_sides(log_n: u32, tile_bits: u32, side_bits: u32) -> Option<Vec<Tile>> {
    if log_n <= tile_bits {
        return Some(vec![Tile {
            stage: 0,
            stages: log_n,
            p1: 0,
            w1: log_n,
            p2: log_n,
            w2: 0,
            layout: Layout::LOAD_REVERSED,
        }]);
    }
    // Paired tiles take twice the memory; log_n − mid must be even.
    let mid = if (tile_bits - 1 + log_n) % 2 == 0 {
        tile_bits - 1
    } else {
        tile_bits.checked_sub(2)?
    };
    let side = (log_n - mid) / 2;
    if mid == 0 {
        return None;
    }
    let side_bits = side_bits.max(1);
    let mut tiles = Vec::new();
    let mut s = 0;
    for k in split_even(side, side_bits) {
        // The batch at the top of i: the neighbours in memory of bitrev(i).
        let g = (side_bits - k).min(log_n - s - k);
        tiles.push(Tile {
            stage: s,
            stages: k,
            p1: s,
            w1: k,
            p2: log_n - g,
            w2: g,
            layout: Layout::REVERSED,
        });
        s += k;
    }
    tiles.push(Tile {
        stage: s,
        stages: mid,
        p1: s,
        w1: mid,
        p2: s + mid,
        w2: 0,
        layout: Layout::CENTERED,
    });
    s += mid;
    for k in split_even(side, side_bits) {
        tiles.push(natural_tile(log_n, s, k, side_bits, Layout::NATURAL));
        s += k;
    }
    Some(tiles)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Domain, Fr};
    use ark_ff::{Field, UniformRand};
    use ark_poly::EvaluationDomain;
    use ark_std::rand::{rngs::StdRng, SeedableRng};

    /// Bits of a log_n-bit index, reversed.
    fn mirror(i: u32, log_n: u32) -> u32 {
        i.reverse_bits() >> (32 - log_n)
    }

    /// The tiles of a launch's blocks: each tile alone, or in a paired launch each tile
    /// with its partner (once, by the lower of the two).
    fn blocks(t: &Tile, log_n: u32) -> Vec<Vec<u32>> {
        (0..(1u32 << (log_n - t.bits())))
            .filter_map(|b| {
                if !t.layout.paired {
                    return Some(vec![b]);
                }
                let pb = t.partner(b);
                match pb.cmp(&b) {
                    std::cmp::Ordering::Less => None,
                    std::cmp::Ordering::Equal => Some(vec![b]),
                    std::cmp::Ordering::Greater => Some(vec![b, pb]),
                }
            })
            .collect()
    }

    /// Where element i lies before (`load`) or after a launch.
    fn place(t: &Tile, i: u32, load: bool, log_n: u32) -> u32 {
        let reversed = if load {
            t.layout.load_reversed
        } else {
            t.layout.store_reversed
        };
        if reversed {
            mirror(i, log_n)
        } else {
            i
        }
    }

    /// Stages 0 .. log_n − 1 once each, in order, in tiles of at most 2^tile_bits (a
    /// pair at most that) inside the low log_n bits; the tiles of a launch partition the
    /// indices, each stage's partner of an element is in its tile, and each block writes
    /// exactly the places it read, so that none reads what another writes. The first
    /// launch reads as `reversed` says, each reads where the one before wrote, and the
    /// last writes in natural order.
    fn check_plan(tiles: &[Tile], log_n: u32, tile_bits: u32, reversed: bool) {
        let case = format!("2^{log_n} in tiles of 2^{tile_bits}: {tiles:?}");
        let mut next = 0;
        let mut reversed = reversed;
        for t in tiles {
            assert_eq!(t.stage, next, "{case}");
            next += t.stages;
            let paired = t.layout.paired;
            assert!(
                t.stages >= 1 && t.bits() + u32::from(paired) <= tile_bits,
                "{case}"
            );
            assert!(t.p1 + t.w1 <= t.p2 && t.p2 + t.w2 <= log_n, "{case}");
            let stages = if t.stages_first() {
                (t.p1, t.w1)
            } else {
                (t.p2, t.w2)
            };
            assert_eq!(stages, (t.stage, t.stages), "{case}");
            let (g, at) = t.batch();
            assert_eq!(g + t.stages, t.bits(), "{case}");
            assert!(
                g == 0 || at + g <= t.stage || at >= t.stage + t.stages,
                "{case}"
            );
            assert_eq!(t.layout.load_reversed, reversed, "{case}");
            reversed = t.layout.store_reversed;
            if paired {
                assert!(t.w2 == 0 && 2 * t.stage + t.stages == log_n, "{case}");
            }
            if log_n > 12 {
                continue;
            }
            let mut seen = vec![false; 1 << log_n];
            for tiles in blocks(t, log_n) {
                let (mut read, mut written) = (Vec::new(), Vec::new());
                for b in tiles {
                    for x in 0..(1u32 << t.bits()) {
                        let i = t.index(b, x);
                        assert!(!seen[i as usize], "{case}: {i} twice");
                        seen[i as usize] = true;
                        for j in 0..t.stages {
                            let partner = t.index(b, x ^ (1 << t.stage_bit(j)));
                            assert_eq!(partner, i ^ (1 << (t.stage + j)), "{case}");
                        }
                        read.push(place(t, i, true, log_n));
                        written.push(place(t, i, false, log_n));
                    }
                }
                read.sort_unstable();
                written.sort_unstable();
                assert_eq!(read, written, "{case}: {t:?}");
            }
            assert!(seen.iter().all(|s| *s), "{case}: {t:?}");
        }
        assert_eq!(next, log_n, "{case}");
        assert!(!reversed, "{case}");
    }

    /// Each flag is its own bit, and a layout sets exactly its own.
    #[test]
    fn tile_flags_are_distinct_bits() {
        let all = [
            TILE_INVERSE,
            TILE_SCALE_BY_C,
            TILE_SCALE_BY_POWERS,
            TILE_LOAD_REVERSED,
            TILE_STORE_REVERSED,
            TILE_PAIRED,
            TILE_SCALE_LOADS_BY_POWERS,
        ];
        assert_eq!(all.iter().fold(0, |a, f| a | f), 127);
        assert!(all.iter().all(|f| f.is_power_of_two()));
        assert_eq!(Layout::NATURAL.flags(), 0);
        assert_eq!(Layout::REVERSED.flags(), 24);
        assert_eq!(Layout::LOAD_REVERSED.flags(), 8);
        assert_eq!(Layout::CENTERED.flags(), 40);
    }

    #[test]
    fn every_plan_covers_each_stage_once_in_tiles_that_fit() {
        for log_n in 1..=26 {
            for tile_bits in 1..=10 {
                let natural = natural_plan(log_n, tile_bits);
                assert_eq!(natural.len() as u32, log_n.div_ceil(tile_bits));
                check_plan(&natural, log_n, tile_bits, false);
                if let Some(fused) = fused_plan(log_n, tile_bits) {
                    assert!(fused.len() <= natural.len() + 1, "{fused:?}");
                    check_plan(&fused, log_n, tile_bits, true);
                }
                for side_bits in 1..tile_bits + 3 {
                    if let Some(plan) = fused_plan_with_sides(log_n, tile_bits, side_bits) {
                        check_plan(&plan, log_n, tile_bits.max(side_bits), true);
                        for t in plan.iter().filter(|_| log_n > tile_bits) {
                            let most = if t.layout.paired {
                                tile_bits - 1
                            } else {
                                side_bits
                            };
                            assert!(t.bits() <= most, "{plan:?}");
                        }
                    }
                }
            }
        }
    }

    /// The plans of 2^20 and 2^24 in tiles of 2^9 and 2^10; which sizes fuse.
    #[test]
    fn the_plans_of_the_common_sizes() {
        let tile = |stage, stages, (p1, w1), (p2, w2), layout| Tile {
            stage,
            stages,
            p1,
            w1,
            p2,
            w2,
            layout,
        };
        let (rev, mid, nat) = (Layout::REVERSED, Layout::CENTERED, Layout::NATURAL);
        assert_eq!(
            fused_plan(20, 9).unwrap(),
            [
                tile(0, 6, (0, 6), (17, 3), rev),
                tile(6, 8, (6, 8), (14, 0), mid),
                tile(14, 6, (0, 3), (14, 6), nat),
            ]
        );
        assert_eq!(
            fused_plan(24, 9).unwrap(),
            [
                tile(0, 8, (0, 8), (23, 1), rev),
                tile(8, 8, (8, 8), (16, 0), mid),
                tile(16, 8, (0, 1), (16, 8), nat),
            ]
        );
        // 2^20 in tiles of 2^10, warp tiles of 2^6 on the sides: 6, 8, 6 stages.
        let warp = fused_plan_with_sides(20, 10, 6).unwrap();
        assert_eq!(warp.iter().map(|t| t.stages).collect::<Vec<_>>(), [6, 8, 6]);
        // 2^24 the same way: 4, 4, 8, 4, 4.
        let warp = fused_plan_with_sides(24, 10, 6).unwrap();
        assert_eq!(
            warp.iter().map(|t| t.stages).collect::<Vec<_>>(),
            [4, 4, 8, 4, 4]
        );
        let unfused = |bits| {
            (1..=31)
                .filter(|log| fused_plan(*log, bits).is_none())
                .collect::<Vec<u32>>()
        };
        assert_eq!(unfused(9), [27]);
        assert_eq!(unfused(10), [30]);
        // Tiles of 2^3: one launch (2^3), three (2^4 to 2^8), none (2^9), five (2^10).
        let launches = |log| fused_plan(log, 3).map(|p| p.len());
        assert_eq!(
            [3, 4, 5, 6, 7, 8, 9, 10].map(launches),
            [
                Some(1),
                Some(3),
                Some(3),
                Some(3),
                Some(3),
                Some(3),
                None,
                Some(5)
            ]
        );
    }

    /// The fused plans run on the host, a block at a time as a tile kernel runs them
    /// (its tiles read from where the elements lie, the stages, written where the
    /// layout says), give arkworks' forward transform of natural-order input.
    #[test]
    fn fused_plans_transform_natural_order() {
        let seed = crate::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        let mut centered = 0;
        for log_n in 1..=10 {
            let domain = Domain::with_log_size(log_n).unwrap();
            for tile_bits in 1..=9u32 {
                for side_bits in [tile_bits, tile_bits.div_ceil(2), tile_bits + 2] {
                    let Some(tiles) = fused_plan_with_sides(log_n, tile_bits, side_bits) else {
                        continue;
                    };
                    centered += usize::from(tiles.len() > 1);
                    let values: Vec<Fr> = (0..domain.size).map(|_| Fr::rand(&mut rng)).collect();
                    let mut data = values.clone();
                    for t in &tiles {
                        run_launch(t, log_n, domain.omega, &mut data);
                    }
                    let mut want = values;
                    domain.to_ark().fft_in_place(&mut want);
                    assert!(
                        data == want,
                        "seed {seed} (CRUCIBLE_SEED={seed} repeats it): 2^{log_n} in tiles \
                         of 2^{tile_bits}, sides 2^{side_bits}: {tiles:?}"
                    );
                }
            }
        }
        assert!(centered > 20, "{centered} plans with a centered launch");
    }

    /// One launch of `t` on the host over `data` (every read of a block before any of
    /// its writes).
    fn run_launch(t: &Tile, log_n: u32, omega: Fr, data: &mut [Fr]) {
        for tiles in blocks(t, log_n) {
            let size = 1u32 << t.bits();
            let at = |b: u32, x: u32, load: bool| place(t, t.index(b, x), load, log_n) as usize;
            let mut held: Vec<Vec<Fr>> = tiles
                .iter()
                .map(|&b| (0..size).map(|x| data[at(b, x, true)]).collect())
                .collect();
            for (&b, tile) in tiles.iter().zip(&mut held) {
                for j in 0..t.stages {
                    let (s, bit) = (t.stage + j, t.stage_bit(j));
                    for x0 in (0..size).filter(|x| x & (1 << bit) == 0) {
                        let x1 = x0 | (1 << bit);
                        let m = (t.index(b, x0) & ((1 << s) - 1)) << (log_n - 1 - s);
                        let v = tile[x1 as usize] * omega.pow([u64::from(m)]);
                        let u = tile[x0 as usize];
                        tile[x0 as usize] = u + v;
                        tile[x1 as usize] = u - v;
                    }
                }
            }
            for (&b, tile) in tiles.iter().zip(&held) {
                for x in 0..size {
                    data[at(b, x, false)] = tile[x as usize];
                }
            }
        }
    }
}
