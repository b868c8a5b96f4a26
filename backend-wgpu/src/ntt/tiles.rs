//! The workgroup path: the stages in tile_stages dispatches of up to
//! [`MAX_TILE_BITS`] stages on tiles held in workgroup memory, planned by
//! [`crucible_core::ntt_tiles`] (the reversal fused in on one chunk; a reversal pass
//! and natural-layout tiles on several), the stages across chunks as passes, the
//! scalings on the first dispatch's loads and the last one's stores.

use crucible_core::ntt_tiles::{
    fused_plan, natural_plan, Tile, TILE_INVERSE, TILE_SCALE_BY_C, TILE_SCALE_BY_POWERS,
    TILE_SCALE_LOADS_BY_POWERS,
};
use crucible_core::{Domain, NttKind};

use crate::field::{DeviceScalar, FR_WORDS};
use crate::wgsl::params::NttParams;

use super::passes::{butterfly_steps, reversal_steps};
use super::steps::{Kernel, Step, Table};
use super::twiddles::{coset_log_lo, kept_tables, table_log, tw_log_lo, twiddle_step};
use crate::field::fr_words;

/// log2 of the most elements of a tile: 2^9 Fr of 32 bytes fill WebGPU's default
/// 16 KiB of workgroup storage (`tile` in shaders/ntt.wgsl), so no adapter needs more
/// than the default limit. Larger tiles would save a dispatch at 2^20 (two instead of
/// three) and none at 2^24, where the butterflies' products, not the round trips, cost.
pub const MAX_TILE_BITS: u32 = 9;

/// Bytes of workgroup storage the tile kernel declares: an adapter that offers less
/// runs the passes.
pub const TILE_STORAGE_BYTES: u32 = (1 << MAX_TILE_BITS) * (FR_WORDS as u32) * 4;

/// The tile_stages dispatch of `shape`'s tiles in chunk `c` of `chunk` elements.
fn tile_step(shape: Tile, chunk: usize, c: usize, flags: u32, base: &NttParams, pw: Table) -> Step {
    let tiles = chunk >> shape.bits();
    Step {
        kernel: Kernel::TileStages,
        params: NttParams {
            count: tiles as u32,
            base: (c * tiles) as u32,
            lo_chunk: c as u32,
            hi_chunk: c as u32,
            stage: shape.stage,
            k: shape.stages,
            p1: shape.p1,
            w1: shape.w1,
            p2: shape.p2,
            w2: shape.w2,
            flags: flags | shape.layout.flags(),
            ..*base
        },
        tw: Table::Twiddles,
        pw,
    }
}

/// Every dispatch of one NTT of `domain` over `chunk_len`-element chunks on the
/// workgroup path, its tables built (the table-building steps come first).
pub fn workgroup_steps<F: DeviceScalar>(
    domain: &Domain<F>,
    kind: NttKind,
    chunk_len: usize,
    tile_bits: u32,
) -> Vec<Step> {
    let log_n = domain.log_size;
    if log_n == 0 {
        return Vec::new();
    }
    let n = domain.size;
    let chunk = chunk_len.min(n);
    let chunks = n / chunk;
    let log_t = table_log(log_n, chunk_len);
    let tables = kept_tables(domain, kind, chunk_len);
    let inverse = matches!(kind, NttKind::Inverse | NttKind::CosetInverse);
    // A table every kernel reading `pw` can bind where it reads none.
    let any_pw = if tables.coset {
        Table::Coset
    } else if tables.twiddles {
        Table::Twiddles
    } else {
        Table::Scratch
    };
    let (scale_flags, c) = match kind {
        NttKind::Inverse => (TILE_SCALE_BY_C, domain.size_inv),
        NttKind::CosetInverse => (TILE_SCALE_BY_POWERS, F::ONE),
        NttKind::Forward | NttKind::CosetForward => (0, F::ONE),
    };
    let base = NttParams {
        log_n,
        log_chunk: chunk.trailing_zeros(),
        tw_log_lo: tw_log_lo(log_n),
        table_log: log_t,
        pow_log_lo: coset_log_lo(log_n),
        flags: if inverse { TILE_INVERSE } else { 0 },
        c: fr_words(c),
        ..NttParams::default()
    };
    let tile = |shape: Tile, c: usize, flags: u32| tile_step(shape, chunk, c, flags, &base, any_pw);
    let mut out = Vec::new();
    let fused = if chunks == 1 {
        fused_plan(log_n, tile_bits)
    } else {
        None
    };
    let (shapes, loads) = match fused {
        // The first dispatch reads the input where it lies, so it scales what it reads.
        Some(shapes) if kind == NttKind::CosetForward => (shapes, TILE_SCALE_LOADS_BY_POWERS),
        Some(shapes) => (shapes, 0),
        None => {
            let reversal = if kind == NttKind::CosetForward {
                Kernel::BitrevPowers
            } else {
                Kernel::Bitrev
            };
            reversal_steps(&mut out, reversal, chunks, chunk, base);
            (natural_plan(log_t, tile_bits), 0)
        }
    };
    let across = log_t < log_n;
    for (i, shape) in shapes.iter().enumerate() {
        let last = i + 1 == shapes.len() && !across;
        let mut flags = base.flags | if last { scale_flags } else { 0 };
        if i == 0 {
            flags |= loads;
        }
        for c in 0..chunks {
            out.push(tile(*shape, c, flags));
        }
    }
    if across {
        // The stages whose pairs lie in two chunks, as passes.
        out.push(twiddle_step(domain, inverse, base));
        butterfly_steps(&mut out, log_t..log_n, chunks, chunk, base);
        if scale_flags != 0 {
            for c in 0..chunks {
                out.push(Step {
                    kernel: Kernel::ScalePowers,
                    params: NttParams {
                        count: chunk as u32,
                        base: (c * chunk) as u32,
                        lo_chunk: c as u32,
                        hi_chunk: c as u32,
                        flags: scale_flags,
                        ..base
                    },
                    tw: Table::Scratch,
                    pw: any_pw,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crucible_core::ntt_tiles::{TILE_LOAD_REVERSED, TILE_PAIRED, TILE_STORE_REVERSED};
    use crucible_core::Fr;

    /// How many dispatches a transform of one chunk takes: three at 2^20 and 2^24,
    /// no reversal pass; a whole domain of one tile: one dispatch; the flags of the
    /// planned layouts.
    #[test]
    fn dispatch_counts() {
        let count = |log: u32, kind| {
            let d = Domain::<Fr>::with_log_size(log).unwrap();
            workgroup_steps(&d, kind, 1 << 26, MAX_TILE_BITS).len()
        };
        assert_eq!(count(20, NttKind::Forward), 3);
        assert_eq!(count(20, NttKind::CosetForward), 3);
        assert_eq!(count(24, NttKind::CosetInverse), 3);
        assert_eq!(count(16, NttKind::Forward), 3);
        assert_eq!(count(9, NttKind::CosetForward), 1);
        assert_eq!(count(0, NttKind::Inverse), 0);
        // Chunked, the reversal pass runs (one dispatch per pair of chunks).
        let d = Domain::<Fr>::with_log_size(10).unwrap();
        let steps = workgroup_steps(&d, NttKind::Forward, 1 << 9, MAX_TILE_BITS);
        assert_eq!(steps[0].kernel, Kernel::Bitrev);
        let steps = workgroup_steps(
            &Domain::<Fr>::with_log_size(20).unwrap(),
            NttKind::Forward,
            1 << 26,
            MAX_TILE_BITS,
        );
        let layouts: Vec<u32> = steps
            .iter()
            .map(|s| s.params.flags & (TILE_LOAD_REVERSED | TILE_STORE_REVERSED | TILE_PAIRED))
            .collect();
        assert_eq!(
            layouts,
            [
                TILE_LOAD_REVERSED | TILE_STORE_REVERSED,
                TILE_LOAD_REVERSED | TILE_PAIRED,
                0
            ]
        );
    }
}
