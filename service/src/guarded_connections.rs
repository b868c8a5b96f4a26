//! The daemon's accepted TCP connections, each within the [`ConnectionCaps`] and
//! closed once it has sent nothing for the idle timeout. A live client is never idle
//! that long: the server pings it over HTTP/2 at a third of the timeout, and its
//! answers are reads. A client that connects (or completes its TLS handshake) and then
//! sends nothing, or stops answering, is closed.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};
use tokio_stream::Stream;
use tonic::transport::server::{Connected, TcpIncoming};

use crate::connection_caps::{ConnectionCaps, ConnectionSlot};

/// Accepted connections in; those within the caps out, each closing when idle.
pub struct GuardedIncoming {
    tcp: TcpIncoming,
    caps: ConnectionCaps,
    idle_timeout: Duration,
}

impl GuardedIncoming {
    /// Every connection `tcp` accepts, held to `caps` and `idle_timeout`.
    pub fn new(tcp: TcpIncoming, caps: ConnectionCaps, idle_timeout: Duration) -> Self {
        GuardedIncoming {
            tcp,
            caps,
            idle_timeout,
        }
    }
}

impl Stream for GuardedIncoming {
    type Item = io::Result<GuardedStream>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            let stream = match Pin::new(&mut this.tcp).poll_next(cx) {
                Poll::Ready(Some(Ok(stream))) => stream,
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            };
            let Ok(peer) = stream.peer_addr() else {
                continue; // already gone
            };
            match this.caps.take(peer.ip()) {
                Ok(slot) => {
                    return Poll::Ready(Some(Ok(GuardedStream::new(
                        stream,
                        slot,
                        this.idle_timeout,
                    ))))
                }
                // Dropping the stream closes it.
                Err(why) => tracing::warn!(%peer, why, "connection refused"),
            }
        }
    }
}

/// A connection that counts against the caps while open and fails its reads once it
/// has read nothing for the idle timeout (which closes it).
pub struct GuardedStream {
    io: TcpStream,
    slot: ConnectionSlot,
    idle_timeout: Duration,
    idle: Pin<Box<Sleep>>,
}

impl GuardedStream {
    fn new(io: TcpStream, slot: ConnectionSlot, idle_timeout: Duration) -> Self {
        GuardedStream {
            io,
            slot,
            idle_timeout,
            idle: Box::pin(tokio::time::sleep(idle_timeout)),
        }
    }
}

impl GuardedStream {
    /// The peer's address.
    pub fn peer(&self) -> std::net::IpAddr {
        self.slot.peer()
    }
}

impl Connected for GuardedStream {
    type ConnectInfo = <TcpStream as Connected>::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.io.connect_info()
    }
}

impl AsyncRead for GuardedStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) if buf.filled().len() > before => {
                let next = Instant::now() + this.idle_timeout;
                this.idle.as_mut().reset(next);
                Poll::Ready(Ok(()))
            }
            Poll::Pending if this.idle.as_mut().poll(cx).is_ready() => {
                tracing::warn!(
                    peer = %this.slot.peer(),
                    seconds = this.idle_timeout.as_secs_f64(),
                    "connection idle; closed"
                );
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the connection sent nothing for the idle timeout",
                )))
            }
            other => other,
        }
    }
}

impl AsyncWrite for GuardedStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}
