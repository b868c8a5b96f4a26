//! The shape of the "tree" reduction (kernels/msm.cu steps 6-7 "tree"): its launches,
//! their blocks and records, and the points each of its two buffers holds. Both the
//! plan (layout.rs) and the launches (reduce.rs) read it from here.
//!
//! Step 6 turns each window's S segments into S / T1 records of `1 + log2 T1` plain
//! items and a total; each step-7 pass sums T records into one, adding `log2 T` bit
//! items, until one record is left: `1 + log2 S` items, G and U_0 .. U_{log2 S - 1}.

use crate::field::Group;

/// Bytes of shared memory one reduction block declares: two points a thread
/// (msm.cu's `CRU_REDUCE_SHARED_BYTES`, which a test compares).
pub const REDUCE_SHARED_BYTES: usize = 49152;

/// The most threads a reduction block of `group` has (msm.cu's `msm_reduce_tile`):
/// 128 for G1, 64 for G2.
pub fn tile(group: Group) -> u32 {
    tile_of(group.xyzz_words())
}

/// The largest power of two of threads whose two points of `xyzz_words` words each fit
/// in [`REDUCE_SHARED_BYTES`]: every step-7 block is a power of two. BLS12-381's points
/// fill the bytes exactly; BN254's (32 and 64 words) would fit 192 and 96 threads.
fn tile_of(xyzz_words: usize) -> u32 {
    let fit = (REDUCE_SHARED_BYTES / (2 * 4 * xyzz_words)) as u32;
    1 << fit.ilog2()
}

/// One launch of the reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pass {
    /// Threads per block, a power of two: the segments (step 6) or records (step 7)
    /// one block sums.
    pub block: u32,
    /// Records out per window (the grid's x).
    pub records: usize,
    /// Plain items of the records in (step 7; 0 for step 6, which reads buckets).
    pub items_in: u32,
    /// Plain items of the records out.
    pub items_out: u32,
}

impl Pass {
    /// Points of its output for `windows` bucket windows: each record's plain items
    /// and its total.
    pub fn out_points(&self, windows: usize) -> usize {
        windows * (self.items_out as usize + 1) * self.records
    }
}

/// Every launch of one reduction, step 6 first; pass i writes buffer i % 2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Passes(Vec<Pass>);

impl Passes {
    /// The reduction of `segments` segments a window (a power of two) in blocks of
    /// at most `tile` threads (a power of two; at least 2, so that each pass merges).
    pub fn new(segments: usize, tile: u32) -> Passes {
        let tile = tile.max(2);
        let first = (segments as u32).min(tile);
        let mut pass = Pass {
            block: first,
            records: segments / first as usize,
            items_in: 0,
            items_out: 1 + first.trailing_zeros(),
        };
        let mut passes = vec![pass];
        while pass.records > 1 {
            let block = (pass.records as u32).min(tile);
            pass = Pass {
                block,
                records: pass.records / block as usize,
                items_in: pass.items_out,
                items_out: pass.items_out + block.trailing_zeros(),
            };
            passes.push(pass);
        }
        Passes(passes)
    }

    /// The launches, step 6 first.
    pub fn iter(&self) -> impl Iterator<Item = &Pass> {
        self.0.iter()
    }

    /// Plain items of the last record: `1 + log2 S`.
    pub fn items(&self) -> u32 {
        self.0.last().map_or(1, |p| p.items_out)
    }

    /// Points each of the two buffers must hold for `windows` bucket windows: the
    /// largest output written to it (at least one point each).
    pub fn buffer_points(&self, windows: usize) -> [usize; 2] {
        let mut points = [1, 1];
        for (i, pass) in self.0.iter().enumerate() {
            points[i % 2] = points[i % 2].max(pass.out_points(windows));
        }
        points
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::test_groups::{BLS_G1, BLS_G2, BN_G1, BN_G2};

    #[test]
    fn the_tile_fills_the_shared_memory_msm_cu_declares() {
        let source = include_str!("../../kernels/msm.cu");
        let define = format!("#define CRU_REDUCE_SHARED_BYTES {REDUCE_SHARED_BYTES}\n");
        assert!(source.contains(&define), "msm.cu lacks {define:?}");
        assert_eq!(tile(BLS_G1), 128);
        assert_eq!(tile(BLS_G2), 64);
        // BN254's G1 and G2 XYZZ points: the same tiles, rounded down to powers of two.
        assert_eq!((tile_of(32), tile_of(64)), (128, 64));
        assert_eq!((tile(BN_G1), tile(BN_G2)), (128, 64));
    }

    #[test]
    fn passes_cover_every_segment_bit_once() {
        for bits in 0..=21u32 {
            for tile in [2u32, 4, 64, 128] {
                let s = 1usize << bits;
                let passes = Passes::new(s, tile);
                // Blocks multiply to S, each pass's records are the next's input.
                let mut records = s;
                let mut items = 1;
                for (i, p) in passes.iter().enumerate() {
                    assert!(p.block.is_power_of_two() && p.block <= tile);
                    assert_eq!(
                        p.records * p.block as usize,
                        records,
                        "S=2^{bits} tile={tile}"
                    );
                    assert_eq!(p.items_in, if i == 0 { 0 } else { items });
                    items = if i == 0 { 1 } else { items } + p.block.trailing_zeros();
                    assert_eq!(p.items_out, items);
                    records = p.records;
                    // Each pass's output is smaller than the one before it (so the
                    // buffers are sized by their first outputs, as msm.cu says).
                    if i > 0 {
                        let before = passes.0[i - 1].out_points(3);
                        assert!(p.out_points(3) <= before, "S=2^{bits} tile={tile}");
                    }
                }
                assert_eq!(records, 1);
                assert_eq!(passes.items(), 1 + bits, "S=2^{bits} tile={tile}");
            }
        }
    }

    #[test]
    fn buffers_hold_their_largest_output() {
        // G1 2^20 over planes: 2^19 buckets in segments of 8, tiles of 128.
        let passes = Passes::new(1 << 16, 128);
        let shape: Vec<(u32, usize, u32)> = passes
            .iter()
            .map(|p| (p.block, p.records, p.items_out))
            .collect();
        assert_eq!(shape, [(128, 512, 8), (128, 4, 15), (4, 1, 17)]);
        assert_eq!(passes.buffer_points(1), [512 * 9, 4 * 16]);
        assert_eq!(Passes::new(1, 64).buffer_points(5), [10, 1]);
        assert_eq!(Passes::new(1, 64).items(), 1);
    }
}
