//! Finding devices and describing them. A real backend probes its driver here, and
//! answers `Probe::Unavailable { reason }` (never a panic) when the driver library or
//! a device is missing; backend-cuda's device.rs checks the library before any call.

use crucible_core::registry::ProbeOptions;
use crucible_core::{priority, BackendInfo, DeviceBudget};
use std::sync::Arc;

/// The memory claimed while no device is probed: enough that leases are granted and
/// the suite reaches each operation. A real backend reports what its device has free.
const PLACEHOLDER_MEMORY: u64 = 1 << 30;

/// One device: what reports name, and the budget every worker on it shares.
pub struct Device {
    /// Name, device and memory, for reports.
    pub info: BackendInfo,
    /// The device's budget.
    pub budget: Arc<DeviceBudget>,
}

/// The devices this backend finds: one placeholder until a driver is probed here,
/// unranked so that `auto` never picks it (a backend that proves takes its step on
/// the `crucible_core::priority` scale).
pub fn probe(options: &ProbeOptions) -> Vec<Device> {
    let info = BackendInfo {
        name: "template".into(),
        device_index: 0,
        device_name: "no device yet (implement device.rs)".into(),
        api: "none".into(),
        memory_bytes: PLACEHOLDER_MEMORY,
        priority: priority::UNRANKED,
    };
    let budget = DeviceBudget::new(info.label(), options.budget_capacity(info.memory_bytes));
    vec![Device { info, budget }]
}
