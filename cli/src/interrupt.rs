//! Ctrl-C (SIGINT) or SIGTERM during a command that writes files: the temporary
//! files being written are removed and the process exits 130 or 143, as a shell
//! reports a process such a signal stopped. Without this the signal ends the process
//! at once, and a hidden `.<name>.<pid>.tmp` stays beside the output. The daemons
//! (`serve`, `worker`) watch the signals themselves, to drain their work.

use crucible_files::output::remove_unfinished;
use tokio::signal::unix::{signal, SignalKind};

use crate::error::CliError;

/// Watches SIGINT and SIGTERM on a thread of its own from now on.
pub fn remove_unfinished_on_signal() -> Result<(), CliError> {
    let failed =
        |e: std::io::Error| CliError::device(format!("cannot watch SIGINT and SIGTERM: {e}"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(failed)?;
    // Registered here, before the command starts, so no signal comes unwatched.
    let (mut interrupt, mut terminate) = {
        let _entered = runtime.enter();
        (
            signal(SignalKind::interrupt()).map_err(failed)?,
            signal(SignalKind::terminate()).map_err(failed)?,
        )
    };
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let status = runtime.block_on(async {
                tokio::select! {
                    _ = interrupt.recv() => 130,
                    _ = terminate.recv() => 143,
                }
            });
            for temp in remove_unfinished() {
                eprintln!("interrupted: removed the unfinished {}", temp.display());
            }
            std::process::exit(status);
        })
        .map_err(failed)?;
    Ok(())
}
