//! Streamable HTTP request handling: the input is a configuration byte and then up to four
//! HTTP/1.1 requests (head parsed by `httparse`, hyper's own parser; a body of
//! `Content-Length` bytes), sent in order to `ServerHandle::into_router` with
//! `tower::ServiceExt::oneshot`, in-process and deterministic. A header value `$sid` stands
//! for the last `Mcp-Session-Id` the server gave, so inputs can reach a session.
//!
//! The oracle: no panic and no hang; a JSON body is JSON-RPC (a message or a batch of them);
//! every event of an SSE body is one JSON-RPC message.
#![no_main]

use std::sync::OnceLock;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, Method, Request, Uri, header};
use libfuzzer_sys::fuzz_target;
use mcp_tool::http::{BearerTokens, HttpConfig};
use mcp_tool::server::ServerHandle;
use mcp_tool_fuzz::{check_message, plain_server, runtime};
use serde_json::Value;
use tower::ServiceExt;

static SERVER: OnceLock<ServerHandle> = OnceLock::new();

/// The most requests one input sends.
const MAX_REQUESTS: usize = 4;

/// One request parsed from the input; `None` when the bytes are no request head.
fn parse(data: &[u8], session: Option<&str>) -> Option<(Request<Body>, usize)> {
    let mut headers = [httparse::EMPTY_HEADER; 24];
    let mut req = httparse::Request::new(&mut headers);
    let httparse::Status::Complete(head) = req.parse(data).ok()? else {
        return None;
    };
    let method = Method::from_bytes(req.method?.as_bytes()).ok()?;
    let uri: Uri = req.path?.parse().ok()?;
    let mut builder = Request::builder().method(method).uri(uri);
    let mut length = 0usize;
    for h in req.headers.iter() {
        let name = HeaderName::from_bytes(h.name.as_bytes()).ok()?;
        let value = match (h.value, session) {
            (b"$sid", Some(sid)) => HeaderValue::from_str(sid).ok()?,
            (value, _) => HeaderValue::from_bytes(value).ok()?,
        };
        if name == header::CONTENT_LENGTH {
            length = value.to_str().ok()?.trim().parse().ok()?;
        }
        builder = builder.header(name, value);
    }
    let rest = &data[head..];
    let length = length.min(rest.len());
    let request = builder.body(Body::from(rest[..length].to_vec())).ok()?;
    Some((request, head + length))
}

/// Checks a JSON body: a JSON-RPC message, or a non-empty batch of them.
fn check_json(body: &[u8]) {
    let value: Value = serde_json::from_slice(body).unwrap_or_else(|e| {
        panic!(
            "a JSON response that is not JSON ({e}): {}",
            String::from_utf8_lossy(body)
        )
    });
    let messages = match &value {
        Value::Array(batch) => batch.iter().collect(),
        one => vec![one],
    };
    for m in messages {
        if let Err(why) = check_message(m) {
            panic!("a malformed JSON-RPC message ({why}): {m}");
        }
    }
}

/// Checks an SSE body: each event's data is one JSON-RPC message, but for a stream's priming
/// event (an id and empty data, for resumption).
fn check_sse(body: &[u8]) {
    let text = std::str::from_utf8(body).expect("an SSE body is UTF-8");
    for event in text.split("\n\n") {
        let data: Vec<&str> = event
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        let data = data.join("\n");
        if data.is_empty() {
            continue;
        }
        let message: Value = serde_json::from_str(&data)
            .unwrap_or_else(|e| panic!("an SSE event that is not JSON ({e}): {data}"));
        if let Err(why) = check_message(&message) {
            panic!("a malformed JSON-RPC message in SSE ({why}): {data}");
        }
    }
}

fn config(byte: u8) -> HttpConfig {
    let mut config = HttpConfig::default();
    config.sessionless = byte & 1 != 0;
    config.sse_responses = byte & 2 != 0;
    if byte & 4 != 0 {
        config = config.with_auth(BearerTokens::new().token("s3cret", "alice"));
    }
    config.body_limit = 1 << 16;
    config
}

fuzz_target!(|data: &[u8]| {
    let Some((&byte, mut rest)) = data.split_first() else {
        return;
    };
    let server = SERVER.get_or_init(plain_server).clone();
    runtime().block_on(async move {
        let router = server.into_router(config(byte));
        let mut session: Option<String> = None;
        for _ in 0..MAX_REQUESTS {
            let Some((request, used)) = parse(rest, session.as_deref()) else {
                break;
            };
            rest = &rest[used..];
            let is_get = request.method() == Method::GET;
            let response = router
                .clone()
                .oneshot(request)
                .await
                .expect("the router is infallible");
            if let Some(sid) = response.headers().get("mcp-session-id") {
                session = sid.to_str().ok().map(str::to_owned);
            }
            let content_type = response
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            if is_get {
                // A GET opens the session's stream, which stays open: not read.
                continue;
            }
            let body = response.into_body();
            // A POST's stream ends with its response, unless the call waits for the client:
            // the paused clock makes this wait end as soon as nothing else can happen.
            let read =
                tokio::time::timeout(Duration::from_secs(60), axum::body::to_bytes(body, 1 << 22));
            let Ok(Ok(bytes)) = read.await else {
                continue;
            };
            if content_type.starts_with("application/json") && !bytes.is_empty() {
                check_json(&bytes);
            } else if content_type.starts_with("text/event-stream") {
                check_sse(&bytes);
            }
        }
    });
});
