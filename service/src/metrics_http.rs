//! The HTTP endpoint Prometheus scrapes: `GET /metrics` in the text format.

use std::convert::Infallible;
use std::sync::Arc;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::metrics::Metrics;

/// Serves `metrics` on `listener` until the returned task is aborted; `refresh` runs
/// before each scrape (to set gauges read from the devices).
pub fn spawn(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    refresh: Arc<dyn Fn() + Send + Sync>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!("metrics endpoint: accept failed: {e}");
                    continue;
                }
            };
            let metrics = Arc::clone(&metrics);
            let refresh = Arc::clone(&refresh);
            tokio::spawn(async move {
                let service = service_fn(move |request: Request<Incoming>| {
                    let response = if request.uri().path() == "/metrics" {
                        refresh();
                        Response::builder()
                            .header("content-type", "text/plain; version=0.0.4")
                            .body(Full::new(Bytes::from(metrics.encode())))
                    } else {
                        Response::builder()
                            .status(StatusCode::NOT_FOUND)
                            .body(Full::new(Bytes::from_static(b"metrics are at /metrics\n")))
                    };
                    async move {
                        Ok::<_, Infallible>(response.unwrap_or_else(|_| {
                            Response::new(Full::new(Bytes::from_static(b"bad response\n")))
                        }))
                    }
                });
                if let Err(e) = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await
                {
                    tracing::debug!("metrics endpoint: connection ended: {e}");
                }
            });
        }
    })
}
