//! Watching a device's real memory use (the driver's free/total, sampled on a thread)
//! beside its budget, for the runs that must stay under a memory limit.

use std::sync::Arc;

use crucible_core::{human_bytes, PairingCurve, ProverBackend};

use crate::peak_sampler::{PeakSampler, PERIOD};

/// What the samples saw: memory in use on the whole device (every process).
pub struct Sampled {
    /// In use when the watch started.
    pub start_used: u64,
    /// Most in use at any sample.
    pub peak_used: u64,
    /// The device's memory.
    pub total: u64,
    /// Samples taken.
    pub samples: u64,
}

impl Sampled {
    /// One line for the report.
    pub fn describe(&self, capacity: u64) -> String {
        let above = self.peak_used.saturating_sub(self.start_used);
        format!(
            "device memory in use (driver, {} samples every {} ms, of {}): {} at the start, peak {} \
             ({} above the start; the budget's capacity is {}: {})",
            self.samples,
            PERIOD.as_millis(),
            human_bytes(self.total),
            human_bytes(self.start_used),
            human_bytes(self.peak_used),
            human_bytes(above),
            human_bytes(capacity),
            if above <= capacity {
                "within it"
            } else {
                "OVER IT"
            }
        )
    }
}

/// A running watch; [`MemoryWatch::finish`] stops it.
pub struct MemoryWatch {
    start_used: u64,
    total: u64,
    sampler: PeakSampler,
}

impl MemoryWatch {
    /// Starts sampling `backend`'s device, or `None` when its driver cannot say.
    pub fn start<E: PairingCurve>(backend: Arc<dyn ProverBackend<E>>) -> Option<MemoryWatch> {
        let first = backend.device_memory().ok().flatten()?;
        let start_used = first.total - first.free;
        let sampler = PeakSampler::start("device memory sampler", start_used, move || {
            let m = backend.device_memory().ok().flatten()?;
            Some(m.total - m.free)
        })?;
        Some(MemoryWatch {
            start_used,
            total: first.total,
            sampler,
        })
    }

    /// Stops sampling and returns what was seen (`None` if the thread died).
    pub fn finish(self) -> Option<Sampled> {
        let peak = self.sampler.finish()?;
        Some(Sampled {
            start_used: self.start_used,
            peak_used: peak.most,
            total: self.total,
            samples: peak.samples,
        })
    }
}
