//! The server: a builder that gathers tools and service instances, the immutable core built
//! from it at start, and the per-connection [`Session`] that answers JSON-RPC messages.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, RwLock};
use std::task::{Context, Poll};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use crate::context::{ClientInfo, RequestContext};
use crate::extract::ToolCall;
use crate::protocol::{self, Era, Message, ProtocolVersion, RpcError, code};
use crate::registry::{self, Catalog, Entry, Services, StartError, ToolRecord, ToolSet};
use crate::result::ToolResult;

/// Builds an MCP server: its identity, its tools and the service instances they run on.
///
/// ```no_run
/// # use mcp_tool::prelude::*;
/// # struct Users;
/// # #[tools] impl Users { /// Count users.
/// # #[tool] fn count(&self) -> u32 { 0 } }
/// # async fn run() -> mcp_tool::Result<()> {
/// Server::new("users", "1.0.0").service(Users).main().await
/// # }
/// ```
#[must_use]
pub struct Server {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) title: Option<String>,
    pub(crate) instructions: Option<String>,
    services: Services,
    tools: Vec<ToolRecord>,
    use_inventory: bool,
    only: Option<Vec<String>>,
    page_size: usize,
}

impl Server {
    /// A server named `name` at `version` (usually `env!("CARGO_PKG_VERSION")`), offering every
    /// tool registered in this binary.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Server {
            name: name.into(),
            version: version.into(),
            title: None,
            instructions: None,
            services: HashMap::new(),
            tools: Vec::new(),
            use_inventory: true,
            only: None,
            page_size: 1000,
        }
    }

    /// Gives the instance that the tools of `T`'s `#[tools]` impl block run on.
    pub fn service<T: Send + Sync + 'static>(self, service: T) -> Self {
        self.service_arc(Arc::new(service))
    }

    /// Gives a shared instance that the tools of `T`'s `#[tools]` impl block run on.
    pub fn service_arc<T: Send + Sync + 'static>(mut self, service: Arc<T>) -> Self {
        self.services.insert(TypeId::of::<T>(), service);
        self
    }

    /// Adds tools explicitly (for example `Type::mcp_tools()`), beside the registered ones.
    pub fn tools(mut self, tools: ToolSet) -> Self {
        self.tools.extend_from_slice(tools.records());
        self
    }

    /// Ignores the tools registered through `inventory`: only those given with
    /// [`Server::tools`] are offered. Useful in tests.
    pub fn without_registry(mut self) -> Self {
        self.use_inventory = false;
        self
    }

    /// Offers only the tools with these names (registered or given explicitly). A name that
    /// matches no tool fails the start.
    pub fn only<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.only = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// A human-readable title for the server.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Instructions sent to the client in the `initialize` result.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// How many tools one `tools/list` page holds (default 1000).
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size.max(1);
        self
    }

    /// Checks the tools and builds the running server's core. Every problem (duplicate names,
    /// missing service instances, bad schemas) is reported together.
    pub fn build(self) -> Result<Arc<ServerCore>, StartError> {
        let mut records = self.tools;
        if self.use_inventory {
            records.extend(registry::registered().copied());
        }
        if let Some(only) = &self.only {
            let missing: Vec<String> = only
                .iter()
                .filter(|n| !records.iter().any(|r| r.name == n.as_str()))
                .map(|n| format!("`only` names a tool that does not exist: `{n}`"))
                .collect();
            if !missing.is_empty() {
                return Err(StartError::new(missing));
            }
            records.retain(|r| only.iter().any(|n| n == r.name));
        }
        let catalog = Catalog::build(records, &self.services, self.page_size)?;
        tracing::debug!(tools = catalog.entries().len(), "mcp server ready");
        Ok(Arc::new(ServerCore {
            name: self.name,
            version: self.version,
            title: self.title,
            instructions: self.instructions,
            catalog,
        }))
    }
}

/// The immutable core of a running server, shared by all its sessions.
pub struct ServerCore {
    name: String,
    version: String,
    title: Option<String>,
    instructions: Option<String>,
    catalog: Catalog,
}

impl std::fmt::Debug for ServerCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerCore")
            .field("name", &self.name)
            .field("tools", &self.catalog.entries().len())
            .finish()
    }
}

impl ServerCore {
    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The server's version.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The tools' `tools/list` entries, in order.
    pub fn tool_list(&self) -> Vec<Value> {
        self.catalog
            .entries()
            .iter()
            .map(|e| e.def.to_json().clone())
            .collect()
    }

    /// The tools' definitions, in order.
    pub fn tools(&self) -> impl Iterator<Item = &crate::schema::ToolDef> {
        self.catalog.entries().iter().map(|e| &e.def)
    }

    /// Calls a tool in-process, validating the arguments as `tools/call` does. `Err` is the
    /// JSON-RPC error a client would get (unknown tool).
    pub async fn call(&self, name: &str, arguments: Value) -> Result<ToolResult, RpcError> {
        let request = Arc::new(RequestContext {
            id: Value::from(0),
            tool: Arc::from(name),
            meta: None,
            client: Arc::new(ClientInfo::default()),
        });
        let arguments = match arguments {
            Value::Null => Map::new(),
            Value::Object(m) => m,
            _ => {
                return Err(RpcError::new(
                    code::INVALID_PARAMS,
                    "`arguments` must be an object",
                ));
            }
        };
        let entry = self.catalog.get(name).ok_or_else(|| unknown_tool(name))?;
        Ok(run_tool(entry, arguments, request).await)
    }

    fn initialize_result(&self, version: ProtocolVersion) -> Value {
        let mut info = Map::new();
        info.insert("name".into(), Value::String(self.name.clone()));
        info.insert("version".into(), Value::String(self.version.clone()));
        if let Some(t) = &self.title {
            info.insert("title".into(), Value::String(t.clone()));
        }
        let mut result = Map::new();
        result.insert(
            "protocolVersion".into(),
            Value::String(version.as_str().into()),
        );
        result.insert(
            "capabilities".into(),
            serde_json::json!({ "tools": { "listChanged": false } }),
        );
        result.insert("serverInfo".into(), Value::Object(info));
        if let Some(i) = &self.instructions {
            result.insert("instructions".into(), Value::String(i.clone()));
        }
        Value::Object(result)
    }
}

fn unknown_tool(name: &str) -> RpcError {
    RpcError::new(code::INVALID_PARAMS, format!("Unknown tool: `{name}`"))
}

/// Validates the arguments, runs the tool (catching a panic) and shapes its result.
async fn run_tool(
    entry: &Entry,
    arguments: Map<String, Value>,
    request: Arc<RequestContext>,
) -> ToolResult {
    let arguments = Value::Object(arguments);
    if let Err(why) = entry.def.validate(&arguments) {
        return ToolResult::error(format!(
            "Invalid arguments for tool `{}`:\n{why}",
            entry.name
        ));
    }
    let Value::Object(arguments) = arguments else {
        unreachable!("built as an object above")
    };
    let call = ToolCall {
        arguments,
        service: entry.service.clone(),
        request,
    };
    let mut result = match (CatchUnwind((entry.call)(call))).await {
        Ok(r) => r,
        Err(panic) => panic_result(Some(panic)),
    };
    if entry.def.wraps_output()
        && !result.is_error
        && let Some(v) = result.structured_content.take()
    {
        let mut m = Map::with_capacity(1);
        m.insert("result".into(), v);
        result.structured_content = Some(Value::Object(m));
    }
    result
}

/// The result of a tool that panicked: the model sees `isError`, the server keeps serving.
pub(crate) fn panic_result(panic: Option<Box<dyn Any + Send>>) -> ToolResult {
    let why = panic
        .as_ref()
        .and_then(|p| {
            p.downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| p.downcast_ref::<String>().cloned())
        })
        .unwrap_or_else(|| "the tool panicked".to_owned());
    tracing::error!(panic = %why, "tool panicked");
    ToolResult::error(format!("internal error: the tool panicked: {why}"))
}

/// Polls a boxed future, turning a panic into an `Err`.
struct CatchUnwind<F>(F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.get_mut().0;
        match std::panic::catch_unwind(AssertUnwindSafe(|| Pin::new(inner).poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

/// Where a session's outgoing messages go (one JSON text per message, no newline).
pub(crate) type Outbound = mpsc::UnboundedSender<String>;

/// One connection's protocol state: the negotiated version, the client, the calls in flight.
pub(crate) struct Session {
    core: Arc<ServerCore>,
    out: Outbound,
    client: RwLock<Arc<ClientInfo>>,
    in_flight: Mutex<HashMap<String, tokio::task::AbortHandle>>,
}

#[derive(Deserialize)]
struct InitializeParams<'a> {
    #[serde(rename = "protocolVersion", borrow)]
    protocol_version: std::borrow::Cow<'a, str>,
    #[serde(default)]
    capabilities: Value,
    #[serde(rename = "clientInfo", default)]
    client_info: Value,
}

#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(borrow)]
    name: std::borrow::Cow<'a, str>,
    #[serde(default)]
    arguments: Value,
    #[serde(rename = "_meta", default)]
    meta: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
struct ListParams<'a> {
    #[serde(borrow, default)]
    cursor: Option<std::borrow::Cow<'a, str>>,
}

#[derive(Deserialize)]
struct CancelledParams {
    #[serde(rename = "requestId")]
    request_id: Value,
}

impl Session {
    /// A session of `core` whose outgoing messages go to `out`.
    pub(crate) fn new(core: Arc<ServerCore>, out: Outbound) -> Arc<Session> {
        Arc::new(Session {
            core,
            out,
            client: RwLock::new(Arc::new(ClientInfo::default())),
            in_flight: Mutex::new(HashMap::new()),
        })
    }

    fn send(&self, message: String) {
        // The receiver is gone only when the connection is closing; nothing is left to tell.
        let _ = self.out.send(message);
    }

    fn client(&self) -> Arc<ClientInfo> {
        self.client
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Handles one incoming line. Requests that run a tool are spawned, so many are in flight
    /// at once and each is answered when it finishes; everything else is answered in order.
    pub(crate) fn handle_line(self: &Arc<Self>, line: &[u8]) {
        let message = match protocol::parse(line) {
            Ok(m) => m,
            Err(response) => return self.send(response),
        };
        match message {
            Message::Request { id, method, params } => self.request(id, &method, params),
            Message::Notification { method, params } => self.notification(&method, params),
            Message::Response { id, outcome } => {
                tracing::debug!(
                    id = id.get(),
                    error = outcome.is_err(),
                    "ignoring a response to no request of ours"
                );
            }
        }
    }

    fn request(self: &Arc<Self>, id: &RawValue, method: &str, params: Option<&RawValue>) {
        let id_text = id.get();
        let outcome = match method {
            "initialize" => self.initialize(params),
            "ping" => Ok(Value::Object(Map::new())),
            "tools/list" => match parse_params::<ListParams<'_>>(params) {
                Ok(p) => match self.core.catalog.page(
                    p.as_ref().and_then(|p| p.cursor.as_deref()),
                    Era::of(self.client().protocol_version),
                ) {
                    Some(page) => {
                        return self.send(protocol::raw_result_response(id_text, page));
                    }
                    None => Err(RpcError::new(code::INVALID_PARAMS, "Invalid cursor")),
                },
                Err(e) => Err(e),
            },
            "tools/call" => return self.call(id, params),
            _ => Err(RpcError::new(
                code::METHOD_NOT_FOUND,
                format!("Method not found: `{method}`"),
            )),
        };
        self.send(match outcome {
            Ok(result) => protocol::result_response(id_text, &result),
            Err(error) => protocol::error_response(id_text, &error),
        });
    }

    fn initialize(&self, params: Option<&RawValue>) -> Result<Value, RpcError> {
        let params = parse_params::<InitializeParams<'_>>(params)?
            .ok_or_else(|| RpcError::new(code::INVALID_PARAMS, "`initialize` needs params"))?;
        let version = ProtocolVersion::negotiate(&params.protocol_version);
        let client = ClientInfo {
            protocol_version: version,
            info: params.client_info,
            capabilities: params.capabilities,
        };
        *self
            .client
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(client);
        Ok(self.core.initialize_result(version))
    }

    fn call(self: &Arc<Self>, id: &RawValue, params: Option<&RawValue>) {
        let id_text = id.get().to_owned();
        let params = match parse_params::<CallParams<'_>>(params) {
            Ok(Some(p)) => p,
            Ok(None) => {
                let e = RpcError::new(code::INVALID_PARAMS, "`tools/call` needs params");
                return self.send(protocol::error_response(&id_text, &e));
            }
            Err(e) => return self.send(protocol::error_response(&id_text, &e)),
        };
        let Some(entry) = self.core.catalog.get(&params.name) else {
            return self.send(protocol::error_response(
                &id_text,
                &unknown_tool(&params.name),
            ));
        };
        let arguments = match params.arguments {
            Value::Null => Map::new(),
            Value::Object(m) => m,
            _ => {
                let e = RpcError::new(code::INVALID_PARAMS, "`arguments` must be an object");
                return self.send(protocol::error_response(&id_text, &e));
            }
        };
        let request = Arc::new(RequestContext {
            id: serde_json::from_str(&id_text).unwrap_or(Value::Null),
            tool: entry.name.clone(),
            meta: params.meta,
            client: self.client(),
        });
        let session = self.clone();
        let name = entry.name.clone();
        let key = id_text.clone();
        // The in-flight table is locked while spawning, so the task cannot remove its entry
        // before it is inserted. The task looks its entry up again by name: the catalog lives
        // as long as the session.
        let mut in_flight = self.lock_in_flight();
        let task = tokio::spawn(async move {
            let entry = session
                .core
                .catalog
                .get(&name)
                .expect("the catalog does not change");
            let era = Era::of(request.protocol_version());
            let mut result = run_tool(entry, arguments, request).await.to_json();
            era.shape_result(&mut result);
            session.finish(&key);
            session.send(protocol::result_response(&id_text, &result));
        });
        in_flight.insert(id.get().to_owned(), task.abort_handle());
    }

    fn finish(&self, key: &str) {
        self.lock_in_flight().remove(key);
    }

    fn lock_in_flight(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, tokio::task::AbortHandle>> {
        self.in_flight
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn notification(&self, method: &str, params: Option<&RawValue>) {
        match method {
            "notifications/initialized" => {}
            "notifications/cancelled" => {
                if let Ok(Some(p)) = parse_params::<CancelledParams>(params) {
                    let key = p.request_id.to_string();
                    if let Some(task) = self.lock_in_flight().remove(&key) {
                        // Dropping the tool's future is its cancellation; no response is sent.
                        task.abort();
                    }
                }
            }
            other => tracing::debug!(method = other, "ignoring an unknown notification"),
        }
    }

    /// Cancels every call still in flight (the connection is closing).
    pub(crate) fn abort_all(&self) {
        for (_, task) in self.lock_in_flight().drain() {
            task.abort();
        }
    }
}

/// Parses a request's params; a missing `params` is `None`.
fn parse_params<'a, T: Deserialize<'a>>(
    params: Option<&'a RawValue>,
) -> Result<Option<T>, RpcError> {
    match params {
        None => Ok(None),
        Some(p) => serde_json::from_str(p.get())
            .map(Some)
            .map_err(|e| RpcError::new(code::INVALID_PARAMS, format!("Invalid params: {e}"))),
    }
}
