//! The accept loop of [`ServerHandle::serve_http`](crate::server::ServerHandle::serve_http):
//! HTTP/1.1 connections served by hyper with a deadline for each request's head (which also
//! closes a kept-alive connection idle between requests), bounded in number; then a graceful
//! shutdown.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};

use super::endpoint::Peer;

/// What the accept loop needs from the configuration.
pub(super) struct Bounds {
    pub(super) header_timeout: Duration,
    pub(super) max_connections: usize,
}

/// Serves `router` on `listener` until `stop` says so; then stops accepting and waits (at most
/// `grace`) for the connections to finish their requests.
pub(super) async fn accept_loop(
    listener: TcpListener,
    router: Router,
    bounds: Bounds,
    mut stop: watch::Receiver<bool>,
    grace: Duration,
) -> io::Result<()> {
    let mut http1 = hyper::server::conn::http1::Builder::new();
    http1
        .timer(TokioTimer::new())
        .header_read_timeout(bounds.header_timeout)
        .keep_alive(true);
    let graceful = GracefulShutdown::new();
    let slots = Arc::new(Semaphore::new(bounds.max_connections.max(1)));
    let mut full_said = false;
    loop {
        let permit = match slots.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                if !full_said {
                    tracing::warn!(
                        max = bounds.max_connections,
                        "as many connections as allowed: new ones wait until one closes"
                    );
                    full_said = true;
                }
                tokio::select! {
                    p = slots.clone().acquire_owned() => match p {
                        Ok(p) => p,
                        Err(_) => break,
                    },
                    _ = stop.wait_for(|s| *s) => break,
                }
            }
        };
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = stop.wait_for(|s| *s) => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors, or a connection reset before it was accepted: wait a
                // moment rather than spin.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        full_said = false;
        // Responses (SSE events especially) go out in several writes: without TCP_NODELAY,
        // Nagle's algorithm holds each one back for about 40 ms.
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
        let io = TokioIo::new(stream);
        // Each request knows the address it comes from (per-client shares).
        let service = TowerToHyperService::new(router.clone().layer(axum::Extension(Peer(peer))));
        let connection = http1.serve_connection(io, service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    if tokio::time::timeout(grace, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after the shutdown grace period were dropped");
    }
    Ok(())
}
