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
//! - A request hyper cannot parse (a malformed request line, header or
//!   `Content-Length`, more than 100 headers, a URI over 65,534 bytes)
//!   gets hyper's own answer, 400, 431 or 414 with an empty body, which
//!   [`ShapedParseErrors`] gives the error shape of `proto/rest.md`.
//!
//! On shutdown the listener stops accepting, every connection is told to
//! finish what it is answering and close, and [`serve`] returns once all
//! have (WebSocket sessions, handed off by their upgrade, end on the
//! server's cancellation token).

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
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
                .serve_connection(TokioIo::new(ShapedParseErrors::new(stream)), service)
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

/// A connection's stream whose writes of hyper's own answer to a request it
/// could not parse get the error shape: that answer is a head alone
/// (`connection: close`, `content-length: 0`, no `content-type`; the
/// application's errors all have a JSON body), written whole in one write
/// (hyper's buffer of it, one slice when vectored), and the last thing on
/// the connection. Only a write that starts a buffer is looked at (not the
/// rest of one written in part), and none once the connection switched
/// protocols (a WebSocket's frames are not HTTP).
pub struct ShapedParseErrors<S> {
    inner: S,
    /// The shaped answer being written, and how much of it is out.
    shaped: Option<(Vec<u8>, usize)>,
    /// Whether the next write starts a buffer of hyper's.
    at_start: bool,
    /// After a `101 Switching Protocols`: nothing more is looked at.
    switched: bool,
}

impl<S> ShapedParseErrors<S> {
    pub fn new(inner: S) -> Self {
        ShapedParseErrors {
            inner,
            shaped: None,
            at_start: true,
            switched: false,
        }
    }
}

impl<S: AsyncWrite + Unpin> ShapedParseErrors<S> {
    /// Writes out the shaped answer under way, if any: ready once it is
    /// all out (or failed; it is then dropped).
    fn poll_shaped(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((out, done)) = &mut self.shaped {
            if *done == out.len() {
                self.shaped = None;
                break;
            }
            match ready!(Pin::new(&mut self.inner).poll_write(cx, &out[*done..])) {
                Ok(0) => {
                    self.shaped = None;
                    return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
                }
                Ok(n) => *done += n,
                Err(e) => {
                    self.shaped = None;
                    return Poll::Ready(Err(e));
                }
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Whether `first` (the start of a write) is looked at, and if it is
    /// hyper's own answer, the shaped one set under way.
    fn take_shaped(&mut self, first: &[u8]) -> bool {
        if self.shaped.is_some() {
            return true;
        }
        if !self.at_start || self.switched {
            return false;
        }
        match shaped_parse_error(first) {
            Some(out) => {
                self.shaped = Some((out, 0));
                true
            }
            None => false,
        }
    }

    /// After a write of `first` (the start of what was offered, `offered`
    /// bytes in all) that took `n` bytes.
    fn wrote(&mut self, first: &[u8], n: usize, offered: usize) {
        if self.at_start && first.starts_with(b"HTTP/1.1 101 ") {
            self.switched = true;
        }
        self.at_start = n == offered;
    }
}

/// hyper's answer `head` to a request it could not parse, with a JSON
/// error body; `None` for anything else.
pub fn shaped_parse_error(head: &[u8]) -> Option<Vec<u8>> {
    let (code, message) = match head.get(..13)? {
        b"HTTP/1.1 400 " => (
            "malformed_request",
            "the request is not valid HTTP/1.1 (its request line, a header or its Content-Length)",
        ),
        b"HTTP/1.1 414 " => (
            "uri_too_long",
            "the request's URI is longer than 65,534 bytes",
        ),
        b"HTTP/1.1 431 " => (
            "headers_too_large",
            "the request has more than 100 headers, or its line and headers exceed 400 KB",
        ),
        _ => return None,
    };
    const EMPTY: &[u8] = b"\r\ncontent-length: 0\r\n";
    let find = |needle: &[u8]| head.windows(needle.len()).position(|w| w == needle);
    let ends_head = find(b"\r\n\r\n") == Some(head.len() - 4);
    if !ends_head || find(b"\r\nconnection: close\r\n").is_none() || find(b"content-type").is_some()
    {
        return None;
    }
    let at = find(EMPTY)?;
    let body = super::error::error_body(code, message).to_string();
    let mut out = Vec::with_capacity(head.len() + body.len() + 48);
    out.extend_from_slice(&head[..at]);
    out.extend_from_slice(
        format!(
            "\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
            body.len()
        )
        .as_bytes(),
    );
    out.extend_from_slice(&head[at + EMPTY.len()..]);
    out.extend_from_slice(body.as_bytes());
    Some(out)
}

impl<S: AsyncRead + Unpin> AsyncRead for ShapedParseErrors<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for ShapedParseErrors<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.take_shaped(buf) {
            // (Written on across calls: hyper offers the same head again.)
            ready!(this.poll_shaped(cx))?;
            return Poll::Ready(Ok(buf.len()));
        }
        let n = ready!(Pin::new(&mut this.inner).poll_write(cx, buf))?;
        this.wrote(buf, n, buf.len());
        Poll::Ready(Ok(n))
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let offered: usize = bufs.iter().map(|b| b.len()).sum();
        let mut full = bufs.iter().filter(|b| !b.is_empty());
        let first: &[u8] = full.next().map_or(&[], |b| b);
        // (hyper's own answer is one slice: its head.)
        if full.next().is_none() && this.take_shaped(first) {
            ready!(this.poll_shaped(cx))?;
            return Poll::Ready(Ok(offered));
        }
        let n = ready!(Pin::new(&mut this.inner).poll_write_vectored(cx, bufs))?;
        this.wrote(first, n, offered);
        Poll::Ready(Ok(n))
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_shaped(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_shaped(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::{shaped_parse_error, ShapedParseErrors};
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use tokio::io::{AsyncWrite, AsyncWriteExt};

    /// A sink that takes at most 7 bytes a write and is not ready every
    /// other time.
    #[derive(Default)]
    struct Trickle {
        out: Vec<u8>,
        calls: usize,
    }

    impl AsyncWrite for Trickle {
        fn poll_write(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<std::io::Result<usize>> {
            self.calls += 1;
            if self.calls.is_multiple_of(2) {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            let n = buf.len().min(7);
            self.out.extend_from_slice(&buf[..n]);
            Poll::Ready(Ok(n))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    const OWN: &[u8] =
        b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";

    /// Through a stream that takes a few bytes at a time: hyper's own
    /// answer goes out shaped, whole; the same bytes after a switch of
    /// protocols, or as the rest of a write taken in part, go as they are.
    #[tokio::test]
    async fn the_stream_shapes_only_hypers_own_answer_whole() {
        let mut s = ShapedParseErrors::new(Trickle::default());
        s.write_all(OWN).await.unwrap();
        s.flush().await.unwrap();
        assert_eq!(s.inner.out, shaped_parse_error(OWN).unwrap());
        let mut s = ShapedParseErrors::new(Trickle::default());
        let switch = b"HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\n\r\n";
        s.write_all(switch).await.unwrap();
        s.write_all(OWN).await.unwrap();
        assert_eq!(s.inner.out, [&switch[..], OWN].concat());
        // (write_all offers the rest of its buffer after each part.)
        let mut s = ShapedParseErrors::new(Trickle::default());
        let body = [&b"{\"a\":1}"[..], OWN].concat();
        s.write_all(&body).await.unwrap();
        assert_eq!(s.inner.out, body);
    }

    #[test]
    fn only_hypers_own_empty_answers_are_shaped() {
        let own = b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\ndate: Thu, 26 Nov 2026 15:58:23 GMT\r\n\r\n";
        let out = String::from_utf8(shaped_parse_error(own).unwrap()).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 431 "), "{head}");
        assert!(head.contains("\r\ncontent-type: application/json\r\n"));
        assert!(head.contains(&format!("\r\ncontent-length: {}\r\n", body.len())));
        assert!(
            head.ends_with("date: Thu, 26 Nov 2026 15:58:23 GMT"),
            "{head}"
        );
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["error"]["code"], "headers_too_large");
        // The application's own answers (a body, a type), a 404, part of a
        // head, and a body that happens to start like a head pass as they are.
        let ours = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
        let other = b"HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";
        let part = b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n";
        let more = b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n{}";
        for head in [&ours[..], other, part, more] {
            assert!(
                shaped_parse_error(head).is_none(),
                "{}",
                String::from_utf8_lossy(head)
            );
        }
    }
}
