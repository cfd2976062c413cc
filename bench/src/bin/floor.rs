//! `floor`: the least work an MCP stdio server can do for the benchmark's two tools. A
//! single-threaded serde_json line loop: it reads stdin lines, answers `initialize`, `ping`,
//! `tools/list` (a fixed text) and `tools/call` of `add` and `create_user` (arguments checked
//! by hand against the same constraints mcp-tool's schema states), and writes stdout lines
//! through a buffered writer that is flushed only when no more input is waiting.
//!
//! `floor --http ADDR [--sessionless] [--sse]`: the same answers over raw hyper, the least work
//! a Streamable HTTP server on the SDKs' HTTP stack can do: hyper's HTTP/1.1 connections on a
//! multi-thread tokio runtime, no router and no middleware; each POST body is read whole,
//! parsed as one JSON-RPC message and answered in one body. Without `--sessionless` an
//! `initialize` answer carries an `Mcp-Session-Id` (not checked later); notifications get 202;
//! `--sse` answers each request as a one-event `text/event-stream` (what a session-mode SDK
//! server sends), else `application/json`.

use std::collections::HashMap;
use std::io::{self, BufRead, BufWriter, Write};
use std::sync::atomic::{AtomicU64, Ordering};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

use mcp_tool_bench::{UserIds, is_email, now_rfc3339};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a str>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Initialize<'a> {
    #[serde(rename = "protocolVersion", borrow)]
    protocol_version: &'a str,
}

#[derive(Deserialize)]
struct Call<'a> {
    #[serde(borrow)]
    name: &'a str,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Add {
    a: i64,
    b: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateUser {
    email: String,
    name: String,
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    metadata: Option<HashMap<String, String>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct User<'a> {
    id: String,
    email: &'a str,
    name: &'a str,
    role: &'a str,
    created_at: String,
}

#[derive(Serialize)]
struct Text<'a> {
    r#type: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CallResult<'a, S> {
    content: [Text<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    structured_content: Option<&'a S>,
    is_error: bool,
}

const SUPPORTED: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

const TOOLS: &str = r#"{"tools":[{"name":"add","description":"Add two integers.","inputSchema":{"type":"object","properties":{"a":{"type":"integer","format":"int64"},"b":{"type":"integer","format":"int64"}},"required":["a","b"],"additionalProperties":false},"annotations":{"readOnlyHint":true,"idempotentHint":true}},{"name":"create_user","title":"Create User Account","description":"Create a new user account with the provided details. Returns the created user object with generated ID.","inputSchema":{"type":"object","properties":{"email":{"type":"string","format":"email","description":"Valid email address for the account"},"name":{"type":"string","minLength":2,"maxLength":100,"description":"Full name of the user"},"role":{"type":"string","enum":["user","admin","moderator"],"default":"user","description":"User role determining access permissions"},"metadata":{"type":["object","null"],"additionalProperties":{"type":"string"},"description":"Additional key-value pairs for custom attributes"}},"required":["email","name"],"additionalProperties":false},"outputSchema":{"type":"object","properties":{"id":{"type":"string"},"email":{"type":"string"},"name":{"type":"string"},"role":{"type":"string"},"createdAt":{"type":"string"}},"required":["id","email","name","role","createdAt"]},"annotations":{"title":"Create User Account","readOnlyHint":false,"destructiveHint":false,"idempotentHint":false,"openWorldHint":false}}]}"#;

struct Floor {
    ids: UserIds,
}

impl Floor {
    /// Writes the response to one request (`id` is its JSON text).
    fn request(&self, out: &mut impl Write, id: &str, method: &str, params: Option<&RawValue>) {
        let _ = match method {
            "initialize" => {
                let asked = params
                    .and_then(|p| serde_json::from_str::<Initialize<'_>>(p.get()).ok())
                    .map(|p| p.protocol_version);
                let version = asked
                    .filter(|v| SUPPORTED.contains(v))
                    .unwrap_or(SUPPORTED[0]);
                writeln!(
                    out,
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"{version}","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"floor","version":"0.1.0"}}}}}}"#
                )
            }
            "ping" => writeln!(out, r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
            "tools/list" => writeln!(out, r#"{{"jsonrpc":"2.0","id":{id},"result":{TOOLS}}}"#),
            "tools/call" => {
                match params.and_then(|p| serde_json::from_str::<Call<'_>>(p.get()).ok()) {
                    Some(call) => self.call(out, id, call),
                    None => error(out, id, -32602, "Invalid params"),
                }
            }
            _ => error(out, id, -32601, "Method not found"),
        };
    }

    fn call(&self, out: &mut impl Write, id: &str, call: Call<'_>) -> io::Result<()> {
        let args = call.arguments.map_or("{}", RawValue::get);
        match call.name {
            "add" => match serde_json::from_str::<Add>(args) {
                Ok(Add { a, b }) => {
                    let text = a.wrapping_add(b).to_string();
                    result::<()>(out, id, &text, None, false)
                }
                Err(e) => result::<()>(out, id, &format!("Invalid arguments: {e}"), None, true),
            },
            "create_user" => {
                let input = match serde_json::from_str::<CreateUser>(args) {
                    Ok(input) => input,
                    Err(e) => {
                        return result::<()>(
                            out,
                            id,
                            &format!("Invalid arguments: {e}"),
                            None,
                            true,
                        );
                    }
                };
                let role = input.role.as_deref().unwrap_or("user");
                let len = input.name.chars().count();
                let problem = if !is_email(&input.email) {
                    Some("email: not a valid email")
                } else if !(2..=100).contains(&len) {
                    Some("name: must be 2 to 100 characters")
                } else if !matches!(role, "user" | "admin" | "moderator") {
                    Some("role: must be one of user, admin, moderator")
                } else {
                    None
                };
                if let Some(problem) = problem {
                    return result::<()>(out, id, problem, None, true);
                }
                let user = User {
                    id: self.ids.next(),
                    email: &input.email,
                    name: &input.name,
                    role,
                    created_at: now_rfc3339(),
                };
                let text = serde_json::to_string(&user).map_err(io::Error::other)?;
                result(out, id, &text, Some(&user), false)
            }
            other => error(out, id, -32602, &format!("Unknown tool: {other}")),
        }
    }
}

fn result<S: Serialize>(
    out: &mut impl Write,
    id: &str,
    text: &str,
    structured: Option<&S>,
    is_error: bool,
) -> io::Result<()> {
    write!(out, r#"{{"jsonrpc":"2.0","id":{id},"result":"#)?;
    let body = CallResult {
        content: [Text {
            r#type: "text",
            text,
        }],
        structured_content: structured,
        is_error,
    };
    serde_json::to_writer(&mut *out, &body).map_err(io::Error::other)?;
    out.write_all(b"}\n")
}

fn error(out: &mut impl Write, id: &str, code: i64, message: &str) -> io::Result<()> {
    write!(
        out,
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":"#
    )?;
    serde_json::to_writer(&mut *out, message).map_err(io::Error::other)?;
    out.write_all(b"}}\n")
}

/// How the HTTP floor answers.
#[derive(Clone, Copy)]
struct HttpMode {
    sessions: bool,
    sse: bool,
}

/// What every connection of the HTTP floor shares.
struct Shared {
    floor: Floor,
    mode: HttpMode,
    /// The last `Mcp-Session-Id` number given.
    sessions: AtomicU64,
}

/// Serves HTTP/1.1 on `addr` with hyper on a multi-thread tokio runtime (a worker per core the
/// process may run on, as the SDK servers have it): each keep-alive connection is a hyper
/// `http1` connection task, each request one call of [`answer`].
fn serve_http(floor: Floor, addr: &str, mode: HttpMode) -> io::Result<()> {
    // Lives as long as the process: no reference count per request.
    let shared: &'static Shared = Box::leak(Box::new(Shared {
        floor,
        mode,
        sessions: AtomicU64::new(0),
    }));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_io()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        loop {
            let (stream, _) = listener.accept().await?;
            stream.set_nodelay(true)?;
            tokio::spawn(async move {
                let service = service_fn(move |request| answer(shared, request));
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}

/// One request: its body read whole and parsed as one JSON-RPC message, the answer in one
/// body (JSON, or a one-event SSE stream), 202 for a notification.
async fn answer(
    shared: &Shared,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    if request.method() != Method::POST {
        let mut response = Response::new(Full::new(Bytes::new()));
        *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
        return Ok(response);
    }
    let body = request.into_body().collect().await?.to_bytes();
    let mut answer = Vec::with_capacity(512);
    let mut session = None;
    match serde_json::from_slice::<Message<'_>>(&body) {
        Ok(Message {
            id: Some(id),
            method: Some(method),
            params,
        }) => {
            if shared.mode.sse {
                answer.extend_from_slice(b"event: message\ndata: ");
            }
            shared.floor.request(&mut answer, id.get(), method, params);
            if shared.mode.sessions && method == "initialize" {
                session = Some(shared.sessions.fetch_add(1, Ordering::Relaxed) + 1);
            }
        }
        Ok(_) => {}
        Err(_) => {
            if shared.mode.sse {
                answer.extend_from_slice(b"event: message\ndata: ");
            }
            let _ = error(&mut answer, "null", -32700, "Parse error");
        }
    }
    if answer.is_empty() {
        let mut response = Response::new(Full::new(Bytes::new()));
        *response.status_mut() = StatusCode::ACCEPTED;
        return Ok(response);
    }
    // The floor's writers end each message with a newline; an SSE event ends with two.
    let kind = if shared.mode.sse {
        answer.push(b'\n');
        "text/event-stream"
    } else {
        answer.pop();
        "application/json"
    };
    let mut response = Response::new(Full::new(Bytes::from(answer)));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(kind));
    if let Some(n) = session
        && let Ok(value) = HeaderValue::from_str(&format!("floor-{n}"))
    {
        headers.insert("mcp-session-id", value);
    }
    Ok(response)
}

fn main() -> io::Result<()> {
    let floor = Floor {
        ids: UserIds::default(),
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(at) = args.iter().position(|a| a == "--http") {
        let addr = args
            .get(at + 1)
            .ok_or_else(|| io::Error::other("--http needs an address"))?;
        let mode = HttpMode {
            sessions: !args.iter().any(|a| a == "--sessionless"),
            sse: args.iter().any(|a| a == "--sse"),
        };
        return serve_http(floor, addr, mode);
    }
    let stdin = io::stdin();
    let mut input = io::BufReader::with_capacity(64 * 1024, stdin.lock());
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut line = String::new();
    loop {
        // Flush only when idle: nothing more is buffered, so the next read may block.
        if input.buffer().is_empty() {
            out.flush()?;
        }
        line.clear();
        if input.read_line(&mut line)? == 0 {
            break;
        }
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        match serde_json::from_str::<Message<'_>>(text) {
            Ok(Message {
                id: Some(id),
                method: Some(method),
                params,
            }) => floor.request(&mut out, id.get(), method, params),
            // Notifications (`notifications/initialized`, …) and responses need no answer.
            Ok(_) => {}
            Err(_) => {
                let _ = error(&mut out, "null", -32700, "Parse error");
            }
        }
    }
    out.flush()
}
