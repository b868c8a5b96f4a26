//! A gRPC client drives `crucible serve` (2 logical CPU devices, 2 workers each):
//! load a key, 100 submits from 8 concurrent clients with some cancelled, overflow
//! the queue to see "busy", evict the key while jobs are queued (they fail cleanly,
//! the budget returns to zero), and status and metrics say so. Hostile requests are
//! refused before work; over mutual TLS only certified clients are served.

mod support;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::time::Duration;

use crucible_core::fixtures::circuit::BenchCircuit;
use crucible_service::client::{
    connect, connect_with, connect_with_token, verify, verifying_key, Client,
};
use crucible_service::key_ref::KeyRef;
use crucible_service::proto::{self, submit_response, JobResult, JobState};
use crucible_service::tls::{CertificateFile, ClientTls, PrivateKeyFile};
use crucible_service::witness::Witness;
use support::{write_secret, Daemon, TempDir};

const CONSTRAINTS: usize = 64;
const INPUTS: usize = 1;
const CAPACITY: u64 = 24;
const CLIENTS: u64 = 8;
const SUBMITS: u64 = 100;

/// Submits, retrying while busy; returns the job id and how many busy answers came.
async fn submit(client: &mut Client, key_id: &str, seed: u64) -> (u64, u64) {
    let mut busy = 0;
    loop {
        let response = client
            .submit(proto::SubmitRequest {
                key_id: key_id.into(),
                witness: Some(Witness::BenchSeed(seed).to_proto()),
            })
            .await
            .expect("submit")
            .into_inner();
        match response.outcome.expect("an outcome") {
            submit_response::Outcome::JobId(id) => return (id, busy),
            submit_response::Outcome::Busy(b) => {
                assert!(b.depth >= b.capacity && b.capacity == CAPACITY, "{b:?}");
                busy += 1;
                tokio::time::sleep(Duration::from_millis(3)).await;
            }
        }
    }
}

async fn await_job(client: &mut Client, id: u64) -> JobResult {
    let call = client.r#await(proto::AwaitRequest { job_id: id });
    match tokio::time::timeout(Duration::from_secs(120), call).await {
        Ok(answer) => answer.expect("await").into_inner(),
        Err(_) => panic!("job {id} did not end within 120 s"),
    }
}

fn expected_inputs(seed: u64) -> Vec<crucible_core::Fr> {
    BenchCircuit {
        constraints: CONSTRAINTS,
        inputs: INPUTS,
        seed,
    }
    .public_inputs()
}

/// `GET /metrics`, parsed to `name{labels} -> value`.
fn scrape(addr: &str) -> HashMap<String, f64> {
    let mut stream = std::net::TcpStream::connect(addr).expect("connect to metrics");
    write!(
        stream,
        "GET /metrics HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).expect("read metrics");
    let (_, body) = text.split_once("\r\n\r\n").expect("an HTTP response");
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let (name, value) = l.rsplit_once(' ')?;
            Some((name.to_string(), value.parse().ok()?))
        })
        .collect()
}

/// The sum of every series of `name` whose labels include each of `labels`.
fn metric(metrics: &HashMap<String, f64>, name: &str, labels: &[&str]) -> f64 {
    metrics
        .iter()
        .filter(|(series, _)| {
            let base = series.split('{').next().unwrap_or("");
            base == name && labels.iter().all(|l| series.contains(l))
        })
        .map(|(_, v)| v)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_client_drives_the_daemon_through_load_submit_cancel_busy_and_evict() {
    let cache = TempDir::new("serve");
    let mut server = Daemon::start(
        "serve",
        &[
            "serve",
            "--backend",
            "cpu",
            "--devices",
            "all",
            "--workers-per-device",
            "2",
            "--insecure",
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
            "--queue-capacity",
            &CAPACITY.to_string(),
        ],
        &[("CRUCIBLE_CPU_DEVICES", "2")],
        &cache.0,
    );
    let grpc = server.wait_for_line("grpc listening on ", Duration::from_secs(60));
    let metrics_url = server.wait_for_line("metrics listening on ", Duration::from_secs(10));
    let metrics_addr = metrics_url
        .trim_start_matches("http://")
        .trim_end_matches("/metrics")
        .to_string();
    let mut client = connect(&format!("http://{grpc}")).await.expect("connect");

    // Load a key; loading it twice under one id, or submitting to no key, is refused.
    let key = KeyRef::bench(CONSTRAINTS, INPUTS, 3).unwrap();
    let load = |id: &str| proto::LoadKeyRequest {
        key_id: id.into(),
        source: Some(key.to_proto()),
    };
    let loaded = client
        .load_key(load("k"))
        .await
        .expect("load the key")
        .into_inner();
    assert_eq!(loaded.devices, vec!["cpu:0", "cpu:1"], "{loaded:?}");
    assert_eq!(loaded.constraints, CONSTRAINTS as u64);
    let vk = Arc::new(verifying_key(&loaded.verifying_key).expect("verifying key"));
    let again = client.load_key(load("k")).await.unwrap_err();
    assert_eq!(again.code(), tonic::Code::AlreadyExists, "{again:?}");
    let nowhere = client
        .submit(proto::SubmitRequest {
            key_id: "missing".into(),
            witness: Some(Witness::BenchSeed(0).to_proto()),
        })
        .await
        .unwrap_err();
    assert_eq!(nowhere.code(), tonic::Code::NotFound, "{nowhere:?}");

    // 100 submits from 8 concurrent clients; every 10th is cancelled at once.
    let mut tasks = Vec::new();
    for c in 0..CLIENTS {
        let (mut client, vk) = (client.clone(), Arc::clone(&vk));
        tasks.push(tokio::spawn(async move {
            let mut busy = 0;
            let mut submitted = Vec::new();
            for i in (c..SUBMITS).step_by(CLIENTS as usize) {
                let seed = 100 + i;
                let (id, b) = submit(&mut client, "k", seed).await;
                busy += b;
                let cancelled = i % 10 == 3
                    && client
                        .cancel(proto::CancelRequest { job_id: id })
                        .await
                        .expect("cancel")
                        .into_inner()
                        .cancelled;
                submitted.push((id, seed, cancelled));
            }
            let (mut done, mut cancelled) = (0u64, 0u64);
            for (id, seed, was_cancelled) in submitted {
                let result = await_job(&mut client, id).await;
                if was_cancelled {
                    assert_eq!(result.state(), JobState::Cancelled, "job {id}: {result:?}");
                    cancelled += 1;
                } else {
                    let inputs = verify(&vk, &result).unwrap_or_else(|e| panic!("{e}"));
                    assert_eq!(inputs, expected_inputs(seed), "job {id} (seed {seed})");
                    assert!(result.report.as_ref().is_some_and(|r| r.verified));
                    done += 1;
                }
            }
            (done, cancelled, busy)
        }));
    }
    let (mut done, mut cancelled, mut busy) = (0, 0, 0);
    for t in tasks {
        let (d, c, b) = t.await.expect("a client task");
        done += d;
        cancelled += c;
        busy += b;
    }
    assert_eq!(done + cancelled, SUBMITS);

    // Overflow: submit without waiting until the server says busy, at capacity.
    let mut burst = Vec::new();
    let full = loop {
        assert!(burst.len() < 1000, "the queue never filled");
        let seed = 1000 + burst.len() as u64;
        let response = client
            .submit(proto::SubmitRequest {
                key_id: "k".into(),
                witness: Some(Witness::BenchSeed(seed).to_proto()),
            })
            .await
            .expect("submit")
            .into_inner();
        match response.outcome.expect("an outcome") {
            submit_response::Outcome::JobId(id) => burst.push((id, seed)),
            submit_response::Outcome::Busy(b) => break b,
        }
    };
    busy += 1;
    assert_eq!(
        (full.depth, full.capacity),
        (CAPACITY, CAPACITY),
        "{full:?}"
    );
    // The last one in is still queued behind a full queue: cancelling it works.
    let (last, _) = burst.pop().expect("a burst");
    let cancel = client
        .cancel(proto::CancelRequest { job_id: last })
        .await
        .expect("cancel")
        .into_inner();
    assert!(cancel.cancelled, "{cancel:?}");
    assert_eq!(cancel.state(), JobState::Cancelled);
    cancelled += 1;

    // Evict while jobs are queued: they fail, in-flight ones finish, nothing leaks.
    let evicted = client
        .evict_key(proto::EvictKeyRequest { key_id: "k".into() })
        .await
        .expect("evict")
        .into_inner();
    assert!(evicted.queued_failed > 0, "{evicted:?}");
    let mut failed = 0;
    for (id, seed) in &burst {
        let result = await_job(&mut client, *id).await;
        match result.state() {
            JobState::Done => {
                let inputs = verify(&vk, &result).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(inputs, expected_inputs(*seed), "job {id} (seed {seed})");
                done += 1;
            }
            JobState::Failed => {
                assert!(result.error.contains("evicted"), "job {id}: {result:?}");
                failed += 1;
            }
            other => panic!("job {id} ended {other:?}: {result:?}"),
        }
    }
    assert_eq!(failed, evicted.queued_failed);
    let status = client
        .status(proto::StatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(status.keys.is_empty(), "{status:?}");
    assert_eq!((status.queued, status.in_flight), (0, 0), "{status:?}");
    assert_eq!(status.devices.len(), 2);
    for d in &status.devices {
        assert_eq!(
            d.in_use_bytes, 0,
            "{} still holds device memory: {status:?}",
            d.label
        );
        assert!(d.high_water_bytes > 0 && d.high_water_bytes <= d.capacity_bytes);
    }
    let gone = client
        .submit(proto::SubmitRequest {
            key_id: "k".into(),
            witness: Some(Witness::BenchSeed(0).to_proto()),
        })
        .await
        .unwrap_err();
    assert_eq!(gone.code(), tonic::Code::NotFound);

    // The metrics tell the same story, and the evicted key's series are gone.
    let m = scrape(&metrics_addr);
    let key_label = "key=\"k\"";
    assert_eq!(
        metric(&m, "crucible_phase_seconds_count", &["phase=\"msm\""]),
        done as f64
    );
    assert_eq!(metric(&m, "crucible_budget_in_use_bytes", &[]), 0.0);
    assert!(metric(&m, "crucible_budget_capacity_bytes", &[]) > 0.0);
    let lingering: Vec<_> = m.keys().filter(|s| s.contains(key_label)).collect();
    assert!(
        lingering.is_empty(),
        "an evicted key's series linger: {lingering:?}"
    );

    // The freed budget serves a new key.
    client.load_key(load("k2")).await.expect("load again");
    let proved = client
        .prove(proto::SubmitRequest {
            key_id: "k2".into(),
            witness: Some(Witness::BenchSeed(7).to_proto()),
        })
        .await
        .expect("prove")
        .into_inner();
    let Some(proto::prove_response::Outcome::Result(result)) = proved.outcome else {
        panic!("prove gave {proved:?}");
    };
    assert_eq!(verify(&vk, &result).expect("verifies"), expected_inputs(7));

    // SIGTERM: the daemon evicts what is left and exits 0.
    server.terminate();
    let exit = server.wait_exit(Duration::from_secs(30));
    assert!(exit.success(), "serve exited with {exit}\n{}", server.log());
    eprintln!(
        "serve: {done} proofs, {cancelled} cancelled, {busy} busy answers, {failed} failed by eviction"
    );
}

/// Waits until the daemon's log holds `text` (it reaches the test through a pipe,
/// so a line may come just after what it reports); panics after 10 s.
async fn wait_for_log(server: &Daemon, text: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !server.log().contains(text) {
        assert!(
            std::time::Instant::now() < deadline,
            "no `{text}` in the log\n{}",
            server.log()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Loads `key` under `id` with the operator's client until the id is free (a load
/// called off still holds it until it stops); panics after 120 s.
async fn load_when_free(client: &mut Client, id: &str, key: &KeyRef) -> proto::LoadKeyResponse {
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let request = proto::LoadKeyRequest {
            key_id: id.into(),
            source: Some(key.to_proto()),
        };
        match client.load_key(request).await {
            Ok(loaded) => return loaded.into_inner(),
            Err(e) if e.code() == tonic::Code::AlreadyExists && e.message().contains("loading") => {
                assert!(
                    std::time::Instant::now() < deadline,
                    "`{id}` still loading: {e:?}"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("loading `{id}` again: {e:?}"),
        }
    }
}

/// Every file under `dir`, by name.
fn cached_files(dir: &std::path::Path) -> Vec<String> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read the cache").flatten() {
        let path = entry.path();
        if path.is_dir() {
            names.extend(cached_files(&path));
        } else {
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_load_is_called_off_by_eviction_and_by_its_client_going_away() {
    let cache = TempDir::new("serve-call-off");
    let mut server = Daemon::start(
        "serve-call-off",
        &[
            "serve",
            "--backend",
            "cpu",
            "--insecure",
            "--listen",
            "127.0.0.1:0",
        ],
        &[],
        &cache.0,
    );
    let grpc = server.wait_for_line("grpc listening on ", Duration::from_secs(60));
    let mut client = connect(&format!("http://{grpc}")).await.expect("connect");
    // A key generated from scratch (an empty cache): seconds of setup, long enough
    // for the calls below to land while it loads. Each case takes a new seed, so
    // none is served from the cache the case before left.
    let slow = |seed| KeyRef::bench(1 << 14, 1, seed).unwrap();
    let small = KeyRef::bench(CONSTRAINTS, INPUTS, 3).unwrap();

    // Evicted while loading: the eviction says so, the load is answered CANCELLED
    // naming why, and the id is free again with nothing held.
    let loading = {
        let mut client = client.clone();
        tokio::spawn(async move {
            client
                .load_key(proto::LoadKeyRequest {
                    key_id: "slow".into(),
                    source: Some(slow(11).to_proto()),
                })
                .await
        })
    };
    // Evicted once its setup has begun, so the call-off lands inside it.
    wait_for_log(&server, "generating the proving key").await;
    let evicted = loop {
        match client
            .evict_key(proto::EvictKeyRequest {
                key_id: "slow".into(),
            })
            .await
        {
            Ok(evicted) => break evicted.into_inner(),
            // The load has not reached the daemon yet.
            Err(e) if e.code() == tonic::Code::NotFound => {
                tokio::time::sleep(Duration::from_millis(5)).await
            }
            Err(e) => panic!("evicting a loading key: {e:?}"),
        }
    };
    assert!(evicted.load_called_off, "{evicted:?}");
    let answer = loading.await.expect("the load task").unwrap_err();
    assert_eq!(answer.code(), tonic::Code::Cancelled, "{answer:?}");
    // Stopped inside the setup, not after it.
    assert!(
        answer
            .message()
            .contains("stopped while generating its proving key: it was evicted while loading"),
        "{answer:?}"
    );
    let status = client
        .status(proto::StatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(status.keys.is_empty(), "{status:?}");
    assert!(
        status.devices.iter().all(|d| d.in_use_bytes == 0),
        "{status:?}"
    );
    let loaded = load_when_free(&mut client, "slow", &small).await;
    assert_eq!(loaded.constraints, CONSTRAINTS as u64);

    // The client gives up (its deadline passes): the load stops at its next phase
    // and frees the id, which then loads.
    let request = proto::LoadKeyRequest {
        key_id: "abandoned".into(),
        source: Some(slow(12).to_proto()),
    };
    let gave_up = tokio::time::timeout(Duration::from_millis(200), client.load_key(request)).await;
    assert!(
        gave_up.is_err(),
        "a 2^14 key loaded within 200 ms: {gave_up:?}"
    );
    let loaded = load_when_free(&mut client, "abandoned", &small).await;
    assert_eq!(loaded.constraints, CONSTRAINTS as u64);
    wait_for_log(
        &server,
        "stopped while generating its proving key: the client",
    )
    .await;
    // Neither stopped setup wrote to the key cache: no key of seed 11 or 12, and no
    // temporary file.
    let written = cached_files(&cache.0);
    assert!(
        written
            .iter()
            .all(|f| !f.contains("-s11") && !f.contains("-s12") && !f.ends_with(".tmp")),
        "{written:?}"
    );
    assert!(written.iter().any(|f| f.contains("-s3")), "{written:?}");

    // SIGTERM during a load: the daemon calls it off and exits.
    let mut lingering = client.clone();
    let _load = tokio::spawn(async move {
        lingering
            .load_key(proto::LoadKeyRequest {
                key_id: "late".into(),
                source: Some(slow(13).to_proto()),
            })
            .await
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    server.terminate();
    let exit = server.wait_exit(Duration::from_secs(30));
    assert!(exit.success(), "serve exited with {exit}\n{}", server.log());
}

/// Proves once through `Prove`; the job's result (done or failed).
async fn prove_once(client: &mut Client, key_id: &str, witness: &Witness) -> JobResult {
    let proved = client
        .prove(proto::SubmitRequest {
            key_id: key_id.into(),
            witness: Some(witness.to_proto()),
        })
        .await
        .expect("prove")
        .into_inner();
    match proved.outcome {
        Some(proto::prove_response::Outcome::Result(result)) => result,
        other => panic!("prove gave {other:?}"),
    }
}

/// The user's own circuit through the daemon: a snarkjs `.zkey` loaded from the
/// server's disk, witnesses sent as the circom `.wtns` and as the arkworks assignment;
/// each proof checked here against the verifying key read from the `.zkey` itself
/// (not the server's word). Malformed witnesses fail their own job at synthesis;
/// a benchmark seed for a `.zkey` key is refused at submit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daemon_proves_a_snarkjs_zkey_from_wtns_and_assignment_witnesses() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../files/tests/fixtures");
    let (zkey_path, wtns_path) = (
        fixtures.join("multi_public.zkey"),
        fixtures.join("multi_public.wtns"),
    );
    let zkey = crucible_files::Zkey::<crucible_core::Bls12_381>::read(&zkey_path)
        .expect("the fixture .zkey");
    let values = crucible_files::read_witness::<crucible_core::Bls12_381>(&wtns_path)
        .expect("the fixture .wtns");
    let want_inputs = values[1..=zkey.num_public].to_vec();
    let vk = crucible_core::ark_groth16::prepare_verifying_key(&zkey.proving_key.vk);

    let cache = TempDir::new("serve-zkey");
    let mut server = Daemon::start(
        "serve-zkey",
        &[
            "serve",
            "--backend",
            "cpu",
            "--insecure",
            "--listen",
            "127.0.0.1:0",
            "--key-dir",
            fixtures.to_str().expect("utf-8 path"),
        ],
        &[],
        &cache.0,
    );
    let grpc = server.wait_for_line("grpc listening on ", Duration::from_secs(60));
    let mut client = connect(&format!("http://{grpc}")).await.expect("connect");
    // The path is the client's, inside the server's key directory.
    let key = KeyRef::zkey("multi_public.zkey").unwrap();
    let loaded = client
        .load_key(proto::LoadKeyRequest {
            key_id: "circom".into(),
            source: Some(key.to_proto()),
        })
        .await
        .expect("load the .zkey")
        .into_inner();
    assert_eq!(
        loaded.constraints, zkey.num_constraints as u64,
        "{loaded:?}"
    );
    assert_eq!(loaded.public_inputs, zkey.num_public as u64, "{loaded:?}");

    let wtns = Witness::Wtns(std::fs::read(&wtns_path).unwrap().into());
    for witness in [wtns.clone(), Witness::assignment(&values)] {
        let result = prove_once(&mut client, "circom", &witness).await;
        let inputs = verify(&vk, &result).unwrap_or_else(|e| panic!("{}: {e}", witness.name()));
        assert_eq!(inputs, want_inputs, "{}", witness.name());
    }

    let Witness::Wtns(bytes) = &wtns else {
        unreachable!()
    };
    for (witness, says) in [
        (Witness::Wtns(bytes[..bytes.len() - 5].into()), "wtns"),
        (Witness::assignment(&values[1..]), "wires"),
    ] {
        let result = prove_once(&mut client, "circom", &witness).await;
        assert_eq!(
            result.state(),
            JobState::Failed,
            "{}: {result:?}",
            witness.name()
        );
        assert_eq!(result.failed_phase, "synthesize", "{result:?}");
        assert!(
            result.error.contains(says),
            "{}: {}",
            witness.name(),
            result.error
        );
    }
    let refused = client
        .submit(proto::SubmitRequest {
            key_id: "circom".into(),
            witness: Some(Witness::BenchSeed(1).to_proto()),
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");

    // Still healthy after the failures.
    let result = prove_once(&mut client, "circom", &wtns).await;
    assert_eq!(verify(&vk, &result).expect("verifies"), want_inputs);
    server.terminate();
    let exit = server.wait_exit(Duration::from_secs(30));
    assert!(exit.success(), "serve exited with {exit}\n{}", server.log());
}

/// What an outside client sends to take the daemon down is refused before any work,
/// with the limit it passed named, and the daemon goes on proving: a key with 2^31
/// public inputs, a key whose load needs more host memory than the operator allows,
/// `.zkey` paths outside the key directory (never answering with a file's contents),
/// a FIFO, a directory, a witness larger than its key's, and witnesses past the
/// daemon's byte budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_requests_are_refused_before_work_and_the_daemon_goes_on() {
    let cache = TempDir::new("serve-hostile");
    let keys = cache.0.join("keys");
    std::fs::create_dir_all(keys.join("dir.zkey")).unwrap();
    let fifo = keys.join("fifo.zkey");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo failed");
    std::os::unix::fs::symlink("/etc/passwd", keys.join("passwd.zkey")).unwrap();
    // Bearer tokens: an operator, and two clients whose jobs are their own.
    const OPERATOR: &str = "operator-token-0123456789abcdef";
    const BOB: &str = "bob-token-0123456789abcdef";
    const EVE: &str = "eve-token-0123456789abcdef";
    let tokens = cache.0.join("tokens");
    write_secret(
        &tokens,
        &format!("{OPERATOR} ops operator\n{BOB} bob client\n{EVE} eve client\n"),
    );
    let mut server = Daemon::start(
        "serve-hostile",
        &[
            "serve",
            "--backend",
            "cpu",
            "--tokens",
            tokens.to_str().expect("utf-8 path"),
            "--listen",
            "127.0.0.1:0",
            "--key-dir",
            keys.to_str().expect("utf-8 path"),
            "--max-key-memory",
            "1GiB",
            "--max-queued-witness-bytes",
            "1000",
            "--drain-timeout",
            "2s",
        ],
        &[],
        &cache.0,
    );
    let grpc = server.wait_for_line("grpc listening on ", Duration::from_secs(60));
    let url = format!("http://{grpc}");
    let mut client = connect_with_token(&url, Some(OPERATOR))
        .await
        .expect("connect");
    let mut bob = connect_with_token(&url, Some(BOB)).await.expect("connect");
    let mut eve = connect_with_token(&url, Some(EVE)).await.expect("connect");
    let mut nobody = connect(&url).await.expect("connect");
    let anonymous = nobody.status(proto::StatusRequest {}).await.unwrap_err();
    assert_eq!(
        anonymous.code(),
        tonic::Code::Unauthenticated,
        "{anonymous:?}"
    );
    let load = |id: &str, key: KeyRef| proto::LoadKeyRequest {
        key_id: id.into(),
        source: Some(key.to_proto()),
    };
    let refusals = [
        (
            KeyRef::bench(1, 1 << 31, 0).unwrap(),
            tonic::Code::ResourceExhausted,
            "max_inputs",
        ),
        (
            KeyRef::bench(1 << 22, 1, 1).unwrap(),
            tonic::Code::ResourceExhausted,
            "max_key_memory",
        ),
        (
            KeyRef::zkey("/etc/passwd").unwrap(),
            tonic::Code::InvalidArgument,
            "names no file inside the key directory",
        ),
        (
            KeyRef::zkey("../../../../etc/passwd").unwrap(),
            tonic::Code::InvalidArgument,
            "names no file inside the key directory",
        ),
        (
            KeyRef::zkey("passwd.zkey").unwrap(),
            tonic::Code::InvalidArgument,
            "names no file inside the key directory",
        ),
        (
            KeyRef::zkey("/etc/no-such-file").unwrap(),
            tonic::Code::InvalidArgument,
            "names no file inside the key directory",
        ),
        (
            KeyRef::zkey("fifo.zkey").unwrap(),
            tonic::Code::InvalidArgument,
            "a FIFO",
        ),
        (
            KeyRef::zkey("dir.zkey").unwrap(),
            tonic::Code::InvalidArgument,
            "a directory",
        ),
    ];
    for (key, code, says) in refusals {
        let call = client.load_key(load("bad", key.clone()));
        let refused = match tokio::time::timeout(Duration::from_secs(10), call).await {
            Ok(answer) => answer.unwrap_err(),
            Err(_) => panic!("loading {key} was not refused within 10 s"),
        };
        assert_eq!(refused.code(), code, "{key}: {refused:?}");
        assert!(refused.message().contains(says), "{key}: {refused:?}");
        assert!(!refused.message().contains("root"), "{key}: {refused:?}");
    }

    // A key id or a path holding a newline cannot forge a log line.
    let forged = client
        .load_key(load("a\nINFO forged", KeyRef::bench(8, 1, 0).unwrap()))
        .await
        .unwrap_err();
    assert_eq!(forged.code(), tonic::Code::InvalidArgument, "{forged:?}");
    let forged = client
        .load_key(load("p", KeyRef::zkey("x\nINFO forged").unwrap()))
        .await
        .unwrap_err();
    assert_eq!(forged.code(), tonic::Code::InvalidArgument, "{forged:?}");

    // The daemon goes on: a small key loads, and proves.
    let key = KeyRef::bench(CONSTRAINTS, INPUTS, 5).unwrap();
    let loaded = client
        .load_key(load("k", key))
        .await
        .expect("load a small key after the refusals")
        .into_inner();
    let vk = verifying_key(&loaded.verifying_key).expect("verifying key");
    let denied = bob
        .load_key(load("bobs", KeyRef::bench(8, 1, 0).unwrap()))
        .await
        .unwrap_err();
    assert_eq!(denied.code(), tonic::Code::PermissionDenied, "{denied:?}");
    // Bob's job is Bob's: Eve can neither await nor cancel it.
    let (job, _) = submit(&mut bob, "k", 11).await;
    let hidden = eve
        .r#await(proto::AwaitRequest { job_id: job })
        .await
        .unwrap_err();
    assert_eq!(hidden.code(), tonic::Code::NotFound, "{hidden:?}");
    let hidden = eve
        .cancel(proto::CancelRequest { job_id: job })
        .await
        .unwrap_err();
    assert_eq!(hidden.code(), tonic::Code::NotFound, "{hidden:?}");
    let mine = await_job(&mut bob, job).await;
    assert_eq!(
        verify(&vk, &mine).unwrap_or_else(|e| panic!("{e}")),
        BenchCircuit {
            constraints: CONSTRAINTS,
            inputs: INPUTS,
            seed: 11
        }
        .public_inputs()
    );
    let witness = |values: usize| Witness::assignment(&vec![crucible_core::Fr::from(1u64); values]);
    let submit = |w: Witness| proto::SubmitRequest {
        key_id: "k".into(),
        witness: Some(w.to_proto()),
    };
    // More values than the key has variables: refused at once by size.
    let oversized = bob
        .submit(submit(witness(4 * CONSTRAINTS)))
        .await
        .unwrap_err();
    assert_eq!(
        oversized.code(),
        tonic::Code::InvalidArgument,
        "{oversized:?}"
    );
    assert!(
        oversized.message().contains("more than a witness"),
        "{oversized:?}"
    );
    // A witness of the key's size is over the 1000-byte budget of queued witnesses.
    let budget = bob
        .submit(submit(witness(CONSTRAINTS + INPUTS + 2)))
        .await
        .unwrap_err();
    assert_eq!(budget.code(), tonic::Code::ResourceExhausted, "{budget:?}");
    assert!(
        budget.message().contains("max_queued_witness_bytes"),
        "{budget:?}"
    );
    let result = prove_once(&mut bob, "k", &Witness::BenchSeed(9)).await;
    let inputs = verify(&vk, &result).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        inputs,
        BenchCircuit {
            constraints: CONSTRAINTS,
            inputs: INPUTS,
            seed: 9
        }
        .public_inputs()
    );
    // SIGTERM while a large key is still being generated: new connections are
    // refused at once, and the daemon exits within the drain timeout (2 s).
    let mut loader = client.clone();
    let loading = tokio::spawn(async move {
        loader
            .load_key(proto::LoadKeyRequest {
                key_id: "big".into(),
                source: Some(KeyRef::bench(1 << 18, 1, 3).unwrap().to_proto()),
            })
            .await
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let stopping = std::time::Instant::now();
    server.terminate();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let refused = std::net::TcpStream::connect_timeout(
        &grpc.parse().expect("a socket address"),
        Duration::from_secs(1),
    );
    assert!(
        refused.is_err(),
        "a new connection was accepted during the drain"
    );
    let exit = server.wait_exit(Duration::from_secs(30));
    let took = stopping.elapsed();
    assert!(
        took < Duration::from_secs(6),
        "the daemon took {took:?} to exit"
    );
    assert!(loading.await.expect("the load task").is_err());
    assert!(exit.success(), "serve exited with {exit}\n{}", server.log());
    let log = server.log();
    assert!(
        !log.lines().any(|l| l.starts_with("INFO forged")),
        "a forged log line:\n{log}"
    );

    // A worker's poll interval has a floor (checked before it connects).
    let poll = std::process::Command::new(env!("CARGO_BIN_EXE_crucible"))
        .args(["worker", "--queue", "postgres://nowhere/db", "--poll", "0s"])
        .output()
        .expect("run crucible worker");
    assert!(!poll.status.success());
    let said = String::from_utf8_lossy(&poll.stderr);
    assert!(said.contains("--poll"), "{said}");
}

/// A certificate authority and the certificates it signs, written as PEM files into
/// a test's directory.
struct Pki {
    dir: std::path::PathBuf,
    ca: rcgen::Certificate,
    ca_key: rcgen::KeyPair,
}

impl Pki {
    fn new(dir: &std::path::Path, name: &str) -> Pki {
        let ca_key = rcgen::KeyPair::generate().expect("a CA key");
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        let ca = params.self_signed(&ca_key).expect("the CA certificate");
        std::fs::write(dir.join(format!("{name}.pem")), ca.pem()).unwrap();
        Pki {
            dir: dir.to_path_buf(),
            ca,
            ca_key,
        }
    }

    /// Signs a certificate for `subject` (names for a server, none for a client),
    /// writing `<file>.pem` and `<file>.key`; returns their paths.
    fn issue(
        &self,
        file: &str,
        subject: &[(rcgen::DnType, &str)],
        names: &[&str],
        purpose: rcgen::ExtendedKeyUsagePurpose,
    ) -> (std::path::PathBuf, std::path::PathBuf) {
        let key = rcgen::KeyPair::generate().expect("a key");
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = rcgen::CertificateParams::new(names).expect("params");
        params.distinguished_name = rcgen::DistinguishedName::new();
        for (ty, value) in subject {
            params.distinguished_name.push(ty.clone(), *value);
        }
        params.extended_key_usages = vec![purpose];
        let cert = params
            .signed_by(&key, &self.ca, &self.ca_key)
            .expect("sign");
        let (cert_path, key_path) = (
            self.dir.join(format!("{file}.pem")),
            self.dir.join(format!("{file}.key")),
        );
        std::fs::write(&cert_path, cert.pem()).unwrap();
        std::fs::write(&key_path, key.serialize_pem()).unwrap();
        // A private key others may read is refused.
        std::fs::set_permissions(&key_path, std::fs::Permissions::from_mode(0o600)).unwrap();
        (cert_path, key_path)
    }
}

fn path_str(p: &std::path::Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// A client's TLS: `ca` trusted, and `identity` (certificate, key) presented.
fn client_tls(
    ca: &std::path::Path,
    identity: Option<&(std::path::PathBuf, std::path::PathBuf)>,
) -> ClientTls {
    ClientTls {
        ca: CertificateFile::read(ca).expect("the CA file"),
        identity: identity.map(|(cert, key)| {
            (
                CertificateFile::read(cert).expect("the certificate file"),
                PrivateKeyFile::read(key).expect("the key file"),
            )
        }),
    }
}

/// A connection and a status call that must fail: what the refusal said.
async fn refused(url: &str, token: Option<&str>, tls: Option<&ClientTls>) -> String {
    let attempt = async {
        let mut client = connect_with(url, token, tls)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        client
            .status(proto::StatusRequest {})
            .await
            .map_err(|e| format!("status: {e}"))
    };
    match tokio::time::timeout(Duration::from_secs(20), attempt).await {
        Ok(Err(e)) => e,
        Ok(Ok(_)) => panic!("a client that must be refused was served (token {token:?})"),
        Err(_) => panic!("a refused client hung instead of failing (token {token:?})"),
    }
}

/// Mutual TLS with tokens, between real processes: certificates made here (a CA, the
/// daemon's, clients'). A client with a certificate the CA signed and a valid token
/// proves; without a certificate, with one the CA did not sign, without a token, in
/// plain text, or trusting another CA, it is refused and the daemon goes on. Then
/// mutual TLS alone: the certificate's CN names the client and its O the role. The
/// CLI's flags: plain text off loopback, and bad PEM files, named in the errors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_admits_only_certified_clients_with_tokens() {
    use rcgen::DnType::{CommonName, OrganizationName};
    use rcgen::ExtendedKeyUsagePurpose::{ClientAuth, ServerAuth};
    let cache = TempDir::new("serve-tls");
    let dir = &cache.0;
    let pki = Pki::new(dir, "ca");
    let server_identity = pki.issue(
        "server",
        &[(CommonName, "crucible daemon")],
        &["127.0.0.1", "localhost"],
        ServerAuth,
    );
    let bob_cert = pki.issue("bob", &[(CommonName, "bob")], &[], ClientAuth);
    let ops_cert = pki.issue(
        "ops",
        &[(OrganizationName, "operator"), (CommonName, "ops")],
        &[],
        ClientAuth,
    );
    // A client certificate, and a CA, that the daemon's CA has nothing to do with.
    let rogue = Pki::new(dir, "rogue-ca");
    let rogue_cert = rogue.issue("mallory", &[(CommonName, "bob")], &[], ClientAuth);
    let ca = dir.join("ca.pem");
    const OPERATOR: &str = "operator-token-0123456789abcdef";
    const BOB: &str = "bob-token-0123456789abcdef";
    let tokens = dir.join("tokens");
    write_secret(
        &tokens,
        &format!("{OPERATOR} ops operator\n{BOB} bob client\n"),
    );
    let tls_args = [
        "--tls-cert",
        path_str(&server_identity.0),
        "--tls-key",
        path_str(&server_identity.1),
        "--tls-client-ca",
        path_str(&ca),
        "--tls-handshake-timeout",
        "1s",
    ];
    let start = |name: &str, auth: &[&str]| {
        let mut args = vec!["serve", "--backend", "cpu", "--listen", "127.0.0.1:0"];
        args.extend_from_slice(&tls_args);
        args.extend_from_slice(auth);
        Daemon::start(name, &args, &[], dir)
    };

    let mut server = start("serve-tls", &["--tokens", path_str(&tokens)]);
    let security = server.wait_for_line("grpc security: ", Duration::from_secs(60));
    assert_eq!(security, "mutual TLS, bearer tokens", "{}", server.log());
    let grpc = server.wait_for_line("grpc listening on ", Duration::from_secs(10));
    let url = format!("https://{grpc}");
    let bob_tls = client_tls(&ca, Some(&bob_cert));
    let ops_tls = client_tls(&ca, Some(&ops_cert));

    let mut bob = connect_with(&url, Some(BOB), Some(&bob_tls))
        .await
        .unwrap_or_else(|e| panic!("bob connects: {e}\n{}", server.log()));
    let mut ops = connect_with(&url, Some(OPERATOR), Some(&ops_tls))
        .await
        .expect("the operator connects");
    let key = KeyRef::bench(CONSTRAINTS, INPUTS, 7).unwrap();
    let loaded = ops
        .load_key(proto::LoadKeyRequest {
            key_id: "k".into(),
            source: Some(key.to_proto()),
        })
        .await
        .expect("load the key over mutual TLS")
        .into_inner();
    let vk = verifying_key(&loaded.verifying_key).expect("verifying key");
    let prove_checked = |result: JobResult, seed: u64| {
        assert_eq!(
            verify(&vk, &result).unwrap_or_else(|e| panic!("seed {seed}: {e}")),
            expected_inputs(seed),
            "seed {seed}"
        );
    };
    prove_checked(prove_once(&mut bob, "k", &Witness::BenchSeed(21)).await, 21);

    let refusals = [
        (
            "no client certificate",
            refused(&url, Some(BOB), Some(&client_tls(&ca, None))).await,
        ),
        (
            "a certificate another CA signed",
            refused(&url, Some(BOB), Some(&client_tls(&ca, Some(&rogue_cert)))).await,
        ),
        (
            "plain text",
            refused(&format!("http://{grpc}"), Some(BOB), None).await,
        ),
        (
            "trusting another CA",
            refused(
                &url,
                Some(BOB),
                Some(&client_tls(&dir.join("rogue-ca.pem"), Some(&bob_cert))),
            )
            .await,
        ),
    ];
    // Each is refused by the transport (the token they send is valid); a handshake the
    // server ends can reach the client as a cancelled call.
    for (case, said) in &refusals {
        println!("{case}: {said}");
        assert!(
            [
                "transport error",
                "protocol error",
                "UnknownIssuer",
                "operation was canceled",
            ]
            .iter()
            .any(|s| said.contains(s)),
            "{case}: {said}"
        );
    }
    // A certified client still needs its token: tokens name identities here.
    let tokenless = refused(&url, None, Some(&bob_tls)).await;
    assert!(
        tokenless.contains("bearer token"),
        "a certified client without a token: {tokenless}"
    );
    // The daemon goes on after every refusal, and beside a connection that never
    // completes its handshake (silent after the first byte of a ClientHello), which
    // it closes after the handshake timeout (1 s here).
    let mut silent = std::net::TcpStream::connect(&grpc).expect("connect");
    std::io::Write::write_all(&mut silent, &[0x16]).unwrap();
    let opened = std::time::Instant::now();
    prove_checked(prove_once(&mut bob, "k", &Witness::BenchSeed(22)).await, 22);
    let closed = tokio::task::spawn_blocking(move || {
        silent
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut byte = [0u8; 1];
        let read = std::io::Read::read(&mut silent, &mut byte);
        (read.map_err(|e| e.kind()), opened.elapsed())
    })
    .await
    .unwrap();
    assert!(
        matches!(closed.0, Ok(0) | Err(std::io::ErrorKind::ConnectionReset)),
        "the silent connection: {closed:?}"
    );
    assert!(
        closed.1 >= Duration::from_millis(900) && closed.1 < Duration::from_secs(10),
        "closed after {:?}, the timeout is 1 s",
        closed.1
    );
    wait_for_log(&server, "TLS handshake timed out").await;
    // The command line client: mutual TLS and its token file.
    let ops_token = dir.join("ops-token");
    write_secret(&ops_token, OPERATOR);
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_crucible"))
        .args([
            "client",
            "--addr",
            &url,
            "--tls-ca",
            path_str(&ca),
            "--tls-cert",
            path_str(&ops_cert.0),
            "--tls-key",
            path_str(&ops_cert.1),
            "--token-file",
            path_str(&ops_token),
            "status",
        ])
        .output()
        .expect("run crucible client");
    let said = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.status.success() && said.contains("backend cpu"),
        "crucible client status over mutual TLS:\n{said}\n{}",
        String::from_utf8_lossy(&status.stderr)
    );
    server.terminate();
    let exit = server.wait_exit(Duration::from_secs(30));
    assert!(exit.success(), "serve exited with {exit}\n{}", server.log());

    // Mutual TLS alone: the certificate names the client (CN) and its role (O).
    let mut server = start("serve-tls-certs", &[]);
    let security = server.wait_for_line("grpc security: ", Duration::from_secs(60));
    assert_eq!(
        security,
        "mutual TLS, client certificates",
        "{}",
        server.log()
    );
    let grpc = server.wait_for_line("grpc listening on ", Duration::from_secs(10));
    let url = format!("https://{grpc}");
    let mut bob = connect_with(&url, None, Some(&bob_tls))
        .await
        .expect("bob connects");
    let mut ops = connect_with(&url, None, Some(&ops_tls))
        .await
        .expect("the operator connects");
    let load = proto::LoadKeyRequest {
        key_id: "k".into(),
        source: Some(key.to_proto()),
    };
    let denied = bob.load_key(load.clone()).await.unwrap_err();
    assert_eq!(denied.code(), tonic::Code::PermissionDenied, "{denied:?}");
    assert!(denied.message().contains("`bob`"), "{denied:?}");
    ops.load_key(load).await.expect("the operator loads a key");
    let (job, _) = submit(&mut bob, "k", 23).await;
    let hidden = ops
        .r#await(proto::AwaitRequest { job_id: job })
        .await
        .unwrap_err();
    assert_eq!(hidden.code(), tonic::Code::NotFound, "{hidden:?}");
    prove_checked(await_job(&mut bob, job).await, 23);
    println!(
        "no client certificate: {}",
        refused(&url, None, Some(&client_tls(&ca, None))).await
    );

    server.terminate();
    let exit = server.wait_exit(Duration::from_secs(30));
    assert!(exit.success(), "serve exited with {exit}\n{}", server.log());

    // The flags: plain text off loopback is refused; a bad PEM file is named with
    // its flag; an http address with a CA is refused rather than sent in plain text.
    let garbage = dir.join("garbage.pem");
    std::fs::write(&garbage, "not a certificate\n").unwrap();
    let refusals: [(&[&str], &[&str]); 5] = [
        (
            &[
                "serve",
                "--listen",
                "0.0.0.0:0",
                "--tokens",
                path_str(&tokens),
            ],
            &["0.0.0.0:0", "--tls-cert"],
        ),
        (
            &[
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--tokens",
                path_str(&tokens),
                "--tls-cert",
                path_str(&garbage),
                "--tls-key",
                path_str(&server_identity.1),
            ],
            &["--tls-cert", path_str(&garbage), "no PEM certificate"],
        ),
        (
            &[
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--tokens",
                path_str(&tokens),
                "--tls-cert",
                path_str(&server_identity.0),
                "--tls-key",
                path_str(&bob_cert.1),
            ],
            &["do not make a TLS identity", path_str(&bob_cert.1)],
        ),
        (
            &["client", "--tls-ca", path_str(&garbage), "status"],
            &["--tls-ca", path_str(&garbage)],
        ),
        (
            &[
                "client",
                "--addr",
                &format!("http://{grpc}"),
                "--tls-ca",
                path_str(&ca),
                "status",
            ],
            &["https://"],
        ),
    ];
    for (args, says) in refusals {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_crucible"))
            .args(args)
            .env("CRUCIBLE_CACHE_DIR", dir)
            .output()
            .expect("run crucible");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        for s in says {
            assert!(stderr.contains(s), "{args:?}: `{s}` not in: {stderr}");
        }
    }
}

/// A process's resident memory (`VmRSS`) or its peak (`VmHWM`), in bytes.
fn process_memory(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read status");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"));
    kib * 1024
}

/// 64 clients push the largest witness the key admits, as fast as the daemon answers,
/// while the engine is busy. Memory is bounded in bytes: the daemon's peak RSS stays
/// within its memory with the key loaded, plus the queued-witness budget, plus two
/// copies of a message per client (one arriving, one decoded), plus 256 MiB for
/// everything else; refusals are `RESOURCE_EXHAUSTED` naming the budget; every
/// accepted job ends, and another client's proof still completes and verifies.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixty_four_clients_pushing_the_largest_witnesses_stay_within_a_memory_bound() {
    const FLOOD_CONSTRAINTS: usize = 1 << 13;
    const FLOOD_CLIENTS: usize = 64;
    const BUDGET: u64 = 8 << 20;
    let cache = TempDir::new("serve-flood");
    let mut server = Daemon::start(
        "serve-flood",
        &[
            "serve",
            "--backend",
            "cpu",
            "--insecure",
            "--listen",
            "127.0.0.1:0",
            "--max-queued-witness-bytes",
            &BUDGET.to_string(),
        ],
        &[],
        &cache.0,
    );
    let grpc = server.wait_for_line("grpc listening on ", Duration::from_secs(60));
    let url = format!("http://{grpc}");
    let mut client = connect(&url).await.expect("connect");
    let key = KeyRef::bench(FLOOD_CONSTRAINTS, INPUTS, 5).unwrap();
    let loaded = client
        .load_key(proto::LoadKeyRequest {
            key_id: "k".into(),
            source: Some(key.to_proto()),
        })
        .await
        .expect("load the key")
        .into_inner();
    let vk = verifying_key(&loaded.verifying_key).expect("the verifying key");
    let baseline = process_memory(server.pid(), "VmRSS:");
    // The largest witness the key admits: one value for each of its variables.
    let largest = Witness::assignment(&vec![
        crucible_core::Fr::from(1u64);
        FLOOD_CONSTRAINTS + INPUTS + 2
    ]);
    let message = largest.byte_len() as u64;
    let deadline = std::time::Instant::now() + Duration::from_secs(8);
    let mut flood = Vec::new();
    for _ in 0..FLOOD_CLIENTS {
        let url = url.clone();
        let witness = largest.clone();
        flood.push(tokio::spawn(async move {
            let mut client = connect(&url).await.expect("connect");
            let (mut accepted, mut refused) = (Vec::new(), 0u64);
            while std::time::Instant::now() < deadline {
                let answer = client
                    .submit(proto::SubmitRequest {
                        key_id: "k".into(),
                        witness: Some(witness.to_proto()),
                    })
                    .await;
                match answer.map(|r| r.into_inner().outcome) {
                    Ok(Some(submit_response::Outcome::JobId(id))) => accepted.push(id),
                    Ok(Some(submit_response::Outcome::Busy(_))) => refused += 1,
                    Err(status) if status.code() == tonic::Code::ResourceExhausted => {
                        assert!(
                            status.message().contains("max_queued_witness_bytes"),
                            "{status:?}"
                        );
                        refused += 1;
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                    other => panic!("submit: {other:?}"),
                }
            }
            (client, accepted, refused)
        }));
    }
    let (mut accepted, mut refused) = (0usize, 0u64);
    for task in flood {
        let (mut client, ids, refusals) = task.await.expect("a client task");
        refused += refusals;
        accepted += ids.len();
        for id in ids {
            let ended = tokio::time::timeout(Duration::from_secs(600), await_job(&mut client, id))
                .await
                .unwrap_or_else(|_| panic!("job {id} did not end\n{}", server.log()));
            assert!(
                matches!(ended.state(), JobState::Done | JobState::Failed),
                "job {id}: {ended:?}"
            );
        }
    }
    let peak = process_memory(server.pid(), "VmHWM:");
    let bound = baseline + BUDGET + 2 * FLOOD_CLIENTS as u64 * message + (256 << 20);
    println!(
        "{accepted} accepted, {refused} refused; RSS {baseline} B with the key, peak {peak} B, bound {bound} B ({message}-byte witnesses)"
    );
    assert!(refused > 0, "the flood never reached the witness budget");
    assert!(accepted > 0, "no submit was accepted");
    assert!(
        peak <= bound,
        "peak RSS {peak} B over the bound {bound} B\n{}",
        server.log()
    );
    // Another client's proof still completes and verifies.
    let result = prove_once(&mut client, "k", &Witness::BenchSeed(11)).await;
    let inputs = verify(&vk, &result).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        inputs,
        BenchCircuit {
            constraints: FLOOD_CONSTRAINTS,
            inputs: INPUTS,
            seed: 11
        }
        .public_inputs()
    );
    server.terminate();
    assert!(server.wait_exit(Duration::from_secs(60)).success());
}
