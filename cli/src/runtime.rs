//! The tokio runtime and the pieces the long-running commands share: binding a
//! socket, waiting for SIGINT or SIGTERM.

use std::net::SocketAddr;

use tokio::net::TcpListener;

use crate::error::CliError;

/// A multi-threaded tokio runtime.
pub fn build() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::remote(format!("cannot start the async runtime: {e}")))
}

/// Binds `addr`.
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, CliError> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| CliError::remote(format!("cannot listen on {addr}: {e}")))
}

/// The address a listener got (its port when asked for port 0).
pub fn local_addr(listener: &TcpListener) -> Result<SocketAddr, CliError> {
    listener
        .local_addr()
        .map_err(|e| CliError::remote(format!("cannot read the listening address: {e}")))
}

/// Completes on the first SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    match (term, int) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
                _ = int.recv() => tracing::info!("SIGINT: shutting down"),
            }
        }
        _ => {
            tracing::warn!("cannot watch SIGTERM; stopping on Ctrl-C only");
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
