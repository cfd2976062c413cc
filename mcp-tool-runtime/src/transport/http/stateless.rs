//! Requests answered without a session: those of the stateless version (2026-07-28), whose
//! `_meta` and headers are checked first, and every request in the sessionless mode
//! (`HttpConfig::sessionless`). Each gets a session for it alone, closed when its stream goes.

use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use tokio::sync::mpsc;

use crate::protocol::inbound::Inbound;
use crate::protocol::jsonrpc;
use crate::protocol::request::Request;
use crate::protocol::{ProtocolVersion, code};
use crate::server::core::session::{Opening, Outgoing, Session};
use crate::tool::Identity;

use crate::transport::http::endpoint::{Endpoint, accepts_sse, principal_of};
use crate::transport::http::head::Source;
use crate::transport::http::headers;
use crate::transport::http::streams::sse;

/// A request of a stateless version (2026-07-28): its `_meta` and headers checked, then
/// answered on its own by a session for it alone (`source`: where it comes from); closing the
/// response stream cancels it.
pub(super) async fn stateless_request(
    endpoint: &Endpoint,
    parts: &Parts,
    source: Option<Source>,
    request: &Request<'_>,
    header_version: Option<&str>,
    identity: Option<Identity>,
) -> Response {
    let version = match headers::check(&endpoint.server, &parts.headers, header_version, request) {
        Ok(v) => v,
        Err(e) => {
            let status = StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
            return sse::json_response(status, jsonrpc::error_response(request.id_text(), &e));
        }
    };
    if let Some(settling) = endpoint.server.settling(request.method) {
        settling.await;
    }
    let principal = principal_of(identity.as_ref(), Source::local(source));
    endpoint.server.recall_selection(&principal).await;
    let (tx, rx) = mpsc::unbounded_channel::<Outgoing>();
    let session = Session::open(
        &endpoint.server,
        tx,
        Opening {
            address: Source::address(source),
            principal,
            identity,
            one_shot: Some(version),
            shared_name: None,
        },
    );
    session.dispatch_request(request, true);
    // The client leaving (the stream dropped) cancels what the request still runs.
    tokio::spawn(async move {
        session.out_gone().await;
        session.close();
    });
    if accepts_sse(&parts.headers) {
        sse::respond(rx.into(), endpoint.config.sse_responses, status_of, None).await
    } else {
        sse::respond_json_only(rx.into(), status_of, None).await
    }
}

/// The HTTP status of a stateless request's JSON answer: from its error's code, if it is an
/// error (the session gives the code with the response; its text is not read again).
fn status_of(response: &Outgoing) -> StatusCode {
    response
        .error
        .and_then(|e| StatusCode::from_u16(code::http_status(e)).ok())
        .unwrap_or(StatusCode::OK)
}

/// Sessionless mode: a fresh session per POST, JSON only.
pub(super) async fn sessionless_post(
    endpoint: &Endpoint,
    inbound: &Inbound<'_>,
    request: Option<&Request<'_>>,
    version: Option<ProtocolVersion>,
    identity: Option<Identity>,
) -> Response {
    let (tx, mut rx) = mpsc::unbounded_channel::<Outgoing>();
    let session = Session::open(
        &endpoint.server,
        tx,
        Opening {
            principal: principal_of(identity.as_ref(), false),
            identity,
            one_shot: Some(version.unwrap_or(ProtocolVersion::LATEST_STATEFUL)),
            shared_name: None,
            address: None,
        },
    );
    let Some(request) = request else {
        session.dispatch(inbound);
        return StatusCode::ACCEPTED.into_response();
    };
    if let Some(settling) = endpoint.server.settling(request.method) {
        settling.await;
    }
    session.dispatch_request(request, false);
    let id = request.key();
    while let Some(message) = rx.recv().await {
        if message.is_response && message.related.as_ref() == id {
            return sse::json_response(StatusCode::OK, message.text);
        }
    }
    StatusCode::ACCEPTED.into_response()
}
