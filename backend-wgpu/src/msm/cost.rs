//! The cost model that picks an MSM's window: what each kind of work costs per unit
//! (a term's addition into a bucket, a merge of two tasks, a bucket of the reduction),
//! and the predicted cost of a batch in signed windows of c bits.

use crate::wgsl::programs::Program;
use crate::wgsl::Formulas;

/// Points one accumulation task adds at most. Small enough that a G2 task stays well
/// under llvmpipe's 65535 loop iterations per invocation (see shaders/msm_common.wgsl).
pub const TASK_SIZE: usize = 16;

/// Bits signed windows cover: at least one more than the scalar (BLS12-381's Fr has 255
/// bits, BN254's 254), so that the top window's digit (at most 2^(c−1) with its carry)
/// never carries out.
pub const SIGNED_BITS: usize = 256;

/// Largest window: 2^15 + 1 buckets a window, scanned by 64 threads; wider windows
/// cost more in the reduction than they save (see [`signed_cost`]).
pub const MAX_WINDOW_BITS: usize = 16;

/// What one unit of each kind of an MSM's work costs, for choosing its window: a
/// term's mixed addition into a window's bucket, a merge of two tasks of one bucket,
/// and one bucket of a window's reduction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostWeights {
    /// Per term and window (the bucket sums).
    pub term: f64,
    /// Per merge of two tasks.
    pub merge: f64,
    /// Per bucket and window (the reduction).
    pub bucket: f64,
}

impl CostWeights {
    /// Point additions: one a term, one a merge, about three a bucket (level 0: S += A,
    /// U += S; the levels above a quarter as many, each three to four). The weights of
    /// the interpreted form (software adapters), where every addition runs the same
    /// program.
    pub const ADDITIONS: CostWeights = CostWeights {
        term: 1.0,
        merge: 1.0,
        bucket: 3.0,
    };

    /// GPU nanoseconds on the H200 through Vulkan, G1 straight-line (d32de65:BENCHMARKS.md:
    /// per-phase times of MSM G1 2^20 at c = 16 and 13, each phase's
    /// slope): the bucket sums hardly grow with the windows (44.8 ms at 16 windows,
    /// 45.9 at 20), while a merge (30 ns) or a reduced bucket (28 ns) costs about a
    /// hundred times a term's share. The sweep's minimum was c = 15 (77.9 ms GPU) with
    /// 16 and 14 within 2 %.
    pub const G1_STRAIGHT: CostWeights = CostWeights {
        term: 0.27,
        merge: 30.3,
        bucket: 28.3,
    };

    /// The same for G2 in the registers form (c = 15 and 13): a reduced bucket costs
    /// 346 ns, a merge 105, the bucket sums did not grow with the windows (211 ms at
    /// both); c = 13 took 421 ms of GPU time against 468 at c = 15 (c = 16, the
    /// additions' choice: 555 ms wall).
    pub const G2_REGISTERS: CostWeights = CostWeights {
        term: 0.05,
        merge: 105.0,
        bucket: 346.0,
    };

    /// The weights for `program`'s additions in `form`: measured for the hardware
    /// forms (the H200's; other adapters' shapes are alike), additions otherwise.
    pub fn of(program: Program, form: Formulas) -> CostWeights {
        match (form, program.ext()) {
            (Formulas::Interpreted, _) => CostWeights::ADDITIONS,
            (_, 1) => CostWeights::G1_STRAIGHT,
            _ => CostWeights::G2_REGISTERS,
        }
    }
}

/// Predicted cost of a batch of `n` terms in signed windows of `c` bits under
/// `weights`: per window, n terms into the buckets, the merges of tasks of the same
/// bucket (about half a task of slack per occupied bucket) and the buckets' reduction.
pub fn signed_cost(n: usize, c: usize, weights: CostWeights) -> f64 {
    let windows = SIGNED_BITS.div_ceil(c) as f64;
    let buckets = (1u64 << (c - 1)) as f64;
    let n = n as f64;
    let occupied = buckets * (1.0 - (-n / buckets).exp());
    let t = TASK_SIZE as f64;
    let tasks = n / t + occupied * (t - 1.0) / (2.0 * t);
    let merges = (tasks - occupied).max(0.0);
    windows * (weights.term * n + weights.merge * merges + weights.bucket * buckets)
}
