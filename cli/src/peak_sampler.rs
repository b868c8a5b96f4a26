//! A thread that reads one figure of memory in use every few milliseconds and keeps
//! the highest, for the watches of the host's and a device's memory.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often a sampler reads.
pub const PERIOD: Duration = Duration::from_millis(10);

/// What a sampler saw.
pub struct Peak {
    /// The highest reading, the first included.
    pub most: u64,
    /// Readings taken, the first included.
    pub samples: u64,
}

/// A running sampler; [`PeakSampler::finish`] stops it, and so does dropping it.
pub struct PeakSampler {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Peak>>,
}

impl PeakSampler {
    /// Starts from a `first` reading, then calls `read` every [`PERIOD`] and once
    /// more when stopped (a `None` reading is skipped). `None` if no thread could
    /// be started.
    pub fn start(
        name: &str,
        first: u64,
        mut read: impl FnMut() -> Option<u64> + Send + 'static,
    ) -> Option<PeakSampler> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let mut peak = Peak {
                    most: first,
                    samples: 1,
                };
                let mut take = |peak: &mut Peak| {
                    if let Some(v) = read() {
                        peak.most = peak.most.max(v);
                        peak.samples += 1;
                    }
                };
                while !flag.load(Ordering::Relaxed) {
                    take(&mut peak);
                    std::thread::sleep(PERIOD);
                }
                take(&mut peak);
                peak
            })
            .ok()?;
        Some(PeakSampler {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops it and returns what it saw (`None` if the thread died).
    pub fn finish(mut self) -> Option<Peak> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take()?.join().ok()
    }
}

impl Drop for PeakSampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
