//! The server: a builder that gathers tools and service instances, the immutable core built
//! from it at start, and the per-connection [`Session`] that answers JSON-RPC messages.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};

use crate::content::ResourceContents;
use crate::context::{CancellationToken, ClientInfo, LogLevel, ProgressState, RequestContext};
use crate::extract::ToolCall;
use crate::http::HttpConfig;
use crate::manager::{Batch, Selector};
use crate::protocol::{self, Era, Message, ProtocolVersion, RpcError, code};
use crate::registry::{self, Catalog, Entry, Services, StartError, ToolRecord, ToolSet};
use crate::resources::{Offerings, Prompt, Resource, ResourceTemplate};
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
    states: Services,
    tools: Vec<ToolRecord>,
    use_inventory: bool,
    only: Option<Vec<String>>,
    page_size: usize,
    timeout: Option<Duration>,
    pub(crate) http: HttpConfig,
    offerings: Offerings,
    ui_csp: Option<Value>,
    dynamic: Vec<crate::dynamic::DynamicTool>,
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
            states: HashMap::new(),
            tools: Vec::new(),
            use_inventory: true,
            only: None,
            page_size: 1000,
            timeout: None,
            http: HttpConfig::default(),
            offerings: Offerings::default(),
            ui_csp: None,
            dynamic: Vec::new(),
        }
    }

    /// Offers a tool defined at run time, without the macros.
    pub fn dynamic_tool(mut self, tool: crate::dynamic::DynamicTool) -> Self {
        self.dynamic.push(tool);
        self
    }

    /// The domains MCP Apps views may reach (`_meta.ui.csp` of every `ui://` resource): for
    /// `fetch`/XHR/WebSocket (`connect`) and for scripts, styles, images and fonts
    /// (`resources`). Without it hosts apply their restrictive default.
    pub fn ui_csp<C, R, S1, S2>(mut self, connect: C, resources: R) -> Self
    where
        C: IntoIterator<Item = S1>,
        R: IntoIterator<Item = S2>,
        S1: Into<String>,
        S2: Into<String>,
    {
        let list =
            |items: Vec<String>| Value::Array(items.into_iter().map(Value::String).collect());
        self.ui_csp = Some(serde_json::json!({
            "connectDomains": list(connect.into_iter().map(Into::into).collect()),
            "resourceDomains": list(resources.into_iter().map(Into::into).collect()),
        }));
        self
    }

    /// Offers a resource (`resources/list`, `resources/read`).
    pub fn resource(mut self, resource: Resource) -> Self {
        self.offerings.resources.push(resource);
        self
    }

    /// Offers a family of resources named by a URI template.
    pub fn resource_template(mut self, template: ResourceTemplate) -> Self {
        self.offerings.templates.push(template);
        self
    }

    /// Offers a prompt (`prompts/list`, `prompts/get`).
    pub fn prompt(mut self, prompt: Prompt) -> Self {
        self.offerings.prompts.push(prompt);
        self
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

    /// Gives a value that tools take as `State<T>`.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.states.insert(TypeId::of::<T>(), Arc::new(value));
        self
    }

    /// The time limit of a call for tools without a `timeout` of their own (none by default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// How the HTTP endpoint behaves (hosts, origins, body limit, sessions, auth).
    pub fn http_config(mut self, config: HttpConfig) -> Self {
        self.http = config;
        self
    }

    /// Guards the HTTP endpoint with an authenticator, such as [`BearerTokens`](crate::BearerTokens).
    pub fn auth(mut self, auth: impl crate::http::Authenticator) -> Self {
        self.http.auth = Some(Arc::new(auth));
        self
    }

    /// The MCP endpoint as an axum `Router`, to mount in an application beside its own
    /// routes and middleware (`app.merge(router)`).
    pub fn into_router(self) -> Result<axum::Router, StartError> {
        let config = self.http.clone();
        Ok(self.build()?.http_router(config))
    }

    /// Serves MCP over Streamable HTTP on `addr` until SIGINT or SIGTERM.
    pub async fn serve_http(self, addr: std::net::SocketAddr) -> crate::Result<()> {
        let config = self.http.clone();
        self.build()?.serve_http(addr, config).await?;
        Ok(())
    }

    /// Serves MCP over Streamable HTTP on a listener bound already, until SIGINT or SIGTERM.
    pub async fn serve_http_on(self, listener: tokio::net::TcpListener) -> crate::Result<()> {
        let config = self.http.clone();
        self.build()?.serve_http_on(listener, config).await?;
        Ok(())
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
        let mut catalog = Catalog::build(
            &self.name,
            records,
            &self.services,
            &self.states,
            self.page_size,
        )?;
        let mut problems = Vec::new();
        for tool in &self.dynamic {
            if catalog.get(tool.name()).is_some() {
                problems.push(format!(
                    "two tools are named `{}` (one is dynamic)",
                    tool.name()
                ));
                continue;
            }
            match tool.entry(&self.name) {
                Ok(entry) => catalog = catalog.changed(Some(entry), None),
                Err(errs) => problems.extend(
                    errs.into_iter()
                        .map(|e| format!("dynamic tool `{}`: {e}", tool.name())),
                ),
            }
        }
        if !problems.is_empty() {
            return Err(StartError::new(problems));
        }
        let catalog = Arc::new(catalog);
        tracing::debug!(tools = catalog.entries().len(), "mcp server ready");
        let mut offerings = self.offerings;
        for entry in catalog.entries() {
            if let Some((uri, name, html)) = entry.def.ui()
                && !offerings.resources.iter().any(|r| r.uri() == uri)
            {
                offerings.resources.push(crate::resources::ui_resource(
                    uri,
                    name,
                    html,
                    self.ui_csp.as_ref(),
                ));
            }
        }
        Ok(Arc::new(ServerCore {
            name: self.name,
            version: self.version,
            title: self.title,
            instructions: self.instructions,
            catalog: RwLock::new(catalog),
            states: self.states,
            timeout: self.timeout,
            sessions: Mutex::new(Vec::new()),
            global_changes: Mutex::new(Vec::new()),
            capabilities: capabilities(&offerings),
            offerings: RwLock::new(Arc::new(offerings)),
        }))
    }
}

/// The immutable core of a running server, shared by all its sessions.
pub struct ServerCore {
    name: String,
    version: String,
    title: Option<String>,
    instructions: Option<String>,
    catalog: RwLock<Arc<Catalog>>,
    states: Services,
    timeout: Option<Duration>,
    sessions: Mutex<Vec<Weak<Session>>>,
    global_changes: Mutex<Vec<Batch>>,
    offerings: RwLock<Arc<Offerings>>,
    capabilities: Value,
}

/// What the server declares it can do, from what it offers.
fn capabilities(offerings: &Offerings) -> Value {
    let mut caps = serde_json::json!({ "tools": { "listChanged": true }, "logging": {} });
    if offerings.has_resources() {
        caps["resources"] = serde_json::json!({ "subscribe": true, "listChanged": true });
    }
    if !offerings.prompts.is_empty() {
        caps["prompts"] = serde_json::json!({ "listChanged": true });
    }
    if offerings.has_completions() {
        caps["completions"] = serde_json::json!({});
    }
    caps
}

impl std::fmt::Debug for ServerCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerCore")
            .field("name", &self.name)
            .field("tools", &self.catalog().entries().len())
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

    /// The `tools/list` entries a new session sees (hidden tools left out), in order.
    pub fn tool_list(&self) -> Vec<Value> {
        self.tools()
            .filter(|t| !t.hidden() && t.for_model())
            .map(|t| t.to_json().clone())
            .collect()
    }

    /// Every tool's definition, hidden ones included, in order.
    pub fn tools(&self) -> std::vec::IntoIter<Arc<crate::schema::ToolDef>> {
        self.catalog()
            .entries()
            .iter()
            .map(|e| e.def.clone())
            .collect::<Vec<_>>()
            .into_iter()
    }

    /// The current catalog (it changes when dynamic tools are added or removed).
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        self.catalog
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Calls a tool in-process, validating the arguments as `tools/call` does. `Err` is the
    /// JSON-RPC error a client would get (unknown tool). Notifications the tool sends are
    /// dropped and requests it makes of the client fail: there is no client.
    pub async fn call(
        self: &Arc<Self>,
        name: &str,
        arguments: Value,
    ) -> Result<ToolResult, RpcError> {
        let (tx, _) = mpsc::unbounded_channel();
        let session = Session::one_shot(self.clone(), tx);
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
        let entry = session
            .active_entry(name)
            .ok_or_else(|| unknown_tool(name))?;
        let request = session.request_context(&entry, Value::from(0), None);
        Ok(session.run_tool(&entry, arguments, request).await)
    }

    /// Adds a dynamic tool while serving (replacing a dynamic tool of the same name); every
    /// session is sent `notifications/tools/list_changed`. A tool defined with `#[tool]`
    /// cannot be replaced.
    pub fn add_tool(&self, tool: crate::dynamic::DynamicTool) -> Result<(), StartError> {
        let entry = tool.entry(&self.name).map_err(StartError::new)?;
        {
            let mut catalog = self
                .catalog
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(existing) = catalog.get(tool.name())
                && matches!(existing.call, registry::Call::Static(_))
            {
                return Err(StartError::new(vec![format!(
                    "a `#[tool]` named `{}` exists already",
                    tool.name()
                )]));
            }
            *catalog = Arc::new(catalog.changed(Some(entry), None));
        }
        self.tools_changed();
        Ok(())
    }

    /// Removes a dynamic tool while serving; every session is sent
    /// `notifications/tools/list_changed`. Returns whether a dynamic tool of that name existed
    /// (a `#[tool]` is not removed: disable it with the tool manager instead).
    pub fn remove_tool(&self, name: &str) -> bool {
        {
            let mut catalog = self
                .catalog
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if !catalog
                .get(name)
                .is_some_and(|e| matches!(e.call, registry::Call::Dynamic(_)))
            {
                return false;
            }
            *catalog = Arc::new(catalog.changed(None, Some(name)));
        }
        self.tools_changed();
        true
    }

    fn tools_changed(&self) {
        for session in self.live_sessions() {
            session.notify(
                None,
                "notifications/tools/list_changed",
                Value::Object(Map::new()),
            );
        }
    }

    /// Changes the tool selection of every session, current and future; each session whose
    /// list changes is sent `notifications/tools/list_changed`. Returns the tools active for a
    /// new session. Unknown names are refused.
    pub fn change_tools(&self, batch: Batch) -> Result<Vec<String>, StartError> {
        let catalog = self.catalog();
        let probe = Selector::default();
        for earlier in lock(&self.global_changes).iter() {
            let _ = probe.apply(&catalog, earlier);
        }
        let (active, _) = probe
            .apply(&catalog, &batch)
            .map_err(|e| StartError::new(vec![e]))?;
        let sessions: Vec<Arc<Session>> = {
            let mut sessions = lock(&self.sessions);
            sessions.retain(|s| s.strong_count() > 0);
            sessions.iter().filter_map(Weak::upgrade).collect()
        };
        for session in sessions {
            let _ = session.apply_tools(None, &batch);
        }
        lock(&self.global_changes).push(batch);
        Ok(active)
    }

    pub(crate) fn offerings(&self) -> Arc<Offerings> {
        self.offerings
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn live_sessions(&self) -> Vec<Arc<Session>> {
        let mut sessions = lock(&self.sessions);
        sessions.retain(|s| s.strong_count() > 0);
        sessions.iter().filter_map(Weak::upgrade).collect()
    }

    fn change_offerings(&self, change: impl FnOnce(&mut Offerings), notification: &str) {
        {
            let mut offerings = self
                .offerings
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let mut next = (**offerings).clone();
            change(&mut next);
            *offerings = Arc::new(next);
        }
        for session in self.live_sessions() {
            session.notify(None, notification, Value::Object(Map::new()));
        }
    }

    /// Adds a resource while serving (replacing one with the same URI); every session is sent
    /// `notifications/resources/list_changed`.
    pub fn add_resource(&self, resource: Resource) {
        self.change_offerings(
            |o| {
                o.resources.retain(|r| r.uri() != resource.uri());
                o.resources.push(resource);
            },
            "notifications/resources/list_changed",
        );
    }

    /// Removes a resource while serving; every session is sent
    /// `notifications/resources/list_changed`.
    pub fn remove_resource(&self, uri: &str) {
        self.change_offerings(
            |o| o.resources.retain(|r| r.uri() != uri),
            "notifications/resources/list_changed",
        );
    }

    /// Adds a prompt while serving; every session is sent `notifications/prompts/list_changed`.
    pub fn add_prompt(&self, prompt: Prompt) {
        self.change_offerings(
            |o| o.prompts.push(prompt),
            "notifications/prompts/list_changed",
        );
    }

    /// Tells every session subscribed to `uri` that the resource changed
    /// (`notifications/resources/updated`).
    pub fn resource_updated(&self, uri: &str) {
        for session in self.live_sessions() {
            if lock(&session.subscriptions).contains(uri) {
                session.notify(
                    None,
                    "notifications/resources/updated",
                    serde_json::json!({ "uri": uri }),
                );
            }
        }
    }

    /// The value given with [`Server::state`].
    pub(crate) fn state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.states
            .get(&TypeId::of::<T>())?
            .clone()
            .downcast::<T>()
            .ok()
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
        result.insert("capabilities".into(), self.capabilities.clone());
        result.insert("serverInfo".into(), Value::Object(info));
        if let Some(i) = &self.instructions {
            result.insert("instructions".into(), Value::String(i.clone()));
        }
        Value::Object(result)
    }
}

/// The response to a tool call, its result shaped for the session's protocol era.
fn call_response(id: &str, era: Era, result: ToolResult) -> String {
    if era == Era::Structured {
        return protocol::result_response(id, &result);
    }
    let mut result = result.to_json();
    era.shape_result(&mut result);
    protocol::result_response(id, &result)
}

fn unknown_tool(name: &str) -> RpcError {
    RpcError::new(code::INVALID_PARAMS, format!("Unknown tool: `{name}`"))
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

/// One outgoing message (JSON text, no newline) and the request it belongs to, so a
/// transport that routes (HTTP) can put it on that request's stream.
#[derive(Debug)]
pub(crate) struct Outgoing {
    pub(crate) text: String,
    /// The id (as JSON text) of the client request this message belongs to.
    pub(crate) related: Option<Arc<str>>,
    /// Whether this is the response to `related` (its stream ends with it). An empty `text`
    /// with `is_response` ends a cancelled request's stream without a response.
    pub(crate) is_response: bool,
}

/// Where a session's outgoing messages go: a channel to the one stream of a connection
/// (stdio, one-shot sessions), or a transport that puts each message on its stream at once
/// (HTTP sessions, whose messages belong to different requests' streams).
pub(crate) enum Outbound {
    Channel(mpsc::UnboundedSender<Outgoing>),
    Routed(Weak<dyn Deliver>),
}

/// A transport that routes a session's messages itself.
pub(crate) trait Deliver: Send + Sync {
    /// Puts the message on the stream it belongs to (or drops it if that stream is gone).
    fn deliver(&self, message: Outgoing);
}

impl Outbound {
    fn send(&self, message: Outgoing) {
        match self {
            // The receiver is gone only when the connection is closing; nothing is left to tell.
            Outbound::Channel(tx) => {
                let _ = tx.send(message);
            }
            Outbound::Routed(to) => {
                if let Some(to) = to.upgrade() {
                    to.deliver(message);
                }
            }
        }
    }

    fn is_closed(&self) -> bool {
        match self {
            Outbound::Channel(tx) => tx.is_closed(),
            Outbound::Routed(to) => to.strong_count() == 0,
        }
    }
}

impl From<mpsc::UnboundedSender<Outgoing>> for Outbound {
    fn from(tx: mpsc::UnboundedSender<Outgoing>) -> Self {
        Outbound::Channel(tx)
    }
}

/// One connection's protocol state: the negotiated version, the client, the calls in flight,
/// the requests made of the client, the log level and the tool selection.
pub(crate) struct Session {
    core: Arc<ServerCore>,
    out: Outbound,
    client: RwLock<Arc<ClientInfo>>,
    in_flight: Mutex<HashMap<String, InFlight>>,
    next_request: AtomicU64,
    pending: Mutex<HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>>,
    /// The client's minimum log level; `u8::MAX` until it sets one (then everything is sent).
    log_level: AtomicU8,
    selector: Selector,
    /// Who the session belongs to (HTTP with an authenticator).
    identity: RwLock<Option<Arc<crate::http::Identity>>>,
    /// Whether the transport can carry requests to the client and their answers back.
    can_request: AtomicBool,
    /// The resource URIs the client subscribed to.
    subscriptions: Mutex<std::collections::HashSet<String>>,
}

/// A call in flight: how to stop it.
struct InFlight {
    abort: tokio::task::AbortHandle,
    cancel: CancellationToken,
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

#[derive(Deserialize)]
struct UriParams {
    uri: String,
}

#[derive(Deserialize)]
struct PromptParams {
    name: String,
    #[serde(default)]
    arguments: Map<String, Value>,
}

#[derive(Deserialize)]
struct CompleteArgument {
    name: String,
    #[serde(default)]
    value: String,
}

#[derive(Deserialize)]
struct CompleteParams {
    #[serde(rename = "ref")]
    reference: Value,
    argument: CompleteArgument,
    #[serde(default)]
    context: Option<Value>,
}

fn refused(r: crate::resources::Refused) -> RpcError {
    RpcError {
        code: r.code,
        message: r.message,
        data: r.data,
    }
}

#[derive(Deserialize)]
struct SetLevelParams<'a> {
    #[serde(borrow)]
    level: std::borrow::Cow<'a, str>,
}

impl Session {
    /// A session of `core` whose outgoing messages go to `out`.
    pub(crate) fn new(core: Arc<ServerCore>, out: impl Into<Outbound>) -> Arc<Session> {
        let session = Self::one_shot(core, out);
        {
            let mut sessions = lock(&session.core.sessions);
            sessions.retain(|s| s.strong_count() > 0);
            sessions.push(Arc::downgrade(&session));
        }
        session
    }

    /// A session for one message (stateless HTTP, an in-process call): not among the core's
    /// live sessions, so catalog changes are not announced to it.
    pub(crate) fn one_shot(core: Arc<ServerCore>, out: impl Into<Outbound>) -> Arc<Session> {
        let out = out.into();
        let selector = Selector::default();
        let catalog = core.catalog();
        for change in lock(&core.global_changes).iter() {
            let _ = selector.apply(&catalog, change);
        }
        Arc::new(Session {
            core,
            out,
            client: RwLock::new(Arc::new(ClientInfo::default())),
            in_flight: Mutex::new(HashMap::new()),
            next_request: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            log_level: AtomicU8::new(u8::MAX),
            selector,
            identity: RwLock::new(None),
            can_request: AtomicBool::new(true),
            subscriptions: Mutex::new(std::collections::HashSet::new()),
        })
    }

    pub(crate) fn core(&self) -> &Arc<ServerCore> {
        &self.core
    }

    pub(crate) fn set_identity(&self, identity: Option<Arc<crate::http::Identity>>) {
        *self
            .identity
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = identity;
    }

    /// A session that lives for one message: it cannot make requests of the client, and the
    /// protocol version comes from the transport.
    pub(crate) fn set_stateless(&self, version: ProtocolVersion) {
        self.can_request.store(false, Ordering::Relaxed);
        let client = ClientInfo {
            protocol_version: version,
            ..ClientInfo::default()
        };
        *self
            .client
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(client);
    }

    fn emit(&self, text: String, related: Option<&Arc<str>>, is_response: bool) {
        self.out.send(Outgoing {
            text,
            related: related.cloned(),
            is_response,
        });
    }

    /// Sends a message that belongs to no request.
    fn send(&self, text: String) {
        self.emit(text, None, false);
    }

    /// Sends the response to the request whose id is `id` (JSON text as received).
    fn respond(&self, id: &str, text: String) {
        self.emit(text, Some(&protocol::id_key(id)), true);
    }

    /// Sends a notification to the client, on the stream of the request it belongs to.
    pub(crate) fn notify(&self, related: Option<&Arc<str>>, method: &str, params: Value) {
        self.emit(protocol::notification(method, &params), related, false);
    }

    /// Sends a request to the client and waits for its response.
    pub(crate) async fn request(
        &self,
        related: Option<&Arc<str>>,
        method: &str,
        params: Value,
    ) -> Result<Value, RpcError> {
        if !self.can_request.load(Ordering::Relaxed) || self.out.is_closed() {
            return Err(RpcError::new(
                code::INTERNAL_ERROR,
                "this connection cannot carry requests to the client (stateless or in-process)",
            ));
        }
        let id = self.next_request.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        // Forget the request if the waiting call is dropped (cancelled) first.
        let _forget = Forget { session: self, id };
        self.emit(protocol::request(id, method, &params), related, false);
        match rx.await {
            Ok(answer) => answer,
            Err(_) => Err(RpcError::new(
                code::INTERNAL_ERROR,
                "the connection closed before the client answered",
            )),
        }
    }

    fn client(&self) -> Arc<ClientInfo> {
        self.client
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Whether a log message at `level` goes to the client.
    pub(crate) fn logs(&self, level: LogLevel) -> bool {
        let min = self.log_level.load(Ordering::Relaxed);
        min == u8::MAX || level as u8 >= min
    }

    /// The active tools' names, in order.
    pub(crate) fn active_tools(&self) -> Vec<String> {
        self.selector.active(&self.core.catalog())
    }

    /// Changes the tool selection; tells the client when the list changed.
    pub(crate) fn apply_tools(
        &self,
        related: Option<&Arc<str>>,
        batch: &Batch,
    ) -> Result<Vec<String>, String> {
        let (active, changed) = self.selector.apply(&self.core.catalog(), batch)?;
        if changed {
            self.notify(
                related,
                "notifications/tools/list_changed",
                Value::Object(Map::new()),
            );
        }
        Ok(active)
    }

    /// The entry of an active tool.
    fn active_entry(&self, name: &str) -> Option<Arc<Entry>> {
        let catalog = self.core.catalog();
        let entry = catalog.get(name)?;
        self.selector
            .read()
            .is_active(name, entry.def.hidden(), entry.def.always_visible())
            .then(|| entry.clone())
    }

    /// Handles one incoming line. A tool call that finishes at once is answered here; one that
    /// waits goes on in a task of its own, so many are in flight at once and each is answered
    /// when it finishes. Everything else is answered in order.
    pub(crate) fn handle_line(self: &Arc<Self>, line: &[u8]) {
        match protocol::parse(line) {
            Ok(message) => self.handle_message(message),
            Err(response) => self.send(response),
        }
    }

    /// Handles one message parsed already (the HTTP transport reads its id first).
    pub(crate) fn handle_message(self: &Arc<Self>, message: Message<'_>) {
        match message {
            Message::Request { id, method, params } => self.handle_request(id, &method, params),
            Message::Notification { method, params } => self.notification(&method, params),
            Message::Response { id, outcome } => self.response(id, outcome),
        }
    }

    fn response(&self, id: &RawValue, outcome: Result<&RawValue, &RawValue>) {
        let waiter = id
            .get()
            .parse::<u64>()
            .ok()
            .and_then(|id| lock(&self.pending).remove(&id));
        let Some(waiter) = waiter else {
            tracing::debug!(id = id.get(), "ignoring a response to no request of ours");
            return;
        };
        let answer = match outcome {
            Ok(result) => serde_json::from_str(result.get())
                .map_err(|e| RpcError::new(code::PARSE_ERROR, e.to_string())),
            Err(error) => Err(serde_json::from_str::<Value>(error.get()).map_or_else(
                |e| RpcError::new(code::PARSE_ERROR, e.to_string()),
                |v| RpcError::from_json(&v),
            )),
        };
        let _ = waiter.send(answer);
    }

    fn handle_request(self: &Arc<Self>, id: &RawValue, method: &str, params: Option<&RawValue>) {
        let id_text = id.get();
        // The methods of a capability the server did not declare do not exist for the client.
        let capability = match method.split_once('/') {
            Some(("resources", _)) => Some("resources"),
            Some(("prompts", _)) => Some("prompts"),
            Some(("completion", _)) => Some("completions"),
            _ => None,
        };
        if let Some(c) = capability
            && self.core.capabilities.get(c).is_none()
        {
            return self.respond(
                id_text,
                protocol::error_response(
                    id_text,
                    &RpcError::new(
                        code::METHOD_NOT_FOUND,
                        format!("Method not found: `{method}` (this server offers no {c})"),
                    ),
                ),
            );
        }
        let outcome = match method {
            "initialize" => self.initialize(params),
            "ping" => Ok(Value::Object(Map::new())),
            "tools/list" => match parse_params::<ListParams<'_>>(params) {
                Ok(p) => {
                    return self.list_tools(id_text, p.as_ref().and_then(|p| p.cursor.as_deref()));
                }
                Err(e) => Err(e),
            },
            "tools/call" => return self.call(id, params),
            "logging/setLevel" => self.set_level(params),
            "resources/list" => self.list_offerings(params, "resources", |o| {
                o.resources.iter().map(Resource::to_json).collect()
            }),
            "resources/templates/list" => self.list_offerings(params, "resourceTemplates", |o| {
                o.templates.iter().map(ResourceTemplate::to_json).collect()
            }),
            "prompts/list" => self.list_offerings(params, "prompts", |o| {
                o.prompts.iter().map(Prompt::to_json).collect()
            }),
            "resources/read" => return self.read_resource(id, params),
            "prompts/get" => return self.get_prompt(id, params),
            "resources/subscribe" | "resources/unsubscribe" => {
                self.subscribe(params, method == "resources/subscribe")
            }
            "completion/complete" => self.complete(params),
            _ => Err(RpcError::new(
                code::METHOD_NOT_FOUND,
                format!("Method not found: `{method}`"),
            )),
        };
        self.respond(
            id_text,
            match outcome {
                Ok(result) => protocol::result_response(id_text, &result),
                Err(error) => protocol::error_response(id_text, &error),
            },
        );
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

    /// A `…/list` of resources, templates or prompts, paginated like `tools/list`.
    fn list_offerings(
        &self,
        params: Option<&RawValue>,
        key: &str,
        items: impl FnOnce(&Offerings) -> Vec<Value>,
    ) -> Result<Value, RpcError> {
        let params = parse_params::<ListParams<'_>>(params)?;
        let items = items(&self.core.offerings());
        let size = self.core.catalog().page_size();
        let start = match params.as_ref().and_then(|p| p.cursor.as_deref()) {
            None => 0,
            Some(c) => c
                .parse::<usize>()
                .ok()
                .filter(|&i| i > 0 && i < items.len())
                .ok_or_else(invalid_cursor)?,
        };
        let end = (start + size).min(items.len());
        let mut result = Map::new();
        result.insert(key.into(), Value::Array(items[start..end].to_vec()));
        if end < items.len() {
            result.insert("nextCursor".into(), Value::String(end.to_string()));
        }
        Ok(Value::Object(result))
    }

    /// Runs a handler in its own task, answering with its outcome.
    fn spawn_answer<F>(self: &Arc<Self>, id: &RawValue, answer: F)
    where
        F: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        let id_text = id.get().to_owned();
        let response = {
            let id_text = id_text.clone();
            async move {
                match answer.await {
                    Ok(result) => protocol::result_response(&id_text, &result),
                    Err(error) => protocol::error_response(&id_text, &error),
                }
            }
        };
        self.spawn_tracked(id_text, CancellationToken::default(), response);
    }

    /// Answers a request from a task of its own, listed in the in-flight table (so that
    /// `notifications/cancelled` stops it) until its response is ready.
    fn spawn_tracked<F>(self: &Arc<Self>, id_text: String, cancel: CancellationToken, response: F)
    where
        F: Future<Output = String> + Send + 'static,
    {
        let session = self.clone();
        let key = protocol::id_key(&id_text).to_string();
        let task_key = key.clone();
        // The in-flight table is locked while spawning, so the task cannot remove its entry
        // before it is inserted.
        let mut in_flight = lock(&self.in_flight);
        let task = tokio::spawn(async move {
            let response = response.await;
            lock(&session.in_flight).remove(&task_key);
            session.respond(&id_text, response);
        });
        in_flight.insert(
            key,
            InFlight {
                abort: task.abort_handle(),
                cancel,
            },
        );
    }

    fn read_resource(self: &Arc<Self>, id: &RawValue, params: Option<&RawValue>) {
        let outcome = parse_params::<UriParams>(params).and_then(|p| {
            let p = p.ok_or_else(|| {
                RpcError::new(code::INVALID_PARAMS, "`resources/read` needs a `uri`")
            })?;
            self.core.offerings().reader(&p.uri).map_err(refused)
        });
        match outcome {
            Err(e) => self.respond(id.get(), protocol::error_response(id.get(), &e)),
            Ok((read, request)) => self.spawn_answer(id, async move {
                let contents = read(request)
                    .await
                    .map_err(|e| RpcError::new(code::INTERNAL_ERROR, e.render()))?;
                let contents: Vec<Value> = contents.iter().map(ResourceContents::to_json).collect();
                Ok(serde_json::json!({ "contents": contents }))
            }),
        }
    }

    fn get_prompt(self: &Arc<Self>, id: &RawValue, params: Option<&RawValue>) {
        let outcome = parse_params::<PromptParams>(params).and_then(|p| {
            let p = p.ok_or_else(|| {
                RpcError::new(code::INVALID_PARAMS, "`prompts/get` needs a `name`")
            })?;
            self.core
                .offerings()
                .prompt(&p.name, p.arguments)
                .map_err(refused)
        });
        match outcome {
            Err(e) => self.respond(id.get(), protocol::error_response(id.get(), &e)),
            Ok((get, request)) => self.spawn_answer(id, async move {
                let result = get(request)
                    .await
                    .map_err(|e| RpcError::new(code::INTERNAL_ERROR, e.render()))?;
                Ok(result.to_json())
            }),
        }
    }

    fn subscribe(&self, params: Option<&RawValue>, on: bool) -> Result<Value, RpcError> {
        let p = parse_params::<UriParams>(params)?
            .ok_or_else(|| RpcError::new(code::INVALID_PARAMS, "a `uri` is needed"))?;
        let mut subscriptions = lock(&self.subscriptions);
        if on {
            subscriptions.insert(p.uri);
        } else {
            subscriptions.remove(&p.uri);
        }
        Ok(Value::Object(Map::new()))
    }

    fn complete(&self, params: Option<&RawValue>) -> Result<Value, RpcError> {
        let p = parse_params::<CompleteParams>(params)?.ok_or_else(|| {
            RpcError::new(code::INVALID_PARAMS, "`completion/complete` needs params")
        })?;
        let context = p
            .context
            .as_ref()
            .and_then(|c| c.get("arguments"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let values = self
            .core
            .offerings()
            .complete(&p.reference, &p.argument.name, &p.argument.value, &context)
            .map_err(refused)?;
        Ok(serde_json::json!({
            "completion": { "values": values, "total": values.len(), "hasMore": false }
        }))
    }

    fn set_level(&self, params: Option<&RawValue>) -> Result<Value, RpcError> {
        let params = parse_params::<SetLevelParams<'_>>(params)?.ok_or_else(|| {
            RpcError::new(code::INVALID_PARAMS, "`logging/setLevel` needs params")
        })?;
        let level = LogLevel::parse(&params.level).ok_or_else(|| {
            RpcError::new(
                code::INVALID_PARAMS,
                format!("unknown log level `{}`", params.level),
            )
        })?;
        self.log_level.store(level as u8, Ordering::Relaxed);
        Ok(Value::Object(Map::new()))
    }

    fn list_tools(&self, id: &str, cursor: Option<&str>) {
        let era = Era::of(self.client().protocol_version);
        let selection = self.selector.read();
        let catalog = self.core.catalog();
        let response = if selection.is_default() {
            // The catalog's pages were rendered once for the default selection.
            match catalog.page(cursor, era) {
                Some(page) => protocol::raw_result_response(id, page),
                None => protocol::error_response(id, &invalid_cursor()),
            }
        } else {
            let tools: Vec<&Entry> = catalog
                .entries()
                .iter()
                .map(|e| &**e)
                .filter(|e| {
                    e.def.for_model()
                        && selection.is_active(&e.name, e.def.hidden(), e.def.always_visible())
                })
                .collect();
            match registry::render_page(&tools, catalog.page_size(), cursor, era) {
                Some(page) => protocol::raw_result_response(id, &page),
                None => protocol::error_response(id, &invalid_cursor()),
            }
        };
        drop(selection);
        self.respond(id, response);
    }

    pub(crate) fn request_context(
        self: &Arc<Self>,
        entry: &Entry,
        id: Value,
        meta: Option<Map<String, Value>>,
    ) -> Arc<RequestContext> {
        let token = meta.as_ref().and_then(|m| m.get("progressToken")).cloned();
        Arc::new(RequestContext {
            related: Arc::from(id.to_string()),
            id,
            tool: entry.name.clone(),
            meta,
            client: self.client(),
            identity: self
                .identity
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone(),
            session: self.clone(),
            cancel: CancellationToken::default(),
            progress: ProgressState::new(token),
        })
    }

    fn call(self: &Arc<Self>, id: &RawValue, params: Option<&RawValue>) {
        let id_text = id.get().to_owned();
        let params = match parse_params::<CallParams<'_>>(params) {
            Ok(Some(p)) => p,
            Ok(None) => {
                let e = RpcError::new(code::INVALID_PARAMS, "`tools/call` needs params");
                return self.respond(&id_text, protocol::error_response(&id_text, &e));
            }
            Err(e) => return self.respond(&id_text, protocol::error_response(&id_text, &e)),
        };
        let Some(entry) = self.active_entry(&params.name) else {
            return self.respond(
                &id_text,
                protocol::error_response(&id_text, &unknown_tool(&params.name)),
            );
        };
        let arguments = match params.arguments {
            Value::Null => Map::new(),
            Value::Object(m) => m,
            _ => {
                let e = RpcError::new(code::INVALID_PARAMS, "`arguments` must be an object");
                return self.respond(&id_text, protocol::error_response(&id_text, &e));
            }
        };
        let request = self.request_context(
            &entry,
            serde_json::from_str(&id_text).unwrap_or(Value::Null),
            params.meta,
        );
        let cancel = request.cancel.clone();
        let era = Era::of(request.protocol_version());
        let session = self.clone();
        let mut run = Box::pin(async move { session.run_tool(&entry, arguments, request).await });
        // Most calls finish without waiting for anything: answer those right here, sparing a
        // task and a hand-off between threads. A call that is not done yet goes on in a task
        // of its own, whose first poll registers the wakers it really needs (the one used
        // here wakes nothing).
        let mut here = Context::from_waker(std::task::Waker::noop());
        if let Poll::Ready(result) = run.as_mut().poll(&mut here) {
            return self.respond(&id_text, call_response(&id_text, era, result));
        }
        let response = {
            let id_text = id_text.clone();
            async move { call_response(&id_text, era, run.await) }
        };
        self.spawn_tracked(id_text, cancel, response);
    }

    /// Validates the arguments, runs the tool (catching a panic, within its time limit) and
    /// shapes its result; then applies the tool changes the result asks for.
    pub(crate) async fn run_tool(
        &self,
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
            request: request.clone(),
        };
        let run = crate::logging::scope(request.clone(), CatchUnwind(entry.call.invoke(call)));
        let outcome = match entry.def.timeout().or(self.core.timeout) {
            None => run.await,
            Some(limit) => match tokio::time::timeout(limit, run).await {
                Ok(outcome) => outcome,
                Err(_) => {
                    request.cancel.cancel();
                    return ToolResult::error(format!(
                        "tool `{}` timed out after {}",
                        entry.name,
                        crate::schema::format_duration(limit)
                    ));
                }
            },
        };
        let mut result = match outcome {
            Ok(r) => r,
            Err(panic) => panic_result(Some(panic)),
        };
        if result.content.is_empty()
            && let Some(structured) = &result.structured_content
        {
            // Structured content alone: the text copy for clients that read only `content`.
            result
                .content
                .push(crate::content::Content::text(protocol::json_string(
                    structured,
                )));
        }
        if entry.def.wraps_output()
            && !result.is_error
            && let Some(v) = result.structured_content.take()
        {
            let mut m = Map::with_capacity(1);
            m.insert("result".into(), v);
            result.structured_content = Some(Value::Object(m));
        }
        // In debug builds (and so in tests) every structured result is checked against the
        // advertised output schema, so a mismatch shows up before a client rejects it.
        if cfg!(debug_assertions) && !result.is_error && entry.def.output_schema().is_some() {
            let problem = match &result.structured_content {
                None => Some(
                    "the tool declares an output schema but returned no structured content"
                        .to_owned(),
                ),
                Some(s) => entry.def.validate_output(s).err(),
            };
            if let Some(problem) = problem {
                tracing::error!(tool = %entry.name, %problem, "structured result does not match the output schema");
                result = ToolResult::error(format!(
                    "internal error: the result of `{}` does not match its output schema:\n{problem}",
                    entry.name
                ));
            }
        }
        if !result.enable_tools.is_empty() || !result.disable_tools.is_empty() {
            let batch = Batch {
                enable: std::mem::take(&mut result.enable_tools),
                disable: std::mem::take(&mut result.disable_tools),
                ..Batch::default()
            };
            if let Err(e) = self.apply_tools(Some(&request.related), &batch) {
                tracing::warn!(tool = %entry.name, error = %e, "the result's tool changes were refused");
            }
        }
        request.progress.settle().await;
        result
    }

    fn notification(&self, method: &str, params: Option<&RawValue>) {
        match method {
            "notifications/initialized" => {}
            "notifications/cancelled" => {
                if let Ok(Some(p)) = parse_params::<CancelledParams>(params) {
                    let key = p.request_id.to_string();
                    if let Some(call) = lock(&self.in_flight).remove(&key) {
                        // The token tells cooperative code; dropping the future is the
                        // cancellation itself. No response is sent: only the end of the
                        // request, for transports that hold a stream open for it.
                        call.cancel.cancel();
                        call.abort.abort();
                        self.emit(String::new(), Some(&Arc::from(key.as_str())), true);
                    }
                }
            }
            other => tracing::debug!(method = other, "ignoring an unknown notification"),
        }
    }

    /// Cancels every call still in flight (the connection is closing).
    pub(crate) fn abort_all(&self) {
        for (_, call) in lock(&self.in_flight).drain() {
            call.cancel.cancel();
            call.abort.abort();
        }
    }
}

/// Removes a request made of the client from the pending table when its waiter goes away.
struct Forget<'a> {
    session: &'a Session,
    id: u64,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        lock(&self.session.pending).remove(&self.id);
    }
}

fn invalid_cursor() -> RpcError {
    RpcError::new(code::INVALID_PARAMS, "Invalid cursor")
}

/// Locks a mutex, ignoring poisoning (no invariant spans a panic here).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
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
