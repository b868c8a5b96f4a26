//! The error every command returns, printed as `error: ...`, and the one table of exit
//! statuses: a script tells by the status alone what kind of thing went wrong.
//!
//! | status | meaning |
//! |---|---|
//! | 0 | done: every proof made and verified, every check passed |
//! | 1 | the work ran and the answer is no: a proof does not verify, a proof failed, a `--check` or conformance case found a difference |
//! | 2 | usage: an unknown option, a bad value, options that do not go together (clap's own errors exit 2 too) |
//! | 3 | a file: an input missing, unreadable or not what it should be; an output that cannot be written |
//! | 4 | the backend or device: unavailable, out of budget or memory, a device error, an operation it does not support |
//! | 5 | the network, a daemon or a database: unreachable, refusing, or without what was asked for |
//!
//! `docs/src/getting-started.md` prints this table; a test keeps the two equal.

use std::process::ExitCode;

/// What kind of thing went wrong, and so the exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// 1: a proof does not verify, a proof failed, a check found a difference.
    Failed = 1,
    /// 2: the command line is wrong.
    Usage = 2,
    /// 3: an input file missing, unreadable or invalid; an output that cannot be written.
    File = 3,
    /// 4: the backend or device is unavailable, out of memory, failed or unsupported.
    Device = 4,
    /// 5: the network, a daemon or a database.
    Remote = 5,
}

impl Exit {
    /// The process's exit status.
    pub fn code(self) -> ExitCode {
        ExitCode::from(self as u8)
    }

    /// 0 when the work's answer is yes, else [`Exit::Failed`]'s 1.
    pub fn verdict(ok: bool) -> ExitCode {
        if ok {
            ExitCode::SUCCESS
        } else {
            Exit::Failed.code()
        }
    }
}

/// A failure reported as `error: ...` with the exit status of its kind.
#[derive(Debug)]
pub struct CliError {
    /// The kind of failure.
    pub exit: Exit,
    /// What went wrong, for the `error:` line.
    pub message: String,
}

impl CliError {
    /// A failure of kind `exit`.
    pub fn new(exit: Exit, message: impl Into<String>) -> Self {
        CliError {
            exit,
            message: message.into(),
        }
    }

    /// The command line is wrong (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(Exit::Usage, message)
    }

    /// A file cannot be read, is invalid, or cannot be written (exit 3).
    pub fn file(message: impl Into<String>) -> Self {
        Self::new(Exit::File, message)
    }

    /// The backend or device failed or is unavailable (exit 4).
    pub fn device(message: impl Into<String>) -> Self {
        Self::new(Exit::Device, message)
    }

    /// The network, a daemon or a database failed (exit 5). A chain of causes
    /// (`a: b: c`) says each once: hyper's connect error repeats its own cause.
    pub fn remote(message: impl Into<String>) -> Self {
        Self::new(Exit::Remote, once_each(&message.into()))
    }

    /// The work ran and the answer is no (exit 1).
    pub fn failed(message: impl Into<String>) -> Self {
        Self::new(Exit::Failed, message)
    }

    /// `e` with `context` before its message, its kind kept.
    pub fn core_in(context: &str, e: crucible_core::Error) -> Self {
        Self::new(exit_of(&e), format!("{context}: {e}"))
    }
}

/// `message` with each `: `-separated cause that repeats the one before it dropped.
fn once_each(message: &str) -> String {
    let mut causes: Vec<&str> = Vec::new();
    for cause in message.split(": ") {
        if causes.last() != Some(&cause) {
            causes.push(cause);
        }
    }
    causes.join(": ")
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The kind of a core error: bad input is a file's fault (the files are what the CLI
/// reads input from), a rejected proof is a failed answer, the rest is the device's.
fn exit_of(e: &crucible_core::Error) -> Exit {
    use crucible_core::Error;
    match e {
        Error::InvalidInput(_) | Error::Synthesis(_) => Exit::File,
        Error::Verification(_) => Exit::Failed,
        Error::InPhase { source, .. } => exit_of(source),
        _ => Exit::Device,
    }
}

impl From<crucible_core::Error> for CliError {
    fn from(e: crucible_core::Error) -> Self {
        CliError::new(exit_of(&e), e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_errors_keep_their_kind_through_a_phase() {
        use crucible_core::Error;
        let invalid = Error::InvalidInput("bad".into());
        assert_eq!(CliError::from(invalid).exit, Exit::File);
        let rejected = Error::Verification("no".into());
        assert_eq!(CliError::from(rejected).exit, Exit::Failed);
        let device = Error::Device {
            backend: "cuda:0".into(),
            message: "launch failed".into(),
        };
        assert_eq!(CliError::core_in("prove", device).exit, Exit::Device);
    }

    #[test]
    fn a_repeated_cause_is_said_once() {
        let e = CliError::remote(
            "cannot reach the daemon at http://127.0.0.1:1: connecting to http://127.0.0.1:1: transport error: tcp connect error: tcp connect error: Connection refused (os error 111)",
        );
        assert_eq!(
            e.message,
            "cannot reach the daemon at http://127.0.0.1:1: connecting to http://127.0.0.1:1: transport error: tcp connect error: Connection refused (os error 111)"
        );
        assert_eq!(e.exit, Exit::Remote);
    }

    #[test]
    fn the_table_in_the_guide_is_this_one() {
        let guide = include_str!("../../docs/src/getting-started.md");
        for (exit, code) in [
            (Exit::Failed, "| 1 |"),
            (Exit::Usage, "| 2 |"),
            (Exit::File, "| 3 |"),
            (Exit::Device, "| 4 |"),
            (Exit::Remote, "| 5 |"),
        ] {
            assert_eq!(format!("| {} |", exit as u8), code);
            let row = guide
                .lines()
                .find(|l| l.starts_with(code))
                .unwrap_or_else(|| panic!("docs/src/getting-started.md has no row `{code}`"));
            let source = include_str!("error.rs");
            let ours = source
                .lines()
                .find_map(|l| l.strip_prefix("//! ").filter(|l| l.starts_with(code)))
                .unwrap_or_else(|| panic!("error.rs has no row `{code}`"));
            assert_eq!(
                row, ours,
                "docs/src/getting-started.md and error.rs disagree"
            );
        }
    }
}
