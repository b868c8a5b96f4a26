//! MSM over G1 and G2 by the bucket method.
//!
//! On the device (shaders/msm_sort.wgsl, shaders/msm.wgsl or msm_values.wgsl): scalars
//! out of Montgomery form into signed digits (or unsigned ones, [`Digits`]), a counting
//! sort of the terms by bucket in every window, bucket sums by tasks of at most
//! [`TASK_SIZE`] points, the tasks of each bucket merged pairwise, and each window's
//! Σ b·B_b by levels of groups of four buckets, so that no thread's work depends on
//! the scalars. On the host: one point per window, combined by Horner's rule. Terms are
//! processed in batches that fit every scratch buffer into one binding and never
//! straddle a chunk of the bases or scalars.
//!
//! # Signed digits and the window size
//!
//! Digits in [−2^(c−1), 2^(c−1)] halve the buckets of a c-bit window (a negative digit
//! adds −B = (x, −y), which costs one subtraction), so a window can be one bit wider
//! for the same reduction work, and the point additions, n per window, fall with the
//! windows ⌈256 / c⌉. The window size minimises [`signed_cost`], the additions a batch
//! at the top of its power-of-two range makes: at 2^20 terms c = 16 (16 windows of 32769 buckets, about 19.1 M additions)
//! where the unsigned path takes c = 14 (19 windows of 16384, about 22 M), 13 % fewer;
//! the per-window scan of the buckets runs on 64 threads instead of one.
//! `CRUCIBLE_WGPU_MSM_DIGITS=unsigned` keeps the eighth session's path for A/B.
//!
//! # Bucket sums
//!
//! A task's first point starts its sum instead of being added to the identity (one
//! addition fewer a task: 1.3 M of 19 M at 2^20). On G1 in the straight-line form, the
//! tasks add in XYZZ coordinates (shaders/msm_xyzz.wgsl: 10 products and 7 additions
//! a mixed addition against 12 and about 19 for the complete formula, about 0.7 of the
//! instructions) and leave projective points for the merges and the reduction;
//! `CRUCIBLE_WGPU_MSM_BUCKETS=projective` keeps the complete formula for A/B. Together,
//! at 2^20 on G1: about 0.63 of the eighth session's Fq instructions.
//! `CRUCIBLE_WGPU_PROFILE=1` prints where the GPU time goes, per phase.
//!
//! # The reduction's form
//!
//! A curve in the straight or compact form reduces its buckets in the registers form
//! (the curve's registers-form module, shaders.rs's `MsmG1Registers`): both forms keep
//! scratch in one layout, so the registers kernel reads the partials the curve's own
//! accumulation and merges wrote. On the H200 G1's straight reduction was the slowest
//! pipeline of a proof to compile (6.1 s against 0.5) and ran slower too (6.0 ms against
//! 4.9); [`MSM_REDUCE_FORMULAS_ENV`] keeps the curve's own form for A/B.

use ark_ec::short_weierstrass::{Projective, SWCurveConfig};
use std::sync::OnceLock;

use ark_ff::Zero;
use crucible_core::ark_bls12_381::{g1, g2};
use crucible_core::{
    check_span, combine_windows, BufferId, ElementKind, Lease, MemoryPlan, MsmSpan, Result,
};

use crate::batch::{Batch, ParamsBuffer, PARAMS_ITEM};
use crate::context::Context;
use crate::field::{projective_words, read_projective, DeviceElement, Program, FR_WORDS};
use crate::memory::{check_kind, read_words, DeviceBuffer};
use crate::ntt::finish;
use crate::params::MsmParams;
use crate::profile::{self, PassTimes, Timer};
use crate::shaders::{Formulas, Module, PerCurve, WORKGROUP};

/// Points one accumulation task adds at most. Small enough that a G2 task stays well
/// under llvmpipe's 65535 loop iterations per invocation (see shaders/msm_common.wgsl).
pub const TASK_SIZE: usize = 16;

/// Elements each thread of a reduction level combines (LEVEL_GROUP in msm_common.wgsl).
const LEVEL_GROUP: usize = 4;

/// Largest unsigned window: that path's bucket scan walks 2^MAX_WINDOW_BITS buckets in
/// one thread.
const MAX_WINDOW_BITS: usize = 14;

/// Largest signed window: 2^15 + 1 buckets a window, scanned by 64 threads; wider
/// windows cost more in the reduction than they save (see [`signed_cost`]).
const MAX_SIGNED_WINDOW_BITS: usize = 16;

/// Scalar bits covered by unsigned windows (Fr's modulus has 255 bits).
const SCALAR_BITS: usize = 255;

/// Bits signed windows cover: one more than the scalar, so that the top window's
/// digit (at most 2^(c−1) with its carry) never carries out.
const SIGNED_BITS: usize = 256;

/// Environment variable choosing the MSM's digits: `signed` (the default) or
/// `unsigned` (the eighth session's path: unsigned digits, windows of about
/// log2(n) − 3 bits, one thread scanning each window's buckets), for A/B comparisons.
pub const MSM_DIGITS_ENV: &str = "CRUCIBLE_WGPU_MSM_DIGITS";

/// The digit form of the MSM's windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Digits {
    /// Digits in [−2^(c−1), 2^(c−1)]: 2^(c−1) + 1 buckets a window, the window size
    /// from [`signed_cost`].
    Signed,
    /// Digits in [0, 2^c): 2^c buckets a window, c = log2(n) − 3 clamped to 2..14.
    Unsigned,
}

impl Digits {
    /// The sort module's entry points of this form, in dispatch order: the digits, the
    /// histogram, the scan, the scatter.
    fn sort_entries(self) -> [&'static str; 4] {
        match self {
            Digits::Unsigned => ["to_canonical", "histogram", "scan", "scatter"],
            Digits::Signed => [
                "signed_digits",
                "histogram_signed",
                "scan_parallel",
                "scatter_signed",
            ],
        }
    }

    /// Parses [`MSM_DIGITS_ENV`]'s value (`signed` or `unsigned`, any case).
    pub fn parse(s: &str) -> Option<Digits> {
        match s.trim().to_ascii_lowercase().as_str() {
            "signed" => Some(Digits::Signed),
            "unsigned" => Some(Digits::Unsigned),
            _ => None,
        }
    }

    /// The form [`MSM_DIGITS_ENV`] asks for (read once per process), signed if unset.
    fn from_env() -> Result<Digits> {
        static CHOSEN: OnceLock<std::result::Result<Digits, String>> = OnceLock::new();
        let values = "`signed` or `unsigned`";
        env_choice(
            &CHOSEN,
            MSM_DIGITS_ENV,
            values,
            Digits::parse,
            Digits::Signed,
        )
    }
}

/// Environment variable choosing how the straight-line G1 MSM sums its buckets: `xyzz`
/// (the default: mixed additions in XYZZ coordinates, shaders/msm_xyzz.wgsl) or
/// `projective` (the complete projective formula, as G2 and the interpreter do), for
/// A/B comparisons.
pub const MSM_BUCKETS_ENV: &str = "CRUCIBLE_WGPU_MSM_BUCKETS";

/// The coordinates bucket tasks are summed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BucketSums {
    /// XYZZ with mixed additions, where the curve's straight-line module has them.
    Xyzz,
    /// Homogeneous projective, the complete formula.
    Projective,
}

impl BucketSums {
    /// Parses [`MSM_BUCKETS_ENV`]'s value (`xyzz` or `projective`, any case).
    pub fn parse(s: &str) -> Option<BucketSums> {
        match s.trim().to_ascii_lowercase().as_str() {
            "xyzz" => Some(BucketSums::Xyzz),
            "projective" => Some(BucketSums::Projective),
            _ => None,
        }
    }

    /// The choice [`MSM_BUCKETS_ENV`] makes (read once per process), XYZZ if unset.
    fn from_env() -> Result<BucketSums> {
        static CHOSEN: OnceLock<std::result::Result<BucketSums, String>> = OnceLock::new();
        let values = "`xyzz` or `projective`";
        env_choice(
            &CHOSEN,
            MSM_BUCKETS_ENV,
            values,
            BucketSums::parse,
            BucketSums::Xyzz,
        )
    }
}

/// Environment variable choosing the values-form modules' reduction kernel for both
/// curves: `lean` (each element read by the step that adds it, three points live across
/// the addition) or `cached` (the element kept in registers from the step that loads
/// it, five points live). Unset: by the curve and the reduction's form (G1 straight or
/// compact cached, else lean: msm.rs's `ReduceForm::default_for` says why).
pub const MSM_REDUCE_ENV: &str = "CRUCIBLE_WGPU_MSM_REDUCE";

/// Environment variable choosing the form the MSM reduction of a curve in the straight
/// or compact form runs in: `registers` (the default: the registers form's kernel from
/// the curve's registers-form module, over the partials the curve's own form
/// accumulated and merged) or `same` (the curve's own form), for A/B. A curve in the
/// registers or interpreted form reduces in its own either way.
pub const MSM_REDUCE_FORMULAS_ENV: &str = "CRUCIBLE_WGPU_MSM_REDUCE_FORMULAS";

/// The form of the formulas an MSM's reduction runs in, against its curve's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceFormulas {
    /// The registers form where the curve's form is straight or compact. Measured on
    /// the H200 (MSM G1 2^20, cold compiles; docs/h200-session14-call1.log): G1's
    /// straight reduction compiled in 6.06 s and ran 6.03 ms, its registers one 0.69 s
    /// (lean 0.47) and 4.89 ms, while the straight accumulation and merges ran 17.6 and
    /// 4.2 ms against 23.7 and 15.2 in the registers form: the straight reduction bounded
    /// the proof's cold compile, and lost at run time too.
    Registers,
    /// The curve's own form.
    Same,
}

impl ReduceFormulas {
    /// Parses [`MSM_REDUCE_FORMULAS_ENV`]'s value (`registers` or `same`, any case).
    pub fn parse(s: &str) -> Option<ReduceFormulas> {
        match s.trim().to_ascii_lowercase().as_str() {
            "registers" => Some(ReduceFormulas::Registers),
            "same" => Some(ReduceFormulas::Same),
            _ => None,
        }
    }

    /// The form a curve whose formulas are `curve` reduces in. The interpreter's
    /// scratch holds 16-bit Montgomery form, which the values-form kernels do not read:
    /// an interpreted curve reduces in the interpreter.
    pub fn form_for(self, curve: Formulas) -> Formulas {
        match (self, curve) {
            (ReduceFormulas::Registers, Formulas::Straight | Formulas::Compact) => {
                Formulas::Registers
            }
            _ => curve,
        }
    }

    /// Each curve's reduction form when the curves' forms are `formulas`.
    pub fn forms(self, formulas: PerCurve<Formulas>) -> PerCurve<Formulas> {
        PerCurve {
            g1: self.form_for(formulas.g1),
            g2: self.form_for(formulas.g2),
        }
    }

    /// The choice [`MSM_REDUCE_FORMULAS_ENV`] makes (read once per process), registers
    /// if unset.
    pub(crate) fn from_env() -> Result<ReduceFormulas> {
        static CHOSEN: OnceLock<std::result::Result<ReduceFormulas, String>> = OnceLock::new();
        env_choice(
            &CHOSEN,
            MSM_REDUCE_FORMULAS_ENV,
            "`registers` or `same`",
            ReduceFormulas::parse,
            ReduceFormulas::Registers,
        )
    }
}

/// How the values-form reduction holds a group's elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceForm {
    /// Read by each step that adds them (`reduce_level_lean`).
    Lean,
    /// Kept from the step that loads them (`reduce_level`).
    Cached,
}

impl ReduceForm {
    /// Parses [`MSM_REDUCE_ENV`]'s value (`lean` or `cached`, any case).
    pub fn parse(s: &str) -> Option<ReduceForm> {
        match s.trim().to_ascii_lowercase().as_str() {
            "lean" => Some(ReduceForm::Lean),
            "cached" => Some(ReduceForm::Cached),
            _ => None,
        }
    }

    /// The kernel of the curve whose addition is `add` reducing in `form` when
    /// [`MSM_REDUCE_ENV`] is unset, as the H200 measured (cold compile with every proof
    /// pipeline at once, then the MSM 2^20): G1 straight cached (BENCHMARKS.md,
    /// thirteenth session, call 1: 4.86 s against lean's 6.13 s; 31.48 ms against
    /// 31.00; register allocation, not the value count, set its time; compact,
    /// unmeasured, alike), G2 lean (1.46 s against 1.72 s; 119.65 ms against 119.90),
    /// G1 registers lean (docs/h200-session14-call1.log: 0.47 s against 0.69 s; the
    /// registers MSM 46.66 ms against 47.25).
    pub fn default_for(add: Program, form: Formulas) -> ReduceForm {
        match (add.ext(), form) {
            (1, Formulas::Straight | Formulas::Compact) => ReduceForm::Cached,
            _ => ReduceForm::Lean,
        }
    }

    /// The choice [`MSM_REDUCE_ENV`] makes for both curves (read once per process);
    /// `None` when unset.
    fn from_env() -> Result<Option<ReduceForm>> {
        static CHOSEN: OnceLock<std::result::Result<Option<ReduceForm>, String>> = OnceLock::new();
        env_choice(
            &CHOSEN,
            MSM_REDUCE_ENV,
            "`lean` or `cached`",
            |s| ReduceForm::parse(s).map(Some),
            None,
        )
    }
}

/// Environment variable fixing the MSM's window size in bits (signed digits 2 to
/// 16, unsigned 2 to 14, clamped to those) instead of the cost model's choice, for the
/// sweeps that fit the cost model.
pub const MSM_WINDOW_BITS_ENV: &str = "CRUCIBLE_WGPU_MSM_WINDOW_BITS";

/// The window [`MSM_WINDOW_BITS_ENV`] fixes, if set (read once per process); a value
/// that is not a number from 2 to 16 is an error naming the knob.
fn window_override() -> Result<Option<usize>> {
    static CHOSEN: OnceLock<std::result::Result<Option<usize>, String>> = OnceLock::new();
    env_choice(
        &CHOSEN,
        MSM_WINDOW_BITS_ENV,
        "a window of 2 to 16 bits",
        |s| {
            s.trim()
                .parse::<usize>()
                .ok()
                .filter(|c| (2..=MAX_SIGNED_WINDOW_BITS).contains(c))
                .map(Some)
        },
        None,
    )
}

/// The value of knob `name` parsed by `parse` once into `cell` (`default` if unset or
/// empty); a value that is not one of `values` is an error naming the knob, on every
/// call.
fn env_choice<T: Copy + Send + Sync>(
    cell: &'static OnceLock<std::result::Result<T, String>>,
    name: &str,
    values: &str,
    parse: fn(&str) -> Option<T>,
    default: T,
) -> Result<T> {
    cell.get_or_init(|| match std::env::var(name) {
        Ok(s) if !s.trim().is_empty() => {
            parse(&s).ok_or_else(|| format!("{name}=`{s}`: expected {values}"))
        }
        _ => Ok(default),
    })
    .clone()
    .map_err(crucible_core::Error::InvalidInput)
}

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

    /// GPU nanoseconds on the H200 through Vulkan, G1 straight-line (eleventh session,
    /// BENCHMARKS.md: per-phase times of MSM G1 2^20 at c = 16 and 13, each phase's
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

/// How an MSM's windows are chosen: its digits, its cost weights, and the window
/// [`MSM_WINDOW_BITS_ENV`] fixes, if it does.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Choice {
    digits: Digits,
    weights: CostWeights,
    window: Option<usize>,
}

impl Choice {
    /// `P`'s choice on `ctx`: the digits [`MSM_DIGITS_ENV`] asks for, the weights of
    /// its formulas' form, the window [`MSM_WINDOW_BITS_ENV`] fixes.
    fn of<P: MsmCurve>(ctx: &Context) -> Result<Choice>
    where
        P::BaseField: DeviceElement,
    {
        Ok(Choice {
            digits: Digits::from_env()?,
            weights: CostWeights::of(P::ADD, ctx.formulas.of(P::ADD)),
            window: window_override()?,
        })
    }
}

/// Plan items of the MSM's scratch buffers.
pub mod items {
    use crucible_core::PlanKey;

    /// Canonical (non-Montgomery) scalars of a batch (unsigned digits).
    pub const SCALARS: PlanKey = PlanKey::new("wgpu", "msm_scalars");
    /// Every term's signed digit in every window of a batch.
    pub const DIGITS: PlanKey = PlanKey::new("wgpu", "msm_digits");
    /// Points per bucket.
    pub const COUNTS: PlanKey = PlanKey::new("wgpu", "msm_counts");
    /// Bucket ends in the sorted order.
    pub const CURSOR: PlanKey = PlanKey::new("wgpu", "msm_cursor");
    /// First task of every bucket, and the most tasks a bucket of each window has.
    pub const TASK_OFFSETS: PlanKey = PlanKey::new("wgpu", "msm_task_offsets");
    /// Term indices sorted by bucket, per window.
    pub const SORTED: PlanKey = PlanKey::new("wgpu", "msm_sorted");
    /// Sums of the accumulation tasks.
    pub const PARTIALS: PlanKey = PlanKey::new("wgpu", "msm_partials");
    /// Odd reduction levels' outputs (and even levels' inputs).
    pub const LEVEL_A: PlanKey = PlanKey::new("wgpu", "msm_level_a");
    /// Even reduction levels' outputs.
    pub const LEVEL_B: PlanKey = PlanKey::new("wgpu", "msm_level_b");
    /// Host-readable copy of the last level: one point pair per window.
    pub const READBACK: PlanKey = PlanKey::new("wgpu", "msm_readback");
}

/// Which curve an MSM runs on.
pub trait MsmCurve: SWCurveConfig
where
    Self::BaseField: DeviceElement,
{
    /// Its point-addition program.
    const ADD: Program;
    /// Its bases' element kind.
    const KIND: ElementKind;
    /// The straight-line module's entry summing bucket tasks in XYZZ coordinates, if
    /// it has one (shaders/msm_xyzz.wgsl).
    const XYZZ_ACCUMULATE: Option<&'static str>;
}

impl MsmCurve for g1::Config {
    const ADD: Program = Program::G1Add;
    const KIND: ElementKind = ElementKind::G1;
    const XYZZ_ACCUMULATE: Option<&'static str> = Some("accumulate_xyzz");
}

impl MsmCurve for g2::Config {
    const ADD: Program = Program::G2Add;
    const KIND: ElementKind = ElementKind::G2;
    // G2's straight-line module is already slow to compile (BENCHMARKS.md, session 8).
    const XYZZ_ACCUMULATE: Option<&'static str> = None;
}

/// The shape of one batch of up to `n` terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Config {
    n: usize,
    digits: Digits,
    window_bits: usize,
    windows: usize,
    /// Buckets a window, the empty bucket 0 included.
    buckets: usize,
    max_tasks: usize,
}

impl Config {
    /// The window depends on the batch's range 2^k ≤ n < 2^(k+1) only, so that every
    /// scratch item grows with n within a range (scratch_plan and max_batch plan for
    /// each range's largest batch). Unsigned: about k − 3 bits, 2 to 14. Signed: the
    /// window of least [`signed_cost`] at the range's top, 2 to 16 bits.
    fn new(n: usize, choice: Choice) -> Config {
        let (digits, fixed) = (choice.digits, choice.window);
        let log = usize::BITS as usize - 1 - n.max(1).leading_zeros() as usize;
        let (window_bits, windows, buckets) = match digits {
            Digits::Unsigned => {
                let c = fixed
                    .unwrap_or(log.saturating_sub(3))
                    .clamp(2, MAX_WINDOW_BITS);
                (c, SCALAR_BITS.div_ceil(c), 1usize << c)
            }
            Digits::Signed => {
                let top = (1usize << (log + 1)) - 1;
                let c = fixed.unwrap_or_else(|| {
                    (2..=MAX_SIGNED_WINDOW_BITS)
                        .min_by(|a, b| {
                            let cost = |c| signed_cost(top, c, choice.weights);
                            cost(*a).total_cmp(&cost(*b))
                        })
                        .unwrap_or(MAX_SIGNED_WINDOW_BITS)
                });
                (c, SIGNED_BITS.div_ceil(c), (1usize << (c - 1)) + 1)
            }
        };
        Config {
            n,
            digits,
            window_bits,
            windows,
            buckets,
            // Σ_b ceil(count_b / T) over at most min(n, buckets − 1) non-empty buckets.
            max_tasks: (n + (TASK_SIZE - 1) * n.min(buckets - 1)) / TASK_SIZE,
        }
    }

    /// Merge rounds: a bucket has at most ceil(n / T) tasks.
    fn merge_rounds(&self) -> u32 {
        self.n
            .div_ceil(TASK_SIZE)
            .next_power_of_two()
            .trailing_zeros()
    }

    /// Elements per window after each reduction level, down to 1.
    fn levels(&self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut m = self.buckets;
        while m > 1 {
            m = m.div_ceil(LEVEL_GROUP);
            out.push(m);
        }
        out
    }

    /// Bytes of every scratch item, by name (the profile's too when it is on).
    fn items(&self, ctx: &Context, point_words: usize) -> Vec<(crucible_core::PlanKey, u64)> {
        let w = self.windows as u64;
        let b = self.buckets as u64;
        let pair = 2 * 4 * point_words as u64;
        let levels = self.levels();
        let level_a = levels.first().copied().unwrap_or(1) as u64;
        let level_b = levels.get(1).copied().unwrap_or(1) as u64;
        let mut out = vec![match self.digits {
            Digits::Unsigned => (items::SCALARS, self.n as u64 * 4 * FR_WORDS as u64),
            Digits::Signed => (items::DIGITS, w * self.n as u64 * 4),
        }];
        out.extend([
            (items::COUNTS, w * b * 4),
            (items::CURSOR, w * b * 4),
            // Each window's bucket tasks and total, then each window's most tasks.
            (items::TASK_OFFSETS, (w * (b + 1) + w) * 4),
            (items::SORTED, w * self.n as u64 * 4),
            (items::PARTIALS, w * self.max_tasks as u64 * pair / 2),
            (items::LEVEL_A, w * level_a * pair),
            (items::LEVEL_B, w * level_b * pair),
            (items::READBACK, w * pair),
        ]);
        out.extend(profile::plan_items(ctx));
        out
    }

    fn fits(&self, ctx: &Context, point_words: usize) -> bool {
        self.items(ctx, point_words)
            .iter()
            .all(|(_, bytes)| *bytes <= ctx.limits.binding_bytes)
    }
}

/// Largest batch for `P`: the end of the last window-size range (n = 2^(k+1) − 1)
/// whose scratch, and every smaller range's, fits one binding. None if not even one
/// term fits.
fn max_batch(ctx: &Context, point_words: usize, choice: Choice) -> Option<usize> {
    let mut best = None;
    for k in 0..31 {
        let top = (1usize << (k + 1)) - 1;
        if !Config::new(top, choice).fits(ctx, point_words) {
            break;
        }
        best = Some(top);
    }
    best
}

/// The batch size an MSM of `len` terms uses.
fn batch_len(ctx: &Context, point_words: usize, len: usize, choice: Choice) -> Result<usize> {
    let most = max_batch(ctx, point_words, choice).ok_or_else(|| {
        crucible_core::Error::Unsupported(format!(
            "MSM scratch does not fit a binding of {} bytes",
            ctx.limits.binding_bytes
        ))
    })?;
    Ok(len.min(most))
}

/// Scratch for MSMs over `P` of up to `terms` terms: for every window size a batch of
/// at most that many terms can get, its largest batch (items keep the maximum). With
/// an invalid [`MSM_DIGITS_ENV`] the plan is empty (the MSM itself says why).
pub fn scratch_plan<P: MsmCurve>(ctx: &Context, terms: usize) -> MemoryPlan
where
    P::BaseField: DeviceElement,
{
    let mut plan = MemoryPlan::new("wgpu MSM scratch");
    let point_words = projective_words::<P>();
    if terms == 0 {
        return plan;
    }
    let Ok(choice) = Choice::of::<P>(ctx) else {
        return plan;
    };
    let Ok(most) = batch_len(ctx, point_words, terms, choice) else {
        return plan;
    };
    let mut k = 0;
    while (1usize << k) <= most {
        let top = ((1usize << (k + 1)) - 1).min(most);
        for (name, bytes) in Config::new(top, choice).items(ctx, point_words) {
            plan.at_least(name, bytes);
        }
        k += 1;
    }
    let chunk = ctx.limits.chunk_len(crate::field::element_bytes(P::KIND));
    if chunk < terms {
        plan.note(format!(
            "wgpu: {:?} bases in chunks of 2^{} (binding limit {} B)",
            P::KIND,
            chunk.trailing_zeros(),
            ctx.limits.binding_bytes
        ));
    }
    if most < terms {
        plan.note(format!(
            "wgpu: {:?} MSM in batches of at most {most} terms (binding limit {} B)",
            P::KIND,
            ctx.limits.binding_bytes
        ));
    }
    plan
}

/// The MSM's scratch buffers in the lease, by plan item.
///
/// The MSM's own items stay in the lease after a successful MSM, created at their
/// plan items' sizes, and every later MSM on that lease they are large enough for
/// takes them as they are: on the H200's Vulkan driver creating and dropping them cost
/// about 21 ms of a 53 ms G1 MSM at 2^20 (twelfth session), and a proof's MSMs of three
/// sizes recreated them twice (45 ms a proof, thirteenth session). The kernels assume nothing of their contents (the counts are cleared in
/// every batch, the rest written before it is read), as the batches of one MSM
/// already share them. The parameters are the lease's kept [`ParamsBuffer`], shared
/// with the other operations; the profile's buffers are freed after every MSM; the
/// lease frees the kept ones at release.
struct Scratch {
    ids: Vec<(crucible_core::PlanKey, BufferId)>,
}

/// Whether an item's buffer may stay in the lease between MSMs: the MSM's own items
/// and the parameters, not the profile's buffers.
fn kept_between_msms(key: crucible_core::PlanKey) -> bool {
    profile::usage(key).is_none()
}

impl Scratch {
    fn allocate(
        ctx: &Context,
        work: &mut Lease,
        config: &Config,
        point_words: usize,
    ) -> Result<Scratch> {
        let mut scratch = Scratch { ids: Vec::new() };
        let storage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST;
        let readback = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
        let result = (|| -> Result<()> {
            scratch
                .ids
                .push((PARAMS_ITEM, ParamsBuffer::kept(ctx, work)?));
            for (name, bytes) in config.items(ctx, point_words) {
                let kept = kept_between_msms(name);
                if let (true, Some(id)) = (kept, work.buffer_of(name)) {
                    // Large enough: the same usages, so the same buffer will do (the
                    // kernels are told their sizes; none reads a binding's length).
                    if work.get::<wgpu::Buffer>(id)?.size() >= bytes {
                        scratch.ids.push((name, id));
                        continue;
                    }
                    work.free(id)?;
                }
                // A kept buffer takes what its plan item reserves (a proof's plan holds
                // the largest of its MSMs, both curves'), within one binding: then the
                // proof's later MSMs of other sizes find it large enough, and it is
                // created once a proof instead of once an MSM size (12-17 ms to create
                // and 8-15 to free, a few hundred MiB, on the H200's driver).
                let bytes = if kept {
                    let planned = work.plan().bytes_of(name).min(ctx.limits.binding_bytes);
                    bytes.max(planned)
                } else {
                    bytes
                };
                let usage = profile::usage(name).unwrap_or(match name {
                    n if n == items::READBACK => readback,
                    _ => storage,
                });
                let id =
                    work.allocate(name, bytes, || Ok(ctx.create_buffer(name, bytes, usage)?))?;
                scratch.ids.push((name, id));
            }
            Ok(())
        })();
        match result {
            Ok(()) => Ok(scratch),
            Err(e) => {
                for (_, id) in &scratch.ids {
                    let _ = work.free(*id);
                }
                Err(e)
            }
        }
    }

    fn buffer<'l>(&self, work: &'l Lease, key: crucible_core::PlanKey) -> Result<&'l wgpu::Buffer> {
        work.get::<wgpu::Buffer>(self.id(key)?)
    }

    fn id(&self, key: crucible_core::PlanKey) -> Result<BufferId> {
        Ok(self
            .ids
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, id)| *id)
            .ok_or(crate::error::WgpuError::Corrupt {
                what: "MSM scratch item",
            })?)
    }

    fn timer<'l>(&self, ctx: &Context, work: &'l Lease) -> Result<Option<Timer<'l>>> {
        if !profile::enabled(ctx) {
            return Ok(None);
        }
        let resolve = self.buffer(work, profile::items::RESOLVE)?;
        let readback = self.buffer(work, profile::items::READBACK)?;
        Ok(Some(Timer::new(ctx, resolve, readback)))
    }

    /// The buffers to free once the MSM is done: every one if it failed (no later MSM
    /// should trust what a failed one left), else those not kept between MSMs.
    fn to_free(&self, failed: bool) -> Vec<BufferId> {
        self.ids
            .iter()
            .filter(|(key, _)| failed || !kept_between_msms(*key))
            .map(|(_, id)| *id)
            .collect()
    }
}

/// Σ scalars·bases over curve `P` for `span`.
pub fn msm<P: MsmCurve, B: Copy>(
    ctx: &Context,
    work: &mut Lease,
    bases: &Lease,
    bases_id: BufferId,
    bases_len: usize,
    span: &MsmSpan<B>,
) -> Result<Projective<P>>
where
    P::BaseField: DeviceElement,
{
    check_span(span, bases_len)?;
    if span.len == 0 {
        return Ok(Projective::zero());
    }
    let started = std::time::Instant::now();
    let choice = Choice::of::<P>(ctx)?;
    let digits = choice.digits;
    let point_words = projective_words::<P>();
    let batch = batch_len(ctx, point_words, span.len, choice)?;
    let config = Config::new(batch, choice);
    // The curve module's pipelines compile together on a cold start.
    ctx.prepare(&curve_entries::<P>(ctx)?)?;
    let prepared = started.elapsed();
    let scratch = Scratch::allocate(ctx, work, &config, point_words)?;
    let allocated = started.elapsed();
    let mut times = PassTimes::default();
    let result = run_batches::<P, B>(
        ctx, work, bases, bases_id, span, &config, &scratch, &mut times,
    );
    let ran = started.elapsed();
    let mut total = Projective::zero();
    let failed = result.is_err();
    let done = result.map(|sum| total = sum);
    finish(ctx, work, done, &scratch.to_free(failed))?;
    if profile::enabled(ctx) {
        let [_, _, reduce] = curve_entries::<P>(ctx)?;
        // Where the wall time beside the passes goes, on the host's clock.
        eprintln!(
            "wgpu MSM host phases: pipelines {:.3} ms, scratch allocation {:.3} ms, batches \
             (record, submit, wait, read back, combine) {:.3} ms, release {:.3} ms",
            prepared.as_secs_f64() * 1e3,
            (allocated - prepared).as_secs_f64() * 1e3,
            (ran - allocated).as_secs_f64() * 1e3,
            (started.elapsed() - ran).as_secs_f64() * 1e3
        );
        eprint!(
            "{}",
            times.table(
                &format!(
                    "{:?} MSM of {} terms ({:?} digits, c = {}, {} windows of {} buckets, \
                     batches of {}; {} formulas, buckets {}, reduction {:?}::{})",
                    P::KIND,
                    span.len,
                    digits,
                    config.window_bits,
                    config.windows,
                    config.buckets,
                    config.n,
                    ctx.formulas.of(P::ADD).name(),
                    accumulate_entry::<P>(ctx)?,
                    reduce.0,
                    reduce.1
                ),
                started.elapsed()
            )
        );
    }
    Ok(total)
}

/// Every pipeline an MSM over `P` runs (the sort's and the curve module's), for a
/// warm-up.
pub fn pipelines<P: MsmCurve>(ctx: &Context) -> Result<Vec<(Module, &'static str)>>
where
    P::BaseField: DeviceElement,
{
    let mut entries: Vec<_> = Digits::from_env()?
        .sort_entries()
        .into_iter()
        .map(|entry| (Module::MsmSort, entry))
        .collect();
    entries.extend(curve_entries::<P>(ctx)?);
    Ok(entries)
}

/// The curve modules' pipelines of an MSM over `P`: accumulation and merge from the
/// curve's module, the reduction from the module of its reduction's form
/// ([`MSM_REDUCE_FORMULAS_ENV`]). What the MSM prepares and runs, and the warm-up
/// creates.
fn curve_entries<P: MsmCurve>(ctx: &Context) -> Result<[(Module, &'static str); 3]>
where
    P::BaseField: DeviceElement,
{
    let module = Module::msm_buckets(P::ADD, ctx.formulas);
    let curve = ctx.formulas.of(P::ADD);
    let form = ReduceFormulas::from_env()?.form_for(curve);
    // form_for departs from the curve's form only to the registers form.
    let reduce = if form == curve {
        module
    } else {
        Module::msm_registers(P::ADD)
    };
    Ok([
        (module, accumulate_entry::<P>(ctx)?),
        (module, "merge_tasks"),
        (reduce, reduce_entry::<P>(form)?),
    ])
}

/// The entry point of one reduction level in `form`: the interpreter's `reduce_level`,
/// or the values-form one [`MSM_REDUCE_ENV`] picks.
fn reduce_entry<P: MsmCurve>(form: Formulas) -> Result<&'static str>
where
    P::BaseField: DeviceElement,
{
    let kernel = ReduceForm::from_env()?.unwrap_or(ReduceForm::default_for(P::ADD, form));
    Ok(match (form, kernel) {
        (Formulas::Interpreted, _) | (_, ReduceForm::Cached) => "reduce_level",
        (_, ReduceForm::Lean) => "reduce_level_lean",
    })
}

/// The entry point summing bucket tasks: XYZZ where [`MSM_BUCKETS_ENV`] allows and the
/// curve's straight-line module has it, else the projective `accumulate`.
fn accumulate_entry<P: MsmCurve>(ctx: &Context) -> Result<&'static str>
where
    P::BaseField: DeviceElement,
{
    Ok(
        match (
            ctx.formulas.of(P::ADD),
            BucketSums::from_env()?,
            P::XYZZ_ACCUMULATE,
        ) {
            (Formulas::Straight, BucketSums::Xyzz, Some(entry)) => entry,
            _ => "accumulate",
        },
    )
}

#[allow(clippy::too_many_arguments)]
fn run_batches<P: MsmCurve, B: Copy>(
    ctx: &Context,
    work: &Lease,
    bases: &Lease,
    bases_id: BufferId,
    span: &MsmSpan<B>,
    config: &Config,
    scratch: &Scratch,
    times: &mut PassTimes,
) -> Result<Projective<P>>
where
    P::BaseField: DeviceElement,
{
    let base_buf = bases.get::<DeviceBuffer>(bases_id)?;
    let scalar_buf = work.get::<DeviceBuffer>(span.scalars.id())?;
    check_kind(base_buf, P::KIND)?;
    check_kind(scalar_buf, ElementKind::Scalar)?;
    let mut total = Projective::<P>::zero();
    let mut done = 0;
    while done < span.len {
        let (bc, bi) = base_buf.locate(span.base_offset + done);
        let (sc, si) = scalar_buf.locate(span.scalar_offset + done);
        let n = (span.len - done)
            .min(config.n)
            .min(base_buf.chunk_elems(bc) - bi)
            .min(scalar_buf.chunk_elems(sc) - si);
        let batch = Config { n, ..*config };
        let (sum, batch_times) = run_batch::<P>(
            ctx,
            work,
            &base_buf.chunks[bc],
            bi,
            &scalar_buf.chunks[sc],
            si,
            &batch,
            scratch,
        )?;
        total += sum;
        times.extend(batch_times);
        done += n;
    }
    Ok(total)
}

#[allow(clippy::too_many_arguments)]
fn run_batch<P: MsmCurve>(
    ctx: &Context,
    work: &Lease,
    bases: &wgpu::Buffer,
    base_offset: usize,
    scalars: &wgpu::Buffer,
    scalar_offset: usize,
    config: &Config,
    scratch: &Scratch,
) -> Result<(Projective<P>, PassTimes)>
where
    P::BaseField: DeviceElement,
{
    let buf = |key| scratch.buffer(work, key);
    let (counts, cursor, task_off, sorted) = (
        buf(items::COUNTS)?,
        buf(items::CURSOR)?,
        buf(items::TASK_OFFSETS)?,
        buf(items::SORTED)?,
    );
    let (partials, level_a, level_b, readback, params) = (
        buf(items::PARTIALS)?,
        buf(items::LEVEL_A)?,
        buf(items::LEVEL_B)?,
        buf(items::READBACK)?,
        work.get::<ParamsBuffer>(scratch.id(PARAMS_ITEM)?)?,
    );
    let n = config.n;
    let program = P::ADD.range();
    let base = MsmParams {
        n: n as u32,
        windows: config.windows as u32,
        window_bits: config.window_bits as u32,
        buckets: config.buckets as u32,
        task_size: TASK_SIZE as u32,
        max_tasks: config.max_tasks as u32,
        scalar_offset: scalar_offset as u32,
        base_offset: base_offset as u32,
        ext: P::ADD.ext() as u32,
        prog_start: program.start,
        prog_len: program.len,
        ..MsmParams::default()
    };
    let with_count = |count: usize| MsmParams {
        count: count as u32,
        ..base
    };
    let terms_windows = n * config.windows;
    let tasks = config.windows * config.max_tasks;
    let mut batch = Batch::new(
        ctx,
        Some(params),
        format!("{:?} MSM batch of {n} terms", P::KIND),
    );
    if let Some(timer) = scratch.timer(ctx, work)? {
        batch.time_with(timer);
    }
    batch.clear(counts);
    let sort = |entry| ctx.pipeline(Module::MsmSort, entry);
    let [accumulate, merge, reduce] = curve_entries::<P>(ctx)?;
    let buckets = |(module, entry)| ctx.pipeline(module, entry);
    let [digits_entry, histogram, scan, scatter] = config.digits.sort_entries();
    match config.digits {
        Digits::Unsigned => {
            let canon = buf(items::SCALARS)?;
            batch.phase("digits");
            batch.dispatch(
                sort(digits_entry)?,
                &with_count(n),
                vec![(1, scalars), (2, canon)],
                n as u32,
            )?;
            batch.phase("histogram");
            batch.dispatch(
                sort(histogram)?,
                &with_count(terms_windows),
                vec![(2, canon), (3, counts)],
                terms_windows as u32,
            )?;
            batch.phase("scan");
            batch.dispatch(
                sort(scan)?,
                &with_count(config.windows),
                vec![(3, counts), (4, cursor), (5, task_off)],
                config.windows as u32,
            )?;
            batch.phase("scatter");
            batch.dispatch(
                sort(scatter)?,
                &with_count(terms_windows),
                vec![(2, canon), (4, cursor), (6, sorted)],
                terms_windows as u32,
            )?;
        }
        Digits::Signed => {
            let digits = buf(items::DIGITS)?;
            batch.phase("digits");
            batch.dispatch(
                sort(digits_entry)?,
                &with_count(n),
                vec![(1, scalars), (11, digits)],
                n as u32,
            )?;
            batch.phase("histogram");
            batch.dispatch(
                sort(histogram)?,
                &with_count(terms_windows),
                vec![(11, digits), (3, counts)],
                terms_windows as u32,
            )?;
            batch.phase("scan");
            batch.dispatch(
                sort(scan)?,
                &with_count(config.windows),
                vec![(3, counts), (4, cursor), (5, task_off)],
                config.windows as u32 * WORKGROUP,
            )?;
            batch.phase("scatter");
            batch.dispatch(
                sort(scatter)?,
                &with_count(terms_windows),
                vec![(11, digits), (4, cursor), (6, sorted)],
                terms_windows as u32,
            )?;
        }
    }
    batch.phase("accumulate");
    batch.dispatch(
        buckets(accumulate)?,
        &with_count(tasks),
        vec![
            (3, counts),
            (4, cursor),
            (5, task_off),
            (6, sorted),
            (7, bases),
            (8, partials),
        ],
        tasks as u32,
    )?;
    batch.phase("merge");
    for round in 0..config.merge_rounds() {
        batch.dispatch(
            buckets(merge)?,
            &MsmParams {
                round,
                ..with_count(tasks)
            },
            vec![(5, task_off), (8, partials)],
            tasks as u32,
        )?;
    }
    // Level ℓ reads level_b (ℓ odd: level_a) and writes level_a (ℓ odd: level_b).
    batch.phase("reduce");
    let mut m_in = config.buckets;
    let mut last = level_a;
    for (level, m_out) in config.levels().into_iter().enumerate() {
        let (input, output) = if level % 2 == 0 {
            (level_b, level_a)
        } else {
            (level_a, level_b)
        };
        let threads = config.windows * m_out;
        batch.dispatch(
            buckets(reduce)?,
            &MsmParams {
                level: level as u32,
                m_in: m_in as u32,
                m_out: m_out as u32,
                ..with_count(threads)
            },
            vec![(5, task_off), (8, partials), (9, input), (10, output)],
            threads as u32,
        )?;
        m_in = m_out;
        last = output;
    }
    let times = batch.submit_timed()?;
    let point_words = projective_words::<P>();
    let bytes = (config.windows * 2 * point_words * 4) as u64;
    let words = read_words(ctx, last, 0, bytes, readback)?;
    Ok((combine::<P>(config, &words)?, times))
}

/// The batch's sum from each window's last-level pair (A, C), whose C is the window's
/// Σ b·B_b: Σ_w 2^(c·w)·C_w by Horner's rule.
fn combine<P: SWCurveConfig>(config: &Config, words: &[u32]) -> Result<Projective<P>>
where
    P::BaseField: DeviceElement,
{
    let pair = 2 * projective_words::<P>();
    let sums = (0..config.windows)
        .map(|w| {
            let c = words.get(w * pair + pair / 2..(w + 1) * pair).ok_or(
                crate::error::WgpuError::Corrupt {
                    what: "MSM readback",
                },
            )?;
            read_projective::<P>(c)
        })
        .collect::<std::result::Result<Vec<_>, crate::error::WgpuError>>()?;
    Ok(combine_windows(&sums, config.window_bits as u32))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ec::{AffineRepr, CurveGroup};
    use ark_ff::{AdditiveGroup, Field, PrimeField, UniformRand};
    use ark_std::rand::{rngs::StdRng, Rng, SeedableRng};
    use crucible_core::{Fq, Fr, G1Affine, G1Projective};

    #[test]
    fn reduce_forms_parse_and_default_per_curve() {
        assert_eq!(ReduceForm::parse(" Lean\n"), Some(ReduceForm::Lean));
        assert_eq!(ReduceForm::parse("cached"), Some(ReduceForm::Cached));
        assert_eq!(ReduceForm::parse("fast"), None);
        let default = ReduceForm::default_for;
        for form in [Formulas::Straight, Formulas::Compact] {
            assert_eq!(default(Program::G1Add, form), ReduceForm::Cached);
        }
        assert_eq!(
            default(Program::G1Add, Formulas::Registers),
            ReduceForm::Lean,
            "G1's registers reduction compiles faster lean"
        );
        for form in Formulas::ALL {
            assert_eq!(default(Program::G2Add, form), ReduceForm::Lean);
        }
    }

    #[test]
    fn reduce_formulas_parse_and_default_to_registers_for_straight_and_compact() {
        assert_eq!(
            ReduceFormulas::parse(" Registers\n"),
            Some(ReduceFormulas::Registers)
        );
        assert_eq!(ReduceFormulas::parse("SAME"), Some(ReduceFormulas::Same));
        for bad in ["", "straight", "interpreted", "g1=registers"] {
            assert_eq!(ReduceFormulas::parse(bad), None, "{bad}");
        }
        let registers = ReduceFormulas::Registers;
        for form in [Formulas::Straight, Formulas::Compact, Formulas::Registers] {
            assert_eq!(registers.form_for(form), Formulas::Registers, "{form:?}");
        }
        // The interpreter's scratch is not the values forms' layout.
        assert_eq!(
            registers.form_for(Formulas::Interpreted),
            Formulas::Interpreted
        );
        for form in Formulas::ALL {
            assert_eq!(ReduceFormulas::Same.form_for(form), form);
        }
        // Hardware adapters' defaults: G1 straight reduces in registers, G2 already is.
        assert_eq!(
            registers.forms(PerCurve::for_adapter(false)),
            PerCurve::both(Formulas::Registers)
        );
        assert_eq!(
            registers.forms(PerCurve::for_adapter(true)),
            PerCurve::both(Formulas::Interpreted)
        );
    }

    /// The windows of the additions' weights (the interpreted form's).
    fn additions(digits: Digits) -> Choice {
        Choice {
            digits,
            weights: CostWeights::ADDITIONS,
            window: None,
        }
    }

    #[test]
    fn the_measured_weights_choose_the_windows_the_h200_sweep_found_fastest() {
        let c = |weights, n| {
            Config::new(
                n,
                Choice {
                    digits: Digits::Signed,
                    weights,
                    window: None,
                },
            )
            .window_bits
        };
        // G1 2^20: 16, 15 and 14 within 2 % of each other, 13 5 % slower, 12 17 %.
        assert!((14..=16).contains(&c(CostWeights::G1_STRAIGHT, 1 << 20)));
        // G2 2^20: 13 the fastest of 13 to 16.
        assert!((12..=13).contains(&c(CostWeights::G2_REGISTERS, 1 << 20)));
        assert_eq!(c(CostWeights::ADDITIONS, 1 << 20), 16);
        let form = |program| CostWeights::of(program, Formulas::Interpreted);
        assert_eq!(form(Program::G2Add), CostWeights::ADDITIONS);
        assert_eq!(
            CostWeights::of(Program::G1Add, Formulas::Straight),
            CostWeights::G1_STRAIGHT
        );
        assert_eq!(
            CostWeights::of(Program::G2Add, Formulas::Registers),
            CostWeights::G2_REGISTERS
        );
    }

    /// shaders/msm_sort.wgsl's signed_digits on the host, step for step: (magnitude,
    /// negative) of every window.
    fn signed_digits(scalar: Fr, c: usize, windows: usize) -> Vec<(u32, bool)> {
        let limbs = scalar.into_bigint().0;
        let words: Vec<u32> = limbs
            .iter()
            .flat_map(|l| [*l as u32, (*l >> 32) as u32])
            .collect();
        let full = 1u32 << c;
        let half = full >> 1;
        let mut carry = 0;
        (0..windows)
            .map(|w| {
                let bit = w * c;
                let (q, s) = (bit / 32, bit % 32);
                let mut v = words[q] >> s;
                if s + c > 32 && q + 1 < 8 {
                    v |= words[q + 1] << (32 - s);
                }
                v = (v & (full - 1)) + carry;
                carry = 0;
                if v > half {
                    carry = 1;
                    (full - v, true)
                } else {
                    (v, false)
                }
            })
            .collect()
    }

    #[test]
    fn signed_windows_cover_every_scalar_bit_and_pick_the_cheapest_width() {
        for log in 0..=26 {
            for n in [(1usize << log) - 1, 1 << log, (1 << log) + 1] {
                let c = Config::new(n.max(1), additions(Digits::Signed));
                assert!(
                    (2..=MAX_SIGNED_WINDOW_BITS).contains(&c.window_bits),
                    "{c:?}"
                );
                assert!(c.windows * c.window_bits >= SIGNED_BITS, "{c:?}");
                assert_eq!(c.buckets, (1 << (c.window_bits - 1)) + 1, "{c:?}");
                let u = Config::new(n.max(1), additions(Digits::Unsigned));
                assert!(u.windows * u.window_bits >= SCALAR_BITS, "{u:?}");
                assert_eq!(u.buckets, 1 << u.window_bits, "{u:?}");
            }
        }
        // Every batch's scratch fits what scratch_plan reserves for its range's top.
        for digits in [Digits::Signed, Digits::Unsigned] {
            for n in 1..=4096usize {
                let log = usize::BITS as usize - 1 - n.leading_zeros() as usize;
                let (a, b) = (
                    Config::new(n, additions(digits)),
                    Config::new((2 << log) - 1, additions(digits)),
                );
                assert_eq!(a.window_bits, b.window_bits, "{digits:?} n {n}");
                assert!(a.max_tasks <= b.max_tasks, "{digits:?} n {n}");
            }
        }
        let big = Config::new(1 << 20, additions(Digits::Signed));
        assert_eq!((big.window_bits, big.windows, big.buckets), (16, 16, 32769));
        assert_eq!(
            Config::new(1 << 20, additions(Digits::Unsigned)).window_bits,
            14
        );
        assert_eq!(
            Config::new(1 << 16, additions(Digits::Signed)).window_bits,
            13
        );
        // The prediction the module doc states: 13 % fewer additions at 2^20.
        let unsigned_adds = 19.0 * ((1u64 << 20) as f64 + 57_000.0 + 3.0 * 16384.0);
        let ratio = signed_cost(1 << 20, 16, CostWeights::ADDITIONS) / unsigned_adds;
        assert!((0.85..0.89).contains(&ratio), "{ratio}");
    }

    #[test]
    fn signed_digits_recompose_the_scalar_with_magnitudes_of_at_most_half_a_window() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        let mut scalars: Vec<Fr> = (0..200).map(|_| Fr::rand(&mut rng)).collect();
        scalars.extend([Fr::ZERO, Fr::ONE, -Fr::ONE, -Fr::from(2u64)]);
        // Windows of all ones (each carries into the next) and the top bit.
        scalars.push(Fr::from(2u64).pow([254]));
        scalars.push(Fr::from_bigint(ark_ff::BigInt([u64::MAX, u64::MAX, u64::MAX, 0])).unwrap());
        for c in 2..=MAX_SIGNED_WINDOW_BITS {
            let windows = SIGNED_BITS.div_ceil(c);
            for s in &scalars {
                let digits = signed_digits(*s, c, windows);
                let mut sum = Fr::ZERO;
                for (w, (m, negative)) in digits.iter().enumerate() {
                    assert!(*m <= 1 << (c - 1), "c {c}: digit {m} (seed {seed})");
                    let term = Fr::from(*m as u64) * Fr::from(2u64).pow([(c * w) as u64]);
                    sum += if *negative { -term } else { term };
                }
                assert_eq!(sum, *s, "c {c}: {} (seed {seed})", s.into_bigint());
            }
        }
    }

    /// shaders/msm_xyzz.wgsl's accumulate_xyzz on the host, step for step, over bases
    /// stored as (x·λ, y·λ) and negated where `negative`: the task's projective sum.
    fn xyzz_task(terms: &[(G1Affine, bool)], lambda: Fq) -> G1Projective {
        struct Xyzz {
            x: Fq,
            y: Fq,
            a: Fq,
            b: Fq,
        }
        let mut acc: Option<Xyzz> = None;
        for (q, negative) in terms {
            if q.is_zero() {
                continue;
            }
            let (qx, mut qy) = (q.x * lambda, q.y * lambda);
            if *negative {
                qy = -qy;
            }
            let Some(p) = acc.take() else {
                let l2 = lambda * lambda;
                acc = Some(Xyzz {
                    x: qx * lambda,
                    y: qy * l2,
                    a: lambda,
                    b: l2,
                });
                continue;
            };
            let mut dp = qx * p.a - p.x;
            let mut r = qy * p.b - p.y;
            let mut minus_ppp = true;
            if dp.is_zero() {
                if !r.is_zero() {
                    continue;
                }
                let xx = p.x * p.x;
                dp = p.y + p.y;
                r = xx + xx + xx;
                minus_ppp = false;
            }
            let pp = dp * dp;
            let ppp = dp * pp;
            let qq = p.x * pp;
            let mut x3 = r * r - (qq + qq);
            if minus_ppp {
                x3 -= ppp;
            }
            let y3 = r * (qq - x3) - p.y * ppp;
            acc = Some(Xyzz {
                x: x3,
                y: y3,
                a: p.a * pp,
                b: p.b * ppp,
            });
        }
        match acc {
            None => G1Projective::zero(),
            Some(p) => {
                // (X·B : Y·A : A·B·λ) as homogeneous projective: x = X'/Z', y = Y'/Z'.
                let z = p.a * p.b * lambda;
                let zi = z.inverse().expect("a sum that is not the identity");
                G1Affine::new(p.x * p.b * zi, p.y * p.a * zi).into()
            }
        }
    }

    #[test]
    fn xyzz_task_sums_match_arkworks_with_repeats_opposites_and_identities() {
        let seed = crucible_core::run_seed::run_seed();
        let mut rng = StdRng::seed_from_u64(seed);
        // λ = R/R' of 13-bit limbs (2^-6), of R' = R (1), and a random one.
        let lambdas = [
            Fq::from(64u64).inverse().unwrap(),
            Fq::ONE,
            Fq::rand(&mut rng),
        ];
        let point = |rng: &mut StdRng| G1Projective::rand(rng).into_affine();
        for lambda in lambdas {
            for case in 0..40 {
                let p = point(&mut rng);
                let mut terms: Vec<(G1Affine, bool)> = (0..16)
                    .map(|_| (point(&mut rng), rng.gen_bool(0.5)))
                    .collect();
                match case % 5 {
                    // P, P: a doubling.
                    0 => terms[..2].copy_from_slice(&[(p, false), (p, false)]),
                    // P, −P (by sign and by base): the identity, then more terms.
                    1 => terms[3..5].copy_from_slice(&[(p, false), (p, true)]),
                    2 => terms[..2].copy_from_slice(&[(p, false), (-p, false)]),
                    // Identity bases anywhere.
                    3 => {
                        terms[0].0 = G1Affine::identity();
                        terms[7].0 = G1Affine::identity();
                    }
                    _ => {}
                }
                // Repeats after other points: P + Q + (P + Q) needs a doubling too.
                if case % 7 == 6 {
                    terms.truncate(2);
                    terms.push((p, false));
                    terms.push((p, false));
                }
                let want: G1Projective = terms
                    .iter()
                    .map(|(q, negative)| if *negative { -*q } else { *q })
                    .map(G1Projective::from)
                    .sum();
                let got = xyzz_task(&terms, lambda);
                assert_eq!(got, want, "case {case}, λ {lambda} (seed {seed})");
            }
        }
        let p = point(&mut rng);
        assert!(xyzz_task(&[(p, false), (p, true)], lambdas[0]).is_zero());
    }
}
