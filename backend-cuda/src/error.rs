//! CUDA backend errors, converted into `crucible_core::Error`.

use cudarc::driver::DriverError;
use cudarc::nvrtc::CompileError;

/// What can fail on a CUDA device.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    /// A driver call failed (out of memory, launch failure, device lost...).
    #[error("CUDA driver: {0}")]
    Driver(#[from] DriverError),
    /// NVRTC could not compile the kernels.
    #[error("NVRTC could not compile the kernels: {0:?}")]
    Compile(#[from] CompileError),
    /// NVRTC compiled but reported a log (only kept on failure).
    #[error("NVRTC log: {0}")]
    CompileLog(String),
    /// A launch was asked for sizes a kernel cannot handle.
    #[error("{0}")]
    Size(String),
}

impl From<CudaError> for crucible_core::Error {
    fn from(e: CudaError) -> Self {
        match e {
            CudaError::Size(m) => crucible_core::Error::Unsupported(m),
            other => crucible_core::Error::device("cuda", other),
        }
    }
}

/// Result with a [`CudaError`].
pub type CudaResult<T> = Result<T, CudaError>;
