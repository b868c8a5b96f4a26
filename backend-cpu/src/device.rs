//! The host as a device: its name and memory.

use crucible_core::BackendInfo;

/// Total host memory in bytes (from /proc/meminfo; 16 GiB if it cannot be read).
pub fn host_memory_bytes() -> u64 {
    crucible_core::host::memory_total()
}

fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// Backend info for logical CPU device `index`.
pub fn info(index: usize) -> BackendInfo {
    BackendInfo {
        name: "cpu".into(),
        device_index: index,
        device_name: format!("{} ({} threads)", cpu_name(), rayon::current_num_threads()),
        api: "host (arkworks, rayon)".into(),
        memory_bytes: host_memory_bytes(),
        priority: crucible_core::priority::HOST,
    }
}
