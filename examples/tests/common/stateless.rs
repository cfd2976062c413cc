//! A small client of protocol 2026-07-28 (stateless): every request carries `_meta` with the
//! protocol version and the client's capabilities; no `initialize`. Over stdio through
//! [`Proc`]; over Streamable HTTP through [`HttpServer`], a server binary started with
//! `--http 127.0.0.1:0` and spoken to with plain HTTP/1.1 on a `TcpStream`.
//!
//! Every wait is bounded by [`TIMEOUT`]; the HTTP server is killed when dropped.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::{Proc, TIMEOUT};

/// The stateless protocol version.
pub(crate) const V2026_07_28: &str = "2026-07-28";

/// The session-based protocol version the same servers speak.
pub(crate) const V2025_11_25: &str = "2025-11-25";

/// The `_meta` key of the protocol version.
pub(crate) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// The `_meta` key of the client's capabilities.
pub(crate) const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// The `_meta` key of the client's name and version.
pub(crate) const META_CLIENT: &str = "io.modelcontextprotocol/clientInfo";

/// The `_meta` key of the server's name and version on a result.
pub(crate) const META_SERVER: &str = "io.modelcontextprotocol/serverInfo";

/// The `_meta` every 2026-07-28 request carries, declaring `capabilities`.
pub(crate) fn meta_2026(capabilities: Value) -> Value {
    json!({
        META_VERSION: V2026_07_28,
        META_CAPABILITIES: capabilities,
        META_CLIENT: { "name": "integration-tests", "version": "0.0.0" },
    })
}

/// `params` (an object, or `Null` for none) with the request `_meta` of 2026-07-28, declaring
/// no client capability; entries of `params._meta` (a progress token, a log level, other
/// capabilities) win over the defaults.
pub(crate) fn params_2026(params: Value) -> Value {
    let mut params = match params {
        Value::Null => Map::new(),
        Value::Object(m) => m,
        other => panic!("request params must be an object: {other}"),
    };
    let Value::Object(mut meta) = meta_2026(json!({})) else {
        unreachable!("built as an object")
    };
    match params.remove("_meta") {
        None => {}
        Some(Value::Object(given)) => meta.extend(given),
        Some(other) => panic!("`_meta` must be an object: {other}"),
    }
    params.insert("_meta".into(), Value::Object(meta));
    Value::Object(params)
}

/// `params` declaring the client `capabilities` in their `_meta` (the rest of `_meta` is
/// added by [`params_2026`]).
pub(crate) fn with_capabilities(params: Value, capabilities: Value) -> Value {
    let mut params = match params {
        Value::Null => Map::new(),
        Value::Object(m) => m,
        other => panic!("request params must be an object: {other}"),
    };
    let meta = params.entry("_meta").or_insert_with(|| json!({}));
    meta[META_CAPABILITIES] = capabilities;
    Value::Object(params)
}

/// The params of a retry of the request with `params`: the same ones, plus the answers to
/// its input requests and the `requestState` it was given (none when `Null`).
pub(crate) fn retry_params(params: &Value, input_responses: Value, request_state: &Value) -> Value {
    let mut retry = params.clone();
    retry["inputResponses"] = input_responses;
    if !request_state.is_null() {
        retry["requestState"] = request_state.clone();
    }
    retry
}

/// Sends a 2026-07-28 request over stdio (see [`params_2026`]) and returns the messages that
/// came before its response (notifications), and the response.
pub(crate) fn exchange_2026(p: &mut Proc, method: &str, params: Value) -> (Vec<Value>, Value) {
    let id = Value::from(p.next_id());
    p.send_request(&id, method, params_2026(params));
    let (before, response) = p.until_response(&id);
    for m in &before {
        assert!(
            m.get("id").is_none(),
            "a 2026-07-28 server makes no requests of the client: {m}"
        );
    }
    assert!(
        response.get("result").is_some() != response.get("error").is_some(),
        "a response has exactly one of `result` and `error`: {response}"
    );
    (before, response)
}

/// Sends a 2026-07-28 request over stdio and returns its response; a message before it fails
/// the test.
pub(crate) fn request_2026(p: &mut Proc, method: &str, params: Value) -> Value {
    let (before, response) = exchange_2026(p, method, params);
    assert!(
        before.is_empty(),
        "`{method}`: nothing comes before the response: {before:?}"
    );
    response
}

/// Sends a 2026-07-28 request over stdio and returns its `result`, checked to be a complete
/// one ([`assert_complete_2026`]); an error fails the test.
pub(crate) fn result_2026(p: &mut Proc, method: &str, params: Value) -> Value {
    let response = request_2026(p, method, params);
    let result = match response.get("result") {
        Some(r) => r.clone(),
        None => panic!("`{method}` failed: {response}"),
    };
    assert_complete_2026(&result);
    result
}

/// Sends a 2026-07-28 request over stdio and returns its `error`; a result fails the test.
pub(crate) fn error_2026(p: &mut Proc, method: &str, params: Value) -> Value {
    let response = request_2026(p, method, params);
    match response.get("error") {
        Some(e) => {
            assert!(e["code"].is_i64(), "{response}");
            assert!(e["message"].is_string(), "{response}");
            e.clone()
        }
        None => panic!("`{method}` was expected to fail: {response}"),
    }
}

/// Calls a tool with 2026-07-28 (no client capability) and returns its complete result.
pub(crate) fn call_2026(p: &mut Proc, tool: &str, arguments: Value) -> Value {
    result_2026(
        p,
        "tools/call",
        json!({ "name": tool, "arguments": arguments }),
    )
}

/// The tools of a 2026-07-28 `tools/list` (one page, with its cache hints).
pub(crate) fn tools_2026(p: &mut Proc) -> Vec<Value> {
    let list = result_2026(p, "tools/list", Value::Null);
    assert_cache_hints(&list);
    assert!(
        list.get("nextCursor").is_none(),
        "one page expected: {list}"
    );
    list["tools"]
        .as_array()
        .expect("`tools` is an array")
        .clone()
}

/// Asserts what every complete 2026-07-28 result has: `resultType: "complete"`, and the
/// server's name and version in `_meta`.
pub(crate) fn assert_complete_2026(result: &Value) {
    assert_eq!(result["resultType"], "complete", "{result}");
    let info = &result["_meta"][META_SERVER];
    assert!(info["name"].is_string(), "serverInfo in `_meta`: {result}");
    assert!(
        info["version"].is_string(),
        "serverInfo in `_meta`: {result}"
    );
}

/// Asserts the cache hints of a cacheable 2026-07-28 result (lists, reads, discover).
pub(crate) fn assert_cache_hints(result: &Value) {
    assert!(
        result["ttlMs"].is_u64(),
        "`ttlMs` is an integer ≥ 0: {result}"
    );
    assert!(
        matches!(result["cacheScope"].as_str(), Some("public" | "private")),
        "`cacheScope` is public or private: {result}"
    );
}

/// Asserts that `result` is a 2026-07-28 `input_required` result asking exactly one
/// question, of `method`; returns its key, its params and the request state.
pub(crate) fn one_input_request<'a>(
    result: &'a Value,
    method: &str,
) -> (String, &'a Value, &'a Value) {
    assert_eq!(result["resultType"], "input_required", "{result}");
    assert!(
        result.get("ttlMs").is_none() && result.get("cacheScope").is_none(),
        "an input_required result is not cacheable: {result}"
    );
    assert!(
        result.get("content").is_none(),
        "no tool result yet: {result}"
    );
    let requests = result["inputRequests"]
        .as_object()
        .unwrap_or_else(|| panic!("`inputRequests` is an object: {result}"));
    assert_eq!(requests.len(), 1, "one input request: {result}");
    let (key, request) = requests.iter().next().expect("one entry");
    assert!(!key.is_empty(), "{result}");
    assert_eq!(request["method"], method, "{result}");
    assert!(
        request.get("id").is_none() && request.get("jsonrpc").is_none(),
        "an input request is not a JSON-RPC message: {result}"
    );
    let state = &result["requestState"];
    assert!(
        state.as_str().is_some_and(|s| !s.is_empty()),
        "a `requestState` string: {result}"
    );
    (key.clone(), &request["params"], state)
}

/// `state` changed so that its integrity check must fail: one character of its middle
/// replaced (the token keeps its length and alphabet), and the conformance suite's suffix.
pub(crate) fn tampered(state: &Value) -> Vec<Value> {
    let text = state.as_str().expect("a string state");
    let mut bytes = text.as_bytes().to_vec();
    let mid = bytes.len() / 2;
    bytes[mid] = if bytes[mid] == b'A' { b'B' } else { b'A' };
    vec![
        Value::from(String::from_utf8(bytes).expect("ASCII")),
        Value::from(format!("{text}-TAMPERED")),
    ]
}

// ---------------------------------------------------------------------------------------------
// Streamable HTTP

/// A server binary serving Streamable HTTP on a free loopback port. Killed when dropped.
pub(crate) struct HttpServer {
    child: Child,
    stderr: Arc<Mutex<Vec<u8>>>,
    addr: SocketAddr,
    path: String,
    next_id: AtomicI64,
}

/// One HTTP response: its status, its headers (names in lower case), and the JSON-RPC
/// messages of its body (one JSON document, or the events of an SSE stream).
#[derive(Debug)]
pub(crate) struct HttpReply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
    pub(crate) messages: Vec<Value>,
}

impl HttpReply {
    /// The value of a header, if present.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC response in the body (the message with an `id` and no `method`).
    pub(crate) fn response(&self) -> &Value {
        self.messages
            .iter()
            .rev()
            .find(|m| m.get("method").is_none() && m.get("id").is_some())
            .unwrap_or_else(|| panic!("no JSON-RPC response in the reply: {self:?}"))
    }

    /// The messages before the response (notifications on an SSE stream).
    pub(crate) fn notifications(&self) -> Vec<&Value> {
        self.messages
            .iter()
            .filter(|m| m.get("method").is_some())
            .collect()
    }

    /// The `result` of the response; an error fails the test.
    pub(crate) fn result(&self) -> &Value {
        let response = self.response();
        match response.get("result") {
            Some(r) => r,
            None => panic!("expected a result, got {response} (HTTP {})", self.status),
        }
    }

    /// The `error` of the response; a result fails the test.
    pub(crate) fn error(&self) -> &Value {
        let response = self.response();
        match response.get("error") {
            Some(e) => e,
            None => panic!("expected an error, got {response} (HTTP {})", self.status),
        }
    }
}

impl HttpServer {
    /// Starts `bin args… --http 127.0.0.1:0` with these environment variables (and without
    /// the bearer-token and state-key variables of the test's own environment), and waits
    /// (bounded) for it to say where it listens.
    pub(crate) fn start(bin: &str, args: &[&str], env: &[(&str, &str)]) -> HttpServer {
        let mut command = Command::new(bin);
        command
            .args(args)
            .args(["--http", "127.0.0.1:0"])
            .env_remove("MCP_TOOL_BEARER_TOKENS")
            .env_remove("MCP_TOOL_STATE_KEY")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn {bin}: {e}"));
        let mut pipe = child.stderr.take().expect("piped stderr");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let sink = stderr.clone();
        thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => sink
                        .lock()
                        .expect("stderr lock")
                        .extend_from_slice(&chunk[..n]),
                }
            }
        });
        let deadline = Instant::now() + TIMEOUT;
        let url = loop {
            let text = String::from_utf8_lossy(&stderr.lock().expect("stderr lock")).into_owned();
            // Only whole lines: a line still being written may hold half the address.
            let whole = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
            if let Some(url) = whole
                .lines()
                .find_map(|l| l.split_once("MCP endpoint http://").map(|(_, u)| u))
            {
                break url.trim().to_owned();
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("{bin} exited ({status}) before serving; stderr:\n{text}");
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{bin} did not say where it listens within {TIMEOUT:?}; stderr:\n{text}");
            }
            thread::sleep(Duration::from_millis(10));
        };
        let (addr, path) = url.split_once('/').expect("an address and a path");
        HttpServer {
            child,
            stderr,
            addr: addr.parse().expect("a socket address"),
            path: format!("/{path}"),
            next_id: AtomicI64::new(0),
        }
    }

    /// What the server wrote to stderr so far.
    pub(crate) fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().expect("stderr lock")).into_owned()
    }

    /// A fresh request id.
    pub(crate) fn next_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// GETs `path` (a path on the server, not the endpoint) and reads the whole reply.
    pub(crate) fn get(&self, path: &str) -> HttpReply {
        let head = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.addr
        );
        let mut stream = TcpStream::connect_timeout(&self.addr, TIMEOUT)
            .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", self.addr));
        stream
            .write_all(head.as_bytes())
            .unwrap_or_else(|e| panic!("cannot send the request: {e}"));
        stream
            .set_read_timeout(Some(TIMEOUT))
            .expect("a read timeout");
        let mut raw = Vec::new();
        stream
            .read_to_end(&mut raw)
            .unwrap_or_else(|e| panic!("cannot read the reply: {e}"));
        parse_reply(&raw, true, None).expect("a whole reply")
    }

    /// POSTs `body` to the endpoint with these headers (besides Host, Content-Type, Accept
    /// and Content-Length) and reads the reply, up to the response to `body`'s request if it
    /// is one.
    pub(crate) fn post(&self, headers: &[(&str, &str)], body: &Value) -> HttpReply {
        let text = serde_json::to_string(body).expect("serializable");
        let mut head = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.path,
            self.addr,
            text.len()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let deadline = Instant::now() + TIMEOUT;
        let mut stream = TcpStream::connect_timeout(&self.addr, TIMEOUT)
            .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", self.addr));
        stream
            .write_all(head.as_bytes())
            .and_then(|()| stream.write_all(text.as_bytes()))
            .unwrap_or_else(|e| panic!("cannot send the request: {e}"));
        let want = body.get("id").filter(|_| body.get("method").is_some());
        let mut raw = Vec::new();
        let mut chunk = [0u8; 16 * 1024];
        loop {
            if let Some(reply) = parse_reply(&raw, false, want) {
                return reply;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                panic!(
                    "no complete reply within {TIMEOUT:?}; got so far: {:?}; stderr:\n{}",
                    String::from_utf8_lossy(&raw),
                    self.stderr()
                );
            }
            stream.set_read_timeout(Some(left)).expect("a read timeout");
            match stream.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => raw.extend_from_slice(&chunk[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => panic!("cannot read the reply: {e}"),
            }
        }
        parse_reply(&raw, true, want).unwrap_or_else(|| {
            panic!(
                "the connection ended before a complete reply: {:?}",
                String::from_utf8_lossy(&raw)
            )
        })
    }

    /// Sends a 2026-07-28 request (see [`params_2026`]) with the headers that protocol
    /// needs — `MCP-Protocol-Version`, `Mcp-Method`, and `Mcp-Name` for `tools/call`,
    /// `prompts/get` and `resources/read` — and a bearer token when given.
    pub(crate) fn request_2026(
        &self,
        token: Option<&str>,
        method: &str,
        params: Value,
    ) -> HttpReply {
        let params = params_2026(params);
        let name = match method {
            "tools/call" | "prompts/get" => params["name"].as_str(),
            "resources/read" => params["uri"].as_str(),
            _ => None,
        }
        .map(str::to_owned);
        let authorization = token.map(|t| format!("Bearer {t}"));
        let mut headers = vec![
            ("MCP-Protocol-Version", V2026_07_28),
            ("Mcp-Method", method),
        ];
        if let Some(name) = &name {
            headers.push(("Mcp-Name", name));
        }
        if let Some(a) = &authorization {
            headers.push(("Authorization", a));
        }
        let body =
            json!({ "jsonrpc": "2.0", "id": self.next_id(), "method": method, "params": params });
        let reply = self.post(&headers, &body);
        if reply.status == 200 {
            assert_eq!(
                reply.response()["id"],
                body["id"],
                "the response answers the request: {reply:?}"
            );
        }
        reply
    }

    /// Sends a 2025-11-25 request on a session (none for `initialize`) with a bearer token
    /// when given.
    pub(crate) fn request_2025(
        &self,
        session: Option<&str>,
        token: Option<&str>,
        method: &str,
        params: Value,
    ) -> HttpReply {
        let authorization = token.map(|t| format!("Bearer {t}"));
        let mut headers = Vec::new();
        if method != "initialize" {
            headers.push(("MCP-Protocol-Version", V2025_11_25));
        }
        if let Some(s) = session {
            headers.push(("Mcp-Session-Id", s));
        }
        if let Some(a) = &authorization {
            headers.push(("Authorization", a));
        }
        let mut body = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        if !method.starts_with("notifications/") {
            body["id"] = Value::from(self.next_id());
        }
        self.post(&headers, &body)
    }

    /// Opens a 2025-11-25 session (`initialize`, then `notifications/initialized`) declaring
    /// the client `capabilities`; returns its id.
    pub(crate) fn session_2025(&self, token: Option<&str>, capabilities: Value) -> String {
        let reply = self.request_2025(
            None,
            token,
            "initialize",
            json!({
                "protocolVersion": V2025_11_25,
                "capabilities": capabilities,
                "clientInfo": { "name": "integration-tests", "version": "0.0.0" }
            }),
        );
        assert_eq!(reply.status, 200, "{reply:?}");
        assert_eq!(reply.result()["protocolVersion"], V2025_11_25, "{reply:?}");
        let session = reply
            .header("mcp-session-id")
            .unwrap_or_else(|| panic!("a session id: {reply:?}"))
            .to_owned();
        let reply = self.request_2025(
            Some(&session),
            token,
            "notifications/initialized",
            json!({}),
        );
        assert_eq!(reply.status, 202, "{reply:?}");
        session
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Parses the reply read so far: `None` while it is incomplete. Complete means: the body
/// ended (its length, its last chunk, or `eof`), or, for an SSE stream, the response to the
/// request with id `want` arrived.
fn parse_reply(raw: &[u8], eof: bool, want: Option<&Value>) -> Option<HttpReply> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..end]).expect("an ASCII head");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().expect("a status line");
    let status: u16 = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a status code: {status_line:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let rest = &raw[end + 4..];
    let (body, complete) = if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        dechunk(rest)
    } else if let Some(length) = header("content-length") {
        let length: usize = length.parse().expect("a content length");
        let complete = rest.len() >= length;
        (rest[..rest.len().min(length)].to_vec(), complete)
    } else {
        (rest.to_vec(), false)
    };
    let complete = complete || eof;
    let body = String::from_utf8(body).expect("a UTF-8 body");
    let sse = header("content-type").is_some_and(|v| v.starts_with("text/event-stream"));
    let messages = if sse {
        sse_messages(&body, complete)
    } else if complete && !body.trim().is_empty() {
        match serde_json::from_str::<Value>(&body) {
            Ok(v) => vec![v],
            Err(_) => Vec::new(),
        }
    } else {
        Vec::new()
    };
    let answered = want.is_some_and(|id| {
        messages
            .iter()
            .any(|m| m.get("method").is_none() && m["id"] == *id)
    });
    (complete || (sse && answered)).then_some(HttpReply {
        status,
        headers,
        body,
        messages,
    })
}

/// The body of a chunked transfer so far, and whether its last chunk came.
fn dechunk(mut rest: &[u8]) -> (Vec<u8>, bool) {
    let mut body = Vec::new();
    loop {
        let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") else {
            return (body, false);
        };
        let size_text = std::str::from_utf8(&rest[..line_end]).expect("an ASCII chunk size");
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .unwrap_or_else(|_| panic!("a chunk size: {size_text:?}"));
        if size == 0 {
            return (body, true);
        }
        let start = line_end + 2;
        if rest.len() < start + size + 2 {
            return (body, false);
        }
        body.extend_from_slice(&rest[start..start + size]);
        rest = &rest[start + size + 2..];
    }
}

/// The JSON messages of the complete events of an SSE stream (each event's `data:` lines
/// joined); the last event counts only when the stream is `complete`.
fn sse_messages(body: &str, complete: bool) -> Vec<Value> {
    let body = body.replace("\r\n", "\n");
    let mut events: Vec<&str> = body.split("\n\n").collect();
    if !complete {
        events.pop();
    }
    events
        .iter()
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            let text = data.join("\n");
            // A stream's priming event (an id and empty data, for resumption) carries no
            // message.
            if text.trim().is_empty() {
                return None;
            }
            Some(
                serde_json::from_str(&text)
                    .unwrap_or_else(|e| panic!("an SSE event that is not JSON ({e}): {text:?}")),
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// One scenario, both versions

/// A protocol version: the session-based 2025-11-25, or the stateless 2026-07-28.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    /// 2025-11-25: `initialize` first, the session remembers the client.
    V2025_11_25,
    /// 2026-07-28: no handshake, every request says who the client is.
    V2026_07_28,
}

/// A server spoken to over stdio in one version, so that one scenario runs in both.
pub(crate) struct VersionClient {
    pub(crate) p: Proc,
    pub(crate) version: Version,
    /// The client's capabilities: declared by `initialize`, or by each request's `_meta`.
    pub(crate) capabilities: Value,
}

impl VersionClient {
    /// Spawns `bin args…`; in 2025-11-25 completes the handshake declaring `capabilities`
    /// (in 2026-07-28 each request declares them).
    pub(crate) fn start(
        bin: &str,
        args: &[&str],
        version: Version,
        capabilities: Value,
    ) -> VersionClient {
        let p = match version {
            Version::V2025_11_25 => Proc::initialized_with(bin, args, capabilities.clone()),
            Version::V2026_07_28 => Proc::spawn_args(bin, args),
        };
        VersionClient {
            p,
            version,
            capabilities,
        }
    }

    /// The messages before the response to a request, and the response. In 2026-07-28 the
    /// params get their `_meta` ([`params_2026`]) with the client's capabilities (unless
    /// they declare their own).
    pub(crate) fn exchange(&mut self, method: &str, params: Value) -> (Vec<Value>, Value) {
        match self.version {
            Version::V2025_11_25 => {
                let id = Value::from(self.p.next_id());
                self.p.send_request(&id, method, params);
                self.p.until_response(&id)
            }
            Version::V2026_07_28 => {
                let declared = params["_meta"].get(META_CAPABILITIES).is_some();
                let params = if declared {
                    params
                } else {
                    with_capabilities(params, self.capabilities.clone())
                };
                exchange_2026(&mut self.p, method, params)
            }
        }
    }

    /// The result of a request (nothing may come before it), checked for the version's shape:
    /// without `resultType` in 2025-11-25, complete with the server's identity in
    /// 2026-07-28.
    pub(crate) fn result(&mut self, method: &str, params: Value) -> Value {
        let (before, response) = self.exchange(method, params);
        assert!(before.is_empty(), "`{method}`: {before:?}");
        let result = match response.get("result") {
            Some(r) => r.clone(),
            None => panic!("`{method}` failed ({:?}): {response}", self.version),
        };
        match self.version {
            Version::V2025_11_25 => assert!(
                result.get("resultType").is_none(),
                "no `resultType` before 2026-07-28: {result}"
            ),
            Version::V2026_07_28 => assert_complete_2026(&result),
        }
        result
    }

    /// The error of a request that must fail.
    pub(crate) fn error(&mut self, method: &str, params: Value) -> Value {
        let (_, response) = self.exchange(method, params);
        match response.get("error") {
            Some(e) => {
                assert!(e["code"].is_i64(), "{response}");
                e.clone()
            }
            None => panic!(
                "`{method}` was expected to fail ({:?}): {response}",
                self.version
            ),
        }
    }

    /// Calls a tool and returns its result.
    pub(crate) fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.result(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        )
    }

    /// The listed tools (one page; with cache hints in 2026-07-28).
    pub(crate) fn tools(&mut self) -> Vec<Value> {
        let list = self.result("tools/list", json!({}));
        if self.version == Version::V2026_07_28 {
            assert_cache_hints(&list);
        }
        assert!(
            list.get("nextCursor").is_none(),
            "one page expected: {list}"
        );
        list["tools"]
            .as_array()
            .expect("`tools` is an array")
            .clone()
    }
}

/// The tools of `bin args…` as each version lists them, asserted identical (same names in the
/// same order, same schemas, annotations and `_meta`; only 2025's `execution` differs);
/// returns them.
pub(crate) fn same_tools_in_both_versions(bin: &str, args: &[&str]) -> Vec<Value> {
    let tools_2025 = VersionClient::start(bin, args, Version::V2025_11_25, json!({})).tools();
    let tools_2026 = VersionClient::start(bin, args, Version::V2026_07_28, json!({})).tools();
    let names = |tools: &[Value]| -> Vec<String> {
        tools
            .iter()
            .map(|t| t["name"].as_str().expect("a name").to_owned())
            .collect()
    };
    assert_eq!(
        names(&tools_2025),
        names(&tools_2026),
        "the same tools, in order"
    );
    for (l, m) in tools_2025.iter().zip(&tools_2026) {
        // 2025-11-25 says whether a tool runs as a task (`execution`); 2026-07-28 has no such
        // field (the server decides per call).
        let mut l = l.clone();
        if let Some(execution) = l.as_object_mut().and_then(|t| t.remove("execution")) {
            assert!(
                execution["taskSupport"].is_string(),
                "`{}`: {execution}",
                l["name"]
            );
        }
        assert_eq!(
            &l, m,
            "`{}` is described the same in both versions",
            l["name"]
        );
    }
    tools_2026
}
