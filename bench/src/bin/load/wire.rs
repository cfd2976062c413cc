//! What the driver sends and how it reads the answers: the tools, the two protocol versions
//! (2025-11-25 after `initialize`; 2026-07-28 stateless, with `_meta` in every request), and
//! the check of every message a server sends back.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;

/// The version with a handshake and sessions (every server here speaks it).
pub(crate) const V2025_11_25: &str = "2025-11-25";

/// The stateless version: no `initialize`, `_meta` in every request.
pub(crate) const V2026_07_28: &str = "2026-07-28";

/// A request's `_meta` in 2026-07-28: the version, the client's capabilities (it answers
/// elicitations) and who it is.
const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"mcp-tool-bench","version":"0.1.0"}}"#;

/// The ids of the retries of an input-required round: the first call's id plus this.
const RETRY: u64 = 1 << 40;

/// The protocol version a run speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Version {
    /// 2025-11-25: `initialize`, then calls; a question is a request to the client.
    V2025_11_25,
    /// 2026-07-28: no `initialize`; a question is an input-required answer and a retry.
    V2026_07_28,
}

impl Version {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Version::V2025_11_25 => V2025_11_25,
            Version::V2026_07_28 => V2026_07_28,
        }
    }
}

/// One of the benchmark tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Tool {
    Add,
    CreateUser,
    /// `add` written as an `async fn` (only `bench-server` has it; the `diag` leg).
    AddAsync,
    /// `add` after asking the user once (`confirm_add`; the `versions` leg). The driver
    /// accepts with `{"confirm": true}`.
    ConfirmAdd,
    /// `add` of a server mounted as `remote` (the `gateway` leg): `remote__add`.
    MountedAdd,
}

impl Tool {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Tool::Add => "add",
            Tool::CreateUser => "create_user",
            Tool::AddAsync => "add_async",
            Tool::ConfirmAdd => "confirm_add",
            Tool::MountedAdd => "remote__add",
        }
    }

    /// The arguments of call number `i`.
    fn arguments(self, i: usize) -> String {
        match self {
            Tool::Add | Tool::AddAsync | Tool::ConfirmAdd | Tool::MountedAdd => {
                format!(r#"{{"a":{i},"b":{}}}"#, i + 1)
            }
            Tool::CreateUser => format!(
                r#"{{"email":"user{i}@example.com","name":"Bench User {i}","role":"admin","metadata":{{"team":"bench","seq":"{i}"}}}}"#
            ),
        }
    }

    /// Checks the result of call number `i`.
    fn check(self, i: usize, result: &CallResult<'_>) -> Result<(), String> {
        if result.is_error {
            return Err(format!(
                "call {i}: isError: {}",
                result.content.first().map_or("", |b| &b.text)
            ));
        }
        match self {
            Tool::Add | Tool::AddAsync | Tool::ConfirmAdd | Tool::MountedAdd => {
                let text = result.content.first().map_or("", |b| &b.text);
                let want = (2 * i + 1).to_string();
                if text != want {
                    return Err(format!(
                        "call {i}: {} answered {text:?}, not {want}",
                        self.name()
                    ));
                }
            }
            Tool::CreateUser => {
                let user = result
                    .structured
                    .as_ref()
                    .ok_or_else(|| format!("call {i}: no structuredContent"))?;
                let want = format!("user{i}@example.com");
                // `usr_N` from the benchmark's servers, `user_N` from the shared floors.
                let id_ok = user.id.starts_with("usr_") || user.id.starts_with("user_");
                if user.email != want || !id_ok || user.role != "admin" {
                    return Err(format!("call {i}: unexpected user {user:?}"));
                }
                if result.content.is_empty() {
                    return Err(format!("call {i}: no text copy of the user"));
                }
            }
        }
        Ok(())
    }
}

/// Any message a server sends: a response to us, or a request or notification of its own.
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

/// A response read for its outcome alone (see [`Calls::read_quick`]): the result is not kept,
/// and nothing in it is unescaped.
#[derive(Deserialize)]
struct Answer<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    result: Option<Outcome<'a>>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Outcome<'a> {
    #[serde(rename = "isError", default)]
    is_error: bool,
    #[serde(rename = "resultType", borrow)]
    result_type: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct CallResult<'a> {
    #[serde(borrow, default)]
    content: Vec<TextBlock<'a>>,
    #[serde(rename = "structuredContent", borrow)]
    structured: Option<UserOut<'a>>,
    #[serde(rename = "isError", default)]
    is_error: bool,
    /// 2026-07-28: `complete` or `input_required`.
    #[serde(rename = "resultType", borrow)]
    result_type: Option<Cow<'a, str>>,
    /// 2026-07-28, input required: the questions by key.
    #[serde(rename = "inputRequests", borrow)]
    input_requests: Option<BTreeMap<Cow<'a, str>, InputRequest<'a>>>,
    /// 2026-07-28, input required: to send back as it is.
    #[serde(rename = "requestState", borrow)]
    request_state: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct InputRequest<'a> {
    #[serde(borrow)]
    method: Cow<'a, str>,
}

#[derive(Deserialize)]
struct TextBlock<'a> {
    #[serde(borrow, default)]
    text: Cow<'a, str>,
}

#[derive(Debug, Deserialize)]
struct UserOut<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow)]
    email: Cow<'a, str>,
    #[serde(borrow)]
    role: Cow<'a, str>,
}

/// What a message from the server means for the run.
#[derive(Debug)]
pub(crate) enum Step {
    /// Call number `i` is answered, and the answer is right.
    Done(usize),
    /// A line to send: the answer to the server's question (2025-11-25) or the retry of an
    /// input-required call (2026-07-28).
    Send(String),
    /// Nothing to do (a notification, an SSE event without a message).
    Skip,
}

/// The calls of one phase of a run: `n` calls of `tool` in `version`, ids from `first_id`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Calls {
    pub(crate) tool: Tool,
    pub(crate) version: Version,
    pub(crate) first_id: u64,
    pub(crate) n: usize,
}

impl Calls {
    /// The request of call number `i`.
    pub(crate) fn line(&self, i: usize) -> String {
        let id = self.first_id + i as u64;
        let (name, arguments) = (self.tool.name(), self.tool.arguments(i));
        match self.version {
            Version::V2025_11_25 => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments}}}}}"#
            ),
            Version::V2026_07_28 => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments},{META}}}}}"#
            ),
        }
    }

    /// The retry of call number `i` with the answer under `key` and the server's state.
    fn retry(&self, i: usize, key: &str, state: &RawValue) -> String {
        let id = self.first_id + RETRY + i as u64;
        let (name, arguments) = (self.tool.name(), self.tool.arguments(i));
        let key = serde_json::to_string(key).unwrap_or_default();
        let state = state.get();
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments},"inputResponses":{{{key}:{{"action":"accept","content":{{"confirm":true}}}}}},"requestState":{state},{META}}}}}"#
        )
    }

    /// Reads one message from the server: checks a response to one of our calls, answers a
    /// question, or builds the retry of an input-required call.
    pub(crate) fn read(&self, text: &str) -> Result<Step, String> {
        let message: Message<'_> =
            serde_json::from_str(text).map_err(|e| format!("bad message ({e}): {text}"))?;
        if let Some(method) = &message.method {
            // The server's own message: a notification, or the question of a 2025-11-25 call.
            let Some(id) = message.id else {
                return Ok(Step::Skip);
            };
            if method != "elicitation/create"
                || self.tool != Tool::ConfirmAdd
                || self.version != Version::V2025_11_25
            {
                return Err(format!("an unexpected request from the server: {text}"));
            }
            let id = id.get();
            return Ok(Step::Send(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"action":"accept","content":{{"confirm":true}}}}}}"#
            )));
        }
        let id: u64 = message
            .id
            .and_then(|id| id.get().parse().ok())
            .ok_or_else(|| format!("a response without a numeric id: {text}"))?;
        let (retried, i) = match id.checked_sub(self.first_id) {
            Some(k) if k < self.n as u64 => (false, k as usize),
            Some(k) if k >= RETRY && k - RETRY < self.n as u64 => (true, (k - RETRY) as usize),
            _ => return Err(format!("an id that is not ours: {id}")),
        };
        if let Some(error) = message.error {
            return Err(format!("call {i}: JSON-RPC error {}", error.get()));
        }
        let result = message
            .result
            .ok_or_else(|| format!("call {i}: neither result nor error"))?;
        let result: CallResult<'_> = serde_json::from_str(result.get())
            .map_err(|e| format!("call {i}: bad result ({e}): {}", result.get()))?;
        if self.version == Version::V2026_07_28 {
            match result.result_type.as_deref() {
                Some("complete") => {}
                Some("input_required") if self.tool == Tool::ConfirmAdd && !retried => {
                    let requests = result.input_requests.unwrap_or_default();
                    let (key, request) = match requests.iter().next() {
                        Some(first) if requests.len() == 1 => first,
                        _ => return Err(format!("call {i}: not one input request: {text}")),
                    };
                    if request.method != "elicitation/create" {
                        return Err(format!("call {i}: asked {} instead", request.method));
                    }
                    let state = result
                        .request_state
                        .ok_or_else(|| format!("call {i}: no requestState"))?;
                    return Ok(Step::Send(self.retry(i, key, state)));
                }
                other => return Err(format!("call {i}: resultType {other:?}: {text}")),
            }
        }
        self.tool.check(i, &result)?;
        Ok(Step::Done(i))
    }

    /// Reads one message from the server as [`Calls::read`] does, but checks a plain answer
    /// only for what counts a failure: its id is one of ours, it is a result, not an error,
    /// without `isError` (and in 2026-07-28 `complete`); what it holds is not looked at. One
    /// pass over the text, nothing allocated. Anything else (a request of the server's, the answer to a
    /// retry, an `input_required` result) is read by [`Calls::read`].
    pub(crate) fn read_quick(&self, text: &str) -> Result<Step, String> {
        let answer: Answer<'_> =
            serde_json::from_str(text).map_err(|e| format!("bad message ({e}): {text}"))?;
        let result = match answer {
            Answer {
                id: Some(id),
                method: None,
                result,
                error,
            } => {
                let call = id
                    .get()
                    .parse::<u64>()
                    .ok()
                    .and_then(|id| id.checked_sub(self.first_id))
                    .filter(|&k| k < self.n as u64);
                // Not a first call's id (a retry's, or not ours): read in full.
                let Some(i) = call else {
                    return self.read(text);
                };
                let i = i as usize;
                if let Some(error) = error {
                    return Err(format!("call {i}: JSON-RPC error {}", error.get()));
                }
                let result = result.ok_or_else(|| format!("call {i}: neither result nor error"))?;
                if result.is_error {
                    return Err(format!("call {i}: isError: {text}"));
                }
                (i, result)
            }
            _ => return self.read(text),
        };
        match (self.version, result.1.result_type.as_deref()) {
            (Version::V2025_11_25, _) | (Version::V2026_07_28, Some("complete")) => {
                Ok(Step::Done(result.0))
            }
            _ => self.read(text),
        }
    }
}

/// `initialize` (2025-11-25), with the elicitation capability when `elicits`.
pub(crate) fn initialize_line(id: u64, elicits: bool) -> String {
    let capabilities = if elicits {
        r#"{"elicitation":{}}"#
    } else {
        "{}"
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":"{V2025_11_25}","capabilities":{capabilities},"clientInfo":{{"name":"mcp-tool-bench","version":"0.1.0"}}}}}}"#
    )
}

pub(crate) const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// `server/discover` (2026-07-28), the version's first request.
pub(crate) fn discover_line(id: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"server/discover","params":{{{META}}}}}"#)
}
