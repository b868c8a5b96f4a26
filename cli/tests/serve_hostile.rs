//! What a careless operator file or a hostile client cannot do to `crucible serve`,
//! between real processes on localhost: a tokens, certificate or token file that is
//! not a small regular file, or a secret others may read, stops start-up at once
//! with the flag named (a FIFO no longer blocks it, `/dev/zero` no longer fills
//! memory); silent connections are capped per address and closed when idle while a
//! valid client is served; the default message cap takes the witnesses of the keys
//! the daemon admits, and a key whose witnesses could not be sent is refused.

mod support;

use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::{Duration, Instant};

use crucible_service::client::connect;
use crucible_service::key_ref::KeyRef;
use crucible_service::proto;
use crucible_service::witness::Witness;
use support::{write_secret, Daemon, TempDir};

fn mkfifo(path: &std::path::Path) {
    let made = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// `crucible serve` with `args` must exit 3 (a file's fault) within seconds, saying `says`.
fn refused_at_start(dir: &TempDir, args: &[&str], says: &str) {
    let mut all = vec!["serve", "--backend", "cpu", "--listen", "127.0.0.1:0"];
    all.extend_from_slice(args);
    let mut daemon = Daemon::start("serve-files", &all, &[], &dir.0);
    let exit = daemon.wait_exit(Duration::from_secs(20));
    let log = daemon.log();
    assert_eq!(exit.code(), Some(3), "{args:?}\n{log}");
    assert!(log.contains(says), "{args:?}: expected `{says}`\n{log}");
    assert!(!log.contains("grpc listening"), "{args:?}\n{log}");
}

#[test]
fn operator_files_must_be_small_regular_files_and_secrets_private() {
    let dir = TempDir::new("operator-files");
    let path = |name: &str| dir.0.join(name).to_str().expect("utf-8").to_string();
    let fifo = path("fifo");
    mkfifo(fifo.as_ref());
    let open_tokens = path("open-tokens");
    std::fs::write(&open_tokens, "operator-token-0123456789 ops operator\n").unwrap();
    std::fs::set_permissions(&open_tokens, std::fs::Permissions::from_mode(0o644)).unwrap();
    // A certificate and its private key, the key readable by the owner's group.
    let key = rcgen::KeyPair::generate().expect("a key");
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])
        .expect("params")
        .self_signed(&key)
        .expect("a certificate");
    let (cert_file, open_key) = (path("server.pem"), path("server.key"));
    std::fs::write(&cert_file, cert.pem()).unwrap();
    std::fs::write(&open_key, key.serialize_pem()).unwrap();
    std::fs::set_permissions(&open_key, std::fs::Permissions::from_mode(0o640)).unwrap();
    let open_key_says = format!(
        "--tls-key: private key {open_key}: it holds secrets, yet its mode 640 lets other users \
         read or change it; make it its owner's alone (chmod 600)"
    );
    for (args, says) in [
        (
            vec!["--tokens", open_tokens.as_str()],
            "mode 644 lets other users read or change it; make it its owner's alone (chmod 600)",
        ),
        (
            vec!["--tokens", fifo.as_str()],
            "is a FIFO, not a regular file",
        ),
        (
            vec!["--tokens", "/dev/zero"],
            "is a device, not a regular file",
        ),
        (
            vec!["--tokens", dir.0.to_str().unwrap()],
            "is a directory, not a regular file",
        ),
        (
            vec!["--tls-cert", fifo.as_str(), "--tls-key", fifo.as_str()],
            "is a FIFO, not a regular file",
        ),
        (
            vec![
                "--tls-cert",
                cert_file.as_str(),
                "--tls-key",
                open_key.as_str(),
                "--insecure",
            ],
            open_key_says.as_str(),
        ),
        (
            vec!["--tls-cert", "/dev/zero", "--tls-key", "/dev/zero"],
            "is a device, not a regular file",
        ),
    ] {
        refused_at_start(&dir, &args, says);
    }
    // Made its owner's alone, the same tokens file serves.
    std::fs::set_permissions(&open_tokens, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut daemon = Daemon::start(
        "serve-files",
        &[
            "serve",
            "--backend",
            "cpu",
            "--listen",
            "127.0.0.1:0",
            "--tokens",
            &open_tokens,
        ],
        &[],
        &dir.0,
    );
    daemon.wait_for_line("grpc listening on ", Duration::from_secs(60));
    daemon.terminate();
    assert!(daemon.wait_exit(Duration::from_secs(30)).success());

    // The client's token file: the same rules.
    let open_token = path("open-token");
    std::fs::write(&open_token, "operator-token-0123456789").unwrap();
    std::fs::set_permissions(&open_token, std::fs::Permissions::from_mode(0o640)).unwrap();
    let private_token = path("private-token");
    write_secret(private_token.as_ref(), "operator-token-0123456789");
    // Refused for the file (mode 640, a FIFO, a device); a private one is read and the
    // client goes on to connect.
    // Exit 3 for the file, 5 for the unreachable daemon.
    for (file, says, code) in [
        (open_token.as_str(), "--token-file", 3),
        (fifo.as_str(), "is a FIFO", 3),
        ("/dev/zero", "is a device", 3),
        (private_token.as_str(), "cannot reach the daemon", 5),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_crucible"))
            .args(["client", "--addr", "http://127.0.0.1:9", "--token-file"])
            .args([file, "status"])
            .output()
            .expect("run crucible client");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{file}: {stderr}");
        assert!(stderr.contains(says), "{file}: {stderr}");
    }
}

/// Opens a connection to `server` from the loopback address `from` and sends nothing.
async fn silent_connection(from: &str, server: SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket
        .bind(format!("{from}:0").parse().unwrap())
        .expect("bind a loopback address");
    let stream = socket.connect(server).await.expect("connect");
    stream.into_std().expect("a std stream")
}

/// Whether the daemon has closed `stream` (a read sees the end or an error at once);
/// what it sent before (its HTTP/2 settings) is read and dropped.
fn closed(stream: &mut TcpStream) -> bool {
    stream.set_nonblocking(true).unwrap();
    let mut bytes = [0u8; 1024];
    loop {
        match stream.read(&mut bytes) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_connections_are_capped_and_closed_while_a_client_is_served() {
    const PER_PEER: usize = 30;
    const IDLE: Duration = Duration::from_secs(3);
    let cache = TempDir::new("serve-idle");
    let mut server = Daemon::start(
        "serve-idle",
        &[
            "serve",
            "--backend",
            "cpu",
            "--insecure",
            "--listen",
            "127.0.0.1:0",
            "--idle-timeout",
            "3s",
            "--max-connections",
            "100",
            "--max-connections-per-peer",
            &PER_PEER.to_string(),
        ],
        &[],
        &cache.0,
    );
    let grpc: SocketAddr = server
        .wait_for_line("grpc listening on ", Duration::from_secs(60))
        .parse()
        .expect("an address");
    // One address opens 40 connections and says nothing: the 10 beyond its cap are
    // closed at once, the rest stay open until the idle timeout.
    let opened = Instant::now();
    let mut silent = Vec::new();
    for _ in 0..PER_PEER + 10 {
        silent.push(silent_connection("127.0.0.2", grpc).await);
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    let refused = silent.iter_mut().map(closed).filter(|&c| c).count();
    assert!(
        opened.elapsed() < IDLE,
        "the connections took {:?} to open",
        opened.elapsed()
    );
    assert_eq!(refused, 10, "{}", server.log());
    // Meanwhile a client from another address is served.
    let mut client = connect(&format!("http://{grpc}")).await.expect("connect");
    let status = client
        .status(proto::StatusRequest {})
        .await
        .expect("status while silent connections are open")
        .into_inner();
    assert_eq!(status.backend, "cpu");
    // A client that waits longer than the idle timeout stays connected: it answers
    // the daemon's pings.
    tokio::time::sleep(IDLE + Duration::from_secs(1)).await;
    client
        .status(proto::StatusRequest {})
        .await
        .expect("status after waiting past the idle timeout");
    // The silent ones were closed by then.
    let deadline = opened + IDLE * 3;
    while !silent.iter_mut().all(closed) {
        assert!(
            Instant::now() < deadline,
            "silent connections still open {:?} after they opened\n{}",
            opened.elapsed(),
            server.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        server.log().contains("connection idle; closed"),
        "{}",
        server.log()
    );
    assert!(
        server.log().contains("--max-connections-per-peer"),
        "{}",
        server.log()
    );
    server.terminate();
    assert!(server.wait_exit(Duration::from_secs(30)).success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_message_cap_fits_every_admitted_keys_witness() {
    let cache = TempDir::new("serve-cap");
    let start = |extra: &[&str]| {
        let mut args = vec![
            "serve",
            "--backend",
            "cpu",
            "--insecure",
            "--listen",
            "127.0.0.1:0",
        ];
        args.extend_from_slice(extra);
        let mut server = Daemon::start("serve-cap", &args, &[], &cache.0);
        let grpc = server.wait_for_line("grpc listening on ", Duration::from_secs(60));
        (server, format!("http://{grpc}"))
    };
    let load = |id: &str, constraints: usize| proto::LoadKeyRequest {
        key_id: id.into(),
        source: Some(KeyRef::bench(constraints, 1, 1).unwrap().to_proto()),
    };

    // By default a request of 80 MiB (more than a 2^21 key's witness, 64 MiB) passes
    // the transport and is judged against its key: too large for this small one.
    let (mut server, url) = start(&[]);
    let mut client = connect(&url).await.expect("connect");
    client
        .load_key(load("small", 64))
        .await
        .expect("load a small key");
    let huge = Witness::Wtns(vec![0u8; 80 << 20].into());
    let refused = client
        .submit(proto::SubmitRequest {
            key_id: "small".into(),
            witness: Some(huge.to_proto()),
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");
    assert!(
        refused
            .message()
            .contains("more than a witness of key `small` can hold"),
        "{refused:?}"
    );
    server.terminate();
    assert!(server.wait_exit(Duration::from_secs(30)).success());

    // Under a 64 KiB cap, a key of 2^11 constraints (a witness of 64 KiB and more)
    // is refused at LoadKey, before its setup; one of 2^10 loads.
    let (mut server, url) = start(&["--max-message-bytes", "64KiB"]);
    let mut client = connect(&url).await.expect("connect");
    let refused = client.load_key(load("big", 1 << 11)).await.unwrap_err();
    assert_eq!(
        refused.code(),
        tonic::Code::ResourceExhausted,
        "{refused:?}"
    );
    assert!(
        refused
            .message()
            .contains("--max-message-bytes = 65536 bytes"),
        "{refused:?}"
    );
    client
        .load_key(load("fits", 1 << 10))
        .await
        .expect("a key whose witnesses fit loads");
    server.terminate();
    assert!(server.wait_exit(Duration::from_secs(30)).success());
}
