//! Answers as SSE streams: a request's answer when the call sends messages of its own before
//! its result (or always, with `sse_responses`), and the GET stream of messages that belong to
//! no request.

use std::cell::Cell;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use tokio::sync::{mpsc, watch};

use crate::protocol::{RpcError, code, jsonrpc};
use crate::server::core::session::Outgoing;

/// How often a long stream (a listen stream, a call that takes its time) carries a comment,
/// so that proxies keep it open and a client that left is noticed.
pub(crate) const KEEP_ALIVE: Duration = Duration::from_secs(25);

/// The messages of a request kept until its handler takes them: most often its response
/// alone, kept without an allocation of its own.
#[derive(Default)]
pub(crate) struct Held {
    first: Option<Outgoing>,
    rest: Vec<Outgoing>,
}

impl Held {
    /// Keeps `message` after those kept before.
    pub(crate) fn push(&mut self, message: Outgoing) {
        if self.first.is_none() {
            self.first = Some(message);
        } else {
            self.rest.push(message);
        }
    }

    /// Whether the last message kept is the response.
    pub(crate) fn ends_with_response(&self) -> bool {
        self.rest
            .last()
            .or(self.first.as_ref())
            .is_some_and(|m| m.is_response)
    }
}

/// The messages of one request's answer: those that came before its handler took them
/// (often the response itself: then there is no channel), then whatever its channel brings.
pub(crate) struct Messages {
    first: Option<Outgoing>,
    held: std::vec::IntoIter<Outgoing>,
    rx: Option<mpsc::UnboundedReceiver<Outgoing>>,
}

impl Messages {
    /// `held`, then the messages `rx` brings (none without it).
    pub(crate) fn new(held: Held, rx: Option<mpsc::UnboundedReceiver<Outgoing>>) -> Self {
        Messages {
            first: held.first,
            held: held.rest.into_iter(),
            rx,
        }
    }

    /// The next message; `None` once they ended.
    pub(crate) async fn recv(&mut self) -> Option<Outgoing> {
        if let Some(message) = self.first.take() {
            return Some(message);
        }
        if let Some(message) = self.held.next() {
            return Some(message);
        }
        match &mut self.rx {
            Some(rx) => rx.recv().await,
            None => None,
        }
    }
}

impl From<mpsc::UnboundedReceiver<Outgoing>> for Messages {
    fn from(rx: mpsc::UnboundedReceiver<Outgoing>) -> Self {
        Messages::new(Held::default(), Some(rx))
    }
}

/// Answers one request (`request`: its id, for the error when its session ends first): JSON
/// when its response is the first message for it (unless `sse`, and always when `status`
/// gives the response text a status other than 200); otherwise an SSE stream of everything
/// that belongs to it, ending with the response.
pub(crate) async fn respond(
    mut rx: Messages,
    sse: bool,
    status: impl FnOnce(&Outgoing) -> StatusCode,
    request: Option<&str>,
) -> Response {
    respond_as(rx.recv().await, rx, sse, status, request).await
}

/// [`respond`] for a client that does not accept `text/event-stream`: the messages before the
/// response (progress, logs) are dropped, and the response is JSON.
pub(crate) async fn respond_json_only(
    mut rx: Messages,
    status: impl FnOnce(&Outgoing) -> StatusCode,
    request: Option<&str>,
) -> Response {
    let mut first = rx.recv().await;
    while first.as_ref().is_some_and(|m| !m.is_response) {
        first = rx.recv().await;
    }
    respond_as(first, rx, false, status, request).await
}

pub(crate) async fn respond_as(
    first: Option<Outgoing>,
    rx: Messages,
    sse: bool,
    status: impl FnOnce(&Outgoing) -> StatusCode,
    request: Option<&str>,
) -> Response {
    let Some(first) = first else {
        // The stream ended without a word: the session went away (deleted, expired) while the
        // request ran. The client waits for an answer: it gets an error, not silence.
        if let Some(id) = request {
            let e = RpcError::new(
                code::INTERNAL_ERROR,
                "the session ended before the request was answered",
            );
            return json_response(StatusCode::NOT_FOUND, jsonrpc::error_response(id, &e));
        }
        return StatusCode::ACCEPTED.into_response();
    };
    if first.is_response {
        if first.text.is_empty() {
            // Cancelled: the client expects no response.
            return StatusCode::ACCEPTED.into_response();
        }
        // An error with a status of its own (2026-07-28) is JSON even with `sse`: the status
        // is part of the answer.
        let status = status(&first);
        if !sse || status != StatusCode::OK {
            return json_response(status, first.text);
        }
    }
    // The error that ends the stream if the session goes before the response.
    let ended = request.map(|id| {
        jsonrpc::error_response(
            id,
            &RpcError::new(
                code::INTERNAL_ERROR,
                "the session ended before the request was answered",
            ),
        )
    });
    let stream = futures_util::stream::unfold((Some(first), Some(rx)), move |(pending, rx)| {
        let ended = ended.clone();
        async move {
            let mut rx = rx?;
            let message = match pending {
                Some(m) => m,
                None => match tokio::time::timeout(KEEP_ALIVE, rx.recv()).await {
                    Ok(Some(message)) => message,
                    Ok(None) => {
                        let text = ended?;
                        let event = Bytes::from(format!("event: message\ndata: {text}\n\n"));
                        return Some((Ok(event), (None, None)));
                    }
                    Err(_) => {
                        let ping = Bytes::from_static(b": keep-alive\n\n");
                        return Some((Ok(ping), (None, Some(rx))));
                    }
                },
            };
            if message.text.is_empty() {
                if !message.is_response {
                    // A request to let the connection go (polling): this stream cannot be
                    // resumed, so it stays open.
                    return Some((Ok(Bytes::new()), (None, Some(rx))));
                }
                return None;
            }
            let event = Bytes::from(format!("event: message\ndata: {}\n\n", message.text));
            // The stream ends with the response.
            let rx = (!message.is_response).then_some(rx);
            Some((Ok::<_, std::convert::Infallible>(event), (None, rx)))
        }
    });
    sse_response(Body::from_stream(stream))
}

/// An SSE stream's response.
pub(crate) fn sse_response(body: Body) -> Response {
    let mut response = Response::new(body);
    *response.headers_mut() = spare_headers();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, EVENT_STREAM);
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // Proxies that buffer (nginx) would hold each event back.
    headers.insert(ACCEL_BUFFERING, HeaderValue::from_static("no"));
    response
}

/// A JSON answer's response.
pub(crate) fn json_response(status: StatusCode, body: String) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    *response.headers_mut() = spare_headers();
    response.headers_mut().insert(header::CONTENT_TYPE, JSON);
    response
}

/// The most headers a map kept for a later answer may have room for.
const SPARE_CAPACITY: usize = 64;

thread_local! {
    /// A header map done with, emptied, whose allocation the next map made on this thread
    /// takes: a request's goes to its answer, and an answer's, once written, to the next
    /// request read. One a thread, of at most [`SPARE_CAPACITY`] headers.
    static SPARE: Cell<Option<HeaderMap>> = const { Cell::new(None) };
}

/// Keeps `headers` (a request's or an answer's, done with) emptied for the next map made on
/// this thread, unless it has room for more than [`SPARE_CAPACITY`] headers.
pub(crate) fn recycle(mut headers: HeaderMap) {
    if headers.capacity() > SPARE_CAPACITY {
        return;
    }
    headers.clear();
    SPARE.set(Some(headers));
}

/// An empty header map: the one kept by [`recycle`], if any (no allocation), else a new one.
pub(crate) fn spare_headers() -> HeaderMap {
    SPARE.take().unwrap_or_default()
}

const JSON: HeaderValue = HeaderValue::from_static("application/json");
const EVENT_STREAM: HeaderValue = HeaderValue::from_static("text/event-stream");
const ACCEL_BUFFERING: HeaderName = HeaderName::from_static("x-accel-buffering");

/// The GET stream: every message that belongs to no request, with a comment every 25 seconds
/// to keep proxies from closing it, until the server shuts down.
pub(crate) fn standalone(
    rx: mpsc::UnboundedReceiver<Outgoing>,
    shutdown: watch::Receiver<bool>,
) -> Response {
    let stream =
        futures_util::stream::unfold((rx, shutdown), |(mut rx, mut shutdown)| async move {
            let keepalive = tokio::time::sleep(KEEP_ALIVE);
            let event = tokio::select! {
                message = rx.recv() => {
                    let message = message?;
                    Bytes::from(format!("event: message\ndata: {}\n\n", message.text))
                }
                () = keepalive => Bytes::from_static(b": keep-alive\n\n"),
                _ = shutdown.wait_for(|stop| *stop) => return None,
            };
            Some((Ok::<_, std::convert::Infallible>(event), (rx, shutdown)))
        });
    sse_response(Body::from_stream(stream))
}
