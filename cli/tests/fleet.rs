//! The fleet: 200 jobs over 4 `crucible worker` processes (each on 2 logical CPU
//! devices) sharing one Postgres queue. One worker is SIGKILLed while it holds jobs,
//! one SIGTERMed; every job must end done exactly once, with a proof that verifies
//! for its own witness, and the whole run is bounded in time.
//!
//! Needs `CRUCIBLE_TEST_POSTGRES_URL` (a role that may create databases); each run
//! makes its own database and drops it. A URL with `sslmode=require` (or
//! `verify-ca`, `verify-full`) runs the whole fleet over TLS, and the test checks
//! that Postgres reports the queue's connection encrypted.

mod support;

use std::time::{Duration, Instant};

use ark_serialize::CanonicalDeserialize;
use crucible_core::ark_groth16::{prepare_verifying_key, Groth16};
use crucible_core::fixtures::circuit::BenchCircuit;
use crucible_core::fixtures::key_cache::KeyCache;
use crucible_core::groth16::Proof;
use crucible_core::{Bls12_381, Fr};
use crucible_service::key_ref::KeyRef;
use crucible_service::queue::{NewJob, Queue};
use crucible_service::witness::Witness;
use sqlx::postgres::PgPoolOptions;
use sqlx::PgPool;
use support::{postgres_url, Daemon, TempDir};

const JOBS: u64 = 200;
const WORKERS: usize = 4;
const CONSTRAINTS: usize = 64;
const INPUTS: usize = 1;
const SETUP_SEED: u64 = 11;
const FIRST_SEED: u64 = 5000;
/// Jobs of the fixture .zkey (the last with the arkworks assignment, the rest .wtns).
const CIRCOM_JOBS: u64 = 6;
/// The whole run must end within this.
const DEADLINE: Duration = Duration::from_secs(240);

/// `url` with its database name replaced by `db`.
fn with_database(url: &str, db: &str) -> String {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let (server, _) = base
        .rsplit_once('/')
        .expect("a postgres URL ends in /database");
    match query {
        Some(q) => format!("{server}/{db}?{q}"),
        None => format!("{server}/{db}"),
    }
}

async fn count(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.expect(sql)
}

struct Fleet {
    workers: Vec<Daemon>,
}

impl Fleet {
    fn logs(&self) -> String {
        self.workers
            .iter()
            .map(Daemon::log)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Waits until `sql` counts at least `at_least`, failing with the workers' logs at the deadline.
async fn wait_until(pool: &PgPool, sql: &str, at_least: i64, start: Instant, fleet: &Fleet) {
    loop {
        if count(pool, sql).await >= at_least {
            return;
        }
        if start.elapsed() > DEADLINE {
            panic!(
                "timed out after {:?} waiting for `{sql}` >= {at_least}\n{}",
                start.elapsed(),
                fleet.logs()
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
/// Whether `url`'s `sslmode` demands TLS (`require`, `verify-ca`, `verify-full`).
fn asks_for_tls(url: &str) -> bool {
    url.split_once('?').is_some_and(|(_, query)| {
        query.split('&').any(|p| {
            matches!(
                p,
                "sslmode=require" | "sslmode=verify-ca" | "sslmode=verify-full"
            )
        })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_workers_prove_every_job_exactly_once_through_kills() {
    let Some(url) = postgres_url() else { return };
    let start = Instant::now();
    let admin = PgPoolOptions::new()
        .max_connections(1)
        .acquire_timeout(Duration::from_secs(10))
        .connect(&url)
        .await
        .unwrap_or_else(|e| panic!("cannot reach Postgres at CRUCIBLE_TEST_POSTGRES_URL: {e}"));
    let db = format!(
        "crucible_fleet_{}_{}",
        std::process::id(),
        start.elapsed().as_nanos()
    );
    sqlx::query(&format!("CREATE DATABASE {db}"))
        .execute(&admin)
        .await
        .expect("create the test database");
    let db_url = with_database(&url, &db);
    let cache = TempDir::new("fleet");

    // The key, made once here so the workers read it from the cache.
    let pk = KeyCache::new(&cache.0)
        .get_or_generate(CONSTRAINTS, INPUTS, SETUP_SEED, &mut |_| ())
        .expect("generate the key")
        .0;
    let queue = Queue::connect(&db_url, 2, Duration::from_secs(10))
        .await
        .expect("connect to the test database");
    queue.migrate().await.expect("migrate");
    if asks_for_tls(&url) {
        let check = PgPoolOptions::new()
            .max_connections(1)
            .connect(&db_url)
            .await
            .expect("connect to the test database");
        let encrypted: bool =
            sqlx::query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
                .fetch_one(&check)
                .await
                .expect("read pg_stat_ssl");
        assert!(
            encrypted,
            "the URL asks for TLS but Postgres reports the connection unencrypted"
        );
        check.close().await;
    }
    let key = KeyRef::bench(CONSTRAINTS, INPUTS, SETUP_SEED).unwrap();
    let jobs: Vec<NewJob> = (0..JOBS)
        .map(|i| NewJob {
            key: key.clone(),
            witness: Witness::BenchSeed(FIRST_SEED + i),
            priority: 0,
            // A starved worker may lose leases without failing anything; the limit
            // itself is exercised by the malformed job below.
            max_failures: 10,
        })
        .collect();
    let ids = queue.submit(&jobs).await.expect("submit");
    assert_eq!(ids.len() as u64, JOBS);
    // A user's own circuit beside them: a snarkjs .zkey every worker reads from its
    // disk, witnesses as .wtns bytes and as the arkworks assignment, and one truncated
    // .wtns that fails after its two attempts, naming the file format.
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../files/tests/fixtures");
    let zkey_path = fixtures.join("multi_public.zkey");
    let zkey = crucible_files::Zkey::<crucible_core::Bls12_381>::read(&zkey_path)
        .expect("the fixture .zkey");
    let wtns = std::fs::read(fixtures.join("multi_public.wtns")).expect("the fixture .wtns");
    let values = crucible_files::read_witness::<crucible_core::Bls12_381>(
        &fixtures.join("multi_public.wtns"),
    )
    .unwrap();
    // Workers read `.zkey` keys from their key directory (`--key-dir`).
    let zkey_ref = KeyRef::zkey("multi_public.zkey").unwrap();
    let circom_job = |witness| NewJob {
        key: zkey_ref.clone(),
        witness,
        priority: 0,
        max_failures: 10,
    };
    let mut circom_jobs: Vec<NewJob> = (0..CIRCOM_JOBS - 1)
        .map(|_| circom_job(Witness::Wtns(wtns.clone().into())))
        .collect();
    circom_jobs.push(circom_job(Witness::assignment(&values)));
    let circom_ids = queue
        .submit(&circom_jobs)
        .await
        .expect("submit circom jobs");
    let truncated = queue
        .submit(&[NewJob {
            max_failures: 2,
            ..circom_job(Witness::Wtns(wtns[..wtns.len() - 5].to_vec().into()))
        }])
        .await
        .expect("submit a truncated .wtns")[0];

    // A poison job: a key no worker admits (2^31 public inputs, past max_inputs),
    // asking for 100 attempts; the workers' cap (--max-failures 2) ends it `failed`
    // after two, each naming the limit, and no worker stops for it.
    let poison = queue
        .submit(&[NewJob {
            key: KeyRef::bench(1, 1 << 31, 0).unwrap(),
            witness: Witness::BenchSeed(0),
            priority: 5,
            max_failures: 100,
        }])
        .await
        .expect("submit the poison job")[0];

    let pool = PgPoolOptions::new()
        .max_connections(2)
        .connect(&db_url)
        .await
        .expect("connect");
    // A job no worker can read fails after its two allowed attempts, each with its error.
    let bad: i64 = sqlx::query_scalar(
        "INSERT INTO crucible_jobs (key_ref, witness_kind, witness, max_failures) \
         VALUES ($1, 'bogus', '\\x00', 2) RETURNING id",
    )
    .bind(key.to_string())
    .fetch_one(&pool)
    .await
    .expect("insert a malformed job");
    let cache_dir = cache.0.to_str().expect("utf-8 temp dir").to_string();
    let fixtures_dir = fixtures.to_str().expect("utf-8 path");
    let mut fleet = Fleet {
        workers: (0..WORKERS)
            .map(|i| {
                let name = format!("w{i}");
                Daemon::start(
                    &name,
                    &[
                        "worker",
                        "--queue",
                        &db_url,
                        "--name",
                        &name,
                        "--backend",
                        "cpu",
                        "--devices",
                        "all",
                        "--workers-per-device",
                        "1",
                        "--lease-timeout",
                        "3s",
                        "--heartbeat",
                        "300ms",
                        "--poll",
                        "50ms",
                        "--drain-timeout",
                        "30s",
                        "--max-failures",
                        "2",
                        "--key-dir",
                        fixtures_dir,
                    ],
                    &[("CRUCIBLE_CPU_DEVICES", "2"), ("RUST_LOG", "info")],
                    std::path::Path::new(&cache_dir),
                )
            })
            .collect(),
    };

    // w0 dies by SIGKILL while it holds claimed jobs, once the fleet is under way.
    let done = "SELECT count(*) FROM crucible_jobs WHERE state = 'done'";
    wait_until(&pool, done, 20, start, &fleet).await;
    let holds = |w: &str| {
        format!("SELECT count(*) FROM crucible_jobs WHERE state = 'running' AND lease_owner LIKE '{w}-%'")
    };
    wait_until(&pool, &holds("w0"), 1, start, &fleet).await;
    fleet.workers[0].kill();
    let killed_holding = count(&pool, &holds("w0")).await;
    assert!(killed_holding >= 1, "w0 held no job when killed");

    // w1 is asked to stop with SIGTERM while it holds jobs: it must give back what it
    // has not started, commit what it finishes, and exit 0 promptly.
    wait_until(&pool, done, 60, start, &fleet).await;
    wait_until(&pool, &holds("w1"), 1, start, &fleet).await;
    fleet.workers[1].terminate();
    let status = fleet.workers[1].wait_exit(Duration::from_secs(40));
    assert!(
        status.success(),
        "w1 exited with {status}\n{}",
        fleet.workers[1].log()
    );
    assert_eq!(
        count(&pool, &holds("w1")).await,
        0,
        "w1 left jobs claimed\n{}",
        fleet.logs()
    );

    // The other two finish the queue, w0's jobs included once its leases expire.
    wait_until(&pool, done, (JOBS + CIRCOM_JOBS) as i64, start, &fleet).await;
    let failed = "SELECT count(*) FROM crucible_jobs WHERE state = 'failed'";
    wait_until(&pool, failed, 3, start, &fleet).await;
    for w in &mut fleet.workers[2..] {
        w.terminate();
        let status = w.wait_exit(Duration::from_secs(40));
        assert!(
            status.success(),
            "{} exited with {status}\n{}",
            w.name,
            w.log()
        );
    }
    let elapsed = start.elapsed();

    // Every job: done, one `done` attempt, no attempt left open, and a proof of its
    // own witness that verifies.
    let counts = queue.counts().await.unwrap();
    assert_eq!(
        counts.total("done"),
        (JOBS + CIRCOM_JOBS) as i64,
        "{counts:?}"
    );
    assert_eq!(counts.total("failed"), 3, "{counts:?}");
    let poison = queue.job(poison).await.unwrap().expect("the poison job");
    assert_eq!(
        (poison.state.as_str(), poison.failures),
        ("failed", 2),
        "{poison:?}"
    );
    for a in &poison.attempt_log {
        assert!(
            a.error.as_deref().is_some_and(|e| e.contains("max_inputs")),
            "{poison:?}"
        );
    }
    let zkey_pvk = prepare_verifying_key(&zkey.proving_key.vk);
    for id in &circom_ids {
        let job = queue.job(*id).await.unwrap().expect("circom job");
        assert_eq!(job.state, "done", "circom job {id}: {job:?}");
        let proof = Proof::deserialize_compressed(job.proof.as_deref().expect("proof")).unwrap();
        let inputs =
            Vec::<Fr>::deserialize_compressed(job.public_inputs.as_deref().expect("inputs"))
                .unwrap();
        assert_eq!(inputs, values[1..=zkey.num_public], "circom job {id}");
        assert!(
            Groth16::<Bls12_381>::verify_proof(&zkey_pvk, &proof, &inputs).unwrap(),
            "circom job {id}: the proof does not verify against the .zkey's key"
        );
    }
    // The queue's client gives a done job's proof in snarkjs' form, and writes it.
    let (proof_file, public_file) = (cache.0.join("job.json"), cache.0.join("job-public.json"));
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_crucible"))
        .args(["queue", "--queue", &db_url, "status", "--job"])
        .arg(circom_ids[0].to_string())
        .arg("--proof")
        .arg(&proof_file)
        .arg("--public")
        .arg(&public_file)
        .output()
        .expect("queue status");
    let shown = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success(), "{shown}");
    assert!(
        shown.contains("proof.json: {") && shown.contains("\"protocol\":\"groth16\""),
        "{shown}"
    );
    let job = queue.job(circom_ids[0]).await.unwrap().expect("circom job");
    let stored = Proof::deserialize_compressed(job.proof.as_deref().expect("proof")).unwrap();
    let written =
        crucible_files::artifacts::read_proof::<Bls12_381>(&proof_file).expect("the written proof");
    assert!(
        written == stored,
        "the written proof.json is not the job's proof"
    );
    let public =
        crucible_files::artifacts::read_public::<Bls12_381>(&public_file).expect("public.json");
    assert_eq!(public, values[1..=zkey.num_public]);
    // One job is one job.
    let submit = std::process::Command::new(env!("CARGO_BIN_EXE_crucible"))
        .args([
            "queue",
            "--queue",
            &db_url,
            "submit",
            "--key",
            "zkey:multi_public.zkey",
            "--wtns",
        ])
        .arg(fixtures.join("multi_public.wtns"))
        .output()
        .expect("queue submit");
    let said = String::from_utf8_lossy(&submit.stdout);
    assert!(
        submit.status.success() && said.contains("queued 1 job for"),
        "{said}"
    );
    let truncated = queue
        .job(truncated)
        .await
        .unwrap()
        .expect("the truncated job");
    assert_eq!(truncated.state, "failed", "{truncated:?}");
    assert!(
        truncated
            .attempt_log
            .iter()
            .all(|a| a.error.as_deref().is_some_and(|e| e.contains("wtns"))),
        "{truncated:?}"
    );
    let bad = queue.job(bad).await.unwrap().expect("the malformed job");
    assert_eq!((bad.state.as_str(), bad.failures), ("failed", 2), "{bad:?}");
    assert_eq!(bad.attempt_log.len(), 2, "{bad:?}");
    for a in &bad.attempt_log {
        assert_eq!(a.outcome.as_deref(), Some("failed"), "{bad:?}");
        assert!(
            a.error
                .as_deref()
                .is_some_and(|e| e.contains("unknown witness kind `bogus`")),
            "{bad:?}"
        );
    }
    let pvk = prepare_verifying_key(&pk.vk);
    let mut lost_by_w0 = 0;
    let mut released_by_w1 = 0;
    for (i, id) in ids.iter().enumerate() {
        let job = queue.job(*id).await.unwrap().expect("job exists");
        let seed = FIRST_SEED + i as u64;
        let case = format!("job {id} (witness seed {seed})");
        assert_eq!(job.state, "done", "{case}: {job:?}");
        let done_attempts: Vec<_> = job
            .attempt_log
            .iter()
            .filter(|a| a.outcome.as_deref() == Some("done"))
            .collect();
        assert_eq!(
            done_attempts.len(),
            1,
            "{case}: not proved exactly once: {:?}",
            job.attempt_log
        );
        assert!(
            job.attempt_log.iter().all(|a| a.outcome.is_some()),
            "{case}: an attempt never ended: {:?}",
            job.attempt_log
        );
        lost_by_w0 += job
            .attempt_log
            .iter()
            .filter(|a| a.worker.starts_with("w0-") && a.outcome.as_deref() == Some("lost"))
            .count();
        released_by_w1 += job
            .attempt_log
            .iter()
            .filter(|a| a.worker.starts_with("w1-") && a.outcome.as_deref() == Some("released"))
            .count();
        let proof = Proof::deserialize_compressed(job.proof.as_deref().expect("proof"))
            .unwrap_or_else(|e| panic!("{case}: proof does not decode: {e}"));
        let inputs =
            Vec::<Fr>::deserialize_compressed(job.public_inputs.as_deref().expect("inputs"))
                .unwrap_or_else(|e| panic!("{case}: public inputs do not decode: {e}"));
        let expected = BenchCircuit {
            constraints: CONSTRAINTS,
            inputs: INPUTS,
            seed,
        }
        .public_inputs();
        assert_eq!(
            inputs, expected,
            "{case}: public inputs are not its witness's"
        );
        assert!(
            Groth16::<Bls12_381>::verify_proof(&pvk, &proof, &inputs).unwrap(),
            "{case}: the proof does not verify"
        );
        let report: serde_json::Value =
            serde_json::from_str(job.report.as_deref().expect("report")).expect("report is JSON");
        assert_eq!(report["verified"], true, "{case}: {report}");
    }
    assert!(
        lost_by_w0 >= killed_holding as usize,
        "w0 held {killed_holding} jobs when killed but only {lost_by_w0} were requeued as lost"
    );
    eprintln!(
        "fleet: {JOBS} jobs over {WORKERS} workers in {:.1} s; w0 killed holding {killed_holding} (requeued as lost: {lost_by_w0}); w1 gave back {released_by_w1} at SIGTERM",
        elapsed.as_secs_f64()
    );
    drop((fleet, queue));
    pool.close().await;
    let _ = sqlx::query(&format!("DROP DATABASE {db} WITH (FORCE)"))
        .execute(&admin)
        .await;
}
