//! `crucible serve`: the gRPC proving daemon (crucible_service::server).

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::Args;
use crucible_core::engine::EngineConfig;
use crucible_service::server::{serve, ServeConfig};

use crate::devices::DeviceArgs;
use crate::error::CliError;
use crate::{parse, runtime};

/// Arguments of `crucible serve`.
#[derive(Args)]
pub struct ServeArgs {
    #[command(flatten)]
    devices: DeviceArgs,
    /// Address of the gRPC API (port 0: any free port; the chosen one is printed).
    #[arg(long, default_value = "127.0.0.1:50051")]
    listen: SocketAddr,
    /// Address of the Prometheus endpoint (`GET /metrics`); none when not given.
    #[arg(long)]
    metrics_listen: Option<SocketAddr>,
    /// The most jobs one key holds, queued or in flight; `Submit` answers busy beyond.
    #[arg(long, default_value = "256", value_parser = parse::size)]
    queue_capacity: usize,
    /// Ended jobs whose results stay available to `Await`.
    #[arg(long, default_value = "10000", value_parser = parse::size)]
    retain_results: usize,
    /// Host threads synthesizing circuits ahead of the devices, per key. Default:
    /// sized for each key (two a worker, at most half the cores, within a quarter of
    /// the host memory available).
    #[arg(long, value_parser = parse::size)]
    synthesis_threads: Option<usize>,
    /// The largest request accepted, in bytes (`.wtns` and assignment witnesses are
    /// 32 bytes a variable).
    #[arg(long, default_value = "1GiB", value_parser = parse::memory)]
    max_message_bytes: u64,
}

/// Serves until SIGINT or SIGTERM, then evicts every key and exits.
pub fn run(args: &ServeArgs) -> Result<ExitCode, CliError> {
    if args.queue_capacity == 0 || args.synthesis_threads == Some(0) {
        return Err(CliError(
            "--queue-capacity and --synthesis-threads must be at least 1".into(),
        ));
    }
    let chosen = args.devices.resolve()?;
    println!("{}", chosen.reason);
    let labels: Vec<_> = chosen.devices.iter().map(|d| d.info().label()).collect();
    let config = ServeConfig {
        backend: chosen.backend,
        devices: chosen.devices,
        engine: EngineConfig {
            workers_per_device: args.devices.workers(),
            synthesis_threads: args.synthesis_threads.unwrap_or(1),
            verify: true,
            ..EngineConfig::default()
        },
        auto_synthesis_threads: args.synthesis_threads.is_none(),
        max_message_bytes: usize::try_from(args.max_message_bytes).unwrap_or(usize::MAX),
        queue_capacity: args.queue_capacity,
        retain_results: args.retain_results,
    };
    runtime::build()?.block_on(async {
        let grpc = runtime::bind(args.listen).await?;
        let metrics = match args.metrics_listen {
            Some(addr) => Some(runtime::bind(addr).await?),
            None => None,
        };
        println!(
            "devices: {} ({} per device)",
            labels.join(", "),
            crate::output::count(args.devices.workers() as u64, "worker")
        );
        println!("grpc listening on {}", runtime::local_addr(&grpc)?);
        if let Some(m) = &metrics {
            println!(
                "metrics listening on http://{}/metrics",
                runtime::local_addr(m)?
            );
        }
        serve(config, grpc, metrics, runtime::shutdown_signal())
            .await
            .map_err(|e| CliError(e.to_string()))?;
        println!("stopped");
        Ok(ExitCode::SUCCESS)
    })
}
