//! The device options, in groups a command takes whole: which backend, its budget cap
//! and tuning file (every command that probes one); workers per device (the ones that
//! run or plan the engine); which devices (the ones that prove on several).

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use crucible_core::engine::EngineConfig;
use crucible_core::registry::{
    registrations, select, select_devices, ProbeOptions, RegisteredCurve, Selected,
};
use crucible_core::tuning_file::TuningFile;
use crucible_core::ProverBackend;

use crate::error::CliError;
use crate::parse::{self, Devices};

/// `--backend`, `--memory-limit` and `--tuning`: what every command that probes a
/// backend takes.
#[derive(Args)]
pub struct BackendArgs {
    /// Backend: a registered name (`cpu`, `cuda`, `cuda:1`), `auto` (the best available)
    /// or `all` (every available one). Default: `auto` where one backend proves (prove,
    /// plan, serve, worker), `all` where backends are compared or listed (bench,
    /// conformance, backends). The template backend (for porters) runs only when named.
    #[arg(long)]
    pub backend: Option<String>,
    /// Cap on each device's budget (`512MiB`, `1.5GiB`, bytes): the fastest schedule
    /// whose staged key and one proof per worker fit is chosen (`crucible plan` prints
    /// it, and the floor below which no schedule fits).
    #[arg(long, value_parser = parse::memory)]
    pub memory_limit: Option<u64>,
    /// TOML tuning file: a table per backend (`[cuda]`, `[wgpu]`) overriding its
    /// defaults (default: the file `CRUCIBLE_TUNING` names, else none).
    #[arg(long, value_name = "FILE")]
    pub tuning: Option<PathBuf>,
}

/// `--workers-per-device`: what the commands that run the engine, or plan for it, take.
#[derive(Args)]
pub struct WorkersArgs {
    /// Workers per device, each holding at most one proof at a time (default 1).
    #[arg(long, value_parser = parse::size)]
    pub workers_per_device: Option<usize>,
}

impl WorkersArgs {
    /// `--workers-per-device` (1 when not given).
    pub fn workers(&self) -> usize {
        self.workers_per_device.unwrap_or(1)
    }
}

/// The devices of one backend and the workers on each: `serve` and `worker`.
#[derive(Args)]
pub struct DeviceArgs {
    #[command(flatten)]
    pub backend: BackendArgs,
    /// Devices of the backend: `all` or indices `0,2` (default: the one `--backend`
    /// names).
    #[arg(long, value_parser = parse::devices)]
    pub devices: Option<Devices>,
    #[command(flatten)]
    pub workers: WorkersArgs,
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

impl BackendArgs {
    /// `--backend`, or `default` when it is not given.
    pub fn backend_or<'a>(&'a self, default: &'a str) -> &'a str {
        self.backend.as_deref().unwrap_or(default)
    }

    /// Probe options carrying `--memory-limit` and the tuning file, whose tables are
    /// checked against the registered backends before anything is probed.
    pub fn probe_options(&self) -> Result<ProbeOptions, CliError> {
        let tuning = TuningFile::from_arg_or_env(self.tuning.as_deref())?;
        let known: Vec<&str> = registrations().iter().map(|r| r.name).collect();
        tuning.check_backends(&known)?;
        Ok(ProbeOptions {
            budget_cap: self.memory_limit,
            tuning: Arc::new(tuning),
            ..ProbeOptions::default()
        })
    }
}

impl DeviceArgs {
    /// `--workers-per-device` (1 when not given).
    pub fn workers(&self) -> usize {
        self.workers.workers()
    }

    /// The engine of a front end that serves many proofs (`serve`, `worker`): these
    /// devices' workers, `synthesis_threads` when given (else one, until the service
    /// sizes them for each key), every proof verified.
    pub fn engine_config(&self, synthesis_threads: Option<usize>) -> EngineConfig {
        EngineConfig {
            workers_per_device: self.workers(),
            synthesis_threads: synthesis_threads.unwrap_or(1),
            verify: true,
            ..EngineConfig::default()
        }
    }

    /// Probes the backend (`auto` unless named) and picks its devices.
    pub fn resolve(&self) -> Result<ChosenDevices, CliError> {
        if self.workers() == 0 {
            return Err(CliError::usage("--workers-per-device must be at least 1"));
        }
        let options = self.backend.probe_options()?;
        let selected = select_backend(self.backend.backend_or("auto"), &options)?;
        let backend = selected.backend.info().name.clone();
        let devices = chosen_devices(&selected.backend, self.devices.as_ref(), &options)?;
        Ok(ChosenDevices {
            devices,
            backend,
            reason: selected.reason,
        })
    }
}

/// The backend `spec` names (`auto`, `cpu`, `cuda:1`): a spec that names nothing that
/// exists is a usage error; an unavailable backend is the device's.
pub fn select_backend<E: RegisteredCurve>(
    spec: &str,
    options: &ProbeOptions,
) -> Result<Selected<E>, CliError> {
    select(spec, options).map_err(|e| match e {
        crucible_core::Error::InvalidInput(message) => CliError::usage(message),
        e => e.into(),
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn two_workers() -> DeviceArgs {
        DeviceArgs {
            backend: BackendArgs {
                backend: None,
                memory_limit: None,
                tuning: None,
            },
            devices: None,
            workers: WorkersArgs {
                workers_per_device: Some(2),
            },
        }
    }

    #[test]
    fn the_serving_engine_has_the_devices_workers_and_verifies() {
        let given = two_workers().engine_config(Some(5));
        assert_eq!(
            (
                given.workers_per_device,
                given.synthesis_threads,
                given.verify
            ),
            (2, 5, true)
        );
        assert!(given.schedule.is_none());
        assert_eq!(two_workers().engine_config(None).synthesis_threads, 1);
    }
}
