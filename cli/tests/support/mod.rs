//! What the service tests share: temporary directories and `crucible` daemons run
//! as child processes (their output kept for failure messages, killed when dropped).
#![allow(dead_code)] // each test binary uses only part of it

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A fresh directory under the system temp dir, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "crucible-service-test-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temp dir");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes a secret (a tokens or token file) readable by its owner alone, as the
/// daemon and the client require.
pub fn write_secret(path: &std::path::Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).expect("write a secret");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).expect("chmod 600");
}

/// A `crucible` subcommand running in the background.
pub struct Daemon {
    pub name: String,
    child: Child,
    lines: Receiver<String>,
    log: Arc<Mutex<String>>,
    status: Option<ExitStatus>,
}

fn collect(
    stream: impl Read + Send + 'static,
    log: Arc<Mutex<String>>,
    lines: Option<std::sync::mpsc::Sender<String>>,
) {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            log.lock().unwrap().push_str(&format!("{line}\n"));
            if let Some(tx) = &lines {
                let _ = tx.send(line);
            }
        }
    });
}

impl Daemon {
    /// Starts `crucible <args>` with `env`, its key cache in `cache`.
    pub fn start(
        name: &str,
        args: &[&str],
        env: &[(&str, &str)],
        cache: &std::path::Path,
    ) -> Daemon {
        let mut child = Command::new(env!("CARGO_BIN_EXE_crucible"))
            .args(args)
            .env("CRUCIBLE_CACHE_DIR", cache)
            .env_remove("CRUCIBLE_REQUIRE")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start crucible");
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, lines) = channel();
        collect(
            child.stdout.take().expect("stdout"),
            Arc::clone(&log),
            Some(tx),
        );
        collect(child.stderr.take().expect("stderr"), Arc::clone(&log), None);
        Daemon {
            name: name.to_string(),
            child,
            lines,
            log,
            status: None,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Everything it printed so far (stdout and stderr).
    pub fn log(&self) -> String {
        format!("--- {} ---\n{}", self.name, self.log.lock().unwrap())
    }

    /// The rest of the first stdout line starting with `prefix`.
    pub fn wait_for_line(&mut self, prefix: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(rest) = line.strip_prefix(prefix) {
                        return rest.trim().to_string();
                    }
                }
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {
                    panic!(
                        "{} printed no `{prefix}` line in {timeout:?}\n{}",
                        self.name,
                        self.log()
                    )
                }
            }
        }
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        let sent = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill -TERM {} failed", self.pid());
    }

    /// Sends SIGKILL.
    pub fn kill(&mut self) {
        self.child.kill().expect("SIGKILL");
        self.status = self.child.wait().ok();
    }

    /// Waits for it to exit, failing the test after `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        if let Some(status) = self.status {
            return status;
        }
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                self.status = Some(status);
                // Let the reader threads take the last lines.
                std::thread::sleep(Duration::from_millis(50));
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "{} did not exit within {timeout:?}\n{}",
                    self.name,
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if self.status.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The test database's URL: `CRUCIBLE_TEST_POSTGRES_URL`. Without it the test is
/// skipped (saying so), except under CI (`CI` set), where it fails.
pub fn postgres_url() -> Option<String> {
    const VAR: &str = "CRUCIBLE_TEST_POSTGRES_URL";
    match std::env::var(VAR) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some() => {
            panic!("{VAR} is not set: CI must start Postgres and set it (.ci/run does)")
        }
        _ => {
            eprintln!("skipped: {VAR} is not set, so there is no Postgres to test against (e.g. postgres://user:password@127.0.0.1/db; .ci/run sets it)");
            None
        }
    }
}

/// A finished command's exit status and output, for a failure message.
pub fn text(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `crucible ARGS` to the end (the backends it requires left to its arguments).
pub fn crucible(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crucible"))
        .args(args)
        .env_remove("CRUCIBLE_REQUIRE")
        .output()
        .expect("runs crucible")
}
