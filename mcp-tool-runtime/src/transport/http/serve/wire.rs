//! One HTTP/1.1 connection. Requests of the common shape — an HTTP/1.1 head and a
//! `Content-Length` body that fit the bounds — are read, answered and written here, with one
//! read buffer and one write buffer for the connection's life. The first request of any other
//! shape hands the connection, with the bytes read so far, to hyper, which serves the rest of
//! it as it served every request before.
//!
//! A connection here keeps hyper's behaviour where a client can see it: each head has its
//! deadline (an idle connection is closed at it, a half-sent head answered 408), a body that
//! stops coming is answered 408, an answer's body is framed by its length or in chunks, a
//! client that closes its side while its request is answered ends that answer, requests
//! sent ahead (pipelined) are answered in order, and a graceful shutdown closes idle
//! connections at once and the others after their answer.

mod answer;
mod request;

use std::convert::Infallible;
use std::future::{Future, poll_fn};
use std::io;
use std::pin::{Pin, pin};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::body::{Bytes, HttpBody};
use axum::http::{HeaderValue, Method, Request, StatusCode, header};
use axum::response::Response;
use bytes::Buf as _;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _, ReadBuf};
use tokio::sync::watch;
use tokio::time::{Instant, Sleep};

use crate::protocol::code;
use crate::transport::http::refusal::rpc_error;
use crate::transport::http::streams::sse;

use answer::Framing;
use request::NotYet;
pub(crate) use request::Whole;

/// What a connection is bounded by.
#[derive(Clone, Copy)]
pub(super) struct Bounds {
    /// How long a request's head may take, from when the connection waits for it.
    pub(super) header_timeout: Duration,
    /// How long its body may take, from its head.
    pub(super) body_timeout: Duration,
    /// The longest body read here (a longer one is hyper's, streamed to its handler).
    pub(super) max_body: usize,
}

/// The read buffer's size to begin with, and to come back to.
const BUFFER: usize = 8 * 1024;

/// The most bytes read ahead of the request being answered (requests sent before their
/// turn): past it the connection is not read until they are answered.
const READ_AHEAD: usize = 64 * 1024;

/// The most of an answer held before it is written.
const WRITE_AHEAD: usize = 64 * 1024;

/// Serves `io`: requests of the common shape by `service`, then, from the first request of
/// another shape, by `hand_off` (hyper), given the connection and what was read of it.
/// Between two requests, with nothing of the next one read, `moving` is asked whether the
/// connection is to be served elsewhere: then the connection is given back, with the answer
/// `moving` gave (`Some`); `None` when it is over.
pub(super) async fn serve<IO, S, H, HF, T>(
    io: IO,
    service: S,
    hand_off: H,
    bounds: Bounds,
    stop: watch::Receiver<bool>,
    mut moving: impl FnMut() -> Option<T>,
) -> Option<(IO, T)>
where
    IO: AsyncRead + AsyncWrite + Unpin,
    S: hyper::service::Service<Request<Whole>, Response = Response, Error = Infallible>,
    H: FnOnce(Rewind<IO>) -> HF,
    HF: Future<Output = ()>,
{
    let mut conn = Conn {
        io,
        buf: vec![0; BUFFER],
        start: 0,
        end: 0,
        out: Vec::with_capacity(BUFFER),
        alarm: None,
        stopping: Box::pin(stopped(stop.clone())),
        stopped: false,
    };
    loop {
        let head_deadline = Instant::now() + bounds.header_timeout;
        let mut body_deadline = None;
        let (request, close) = loop {
            let received = &conn.buf[conn.start..conn.end];
            let read = match received.is_empty() {
                true => Err(NotYet::More {
                    wants: 1,
                    head_whole: false,
                }),
                false => request::read(received, bounds.max_body),
            };
            match read {
                Ok((request, len, close)) => {
                    conn.start += len;
                    break (request, close);
                }
                Err(NotYet::HandOff) => {
                    let read = Bytes::copy_from_slice(&conn.buf[conn.start..conn.end]);
                    hand_off(Rewind { io: conn.io, read }).await;
                    return None;
                }
                Err(NotYet::More { wants, head_whole }) => {
                    let deadline = match head_whole {
                        false => head_deadline,
                        true => *body_deadline
                            .get_or_insert_with(|| Instant::now() + bounds.body_timeout),
                    };
                    match conn.fill(wants, deadline).await {
                        Fill::Read => {}
                        Fill::Closed | Fill::Stopped => return None,
                        Fill::Late => {
                            conn.late(head_whole, bounds.body_timeout).await;
                            return None;
                        }
                    }
                }
            }
        };
        let method = request.method().clone();
        let work = pin!(service.call(request));
        let Some(response) = conn.watching(work).await else {
            // The client closed its side (or the connection broke): nobody to answer.
            return None;
        };
        let Ok(response) = response;
        let close = close || conn.stopped || *stop.borrow();
        if !conn.answer(response, &method, close).await || close {
            let _ = conn.io.shutdown().await;
            return None;
        }
        if conn.start == conn.end
            && let Some(to) = moving()
        {
            return Some((conn.io, to));
        }
    }
}

/// Completes once the server stops (or can no longer say it does).
async fn stopped(mut stop: watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// How waiting for a request's bytes ended.
enum Fill {
    Read,
    /// The client closed the connection (or it broke).
    Closed,
    /// The deadline passed.
    Late,
    /// The server stops, and nothing of a request had come.
    Stopped,
}

/// A connection being served here.
struct Conn<IO> {
    io: IO,
    /// What was read: the unanswered part is `buf[start..end]`.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// An answer being written.
    out: Vec<u8>,
    /// The connection's one timer, made when first needed: it stays set for an earlier
    /// deadline and is moved when it rings before the one awaited, so a request that comes
    /// in time costs a look at it, not a timer set and taken out.
    alarm: Option<Pin<Box<Sleep>>>,
    /// Completes once the server stops.
    stopping: Pin<Box<dyn Future<Output = ()> + Send>>,
    stopped: bool,
}

impl<IO: AsyncRead + AsyncWrite + Unpin> Conn<IO> {
    /// Room after `end` for `wants` bytes from `start` (the buffer moved or grown), or for
    /// more at all when `wants` fits already; `false` when the buffer is as large as `most`.
    fn room(&mut self, wants: usize, most: usize) -> bool {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            if self.buf.len() > 4 * BUFFER {
                self.buf = vec![0; BUFFER];
            }
        }
        let wants = wants.max(self.end - self.start + 1);
        if self.start + wants <= self.buf.len() {
            return true;
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if wants > self.buf.len() {
            if self.buf.len() >= most {
                return false;
            }
            self.buf
                .resize(wants.max(2 * self.buf.len()).min(most.max(wants)), 0);
        }
        true
    }

    /// Reads into the buffer; `None` while nothing came, `Some(false)` when the client
    /// closed its side or the connection broke.
    fn poll_more(&mut self, cx: &mut Context<'_>) -> Poll<bool> {
        let mut to = ReadBuf::new(&mut self.buf[self.end..]);
        match ready!(Pin::new(&mut self.io).poll_read(cx, &mut to)) {
            Ok(()) if !to.filled().is_empty() => {
                self.end += to.filled().len();
                Poll::Ready(true)
            }
            Ok(()) | Err(_) => Poll::Ready(false),
        }
    }

    /// Waits for at least `wants` bytes in all (more when they come at once), until `deadline`.
    async fn fill(&mut self, wants: usize, deadline: Instant) -> Fill {
        // `wants` is bounded by the head's and the body's bounds.
        self.room(wants, usize::MAX);
        poll_fn(|cx| {
            // A body that comes in parts is read whole before the request is read again.
            loop {
                match self.poll_more(cx) {
                    Poll::Ready(false) => return Poll::Ready(Fill::Closed),
                    Poll::Ready(true) if self.end - self.start >= wants => {
                        return Poll::Ready(Fill::Read);
                    }
                    Poll::Ready(true) => {}
                    Poll::Pending => break,
                }
            }
            if !self.stopped && self.stopping.as_mut().poll(cx).is_ready() {
                self.stopped = true;
            }
            if self.stopped && self.start == self.end {
                return Poll::Ready(Fill::Stopped);
            }
            let alarm = self
                .alarm
                .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
            loop {
                if alarm.deadline() > deadline {
                    alarm.as_mut().reset(deadline);
                }
                if alarm.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                if Instant::now() >= deadline {
                    return Poll::Ready(Fill::Late);
                }
                // Rung for an earlier request's deadline: moved to this one's.
                alarm.as_mut().reset(deadline);
            }
        })
        .await
    }

    /// Polls `work` to its end while reading what the client sends meanwhile; `None` when
    /// the client closed its side or the connection broke first.
    async fn watching<F: Future>(&mut self, work: F) -> Option<F::Output> {
        let mut work = pin!(work);
        poll_fn(|cx| {
            if let Poll::Ready(done) = work.as_mut().poll(cx) {
                return Poll::Ready(Some(done));
            }
            // A request that came ahead of its turn is kept; a full buffer is not read.
            while self.room(0, READ_AHEAD) {
                match self.poll_more(cx) {
                    Poll::Ready(true) => continue,
                    Poll::Ready(false) => return Poll::Ready(None),
                    Poll::Pending => break,
                }
            }
            Poll::Pending
        })
        .await
    }

    /// Writes `response`; `false` when the connection is to end (the client went, or the
    /// body broke off or disagreed with its length).
    async fn answer(&mut self, response: Response, method: &Method, close: bool) -> bool {
        self.out.clear();
        let (parts, body) = response.into_parts();
        let length = body.size_hint().exact();
        let (framing, closes) = answer::head(&parts, length, method, close, &mut self.out);
        // The map's allocation goes to the next request read on this thread.
        sse::recycle(parts.headers);
        let mut body = pin!(body);
        let mut left = match framing {
            Framing::Length(n) => n,
            Framing::None | Framing::Chunked => 0,
        };
        let whole = loop {
            if framing == Framing::None {
                break true;
            }
            let frame = match poll_fn(|cx| Poll::Ready(body.as_mut().poll_frame(cx))).await {
                Poll::Ready(frame) => frame,
                Poll::Pending => {
                    // What is ready goes out before the wait (an event stream's events).
                    if !self.flush().await {
                        return false;
                    }
                    match self
                        .watching(poll_fn(|cx| body.as_mut().poll_frame(cx)))
                        .await
                    {
                        Some(frame) => frame,
                        None => return false,
                    }
                }
            };
            let data = match frame {
                None => {
                    if framing == Framing::Chunked {
                        self.out.extend_from_slice(b"0\r\n\r\n");
                    }
                    break left == 0;
                }
                Some(Err(e)) => {
                    tracing::debug!(error = %e, "an answer's body broke off: connection closed");
                    break false;
                }
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) if !data.is_empty() => data,
                    // Trailers, or nothing: not sent.
                    _ => continue,
                },
            };
            let data = match framing {
                Framing::Chunked => {
                    answer::chunk_size(data.len(), &mut self.out);
                    data
                }
                _ if data.len() as u64 <= left => {
                    left -= data.len() as u64;
                    data
                }
                _ => {
                    tracing::debug!(
                        "an answer's body is longer than its length: connection closed"
                    );
                    self.out.extend_from_slice(&data[..left as usize]);
                    break false;
                }
            };
            if data.len() < WRITE_AHEAD {
                self.out.extend_from_slice(&data);
            } else {
                // A large part is written from where it is, not copied.
                if !self.flush().await || self.io.write_all(&data).await.is_err() {
                    return false;
                }
            }
            if framing == Framing::Chunked {
                self.out.extend_from_slice(b"\r\n");
            }
            if self.out.len() >= WRITE_AHEAD && !self.flush().await {
                return false;
            }
        };
        self.flush().await && whole && !closes
    }

    /// Writes what is held; `false` when the connection broke.
    async fn flush(&mut self) -> bool {
        if self.out.is_empty() {
            return true;
        }
        let wrote = self.io.write_all(&self.out).await.is_ok();
        self.out.clear();
        if self.out.capacity() > 2 * WRITE_AHEAD {
            self.out.shrink_to(BUFFER);
        }
        wrote
    }

    /// A request that did not come whole by its deadline: a half-sent one is answered 408
    /// (a body's as its endpoint says it), an idle connection just closed.
    async fn late(mut self, head_whole: bool, body_timeout: Duration) {
        if self.start == self.end {
            return;
        }
        let response = if head_whole {
            tracing::debug!(
                timeout_ms = body_timeout.as_millis() as u64,
                "a request body did not arrive in time: 408, connection closed"
            );
            rpc_error(
                StatusCode::REQUEST_TIMEOUT,
                code::INVALID_REQUEST,
                &format!(
                    "Request Timeout: the body did not arrive within {} s",
                    body_timeout.as_secs()
                ),
            )
        } else {
            let mut response = Response::new(axum::body::Body::empty());
            *response.status_mut() = StatusCode::REQUEST_TIMEOUT;
            response
        };
        let mut response = response;
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        self.answer(response, &Method::POST, true).await;
        let _ = self.io.shutdown().await;
    }
}

/// A connection handed to hyper: what was read of it comes first.
pub(super) struct Rewind<IO> {
    io: IO,
    read: Bytes,
}

impl<IO: AsyncRead + Unpin> AsyncRead for Rewind<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        to: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.read.is_empty() {
            return Pin::new(&mut self.io).poll_read(cx, to);
        }
        let n = self.read.len().min(to.remaining());
        to.put_slice(&self.read[..n]);
        self.read.advance(n);
        Poll::Ready(Ok(()))
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Rewind<IO> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, data)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, data)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests;
