//! Per-pass GPU timings (the tuning file's `profile = true`): a timestamp at the start and the
//! end of every compute pass of a [`Batch`](super::batch::Batch), grouped by the phase
//! the caller names, printed as a table to stderr.
//!
//! Every dispatch of a batch is its own compute pass, so the pass timestamps of
//! `Features::TIMESTAMP_QUERY` time each dispatch; timestamps inside passes
//! (`TIMESTAMP_QUERY_INSIDE_PASSES`) would add nothing. A batch submits at most
//! [`PARAMS_SLOTS`] dispatches at a time, so one query set of two queries per slot
//! serves every submission; it is resolved into a leased buffer ([`items::RESOLVE`])
//! and read back through another ([`items::READBACK`]) after each submission, which
//! waits for the queue: profiled runs are slower in wall time, not on the GPU.

use std::sync::atomic::{AtomicBool, Ordering};

use crucible_core::{BufferId, Lease, PlanKey, Result};

use super::context::{Context, PARAMS_SLOTS};

/// Timestamps per submission: a start and an end for each of its dispatches.
pub const QUERIES: u32 = 2 * PARAMS_SLOTS as u32;

/// Bytes of the resolved timestamps (one `u64` each).
const RESOLVE_BYTES: u64 = QUERIES as u64 * 8;

/// Plan items of the profile's buffers (only when profiling is on).
pub mod items {
    use crucible_core::PlanKey;

    /// Where the query set's timestamps are resolved.
    pub const RESOLVE: PlanKey = PlanKey::new("wgpu", "profile_resolve");
    /// Host-readable copy of the resolved timestamps.
    pub const READBACK: PlanKey = PlanKey::new("wgpu", "profile_readback");
}

/// The features a device needs for the timings, if `requested` and the adapter has
/// them (else none: the run says why once, see [`enabled`]).
pub fn features(adapter: wgpu::Features, requested: bool) -> wgpu::Features {
    if requested {
        adapter & wgpu::Features::TIMESTAMP_QUERY
    } else {
        wgpu::Features::empty()
    }
}

/// Whether batches on `ctx` are timed: asked for, and the device has timestamp
/// queries. When asked for on a device without them, says so on stderr, once.
pub fn enabled(ctx: &Context) -> bool {
    if !ctx.tuned.profile {
        return false;
    }
    if ctx
        .device
        .features()
        .contains(wgpu::Features::TIMESTAMP_QUERY)
    {
        return true;
    }
    static NOTED: AtomicBool = AtomicBool::new(false);
    if !NOTED.swap(true, Ordering::Relaxed) {
        eprintln!(
            "crucible wgpu: the tuning asks for `profile`, but this adapter has no timestamp \
             queries (Features::TIMESTAMP_QUERY): no per-pass GPU timings"
        );
    }
    false
}

/// The profile buffers' plan items, if batches on `ctx` are timed.
pub fn plan_items(ctx: &Context) -> Vec<(PlanKey, u64)> {
    if enabled(ctx) {
        vec![
            (items::RESOLVE, RESOLVE_BYTES),
            (items::READBACK, RESOLVE_BYTES),
        ]
    } else {
        Vec::new()
    }
}

/// The usage of the profile's buffer `key` (one of [`items`]), None for another key.
pub fn usage(key: PlanKey) -> Option<wgpu::BufferUsages> {
    match key {
        k if k == items::RESOLVE => {
            Some(wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC)
        }
        k if k == items::READBACK => {
            Some(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST)
        }
        _ => None,
    }
}

/// The profile's two buffers in `lease` (their plan items from [`plan_items`]), if
/// batches on `ctx` are timed: (resolve, readback). On an error, whichever was
/// allocated stays in the lease for the caller's cleanup of `ids`, where it is pushed.
pub fn allocate(
    ctx: &Context,
    lease: &mut Lease,
    ids: &mut Vec<BufferId>,
) -> Result<Option<(BufferId, BufferId)>> {
    if !enabled(ctx) {
        return Ok(None);
    }
    let mut one = |key: PlanKey| -> Result<BufferId> {
        let usage = usage(key).unwrap_or(wgpu::BufferUsages::empty());
        let id = lease.allocate(key, RESOLVE_BYTES, || {
            Ok(ctx.create_buffer(key, RESOLVE_BYTES, usage)?)
        })?;
        ids.push(id);
        Ok(id)
    };
    let resolve = one(items::RESOLVE)?;
    let readback = one(items::READBACK)?;
    Ok(Some((resolve, readback)))
}

/// What a timed batch writes its timestamps with: the query set and the two leased
/// buffers of [`items`].
pub struct Timer<'a> {
    pub(crate) queries: wgpu::QuerySet,
    pub(crate) resolve: &'a wgpu::Buffer,
    pub(crate) readback: &'a wgpu::Buffer,
    /// Nanoseconds per timestamp tick.
    pub(crate) period: f64,
}

impl<'a> Timer<'a> {
    /// A timer on `ctx` over the leased `resolve` (usage `QUERY_RESOLVE | COPY_SRC`)
    /// and `readback` (`MAP_READ | COPY_DST`) buffers of [`RESOLVE_BYTES`] each.
    pub fn new(ctx: &Context, resolve: &'a wgpu::Buffer, readback: &'a wgpu::Buffer) -> Self {
        Timer {
            queries: ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("crucible pass timings"),
                ty: wgpu::QueryType::Timestamp,
                count: QUERIES,
            }),
            resolve,
            readback,
            period: f64::from(ctx.queue.get_timestamp_period()),
        }
    }
}

/// GPU nanoseconds of each pass from resolved (start, end) `ticks` of `period` ns each
/// (an end before its start, which a clock reset could give, counts as 0).
pub(crate) fn pass_durations(ticks: &[u64], period: f64) -> Vec<f64> {
    ticks
        .chunks_exact(2)
        .map(|p| p[1].saturating_sub(p[0]) as f64 * period)
        .collect()
}

/// GPU time of every timed pass, by phase, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassTimes {
    /// (phase, GPU nanoseconds) of each pass.
    pub passes: Vec<(&'static str, f64)>,
}

impl PassTimes {
    /// Appends `other`'s passes.
    pub fn extend(&mut self, other: PassTimes) {
        self.passes.extend(other.passes);
    }

    /// (phase, passes, GPU ns) per phase, in the order phases first appear.
    pub fn phases(&self) -> Vec<(&'static str, usize, f64)> {
        let mut out: Vec<(&'static str, usize, f64)> = Vec::new();
        for &(phase, ns) in &self.passes {
            match out.iter_mut().find(|(p, _, _)| *p == phase) {
                Some(row) => {
                    row.1 += 1;
                    row.2 += ns;
                }
                None => out.push((phase, 1, ns)),
            }
        }
        out
    }

    /// The per-phase table under `title`, with the operation's wall time.
    pub fn table(&self, title: &str, wall: std::time::Duration) -> String {
        let phases = self.phases();
        let total: f64 = phases.iter().map(|p| p.2).sum();
        let wall_ms = wall.as_secs_f64() * 1e3;
        let mut s = format!(
            "wgpu profile: {title}\n  {:<14} {:>6} {:>11} {:>7}\n",
            "phase", "passes", "GPU ms", "share"
        );
        for (phase, passes, ns) in &phases {
            let share = if total > 0.0 { 100.0 * ns / total } else { 0.0 };
            s += &format!(
                "  {phase:<14} {passes:>6} {:>11.3} {share:>6.1}%\n",
                ns / 1e6
            );
        }
        s += &format!(
            "  {:<14} {:>6} {:>11.3}   (wall {wall_ms:.3} ms with the profile's read-backs)\n",
            "total",
            self.passes.len(),
            total / 1e6
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_sum_in_first_seen_order_and_the_table_shows_them() {
        let t = PassTimes {
            passes: vec![
                ("sort", 1.0e6),
                ("accumulate", 10.0e6),
                ("sort", 0.5e6),
                ("reduce", 2.5e6),
            ],
        };
        assert_eq!(
            t.phases(),
            vec![
                ("sort", 2, 1.5e6),
                ("accumulate", 1, 10.0e6),
                ("reduce", 1, 2.5e6)
            ]
        );
        let table = t.table("G1 MSM", std::time::Duration::from_millis(20));
        assert!(
            table.contains("accumulate          1      10.000   71.4%"),
            "{table}"
        );
        assert!(
            table.contains("total               4      14.000"),
            "{table}"
        );
        assert!(table.contains("wall 20.000 ms"), "{table}");
    }

    #[test]
    fn durations_scale_ticks_by_the_period() {
        assert_eq!(
            pass_durations(&[100, 140, 200, 190, 7], 2.5),
            vec![100.0, 0.0]
        );
    }
}
