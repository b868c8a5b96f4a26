//! `crucible backends`: one row per registered backend and device.

use std::process::ExitCode;

use crucible_core::human_bytes;
use crucible_core::registry::{probe_all, Probe, ProbeOptions};

use crate::output::table;
use crate::CliError;

/// Probes every registered backend and prints a row per device (or per unavailable
/// backend, with the reason).
pub fn run() -> Result<ExitCode, CliError> {
    let options = ProbeOptions::default();
    let mut rows = Vec::new();
    for probed in probe_all(&options) {
        let name = probed.registration.name;
        for probe in probed.probes {
            rows.push(match probe {
                Probe::Available(backend) => {
                    let info = backend.info();
                    vec![
                        info.label(),
                        "available".into(),
                        info.device_name.clone(),
                        human_bytes(info.memory_bytes),
                        human_bytes(backend.budget().capacity()),
                        info.api.clone(),
                    ]
                }
                Probe::Unavailable { reason } => vec![
                    name.to_string(),
                    format!("unavailable: {reason}"),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    probed.registration.description.to_string(),
                ],
            });
        }
    }
    if rows.is_empty() {
        return Err(CliError("no backend is registered in this binary".into()));
    }
    let headers = ["backend", "status", "device", "memory", "budget", "api"];
    println!("{}", table(&headers, &rows, headers.len()));
    Ok(ExitCode::SUCCESS)
}
