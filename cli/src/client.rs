//! `crucible client`: drives a `crucible serve` daemon over gRPC: load and evict
//! keys, prove, status, and a load test that measures proofs per second.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ark_serialize::CanonicalDeserialize;
use clap::{Args, Subcommand};
use crucible_benches::Stats;
use crucible_core::fixtures::circuit::BenchCircuit;
use crucible_core::groth16::Proof;
use crucible_core::Fr;
use crucible_files::artifacts::{write_proof, write_public};
use crucible_files::output::check_outputs;
use crucible_service::client::{connect_with, verify, verifying_key, Client};
use crucible_service::key_ref::KeyRef;
use crucible_service::proto::{self, prove_response, JobResult};
use crucible_service::small_file::{read_small_text, Access};
use crucible_service::tls::{CertificateFile, ClientTls, PrivateKeyFile};
use crucible_service::witness::Witness;

use crate::error::{CliError, Exit};
use crate::output::{count, file_form, table};
use crate::{parse, runtime};

/// Arguments of `crucible client`.
#[derive(Args)]
pub struct ClientArgs {
    /// The server: `http://host:port`, or `https://host:port` with `--tls-ca` (the
    /// host a name in the server's certificate). Default: `http://127.0.0.1:50051`,
    /// with `--tls-ca` `https://localhost:50051`.
    #[arg(long)]
    addr: Option<String>,
    /// A file holding this client's bearer token (the server's `--tokens` names it).
    #[arg(long)]
    token_file: Option<std::path::PathBuf>,
    #[command(flatten)]
    tls: ClientTlsArgs,
    #[command(subcommand)]
    command: ClientCommand,
}

/// The client's TLS.
#[derive(Args)]
struct ClientTlsArgs {
    /// The CA (PEM) that signed the server's certificate: connect with TLS.
    #[arg(long)]
    tls_ca: Option<PathBuf>,
    /// This client's certificate (PEM), for a server with mutual TLS.
    #[arg(long, requires_all = ["tls_key", "tls_ca"])]
    tls_cert: Option<PathBuf>,
    /// The private key of `--tls-cert` (PEM).
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
}

impl ClientTlsArgs {
    /// The files, read and checked; `None` without `--tls-ca`.
    fn resolve(&self) -> Result<Option<ClientTls>, CliError> {
        let Some(ca) = &self.tls_ca else {
            return Ok(None);
        };
        let ca = CertificateFile::read(ca).map_err(|e| CliError::file(format!("--tls-ca: {e}")))?;
        let identity = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some((
                CertificateFile::read(cert)
                    .map_err(|e| CliError::file(format!("--tls-cert: {e}")))?,
                PrivateKeyFile::read(key).map_err(|e| CliError::file(format!("--tls-key: {e}")))?,
            )),
            _ => None,
        };
        Ok(Some(ClientTls { ca, identity }))
    }
}

#[derive(Subcommand)]
enum ClientCommand {
    /// Stage a key on every device of the server.
    LoadKey {
        /// The id to submit under.
        #[arg(long)]
        id: String,
        /// `bench:n=<constraints>,p=<inputs>,seed=<setup seed>`, or `zkey:<path>` (a
        /// snarkjs `.zkey` on the server's disk).
        #[arg(long)]
        key: String,
    },
    /// Evict a key (its queued jobs fail, its in-flight proofs finish).
    EvictKey {
        /// The key's id.
        #[arg(long)]
        id: String,
    },
    /// Prove one witness and print the result: a circom `.wtns` file (`--wtns`), or
    /// a benchmark-circuit witness seed for a `bench:` key.
    Prove {
        /// The key's id.
        #[arg(long)]
        id: String,
        /// The benchmark circuit's witness seed.
        #[arg(long, default_value_t = 0, conflicts_with = "wtns")]
        bench_seed: u64,
        /// A `.wtns` file: every wire's value (for a `zkey:` key, from circom).
        #[arg(long)]
        wtns: Option<std::path::PathBuf>,
        /// Write the proof here, as `crucible prove` does: snarkjs' `proof.json` form
        /// for a `*.json` name, else arkworks' compressed binary.
        #[arg(long)]
        proof: Option<std::path::PathBuf>,
        /// Write the public signals here: snarkjs' `public.json` form for `*.json`,
        /// else arkworks' binary `Vec<Fr>`.
        #[arg(long)]
        public: Option<std::path::PathBuf>,
    },
    /// Devices, budgets, keys and queues.
    Status,
    /// Load a key, prove K witnesses through concurrent clients (retrying when the
    /// server is busy), verify every proof here too, print proofs per second, evict.
    Bench {
        /// `bench:n=<constraints>,p=<inputs>,seed=<setup seed>`.
        #[arg(long)]
        key: String,
        /// The id to load it under.
        #[arg(long, default_value = "bench")]
        id: String,
        /// Proofs to make.
        #[arg(long, default_value = "64", value_parser = parse::size)]
        proofs: usize,
        /// Concurrent requests.
        #[arg(long, default_value = "16", value_parser = parse::size)]
        concurrency: usize,
        /// Leave the key loaded at the end.
        #[arg(long)]
        keep: bool,
    },
}

fn grpc(e: tonic::Status) -> CliError {
    CliError::remote(format!("server: {}: {}", e.code(), e.message()))
}

fn service(e: crucible_service::ServiceError) -> CliError {
    CliError::remote(e.to_string())
}

async fn load_key(
    client: &mut Client,
    id: &str,
    key: &KeyRef,
) -> Result<proto::LoadKeyResponse, CliError> {
    let response = client
        .load_key(proto::LoadKeyRequest {
            key_id: id.to_string(),
            source: Some(key.to_proto()),
        })
        .await
        .map_err(grpc)?
        .into_inner();
    println!(
        "key `{}` resident on {} ({} staged on each, 2^{} domain) in {:.2} s",
        response.key_id,
        response.devices.join(", "),
        crucible_core::human_bytes(response.staged_bytes),
        response.log_domain,
        response.load_seconds
    );
    Ok(response)
}

/// Runs the subcommand.
pub fn run(args: &ClientArgs) -> Result<ExitCode, CliError> {
    if let ClientCommand::Prove {
        wtns,
        proof,
        public,
        ..
    } = &args.command
    {
        check_outputs(
            &[("--wtns", wtns.as_deref())],
            &[
                ("--proof", proof.as_deref()),
                ("--public", public.as_deref()),
            ],
        )?;
    }
    runtime::build()?.block_on(async {
        let token = match &args.token_file {
            Some(path) => Some(
                read_small_text(path, "--token-file", Access::OwnerOnly)
                    .map_err(|e| CliError::file(e.to_string()))?
                    .trim()
                    .to_string(),
            ),
            None => None,
        };
        let tls = args.tls.resolve()?;
        let addr = match (&args.addr, &tls) {
            (Some(addr), Some(_)) if addr.starts_with("http://") => {
                return Err(CliError::usage(format!(
                    "--addr {addr} with --tls-ca: the address is https://host:port"
                )))
            }
            (Some(addr), None) if addr.starts_with("https://") => {
                return Err(CliError::usage(format!(
                    "--addr {addr}: give --tls-ca, the CA that signed the server's certificate"
                )))
            }
            (Some(addr), _) => addr.clone(),
            (None, Some(_)) => "https://localhost:50051".to_string(),
            (None, None) => "http://127.0.0.1:50051".to_string(),
        };
        let mut client = connect_with(&addr, token.as_deref(), tls.as_ref())
            .await
            .map_err(|e| CliError::remote(format!("cannot reach the daemon at {addr}: {e}")))?;
        match &args.command {
            ClientCommand::LoadKey { id, key } => {
                let key: KeyRef = key.parse().map_err(service)?;
                load_key(&mut client, id, &key).await?;
            }
            ClientCommand::EvictKey { id } => {
                let r = client
                    .evict_key(proto::EvictKeyRequest { key_id: id.clone() })
                    .await
                    .map_err(grpc)?
                    .into_inner();
                if r.load_called_off {
                    println!("evicted `{id}` while it loaded: its load stops at its next phase");
                } else {
                    println!(
                        "evicted `{id}`: {} queued jobs failed, {} in-flight proofs finished",
                        r.queued_failed, r.in_flight_finished
                    );
                }
            }
            ClientCommand::Prove {
                id,
                bench_seed,
                wtns,
                proof,
                public,
            } => {
                let witness = match wtns {
                    Some(path) => Witness::Wtns(
                        std::fs::read(path)
                            .map_err(|e| {
                                CliError::file(format!("cannot read {}: {e}", path.display()))
                            })?
                            .into(),
                    ),
                    None => Witness::BenchSeed(*bench_seed),
                };
                let result = prove(&mut client, id, witness).await?;
                print_result(&result);
                if result.state() != proto::JobState::Done {
                    return Ok(Exit::Failed.code());
                }
                write_files(&result, proof.as_deref(), public.as_deref())?;
            }
            ClientCommand::Status => print_status(&mut client).await?,
            ClientCommand::Bench {
                key,
                id,
                proofs,
                concurrency,
                keep,
            } => {
                let key: KeyRef = key.parse().map_err(service)?;
                return bench(client, id, &key, *proofs, *concurrency, *keep).await;
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// Writes a done job's proof and public signals where `--proof` and `--public` say,
/// through the writer `crucible prove` uses.
fn write_files(
    result: &JobResult,
    proof: Option<&Path>,
    public: Option<&Path>,
) -> Result<(), CliError> {
    let decode = |what: &str, e: ark_serialize::SerializationError| {
        CliError::remote(format!("the daemon's {what} does not decode: {e}"))
    };
    if let Some(path) = proof {
        let value = Proof::<crucible_core::Bls12_381>::deserialize_compressed(&result.proof[..])
            .map_err(|e| decode("proof", e))?;
        write_proof(path, &value)?;
        println!(
            "wrote the proof to {} ({})",
            path.display(),
            file_form(path)
        );
    }
    if let Some(path) = public {
        let values = result
            .public_inputs
            .iter()
            .map(|bytes| Fr::deserialize_compressed(&bytes[..]))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| decode("public inputs", e))?;
        write_public(path, &values)?;
        println!(
            "wrote the public signals to {} ({})",
            path.display(),
            file_form(path)
        );
    }
    Ok(())
}

/// Submit + await, retrying while the server is busy.
async fn prove(client: &mut Client, id: &str, witness: Witness) -> Result<JobResult, CliError> {
    loop {
        let response = client
            .prove(proto::SubmitRequest {
                key_id: id.to_string(),
                witness: Some(witness.to_proto()),
            })
            .await
            .map_err(grpc)?
            .into_inner();
        match response.outcome {
            Some(prove_response::Outcome::Result(result)) => return Ok(result),
            Some(prove_response::Outcome::Busy(_)) => {
                tokio::time::sleep(Duration::from_millis(2)).await
            }
            None => return Err(CliError::remote("the server gave no outcome")),
        }
    }
}

fn print_result(result: &JobResult) {
    println!(
        "job {}: {:?} in {:.3} s",
        result.job_id,
        result.state(),
        result.seconds
    );
    if !result.error.is_empty() {
        println!("error ({}): {}", result.failed_phase, result.error);
    }
    if let Some(report) = &result.report {
        println!(
            "made on {} ({}), verified: {}",
            report.backend, report.device, report.verified
        );
        for p in &report.phases {
            println!("  {:<10} {:>10.3} ms", p.phase, p.ms);
        }
    }
    if !result.proof.is_empty() {
        println!("proof: {}", crucible_benches::reference::hex(&result.proof));
    }
}

async fn print_status(client: &mut Client) -> Result<(), CliError> {
    let s = client
        .status(proto::StatusRequest {})
        .await
        .map_err(grpc)?
        .into_inner();
    println!(
        "backend {}, {} per device; {} queued, {} in flight",
        s.backend,
        count(s.workers_per_device, "worker"),
        s.queued,
        s.in_flight
    );
    let devices: Vec<Vec<String>> = s
        .devices
        .iter()
        .map(|d| {
            vec![
                d.label.clone(),
                crucible_core::human_bytes(d.in_use_bytes),
                crucible_core::human_bytes(d.high_water_bytes),
                crucible_core::human_bytes(d.capacity_bytes),
            ]
        })
        .collect();
    println!(
        "{}",
        table(&["device", "in use", "high water", "capacity"], &devices, 1)
    );
    let keys: Vec<Vec<String>> = s
        .keys
        .iter()
        .map(|k| {
            vec![
                k.key_id.clone(),
                format!("2^{}", k.log_domain),
                k.queued.to_string(),
                k.in_flight.to_string(),
                k.capacity.to_string(),
                k.proofs.to_string(),
                k.failures.to_string(),
                k.cancelled.to_string(),
            ]
        })
        .collect();
    println!(
        "{}",
        table(
            &[
                "key",
                "domain",
                "queued",
                "in flight",
                "capacity",
                "proofs",
                "failures",
                "cancelled"
            ],
            &keys,
            1
        )
    );
    Ok(())
}

async fn bench(
    mut client: Client,
    id: &str,
    key: &KeyRef,
    proofs: usize,
    concurrency: usize,
    keep: bool,
) -> Result<ExitCode, CliError> {
    if proofs == 0 || concurrency == 0 {
        return Err(CliError::usage(
            "--proofs and --concurrency must be at least 1",
        ));
    }
    let &KeyRef::Bench {
        constraints,
        inputs,
        ..
    } = key
    else {
        return Err(CliError::usage(format!(
            "client bench proves benchmark-circuit witnesses: it needs a bench: key, not {key}"
        )));
    };
    let loaded = load_key(&mut client, id, key).await?;
    let vk = Arc::new(verifying_key(&loaded.verifying_key).map_err(service)?);
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency.min(proofs) {
        let (mut client, next, vk, id) = (
            client.clone(),
            Arc::clone(&next),
            Arc::clone(&vk),
            id.to_string(),
        );
        tasks.push(tokio::spawn(async move {
            let mut outcomes = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= proofs {
                    return Ok::<_, CliError>(outcomes);
                }
                let seed = i as u64;
                let result = prove(&mut client, &id, Witness::BenchSeed(seed)).await?;
                let expected = BenchCircuit {
                    constraints,
                    inputs,
                    seed,
                }
                .public_inputs();
                let checked = verify(&vk, &result)
                    .map_err(|e| e.to_string())
                    .and_then(|got| {
                        if got == expected {
                            Ok(())
                        } else {
                            Err(format!(
                                "job {}: public inputs are not the witness's",
                                result.job_id
                            ))
                        }
                    });
                outcomes.push((result.seconds, checked));
            }
        }));
    }
    let mut latencies = Vec::new();
    let mut failures = Vec::new();
    for task in tasks {
        let outcomes = task
            .await
            .map_err(|e| CliError::remote(format!("a client task failed: {e}")))??;
        for (seconds, checked) in outcomes {
            latencies.push(Duration::from_secs_f64(seconds));
            if let Err(e) = checked {
                failures.push(e);
            }
        }
    }
    let wall = started.elapsed();
    let stats = Stats::of(&latencies);
    println!(
        "{} through {} concurrent clients in {:.3} s: {:.2} proofs/second",
        count(proofs as u64, "proof"),
        concurrency.min(proofs),
        wall.as_secs_f64(),
        proofs as f64 / wall.as_secs_f64().max(1e-9)
    );
    println!(
        "latency (submit to result): median {:.1} ms, max {:.1} ms",
        stats.median_ms, stats.max_ms
    );
    println!(
        "{} of {proofs} proofs verified by the server and again here",
        proofs - failures.len()
    );
    for f in &failures {
        println!("FAILED: {f}");
    }
    print_status(&mut client).await?;
    if !keep {
        client
            .evict_key(proto::EvictKeyRequest {
                key_id: id.to_string(),
            })
            .await
            .map_err(grpc)?;
    }
    Ok(Exit::verdict(failures.is_empty()))
}
