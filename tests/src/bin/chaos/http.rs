//! The driver's HTTP: one HTTP/1.0 connection per request to nginx (no chunked encoding, no
//! connection reuse to reason about when a replica dies), every wait bounded, and each way a
//! request can fail named as the kind the report counts.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub(crate) const V2026_07_28: &str = "2026-07-28";
pub(crate) const V2025_11_25: &str = "2025-11-25";
pub(crate) const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Where requests go, and how long one may take.
#[derive(Clone)]
pub(crate) struct Endpoint {
    /// `host:port` of nginx.
    pub(crate) addr: String,
    pub(crate) path: String,
    pub(crate) timeout: Duration,
}

/// An answer: the status, the session id, the JSON-RPC messages of its body.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) session: Option<String>,
    pub(crate) messages: Vec<Value>,
}

impl Reply {
    /// The response (the last message with an id and no method).
    pub(crate) fn response(&self) -> Option<&Value> {
        self.messages
            .iter()
            .rev()
            .find(|m| m.get("method").is_none() && m.get("id").is_some())
    }
}

/// The messages of a body: one JSON document, or the `data:` lines of SSE events.
pub(crate) fn messages(body: &str) -> Vec<Value> {
    let body = body.trim();
    if body.starts_with('{') {
        return serde_json::from_str(body).into_iter().collect();
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

/// An answer's head read, its connection open on the body.
pub(crate) struct Open {
    pub(crate) status: u16,
    pub(crate) session: Option<String>,
    pub(crate) stream: TcpStream,
    /// Body bytes read with the head.
    pub(crate) rest: Vec<u8>,
}

impl Endpoint {
    pub(crate) fn new(url: &str, timeout: Duration) -> Result<Endpoint, String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("`{url}` is not an http:// URL"))?;
        let (addr, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        Ok(Endpoint {
            addr: addr.to_owned(),
            path: path.to_owned(),
            timeout,
        })
    }

    /// Sends a request and reads the head of its answer.
    pub(crate) async fn open(
        &self,
        method: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Result<Open, String> {
        tokio::time::timeout(self.timeout, self.open_unbounded(method, headers, body))
            .await
            .map_err(|_| "timeout".to_owned())?
    }

    async fn open_unbounded(
        &self,
        method: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Result<Open, String> {
        let mut stream = TcpStream::connect(&self.addr)
            .await
            .map_err(|e| format!("connect: {:?}", e.kind()))?;
        let mut head = format!(
            "{method} {} HTTP/1.0\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.path,
            self.addr,
            body.len()
        );
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        head.push_str(body);
        stream
            .write_all(head.as_bytes())
            .await
            .map_err(|e| format!("send: {:?}", e.kind()))?;
        let mut raw = Vec::new();
        let mut chunk = [0u8; 8192];
        let end = loop {
            if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                break i;
            }
            let n = stream
                .read(&mut chunk)
                .await
                .map_err(|e| format!("read: {:?}", e.kind()))?;
            if n == 0 {
                return Err("closed before an answer".into());
            }
            raw.extend_from_slice(&chunk[..n]);
            if raw.len() > 64 * 1024 {
                return Err("an answer head over 64 KiB".into());
            }
        };
        let head = String::from_utf8_lossy(&raw[..end]).into_owned();
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| "not an HTTP answer".to_owned())?;
        let session = head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("mcp-session-id")
                .then(|| v.trim().to_owned())
        });
        Ok(Open {
            status,
            session,
            stream,
            rest: raw[end + 4..].to_vec(),
        })
    }

    /// Sends a request and reads its whole answer. `Err` names what failed: no connection, no
    /// answer in time, a body cut short (a 200 stream without its response).
    pub(crate) async fn request(
        &self,
        method: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Result<Reply, String> {
        tokio::time::timeout(self.timeout, async {
            let mut open = self.open_unbounded(method, headers, body).await?;
            let mut body = std::mem::take(&mut open.rest);
            open.stream
                .read_to_end(&mut body)
                .await
                .map_err(|e| format!("read: {:?}", e.kind()))?;
            let text = String::from_utf8_lossy(&body);
            let messages = messages(&text);
            if method == "POST"
                && open.status == 200
                && !messages
                    .iter()
                    .any(|m| m.get("id").is_some() && m.get("method").is_none())
            {
                return Err("a stream that ended without its answer".into());
            }
            Ok(Reply {
                status: open.status,
                session: open.session,
                messages,
            })
        })
        .await
        .map_err(|_| "timeout".to_owned())?
    }
}

/// A 2026-07-28 request's `_meta`, declaring elicitation and the tasks extension.
pub(crate) fn meta_2026() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": V2026_07_28,
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": { TASKS_EXTENSION: {} }
        },
        "io.modelcontextprotocol/clientInfo": { "name": "chaos", "version": "0.0.0" },
    })
}

/// The body and headers of a 2026-07-28 request.
pub(crate) fn body_2026(
    id: u64,
    method: &str,
    mut params: Value,
) -> (String, Vec<(String, String)>) {
    params["_meta"] = meta_2026();
    let name = params["name"]
        .as_str()
        .or(params["taskId"].as_str())
        .or(params["uri"].as_str())
        .unwrap_or_default()
        .to_owned();
    let mut headers = vec![
        ("MCP-Protocol-Version".to_owned(), V2026_07_28.to_owned()),
        ("Mcp-Method".to_owned(), method.to_owned()),
    ];
    if !name.is_empty() {
        headers.push(("Mcp-Name".to_owned(), name));
    }
    let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
    (body.to_string(), headers)
}

/// A 2026-07-28 request.
pub(crate) async fn request_2026(
    endpoint: &Endpoint,
    id: u64,
    method: &str,
    params: Value,
) -> Result<Reply, String> {
    let (body, headers) = body_2026(id, method, params);
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    endpoint.request("POST", &headers, &body).await
}

/// A 2025-11-25 request (or notification, without `id`) in `session`.
pub(crate) async fn request_2025(
    endpoint: &Endpoint,
    session: Option<&str>,
    id: Option<u64>,
    method: &str,
    params: Value,
) -> Result<Reply, String> {
    let mut headers = Vec::new();
    if let Some(s) = session {
        headers.push(("Mcp-Session-Id", s));
        headers.push(("MCP-Protocol-Version", V2025_11_25));
    }
    let mut body = json!({ "jsonrpc": "2.0", "method": method, "params": params });
    if let Some(id) = id {
        body["id"] = json!(id);
    }
    endpoint.request("POST", &headers, &body.to_string()).await
}

/// Opens a 2025-11-25 session (`initialize`, then `notifications/initialized`).
pub(crate) async fn session_2025(endpoint: &Endpoint) -> Result<String, String> {
    let reply = request_2025(
        endpoint,
        None,
        Some(0),
        "initialize",
        json!({
            "protocolVersion": V2025_11_25,
            "capabilities": { "tasks": {} },
            "clientInfo": { "name": "chaos", "version": "0.0.0" }
        }),
    )
    .await?;
    let result = outcome(&reply)?;
    if result["protocolVersion"] != V2025_11_25 {
        return Err("initialize: another version".into());
    }
    let session = reply
        .session
        .ok_or_else(|| "initialize: no session id".to_owned())?;
    let note = request_2025(
        endpoint,
        Some(&session),
        None,
        "notifications/initialized",
        json!({}),
    )
    .await?;
    if note.status != 202 {
        return Err(format!("HTTP {}", note.status));
    }
    Ok(session)
}

/// A reply's result, or the kind of failure it is: an HTTP status, a JSON-RPC error (code and
/// the message's gist), a tool's error (its code).
pub(crate) fn outcome(reply: &Reply) -> Result<&Value, String> {
    let Some(response) = reply.response() else {
        return Err(format!("HTTP {}", reply.status));
    };
    // An error may come with a 4xx status (2026-07-28): the JSON-RPC error says more.
    if let Some(error) = response.get("error") {
        let code = error["code"].as_i64().unwrap_or_default();
        return Err(format!(
            "JSON-RPC {code} {}",
            gist(error["message"].as_str().unwrap_or(""))
        ));
    }
    if reply.status != 200 {
        return Err(format!("HTTP {}", reply.status));
    }
    let result = response
        .get("result")
        .ok_or_else(|| "a response without result".to_owned())?;
    if result["isError"] == true {
        return Err(tool_error(result));
    }
    Ok(result)
}

/// The code of a tool's error result (`_meta["dev.mcp-tool/error"].code`), else its text's
/// gist.
pub(crate) fn tool_error(result: &Value) -> String {
    match result["_meta"]["dev.mcp-tool/error"]["code"].as_str() {
        Some(code) => code.to_owned(),
        None => format!("tool error {}", gist(&text(result))),
    }
}

/// A message without what differs from one request to the next (ids in backquotes, numbers),
/// cut to its first clause: errors of one kind count together.
pub(crate) fn gist(message: &str) -> String {
    // `[CODE] what happened`: the code says it.
    if let Some(code) = message
        .strip_prefix('[')
        .and_then(|m| m.split_once(']'))
        .map(|(code, _)| code)
        .filter(|c| !c.is_empty() && c.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
    {
        return code.to_owned();
    }
    let mut out = String::new();
    let mut quoted = false;
    for c in message.chars() {
        match c {
            '`' => {
                quoted = !quoted;
                if quoted {
                    out.push('…');
                }
            }
            _ if quoted => {}
            '0'..='9' => {
                if !out.ends_with('#') {
                    out.push('#');
                }
            }
            _ => out.push(c),
        }
    }
    let cut = out
        .find([';', '(', '\n'])
        .map_or(out.as_str(), |i| &out[..i]);
    cut.trim().chars().take(60).collect()
}

/// The text of a result's first content block.
pub(crate) fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}
