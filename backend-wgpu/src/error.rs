//! wgpu backend errors, converted into `crucible_core::Error`.

/// What can fail on a wgpu adapter.
#[derive(Debug, thiserror::Error)]
pub enum WgpuError {
    /// No adapter could be used (none found, none matching the selection).
    #[error("{0}")]
    NoAdapter(String),
    /// The adapter refused to create a device.
    #[error("requesting a device from `{adapter}` failed: {source}")]
    RequestDevice {
        /// The adapter's name.
        adapter: String,
        /// wgpu's error.
        source: wgpu::RequestDeviceError,
    },
    /// The device was lost (driver reset, removal, destroyed); every later call fails.
    #[error("device lost: {0}")]
    DeviceLost(String),
    /// The driver ran out of memory (wgpu `OutOfMemory` error scope).
    #[error("out of device memory during {during}: {message}")]
    OutOfMemory {
        /// The operation that was running.
        during: String,
        /// wgpu's message.
        message: String,
    },
    /// wgpu rejected a call (`Validation` error scope): a bug in this backend.
    #[error("validation error during {during}: {message}")]
    Validation {
        /// The operation that was running.
        during: String,
        /// wgpu's message.
        message: String,
    },
    /// The driver failed internally (`Internal` error scope), e.g. compiling a shader.
    #[error("internal error during {during}: {message}")]
    Internal {
        /// The operation that was running.
        during: String,
        /// wgpu's message.
        message: String,
    },
    /// An error wgpu reported outside any error scope.
    #[error("uncaptured device error: {0}")]
    Uncaptured(String),
    /// Waiting for the device failed.
    #[error("waiting for the device failed: {0}")]
    Poll(#[from] wgpu::PollError),
    /// Mapping a readback buffer failed.
    #[error("mapping a readback buffer failed: {0}")]
    Map(String),
    /// The device returned a value that is not a valid field element (a shader bug).
    #[error("the device returned an invalid {what}")]
    Corrupt {
        /// What kind of value.
        what: &'static str,
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
    /// A buffer holds another kind of element than the operation needs.
    #[error("buffer holds {got:?} elements where {expected:?} are needed")]
    Kind {
        /// What the operation needs.
        expected: crucible_core::ElementKind,
        /// What the buffer holds.
        got: crucible_core::ElementKind,
    },
    /// The operation or size is beyond what this backend or adapter supports.
    #[error("{0}")]
    Unsupported(String),
}

impl From<WgpuError> for crucible_core::Error {
    fn from(e: WgpuError) -> Self {
        match e {
            WgpuError::NoAdapter(reason) => crucible_core::Error::Unavailable {
                backend: "wgpu".into(),
                reason,
            },
            WgpuError::Length { .. } | WgpuError::Kind { .. } => {
                crucible_core::Error::InvalidInput(e.to_string())
            }
            WgpuError::Unsupported(message) => crucible_core::Error::Unsupported(message),
            other => crucible_core::Error::device("wgpu", other),
        }
    }
}

/// Checks a length, as a `WgpuError`.
pub fn check_len(what: &'static str, expected: usize, got: usize) -> Result<(), WgpuError> {
    if expected == got {
        Ok(())
    } else {
        Err(WgpuError::Length {
            what,
            expected,
            got,
        })
    }
}
