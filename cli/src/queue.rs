//! `crucible queue submit|status`: the shared job queue's client.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use ark_serialize::CanonicalDeserialize;
use clap::{Args, Subcommand};
use crucible_core::groth16::Proof;
use crucible_core::key_file::open_regular;
use crucible_core::Fr;
use crucible_files::artifacts::{write_proof, write_public};
use crucible_files::snarkjs_json::{proof_to_json, public_to_json};
use crucible_service::key_ref::KeyRef;
use crucible_service::queue::{NewJob, Queue, MAX_FAILURES, MAX_JOBS_PER_SUBMIT};
use crucible_service::witness::Witness;

use crate::error::CliError;
use crate::output::{check_writable, database_address, file_form, table};
use crate::{parse, runtime};

/// Arguments of `crucible queue`.
#[derive(Args)]
pub struct QueueArgs {
    /// The queue's database: `postgres://user:password@host:port/database`; TLS
    /// with `?sslmode=require`, the server's certificate checked with `verify-full`
    /// (against the system's CAs, or `&sslrootcert=ca.pem`).
    #[arg(long)]
    queue: String,
    #[command(subcommand)]
    command: QueueCommand,
}

#[derive(Subcommand)]
enum QueueCommand {
    /// Queue proofs: of `.wtns` files (`--wtns`, one job each), or of the benchmark
    /// circuit's witness seeds S, S+1, ..., S+count-1.
    Submit {
        /// The proving key: `bench:n=<constraints>,p=<inputs>,seed=<setup seed>`, or
        /// `zkey:<path>` (a snarkjs `.zkey` at that path on every worker).
        #[arg(long)]
        key: String,
        /// The first witness seed.
        #[arg(long, default_value_t = 0, conflicts_with = "wtns")]
        bench_seed: u64,
        /// `.wtns` files, one job each (stored in the queue; `--count` is ignored).
        #[arg(long, num_args = 1..)]
        wtns: Vec<std::path::PathBuf>,
        /// How many jobs (1 to 65536 in one submit).
        #[arg(long, default_value = "1", value_parser = parse::size)]
        count: usize,
        /// Higher first.
        #[arg(long, default_value_t = 0)]
        priority: i32,
        /// Failed attempts (errors or lost leases) after which a job fails (1 to 100;
        /// each worker caps it further with its own `--max-failures`).
        #[arg(long, default_value_t = 3)]
        max_failures: i32,
    },
    /// Jobs by key and state, or one job with its attempts.
    Status {
        /// One job's state, attempts (with their errors), proof (as hex and in
        /// snarkjs' `proof.json` form), public signals and report.
        #[arg(long)]
        job: Option<i64>,
        /// Write the job's proof here: snarkjs' `proof.json` form for a `*.json` name,
        /// else arkworks' compressed binary.
        #[arg(long, requires = "job")]
        proof: Option<PathBuf>,
        /// Write the job's public signals here: snarkjs' `public.json` form for
        /// `*.json`, else arkworks' binary `Vec<Fr>`.
        #[arg(long, requires = "job")]
        public: Option<PathBuf>,
    },
}

/// Runs the subcommand.
pub fn run(args: &QueueArgs) -> Result<ExitCode, CliError> {
    let failed = |e: crucible_service::ServiceError| CliError::remote(e.to_string());
    // Counts are checked before anything is allocated or connected.
    if let QueueCommand::Submit {
        wtns,
        count,
        max_failures,
        ..
    } = &args.command
    {
        let jobs = if wtns.is_empty() { *count } else { wtns.len() };
        if !(1..=MAX_JOBS_PER_SUBMIT).contains(&jobs) {
            return Err(CliError::usage(format!(
                "a submit queues 1 to {MAX_JOBS_PER_SUBMIT} jobs, this one {jobs} (--count or --wtns)"
            )));
        }
        if !(1..=MAX_FAILURES).contains(max_failures) {
            return Err(CliError::usage(format!(
                "--max-failures must be between 1 and {MAX_FAILURES}, got {max_failures}"
            )));
        }
    }
    runtime::build()?.block_on(async {
        let queue = Queue::connect(&args.queue, 2, Duration::from_secs(10))
            .await
            .map_err(|e| {
                CliError::remote(format!(
                    "cannot reach the job queue's database at {}: {e}",
                    database_address(&args.queue)
                ))
            })?;
        queue.migrate().await.map_err(failed)?;
        match &args.command {
            QueueCommand::Submit {
                key,
                bench_seed,
                wtns,
                count,
                priority,
                max_failures,
            } => {
                let key: KeyRef = key.parse().map_err(failed)?;
                let witnesses: Vec<Witness> = if wtns.is_empty() {
                    (0..*count as u64)
                        .map(|i| Witness::BenchSeed(bench_seed.wrapping_add(i)))
                        .collect()
                } else {
                    let read = |path: &std::path::PathBuf| {
                        let (mut file, meta) = open_regular(path, "witness")?;
                        let mut bytes = Vec::with_capacity(meta.len() as usize);
                        std::io::Read::read_to_end(&mut file, &mut bytes).map_err(|e| {
                            CliError::file(format!("cannot read {}: {e}", path.display()))
                        })?;
                        Ok::<_, CliError>(Witness::Wtns(bytes.into()))
                    };
                    wtns.iter().map(read).collect::<Result<_, _>>()?
                };
                let jobs: Vec<NewJob> = witnesses
                    .into_iter()
                    .map(|witness| NewJob {
                        key: key.clone(),
                        witness,
                        priority: *priority,
                        max_failures: *max_failures,
                    })
                    .collect();
                let ids = queue.submit(&jobs).await.map_err(failed)?;
                match job_ids(&ids) {
                    Some(ids_said) => println!(
                        "queued {} for {key}: {ids_said}",
                        crate::output::count(ids.len() as u64, "job")
                    ),
                    None => println!("queued nothing"),
                }
                Ok(ExitCode::SUCCESS)
            }
            QueueCommand::Status { job: None, .. } => {
                let counts = queue.counts().await.map_err(failed)?;
                let rows: Vec<Vec<String>> = counts
                    .by_key
                    .iter()
                    .map(|(key, state, n)| vec![key.clone(), state.clone(), n.to_string()])
                    .collect();
                println!("{}", table(&["key", "state", "jobs"], &rows, 2));
                Ok(ExitCode::SUCCESS)
            }
            QueueCommand::Status {
                job: Some(id),
                proof,
                public,
            } => {
                for (path, flag) in [(proof, "--proof"), (public, "--public")] {
                    if let Some(path) = path {
                        check_writable(path, flag)?;
                    }
                }
                let Some(job) = queue.job(*id).await.map_err(failed)? else {
                    return Err(CliError::remote(format!("no job {id} in the queue")));
                };
                println!("job {}: {} ({})", job.id, job.state, job.key_ref);
                println!(
                    "attempts: {}, failures: {}{}",
                    job.attempts,
                    job.failures,
                    job.lease_owner
                        .map(|w| format!(", held by {w}"))
                        .unwrap_or_default()
                );
                for a in &job.attempt_log {
                    println!(
                        "  attempt {} on {}: {}{}",
                        a.attempt,
                        a.worker,
                        a.outcome.as_deref().unwrap_or("running"),
                        a.error
                            .as_ref()
                            .map(|e| format!(": {e}"))
                            .unwrap_or_default()
                    );
                }
                if let Some(bytes) = &job.proof {
                    println!("proof: {}", crucible_benches::reference::hex(bytes));
                    let value = decode::<Proof>(bytes, "proof")?;
                    println!("proof.json: {}", proof_to_json(&value));
                    if let Some(path) = proof {
                        write_proof(path, &value)?;
                        println!(
                            "wrote the proof to {} ({})",
                            path.display(),
                            file_form(path)
                        );
                    }
                }
                if let Some(bytes) = &job.public_inputs {
                    let values = decode::<Vec<Fr>>(bytes, "public signals")?;
                    println!("public.json: {}", public_to_json(&values));
                    if let Some(path) = public {
                        write_public(path, &values)?;
                        println!(
                            "wrote the public signals to {} ({})",
                            path.display(),
                            file_form(path)
                        );
                    }
                }
                if job.proof.is_none() && (proof.is_some() || public.is_some()) {
                    return Err(CliError::remote(format!(
                        "job {id} is {}: it has no proof to write",
                        job.state
                    )));
                }
                if let Some(report) = &job.report {
                    println!("report: {report}");
                }
                Ok(ExitCode::SUCCESS)
            }
        }
    })
}

/// A job's stored proof or public inputs (arkworks, compressed), decoded.
/// The ids of jobs just queued, as a person reads them: `id 7`, `ids 7 to 70` when
/// they run without a gap, else each one (the first and last of many).
fn job_ids(ids: &[i64]) -> Option<String> {
    let (first, last) = (ids.first()?, ids.last()?);
    let gapless = ids.windows(2).all(|w| w[1] == w[0] + 1);
    Some(match ids.len() {
        1 => format!("id {first}"),
        n if n > 2 && gapless => format!("ids {first} to {last}"),
        n if n <= 8 => {
            let each: Vec<String> = ids.iter().map(i64::to_string).collect();
            format!("ids {}", each.join(", "))
        }
        _ => format!("ids from {first} to {last}, other jobs between them"),
    })
}

fn decode<T: CanonicalDeserialize>(bytes: &[u8], what: &str) -> Result<T, CliError> {
    T::deserialize_compressed(bytes)
        .map_err(|e| CliError::remote(format!("the queue's {what} does not decode: {e}")))
}

#[cfg(test)]
mod tests {
    use super::job_ids;

    #[test]
    fn queued_ids_are_said_in_words() {
        assert_eq!(job_ids(&[]), None);
        assert_eq!(job_ids(&[7]).as_deref(), Some("id 7"));
        assert_eq!(job_ids(&[7, 8]).as_deref(), Some("ids 7, 8"));
        assert_eq!(job_ids(&[7, 8, 9, 10]).as_deref(), Some("ids 7 to 10"));
        // Another submitter's jobs in between: every id, not a range that holds theirs.
        assert_eq!(job_ids(&[7, 9, 10]).as_deref(), Some("ids 7, 9, 10"));
        let many: Vec<i64> = (0..20).map(|i| 2 * i + 1).collect();
        assert_eq!(
            job_ids(&many).as_deref(),
            Some("ids from 1 to 39, other jobs between them")
        );
    }
}
