//! An MCP client (feature `client`): connects to a server over Streamable HTTP or stdio (a
//! command it starts), in either protocol version, lists its tools and calls them — with
//! progress, cancellation, and the server's own requests (elicitation, sampling, roots) answered
//! by a [`ClientHandler`]. The gateway mounts remote servers with it; it is public for anyone
//! who needs to talk to an MCP server from Rust.
//!
//! ```no_run
//! # async fn demo() -> Result<(), mcp_tool::client::ClientError> {
//! use mcp_tool::client::{Connect, McpClient};
//!
//! let client = McpClient::connect(Connect::http("http://127.0.0.1:8080/mcp")).await?;
//! let tools = client.list_tools().await?;
//! let result = client.call("add", serde_json::json!({"a": 2, "b": 3})).await?;
//! eprintln!("{} tools; 2 + 3 = {}", tools.len(), result["content"][0]["text"]);
//! # Ok(()) }
//! ```
//!
//! TLS is rustls with ring's crypto provider, which the client installs as the process
//! default when it first connects over HTTP. reqwest is built without a provider of its own,
//! so an application that builds its own reqwest clients before that installs one first:
//! `rustls::crypto::ring::default_provider().install_default()`.
//!
//! Layer: imports `protocol` and `tool` (for the cancellation token); the server's gateway
//! builds on it.

mod core;
mod http;
mod message;
mod meta;
pub mod oauth;
mod sse;
mod stdio;

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::protocol::jsonrpc::json_len;
use crate::protocol::{ProtocolVersion, RpcError};
use crate::tool::CancellationToken;

use self::core::Core;

/// The largest message the client reads from a server: a larger one fails the requests it
/// may have answered, with an error that says so, and is never kept whole.
const MAX_MESSAGE: usize = 64 << 20;

/// The most tools [`McpClient::list_tools`] takes from one server, over all its pages.
const MAX_TOOLS: usize = 100_000;

/// Why the client failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClientError {
    /// The server could not be reached, or the connection broke (worth retrying).
    #[error("the server is unavailable: {0}")]
    Unavailable(String),
    /// The server answered with a JSON-RPC error.
    #[error("the server refused ({}): {}", .0.code, .0.message)]
    Rpc(RpcError),
    /// The server answered something that is not MCP.
    #[error("the server's answer is not MCP: {0}")]
    Protocol(String),
    /// The call was cancelled.
    #[error("the call was cancelled")]
    Cancelled,
    /// The server took longer than the client's time limit.
    #[error("the server did not answer within {} s", .0.as_secs_f64())]
    TimedOut(Duration),
    /// The server wants authorization that the client could not obtain (no
    /// [`Connect::oauth`], or the authorization server refused or misbehaved), or refused
    /// what it was sent: the message says how, and never holds a secret; the
    /// [answer](oauth::AuthFailure::answer) says what answered (an OAuth error code and its
    /// status, a failure that may pass, the server's refusal).
    #[error("not authorized: {0}")]
    Unauthorized(oauth::AuthFailure),
}

impl ClientError {
    /// Whether trying again later may succeed (the server was down, or slow).
    pub fn is_retryable(&self) -> bool {
        matches!(self, ClientError::Unavailable(_) | ClientError::TimedOut(_))
    }
}

/// A future of the client.
pub type ClientFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Answers what the server asks of the client: `elicitation/create`, `sampling/createMessage`,
/// `roots/list` (and any other request). The default declares nothing and refuses everything.
pub trait ClientHandler: Send + Sync + 'static {
    /// The capabilities to declare (`{"elicitation": {}, "sampling": {}}`…).
    fn capabilities(&self) -> Value {
        json!({})
    }

    /// Answers one request of the server.
    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> ClientFuture<'a, Result<Value, RpcError>> {
        let _ = params;
        Box::pin(async move {
            Err(RpcError::new(
                crate::protocol::code::METHOD_NOT_FOUND,
                format!("this client does not answer `{method}`"),
            ))
        })
    }
}

/// The values an `elicitation/create` form starts with: the `default` of each property of its
/// `requestedSchema` (SEP-1034). A client shows them in the form; answering
/// `{"action": "accept", "content": form_defaults(&params)}` accepts the form as shown.
pub fn form_defaults(params: &Value) -> serde_json::Map<String, Value> {
    params["requestedSchema"]["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(name, property)| Some((name.clone(), property.get("default")?.clone())))
        .collect()
}

/// A handler that declares nothing and answers nothing.
#[derive(Debug, Default)]
pub struct NoHandler;

impl ClientHandler for NoHandler {}

/// Which protocol version to speak ([`Connect::protocol_version`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VersionChoice {
    /// 2026-07-28 when the server answers `server/discover`, else 2025-11-25 (or what
    /// `initialize` settles on).
    #[default]
    Auto,
    /// 2025-11-25 (or what `initialize` settles on): `initialize` and a session.
    V2025_11_25,
    /// 2026-07-28 only.
    V2026_07_28,
}

/// Where the server is, and how to reach it.
#[derive(Debug, Clone)]
pub struct Connect {
    pub(crate) target: Target,
    pub(crate) headers: BTreeMap<String, String>,
    pub(crate) version: VersionChoice,
    pub(crate) timeout: Duration,
    pub(crate) client_name: String,
    pub(crate) oauth: Option<oauth::OAuthClient>,
}

#[derive(Debug, Clone)]
pub(crate) enum Target {
    Http(String),
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
}

impl Connect {
    /// A server's Streamable HTTP endpoint.
    pub fn http(url: impl Into<String>) -> Self {
        Self::target(Target::Http(url.into()))
    }

    /// A server started as `command args…`, spoken to over its stdin and stdout.
    pub fn stdio<I, S>(command: impl Into<String>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::target(Target::Stdio {
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: BTreeMap::new(),
        })
    }

    fn target(target: Target) -> Self {
        Connect {
            target,
            headers: BTreeMap::new(),
            version: VersionChoice::Auto,
            timeout: Duration::from_secs(60),
            client_name: "mcp-tool".into(),
            oauth: None,
        }
    }

    /// A header sent with every HTTP request (to this server only).
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }

    /// An OAuth access token, sent as `Authorization: Bearer …`.
    #[must_use]
    pub fn bearer(self, token: impl AsRef<str>) -> Self {
        let value = format!("Bearer {}", token.as_ref());
        self.header("Authorization", value)
    }

    /// Obtains access tokens as `oauth` says when the server asks for them (HTTP 401), and
    /// more scopes when it refuses a request for want of them (403 `insufficient_scope`).
    #[must_use]
    pub fn oauth(mut self, oauth: oauth::OAuthClient) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// An environment variable for a stdio server's process.
    #[must_use]
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Target::Stdio { env, .. } = &mut self.target {
            env.insert(name.into(), value.into());
        }
        self
    }

    /// Which protocol version to speak (default: the newest the server answers).
    #[must_use]
    pub fn protocol_version(mut self, version: VersionChoice) -> Self {
        self.version = version;
        self
    }

    /// How long one request may wait for its answer (default 60 s; a call's own progress
    /// does not extend it).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The name this client gives in `clientInfo`.
    #[must_use]
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }
}

/// What the server said about itself when the client connected.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerInfo {
    /// The protocol version spoken.
    pub protocol_version: ProtocolVersion,
    /// `serverInfo` (name, version, title…).
    pub info: Value,
    /// The server's capabilities.
    pub capabilities: Value,
    /// Its instructions, if any.
    pub instructions: Option<String>,
}

/// One progress report of a call.
#[derive(Debug, Clone, PartialEq)]
pub struct CallProgress {
    /// How far.
    pub progress: f64,
    /// Out of how much, when known.
    pub total: Option<f64>,
    /// What is happening.
    pub message: Option<String>,
}

/// Cancels calls from outside a tool: [`Canceller::token`] goes in [`CallOptions::cancel`], and
/// [`Canceller::cancel`] sends the server `notifications/cancelled` (the token of a running
/// tool's own call, from its `Ctx`, works the same way when a gateway passes a cancellation
/// on).
#[derive(Debug, Clone, Default)]
pub struct Canceller {
    token: CancellationToken,
}

impl Canceller {
    /// A canceller not cancelled yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The token to put in [`CallOptions::cancel`] (of one call or several).
    pub fn token(&self) -> CancellationToken {
        self.token.clone()
    }

    /// Cancels every call given this canceller's token.
    pub fn cancel(&self) {
        self.token.cancel();
    }

    /// Whether [`Canceller::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }
}

/// What a call may carry besides its arguments.
#[derive(Default)]
pub struct CallOptions {
    /// Receives the call's progress reports.
    pub progress: Option<Box<dyn Fn(CallProgress) + Send + Sync>>,
    /// Cancels the call (`notifications/cancelled` is sent to the server): a
    /// [`Canceller`]'s token, or a running tool's own.
    pub cancel: Option<CancellationToken>,
    /// Answers the requests the server makes while running this call (elicitation…),
    /// instead of the client's handler.
    pub handler: Option<Arc<dyn ClientHandler>>,
    /// `_meta` entries to send with the call.
    pub meta: Option<serde_json::Map<String, Value>>,
}

/// Where a call stands in its input rounds (2026-07-28), for [`McpClient::call_round`]: the
/// answers to the server's last `inputRequests`, by key, and its `requestState` as it came.
/// The default is a call's first request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Round {
    /// The answers, by the keys of the server's `inputRequests`.
    pub responses: serde_json::Map<String, Value>,
    /// The server's `requestState`, if it gave one.
    pub state: Option<Value>,
}

/// A connected MCP client. Cheap to clone.
#[derive(Clone)]
pub struct McpClient {
    core: Arc<Core>,
}

impl fmt::Debug for McpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpClient")
            .field("server", &self.core.server().info)
            .finish_non_exhaustive()
    }
}

/// The changes of a server's tool list ([`McpClient::tool_changes`]).
pub struct ToolChanges {
    rx: tokio::sync::watch::Receiver<u64>,
    core: Arc<Core>,
}

impl fmt::Debug for ToolChanges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolChanges").finish_non_exhaustive()
    }
}

impl ToolChanges {
    /// Waits for a change not yet seen here (`true`; several announced meanwhile count as
    /// one), or the connection's end (`false`).
    pub async fn next(&mut self) -> bool {
        self.core.next_change(&mut self.rx).await
    }
}

impl McpClient {
    /// Connects with no handler (the server may ask the client nothing).
    pub async fn connect(connect: Connect) -> Result<McpClient, ClientError> {
        Self::connect_with(connect, Arc::new(NoHandler)).await
    }

    /// Connects, answering the server's requests with `handler`.
    pub async fn connect_with(
        connect: Connect,
        handler: Arc<dyn ClientHandler>,
    ) -> Result<McpClient, ClientError> {
        let core = Core::connect(connect, handler).await?;
        Ok(McpClient { core })
    }

    /// What the server said about itself.
    pub fn server(&self) -> ServerInfo {
        self.core.server()
    }

    /// Every tool the server lists, following `nextCursor` through all pages: at most
    /// 100,000 tools and 10,000 pages, beyond which it fails (a server that pages for ever).
    pub async fn list_tools(&self) -> Result<Vec<Value>, ClientError> {
        self.list_tools_within(MAX_TOOLS, usize::MAX).await
    }

    /// Every tool the server lists, as [`list_tools`](Self::list_tools) does, but failing as
    /// soon as the list passes `max_tools` tools or `max_bytes` bytes of definitions (as JSON
    /// text): no more pages are asked for. For lists from servers nobody here controls.
    pub async fn list_tools_within(
        &self,
        max_tools: usize,
        max_bytes: usize,
    ) -> Result<Vec<Value>, ClientError> {
        let max_tools = max_tools.min(MAX_TOOLS);
        let mut tools = Vec::new();
        let mut bytes = 0usize;
        let mut cursor: Option<String> = None;
        // A server that pages for ever is cut off.
        for _ in 0..10_000 {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let mut page = self.core.request("tools/list", &params, None).await?;
            if let Some(Value::Array(items)) = page.get_mut("tools") {
                if tools.len() + items.len() > max_tools {
                    return Err(ClientError::Protocol(format!(
                        "the server lists more than {max_tools} tools"
                    )));
                }
                bytes = items
                    .iter()
                    .fold(bytes, |sum, tool| sum.saturating_add(json_len(tool)));
                if bytes > max_bytes {
                    return Err(ClientError::Protocol(format!(
                        "the server's tool definitions take more than {max_bytes} bytes"
                    )));
                }
                self.core.learn_tools(items);
                tools.append(items);
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) if !next.is_empty() => cursor = Some(next.to_owned()),
                _ => return Ok(tools),
            }
        }
        Err(ClientError::Protocol("tools/list never ended".into()))
    }

    /// Calls a tool; the result is the server's `CallToolResult` as JSON.
    pub async fn call(&self, name: &str, arguments: Value) -> Result<Value, ClientError> {
        self.call_with(name, arguments, CallOptions::default())
            .await
    }

    /// Calls a tool with progress, cancellation and a handler of its own.
    pub async fn call_with(
        &self,
        name: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Result<Value, ClientError> {
        self.core.call_tool(name, arguments, options, None).await
    }

    /// Calls a tool with one request, leaving its input rounds (2026-07-28) to the caller:
    /// the result is the server's as it came, `"resultType": "input_required"` included. The
    /// caller answers its `inputRequests` and calls again with a [`Round`] holding the answers
    /// and the `requestState` — from any process, at any later time, as the server allows
    /// (a gateway carries the round in its own request state this way). Without a round it
    /// is the call's first request. A 2025-11-25 server asks its questions in the middle of
    /// the call instead: `options.handler` answers them.
    pub async fn call_round(
        &self,
        name: &str,
        arguments: Value,
        round: Round,
        options: CallOptions,
    ) -> Result<Value, ClientError> {
        self.core
            .call_tool(name, arguments, options, Some(round))
            .await
    }

    /// Sends any request (`resources/list`, `prompts/get`…) and returns its result.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        self.core.request(method, &params, None).await
    }

    /// Waits until the server says its tool list changed (`notifications/tools/list_changed`,
    /// on the session in 2025-11-25 or a `subscriptions/listen` stream in 2026-07-28), or the
    /// connection ends (`false`).
    pub async fn tools_changed(&self) -> bool {
        self.core.tools_changed().await
    }

    /// Follows the server's tool list changes from now on: unlike
    /// [`tools_changed`](Self::tools_changed), a change announced while the caller was busy
    /// (listing the tools, say) is not missed.
    pub fn tool_changes(&self) -> ToolChanges {
        ToolChanges {
            rx: self.core.tool_changes(),
            core: self.core.clone(),
        }
    }

    /// Whether the connection is still up.
    pub fn is_connected(&self) -> bool {
        self.core.is_open()
    }

    /// Closes the connection (ends a 2025 session with DELETE over HTTP; stops a stdio
    /// server's process).
    pub async fn close(&self) {
        self.core.close().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_errors_read_as_they_did() {
        let said = [
            (
                ClientError::Unavailable("refused".into()),
                "the server is unavailable: refused",
            ),
            (
                ClientError::Rpc(RpcError::new(-32601, "no such method")),
                "the server refused (-32601): no such method",
            ),
            (
                ClientError::Protocol("a list".into()),
                "the server's answer is not MCP: a list",
            ),
            (ClientError::Cancelled, "the call was cancelled"),
            (
                ClientError::TimedOut(Duration::from_millis(1500)),
                "the server did not answer within 1.5 s",
            ),
            (
                ClientError::Unauthorized("no token".into()),
                "not authorized: no token",
            ),
        ];
        for (error, text) in said {
            assert_eq!(error.to_string(), text);
            assert!(std::error::Error::source(&error).is_none());
        }
    }

    #[test]
    fn a_form_starts_with_the_defaults_of_its_schema() {
        let params = json!({
            "mode": "form",
            "message": "Who?",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "default": "John Doe"},
                    "age": {"type": "integer", "default": 30},
                    "status": {"type": "string", "enum": ["a", "b"], "default": "a"},
                    "note": {"type": "string"}
                }
            }
        });
        assert_eq!(
            Value::Object(form_defaults(&params)),
            json!({"name": "John Doe", "age": 30, "status": "a"})
        );
        assert!(form_defaults(&json!({})).is_empty());
    }
}
