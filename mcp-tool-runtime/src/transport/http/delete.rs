//! DELETE: a client ends its 2025-11-25 session (on every replica, when they share state).

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::sync::lock;
use crate::transport::http::endpoint::{Endpoint, SESSION_HEADER};

pub(super) async fn handle_delete(
    State(endpoint): State<Arc<Endpoint>>,
    request: axum::extract::Request,
) -> Response {
    let (parts, _) = request.into_parts();
    let http = match endpoint.session_of(&parts, "DELETE").await {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let id = parts
        .headers
        .get(&SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    // Forgotten by the shared state first: once it is gone here, a request naming it finds no
    // record to take it up from.
    if let Some(name) = http.session.shared_name() {
        endpoint.server.shared.replicas.end(name).await;
    }
    lock(&endpoint.sessions).remove(&id);
    http.session.finish();
    let mut routes = lock(&http.routes);
    routes.standalone = None;
    routes.standalone_tap = None;
    routes.requests.clear();
    StatusCode::OK.into_response()
}
