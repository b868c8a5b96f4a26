//! The rates this backend's schedules are predicted with, fitted to the H200
//! (BENCHMARKS.md#proofs-on-the-h200-cuda).

use crucible_core::{CostModel, MsmScaling};

/// Plain-window MSMs (no planes: the streamed chunks' case and the conservative one
/// for resident bases), fitted for the least relative error over the sizes a schedule
/// streams (medians of 5): G1 from 2^14 to 2^24 terms
/// (1.44 ms at 2^14, 2.64 at 2^16 with its 13-bit windows, 10.58 at 2^20, 127.1 at
/// 2^24) gives 1.65 ms a call and 8.45 ns a term, within 17 % from 2^15 to 2^23 (24 %
/// over at 2^14, 13 % at 2^24); G2 from 2^14 to 2^21 (5.08, 7.87, 35.19 and 64.43 ms at
/// 2^14, 2^16, 2^20, 2^21) 5.22 ms a call and 29.6 ns a term, within 13 %. (One call
/// term for both groups, 3.45 ms fitted at 2^20 and 2^24, priced a G1 chunk of 2^14
/// 2.4 times what it costs: a 2^20-constraint proof streamed in chunks of 16384 was
/// predicted 1412 ms and ran 932.) NTT: 0.375 ms at 2^20 and 5.74 ms at 2^24 give
/// 0.0143–0.0179 ns a butterfly stage (the larger kept; measured with the tiles of
/// three launches at both sizes, slower than today's, so an upper bound). Staging: the
/// one-shot MSM G1 of 2^24 terms from the host with nine tenths of its scalars 0 or 1
/// (so the copies, not the MSM, set its time) took 61.13 ms for 1.61 GB of points and
/// 0.54 GB of scalars: 35 GB/s (BENCHMARKS.md#msm-g1-with-a-bit-heavy-witness). A term
/// whose scalar is 0 or 1 skips the windows: the same MSMs resident took 2.81 / 17.83
/// ms at 2^20 / 2^24 against 8.59 / 105.9 full width, 0.96 ns a term past 2^20
/// against 6.19, which puts such a term at 0.06 of a full one. (0.38, fitted to whole
/// 2^20 proofs, priced the bit-heavy 2^26 proof's MSMs at 1.5 times what they took.)
/// A key's streamed bases are copied from its pinned host copy as they lie: 2^22 G1
/// points (403 MB) in a median 7.39 ms of 7 on an H100, 54.5 GB/s, against 8.79 ms
/// (45.8 GB/s) through the staging buffers (`pinned_bases_throughput` in
/// `tests/device.rs`).
pub fn cost_model() -> CostModel {
    CostModel {
        msm_g1_ns_per_term: 8.45,
        msm_g2_ns_per_term: 29.6,
        msm_g1_call_ns: 1.65e6,
        msm_g2_call_ns: 5.22e6,
        ntt_ns_per_butterfly_stage: 0.0179,
        stage_bytes_per_second: 35.0e9,
        streamed_bases_bytes_per_second: 54.5e9,
        overlaps_staging: true,
        // An entry reads 8 bytes of matrix and 32 of assignment (scattered): about
        // 40 bytes at the H200's ~2 TB/s of random 32-byte reads.
        sparse_ns_per_entry: 0.03,
        msm_scaling: MsmScaling::Flat,
        msm_bit_term_cost: 0.06,
    }
}
