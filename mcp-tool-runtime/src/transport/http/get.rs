//! The GET handler: a session's stream of the messages that belong to no request (resumable
//! in 2025-11-25 sessions), and the resumes of any stream with `Last-Event-ID`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::http::header;
use axum::response::Response;
use tokio::sync::mpsc;

use crate::protocol::code;

use super::endpoint::{Endpoint, Routes, SESSION_HEADER, refuse};
use super::resume;
use super::sse;
use crate::sync::lock;

/// Opens the session's GET stream (one at a time), or resumes a stream after the event
/// `Last-Event-ID` names.
pub(super) async fn handle_get(
    State(endpoint): State<Arc<Endpoint>>,
    request: axum::extract::Request,
) -> Response {
    let (parts, _) = request.into_parts();
    if let Some(last_event) = resume::last_event_id(&parts.headers) {
        return resume::handle(&endpoint, &parts, last_event).await;
    }
    let http = match endpoint.session_of(&parts, "GET").await {
        Ok(s) => s,
        Err(r) => return *r,
    };
    if let Err(r) = endpoint.refuse_if_stopping() {
        return *r;
    }
    let accepts_sse = parts
        .headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/event-stream") || a.contains("*/*"));
    if !accepts_sse {
        return *refuse(
            StatusCode::NOT_ACCEPTABLE,
            code::INVALID_REQUEST,
            "Not Acceptable: GET opens an SSE stream; accept text/event-stream",
        );
    }
    let (tx, rx) = mpsc::unbounded_channel();
    let session = parts.headers.get(&SESSION_HEADER);
    let owner = resume::owner_of(
        session.and_then(|v| v.to_str().ok()).unwrap_or(""),
        http.identity.as_ref(),
    );
    let mut stream = None;
    {
        let mut routes = lock(&http.routes);
        if routes.standalone_open() {
            return *refuse(
                StatusCode::CONFLICT,
                code::INVALID_REQUEST,
                "Conflict: this session's GET stream is already open",
            );
        }
        routes.standalone = Some(tx);
        if resume::resumable(http.session.client().protocol_version) {
            stream = endpoint.streams.create(owner);
        }
        routes.standalone_tap = stream.as_ref().map(|s| s.tap.clone());
    }
    let shutdown = endpoint.shutdown.subscribe();
    match stream {
        Some(stream) => {
            let streams = &endpoint.streams;
            streams.serve(stream, rx, None, None, Some(shutdown)).await
        }
        None => sse::standalone(rx, shutdown),
    }
}

impl Routes {
    /// Whether a client is connected to the GET stream.
    pub(super) fn standalone_open(&self) -> bool {
        match &self.standalone_tap {
            Some(tap) => tap.connected(),
            None => self.standalone.as_ref().is_some_and(|s| !s.is_closed()),
        }
    }
}
