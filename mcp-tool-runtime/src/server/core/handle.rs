//! The running server, [`ServerHandle`]: a cheap `Clone` handle shared by every session and
//! transport. It serves (through the transports' entry points), calls tools in-process, and
//! changes what the server offers while it serves, telling every session.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use crate::protocol::CacheHints;
use crate::protocol::request::Method;
use crate::protocol::wire::{Implementation, ServerCapabilities, TasksCapability, UriParams};
use crate::sync::{read, write};
use crate::tool::extract::TypeMap;
use crate::tool::{Batch, DynamicTool, FromContext, TaskSupport, ToolCall, ToolDef, ToolError};

use crate::server::core::limits::Limits;
use crate::server::core::listen::Listeners;
use crate::server::core::session::Sessions;
use crate::server::error::StartError;
use crate::server::middleware::Stack;
use crate::server::offerings::Offerings;
use crate::server::offerings::catalog::{Catalog, Entry};
use crate::server::offerings::change::Change;
use crate::server::offerings::prompt::Prompt;
use crate::server::offerings::resource::Resource;
use crate::server::offerings::selection::{
    Principal, Principals, Selection, check_names, selection_key,
};
use crate::server::replicas::{Event, Replicas, SelectionWire};
use crate::server::state::StateKey;
use crate::server::tasks::Tasks;

/// A built server, ready to serve: cheap to clone, shared by every connection.
///
/// Serve it with `serve_stdio`, `serve_http` or `into_router`; call its tools in-process with
/// [`ServerHandle::call`]; add and remove tools, resources and prompts while it serves.
///
/// ```
/// use mcp_tool::prelude::*;
///
/// /// Subtract `b` from `a`.
/// #[tool]
/// fn subtract(a: i64, b: i64) -> i64 {
///     a - b
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = Server::new("calc", "1.0.0").only(["subtract"]).build().unwrap();
/// let result = server.call("subtract", serde_json::json!({"a": 8, "b": 3})).await.unwrap();
/// assert_eq!(result.text_content(), "5");
/// # }
/// ```
#[derive(Clone)]
pub struct ServerHandle {
    pub(crate) shared: Arc<Shared>,
}

/// The gateway's mounts as the builder holds them until the server starts (feature `client`,
/// `crate::gateway`): the server knows them only through this trait, so that the gateway
/// builds on the server and not the other way round.
pub(crate) trait Mounting: std::any::Any + Send + Sync {
    /// The running mounts, each checked; what is wrong goes to `problems`.
    fn build(&self, problems: &mut Vec<String>) -> Option<Box<dyn StartsWith>>;
}

/// What starts with the running server, once it serves: the connections of the mounted
/// servers (`gateway::Mounts`, feature `client`), which then add their tools to it.
pub(crate) trait StartsWith: Send + Sync + fmt::Debug {
    fn start(&self, server: &ServerHandle);

    /// Until every mount has had its first sync (or the bound set for it has passed): what a
    /// `tools/list` or `tools/call` waits for, so that the first answer holds the mounted
    /// tools. `None` once settled.
    fn settling(&self) -> Option<Pin<Box<dyn Future<Output = ()> + Send + '_>>>;

    /// Whether [`settling`](Self::settling) would give a wait (cheap, allocates nothing).
    fn unsettled(&self) -> bool;

    /// The paths the HTTP endpoint receives users on, back from a mount's sign-in (if any).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    fn redirect_paths(&self) -> Vec<String>;

    /// A browser on a redirect path (its query and `Cookie` header): a sign-in's start link
    /// opened, or a user back from the authorization server.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    fn sign_in_page<'a>(
        &'a self,
        query: &'a str,
        cookies: &'a str,
    ) -> Pin<Box<dyn Future<Output = SignInPage> + Send + 'a>>;

    /// Another replica's word about a held gateway call (a round forwarded, or the holder's answer).
    fn held(&self, server: &ServerHandle, event: Event);
    /// Why `tool`, of a mount whose credentials are refused, cannot be called.
    fn refused(&self, tool: &str) -> Option<String>;
}

/// What a browser on a redirect path is answered.
#[cfg_attr(not(all(feature = "http", feature = "client")), allow(dead_code))]
pub(crate) enum SignInPage {
    /// Sent on to `location` (the authorization page), with a cookie to set.
    Redirect { location: String, cookie: String },
    /// A page saying `text` (HTML-escaped already), and a cookie to set, if any.
    Page {
        ok: bool,
        text: String,
        cookie: Option<String>,
    },
}

/// What every session of a server shares.
pub(crate) struct Shared {
    pub(crate) info: Arc<Implementation>,
    pub(crate) instructions: Option<String>,
    pub(crate) capabilities: ServerCapabilities,
    /// The cache hints of lists and of `server/discover` (2026-07-28).
    pub(crate) hints: CacheHints,
    /// The key that seals the state of requests that need input (2026-07-28).
    pub(crate) state_key: StateKey,
    /// The open `subscriptions/listen` streams.
    pub(crate) listeners: Listeners,
    /// The tasks: where they are kept, and those this process runs.
    pub(crate) tasks: Tasks,
    /// What this replica shares with the others (sessions, changes).
    pub(crate) replicas: Replicas,
    /// The bounds kept whatever clients do.
    pub(crate) limits: Limits,
    /// Whether structured results are checked against output schemas.
    pub(crate) validate_output: bool,
    /// Whether arguments sent as the wrong JSON type are converted, for tools without a
    /// setting of their own.
    pub(crate) coerce_arguments: bool,
    /// The remote servers mounted beside the local tools (none without the `client` feature).
    pub(crate) mounts: Option<Box<dyn StartsWith>>,
    /// The middleware around every request and tool call.
    pub(crate) middleware: Stack,
    /// The tool selections of principals (stateless requests).
    pub(crate) principals: Principals,
    /// The clients of stateless requests, built once per `_meta` text.
    pub(crate) clients: crate::server::core::clients::KnownClients,
    pub(crate) states: Arc<TypeMap>,
    pub(crate) timeout: Option<Duration>,
    catalog: RwLock<Arc<Catalog>>,
    offerings: RwLock<Arc<Offerings>>,
    /// The selection every new session starts from: the default, changed by
    /// [`ServerHandle::change_tools`] (folded into one value, so a session starts in O(1)).
    selection: RwLock<Selection>,
    pub(crate) sessions: Sessions,
    /// The address the server serves HTTP on (`http://host:port`), once it does on a TCP
    /// address that names a host: where a per-user mount's users come back to by default.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) http_origin: std::sync::OnceLock<String>,
    /// Whether an HTTP endpoint of the server receives users back from signing in (its router
    /// was built with the redirect paths).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) receives_redirects: std::sync::atomic::AtomicBool,
}

/// What the builder settled, besides the catalog and the offerings.
pub(crate) struct Settings {
    pub(crate) info: Arc<Implementation>,
    pub(crate) instructions: Option<String>,
    pub(crate) states: TypeMap,
    pub(crate) timeout: Option<Duration>,
    pub(crate) hints: CacheHints,
    pub(crate) state_key: StateKey,
    pub(crate) limits: Limits,
    pub(crate) validate_output: bool,
    pub(crate) coerce_arguments: bool,
    pub(crate) mounts: Option<Box<dyn StartsWith>>,
    pub(crate) tasks: Tasks,
    pub(crate) replicas: Replicas,
    pub(crate) middleware: Stack,
}

impl Shared {
    pub(crate) fn selection(&self) -> Selection {
        read(&self.selection).clone()
    }

    /// Whether the tool `name` is active in the selection every new session starts from
    /// (read in place).
    pub(crate) fn is_active(&self, name: &str, hidden: bool, always_visible: bool) -> bool {
        read(&self.selection).is_active(name, hidden, always_visible)
    }
}

impl fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerHandle")
            .field("name", &self.shared.info.name)
            .field("tools", &self.catalog().entries().len())
            .finish()
    }
}

impl ServerHandle {
    pub(crate) fn new(settings: Settings, catalog: Catalog, offerings: Offerings) -> Self {
        let Settings {
            info,
            instructions,
            states,
            timeout,
            hints,
            state_key,
            limits,
            validate_output,
            coerce_arguments,
            mounts,
            tasks,
            replicas,
            middleware,
        } = settings;
        let mut capabilities = offerings.capabilities();
        if catalog
            .entries()
            .iter()
            .any(|e| e.def.task_support() != TaskSupport::Forbidden)
        {
            capabilities.tasks = Some(TasksCapability::default());
        }
        ServerHandle {
            shared: Arc::new(Shared {
                capabilities,
                tasks,
                replicas,
                limits,
                validate_output,
                coerce_arguments,
                mounts,
                middleware,
                info,
                instructions,
                hints,
                state_key,
                listeners: Listeners::default(),
                principals: Principals::default(),
                clients: crate::server::core::clients::KnownClients::default(),
                states: Arc::new(states),
                timeout,
                catalog: RwLock::new(Arc::new(catalog)),
                offerings: RwLock::new(Arc::new(offerings)),
                selection: RwLock::new(Selection::default()),
                sessions: Sessions::default(),
                http_origin: std::sync::OnceLock::new(),
                receives_redirects: std::sync::atomic::AtomicBool::new(false),
            }),
        }
    }

    /// What a request of `method` waits for before it is dispatched: the mounts' first
    /// sync, for a `tools/list` or a `tools/call` (bounded; `None` when there is nothing to
    /// wait for).
    pub(crate) fn settling(
        &self,
        method: Method,
    ) -> Option<Pin<Box<dyn Future<Output = ()> + Send + '_>>> {
        if !matches!(method, Method::ToolsList | Method::ToolsCall) {
            return None;
        }
        self.shared.mounts.as_ref()?.settling()
    }

    /// The paths the HTTP endpoint receives users on, back from signing in to a mounted
    /// server's authorization server.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn redirect_paths(&self) -> Vec<String> {
        self.shared
            .mounts
            .as_ref()
            .map(|m| m.redirect_paths())
            .unwrap_or_default()
    }

    /// A browser on a redirect path: a sign-in's start link opened, or a user back from
    /// signing in (the query and the `Cookie` header).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) async fn sign_in_page(&self, query: &str, cookies: &str) -> SignInPage {
        match &self.shared.mounts {
            Some(mounts) => mounts.sign_in_page(query, cookies).await,
            None => SignInPage::Page {
                ok: false,
                text: "No sign-in waits here.".to_owned(),
                cookie: None,
            },
        }
    }

    /// Whether a request may still wait for the mounts' first sync (cheap: read before a
    /// line is parsed for its method).
    pub(crate) fn has_unsettled_mounts(&self) -> bool {
        self.shared.mounts.as_ref().is_some_and(|m| m.unsettled())
    }

    /// Starts the connections of the mounted servers, once, if a runtime is at hand (else the
    /// first `serve_*` starts them).
    pub(crate) fn start_mounts(&self) {
        if let Some(mounts) = &self.shared.mounts {
            mounts.start(self);
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.shared.info.name
    }

    /// The server's version.
    pub fn version(&self) -> &str {
        &self.shared.info.version
    }

    /// Every tool's definition, hidden ones included, in order.
    pub fn tools(&self) -> Vec<Arc<ToolDef>> {
        self.catalog()
            .entries()
            .iter()
            .map(|e| e.def.clone())
            .collect()
    }

    /// The current catalog (it changes when dynamic tools are added or removed).
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        read(&self.shared.catalog).clone()
    }

    pub(crate) fn offerings(&self) -> Arc<Offerings> {
        read(&self.shared.offerings).clone()
    }

    /// Adds a dynamic tool while serving (replacing a dynamic tool of the same name); every
    /// session is sent `notifications/tools/list_changed`. A tool defined with `#[tool]`
    /// cannot be replaced.
    pub fn add_tool(&self, tool: DynamicTool) -> Result<(), StartError> {
        let (def, call) = tool.define(self.name()).map_err(StartError::new)?;
        let entry = Arc::new(Entry::new(def, call, None));
        {
            let mut catalog = write(&self.shared.catalog);
            if let Some(existing) = catalog.get(&entry.name)
                && !existing.call.is_dynamic()
            {
                return Err(StartError::new(vec![format!(
                    "a `#[tool]` named `{}` exists already",
                    entry.name
                )]));
            }
            *catalog = Arc::new(catalog.changed(Some(entry), None));
        }
        self.tell_all("notifications/tools/list_changed", Change::Tools(None));
        Ok(())
    }

    /// Adds, replaces and removes dynamic tools at once (a mounted server's list): one
    /// `notifications/tools/list_changed`, and none when nothing changed (a tool re-added with
    /// the same definition). Tools defined with `#[tool]` are left alone.
    #[cfg(feature = "client")]
    pub(crate) fn update_dynamic_tools(
        &self,
        add: Vec<DynamicTool>,
        remove: &[String],
    ) -> Vec<String> {
        let mut problems = Vec::new();
        let mut entries = Vec::new();
        for tool in add {
            match tool.define(self.name()) {
                Ok((def, call)) => entries.push(Arc::new(Entry::new(def, call, None))),
                Err(e) => problems.extend(e),
            }
        }
        let same = |a: &ToolDef, b: &ToolDef| {
            a.hidden() == b.hidden()
                && a.deferred() == b.deferred()
                && serde_json::to_string(&a.wire(crate::protocol::ProtocolVersion::V2025_11_25))
                    .ok()
                    == serde_json::to_string(&b.wire(crate::protocol::ProtocolVersion::V2025_11_25))
                        .ok()
        };
        let changed = {
            let mut catalog = write(&self.shared.catalog);
            let mut added = Vec::new();
            for entry in entries {
                match catalog.get(&entry.name) {
                    Some(existing) if !existing.call.is_dynamic() => {
                        problems.push(format!("a `#[tool]` named `{}` exists already", entry.name));
                    }
                    Some(existing) if same(&existing.def, &entry.def) => {}
                    _ => added.push(entry),
                }
            }
            let removed: Vec<&str> = remove
                .iter()
                .map(String::as_str)
                .filter(|name| catalog.get(name).is_some_and(|e| e.call.is_dynamic()))
                .collect();
            let changed = !added.is_empty() || !removed.is_empty();
            if changed {
                *catalog = Arc::new(catalog.changed_many(added, &removed));
            }
            changed
        };
        if changed {
            // Every replica follows its mounts itself: told here only.
            self.tell_here("notifications/tools/list_changed", Change::Tools(None));
        }
        problems
    }

    /// Removes a dynamic tool while serving; every session is sent
    /// `notifications/tools/list_changed`. Returns whether a dynamic tool of that name existed
    /// (a `#[tool]` is not removed: disable it with [`change_tools`](Self::change_tools)).
    pub fn remove_tool(&self, name: &str) -> bool {
        {
            let mut catalog = write(&self.shared.catalog);
            if !catalog.get(name).is_some_and(|e| e.call.is_dynamic()) {
                return false;
            }
            *catalog = Arc::new(catalog.changed(None, Some(name)));
        }
        self.tell_all("notifications/tools/list_changed", Change::Tools(None));
        true
    }

    /// Changes the tool selection of every session, current and future; each session whose
    /// list changes is sent `notifications/tools/list_changed`. Returns the tools active for a
    /// new session. Unknown names are refused.
    pub fn change_tools(&self, batch: Batch) -> Result<Vec<String>, StartError> {
        let active = self
            .change_tools_here(&batch)
            .map_err(|e| StartError::new(vec![e]))?;
        self.shared.replicas.publish(Event::Selection {
            batch: SelectionWire::from(&batch),
        });
        Ok(active)
    }

    /// Makes sure this replica knows `principal`'s own tool selection before its stateless
    /// request is served: one the store keeps for a subject this replica holds none for (it
    /// started after the selection was made, or forgot it).
    pub(crate) async fn recall_selection(&self, principal: &Principal) {
        let shared = &self.shared;
        let Principal::Subject(subject) = principal else {
            return;
        };
        if !shared.replicas.shared() || !shared.principals.unknown(principal) {
            return;
        }
        match shared.replicas.get(&selection_key(subject)).await {
            Ok(stored) => {
                let stored = stored
                    .and_then(|text| serde_json::from_str::<SelectionWire>(&text).ok())
                    .map(|wire| {
                        let mut selection = Selection::default();
                        selection.apply(&Batch::from(wire));
                        selection
                    });
                shared.principals.recalled(principal, stored);
            }
            Err(e) => {
                tracing::warn!(error = %e, "a subject's tool selection could not be read: the server's is used");
            }
        }
    }

    /// [`change_tools`](Self::change_tools) on this replica alone.
    pub(crate) fn change_tools_here(&self, batch: &Batch) -> Result<Vec<String>, String> {
        let catalog = self.catalog();
        check_names(&catalog, batch)?;
        let active = {
            let mut selection = write(&self.shared.selection);
            selection.apply(batch);
            selection.active(&catalog)
        };
        for session in self.shared.sessions.all() {
            let _ = session.apply_tools(None, batch);
        }
        self.shared.principals.apply_all(batch);
        self.shared.listeners.notify(Change::Tools(None));
        Ok(active)
    }

    /// Tells every initialized session (`method`) and every listen stream that asked
    /// (`change`), on every replica.
    fn tell_all(&self, method: &str, change: Change<'_>) {
        self.tell_here(method, change);
        self.shared.replicas.publish(match change {
            Change::Tools(_) => Event::ToolsChanged,
            Change::Prompts => Event::PromptsChanged,
            Change::Resources => Event::ResourcesChanged,
            Change::Updated(uri) => Event::ResourceUpdated {
                uri: uri.to_owned(),
            },
        });
    }

    /// [`tell_all`](Self::tell_all) on this replica alone.
    pub(crate) fn tell_here(&self, method: &str, change: Change<'_>) {
        for session in self.shared.sessions.all() {
            session.tell(method, None);
        }
        self.shared.listeners.notify(change);
    }

    fn change_offerings(
        &self,
        change: impl FnOnce(&mut Offerings),
        notification: &str,
        what: Change<'_>,
    ) {
        {
            let mut offerings = write(&self.shared.offerings);
            let mut next = (**offerings).clone();
            change(&mut next);
            *offerings = Arc::new(next);
        }
        self.tell_all(notification, what);
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
            Change::Resources,
        );
    }

    /// Removes a resource while serving; every session is sent
    /// `notifications/resources/list_changed`.
    pub fn remove_resource(&self, uri: &str) {
        self.change_offerings(
            |o| o.resources.retain(|r| r.uri() != uri),
            "notifications/resources/list_changed",
            Change::Resources,
        );
    }

    /// Adds a prompt while serving; every session is sent `notifications/prompts/list_changed`.
    pub fn add_prompt(&self, prompt: Prompt) {
        self.change_offerings(
            |o| o.prompts.push(prompt),
            "notifications/prompts/list_changed",
            Change::Prompts,
        );
    }

    /// Tells every session subscribed to `uri` that the resource changed
    /// (`notifications/resources/updated`).
    pub fn resource_updated(&self, uri: &str) {
        self.resource_updated_here(uri);
        self.shared.replicas.publish(Event::ResourceUpdated {
            uri: uri.to_owned(),
        });
    }

    /// [`resource_updated`](Self::resource_updated) on this replica alone.
    pub(crate) fn resource_updated_here(&self, uri: &str) {
        let params = UriParams { uri: uri.into() };
        for session in self.shared.sessions.all() {
            if crate::sync::lock(&session.subscriptions).contains(uri) {
                session.notify("notifications/resources/updated", &params);
            }
        }
        self.shared.listeners.notify(Change::Updated(uri));
    }

    /// Tells every client that the tool list changed (tools your server offers from a source
    /// of its own changed): `notifications/tools/list_changed` to each session, and to each
    /// listen stream that asked for it.
    pub fn notify_tools_changed(&self) {
        self.tell_all("notifications/tools/list_changed", Change::Tools(None));
    }

    /// Tells every client that the prompt list changed.
    pub fn notify_prompts_changed(&self) {
        self.tell_all("notifications/prompts/list_changed", Change::Prompts);
    }

    /// Tells every client that the resource list changed.
    pub fn notify_resources_changed(&self) {
        self.tell_all("notifications/resources/list_changed", Change::Resources);
    }

    /// Ends every `subscriptions/listen` stream with its final result (before shutting down).
    pub fn close_subscriptions(&self) {
        self.shared.listeners.close_all(&self.shared.info);
    }
}

/// A tool may take the running server as a parameter: to change what it offers, or to tell
/// clients it changed.
impl FromContext for ServerHandle {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(call.ctx().state.conn().server().clone())
    }
}

/// The tool layer's port to the running server, filled with this layer's handle.
impl crate::tool::context::Serves for crate::tool::context::Host {
    type Server = ServerHandle;
}

impl ServerHandle {
    /// Starts sharing with the other replicas (when a store is set): this replica's changes
    /// go out, theirs are told to this replica's clients.
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // HTTP sessions are shared
    pub(crate) fn start_replicas(&self, session_ttl: Duration) {
        let weak = Arc::downgrade(&self.shared);
        self.shared.replicas.start(session_ttl, move |event| {
            let Some(shared) = weak.upgrade() else {
                return false;
            };
            ServerHandle { shared }.apply_remote(event);
            true
        });
    }

    /// Tells this replica's clients of a change another replica raised.
    fn apply_remote(&self, event: Event) {
        match event {
            Event::ToolsChanged => {
                self.tell_here("notifications/tools/list_changed", Change::Tools(None))
            }
            Event::PromptsChanged => {
                self.tell_here("notifications/prompts/list_changed", Change::Prompts)
            }
            Event::ResourcesChanged => {
                self.tell_here("notifications/resources/list_changed", Change::Resources)
            }
            Event::ResourceUpdated { uri } => self.resource_updated_here(&uri),
            Event::Selection { batch } => {
                let batch = Batch::from(batch);
                if let Err(e) = self.change_tools_here(&batch) {
                    tracing::warn!(error = %e, "a replica's tool selection does not apply here");
                }
            }
            Event::Answer {
                session,
                id,
                result,
                error,
            } => {
                let answer = match (result, error) {
                    (_, Some(e)) => Err(e),
                    (Some(v), None) => Ok(v),
                    (None, None) => Ok(serde_json::Value::Null),
                };
                for s in self.shared.sessions.all() {
                    if s.shared_name().is_some_and(|n| **n == *session) {
                        s.answered_here(id, answer.clone());
                    }
                }
            }
            Event::PrincipalTools { subject, batch } => {
                let principal = Principal::Subject(subject);
                let shared = &self.shared;
                if !shared.principals.holds(&principal) {
                    // Its next request here reads the whole selection from the store.
                    shared.listeners.notify(Change::Tools(Some(&principal)));
                    return;
                }
                match shared.principals.apply(
                    &principal,
                    &shared.selection(),
                    &self.catalog(),
                    &Batch::from(batch),
                ) {
                    Ok((_, true)) => shared.listeners.notify(Change::Tools(Some(&principal))),
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!(error = %e, "a replica's tool selection does not apply here");
                    }
                }
            }
            event @ (Event::HeldRound { .. }
            | Event::HeldStep { .. }
            | Event::HeldCancel { .. }) => {
                if let Some(mounts) = &self.shared.mounts {
                    mounts.held(self, event);
                }
            }
            Event::SessionEnded { session } => {
                for s in self.shared.sessions.all() {
                    if s.shared_name().is_some_and(|n| **n == *session) {
                        s.end_here();
                    }
                }
            }
        }
    }
}
