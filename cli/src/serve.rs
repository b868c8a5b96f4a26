//! `crucible serve`: the gRPC proving daemon (crucible_service::server).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use crucible_service::admission::{Limits, DEFAULT_MAX_LOG_DOMAIN};
use crucible_service::auth::Auth;
use crucible_service::connection_caps::{
    ConnectionCaps, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_PEER,
};
use crucible_service::key_dir::KeyDir;
use crucible_service::server::{serve, ConnectionPolicy, ServeConfig};
use crucible_service::tls::{CertificateFile, PrivateKeyFile, ServerTls};

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
    /// At SIGTERM, how long open calls and in-flight proofs may take; then every
    /// connection is closed and the daemon exits.
    #[arg(long, default_value = "30s", value_parser = parse::duration)]
    drain_timeout: std::time::Duration,
    /// Connections open at once; one more is closed as it is accepted.
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS, value_parser = parse::size)]
    max_connections: usize,
    /// Connections open at once from one address; one more is closed as it is accepted.
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS_PER_PEER, value_parser = parse::size)]
    max_connections_per_peer: usize,
    /// How long a connection may send nothing before it is closed (a client that is
    /// waiting answers the daemon's HTTP/2 pings, sent at a third of this).
    #[arg(long, default_value = "60s", value_parser = parse::duration)]
    idle_timeout: std::time::Duration,
    /// Host threads synthesizing circuits ahead of the devices, per key. Default:
    /// sized for each key (two a worker, at most half the cores, within a quarter of
    /// the host memory available).
    #[arg(long, value_parser = parse::size)]
    synthesis_threads: Option<usize>,
    /// The largest request accepted, in bytes (`.wtns` and assignment witnesses are
    /// 32 bytes a variable; each is further held to its key's size). A key whose
    /// largest witness would not fit is refused at `LoadKey`.
    #[arg(long, default_value = "1GiB", value_parser = parse::memory)]
    max_message_bytes: u64,
    /// Bytes of witnesses all queued and in-flight jobs may hold together; a submit
    /// beyond is refused (`RESOURCE_EXHAUSTED`).
    #[arg(long, default_value = "1GiB", value_parser = parse::memory)]
    max_queued_witness_bytes: u64,
    #[command(flatten)]
    limits: LimitArgs,
    /// Bearer tokens: one `<token> <identity> <operator|client>` a line. Operators
    /// load and evict keys; clients submit, await and cancel their own jobs.
    #[arg(long)]
    tokens: Option<PathBuf>,
    /// Serve without tokens (every caller is the operator): only on a loopback
    /// `--listen` address.
    #[arg(long, conflicts_with = "tokens")]
    insecure: bool,
    #[command(flatten)]
    tls: ServerTlsArgs,
}

/// The daemon's TLS (required off loopback).
#[derive(Args)]
pub struct ServerTlsArgs {
    /// The daemon's certificate chain (PEM), served with TLS.
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key of `--tls-cert` (PEM).
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// A CA (PEM) that signs client certificates: mutual TLS, every client must
    /// present one. Without `--tokens`, the certificate's CN names the client and an
    /// O of `operator` gives it the operator role.
    #[arg(long, requires = "tls_cert")]
    tls_client_ca: Option<PathBuf>,
    /// How long a client may take to complete its TLS handshake after connecting; a
    /// connection that has not by then is closed.
    #[arg(long, default_value = "10s", value_parser = parse::duration)]
    tls_handshake_timeout: std::time::Duration,
}

impl ServerTlsArgs {
    /// The files, read and checked; `None` without `--tls-cert`.
    pub fn resolve(&self) -> Result<Option<ServerTls>, CliError> {
        let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) else {
            return Ok(None);
        };
        let cert =
            CertificateFile::read(cert).map_err(|e| CliError::file(format!("--tls-cert: {e}")))?;
        let key =
            PrivateKeyFile::read(key).map_err(|e| CliError::file(format!("--tls-key: {e}")))?;
        let client_ca = self
            .tls_client_ca
            .as_deref()
            .map(CertificateFile::read)
            .transpose()
            .map_err(|e| CliError::file(format!("--tls-client-ca: {e}")))?;
        ServerTls::new(cert, key, client_ca, self.tls_handshake_timeout)
            .map(Some)
            .map_err(|e| CliError::file(format!("--tls-cert, --tls-key: {e}")))
    }
}

/// What a key may ask of the host: checked from its sizes before it is generated or
/// read (`crucible serve` and `crucible worker`).
#[derive(Args)]
pub struct LimitArgs {
    /// The most constraints of a key.
    #[arg(long, default_value = "2^25", value_parser = parse::size)]
    max_constraints: usize,
    /// The most public inputs of a key.
    #[arg(long, default_value = "2^16", value_parser = parse::size)]
    max_inputs: usize,
    /// The largest evaluation domain, as log2 of its points.
    #[arg(long, default_value_t = DEFAULT_MAX_LOG_DOMAIN)]
    max_log_domain: u32,
    /// Host memory all keys loading or resident may take together (a key's load
    /// takes about three times its uncompressed size). Default: half the memory the
    /// process may use (the host's, or its cgroup's limit where smaller).
    #[arg(long, value_parser = parse::memory)]
    max_key_memory: Option<u64>,
    /// The directory `zkey:` keys are read from (a client's path resolves inside it;
    /// no `..` or link leaves it). Without it, `zkey:` keys are refused.
    #[arg(long)]
    key_dir: Option<PathBuf>,
}

impl LimitArgs {
    /// The limits and the key directory.
    pub fn resolve(&self) -> Result<(Limits, KeyDir), CliError> {
        let defaults = Limits::default();
        let limits = Limits {
            max_constraints: self.max_constraints,
            max_inputs: self.max_inputs,
            max_log_domain: self.max_log_domain,
            max_key_memory: self.max_key_memory.unwrap_or(defaults.max_key_memory),
        };
        let key_dir = match &self.key_dir {
            Some(dir) => KeyDir::new(dir).map_err(|e| CliError::file(format!("--key-dir: {e}")))?,
            None => KeyDir::none(),
        };
        Ok((limits, key_dir))
    }
}

/// Who may call: tokens, client certificates (mutual TLS without tokens), or anyone
/// (`--insecure`, loopback only). Off loopback the daemon speaks only TLS.
fn authentication(args: &ServeArgs, tls: Option<&ServerTls>) -> Result<Auth, CliError> {
    let loopback = args.listen.ip().is_loopback();
    if tls.is_none() && !loopback {
        return Err(CliError::usage(format!(
            "{} is not a loopback address: give --tls-cert and --tls-key (plain text is served on loopback only)",
            args.listen
        )));
    }
    let mutual = tls.is_some_and(ServerTls::mutual);
    match (&args.tokens, args.insecure) {
        (Some(path), _) => Auth::from_file(path).map_err(|e| CliError::file(format!("--tokens: {e}"))),
        (None, _) if mutual => Ok(Auth::Certificates),
        (None, true) if loopback => Ok(Auth::Open),
        (None, true) => Err(CliError::usage(format!(
            "--insecure serves only on a loopback address, not {}; give --tokens FILE or --tls-client-ca",
            args.listen
        ))),
        (None, false) => Err(CliError::usage(
            "give --tokens FILE (bearer tokens), --tls-client-ca PEM (client certificates), or --insecure to serve without authentication on a loopback address",
        )),
    }
}

/// Serves until SIGINT or SIGTERM, then evicts every key and exits.
pub fn run(args: &ServeArgs) -> Result<ExitCode, CliError> {
    if args.queue_capacity == 0
        || args.synthesis_threads == Some(0)
        || args.max_connections == 0
        || args.max_connections_per_peer == 0
    {
        return Err(CliError::usage(
            "--queue-capacity, --synthesis-threads, --max-connections and --max-connections-per-peer must be at least 1",
        ));
    }
    if args.idle_timeout < std::time::Duration::from_millis(300) {
        return Err(CliError::usage(format!(
            "--idle-timeout {:?} is too short: the daemon pings clients at a third of it; give at least 300ms",
            args.idle_timeout
        )));
    }
    let tls = args.tls.resolve()?;
    let auth = authentication(args, tls.as_ref())?;
    let (limits, key_dir) = args.limits.resolve()?;
    let chosen = args.devices.resolve()?;
    println!("{}", chosen.reason);
    let labels: Vec<_> = chosen.devices.iter().map(|d| d.info().label()).collect();
    let config = ServeConfig {
        backend: chosen.backend,
        devices: chosen.devices,
        engine: args.devices.engine_config(args.synthesis_threads),
        auto_synthesis_threads: args.synthesis_threads.is_none(),
        max_message_bytes: usize::try_from(args.max_message_bytes).unwrap_or(usize::MAX),
        queue_capacity: args.queue_capacity,
        retain_results: args.retain_results,
        drain_timeout: args.drain_timeout,
        connections: ConnectionPolicy {
            caps: ConnectionCaps::new(args.max_connections, args.max_connections_per_peer),
            idle_timeout: args.idle_timeout,
        },
        max_queued_witness_bytes: args.max_queued_witness_bytes,
        limits,
        key_dir,
        auth,
        tls,
    };
    let runtime = runtime::build()?;
    let served = runtime.block_on(async {
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
        println!(
            "grpc security: {}, {}",
            match &config.tls {
                Some(tls) if tls.mutual() => "mutual TLS",
                Some(_) => "TLS",
                None => "plain text",
            },
            match &config.auth {
                Auth::Open => "no authentication",
                Auth::Tokens(_) => "bearer tokens",
                Auth::Certificates => "client certificates",
            }
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
            .map_err(|e| CliError::remote(e.to_string()))?;
        println!("stopped");
        Ok(ExitCode::SUCCESS)
    });
    // A key still loading (its setup runs on a blocking thread) does not hold the
    // exit: the drain timeout has passed by now.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    served
}
