//! The daemon's TLS connections, each handshake bounded in time: a client that opens a
//! connection and never completes its handshake (a slow or silent one) is closed after
//! the handshake timeout instead of holding a socket and a task for good. Handshakes
//! run side by side, so a slow one delays no other; the gRPC server gets only
//! connections whose handshake completed.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::task::JoinSet;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;
use tokio_stream::Stream;

use crate::guarded_connections::{GuardedIncoming, GuardedStream};

/// Accepted TCP connections in, connections with a completed TLS handshake out.
pub struct TlsHandshakes {
    tcp: Option<GuardedIncoming>,
    acceptor: TlsAcceptor,
    timeout: Duration,
    pending: JoinSet<Option<TlsStream<GuardedStream>>>,
}

impl TlsHandshakes {
    /// Handshakes on every connection `tcp` accepts, each given `timeout`.
    pub fn new(tcp: GuardedIncoming, acceptor: TlsAcceptor, timeout: Duration) -> Self {
        TlsHandshakes {
            tcp: Some(tcp),
            acceptor,
            timeout,
            pending: JoinSet::new(),
        }
    }

    fn start(&mut self, stream: GuardedStream) {
        let (acceptor, timeout) = (self.acceptor.clone(), self.timeout);
        self.pending.spawn(async move {
            let peer = stream.peer();
            match tokio::time::timeout(timeout, acceptor.accept(stream)).await {
                Ok(Ok(tls)) => Some(tls),
                Ok(Err(e)) => {
                    tracing::debug!(%peer, error = %e, "TLS handshake failed");
                    None
                }
                Err(_) => {
                    tracing::warn!(
                        %peer,
                        seconds = timeout.as_secs_f64(),
                        "TLS handshake timed out; connection closed"
                    );
                    None
                }
            }
        });
    }
}

impl Stream for TlsHandshakes {
    type Item = io::Result<TlsStream<GuardedStream>>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        // Every connection the listener has ready starts its handshake.
        while let Some(tcp) = this.tcp.as_mut() {
            match Pin::new(tcp).poll_next(cx) {
                Poll::Ready(Some(Ok(stream))) => this.start(stream),
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(None) => this.tcp = None,
                Poll::Pending => break,
            }
        }
        // Then a completed handshake, if any; failed and timed-out ones are dropped.
        loop {
            match this.pending.poll_join_next(cx) {
                Poll::Ready(Some(Ok(Some(tls)))) => return Poll::Ready(Some(Ok(tls))),
                Poll::Ready(Some(_)) => continue,
                Poll::Ready(None) if this.tcp.is_none() => return Poll::Ready(None),
                Poll::Ready(None) | Poll::Pending => return Poll::Pending,
            }
        }
    }
}
