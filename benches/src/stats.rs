//! Repeated runs and their median, minimum and maximum.

use std::time::Duration;

use crucible_core::{PairingCurve, Result};

use crate::{RunTimes, Workload};

/// Summary of repeated timings.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Stats {
    /// Median (mean of the two middle values for an even count), in milliseconds.
    pub median_ms: f64,
    /// Fastest run, in milliseconds.
    pub min_ms: f64,
    /// Slowest run, in milliseconds.
    pub max_ms: f64,
    /// Every run in order, in milliseconds.
    pub samples_ms: Vec<f64>,
}

impl Stats {
    /// Summarizes `samples` (all zero when empty).
    pub fn of(samples: &[Duration]) -> Stats {
        let ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        let mut sorted = ms.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = match n {
            0 => 0.0,
            _ if n % 2 == 1 => sorted[n / 2],
            _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
        };
        Stats {
            median_ms: median,
            min_ms: sorted.first().copied().unwrap_or(0.0),
            max_ms: sorted.last().copied().unwrap_or(0.0),
            samples_ms: ms,
        }
    }
}

/// Both timings of repeated runs.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Measurement {
    /// Inputs already on the device (launch to `synchronize()`).
    pub resident: Stats,
    /// Including host-to-device staging and reading the result back.
    pub with_transfers: Stats,
    /// `resident` was timed with device events (CUDA), not the host's clock.
    pub device_clock: bool,
}

/// One untimed warm-up run, then `repeat` timed runs on fresh inputs; `on_run` is
/// called after each run (the warm-up included), for progress bars.
pub fn measure<E: PairingCurve>(
    workload: &mut Workload<'_, E>,
    repeat: usize,
    on_run: &mut dyn FnMut(),
) -> Result<Measurement> {
    workload.run()?;
    on_run();
    let mut runs: Vec<RunTimes> = Vec::with_capacity(repeat);
    for _ in 0..repeat {
        runs.push(workload.run()?);
        on_run();
    }
    let resident: Vec<_> = runs.iter().map(|r| r.resident).collect();
    let with_transfers: Vec<_> = runs.iter().map(|r| r.with_transfers).collect();
    Ok(Measurement {
        resident: Stats::of(&resident),
        with_transfers: Stats::of(&with_transfers),
        device_clock: !runs.is_empty() && runs.iter().all(|r| r.device_clock),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_min_max() {
        let ms = |v: &[u64]| {
            v.iter()
                .map(|&m| Duration::from_millis(m))
                .collect::<Vec<_>>()
        };
        let s = Stats::of(&ms(&[5, 1, 3]));
        assert_eq!((s.median_ms, s.min_ms, s.max_ms), (3.0, 1.0, 5.0));
        assert_eq!(s.samples_ms, vec![5.0, 1.0, 3.0]);
        assert_eq!(Stats::of(&ms(&[4, 1, 2, 3])).median_ms, 2.5);
        assert_eq!(Stats::of(&[]), Stats::default());
    }
}
