//! The GET handler: a session's stream of the messages that belong to no request (resumable
//! in 2025-11-25 sessions), and the resumes of any stream with `Last-Event-ID`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::http::header;
use axum::http::request::Parts;
use axum::response::Response;
use tokio::sync::mpsc;

use crate::protocol::code;

use crate::sync::lock;
use crate::transport::http::endpoint::{Endpoint, SESSION_HEADER};
use crate::transport::http::refusal::refuse;
use crate::transport::http::streams::resume;
use crate::transport::http::streams::sse;

/// Opens the session's GET stream (one at a time), or resumes a stream after the event
/// `Last-Event-ID` names.
pub(super) async fn handle_get(
    State(endpoint): State<Arc<Endpoint>>,
    request: axum::extract::Request,
) -> Response {
    let (parts, _) = request.into_parts();
    if let Some(last_event) = resume::last_event_id(&parts.headers) {
        return handle_resume(&endpoint, &parts, last_event).await;
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
            stream = endpoint.streams.create(http.owner.clone());
        }
        routes.standalone_tap = stream.as_ref().map(|s| s.tap.clone());
    }
    let shutdown = endpoint.shutdown.subscribe();
    match stream {
        Some(stream) => {
            let streams = &endpoint.streams;
            streams
                .serve(stream, rx.into(), None, None, Some(shutdown))
                .await
        }
        None => sse::standalone(rx, shutdown),
    }
}

/// A GET with `Last-Event-ID`: the session it names may live on this replica or, with a
/// shared store, on another; the stream must be the session's.
async fn handle_resume(endpoint: &Endpoint, parts: &Parts, last_event: &str) -> Response {
    match resume_checked(endpoint, parts, last_event).await {
        Ok(r) | Err(r) => r,
    }
}

async fn resume_checked(
    endpoint: &Endpoint,
    parts: &Parts,
    last_event: &str,
) -> Result<Response, Response> {
    let identity = endpoint.admit(parts).await.map_err(|r| *r)?;
    if endpoint.config.sessionless {
        return Err(*refuse(
            StatusCode::METHOD_NOT_ALLOWED,
            code::INVALID_REQUEST,
            "Method Not Allowed: a sessionless server keeps no streams to resume",
        ));
    }
    endpoint.refuse_if_stopping().map_err(|r| *r)?;
    let accepts = parts
        .headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/event-stream") || a.contains("*/*"));
    if !accepts {
        return Err(*refuse(
            StatusCode::NOT_ACCEPTABLE,
            code::INVALID_REQUEST,
            "Not Acceptable: GET opens an SSE stream; accept text/event-stream",
        ));
    }
    let Some(session_id) = parts.headers.get(&SESSION_HEADER) else {
        return Err(*refuse(
            StatusCode::BAD_REQUEST,
            code::INVALID_REQUEST,
            "Bad Request: Mcp-Session-Id header is required",
        ));
    };
    let session_id = session_id.to_str().unwrap_or("");
    // The stream must be this session's and this identity's (its owner says). With a store
    // of this process alone, the session must be alive here too; with a shared one, it may
    // live on another replica.
    if !endpoint.streams.shared() && !endpoint.holds(session_id) {
        return Err(*refuse(
            StatusCode::NOT_FOUND,
            code::INVALID_REQUEST,
            "Session not found (it ended or expired): initialize a new one",
        ));
    }
    let owner = resume::owner_of(session_id, identity.as_ref());
    endpoint
        .streams
        .resume(last_event, &owner, endpoint.shutdown.subscribe())
        .await
        .map_err(|r| *r)
}
