//! The wire: JSON-RPC 2.0 framing and the MCP revisions this server speaks.
//!
//! Tools never see these types. Everything revision-specific (version negotiation, how a
//! result is shaped) is decided here from [`ProtocolVersion`], so a later revision is a new
//! arm here rather than a change to any tool.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A revision of the MCP specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2024-11-05.
    V2024_11_05,
    /// 2025-03-26.
    V2025_03_26,
    /// 2025-06-18.
    V2025_06_18,
    /// 2025-11-25, the latest revision with an `initialize` handshake.
    #[default]
    V2025_11_25,
}

impl ProtocolVersion {
    /// The newest revision this server speaks.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// Every revision this server speaks, newest first.
    pub const SUPPORTED: [ProtocolVersion; 4] = [
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2024_11_05,
    ];

    /// The revision's date string.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
        }
    }

    /// Parses a revision's date string.
    pub fn parse(s: &str) -> Option<ProtocolVersion> {
        Self::SUPPORTED.into_iter().find(|v| v.as_str() == s)
    }

    /// The answer to a client asking for `requested`: that revision when supported, otherwise
    /// the latest.
    pub fn negotiate(requested: &str) -> ProtocolVersion {
        Self::parse(requested).unwrap_or(Self::LATEST)
    }
}

/// The shapes of tools and results differ between revisions; each era is one shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// 2024-11-05: no annotations, titles, output schemas or structured content.
    First,
    /// 2025-03-26: annotations, but no titles, output schemas or structured content.
    Annotations,
    /// 2025-06-18 and 2025-11-25: everything.
    Structured,
}

impl Era {
    pub(crate) const ALL: [Era; 3] = [Era::First, Era::Annotations, Era::Structured];

    pub(crate) fn of(version: ProtocolVersion) -> Era {
        match version {
            ProtocolVersion::V2024_11_05 => Era::First,
            ProtocolVersion::V2025_03_26 => Era::Annotations,
            ProtocolVersion::V2025_06_18 | ProtocolVersion::V2025_11_25 => Era::Structured,
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// A tool's `tools/list` entry as this era knows it.
    pub(crate) fn shape_tool(self, tool: &Value) -> Value {
        let mut tool = tool.clone();
        if let (Some(m), true) = (tool.as_object_mut(), self != Era::Structured) {
            m.remove("title");
            m.remove("outputSchema");
            if self == Era::First {
                m.remove("annotations");
            } else if let Some(Value::Object(a)) = m.get_mut("annotations") {
                a.remove("title");
            }
        }
        tool
    }

    /// A `CallToolResult` as this era knows it: no structured content before 2025-06-18, and
    /// blocks the era lacks (audio before 2025-03-26, resource links before 2025-06-18)
    /// described in text instead.
    pub(crate) fn shape_result(self, result: &mut Value) {
        if self == Era::Structured {
            return;
        }
        let Some(m) = result.as_object_mut() else {
            return;
        };
        m.remove("structuredContent");
        if let Some(Value::Array(blocks)) = m.get_mut("content") {
            for block in blocks {
                let text = match block.get("type").and_then(Value::as_str) {
                    Some("audio") if self == Era::First => format!(
                        "[audio ({}) not shown: this client's protocol version has no audio]",
                        block["mimeType"].as_str().unwrap_or("?")
                    ),
                    Some("resource_link") => format!(
                        "Resource: {} <{}>",
                        block["name"].as_str().unwrap_or(""),
                        block["uri"].as_str().unwrap_or("")
                    ),
                    _ => continue,
                };
                *block = serde_json::json!({ "type": "text", "text": text });
            }
        }
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// JSON-RPC error codes.
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
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The error code.
    pub code: i64,
    /// The message.
    pub message: String,
    /// Optional data.
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

    pub(crate) fn to_json(&self) -> Value {
        let mut m = Map::with_capacity(3);
        m.insert("code".into(), Value::from(self.code));
        m.insert("message".into(), Value::String(self.message.clone()));
        if let Some(d) = &self.data {
            m.insert("data".into(), d.clone());
        }
        Value::Object(m)
    }

    /// Reads an error object.
    pub fn from_json(v: &Value) -> Self {
        RpcError {
            code: v
                .get("code")
                .and_then(Value::as_i64)
                .unwrap_or(code::INTERNAL_ERROR),
            message: v
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            data: v.get("data").cloned(),
        }
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JSON-RPC error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for RpcError {}

/// One incoming message, borrowed from the line it was read from.
#[derive(Deserialize)]
pub(crate) struct Incoming<'a> {
    #[serde(borrow, default)]
    pub(crate) jsonrpc: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "raw_present")]
    pub(crate) id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) method: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "raw_present")]
    pub(crate) params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "raw_present")]
    pub(crate) result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "raw_present")]
    pub(crate) error: Option<&'a RawValue>,
}

/// Keeps a present field even when it is `null` (so `"id": null` is not taken for a missing id).
fn raw_present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// What an incoming line turned out to be.
pub(crate) enum Message<'a> {
    Request {
        id: &'a RawValue,
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    Notification {
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    Response {
        id: &'a RawValue,
        outcome: Result<&'a RawValue, &'a RawValue>,
    },
}

/// Parses one line into a message, or the error response to send back.
pub(crate) fn parse(line: &[u8]) -> Result<Message<'_>, String> {
    // serde would also read a struct from a JSON array: only an object is a message.
    if line.trim_ascii_start().first() != Some(&b'{') {
        return Err(bad_message(line, None));
    }
    let msg: Incoming<'_> = match serde_json::from_slice(line) {
        Ok(m) => m,
        Err(e) => return Err(bad_message(line, Some(&e))),
    };
    let invalid = |id: Option<&RawValue>, why: &str| {
        error_response(
            id.filter(|i| valid_id(i)).map_or("null", RawValue::get),
            &RpcError::new(code::INVALID_REQUEST, format!("Invalid Request: {why}")),
        )
    };
    if msg.jsonrpc.as_deref() != Some("2.0") {
        return Err(invalid(msg.id, "`jsonrpc` must be \"2.0\""));
    }
    if let Some(id) = msg.id
        && !valid_id(id)
    {
        return Err(invalid(None, "`id` must be a string or an integer"));
    }
    if let Some(p) = msg.params {
        let first = p.get().as_bytes().first();
        if first != Some(&b'{') {
            return Err(invalid(msg.id, "`params` must be an object"));
        }
    }
    match (msg.method, msg.id) {
        (Some(method), Some(id)) => Ok(Message::Request {
            id,
            method,
            params: msg.params,
        }),
        (Some(method), None) => Ok(Message::Notification {
            method,
            params: msg.params,
        }),
        (None, Some(id)) => match (msg.result, msg.error) {
            (Some(r), None) => Ok(Message::Response { id, outcome: Ok(r) }),
            (None, Some(e)) => Ok(Message::Response {
                id,
                outcome: Err(e),
            }),
            _ => Err(invalid(
                Some(id),
                "a response has exactly one of `result` and `error`",
            )),
        },
        (None, None) => Err(invalid(None, "missing `method`")),
    }
}

/// A JSON-RPC id is a string or an integer (MCP forbids `null`).
fn valid_id(id: &RawValue) -> bool {
    let s = id.get();
    s.starts_with('"') || (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit() || b == b'-'))
}

/// The response to a line that is not a valid message: -32700 when it is not JSON at all,
/// -32600 when it is JSON of the wrong shape.
fn bad_message(line: &[u8], e: Option<&serde_json::Error>) -> String {
    match serde_json::from_slice::<Value>(line) {
        Err(e) => error_response(
            "null",
            &RpcError::new(code::PARSE_ERROR, format!("Parse error: {e}")),
        ),
        Ok(v) => {
            let id = v
                .get("id")
                .filter(|i| i.is_string() || i.is_i64() || i.is_u64())
                .map_or_else(|| "null".to_owned(), Value::to_string);
            let why = if v.is_array() {
                "batches are not supported".to_owned()
            } else if let (true, Some(e)) = (v.is_object(), e) {
                e.to_string()
            } else {
                "a message must be a JSON object".to_owned()
            };
            error_response(
                &id,
                &RpcError::new(code::INVALID_REQUEST, format!("Invalid Request: {why}")),
            )
        }
    }
}

/// Serializes a success response with the id as received, writing `result` straight into it.
pub(crate) fn result_response<T: serde::Serialize + ?Sized>(id: &str, result: &T) -> String {
    let mut out = Vec::with_capacity(256 + id.len());
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(b",\"result\":");
    if let Err(e) = serde_json::to_writer(&mut out, result) {
        let e = RpcError::new(
            code::INTERNAL_ERROR,
            format!("cannot serialize the result: {e}"),
        );
        return error_response(id, &e);
    }
    out.push(b'}');
    // serde_json writes UTF-8, and `id` is text.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Serializes a success response whose result is already JSON text.
pub(crate) fn raw_result_response(id: &str, result: &str) -> String {
    let mut s = String::with_capacity(result.len() + id.len() + 32);
    s.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
    s.push_str(id);
    s.push_str(",\"result\":");
    s.push_str(result);
    s.push('}');
    s
}

/// Serializes an error response with the id as received (`null` when unknown).
pub(crate) fn error_response(id: &str, error: &RpcError) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{}}}",
        error.to_json()
    )
}

/// JSON text of a value, written through serde_json's byte writer (faster than `Display`,
/// which goes through `fmt::Write`).
pub(crate) fn json_string<T: serde::Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(128);
    match serde_json::to_writer(&mut out, value) {
        // serde_json writes UTF-8.
        Ok(()) => String::from_utf8(out).unwrap_or_default(),
        // Only a map with non-string keys fails, which no value here has.
        Err(e) => {
            tracing::error!(error = %e, "cannot serialize a value as JSON");
            "null".to_owned()
        }
    }
}

/// A notification or request of the server's: `{"jsonrpc":"2.0",[id,]method,params}`.
#[derive(serde::Serialize)]
struct ServerMessage<'a> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<u64>,
    method: &'a str,
    params: &'a Value,
}

/// Serializes a notification.
pub(crate) fn notification(method: &str, params: &Value) -> String {
    json_string(&ServerMessage {
        jsonrpc: "2.0",
        id: None,
        method,
        params,
    })
}

/// Serializes a request the server makes of the client.
pub(crate) fn request(id: u64, method: &str, params: &Value) -> String {
    json_string(&ServerMessage {
        jsonrpc: "2.0",
        id: Some(id),
        method,
        params,
    })
}

/// The canonical form of a request id (JSON text as serde_json writes it), for matching ids
/// written differently (`"caf\u00e9"` and `"café"` are the same id).
pub(crate) fn id_key(raw: &str) -> std::sync::Arc<str> {
    if raw.contains('\\')
        && let Ok(v) = serde_json::from_str::<Value>(raw)
    {
        return v.to_string().into();
    }
    raw.into()
}
