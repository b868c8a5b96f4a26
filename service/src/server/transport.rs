//! The daemon's connections: TCP or TLS, capped and closed when idle
//! (`guarded_connections`), the listener closed at the stop signal, open
//! calls drained, then every key evicted.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_stream::Stream;
use tonic::transport::server::TcpIncoming;

use super::{ProverService, ServeConfig};
use crate::guarded_connections::GuardedIncoming;
use crate::metrics::Metrics;
use crate::proto::prover_server::ProverServer;
use crate::tls_handshakes::TlsHandshakes;
use crate::{metrics_http, ServiceError, ServiceResult};

/// The server's connections until the stop signal, which closes the listener at
/// once (the server stops polling it but would keep it open through the drain), so
/// a new connection is refused instead of waiting.
struct Closing<S>(Arc<Mutex<Option<S>>>);

impl<S> Clone for Closing<S> {
    fn clone(&self) -> Self {
        Closing(Arc::clone(&self.0))
    }
}

impl<S> Closing<S> {
    fn new(incoming: S) -> Self {
        Closing(Arc::new(Mutex::new(Some(incoming))))
    }

    fn close(&self) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}

impl<S: Stream + Unpin> Stream for Closing<S> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.0.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            Some(incoming) => Pin::new(incoming).poll_next(cx),
            None => Poll::Ready(None),
        }
    }
}

/// The server on `incoming` until `shutdown`, when the listener closes (new
/// connections are refused at once) and `stopping` says so.
fn serving<S, IO, E>(
    api: ProverServer<ProverService>,
    idle_timeout: Duration,
    incoming: S,
    shutdown: impl Future<Output = ()> + Send + 'static,
    stopping: tokio::sync::watch::Sender<bool>,
) -> Pin<Box<dyn Future<Output = Result<(), tonic::transport::Error>> + Send>>
where
    S: Stream<Item = Result<IO, E>> + Unpin + Send + 'static,
    IO: tokio::io::AsyncRead
        + tokio::io::AsyncWrite
        + tonic::transport::server::Connected
        + Unpin
        + Send
        + 'static,
    IO::ConnectInfo: Clone + Send + Sync + 'static,
    E: Into<Box<dyn std::error::Error + Send + Sync>> + 'static,
{
    let incoming = Closing::new(incoming);
    let listener = incoming.clone();
    let signal = async move {
        shutdown.await;
        listener.close();
        let _ = stopping.send(true);
    };
    // Pings at a third of the idle timeout keep a live client's connection read from
    // (see `guarded_connections`); one unanswered for another third closes it.
    let ping = idle_timeout / 3;
    Box::pin(
        tonic::transport::Server::builder()
            .http2_keepalive_interval(Some(ping))
            .http2_keepalive_timeout(Some(ping))
            .add_service(api)
            .serve_with_incoming_shutdown(incoming, signal),
    )
}

/// Serves the API on `grpc` (and metrics on `metrics_listener`) until `shutdown`
/// completes, then evicts every key: queued jobs fail, in-flight proofs finish, every
/// device's budget is returned.
pub async fn serve(
    config: ServeConfig,
    grpc: TcpListener,
    metrics_listener: Option<TcpListener>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> ServiceResult<()> {
    let metrics = Metrics::new();
    let max_message_bytes = config.max_message_bytes;
    let service = ProverService::new(config, Arc::clone(&metrics));
    let exporter = metrics_listener.map(|listener| {
        let state = Arc::clone(&service.state);
        metrics_http::spawn(
            listener,
            Arc::clone(&metrics),
            Arc::new(move || state.refresh_metrics()),
        )
    });
    let drain = service.state.config.drain_timeout;
    let (stopping_tx, stopping) = tokio::sync::watch::channel(false);
    let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    let api = ProverServer::new(service.clone()).max_decoding_message_size(max_message_bytes);
    let connections = &service.state.config.connections;
    let idle = connections.idle_timeout;
    let tcp = GuardedIncoming::new(TcpIncoming::from(grpc), connections.caps.clone(), idle);
    // The listener closes with the signal: new connections are refused at once.
    let mut server = match &service.state.config.tls {
        Some(tls) => serving(
            api,
            idle,
            TlsHandshakes::new(tcp, tls.acceptor()?, tls.handshake_timeout),
            shutdown,
            stopping_tx,
        ),
        None => serving(api, idle, tcp, shutdown, stopping_tx),
    };
    // Open calls get the drain timeout, then the server and its connections are
    // dropped.
    let result = tokio::select! {
        result = &mut server => result,
        () = async {
            stopped(stopping).await;
            tokio::time::sleep(drain).await;
        } => {
            tracing::warn!(seconds = drain.as_secs_f64(), "drain timeout: closing the open calls");
            Ok(())
        }
    };
    // Dropping the server closes the connections still open.
    drop(server);
    tracing::info!("shutting down: evicting every key");
    if tokio::time::timeout(drain, service.evict_all())
        .await
        .is_err()
    {
        tracing::warn!("in-flight proofs did not finish within the drain timeout");
    }
    if let Some(exporter) = exporter {
        exporter.abort();
    }
    result.map_err(ServiceError::from)
}
