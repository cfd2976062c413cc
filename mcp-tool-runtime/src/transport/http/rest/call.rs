//! `POST {base}/tools/{name}`: the body checked (media type, size, time, a JSON object), then
//! made a stateless (2026-07-28) `tools/call` that the endpoint dispatches for the caller as it
//! dispatches a client's: the same credentials and scope checks before it, the same session
//! for one request, middleware, validation and tool after.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::http::header::{self, HeaderValue};
use axum::response::Response;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use crate::protocol::inbound::{self, Inbound};
use crate::protocol::{ProtocolVersion, jsonrpc};
use crate::server::core::session::{Opening, Outgoing, Session};

use super::super::endpoint::{Endpoint, on_local_socket, peer_address, principal_of};
use super::answer::{problem, respond, reword};

/// The `_meta` of the request a REST call becomes: the stateless version, no client
/// capability (a REST caller answers no question), and who asks.
const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"rest","version":"1"}}"#;

pub(in super::super) async fn handle_call(
    State(endpoint): State<Arc<Endpoint>>,
    Path(name): Path<String>,
    request: axum::extract::Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let identity = match endpoint.admit(&parts).await {
        Ok(i) => i,
        Err(refusal) => return reword(*refusal).await,
    };
    let served = endpoint
        .config
        .openapi
        .as_ref()
        .is_some_and(|o| o.serves(&name));
    let entry = endpoint.server.catalog().get(&name).cloned();
    let Some(entry) = entry.filter(|_| served) else {
        return problem(
            StatusCode::NOT_FOUND,
            &format!("Unknown tool: `{name}` (no tool of this name is served over REST)"),
        );
    };
    let media_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(str::trim);
    let read = axum::body::to_bytes(body, endpoint.config.body_limit);
    let body = match tokio::time::timeout(endpoint.config.body_timeout, read).await {
        Err(_) => {
            let mut response = problem(
                StatusCode::REQUEST_TIMEOUT,
                &format!(
                    "the body did not arrive within {} s",
                    endpoint.config.body_timeout.as_secs()
                ),
            );
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return response;
        }
        Ok(Err(_)) => {
            return problem(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("the limit is {} bytes", endpoint.config.body_limit),
            );
        }
        Ok(Ok(body)) => body,
    };
    // No body is no arguments; a body is JSON.
    let arguments = if body.iter().all(u8::is_ascii_whitespace) {
        "{}"
    } else {
        if !media_type.is_some_and(|m| m.eq_ignore_ascii_case("application/json")) {
            return problem(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "the body must be application/json: the tool's arguments as a JSON object",
            );
        }
        // One JSON value, whole (so that the request made of it holds it as one member).
        match serde_json::from_slice::<&RawValue>(&body) {
            Ok(raw) if raw.get().starts_with('{') => raw.get(),
            Ok(_) => {
                return problem(
                    StatusCode::BAD_REQUEST,
                    "the body must be a JSON object: the tool's arguments",
                );
            }
            Err(e) => {
                return problem(
                    StatusCode::BAD_REQUEST,
                    &format!("the body is not JSON: {e}"),
                );
            }
        }
    };
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":{},"arguments":{arguments},"_meta":{META}}}}}"#,
        jsonrpc::json_string(&*entry.name),
    );
    let Ok(Inbound::Request(request)) = inbound::read_line(line.as_bytes()) else {
        return problem(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the call could not be made of the request",
        );
    };
    // A caller without the tool's scopes gets the step-up challenge an MCP call gets.
    if let Some((error, needed)) = endpoint.server.lacks_scopes(&request, identity.as_ref()) {
        let challenge = endpoint.scope_challenge(request.id_text(), &error, &needed);
        return reword(challenge).await;
    }
    if let Err(refusal) = endpoint.refuse_if_stopping() {
        return reword(*refusal).await;
    }
    if let Some(settling) = endpoint.server.settling(request.method) {
        settling.await;
    }
    let (tx, mut rx) = mpsc::unbounded_channel::<Outgoing>();
    let session = Session::open(
        &endpoint.server,
        tx,
        Opening {
            address: peer_address(&parts),
            principal: principal_of(identity.as_ref(), on_local_socket(&parts)),
            identity,
            one_shot: Some(ProtocolVersion::V2026_07_28),
            shared_name: None,
        },
    );
    session.dispatch_request(&request, true);
    // The caller leaving (this future dropped) cancels what the call still runs.
    tokio::spawn(async move {
        session.out_gone().await;
        session.close();
    });
    while let Some(message) = rx.recv().await {
        if message.is_response {
            return respond(&endpoint.server, &entry.def, arguments, &message.text);
        }
    }
    problem(
        StatusCode::INTERNAL_SERVER_ERROR,
        "the call ended without an answer",
    )
}
