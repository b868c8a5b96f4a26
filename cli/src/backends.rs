//! `crucible backends`: one row per registered backend and device.

use std::process::ExitCode;

use clap::Args;
use crucible_core::human_bytes;
use crucible_core::registry::{probe_all, probe_listed, Probe};

use crate::devices::BackendArgs;
use crate::error::CliError;
use crate::output::table;

/// Arguments of `crucible backends`.
#[derive(Args)]
pub struct BackendsArgs {
    /// Backend (`all`, the default, lists every one but the template, which is for
    /// porters and listed only when named), budget cap and tuning file.
    #[command(flatten)]
    device: BackendArgs,
}

/// Probes the registered backends and prints a row per device (or per unavailable
/// backend, with the reason).
pub fn run(args: &BackendsArgs) -> Result<ExitCode, CliError> {
    let options = args.device.probe_options()?;
    let which = args.device.backend_or("all");
    let probed_all = if which == "all" {
        probe_listed::<crucible_core::Bls12_381>(&options)
    } else {
        let probed = probe_all(&options);
        if !probed.iter().any(|p| p.registration.name == which) {
            let names: Vec<_> = probed.iter().map(|p| p.registration.name).collect();
            return Err(CliError::usage(format!(
                "unknown backend `{which}`: the backends are {}, or `all`",
                names.join(", ")
            )));
        }
        probed
    };
    let mut rows = Vec::new();
    for probed in probed_all {
        let name = probed.registration.name;
        if which != "all" && which != name {
            continue;
        }
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
        return Err(CliError::device("no backend is registered in this binary"));
    }
    let headers = ["backend", "status", "device", "memory", "budget", "api"];
    println!("{}", table(&headers, &rows, headers.len()));
    Ok(ExitCode::SUCCESS)
}
