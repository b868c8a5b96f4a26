//! CPU backend errors, converted into `crucible_core::Error`.

/// What can fail on the host.
#[derive(Debug, thiserror::Error)]
pub enum CpuError {
    /// The host could not provide the memory.
    #[error("host allocation of {bytes} bytes failed: {source}")]
    Alloc {
        /// Bytes asked for.
        bytes: u64,
        /// The allocator's error.
        source: std::collections::TryReserveError,
    },
    /// A buffer's length does not match the operation.
    #[error("{what}: expected {expected} elements, got {got}")]
    Length {
        /// Which operand.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        got: usize,
    },
}

impl From<CpuError> for crucible_core::Error {
    fn from(e: CpuError) -> Self {
        match e {
            CpuError::Alloc { .. } => crucible_core::Error::device("cpu", e),
            CpuError::Length { .. } => crucible_core::Error::InvalidInput(e.to_string()),
        }
    }
}

/// Checks a length, as a `CpuError`.
pub fn check_len(what: &'static str, expected: usize, got: usize) -> Result<(), CpuError> {
    if expected == got {
        Ok(())
    } else {
        Err(CpuError::Length {
            what,
            expected,
            got,
        })
    }
}
