//! The error every command returns: printed as `error: ...`, exit status 1.

/// A failure reported as `error: ...` with exit status 1.
#[derive(Debug)]
pub struct CliError(pub String);

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<crucible_core::Error> for CliError {
    fn from(e: crucible_core::Error) -> Self {
        CliError(e.to_string())
    }
}

impl From<String> for CliError {
    fn from(message: String) -> Self {
        CliError(message)
    }
}
