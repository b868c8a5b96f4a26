//! Structured logs through `tracing`, filtered by `RUST_LOG`, on stderr.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// Installs the log subscriber (colour only when stderr is a terminal): `RUST_LOG`
/// if set (e.g. `crucible_service=debug`), else `default` (e.g. `info`). Calling it
/// twice keeps the first. Text a client can choose (key ids, paths, errors) is
/// logged as a field, which the formatter writes escaped and quoted, so it cannot
/// forge a line.
pub fn init(default: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    // Fails only when a subscriber is already installed, which is fine.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colour only for a person at a terminal, not in a log file or journal.
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
