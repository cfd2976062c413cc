//! How the HTTP endpoint behaves: [`HttpConfig`], an argument of the HTTP entry points.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::transport::http::access::auth::Authenticator;
use crate::transport::http::access::forwarded::TrustedProxies;
use crate::transport::http::streams::events::{EventStore, MemoryEventStore};

/// How the HTTP endpoint behaves. The defaults are the safe ones: loopback hosts and origins
/// only, a 4 MiB body limit, sessions that expire after 10 idle minutes, request heads (and
/// idle kept-alive connections) within 30 s, bodies within 30 s of their head, at most 1024
/// connections.
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpConfig {
    /// The endpoint's path.
    pub path: String,
    /// `Host` values accepted (a name, or `name:port`). `None`: loopback names only.
    pub allowed_hosts: Option<Vec<String>>,
    /// `Origin` values accepted (`scheme://host[:port]`). `None`: loopback origins only. A
    /// request without `Origin` (not from a browser) is not refused for it. `*` accepts any
    /// origin: any web page a user opens may then call the endpoint, so pair it with
    /// [`auth`](Self::auth).
    pub allowed_origins: Option<Vec<String>>,
    /// CORS for clients that run in a browser (default off): the origins
    /// (`scheme://host[:port]`, or `*`) whose preflights are answered and whose answers carry
    /// `Access-Control-Allow-Origin`, with the MCP request headers allowed and
    /// `Mcp-Session-Id`, `MCP-Protocol-Version` and `WWW-Authenticate` exposed. They are
    /// accepted by the Origin check as well.
    ///
    /// `*` (any origin) lifts the Origin check: any web page a user opens may call the
    /// endpoint from the user's browser. It is taken only with [`auth`](Self::auth), where
    /// every request still needs its credentials (a browser never adds an `Authorization`
    /// header by itself); without, `serve_http` refuses to start and
    /// [`into_router`](crate::server::ServerHandle::into_router) answers no origin for it.
    pub cors_origins: Option<Vec<String>>,
    /// The largest request body accepted (413 beyond).
    pub body_limit: usize,
    /// How long a session may stay idle before it is dropped (404 afterwards).
    pub session_idle: Duration,
    /// No sessions for 2025-11-25 and earlier: every POST is answered on its own, with JSON
    /// (as 2026-07-28 requests always are). For many replicas behind a load balancer; requests
    /// of the client (sampling, elicitation) are not possible.
    pub sessionless: bool,
    /// Who may call the endpoint.
    pub auth: Option<Arc<dyn Authenticator>>,
    /// RFC 9728 protected-resource metadata, served at
    /// `/.well-known/oauth-protected-resource` and named in `WWW-Authenticate`.
    pub resource_metadata: Option<ResourceMetadata>,
    /// The scopes a client may start with, named by the `401` challenge (`scope=`, RFC 6750
    /// §3) of an endpoint with [`resource_metadata`](Self::resource_metadata): a client asks
    /// for these first, and for more when a call's `403` (`insufficient_scope`) names what it
    /// needs. `None` (the default): the scopes the read-only tools declare
    /// (`#[tool(read_only, scopes = […])]`), so that a client starts with reading; no `scope=`
    /// when they declare none. `Some(list)`: the list (empty: no `scope=`).
    pub initial_scopes: Option<Vec<String>>,
    /// How long calls still running at shutdown may take.
    pub shutdown_grace: Duration,
    /// Answer every request with an SSE stream, even one whose only message is its response
    /// (as the TypeScript SDK does by default). Off: such a request is answered with JSON.
    pub sse_responses: bool,
    /// How long a client may take to send a request's head, counted from when the server
    /// waits for one — so also how long a kept-alive connection may sit idle between
    /// requests (`serve_http`; default 30 s). A connection that dribbles its headers, or
    /// says nothing, is closed; a request being answered (a long call, an SSE stream) is not
    /// affected.
    pub header_timeout: Duration,
    /// How long a client may take to send a request's body once its head has come (default
    /// 30 s): a body that dribbles, or stops, is answered 408 and its connection closed, so
    /// that a head announcing a body followed by silence cannot hold a connection slot.
    pub body_timeout: Duration,
    /// The most connections served at once (`serve_http`; default 1024): beyond, new ones wait
    /// to be accepted until one closes, so a flood cannot exhaust the process's files.
    pub max_connections: usize,
    /// The most of those one address may hold (`serve_http`; default 512, half of
    /// `max_connections`): a connection beyond is answered 503 and closed at once, so that
    /// connections that dribble or idle from one address cannot take every slot. Behind a
    /// reverse proxy, where every client comes from the proxy's address, raise it to
    /// `max_connections`, or name the proxy in [`trusted_proxies`](Self::trusted_proxies)
    /// (whose connections it does not count).
    pub max_connections_per_address: usize,
    /// The reverse proxies whose forwarding headers (`Forwarded`, `X-Forwarded-For`) name the
    /// client a request counts for (default none; `serve_http`): see [`TrustedProxies`].
    pub trusted_proxies: TrustedProxies,
    /// Where the events of resumable SSE streams (2025-11-25 sessions) are kept for clients
    /// that reconnect with `Last-Event-ID`: in memory by default (bounded; see
    /// [`MemoryEventStore`]), in Redis to resume on any replica.
    pub event_store: Arc<dyn EventStore>,
    /// The `retry:` of resumable streams: how long a client whose stream the server closed
    /// waits before it reconnects (default 1 s).
    pub sse_retry: Duration,
    /// The tools as a REST API beside the endpoint (default off): each at
    /// `POST {base}/tools/{name}`, and their OpenAPI 3.1 document at `GET {base}/openapi.json`,
    /// `{base}` being the path without its last segment (`/mcp` → none). Calls pass the
    /// endpoint's credentials, scopes, middleware and validation as MCP calls do.
    pub openapi: Option<OpenApi>,
    /// Other runtimes to serve connections on (`serve_http`; default none): see
    /// [`with_connection_runtimes`](Self::with_connection_runtimes).
    pub(crate) connection_runtimes: Vec<tokio::runtime::Handle>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            path: "/mcp".into(),
            allowed_hosts: None,
            allowed_origins: None,
            cors_origins: None,
            body_limit: 4 << 20,
            session_idle: Duration::from_secs(600),
            sessionless: false,
            auth: None,
            resource_metadata: None,
            initial_scopes: None,
            shutdown_grace: Duration::from_secs(10),
            sse_responses: false,
            header_timeout: Duration::from_secs(30),
            body_timeout: Duration::from_secs(30),
            max_connections: 1024,
            max_connections_per_address: 512,
            trusted_proxies: TrustedProxies::none(),
            event_store: Arc::new(MemoryEventStore::new()),
            sse_retry: Duration::from_secs(1),
            openapi: None,
            connection_runtimes: Vec::new(),
        }
    }
}

impl HttpConfig {
    /// Shares the connections `serve_http` accepts between the runtime it runs on and
    /// `runtimes` (each typically a current-thread runtime on a thread of its own, as a server
    /// binary's `--threads N` makes them): a connection, and the calls it carries, are served on
    /// one runtime, so that a short call is read, run and answered without a hand-off between
    /// threads. The runtimes in use follow the CPUs other processes leave over (one fewer while
    /// they keep a CPU busy), a connection moving between two requests (`mcp-tool`'s guide,
    /// "Serving"). Empty (the default): every connection on `serve_http`'s runtime.
    #[must_use]
    pub fn with_connection_runtimes(mut self, runtimes: Vec<tokio::runtime::Handle>) -> Self {
        self.connection_runtimes = runtimes;
        self
    }

    /// Guards the endpoint with an authenticator, such as
    /// [`BearerTokens`](super::BearerTokens).
    #[must_use]
    pub fn with_auth(mut self, auth: impl Authenticator) -> Self {
        self.auth = Some(Arc::new(auth));
        self
    }

    /// Serves the tools as a REST API with its OpenAPI document too (see
    /// [`openapi`](Self::openapi)).
    #[must_use]
    pub fn with_openapi(mut self, openapi: OpenApi) -> Self {
        self.openapi = Some(openapi);
        self
    }

    /// Believes the forwarding headers of requests whose connections come from `proxies`
    /// (see [`trusted_proxies`](Self::trusted_proxies)).
    #[must_use]
    pub fn with_trusted_proxies(mut self, proxies: TrustedProxies) -> Self {
        self.trusted_proxies = proxies;
        self
    }

    /// Keeps resumable streams' events in `store` (such as the `RedisEventStore` of the
    /// `redis` feature, shared by replicas).
    #[must_use]
    pub fn with_event_store(mut self, store: impl EventStore) -> Self {
        self.event_store = Arc::new(store);
        self
    }
}

/// Why an endpoint without authentication is not served with `*` among its CORS origins.
pub(crate) const ANY_ORIGIN_UNAUTHENTICATED: &str = "`*` among the CORS origins would let any \
     web page a user opens call this endpoint, which takes no credentials: list the origins of \
     its browser clients, or require credentials";

impl HttpConfig {
    /// Whether `*` is among the CORS origins of an endpoint that takes no credentials.
    pub(crate) fn any_origin_unauthenticated(&self) -> bool {
        self.auth.is_none()
            && self
                .cors_origins
                .as_ref()
                .is_some_and(|origins| origins.iter().any(|o| o == "*"))
    }
}

impl fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpConfig")
            .field("path", &self.path)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("cors_origins", &self.cors_origins)
            .field("body_limit", &self.body_limit)
            .field("session_idle", &self.session_idle)
            .field("sessionless", &self.sessionless)
            .field("sse_responses", &self.sse_responses)
            .field("header_timeout", &self.header_timeout)
            .field("body_timeout", &self.body_timeout)
            .field("max_connections", &self.max_connections)
            .field(
                "max_connections_per_address",
                &self.max_connections_per_address,
            )
            .field("trusted_proxies", &self.trusted_proxies)
            .field("sse_retry", &self.sse_retry)
            .field("openapi", &self.openapi)
            .field("auth", &self.auth.is_some())
            .field("initial_scopes", &self.initial_scopes)
            .finish_non_exhaustive()
    }
}

/// RFC 9728 metadata of this server as an OAuth protected resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceMetadata {
    /// The resource's identifier: the endpoint's public URL.
    pub resource: String,
    /// The authorization servers that issue tokens for it.
    pub authorization_servers: Vec<String>,
    /// The scopes it understands.
    pub scopes_supported: Vec<String>,
}

/// Serving the tools as REST ([`HttpConfig::openapi`](HttpConfig::openapi)): which
/// tools are left out, besides those that leave themselves out (`#[tool(rest = false)]`,
/// `DynamicTool::rest(false)`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OpenApi {
    /// Tools not served over REST (nor in the document): a call answers 404. MCP clients
    /// still call them.
    pub exclude: Vec<String>,
}

impl OpenApi {
    /// Every tool served (but those marked `rest = false`).
    pub fn new() -> Self {
        OpenApi::default()
    }

    /// Leaves the tool `name` out of the REST API (MCP clients still call it).
    #[must_use]
    pub fn exclude(mut self, name: impl Into<String>) -> Self {
        self.exclude.push(name.into());
        self
    }

    /// Whether the tool `def` is served over REST: not left out here, nor by its own
    /// `rest = false`.
    pub(crate) fn serves(&self, def: &crate::tool::ToolDef) -> bool {
        def.rest() && !self.exclude.iter().any(|e| e == def.name())
    }
}
