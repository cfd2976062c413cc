//! The server: the [`Server`] builder and why it may fail to start (`error`), with its parts
//! grouped by what each is for:
//!
//! - `core`: the running server ([`ServerHandle`]), sessions (the state of one connection),
//!   one request as its handler sees it, the dispatch table and the method handlers, the
//!   limits, the stateless clients remembered, `subscriptions/listen`;
//! - [`offerings`]: what a server offers — the tools' catalog and its search, the selection a
//!   session's tool manager changes, prompts, resources, views and skills, and the records the
//!   macros register;
//! - [`tasks`], [`replicas`], [`middleware`], `telemetry`, and `state` (the sealed request
//!   state of a stateless request), which `core` builds on.
//!
//! Layer: imports `protocol`, `tool` and `client`; never the gateway, which builds on it and
//! which the server knows only through `core::handle`'s `Mounting` and `StartsWith`. The
//! transports drive it through the session's narrow interface (`core::session`); it knows
//! none of them.

pub(crate) mod core;
pub(crate) mod error;
pub mod middleware;
pub mod offerings;
pub mod replicas;
pub(crate) mod state;
pub mod tasks;
pub(crate) mod telemetry;

use std::any::TypeId;
use std::sync::Arc;
use std::time::Duration;

use crate::protocol::wire::{Icon, Implementation};
use crate::tool::extract::TypeMap;
use crate::tool::record::registered;
use crate::tool::{DynamicTool, ToolRecord, ToolSet};

use crate::protocol::CacheHints;
pub use offerings::catalog::SEARCH_TOOL;
use offerings::catalog::{self, Catalog, Decor, Entry};
use state::StateKey;

/// How long lists stay fresh by default (2026-07-28 cache hints).
const DEFAULT_LIST_TTL: Duration = Duration::from_secs(300);
/// How long a sealed request state stays valid by default.
pub(crate) const DEFAULT_STATE_TTL: Duration = Duration::from_secs(600);
use self::core::handle;
pub use self::core::handle::ServerHandle;
pub use self::core::limits::Limits;
pub use crate::store::{StoreUrlError, StoreUrlProblem};
pub use error::{Error, Result, StartError};
use offerings::Offerings;
use offerings::prompt::Prompt;
use offerings::record;
pub use offerings::record::{OfferingKind, OfferingRecord, OfferingSet};
use offerings::resource::{Resource, ResourceTemplate};
pub use offerings::skills::SKILLS_EXTENSION;
use offerings::views::UiCsp;

/// Builds an MCP server: its identity, its tools and the service instances they run on, what
/// it offers beside its tools. [`Server::run`] gives a binary its command line (MCP on stdio,
/// `--http`, `list`, `call`, `schema`); [`Server::build`] gives the running server to serve
/// on a transport of your choice.
///
/// ```no_run
/// # use mcp_tool::prelude::*;
/// # struct Users;
/// # #[tools] impl Users { /// Count users.
/// # #[tool] fn count(&self) -> u32 { 0 } }
/// fn main() -> mcp_tool::Result<()> {
///     Server::new("users", env!("CARGO_PKG_VERSION")).service(Users).run()
/// }
/// ```
#[must_use]
pub struct Server {
    pub(crate) name: String,
    version: String,
    title: Option<String>,
    description: Option<String>,
    website_url: Option<String>,
    icons: Vec<Icon>,
    instructions: Option<String>,
    services: TypeMap,
    states: TypeMap,
    tools: Vec<ToolRecord>,
    use_inventory: bool,
    only: Option<Vec<String>>,
    page_size: usize,
    timeout: Option<Duration>,
    offerings: Offerings,
    ui_csp: Option<UiCsp>,
    dynamic: Vec<DynamicTool>,
    hints: CacheHints,
    keep_refs: bool,
    state_keys: Vec<Vec<u8>>,
    state_ttl: Duration,
    task_store: Option<Arc<dyn tasks::TaskStore>>,
    replica_store: Option<Arc<dyn replicas::ReplicaStore>>,
    pub(crate) task_settings: tasks::TaskSettings,
    pub(crate) limits: Limits,
    validate_output: Option<bool>,
    coerce_arguments: bool,
    /// The folder of skills to serve (feature `skills`).
    skills: Option<std::path::PathBuf>,
    /// The remote servers to mount (feature `client`), as the gateway holds them: the
    /// gateway's own builder methods fill it (`crate::gateway`).
    pub(crate) mounts: Option<Box<dyn handle::Mounting>>,
    /// Prompts, resources and templates given with [`Server::offerings`].
    offering_records: Vec<OfferingRecord>,
    /// The middleware, in the order registered.
    middleware: Vec<Arc<dyn middleware::Middleware>>,
}

impl Server {
    /// A server named `name` at `version` (usually `env!("CARGO_PKG_VERSION")`), offering every
    /// tool registered in this binary.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Server {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            website_url: None,
            icons: Vec::new(),
            instructions: None,
            services: TypeMap::new(),
            states: TypeMap::new(),
            tools: Vec::new(),
            use_inventory: true,
            only: None,
            page_size: 1000,
            timeout: None,
            offerings: Offerings::default(),
            ui_csp: None,
            dynamic: Vec::new(),
            hints: CacheHints::public(DEFAULT_LIST_TTL),
            keep_refs: false,
            state_keys: Vec::new(),
            state_ttl: DEFAULT_STATE_TTL,
            task_store: None,
            replica_store: None,
            task_settings: tasks::TaskSettings::default(),
            limits: Limits::default(),
            validate_output: None,
            coerce_arguments: false,
            skills: None,
            mounts: Default::default(),
            offering_records: Vec::new(),
            middleware: Vec::new(),
        }
    }

    /// Adds a [`Middleware`](middleware::Middleware) around every request and every tool
    /// call. Layers run in the order added: the first added is the outermost (it sees a
    /// call first and its result last). Without any, calls pay nothing for the feature.
    ///
    /// ```
    /// use mcp_tool::middleware::{Audit, MaskErrors, RateLimit};
    ///
    /// let server = mcp_tool::Server::new("guarded", "1.0.0")
    ///     .middleware(Audit)
    ///     .middleware(RateLimit::parse("100/1m").unwrap())
    ///     .middleware(MaskErrors);
    /// ```
    pub fn middleware(mut self, layer: impl middleware::Middleware) -> Self {
        self.middleware.push(Arc::new(layer));
        self
    }

    /// A human-readable title for the server.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What the server does, in its identity (2026-07-28 `server/discover` and results).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The server's website, in its identity.
    pub fn website_url(mut self, url: impl Into<String>) -> Self {
        self.website_url = Some(url.into());
        self
    }

    /// An icon for the server, in its identity (add several for sizes and themes).
    pub fn icon(mut self, icon: Icon) -> Self {
        self.icons.push(icon);
        self
    }

    /// Instructions sent to the client in the `initialize` result.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
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

    /// Adds tools explicitly (for example `Type::mcp_tools()`), beside the registered ones.
    pub fn tools(mut self, tools: ToolSet) -> Self {
        self.tools.extend_from_slice(tools.records());
        self
    }

    /// Ignores the tools, prompts and resources registered through `inventory`: only those
    /// given with [`Server::tools`] and [`Server::offerings`] (and the builders) are offered.
    /// Useful in tests.
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

    /// Offers a tool defined at run time, without the macros.
    pub fn dynamic_tool(mut self, tool: DynamicTool) -> Self {
        self.dynamic.push(tool);
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

    /// Serves the Agent Skills in `folder` by the skills extension (feature `skills`): each
    /// directory in it holding a `SKILL.md` (YAML frontmatter with the skill's `name`, the
    /// directory's own, and a `description`) is a skill, and every file in it a resource
    /// `skill://<name>/<path>`. `skills/list` and `skills/get` give each skill's frontmatter
    /// and the digest and size of its files, `resources/directory/read` its folders,
    /// `resources/read` its files. The folder is read at start, through one handle that
    /// cannot reach outside it; a bad skill (name, frontmatter, a link, over 512 files or
    /// 16 MiB) fails the start, naming the skill and the problem, and a file changed on disk
    /// afterwards is refused, not served against its digest.
    ///
    /// ```no_run
    /// # use mcp_tool::prelude::*;
    /// fn main() -> mcp_tool::Result<()> {
    ///     // skills/tidy-folder/SKILL.md, skills/tidy-folder/references/naming.md, …
    ///     Server::new("files", "1.0.0").skills("skills").run()
    /// }
    /// ```
    #[cfg(feature = "skills")]
    #[cfg_attr(docsrs, doc(cfg(feature = "skills")))]
    pub fn skills(mut self, folder: impl Into<std::path::PathBuf>) -> Self {
        self.skills = Some(folder.into());
        self
    }

    /// Offers a prompt (`prompts/list`, `prompts/get`).
    pub fn prompt(mut self, prompt: Prompt) -> Self {
        self.offerings.prompts.push(prompt);
        self
    }

    /// Adds prompts, resources and templates defined with `#[prompt]`, `#[resource]` and
    /// `#[resource_template]` explicitly (for example `Type::mcp_offerings()` of a
    /// `#[tools(manual)]` impl block), beside the registered ones.
    pub fn offerings(mut self, offerings: OfferingSet) -> Self {
        self.offering_records.extend_from_slice(offerings.records());
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
        self.ui_csp = Some(UiCsp {
            connect_domains: Some(connect.into_iter().map(Into::into).collect()),
            resource_domains: Some(resources.into_iter().map(Into::into).collect()),
            ..UiCsp::default()
        });
        self
    }

    /// The cache hints of `server/discover` and of the lists (2026-07-28; default: public, 5
    /// minutes). The tool list is private and stale at once (`ttlMs: 0`) whatever this says
    /// when some tool is hidden, or when the client who asks has a tool selection of its own
    /// (see the tool manager): its own calls may change it.
    pub fn cache_hints(mut self, hints: CacheHints) -> Self {
        self.hints = hints;
        self
    }

    /// The key that seals the state a stateless (2026-07-28) request carries between the
    /// rounds in which it asks for input: at least 32 bytes, the same on every replica so a
    /// retry may reach any of them. Without it the key is random for this process (a retry
    /// must then come back to it before it restarts). Server binaries ([`Server::run`]) take
    /// it from `MCP_TOOL_STATE_KEY` (hex or base64).
    pub fn state_key(mut self, key: impl AsRef<[u8]>) -> Self {
        self.state_keys = vec![key.as_ref().to_vec()];
        self
    }

    /// Several request-state keys, to rotate them without failing rounds in flight: the first
    /// seals, every one opens. Roll a new key out as second on every replica, then first, then
    /// drop the old one once a request state's lifetime has passed. Server binaries take them
    /// from `MCP_TOOL_STATE_KEY`, separated by commas.
    pub fn state_keys<K: AsRef<[u8]>>(mut self, keys: impl IntoIterator<Item = K>) -> Self {
        self.state_keys = keys.into_iter().map(|k| k.as_ref().to_vec()).collect();
        self
    }

    /// Where tasks are kept (default: in memory, this process only). A store shared by
    /// several servers, such as [`tasks::redis::RedisTaskStore`] (feature `redis`), lets a
    /// task started on one be polled, answered, cancelled and fetched on any, and keeps
    /// results across restarts. Server binaries also take `--task-store URL` and
    /// `MCP_TOOL_TASK_STORE`.
    pub fn task_store(mut self, store: impl tasks::TaskStore) -> Self {
        self.task_store = Some(Arc::new(store));
        self
    }

    /// Like [`Server::task_store`], for a store already shared.
    pub fn task_store_arc(mut self, store: Arc<dyn tasks::TaskStore>) -> Self {
        self.task_store = Some(store);
        self
    }

    /// What this server shares with its other replicas (default: nothing): the records of
    /// 2025-11-25 sessions, so that a session's request reaching any replica is served there,
    /// and the changes whose notifications every replica's clients should get (list changes,
    /// resource updates, [`ServerHandle::change_tools`]). A store such as
    /// [`replicas::redis::RedisReplicaStore`] (feature `redis`); server binaries also take
    /// `--shared-state URL` and `MCP_TOOL_SHARED_STATE`. Give the replicas the same state key
    /// ([`Server::state_key`]) and task store as well.
    pub fn replica_store(mut self, store: impl replicas::ReplicaStore) -> Self {
        self.replica_store = Some(Arc::new(store));
        self
    }

    /// Like [`Server::replica_store`], for a store already shared.
    pub fn replica_store_arc(mut self, store: Arc<dyn replicas::ReplicaStore>) -> Self {
        self.replica_store = Some(store);
        self
    }

    /// How tasks are kept and paced (time to live, polling interval, the most tasks one
    /// client may hold, the lease of a running task).
    pub fn task_settings(mut self, settings: tasks::TaskSettings) -> Self {
        self.task_settings = settings;
        self
    }

    /// Checks every structured result against the tool's output schema, in release builds too
    /// (debug builds always do): a result that does not fit becomes an error result naming
    /// the field, instead of reaching a client that would reject it. Server binaries
    /// ([`Server::run`]) switch it on with `MCP_TOOL_VALIDATE_OUTPUT=1`. It costs one validation per call (see BENCHMARKS.md).
    pub fn validate_output(mut self, on: bool) -> Self {
        self.validate_output = Some(on);
        self
    }

    /// Converts the arguments models send as the wrong JSON type, for every tool without a
    /// setting of its own (`#[tool(coerce = false)]` keeps a tool strict): a string `"3"`
    /// where the schema wants an integer, `"3.5"` a number, `"true"`/`"false"` a boolean,
    /// JSON text where it wants an array or an object. Only where the input schema leaves no
    /// doubt: a schema that also allows a string, `"yes"`, `"3.5"` for an integer are refused
    /// by validation as before, which still checks every converted argument. Each conversion
    /// is listed in the result's `_meta` (under
    /// [`COERCED_META_KEY`](crate::tool::COERCED_META_KEY)) and on the call's span
    /// (`mcp_tool.arguments.coerced`), so you see which tools models call wrongly. Off by
    /// default (validation is strict); server binaries ([`Server::run`]) switch it on with
    /// `MCP_TOOL_COERCE_ARGUMENTS=1`. Off, it costs nothing: the arguments are not walked.
    pub fn coerce_arguments(mut self, on: bool) -> Self {
        self.coerce_arguments = on;
        self
    }

    /// The bounds the server keeps whatever its clients do (message size, queued answers,
    /// waits on the client, calls in flight, sessions, the shutdown grace); see [`Limits`].
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// How long a sealed request state stays valid (default 10 minutes).
    pub fn request_state_ttl(mut self, ttl: Duration) -> Self {
        self.state_ttl = ttl;
        self
    }

    /// Lists derived tool schemas with their `$defs` and `$ref`s, instead of inlined (the
    /// default, as several hosts refuse `$ref` in a tool's schema; a recursive type keeps its
    /// references either way, and the server says so in its log at start). A schema written
    /// by hand (`input_schema = …`, a dynamic or mounted tool's) is listed as written either
    /// way. Validation is the same either way.
    pub fn keep_schema_refs(mut self, keep: bool) -> Self {
        self.keep_refs = keep;
        self
    }

    /// How many items one page of `tools/list` (and of the other lists) holds (default 1000).
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size.max(1);
        self
    }

    /// Checks the tools and builds the running server. Every problem (duplicate names,
    /// missing service instances or states, bad schemas) is reported together.
    pub fn build(self) -> std::result::Result<ServerHandle, StartError> {
        let mut records = self.tools;
        if self.use_inventory {
            records.extend(registered().copied());
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
        let state_key = if self.state_keys.is_empty() {
            StateKey::random(self.state_ttl)
        } else {
            StateKey::new(&self.state_keys, self.state_ttl)
        }
        .map_err(|e| StartError::new(vec![e]))?;
        let info = Arc::new(Implementation {
            name: self.name.clone(),
            version: self.version,
            title: self.title,
            description: self.description,
            website_url: self.website_url,
            icons: self.icons,
            result_meta: std::sync::OnceLock::new(),
        });
        let search_tool = match offerings::search::search_tool().define(&self.name) {
            Ok((def, call)) => Some(Arc::new(Entry::new(def, call, None))),
            Err(problems) => {
                tracing::error!(?problems, "the built-in tool search is invalid");
                None
            }
        };
        let decor = Arc::new(Decor {
            info: info.clone(),
            hints: self.hints,
            search_tool,
            keep_refs: self.keep_refs,
        });
        // The prompts and resources of the macros are checked with the tools: every problem
        // is reported together.
        let mut offerings = self.offerings;
        let given = record::records(self.offering_records, self.use_inventory);
        let mut problems = offerings.add_records(given, &self.services, &self.states);
        let mut catalog = Catalog::build(
            &self.name,
            records,
            &self.services,
            &self.states,
            catalog::Paging {
                size: self.page_size,
                bytes: self.limits.max_page_bytes,
            },
            decor,
        )
        .map_err(|e| StartError::new([e.problems(), &problems[..]].concat()))?;
        for tool in &self.dynamic {
            if catalog.get(tool.name()).is_some() {
                problems.push(format!(
                    "two tools are named `{}` (one is dynamic)",
                    tool.name()
                ));
                continue;
            }
            match tool.define(&self.name) {
                Ok((def, call)) => {
                    catalog = catalog.changed(Some(Arc::new(Entry::new(def, call, None))), None);
                }
                Err(errs) => problems.extend(
                    errs.into_iter()
                        .map(|e| format!("dynamic tool `{}`: {e}", tool.name())),
                ),
            }
        }
        let mounts = self.mounts.as_ref().and_then(|m| m.build(&mut problems));
        if !problems.is_empty() {
            return Err(StartError::new(problems));
        }
        if !self.keep_refs {
            for entry in catalog.entries() {
                if let Some(why) = entry.def.refs_kept() {
                    tracing::warn!(
                        tool = %entry.name,
                        "the tool's schema keeps its `$ref`s, which some clients refuse: {why}"
                    );
                }
            }
        }
        tracing::debug!(tools = catalog.entries().len(), "mcp server ready");
        for layer in &self.middleware {
            offerings.templates.extend(layer.resource_templates());
            if let Some(store) = &self.replica_store {
                layer.shared_state(store);
            }
        }
        offerings.add_views(&catalog, self.ui_csp.as_ref())?;
        if let Some(folder) = &self.skills {
            offerings.add_skills(folder).map_err(StartError::new)?;
        }
        let handle = ServerHandle::new(
            handle::Settings {
                info,
                instructions: self.instructions,
                states: self.states,
                timeout: self.timeout,
                hints: self.hints,
                state_key,
                limits: self.limits,
                mounts,
                validate_output: self.validate_output.unwrap_or(cfg!(debug_assertions)),
                coerce_arguments: self.coerce_arguments,
                tasks: tasks::Tasks::new(
                    self.task_store
                        .unwrap_or_else(|| Arc::new(tasks::MemoryTaskStore::new())),
                    self.task_settings,
                ),
                replicas: replicas::Replicas::new(self.replica_store),
                middleware: middleware::Stack::new(self.middleware),
            },
            catalog,
            offerings,
        );
        handle.start_mounts();
        Ok(handle)
    }
}
