//! A REST call's answer: the `tools/call` response turned into a status and a body (the
//! result's structured content or content; for a refusal an RFC 9457 problem whose `detail`
//! is the message an MCP client gets), and the endpoint's own refusals (credentials, scopes)
//! reworded as problems with their headers kept.

use std::borrow::Cow;

use axum::body::Body;
use axum::http::header::{self, HeaderValue};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::protocol::{RpcError, code, jsonrpc};
use crate::server::ServerHandle;
use crate::server::middleware::RETRY_AFTER_META_KEY;
use crate::tool::{ERROR_META_KEY, ToolDef};

/// The HTTP status of a tool's error result with the code `code`
/// (`ToolError::new(code, …)`):
///
/// | code                                                          | status |
/// |---------------------------------------------------------------|--------|
/// | `INVALID`, `INVALID_*`, `BAD_REQUEST`, `OUT_OF_RANGE`, `FAILED_PRECONDITION` | 400 |
/// | `UNAUTHENTICATED`, `UNAUTHORIZED`                             | 401    |
/// | `FORBIDDEN`, `PERMISSION_DENIED`, `DENIED`                    | 403    |
/// | `NOT_FOUND`, `*_NOT_FOUND`, `NO_SUCH_*`                       | 404    |
/// | `CONFLICT`, `ALREADY_EXISTS`, `*_EXISTS`                      | 409    |
/// | `RATE_LIMITED`, `TOO_MANY_REQUESTS`, `RESOURCE_EXHAUSTED`     | 429 (with `Retry-After` when the result says when) |
/// | `NOT_IMPLEMENTED`, `UNIMPLEMENTED`                            | 501    |
/// | `UNAVAILABLE`, `SERVICE_UNAVAILABLE`                          | 503    |
/// | `TIMEOUT`, `DEADLINE_EXCEEDED`                                | 504    |
/// | any other code                                                | 500    |
pub fn status_of_code(code: &str) -> u16 {
    match code {
        "INVALID" | "BAD_REQUEST" | "OUT_OF_RANGE" | "FAILED_PRECONDITION" => 400,
        c if c.starts_with("INVALID_") => 400,
        "UNAUTHENTICATED" | "UNAUTHORIZED" => 401,
        "FORBIDDEN" | "PERMISSION_DENIED" | "DENIED" => 403,
        "NOT_FOUND" => 404,
        c if c.ends_with("_NOT_FOUND") || c.starts_with("NO_SUCH_") => 404,
        "CONFLICT" | "ALREADY_EXISTS" => 409,
        c if c.ends_with("_EXISTS") => 409,
        "RATE_LIMITED" | "TOO_MANY_REQUESTS" | "RESOURCE_EXHAUSTED" => 429,
        "NOT_IMPLEMENTED" | "UNIMPLEMENTED" => 501,
        "UNAVAILABLE" | "SERVICE_UNAVAILABLE" => 503,
        "TIMEOUT" | "DEADLINE_EXCEEDED" => 504,
        _ => 500,
    }
}

/// An RFC 9457 problem: what every refusal of a REST call says.
#[derive(Serialize, Default)]
pub(super) struct Problem<'a> {
    pub(super) title: &'a str,
    pub(super) status: u16,
    pub(super) detail: Cow<'a, str>,
    /// The tool's error code, when it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) code: Option<&'a str>,
    /// The tool error's own message (`detail` without its code and suggestion).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) message: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) suggestion: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(super) retryable: bool,
    /// The fields that break the input schema (422).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) errors: Vec<FieldError>,
}

/// One field that breaks the input schema.
#[derive(Serialize)]
pub(super) struct FieldError {
    /// The field as a JSON Pointer into the body (`/items/0/name`; empty: the whole body).
    pointer: String,
    /// The field as the message writes it (`items[0].name`).
    field: String,
    message: String,
}

impl Problem<'_> {
    pub(super) fn response(&self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (
            status,
            [(header::CONTENT_TYPE, "application/problem+json")],
            jsonrpc::json_string(self),
        )
            .into_response()
    }
}

/// A problem with only a status and a detail.
pub(super) fn problem(status: StatusCode, detail: &str) -> Response {
    Problem {
        title: status.canonical_reason().unwrap_or("Error"),
        status: status.as_u16(),
        detail: Cow::Borrowed(detail),
        ..Problem::default()
    }
    .response()
}

/// The endpoint's refusal of a request (a JSON-RPC error as an HTTP response: credentials,
/// scopes, shutdown), as a problem with the same status and headers (`WWW-Authenticate`,
/// `Retry-After`) and the error's message.
pub(super) async fn reword(refusal: Response) -> Response {
    let (mut parts, body) = refusal.into_parts();
    let bytes = axum::body::to_bytes(body, 64 << 10)
        .await
        .unwrap_or_default();
    #[derive(Deserialize)]
    struct Envelope {
        error: RpcError,
    }
    let detail = serde_json::from_slice::<Envelope>(&bytes)
        .map(|e| e.error.message)
        .unwrap_or_default();
    let problem = Problem {
        title: parts.status.canonical_reason().unwrap_or("Error"),
        status: parts.status.as_u16(),
        detail: Cow::Owned(detail),
        ..Problem::default()
    };
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(jsonrpc::json_string(&problem)))
}

/// The `tools/call` response, as JSON-RPC writes it.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<RpcError>,
}

/// What of a call's result the answer needs.
#[derive(Deserialize)]
struct CallResult<'a> {
    #[serde(rename = "structuredContent", borrow, default)]
    structured: Option<&'a RawValue>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(rename = "isError", default)]
    is_error: bool,
    #[serde(rename = "resultType", borrow, default)]
    result_type: Option<Cow<'a, str>>,
    #[serde(rename = "_meta", default)]
    meta: Option<Map<String, Value>>,
}

/// The HTTP answer to a REST call of `def` with `arguments` (the body), from the text of its
/// `tools/call` response.
pub(super) fn respond(
    server: &ServerHandle,
    def: &ToolDef,
    arguments: &str,
    response: &str,
) -> Response {
    let envelope = match serde_json::from_str::<Envelope<'_>>(response) {
        Ok(e) => e,
        Err(_) => return internal("the call's response could not be read"),
    };
    let result = match (envelope.result, envelope.error) {
        (_, Some(error)) => return refused(def.name(), &error),
        (Some(result), None) => result,
        (None, None) => return internal("the call's response holds no result"),
    };
    let result = match serde_json::from_str::<CallResult<'_>>(result.get()) {
        Ok(r) => r,
        Err(_) => return internal("the call's result could not be read"),
    };
    if result
        .result_type
        .as_deref()
        .is_some_and(|t| t != "complete")
    {
        return problem(
            StatusCode::NOT_IMPLEMENTED,
            &format!(
                "tool `{}` asks its caller for input, which a REST call cannot give: call it over MCP",
                def.name()
            ),
        );
    }
    if result.is_error {
        return failed(server, def, arguments, &result);
    }
    let body = match def.output_schema() {
        Some(_) => result.structured,
        None => result.content,
    };
    let Some(body) = body else {
        return internal(
            "the tool's result has no structured content, though it declares an output schema",
        );
    };
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        body.get().to_owned(),
    )
        .into_response()
}

fn internal(detail: &str) -> Response {
    problem(StatusCode::INTERNAL_SERVER_ERROR, detail)
}

/// A call refused with a JSON-RPC error.
fn refused(tool: &str, error: &RpcError) -> Response {
    let status = match error.code {
        code::MISSING_REQUIRED_CLIENT_CAPABILITY => {
            let detail = format!(
                "{} (tool `{tool}`): a REST call declares no client capability, so it cannot answer a tool's questions nor take a task; call it over MCP",
                error.message
            );
            return problem(StatusCode::NOT_IMPLEMENTED, &detail);
        }
        code::INVALID_PARAMS if error.message.starts_with("Unknown tool") => 404,
        code::INTERNAL_ERROR => 500,
        c => match code::http_status(c) {
            200 => 500,
            status => status,
        },
    };
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    problem(status, &error.message)
}

/// An error result: 422 when the arguments did not fit the schema, else the status of its
/// code.
fn failed(
    server: &ServerHandle,
    def: &ToolDef,
    arguments: &str,
    result: &CallResult<'_>,
) -> Response {
    let text = text_of(result.content);
    let detail = result.meta.as_ref().and_then(|m| m.get(ERROR_META_KEY));
    let code = detail.and_then(|d| d["code"].as_str());
    if code.is_none()
        && text.starts_with(&format!("Invalid arguments for tool `{}`:", def.name()))
        && let Some(errors) = violations(server, def, arguments)
    {
        return Problem {
            title: "Unprocessable Content",
            status: 422,
            detail: Cow::Owned(text),
            errors,
            ..Problem::default()
        }
        .response();
    }
    let status = code.map_or(500, status_of_code);
    let mut response = Problem {
        title: StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("Error"),
        status,
        detail: Cow::Owned(text),
        code,
        message: detail.and_then(|d| d["message"].as_str()),
        suggestion: detail.and_then(|d| d["suggestion"].as_str()),
        retryable: detail.is_some_and(|d| d["retryable"] == true),
        errors: Vec::new(),
    }
    .response();
    let wait = result
        .meta
        .as_ref()
        .and_then(|m| m.get(RETRY_AFTER_META_KEY))
        .and_then(Value::as_u64);
    if status == 429
        && let Some(ms) = wait
    {
        set_retry_after(response.headers_mut(), ms);
    }
    response
}

/// `Retry-After` in whole seconds, rounded up (at least 1).
fn set_retry_after(headers: &mut HeaderMap, ms: u64) {
    let seconds = ms.div_ceil(1000).max(1);
    headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
}

/// The text blocks of a result's content, joined.
fn text_of(content: Option<&RawValue>) -> String {
    #[derive(Deserialize)]
    struct Block {
        #[serde(default)]
        text: Option<String>,
    }
    content
        .and_then(|c| serde_json::from_str::<Vec<Block>>(c.get()).ok())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|b| b.text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The fields of `arguments` that break the tool's input schema (converted first where the
/// call converts them), as the validation of the call found them; `None` when they fit.
fn violations(server: &ServerHandle, def: &ToolDef, arguments: &str) -> Option<Vec<FieldError>> {
    let mut arguments: Map<String, Value> = serde_json::from_str(arguments).ok()?;
    let coerce = server.shared.coerce_arguments;
    if def.may_coerce(coerce) {
        def.coerce(&mut arguments, coerce);
    }
    let error = def.validate(&Value::Object(arguments)).err()?;
    Some(
        error
            .violations()
            .iter()
            .map(|v| FieldError {
                pointer: v.pointer().to_owned(),
                field: v.path().to_owned(),
                message: v.message().to_owned(),
            })
            .collect(),
    )
}
