//! `crucible worker`: proves jobs from the shared Postgres queue (crucible_service::worker).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use crucible_service::metrics::Metrics;
use crucible_service::queue::MAX_FAILURES;
use crucible_service::worker::{self, unique_name, WorkerConfig, MIN_POLL};

use crate::devices::DeviceArgs;
use crate::error::CliError;
use crate::output::database_address;
use crate::serve::LimitArgs;
use crate::{parse, runtime};

/// Arguments of `crucible worker`.
#[derive(Args)]
pub struct WorkerArgs {
    /// The queue's database: `postgres://user:password@host:port/database`; TLS
    /// with `?sslmode=require`, the server's certificate checked with `verify-full`
    /// (against the system's CAs, or `&sslrootcert=ca.pem`).
    #[arg(long)]
    queue: String,
    #[command(flatten)]
    devices: DeviceArgs,
    /// A prefix for this worker's name in the queue (host, pid and a random suffix follow).
    #[arg(long)]
    name: Option<String>,
    /// A running job whose lease is not renewed for this long goes back to the queue
    /// (every worker of a queue should use the same value).
    #[arg(long, default_value = "30s", value_parser = parse::duration)]
    lease_timeout: Duration,
    /// How often leases are renewed (well under --lease-timeout).
    #[arg(long, default_value = "5s", value_parser = parse::duration)]
    heartbeat: Duration,
    /// How long to wait before asking again when the queue is empty (at least 50ms).
    #[arg(long, default_value = "250ms", value_parser = parse::duration)]
    poll: Duration,
    /// A job fails after at most this many failed attempts (errors or lost leases),
    /// whatever its own `--max-failures` asked for.
    #[arg(long, default_value_t = 3)]
    max_failures: i32,
    #[command(flatten)]
    limits: LimitArgs,
    /// At SIGTERM, how long in-flight proofs may take to finish and be committed.
    #[arg(long, default_value = "60s", value_parser = parse::duration)]
    drain_timeout: Duration,
    /// Host threads synthesizing circuits ahead of the devices, per key. Default:
    /// sized for each key (two a worker, at most half the cores, within a quarter of
    /// the host memory available).
    #[arg(long, value_parser = parse::size)]
    synthesis_threads: Option<usize>,
    /// Address of the Prometheus endpoint (`GET /metrics`); none when not given.
    #[arg(long)]
    metrics_listen: Option<SocketAddr>,
}

/// Works until SIGINT or SIGTERM, then gives back what it has not finished.
pub fn run(args: &WorkerArgs) -> Result<ExitCode, CliError> {
    if args.heartbeat.is_zero() || args.heartbeat >= args.lease_timeout {
        return Err(CliError::usage(format!(
            "--heartbeat ({:?}) must be above zero and below --lease-timeout ({:?})",
            args.heartbeat, args.lease_timeout
        )));
    }
    if args.synthesis_threads == Some(0) {
        return Err(CliError::usage("--synthesis-threads must be at least 1"));
    }
    if args.poll < MIN_POLL {
        return Err(CliError::usage(format!(
            "--poll ({:?}) must be at least {MIN_POLL:?}",
            args.poll
        )));
    }
    if !(1..=MAX_FAILURES).contains(&args.max_failures) {
        return Err(CliError::usage(format!(
            "--max-failures must be between 1 and {MAX_FAILURES}, got {}",
            args.max_failures
        )));
    }
    let (limits, key_dir) = args.limits.resolve()?;
    let chosen = args.devices.resolve()?;
    println!("{}", chosen.reason);
    let config = WorkerConfig {
        url: args.queue.clone(),
        name: unique_name(args.name.as_deref()),
        devices: chosen.devices,
        engine: args.devices.engine_config(args.synthesis_threads),
        auto_synthesis_threads: args.synthesis_threads.is_none(),
        lease_timeout: args.lease_timeout,
        heartbeat: args.heartbeat,
        poll: args.poll,
        drain_timeout: args.drain_timeout,
        max_failures: args.max_failures,
        limits,
        key_dir,
    };
    println!("worker {}", config.name);
    let metrics = Metrics::new();
    runtime::build()?.block_on(async {
        let exporter = match args.metrics_listen {
            Some(addr) => {
                let listener = runtime::bind(addr).await?;
                println!(
                    "metrics listening on http://{}/metrics",
                    runtime::local_addr(&listener)?
                );
                let devices = config.devices.clone();
                let m = Arc::clone(&metrics);
                Some(crucible_service::metrics_http::spawn(
                    listener,
                    Arc::clone(&metrics),
                    Arc::new(move || m.observe_devices(&devices)),
                ))
            }
            None => None,
        };
        let summary = worker::run(config, metrics, runtime::shutdown_signal())
            .await
            .map_err(|e| {
                CliError::remote(format!(
                    "worker on the job queue at {}: {e}",
                    database_address(&args.queue)
                ))
            })?;
        if let Some(exporter) = exporter {
            exporter.abort();
        }
        println!(
            "stopped: {} proved, {} failed attempts, {} given back, {} dropped (lease lost)",
            summary.proved, summary.failed, summary.released, summary.dropped
        );
        Ok(ExitCode::SUCCESS)
    })
}
