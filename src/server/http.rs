//! The HTTP/1 connections: hyper's connection builder configured for what a
//! public server meets, instead of `axum::serve`, which offers neither
//! setting below.
//!
//! - A connection must send a request's headers within the limits'
//!   `header_timeout` (30 s) of starting it: one that opened and never finished
//!   its request line or headers was kept for good (a review held 200 of
//!   them for 70 s, and 20,000 reached the process's file limit).
//! - A client may half-close its side after its request (`nc -N`,
//!   `shutdown(SHUT_WR)`) and still gets the answer: the request was applied
//!   and the connection closed with no answer.
//!
//! On shutdown the listener stops accepting, every connection is told to
//! finish what it is answering and close, and [`serve`] returns once all
//! have (WebSocket sessions, handed off by their upgrade, end on the
//! server's cancellation token).

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Serves `app` on `listener` until `stop` is cancelled, then waits for the
/// connections to finish.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    stop: CancellationToken,
    header_timeout: Duration,
) {
    let tracker = TaskTracker::new();
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // (Out of file descriptors, say: wait a little, go on.)
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = stop.cancelled() => break,
        };
        let service = TowerToHyperService::new(app.clone());
        let stop = stop.clone();
        tracker.spawn(async move {
            let mut builder = http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .half_close(true);
            let conn = builder
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = stop.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
    drop(listener);
    tracker.close();
    tracker.wait().await;
}
