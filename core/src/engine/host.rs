//! The host machine: its cores and memory, as the engine sizes its host work from them.

/// Logical cores this process may use (1 if unknown).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A `/proc/meminfo` field in bytes.
fn meminfo(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Total host memory in bytes (16 GiB where `/proc/meminfo` cannot be read).
pub fn memory_total() -> u64 {
    meminfo("MemTotal:").unwrap_or(16 << 30)
}

/// Host memory available to new allocations now, in bytes (the total where unknown).
pub fn memory_available() -> u64 {
    meminfo("MemAvailable:").unwrap_or_else(memory_total)
}
