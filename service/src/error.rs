//! Errors of the service, the worker and the queue.

/// Convenience alias.
pub type ServiceResult<T> = Result<T, ServiceError>;

/// What can go wrong outside a proof (a proof's own failure is a
/// [`crucible_core::Error`] carried in its job's outcome).
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// A prover error: loading or staging a key, a proof.
    #[error(transparent)]
    Prover(#[from] crucible_core::Error),
    /// The job queue's database.
    #[error("job queue: {0}")]
    Database(#[from] sqlx::Error),
    /// Applying the queue's schema migrations.
    #[error("job queue schema migration: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    /// Binding a socket or serving on it.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The gRPC transport.
    #[error("gRPC transport: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// A request or a stored value that does not make sense.
    #[error("{0}")]
    Invalid(String),
    /// A request beyond one of the operator's limits (the message names the limit).
    #[error("{0}")]
    Limit(String),
    /// Work called off before it finished (a key evicted while it loaded, a client
    /// that went away, the daemon shutting down); what it held is freed.
    #[error("{0}")]
    Cancelled(String),
}

impl ServiceError {
    /// An I/O error with what was being done.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        ServiceError::Io {
            what: what.into(),
            source,
        }
    }
}
