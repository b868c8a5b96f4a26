//! The backend and devices a long-running command proves on (`serve`, `worker`).

use std::sync::Arc;

use clap::Args;
use crucible_core::registry::{select, select_devices, ProbeOptions};
use crucible_core::ProverBackend;

use crate::prove::Devices;
use crate::{parse, CliError};

/// `--backend`, `--devices`, `--memory-limit`, `--workers-per-device`.
#[derive(Args)]
pub struct DeviceArgs {
    /// Backend: a registered name (`cpu`, `cuda`, `cuda:1`) or `auto` (the best available).
    #[arg(long, default_value = "auto")]
    pub backend: String,
    /// Devices of the backend: `all` or indices `0,2` (default: the one `--backend` names).
    #[arg(long, value_parser = parse::devices)]
    pub devices: Option<Devices>,
    /// Cap on each device's budget (`512MiB`, `1.5GiB`, bytes).
    #[arg(long, value_parser = parse::memory)]
    pub memory_limit: Option<u64>,
    /// Workers per device; each holds at most one proof lease at a time.
    #[arg(long, default_value = "1", value_parser = parse::size)]
    pub workers_per_device: usize,
}

/// The chosen devices, the backend's name and why it was chosen.
pub struct ChosenDevices {
    /// One backend instance per device.
    pub devices: Vec<Arc<dyn ProverBackend>>,
    /// The backend's name.
    pub backend: String,
    /// Why it was chosen (for `auto`).
    pub reason: String,
}

impl DeviceArgs {
    /// Probes the backend and picks its devices.
    pub fn resolve(&self) -> Result<ChosenDevices, CliError> {
        if self.workers_per_device == 0 {
            return Err(CliError("--workers-per-device must be at least 1".into()));
        }
        let options = ProbeOptions {
            memory_limit: self.memory_limit,
            ..ProbeOptions::default()
        };
        let selected = select(&self.backend, &options)?;
        let backend = selected.backend.info().name.clone();
        let devices = chosen_devices(&selected.backend, self.devices.as_ref(), &options)?;
        Ok(ChosenDevices {
            devices,
            backend,
            reason: selected.reason,
        })
    }
}

/// `selected` alone, or the devices of its backend that `devices` names.
pub fn chosen_devices(
    selected: &Arc<dyn ProverBackend>,
    devices: Option<&Devices>,
    options: &ProbeOptions,
) -> Result<Vec<Arc<dyn ProverBackend>>, CliError> {
    let Some(devices) = devices else {
        return Ok(vec![Arc::clone(selected)]);
    };
    let indices = match devices {
        Devices::All => None,
        Devices::Some(list) => Some(list.as_slice()),
    };
    Ok(select_devices(&selected.info().name, indices, options)?)
}
