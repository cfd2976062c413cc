//! JSON-RPC errors: the codes and the error object.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// JSON-RPC error codes (and the ones MCP adds).
pub mod code {
    /// Invalid JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// Not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters (also: unknown tool).
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal error.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// A resource that does not exist (MCP before 2026-07-28; since then `INVALID_PARAMS`).
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// A request's HTTP headers disagree with its body (2026-07-28).
    pub const HEADER_MISMATCH: i64 = -32020;
    /// The request needs a capability the client did not declare (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// The request's protocol version is not one the server speaks (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
    /// The caller's access token lacks a scope the request needs (`data.requiredScopes` names
    /// them); over HTTP the answer is 403 with the `insufficient_scope` challenge.
    pub const INSUFFICIENT_SCOPE: i64 = -32030;

    /// The HTTP status that goes with an error of `code` for a stateless (2026-07-28)
    /// request: 404 for a method that does not exist, 400 for malformed requests, 200
    /// otherwise.
    pub fn http_status(code: i64) -> u16 {
        match code {
            METHOD_NOT_FOUND => 404,
            INVALID_PARAMS
            | INVALID_REQUEST
            | PARSE_ERROR
            | HEADER_MISMATCH
            | MISSING_REQUIRED_CLIENT_CAPABILITY
            | UNSUPPORTED_PROTOCOL_VERSION => 400,
            INSUFFICIENT_SCOPE => 403,
            _ => 200,
        }
    }
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("JSON-RPC error {code}: {message}")]
pub struct RpcError {
    /// The error code.
    pub code: i64,
    /// The message.
    #[serde(default)]
    pub message: String,
    /// Optional data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with a code and a message.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The same error with `data`.
    #[must_use]
    pub fn with_data(mut self, data: impl Serialize) -> Self {
        self.data = serde_json::to_value(data).ok();
        self
    }

    /// `-32021`: the request needs `capabilities` (a `ClientCapabilities` object, such as
    /// `{"sampling": {}}`) that the client did not declare.
    pub fn missing_capability(message: impl Into<String>, capabilities: Value) -> Self {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Data {
            required_capabilities: Value,
        }
        RpcError::new(code::MISSING_REQUIRED_CLIENT_CAPABILITY, message).with_data(Data {
            required_capabilities: capabilities,
        })
    }

    /// The HTTP status that goes with the error for a stateless (2026-07-28) request: 404 for
    /// a method that does not exist, 400 for malformed requests, 200 otherwise.
    pub fn http_status(&self) -> u16 {
        code::http_status(self.code)
    }

    /// Reads an error object (an unreadable one becomes an internal error saying so).
    pub fn from_json(v: &Value) -> Self {
        RpcError::deserialize(v).unwrap_or_else(|e| {
            RpcError::new(
                code::INTERNAL_ERROR,
                format!("the peer sent an error object that is not one: {e}"),
            )
        })
    }
}
