//! A refused request's answer: a JSON-RPC error (with no id) as an HTTP response, the answer of
//! every check the endpoint makes before a request reaches a session.

use axum::http::StatusCode;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use crate::protocol::{RpcError, jsonrpc};

/// A refused request's response (boxed: it is the cold path).
pub(super) type Refusal = Box<Response>;

pub(super) fn refuse(status: StatusCode, code: i64, message: &str) -> Refusal {
    Box::new(rpc_error(status, code, message))
}

/// A JSON-RPC error as an HTTP response.
pub(super) fn rpc_error(status: StatusCode, code: i64, message: &str) -> Response {
    let body = jsonrpc::error_response("null", &RpcError::new(code, message));
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}
