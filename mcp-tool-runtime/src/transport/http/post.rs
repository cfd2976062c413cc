//! The POST handler: a client's message, checked (credentials, media type, body size,
//! protocol version), then handed to its session — a new one for `initialize` — and its
//! request answered with JSON or an SSE stream; stateless (2026-07-28) requests, and every
//! request in the sessionless mode, go to `stateless`.

use std::collections::hash_map::Entry;
use std::future::Future as _;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Poll;

use axum::body::{Bytes, HttpBody};
use axum::extract::State;
use axum::http::StatusCode;
use axum::http::header::{self, HeaderValue};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use tokio::sync::mpsc;

use crate::protocol::inbound::{self, Inbound};
use crate::protocol::request::{Method, Request};
use crate::protocol::{ProtocolVersion, code};
use crate::server::core::methods::tools::ScopeCheck;
use crate::sync::lock;
use crate::tool::Identity;

use crate::transport::http::endpoint::{Endpoint, HttpSession, RequestRoute, client_of};
use crate::transport::http::head::{Head, SESSION_HEADER, Source, accepts_sse_value};
use crate::transport::http::refusal::{Refusal, refuse, rpc_error};
use crate::transport::http::stateless::{sessionless_post, stateless_request};
use crate::transport::http::streams::resume;
use crate::transport::http::streams::sse::{self, Held, Messages};

/// The protocol version a request's header names: `None` without the header, `Some(None)` for
/// one no version of which is supported.
fn version_of(value: Option<&HeaderValue>) -> Option<Option<ProtocolVersion>> {
    value.map(|v| v.to_str().ok().and_then(ProtocolVersion::parse))
}

/// 400 for a version header that names no supported version.
fn check_version(
    value: Option<&HeaderValue>,
    version: Option<Option<ProtocolVersion>>,
) -> Result<Option<ProtocolVersion>, Refusal> {
    match (value, version) {
        (Some(v), Some(None)) => Err(refuse(
            StatusCode::BAD_REQUEST,
            code::INVALID_REQUEST,
            &format!(
                "Bad Request: unsupported MCP-Protocol-Version `{}`; supported: {}",
                v.to_str().unwrap_or("?"),
                ProtocolVersion::supported_list()
            ),
        )),
        (_, version) => Ok(version.flatten()),
    }
}

/// A POST, in its steps: admitted (credentials), its body read and parsed once, then
/// answered by a stateless session, a sessionless one, or the session it names (a new one for
/// `initialize`).
pub(super) async fn handle_post(
    State(endpoint): State<Arc<Endpoint>>,
    request: axum::extract::Request,
) -> Response {
    post(endpoint, request, None).await
}

/// [`handle_post`] of a request not marked yet with where it comes from (`source`), with its
/// body as it came (hyper's, when the accept loop hands the request over itself).
pub(super) async fn post<B>(
    endpoint: Arc<Endpoint>,
    request: axum::http::Request<B>,
    source: Option<Source>,
) -> Response
where
    B: HttpBody<Data = Bytes>,
{
    let (parts, body) = request.into_parts();
    let head = Head::of(&parts.headers);
    let identity = match endpoint.admit_with(&parts, &head).await {
        Ok(i) => i,
        Err(r) => return *r,
    };
    let body = match read_body(&endpoint, head.content_type, body).await {
        Ok(body) => body,
        Err(r) => return *r,
    };
    let response = answer_body(&endpoint, &parts, &head, &body, identity, source).await;
    // Its map's allocation carries a later answer's headers.
    sse::recycle(parts.headers);
    response
}

/// The rest of [`post`], once its body is read (not generic over the body's type).
async fn answer_body(
    endpoint: &Endpoint,
    parts: &Parts,
    head: &Head<'_>,
    body: &[u8],
    identity: Option<Identity>,
    source: Option<Source>,
) -> Response {
    // Read once: the id and method decide how to answer, the headers are checked against
    // the request, and the session takes it.
    let inbound = match inbound::read_line(body) {
        Ok(inbound) => inbound,
        Err(response) => {
            return (
                StatusCode::BAD_REQUEST,
                [(header::CONTENT_TYPE, "application/json")],
                response,
            )
                .into_response();
        }
    };
    let request = match &inbound {
        Inbound::Request(r) if r.id.is_some() => Some(r),
        _ => None,
    };
    if let Some(request) = request {
        // A call the token lacks scopes for is refused before anything runs: the step-up
        // challenge, in both versions.
        if let Some((error, needed)) = endpoint.server.lacks_scopes(request, identity.as_ref()) {
            return endpoint.scope_challenge(request.id_text(), &error, &needed);
        }
        if let Err(r) = endpoint.refuse_if_stopping() {
            return *r;
        }
    }
    let header_version = head.version.map(|v| v.to_str().unwrap_or("?"));
    let version = version_of(head.version);
    let stateless = version.flatten().is_some_and(ProtocolVersion::is_stateless)
        || request.is_some_and(|r| r.stateless);
    // Where it comes from: told by the accept loop, else by the mark it put on the request.
    let source = source.or_else(|| Source::marked(&parts.extensions));
    if stateless {
        let Some(request) = request else {
            // The version defines no notification or response a client sends over HTTP.
            return StatusCode::ACCEPTED.into_response();
        };
        return stateless_request(endpoint, parts, source, request, header_version, identity).await;
    }
    let version = match check_version(head.version, version) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    if endpoint.config.sessionless {
        return sessionless_post(endpoint, &inbound, request, version, identity).await;
    }
    session_post(endpoint, head, source, &inbound, request, identity).await
}

/// The body of a POST, once its media type (`content_type`) is JSON: read whole within the
/// body limit and the body timeout, or the answer that refuses it.
async fn read_body<B>(
    endpoint: &Endpoint,
    content_type: Option<&HeaderValue>,
    body: B,
) -> Result<Bytes, Refusal>
where
    B: HttpBody<Data = Bytes>,
{
    let content_type = content_type.and_then(|v| v.to_str().ok()).unwrap_or("");
    // The media type, without parameters (`application/json; charset=utf-8`).
    let media_type = match content_type.bytes().position(|b| b == b';') {
        Some(end) => &content_type[..end],
        None => content_type,
    };
    if !media_type
        .trim_ascii()
        .eq_ignore_ascii_case("application/json")
    {
        return Err(refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            code::INVALID_REQUEST,
            "Unsupported Media Type: the body must be application/json",
        ));
    }
    let config = &endpoint.config;
    let mut read = std::pin::pin!(body_bytes(body, config.body_limit));
    // A body that came with its head (a small request's does) is read without a timer.
    let first = std::future::poll_fn(|cx| Poll::Ready(read.as_mut().poll(cx))).await;
    let read = match first {
        Poll::Ready(read) => Ok(read),
        Poll::Pending => tokio::time::timeout(config.body_timeout, read).await,
    };
    let Ok(read) = read else {
        tracing::debug!(
            timeout_ms = config.body_timeout.as_millis() as u64,
            "a request body did not arrive in time: 408, connection closed"
        );
        let mut response = rpc_error(
            StatusCode::REQUEST_TIMEOUT,
            code::INVALID_REQUEST,
            &format!(
                "Request Timeout: the body did not arrive within {} s",
                config.body_timeout.as_secs()
            ),
        );
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        return Err(Box::new(response));
    };
    read.map_err(|_| {
        refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            code::INVALID_REQUEST,
            &format!(
                "Payload Too Large: the limit is {} bytes",
                config.body_limit
            ),
        )
    })
}

/// A body whole, or `Err` past `limit` bytes or when it breaks off. Read frame by frame: a
/// body that comes in one frame (a small request's does) is that frame's bytes, not a copy,
/// and once its declared length came, no frame is asked for to learn that none follows.
async fn body_bytes<B>(body: B, limit: usize) -> Result<Bytes, ()>
where
    B: HttpBody<Data = Bytes>,
{
    let mut body = std::pin::pin!(body);
    let mut whole: Option<Bytes> = None;
    let mut more: Vec<u8> = Vec::new();
    let mut read = 0usize;
    while let Some(frame) = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
        let Ok(data) = frame.map_err(drop)?.into_data() else {
            // Trailers: nothing of the message.
            continue;
        };
        read = read.saturating_add(data.len());
        if read > limit {
            return Err(());
        }
        match &whole {
            None => whole = Some(data),
            Some(first) => {
                if more.is_empty() {
                    more.extend_from_slice(first);
                }
                more.extend_from_slice(&data);
            }
        }
        if body.is_end_stream() {
            break;
        }
    }
    Ok(match whole {
        Some(first) if more.is_empty() => first,
        Some(_) => Bytes::from(more),
        None => Bytes::new(),
    })
}

/// A message of a 2025-11-25 session (or an earlier one): an `initialize` opens the session,
/// anything else goes to the session it names; a request is answered on its own stream.
async fn session_post(
    endpoint: &Endpoint,
    head: &Head<'_>,
    source: Option<Source>,
    inbound: &Inbound<'_>,
    request: Option<&Request<'_>>,
    identity: Option<Identity>,
) -> Response {
    let is_initialize = request.is_some_and(|r| r.method == Method::Initialize);
    let identity = identity.map(Arc::new);
    let (session_id, http) = if is_initialize {
        match open_session(endpoint, head, source, identity.as_deref().cloned()) {
            Ok((id, http)) => (Some(id), http),
            Err(r) => return *r,
        }
    } else {
        match endpoint
            .session_named(head.session, identity.as_deref())
            .await
        {
            // A header naming another supported version than the session's is accepted:
            // the official conformance suite itself sends 2025-03-26 on 2025-11-25 sessions.
            Ok(s) => (None, s),
            Err(r) => return *r,
        }
    };
    let Some((request, id)) = request.and_then(|r| Some((r, r.key().cloned()?))) else {
        // A notification or a response: accepted, nothing to say.
        http.session.dispatch(inbound);
        return StatusCode::ACCEPTED.into_response();
    };
    // A gateway's first list holds its mounts' tools.
    if let Some(settling) = endpoint.server.settling(request.method) {
        settling.await;
    }
    match lock(&http.routes).requests.entry(id.clone()) {
        // Its answer could not tell the two apart.
        Entry::Occupied(_) => {
            return rpc_error(
                StatusCode::CONFLICT,
                code::INVALID_REQUEST,
                "Conflict: a request with this id is still running in this session",
            );
        }
        Entry::Vacant(route) => {
            route.insert(RequestRoute::Held(Held::default()));
        }
    }
    // Granted what the request's own token grants: the session is its principal's, and a
    // later token of the same principal may grant more (stepped up) or less.
    http.session.dispatch_request_as(request, identity.as_ref());
    // Taken before anything awaits: the handler is the one to free the held messages.
    let rx = messages_of(&http, &id);
    let Some(session_id) = session_id else {
        return answer(endpoint, head, &http, request, rx).await;
    };
    if !http.session.initialized.load(Ordering::Relaxed) {
        // A failed initialize opens no session.
        lock(&endpoint.sessions).remove(&session_id);
        http.session.close();
        return sse::respond(rx, false, |_| StatusCode::OK, None).await;
    }
    // Kept for the other replicas before the client hears of the session: its next request
    // may reach any of them.
    let replicas = &endpoint.server.shared.replicas;
    if replicas.shared()
        && let Ok(record) = serde_json::to_string(&http.session.record())
        && let Err(e) = replicas.save_now(&session_id, &record).await
    {
        tracing::warn!(error = %e, "a new session is not in the shared state: only this replica serves it");
    }
    let mut response = answer(endpoint, head, &http, request, rx).await;
    if let Ok(v) = HeaderValue::from_str(&session_id) {
        response.headers_mut().insert(SESSION_HEADER, v);
    }
    response
}

/// The messages of request `id`, dispatched just now: those its call sent already and, unless
/// its response is among them, a channel for the rest (the request's route from now on).
fn messages_of(http: &HttpSession, id: &Arc<str>) -> Messages {
    let mut routes = lock(&http.routes);
    let held = match routes.requests.remove(id) {
        Some(RequestRoute::Held(held)) => held,
        // The session ended (DELETE) as the request ran: its answer says so.
        Some(RequestRoute::Open(_)) | None => return Messages::new(Held::default(), None),
    };
    if held.ends_with_response() {
        return Messages::new(held, None);
    }
    let (tx, rx) = mpsc::unbounded_channel();
    routes.requests.insert(id.clone(), RequestRoute::Open(tx));
    Messages::new(held, Some(rx))
}

/// A new session for an `initialize`, within the server's bounds of sessions in all and per
/// client (counted and taken under one lock: concurrent initializes cannot overshoot).
fn open_session(
    endpoint: &Endpoint,
    head: &Head<'_>,
    source: Option<Source>,
    identity: Option<Identity>,
) -> Result<(String, Arc<HttpSession>), Refusal> {
    if head.session.is_some() {
        return Err(refuse(
            StatusCode::BAD_REQUEST,
            code::INVALID_REQUEST,
            "Bad Request: initialize opens a new session; send it without Mcp-Session-Id",
        ));
    }
    let limits = &endpoint.server.shared.limits;
    let client = client_of(identity.as_ref(), source);
    let mut sessions = lock(&endpoint.sessions);
    if sessions.len() >= limits.max_sessions {
        drop(sessions);
        tracing::warn!(
            max = limits.max_sessions,
            "an initialize was refused: the server holds its most sessions"
        );
        return Err(refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            code::INTERNAL_ERROR,
            "Service Unavailable: the server holds as many sessions as it may; try again later",
        ));
    }
    if let Some(client) = &client {
        let held = sessions
            .values()
            .filter(|s| s.client.as_ref() == Some(client))
            .count();
        if held >= limits.max_sessions_per_client {
            drop(sessions);
            tracing::warn!(
                max = limits.max_sessions_per_client,
                client = &**client,
                "an initialize was refused: the client holds its most sessions"
            );
            return Err(refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                code::INTERNAL_ERROR,
                &format!(
                    "Service Unavailable: this client holds as many sessions as one client may ({}); end some (DELETE) or wait for idle ones to expire",
                    limits.max_sessions_per_client
                ),
            ));
        }
    }
    let Some((session_id, http)) = endpoint.new_session(
        identity,
        client,
        Source::address(source),
        Source::local(source),
    ) else {
        return Err(refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            code::INTERNAL_ERROR,
            "no randomness available for a session id",
        ));
    };
    sessions.insert(session_id.clone(), http.clone());
    Ok((session_id, http))
}

/// A session's request answered from its stream: JSON when the client takes nothing else,
/// else JSON or SSE as the first message decides (resumable in 2025-11-25 sessions).
async fn answer(
    endpoint: &Endpoint,
    head: &Head<'_>,
    http: &HttpSession,
    request: &Request<'_>,
    rx: Messages,
) -> Response {
    let raw_id = request.id_text();
    let sse = endpoint.config.sse_responses;
    if !accepts_sse_value(head.accept) {
        sse::respond_json_only(rx, |_| StatusCode::OK, Some(raw_id)).await
    } else if request.method != Method::Initialize
        && resume::resumable(http.session.client().protocol_version)
    {
        endpoint.streams.respond(rx, sse, raw_id, &http.owner).await
    } else {
        sse::respond(rx, sse, |_| StatusCode::OK, Some(raw_id)).await
    }
}
