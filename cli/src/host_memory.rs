//! The process's peak resident memory as Linux reports it (`VmHWM` in
//! `/proc/self/status`), and its reset, so that a run can say what its setup and
//! its proofs each held at most.

/// Starts the peak over from the memory resident now (where the kernel allows it).
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The peak resident memory since the process started or the last reset, where
/// the kernel reports it.
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
