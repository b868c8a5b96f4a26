//! The rates this backend's schedules are predicted with, fitted to the H200
//! (BENCHMARKS.md, fourth session and the schedules section).

use crucible_core::CostModel;

/// Plain-window MSMs (no planes: the streamed chunks' case and the conservative one
/// for resident bases): G1 11.30 ms at 2^20 and 129.1 ms at 2^24 give 7.49 ns a term
/// and 3.45 ms a call; G2 34.4 ms at 2^20 with the G1 call cost and the same
/// large-size slope ratio gives 22.8 ns a term. NTT: 0.375 ms at 2^20 and 5.74 ms at
/// 2^24 give 0.0143–0.0179 ns a butterfly stage (the larger kept). Staging: pinned
/// double-buffered copies measured 25 GB/s for bases (MSM G1 2^24 "+transfers" 188
/// ms against 129 ms resident for 1.6 GB of points and 0.5 GB of scalars, which
/// overlap in part).
pub fn cost_model() -> CostModel {
    CostModel {
        msm_g1_ns_per_term: 7.49,
        msm_g2_ns_per_term: 22.8,
        msm_call_ns: 3.45e6,
        ntt_ns_per_butterfly_stage: 0.0179,
        stage_bytes_per_second: 25.0e9,
        overlaps_staging: true,
    }
}
