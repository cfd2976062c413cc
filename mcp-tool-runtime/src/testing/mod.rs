//! Testing servers: an in-process MCP [`Client`] that speaks real JSON-RPC text to a server
//! over an in-memory pipe, through the same code path as stdio, with no subprocess; and
//! [`check_examples`], which checks every tool's examples against its schemas; and, with the
//! feature `proptest`, strategies that derive arguments from a tool's input schema
//! ([`arbitrary_arguments`], [`refused_arguments`]) for property tests.
//!
//! Layer: above the transports, like the command line.
//!
//! ```
//! use mcp_tool::prelude::*;
//! use mcp_tool::testing::Client;
//!
//! /// Add two numbers.
//! #[tool]
//! fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let client = Client::start(Server::new("test", "0.1.0").only(["add"])).await.unwrap();
//! let result = client.call("add", serde_json::json!({ "a": 2, "b": 3 })).await.unwrap();
//! assert_eq!(result.text(), "5");
//! # }
//! ```

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, WriteHalf};
use tokio::sync::{Mutex as AsyncMutex, mpsc, oneshot};

use crate::protocol::{RpcError, code};
use crate::server::{Server, ServerHandle, StartError};
use crate::tool::ExampleError;

#[cfg(feature = "proptest")]
mod arguments;
#[cfg(feature = "proptest")]
#[cfg_attr(docsrs, doc(cfg(feature = "proptest")))]
pub use arguments::{arbitrary_arguments, refused_arguments};

type Pending = Arc<Mutex<HashMap<String, oneshot::Sender<Value>>>>;

/// Answers the server's input requests in 2026-07-28: the method (`elicitation/create`,
/// `sampling/createMessage`, `roots/list`) and params in, the result out.
type Answerer = Box<dyn Fn(&str, &Value) -> Value + Send + Sync>;

/// The most rounds [`Client::call`] goes through for one call in 2026-07-28.
const MAX_ROUNDS: usize = 16;

/// An in-process MCP client connected to one server session (2025-11-25), or speaking
/// 2026-07-28 with `_meta` on every request ([`Client::stateless`]).
pub struct Client {
    writer: AsyncMutex<WriteHalf<DuplexStream>>,
    pending: Pending,
    next_id: AtomicI64,
    other: AsyncMutex<mpsc::UnboundedReceiver<Value>>,
    timeout: Duration,
    /// The `_meta` of every request, in 2026-07-28.
    meta: Option<Value>,
    answer: Option<Answerer>,
}

/// Serves one MCP connection of `server` over a pair of byte streams (an in-memory pipe, say)
/// until the input ends, exactly as stdio does; then lets the calls in flight finish (for at
/// most 10 seconds) and flushes their answers.
pub async fn serve_io<R, W>(server: ServerHandle, input: R, output: W) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    crate::transport::stdio::serve_io(server, input, output).await
}

/// The result of a `tools/call`, with helpers for assertions.
#[derive(Debug, Clone, PartialEq)]
pub struct CallResult(pub Value);

impl CallResult {
    /// The text of all text blocks, joined by newlines.
    pub fn text(&self) -> String {
        self.0["content"]
            .as_array()
            .map(|blocks| {
                blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default()
    }

    /// Whether the result has `isError: true`.
    pub fn is_error(&self) -> bool {
        self.0["isError"] == Value::Bool(true)
    }

    /// The structured content.
    pub fn structured(&self) -> Option<&Value> {
        self.0.get("structuredContent")
    }
}

impl Client {
    /// Starts `server` in-process and initializes a session with it.
    pub async fn start(server: Server) -> Result<Client, StartError> {
        let client = Self::connect(server)?;
        client
            .initialize("2025-11-25")
            .await
            .expect("the server answers `initialize`");
        Ok(client)
    }

    /// Starts `server` in-process without initializing (to test the handshake itself).
    pub fn connect(server: Server) -> Result<Client, StartError> {
        Ok(Self::connect_to(server.build()?))
    }

    /// Connects to a server already running (several clients of one server: each its own
    /// connection, as stdio clients of one process would be), without initializing.
    pub fn connect_to(server: ServerHandle) -> Client {
        let (client_end, server_end) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_end);
        tokio::spawn(async move {
            if let Err(e) = serve_io(server, server_read, server_write).await {
                tracing::error!(error = %e, "in-process server failed");
            }
        });
        let (read, write) = tokio::io::split(client_end);
        let pending: Pending = Arc::default();
        let (other_tx, other_rx) = mpsc::unbounded_channel();
        let routes = pending.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(read).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let Ok(message) = serde_json::from_str::<Value>(&line) else {
                    panic!("the server wrote a line that is not JSON: {line}");
                };
                let is_response = message.get("method").is_none();
                let waiter = is_response
                    .then(|| message.get("id").map(Value::to_string))
                    .flatten()
                    .and_then(|id| routes.lock().expect("not poisoned").remove(&id));
                match waiter {
                    Some(w) => {
                        let _ = w.send(message);
                    }
                    None => {
                        let _ = other_tx.send(message);
                    }
                }
            }
        });
        Client {
            writer: AsyncMutex::new(write),
            pending,
            next_id: AtomicI64::new(1),
            other: AsyncMutex::new(other_rx),
            timeout: Duration::from_secs(30),
            meta: None,
            answer: None,
        }
    }

    /// Starts `server` in-process and speaks MCP 2026-07-28 with it: no handshake, and every
    /// request carries `_meta` with the version, `capabilities` (such as
    /// `{"elicitation": {}}`) and the client's name.
    ///
    /// ```
    /// use mcp_tool::extract::Elicitation;
    /// use mcp_tool::prelude::*;
    /// use mcp_tool::testing::Client;
    /// use serde_json::json;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Sure {
    ///     /// Really?
    ///     sure: bool,
    /// }
    ///
    /// /// Drop a table after asking.
    /// #[tool(destructive)]
    /// async fn drop_table(table: String, ctx: Ctx) -> Result<String, ToolError> {
    ///     match ctx.elicit::<Sure>(format!("Drop {table}?")).await? {
    ///         Elicitation::Accept(Sure { sure: true }) => Ok(format!("dropped {table}")),
    ///         _ => Ok("kept".into()),
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let server = Server::new("db", "1.0.0").only(["drop_table"]);
    /// let client = Client::stateless(server, json!({"elicitation": {}}))
    ///     .unwrap()
    ///     .answering(|_method, _params| json!({"action": "accept", "content": {"sure": true}}));
    /// let result = client.call("drop_table", json!({"table": "t"})).await.unwrap();
    /// assert_eq!(result.text(), "dropped t");
    /// # }
    /// ```
    pub fn stateless(server: Server, capabilities: Value) -> Result<Client, StartError> {
        let mut client = Self::connect(server)?;
        client.meta = Some(json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": capabilities,
            "io.modelcontextprotocol/clientInfo": { "name": "mcp-tool-testing", "version": "0" }
        }));
        Ok(client)
    }

    /// Answers the input requests of 2026-07-28 calls with `answer` (method and params in,
    /// result out): [`Client::call`] then retries with the answers until the call completes.
    #[must_use]
    pub fn answering(
        mut self,
        answer: impl Fn(&str, &Value) -> Value + Send + Sync + 'static,
    ) -> Client {
        self.answer = Some(Box::new(answer));
        self
    }

    /// Sends `initialize` asking for `version`, then `notifications/initialized`; returns the
    /// initialize result.
    pub async fn initialize(&self, version: &str) -> Result<Value, RpcError> {
        self.initialize_with(version, json!({})).await
    }

    /// Like [`Client::initialize`], declaring client capabilities (such as
    /// `{"sampling": {}, "elicitation": {}}`).
    pub async fn initialize_with(
        &self,
        version: &str,
        capabilities: Value,
    ) -> Result<Value, RpcError> {
        let result = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": version,
                    "capabilities": capabilities,
                    "clientInfo": { "name": "mcp-tool-testing", "version": "0" }
                }),
            )
            .await?;
        self.notify("notifications/initialized", json!({})).await;
        Ok(result)
    }

    /// Sends a request and waits for its response.
    /// In 2026-07-28 the client's `_meta` is added to `params` (keys given there win).
    pub async fn request(&self, method: &str, mut params: Value) -> Result<Value, RpcError> {
        if let (Some(meta), Some(map)) = (&self.meta, params.as_object_mut()) {
            let given = map.entry("_meta").or_insert_with(|| json!({}));
            if let (Some(given), Some(meta)) = (given.as_object_mut(), meta.as_object()) {
                for (k, v) in meta {
                    given.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.request_raw(&id.to_string(), &message.to_string())
            .await
    }

    /// Sends a request line as given (its id written as `id`, JSON text) and waits for the
    /// response with that id.
    pub async fn request_raw(&self, id: &str, line: &str) -> Result<Value, RpcError> {
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .expect("not poisoned")
            .insert(id.to_owned(), tx);
        self.send_raw(line).await;
        let response = tokio::time::timeout(self.timeout, rx)
            .await
            .expect("the server answers within the timeout")
            .expect("the server is running");
        match response.get("error") {
            Some(e) => Err(RpcError::from_json(e)),
            None => Ok(response["result"].clone()),
        }
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) {
        let message = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        self.send_raw(&message.to_string()).await;
    }

    /// Answers a request the server made of this client.
    pub async fn respond(&self, id: &Value, result: Value) {
        let message = json!({ "jsonrpc": "2.0", "id": id, "result": result });
        self.send_raw(&message.to_string()).await;
    }

    /// Answers a request the server made of this client with an error.
    pub async fn respond_error(&self, id: &Value, code: i64, message: &str) {
        let message =
            json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } });
        self.send_raw(&message.to_string()).await;
    }

    /// Waits for the next message whose `method` is `method` (a notification or a server
    /// request), skipping others; `None` if none arrives within `wait`.
    pub async fn wait_for(&self, method: &str, wait: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let message = self.next_message(left).await?;
            if message["method"] == method {
                return Some(message);
            }
        }
    }

    /// Sends a request without waiting; returns its id. Its response then arrives through
    /// the returned receiver (or not at all, if cancelled).
    pub async fn start_request(
        &self,
        method: &str,
        params: Value,
    ) -> (Value, oneshot::Receiver<Value>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .expect("not poisoned")
            .insert(id.to_string(), tx);
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.send_raw(&message.to_string()).await;
        (Value::from(id), rx)
    }

    /// Writes one line to the server as it is (it may be malformed on purpose).
    pub async fn send_raw(&self, line: &str) {
        let mut w = self.writer.lock().await;
        w.write_all(line.as_bytes())
            .await
            .expect("the server is running");
        w.write_all(b"\n").await.expect("the server is running");
        w.flush().await.expect("the server is running");
    }

    /// The next message that answered no request of ours: a notification, a server→client
    /// request, or a response to a raw line. `None` if nothing arrives within `wait`.
    pub async fn next_message(&self, wait: Duration) -> Option<Value> {
        let mut other = self.other.lock().await;
        tokio::time::timeout(wait, other.recv())
            .await
            .ok()
            .flatten()
    }

    /// Every tool, following `nextCursor` through all pages.
    pub async fn list_tools(&self) -> Result<Vec<Value>, RpcError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let page = self.request("tools/list", params).await?;
            tools.extend(page["tools"].as_array().cloned().unwrap_or_default());
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(c) => cursor = Some(c.to_owned()),
                None => return Ok(tools),
            }
        }
    }

    /// Calls a tool. In 2026-07-28, with [`Client::answering`], an `input_required` result
    /// is answered and the call retried until it completes; without, it is returned as is.
    pub async fn call(&self, name: &str, arguments: Value) -> Result<CallResult, RpcError> {
        let mut params = json!({ "name": name, "arguments": arguments });
        for _ in 0..MAX_ROUNDS {
            let result = self.request("tools/call", params.clone()).await?;
            let (Some(answer), "input_required") = (
                &self.answer,
                result["resultType"].as_str().unwrap_or_default(),
            ) else {
                return Ok(CallResult(result));
            };
            let mut responses = serde_json::Map::new();
            for (key, request) in result["inputRequests"].as_object().into_iter().flatten() {
                let method = request["method"].as_str().unwrap_or_default();
                responses.insert(key.clone(), answer(method, &request["params"]));
            }
            params["inputResponses"] = Value::Object(responses);
            match result.get("requestState") {
                Some(state) => params["requestState"] = state.clone(),
                None => _ = params.as_object_mut().map(|p| p.remove("requestState")),
            }
        }
        Err(RpcError::new(
            code::INTERNAL_ERROR,
            format!("`{name}` still needed input after {MAX_ROUNDS} rounds"),
        ))
    }
}

/// Checks every tool's `examples(request = …, response = …)` against its own input and output
/// schemas; the error lists each tool whose examples do not fit. Call it from a test:
///
/// ```
/// use mcp_tool::prelude::*;
///
/// /// Double a number.
/// #[tool(examples(request = r#"{"n": 2}"#, response = r#"{"result": 4}"#))]
/// fn double(n: i64) -> Json<i64> {
///     Json(n * 2)
/// }
///
/// let server = Server::new("t", "0").only(["double"]).build().unwrap();
/// mcp_tool::testing::check_examples(&server).unwrap();
/// ```
pub fn check_examples(server: &ServerHandle) -> Result<(), ExamplesError> {
    let failures: Vec<ExampleError> = server
        .tools()
        .iter()
        .filter_map(|t| t.check_examples().err())
        .collect();
    if failures.is_empty() {
        Ok(())
    } else {
        Err(ExamplesError { failures })
    }
}

/// The tools whose examples do not fit their schemas ([`check_examples`]), shown one
/// paragraph per tool, each starting with ``tool `name`: ``.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.lines())]
pub struct ExamplesError {
    failures: Vec<ExampleError>,
}

impl ExamplesError {
    /// Each tool whose examples do not fit, and how (never empty).
    pub fn failures(&self) -> &[ExampleError] {
        &self.failures
    }

    fn lines(&self) -> String {
        let lines: Vec<String> = self
            .failures
            .iter()
            .map(|e| format!("tool `{}`: {e}", e.tool()))
            .collect();
        lines.join("\n")
    }
}
