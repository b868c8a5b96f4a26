//! The process's peak resident memory as Linux reports it (`VmHWM` in
//! `/proc/self/status`), and its reset, so that a run can say what its setup and
//! its proofs each held at most.

use crate::peak_sampler::PeakSampler;

/// Starts the peak over from the memory resident now (where the kernel allows it).
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The peak resident memory since the process started or the last reset, where
/// the kernel reports it.
pub fn peak_rss() -> Option<u64> {
    status_bytes("VmHWM:")
}

/// The memory resident now, where the kernel reports it.
pub fn rss() -> Option<u64> {
    status_bytes("VmRSS:")
}

fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The peak resident memory of one stretch of a run. It resets the kernel's peak
/// where the kernel allows that, and checks that it did: some kernels (and
/// sandboxes) accept the reset and keep the old peak. It also samples the resident
/// memory ([`PeakSampler`]), so that where the reset does not take, the peak
/// reported is the stretch's own, sampled, and never the setup's before it.
pub struct PeakWatch {
    at_start: Option<u64>,
    reset: bool,
    sampler: Option<PeakSampler>,
}

impl PeakWatch {
    /// Starts watching from now.
    pub fn start() -> Self {
        reset_peak_rss();
        let at_start = rss();
        // A reset that took leaves the peak at about what is resident now; one
        // that did not leaves the old, higher peak.
        let reset = matches!(
            (peak_rss(), at_start),
            (Some(peak), Some(now)) if peak <= now.saturating_add(64 << 20)
        );
        let sampler = at_start.and_then(|first| PeakSampler::start("rss sampler", first, rss));
        Self {
            at_start,
            reset,
            sampler,
        }
    }

    /// The memory resident when the watch started.
    pub fn at_start(&self) -> Option<u64> {
        self.at_start
    }

    /// The peak since the watch started: the kernel's where its reset took (at
    /// least the sampled one), else the sampled one.
    pub fn finish(self) -> Option<u64> {
        let sampled = self.sampler.and_then(PeakSampler::finish).map(|p| p.most);
        let kernel = if self.reset { peak_rss() } else { None };
        kernel.max(sampled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_sees_memory_touched_after_it_started_and_not_before() {
        let Some(before) = rss() else {
            eprintln!("no /proc/self/status here: nothing to watch");
            return;
        };
        // Touched and freed before the watch: a setup's peak the watch must not
        // report.
        let setup = vec![1u8; 512 << 20];
        std::hint::black_box(&setup);
        drop(setup);
        let watch = PeakWatch::start();
        let proving = vec![1u8; 128 << 20];
        std::hint::black_box(&proving);
        std::thread::sleep(crate::peak_sampler::PERIOD * 5);
        drop(proving);
        let peak = watch.finish().expect("a peak where VmRSS exists");
        assert!(
            peak >= before + (100 << 20),
            "peak {peak} B misses the 128 MiB touched while watching (resident before: {before} B)"
        );
        assert!(
            peak < before + (400 << 20),
            "peak {peak} B includes the 512 MiB freed before the watch (resident before: {before} B)"
        );
    }
}
