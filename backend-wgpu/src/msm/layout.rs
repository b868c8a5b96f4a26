//! An MSM's shape and scratch: the window and batch of each range of sizes (by the
//! cost model), the scratch items a batch needs, the largest batch whose scratch fits
//! one binding, and the scratch buffers kept in the lease between MSMs.

use crucible_core::{BufferId, Lease, PlanKey, Result};

use crate::device::batch::{ParamsBuffer, PARAMS_ITEM};
use crate::device::context::Context;
use crate::device::profile::{self, Timer};
use crate::error::WgpuError;

use super::cost::{signed_cost, CostWeights, MAX_WINDOW_BITS, SIGNED_BITS, TASK_SIZE};

/// Elements each thread of a reduction level combines (LEVEL_GROUP in msm_common.wgsl).
const LEVEL_GROUP: usize = 4;

/// How an MSM's windows are chosen: the cost weights of its curve's form, and the
/// window the tuning fixes, if it does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Choice {
    /// The cost model's weights.
    pub weights: CostWeights,
    /// A fixed window (the tuning file's `msm_window_bits`).
    pub window: Option<usize>,
}

/// Plan items of the MSM's scratch buffers.
pub mod items {
    use crucible_core::PlanKey;

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

/// The shape of one batch of up to `n` terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Terms of the batch.
    pub n: usize,
    /// Bits a window.
    pub window_bits: usize,
    /// Windows covering [`SIGNED_BITS`].
    pub windows: usize,
    /// Buckets a window, the empty bucket 0 included.
    pub buckets: usize,
    /// The most bucket tasks a window can have.
    pub max_tasks: usize,
}

impl Config {
    /// The window depends on the batch's range 2^k ≤ n < 2^(k+1) only, so that every
    /// scratch item grows with n within a range (scratch_plan and max_batch plan for
    /// each range's largest batch): the window of least [`signed_cost`] at the
    /// range's top, 2 to 16 bits, unless the choice fixes it.
    pub fn new(n: usize, choice: Choice) -> Config {
        let log = usize::BITS as usize - 1 - n.max(1).leading_zeros() as usize;
        let top = (1usize << (log + 1)) - 1;
        let window_bits = choice.window.unwrap_or_else(|| {
            (2..=MAX_WINDOW_BITS)
                .min_by(|a, b| {
                    let cost = |c| signed_cost(top, c, choice.weights);
                    cost(*a).total_cmp(&cost(*b))
                })
                .unwrap_or(MAX_WINDOW_BITS)
        });
        let buckets = (1usize << (window_bits - 1)) + 1;
        Config {
            n,
            window_bits,
            windows: SIGNED_BITS.div_ceil(window_bits),
            buckets,
            // Σ_b ceil(count_b / T) over at most min(n, buckets − 1) non-empty buckets.
            max_tasks: (n + (TASK_SIZE - 1) * n.min(buckets - 1)) / TASK_SIZE,
        }
    }

    /// Merge rounds: a bucket has at most ceil(n / T) tasks.
    pub fn merge_rounds(&self) -> u32 {
        self.n
            .div_ceil(TASK_SIZE)
            .next_power_of_two()
            .trailing_zeros()
    }

    /// Elements per window after each reduction level, down to 1.
    pub fn levels(&self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut m = self.buckets;
        while m > 1 {
            m = m.div_ceil(LEVEL_GROUP);
            out.push(m);
        }
        out
    }

    /// Bytes of every scratch item, by name (the profile's too when it is on).
    pub fn items(&self, ctx: &Context, point_words: usize) -> Vec<(PlanKey, u64)> {
        let w = self.windows as u64;
        let b = self.buckets as u64;
        let pair = 2 * 4 * point_words as u64;
        let levels = self.levels();
        let level_a = levels.first().copied().unwrap_or(1) as u64;
        let level_b = levels.get(1).copied().unwrap_or(1) as u64;
        let mut out = vec![
            (items::DIGITS, w * self.n as u64 * 4),
            (items::COUNTS, w * b * 4),
            (items::CURSOR, w * b * 4),
            // Each window's bucket tasks and total, then each window's most tasks.
            (items::TASK_OFFSETS, (w * (b + 1) + w) * 4),
            (items::SORTED, w * self.n as u64 * 4),
            (items::PARTIALS, w * self.max_tasks as u64 * pair / 2),
            (items::LEVEL_A, w * level_a * pair),
            (items::LEVEL_B, w * level_b * pair),
            (items::READBACK, w * pair),
        ];
        out.extend(profile::plan_items(ctx));
        out
    }

    fn fits(&self, ctx: &Context, point_words: usize) -> bool {
        self.items(ctx, point_words)
            .iter()
            .all(|(_, bytes)| *bytes <= ctx.limits.binding_bytes)
    }
}

/// Largest batch: the end of the last window-size range (n = 2^(k+1) − 1) whose
/// scratch, and every smaller range's, fits one binding. None if not even one term
/// fits.
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
pub fn batch_len(ctx: &Context, point_words: usize, len: usize, choice: Choice) -> Result<usize> {
    let most = max_batch(ctx, point_words, choice).ok_or_else(|| {
        crucible_core::Error::Unsupported(format!(
            "MSM scratch does not fit a binding of {} bytes",
            ctx.limits.binding_bytes
        ))
    })?;
    Ok(len.min(most))
}

/// The MSM's scratch buffers in the lease, by plan item.
///
/// The MSM's own items stay in the lease after a successful MSM, created at their
/// plan items' sizes, and every later MSM on that lease they are large enough for
/// takes them as they are: on the H200's Vulkan driver creating and dropping them cost
/// about 21 ms of a 53 ms G1 MSM at 2^20, and a proof's MSMs of three sizes recreated
/// them twice (45 ms a proof). The kernels assume nothing of their contents (the counts
/// are cleared in every batch, the rest written before it is read), as the batches of
/// one MSM already share them. The parameters are the lease's kept [`ParamsBuffer`], shared
/// with the other operations; the profile's buffers are freed after every MSM; the
/// lease frees the kept ones at release.
pub struct Scratch {
    ids: Vec<(PlanKey, BufferId)>,
}

/// Whether an item's buffer may stay in the lease between MSMs: the MSM's own items
/// and the parameters, not the profile's buffers.
fn kept_between_msms(key: PlanKey) -> bool {
    profile::usage(key).is_none()
}

impl Scratch {
    /// The scratch of batches shaped as `config`, in `work`: kept buffers large enough
    /// taken as they are, the rest created.
    pub fn allocate(
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

    /// The buffer of item `key`.
    pub fn buffer<'l>(&self, work: &'l Lease, key: PlanKey) -> Result<&'l wgpu::Buffer> {
        work.get::<wgpu::Buffer>(self.id(key)?)
    }

    /// The lease's id of item `key`.
    pub fn id(&self, key: PlanKey) -> Result<BufferId> {
        Ok(self
            .ids
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, id)| *id)
            .ok_or(WgpuError::Corrupt {
                what: "MSM scratch item",
            })?)
    }

    /// The profile's timer, when batches are timed.
    pub fn timer<'l>(&self, ctx: &Context, work: &'l Lease) -> Result<Option<Timer<'l>>> {
        if !profile::enabled(ctx) {
            return Ok(None);
        }
        let resolve = self.buffer(work, profile::items::RESOLVE)?;
        let readback = self.buffer(work, profile::items::READBACK)?;
        Ok(Some(Timer::new(ctx, resolve, readback)))
    }

    /// The buffers to free once the MSM is done: every one if it failed (no later MSM
    /// should trust what a failed one left), else those not kept between MSMs.
    pub fn to_free(&self, failed: bool) -> Vec<BufferId> {
        self.ids
            .iter()
            .filter(|(key, _)| failed || !kept_between_msms(*key))
            .map(|(_, id)| *id)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The windows of the additions' weights (the interpreted form's).
    const ADDITIONS: Choice = Choice {
        weights: CostWeights::ADDITIONS,
        window: None,
    };

    #[test]
    fn the_measured_weights_choose_the_windows_the_h200_sweep_found_fastest() {
        let c = |weights, n| {
            Config::new(
                n,
                Choice {
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
        use crate::wgsl::programs::Program;
        use crate::wgsl::Formulas;
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

    #[test]
    fn signed_windows_cover_every_scalar_bit_and_pick_the_cheapest_width() {
        for log in 0..=26 {
            for n in [(1usize << log) - 1, 1 << log, (1 << log) + 1] {
                let c = Config::new(n.max(1), ADDITIONS);
                assert!((2..=MAX_WINDOW_BITS).contains(&c.window_bits), "{c:?}");
                assert!(c.windows * c.window_bits >= SIGNED_BITS, "{c:?}");
                assert_eq!(c.buckets, (1 << (c.window_bits - 1)) + 1, "{c:?}");
            }
        }
        // Every batch's scratch fits what scratch_plan reserves for its range's top.
        for n in 1..=4096usize {
            let log = usize::BITS as usize - 1 - n.leading_zeros() as usize;
            let (a, b) = (
                Config::new(n, ADDITIONS),
                Config::new((2 << log) - 1, ADDITIONS),
            );
            assert_eq!(a.window_bits, b.window_bits, "n {n}");
            assert!(a.max_tasks <= b.max_tasks, "n {n}");
        }
        let big = Config::new(1 << 20, ADDITIONS);
        assert_eq!((big.window_bits, big.windows, big.buckets), (16, 16, 32769));
        assert_eq!(Config::new(1 << 16, ADDITIONS).window_bits, 13);
        // A fixed window is taken as it is.
        let fixed = Choice {
            window: Some(12),
            ..ADDITIONS
        };
        assert_eq!(Config::new(1 << 20, fixed).window_bits, 12);
        // About 19.1 M additions at 2^20 (the module doc's figure).
        let adds = signed_cost(1 << 20, 16, CostWeights::ADDITIONS);
        assert!((18.9e6..19.3e6).contains(&adds), "{adds}");
    }
}
