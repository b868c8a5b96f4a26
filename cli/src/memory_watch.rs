//! Watching a device's real memory use (the driver's free/total, sampled on a thread)
//! beside its budget, for the runs that must stay under a memory limit.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crucible_core::{human_bytes, ProverBackend};

/// How often the driver is asked.
const PERIOD: Duration = Duration::from_millis(10);

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
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Sampled>,
}

impl MemoryWatch {
    /// Starts sampling `backend`'s device, or `None` when its driver cannot say.
    pub fn start(backend: Arc<dyn ProverBackend>) -> Option<MemoryWatch> {
        let first = backend.device_memory().ok().flatten()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let start_used = first.total - first.free;
            let mut sampled = Sampled {
                start_used,
                peak_used: start_used,
                total: first.total,
                samples: 1,
            };
            while !flag.load(Ordering::Relaxed) {
                if let Ok(Some(m)) = backend.device_memory() {
                    sampled.peak_used = sampled.peak_used.max(m.total - m.free);
                    sampled.samples += 1;
                }
                std::thread::sleep(PERIOD);
            }
            sampled
        });
        Some(MemoryWatch { stop, thread })
    }

    /// Stops sampling and returns what was seen (`None` if the thread died).
    pub fn finish(self) -> Option<Sampled> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().ok()
    }
}
