//! The Streamable HTTP transport (MCP 2025-11-25), secure by default.
//!
//! One endpoint (`/mcp` unless configured): POST carries client messages (a request is
//! answered with JSON, or with an SSE stream when the call sends progress, logs or requests of
//! its own before its result), GET opens the session's stream for messages that belong to no
//! request, DELETE ends the session. Sessions have cryptographically random ids and expire when
//! idle; a stateless mode answers every POST on its own. Host and Origin are checked (DNS
//! rebinding), bodies are limited, and an [`Authenticator`] (such as [`BearerTokens`]) can
//! guard the endpoint, with RFC 9728 protected-resource metadata.
//!
//! [`Server::into_router`](crate::Server::into_router) gives the endpoint as an axum
//! `Router`, to mount in an application beside its own routes.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use tokio::sync::{mpsc, watch};

use crate::protocol::{self, Message, ProtocolVersion, RpcError, code};
use crate::server::{Deliver, Outbound, Outgoing, ServerCore, Session};

const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
const VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// How the HTTP endpoint behaves. The defaults are the safe ones: loopback hosts and origins
/// only, a 4 MiB body limit, sessions that expire after 10 idle minutes.
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpConfig {
    /// The endpoint's path.
    pub path: String,
    /// `Host` values accepted (a name, or `name:port`). `None`: loopback names only.
    pub allowed_hosts: Option<Vec<String>>,
    /// `Origin` values accepted (`scheme://host[:port]`). `None`: loopback origins only. A
    /// request without `Origin` (not from a browser) is not refused for it.
    pub allowed_origins: Option<Vec<String>>,
    /// The largest request body accepted (413 beyond).
    pub body_limit: usize,
    /// How long a session may stay idle before it is dropped (404 afterwards).
    pub session_idle: Duration,
    /// No sessions: every POST is answered on its own, with JSON. For many replicas behind a
    /// load balancer; requests of the client (sampling, elicitation) are not possible.
    pub stateless: bool,
    /// Who may call the endpoint.
    pub auth: Option<Arc<dyn Authenticator>>,
    /// RFC 9728 protected-resource metadata, served at
    /// `/.well-known/oauth-protected-resource` and named in `WWW-Authenticate`.
    pub resource_metadata: Option<ResourceMetadata>,
    /// How long calls still running at shutdown may take.
    pub shutdown_grace: Duration,
    /// Answer every request with an SSE stream, even one whose only message is its response
    /// (as the TypeScript SDK does by default). Off: such a request is answered with JSON.
    pub sse_responses: bool,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            path: "/mcp".into(),
            allowed_hosts: None,
            allowed_origins: None,
            body_limit: 4 << 20,
            session_idle: Duration::from_secs(600),
            stateless: false,
            auth: None,
            resource_metadata: None,
            shutdown_grace: Duration::from_secs(10),
            sse_responses: false,
        }
    }
}

impl fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpConfig")
            .field("path", &self.path)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("body_limit", &self.body_limit)
            .field("session_idle", &self.session_idle)
            .field("stateless", &self.stateless)
            .field("sse_responses", &self.sse_responses)
            .field("auth", &self.auth.is_some())
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

/// Who made a request, as an [`Authenticator`] established it. Tools take it as a parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The subject (user or client) the credentials belong to.
    pub subject: String,
    /// The scopes granted.
    pub scopes: Vec<String>,
}

impl crate::FromContext for Identity {
    fn from_context(call: &crate::ToolCall) -> Result<Self, crate::ToolError> {
        call.request().identity().cloned().ok_or_else(|| {
            crate::ToolError::new("UNAUTHENTICATED", "this request carries no identity")
        })
    }
}

/// Why a request was refused: answered with 401 and `WWW-Authenticate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthError {
    /// Said to the client (`error_description`).
    pub description: String,
}

/// The future an [`Authenticator`] returns.
pub type AuthFuture<'a> = Pin<Box<dyn Future<Output = Result<Identity, AuthError>> + Send + 'a>>;

/// Decides who may use the HTTP endpoint, from the request's head.
pub trait Authenticator: Send + Sync + 'static {
    /// Establishes the identity behind a request, or refuses it.
    fn authenticate<'a>(&'a self, request: &'a Parts) -> AuthFuture<'a>;
}

/// Bearer tokens known in advance (from configuration or the environment), each standing for
/// a subject.
#[derive(Clone, Default)]
pub struct BearerTokens {
    tokens: Vec<(String, Identity)>,
}

impl fmt::Debug for BearerTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BearerTokens({} tokens)", self.tokens.len())
    }
}

impl BearerTokens {
    /// No tokens yet.
    pub fn new() -> Self {
        BearerTokens::default()
    }

    /// Accepts `token` as `subject`.
    #[must_use]
    pub fn token(mut self, token: impl Into<String>, subject: impl Into<String>) -> Self {
        self.tokens.push((
            token.into(),
            Identity {
                subject: subject.into(),
                scopes: Vec::new(),
            },
        ));
        self
    }

    /// Tokens from an environment variable: comma-separated `token` or `subject:token`
    /// entries. `None` when the variable is unset or empty.
    pub fn from_env(var: &str) -> Option<Self> {
        let value = std::env::var(var).ok()?;
        let mut tokens = BearerTokens::new();
        for (i, entry) in value
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .enumerate()
        {
            tokens = match entry.split_once(':') {
                Some((subject, token)) => tokens.token(token, subject),
                None => tokens.token(entry, format!("token-{}", i + 1)),
            };
        }
        (!tokens.tokens.is_empty()).then_some(tokens)
    }
}

/// Compares two byte strings in time that depends only on their lengths.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Authenticator for BearerTokens {
    fn authenticate<'a>(&'a self, request: &'a Parts) -> AuthFuture<'a> {
        let presented = request
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, token) = v.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            });
        let outcome = match presented {
            None => Err(AuthError {
                description: "a bearer token is required".into(),
            }),
            Some(token) => self
                .tokens
                .iter()
                .find(|(known, _)| same_secret(known.as_bytes(), token.as_bytes()))
                .map(|(_, identity)| identity.clone())
                .ok_or_else(|| AuthError {
                    description: "the bearer token is not valid".into(),
                }),
        };
        Box::pin(std::future::ready(outcome))
    }
}

/// One session of the HTTP transport: the protocol session and where its messages go.
struct HttpSession {
    session: Arc<Session>,
    routes: Mutex<Routes>,
    last_seen: Mutex<Instant>,
    identity: Option<Identity>,
}

#[derive(Default)]
struct Routes {
    /// The open response stream of each request in flight, by request id (JSON text).
    requests: HashMap<Arc<str>, mpsc::UnboundedSender<Outgoing>>,
    /// The GET stream, for messages that belong to no request.
    standalone: Option<mpsc::UnboundedSender<Outgoing>>,
}

impl HttpSession {
    fn touch(&self) {
        *lock(&self.last_seen) = Instant::now();
    }

    fn busy(&self) -> bool {
        let routes = lock(&self.routes);
        !routes.requests.is_empty() || routes.standalone.as_ref().is_some_and(|s| !s.is_closed())
    }
}

/// The endpoint's shared state.
struct Endpoint {
    core: Arc<ServerCore>,
    config: HttpConfig,
    sessions: Mutex<HashMap<String, Arc<HttpSession>>>,
    shutting_down: AtomicBool,
    shutdown: watch::Sender<bool>,
}

impl ServerCore {
    /// The MCP endpoint as an axum `Router` (the endpoint's path, plus the protected-resource
    /// metadata when configured), to serve or to merge into an application.
    pub fn http_router(self: &Arc<Self>, config: HttpConfig) -> Router {
        self.http_endpoint(config).0
    }

    fn http_endpoint(self: &Arc<Self>, config: HttpConfig) -> (Router, Arc<Endpoint>) {
        let (shutdown, _) = watch::channel(false);
        let endpoint = Arc::new(Endpoint {
            core: self.clone(),
            config: config.clone(),
            sessions: Mutex::new(HashMap::new()),
            shutting_down: AtomicBool::new(false),
            shutdown,
        });
        if !config.stateless {
            spawn_reaper(&endpoint);
        }
        let mut router = Router::new().route(
            &config.path,
            get(handle_get).post(handle_post).delete(handle_delete),
        );
        if let Some(meta) = &config.resource_metadata {
            // RFC 9728: the well-known segment goes between the host and the resource's path.
            let (_, path) = split_url(&meta.resource);
            router = router.route(
                "/.well-known/oauth-protected-resource",
                get(handle_metadata),
            );
            if !path.is_empty() && path != "/" {
                router = router.route(
                    &format!("/.well-known/oauth-protected-resource{path}"),
                    get(handle_metadata),
                );
            }
        }
        let router = router
            .layer(DefaultBodyLimit::max(config.body_limit))
            .with_state(endpoint.clone());
        (router, endpoint)
    }

    /// Serves the MCP endpoint on `addr` until SIGINT or SIGTERM; then refuses new requests,
    /// lets the calls in flight finish (for at most `config.shutdown_grace`) and returns.
    pub async fn serve_http(
        self: &Arc<Self>,
        addr: SocketAddr,
        config: HttpConfig,
    ) -> std::io::Result<()> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        self.serve_http_on(listener, config).await
    }

    /// [`serve_http`](Self::serve_http) on a listener bound already (port 0 included: its
    /// `local_addr` says where it listens).
    pub async fn serve_http_on(
        self: &Arc<Self>,
        listener: tokio::net::TcpListener,
        config: HttpConfig,
    ) -> std::io::Result<()> {
        let addr = listener.local_addr()?;
        let mut config = config;
        if config.allowed_hosts.is_none() && !addr.ip().is_loopback() {
            tracing::warn!(
                %addr,
                "serving on a non-loopback address: every Host is accepted; set `allowed_hosts` to restrict them"
            );
            config.allowed_hosts = Some(vec!["*".into()]);
        }
        let grace = config.shutdown_grace;
        let (router, endpoint) = self.http_endpoint(config);
        tracing::info!(%addr, "serving MCP over HTTP");
        // Responses (SSE events especially) go out in several writes: without TCP_NODELAY,
        // Nagle's algorithm holds each one back for about 40 ms.
        let listener = axum::serve::ListenerExt::tap_io(listener, |stream| {
            if let Err(e) = stream.set_nodelay(true) {
                tracing::debug!(error = %e, "could not set TCP_NODELAY");
            }
        });
        let (stop_tx, mut stop_rx) = watch::channel(false);
        let signal_endpoint = endpoint.clone();
        tokio::spawn(async move {
            shutdown_signal().await;
            tracing::info!("shutting down: refusing new requests, finishing calls in flight");
            signal_endpoint.shutting_down.store(true, Ordering::SeqCst);
            let _ = signal_endpoint.shutdown.send(true);
            let _ = stop_tx.send(true);
        });
        let mut graceful_rx = stop_rx.clone();
        let serve = axum::serve(listener, router).with_graceful_shutdown(async move {
            let _ = graceful_rx.wait_for(|stop| *stop).await;
        });
        tokio::select! {
            result = serve => result,
            () = async {
                let _ = stop_rx.wait_for(|stop| *stop).await;
                tokio::time::sleep(grace).await;
            } => {
                tracing::warn!("calls still running after the shutdown grace period were dropped");
                Ok(())
            }
        }
    }
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Drops sessions idle for longer than the configured time (clients that never DELETE).
fn spawn_reaper(endpoint: &Arc<Endpoint>) {
    let weak = Arc::downgrade(endpoint);
    let idle = endpoint.config.session_idle;
    let every = (idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(30));
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            let Some(endpoint) = weak.upgrade() else {
                return;
            };
            let expired: Vec<Arc<HttpSession>> = {
                let mut sessions = lock(&endpoint.sessions);
                let before = sessions.len();
                let mut gone = Vec::new();
                sessions.retain(|_, s| {
                    let keep = s.busy() || lock(&s.last_seen).elapsed() < idle;
                    if !keep {
                        gone.push(s.clone());
                    }
                    keep
                });
                if sessions.len() != before {
                    tracing::debug!(expired = before - sessions.len(), "idle sessions expired");
                }
                gone
            };
            for s in expired {
                s.session.abort_all();
            }
        }
    });
}

/// A refused request's response (boxed: it is the cold path).
type Refusal = Box<Response>;

fn refuse(status: StatusCode, code: i64, message: &str) -> Refusal {
    Box::new(rpc_error(status, code, message))
}

/// A JSON-RPC error as an HTTP response.
fn rpc_error(status: StatusCode, code: i64, message: &str) -> Response {
    let body = protocol::error_response("null", &RpcError::new(code, message));
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// Host and Origin checks (DNS rebinding protection).
fn check_origin(config: &HttpConfig, headers: &HeaderMap) -> Result<(), Refusal> {
    if let Some(host) = headers.get(header::HOST) {
        let host = host.to_str().unwrap_or("");
        let allowed = match &config.allowed_hosts {
            None => is_loopback_host(host),
            Some(list) => list.iter().any(|a| a == "*" || host_matches(a, host)),
        };
        if !allowed {
            return Err(refuse(
                StatusCode::FORBIDDEN,
                code::INVALID_REQUEST,
                &format!("Forbidden: Host `{host}` is not allowed"),
            ));
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let allowed = match &config.allowed_origins {
            None => origin_host(origin).is_some_and(is_loopback_host),
            Some(list) => list
                .iter()
                .any(|a| a == "*" || a.eq_ignore_ascii_case(origin)),
        };
        if !allowed {
            return Err(refuse(
                StatusCode::FORBIDDEN,
                code::INVALID_REQUEST,
                &format!("Forbidden: Origin `{origin}` is not allowed"),
            ));
        }
    }
    Ok(())
}

/// `host[:port]` without the port (IPv6 literals keep their brackets).
fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    host.rsplit_once(':').map_or(host, |(name, _)| name)
}

fn is_loopback_host(host: &str) -> bool {
    let name = strip_port(host).to_ascii_lowercase();
    name == "localhost" || name == "127.0.0.1" || name == "[::1]" || name.ends_with(".localhost")
}

fn host_matches(allowed: &str, host: &str) -> bool {
    allowed.eq_ignore_ascii_case(host) || allowed.eq_ignore_ascii_case(strip_port(host))
}

/// The host part of an origin (`scheme://host[:port]`).
fn origin_host(origin: &str) -> Option<&str> {
    origin
        .split_once("://")
        .map(|(_, rest)| rest.trim_end_matches('/'))
}

impl Endpoint {
    /// The `WWW-Authenticate` challenge.
    fn challenge(&self, error: &AuthError) -> Response {
        let mut value = format!(
            "Bearer realm=\"mcp\", error=\"invalid_token\", error_description=\"{}\"",
            error.description.replace('"', "'")
        );
        if let Some(meta) = &self.config.resource_metadata {
            let (origin, path) = split_url(&meta.resource);
            value.push_str(&format!(
                ", resource_metadata=\"{origin}/.well-known/oauth-protected-resource{path}\""
            ));
        }
        let mut response = rpc_error(
            StatusCode::UNAUTHORIZED,
            code::INVALID_REQUEST,
            &format!("Unauthorized: {}", error.description),
        );
        if let Ok(v) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        response
    }

    /// Refuses new work once shutdown began (answers and notifications still get through, so
    /// calls waiting on the client can finish).
    fn refuse_if_stopping(&self) -> Result<(), Refusal> {
        if self.shutting_down.load(Ordering::SeqCst) {
            return Err(refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                code::INTERNAL_ERROR,
                "the server is shutting down",
            ));
        }
        Ok(())
    }

    /// The checks every method of the endpoint shares: Host/Origin, credentials.
    async fn admit(&self, parts: &Parts) -> Result<Option<Identity>, Refusal> {
        check_origin(&self.config, &parts.headers)?;
        match &self.config.auth {
            None => Ok(None),
            Some(auth) => match auth.authenticate(parts).await {
                Ok(identity) => Ok(Some(identity)),
                Err(e) => Err(Box::new(self.challenge(&e))),
            },
        }
    }

    /// The session a request names, checking that it exists and belongs to the same identity.
    fn session(
        &self,
        parts: &Parts,
        identity: Option<&Identity>,
    ) -> Result<Arc<HttpSession>, Refusal> {
        let Some(id) = parts.headers.get(&SESSION_HEADER) else {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                code::INVALID_REQUEST,
                "Bad Request: Mcp-Session-Id header is required",
            ));
        };
        let id = id.to_str().unwrap_or("");
        let session = lock(&self.sessions).get(id).cloned();
        match session {
            Some(s) if s.identity.as_ref() == identity => {
                s.touch();
                Ok(s)
            }
            Some(_) => Err(refuse(
                StatusCode::FORBIDDEN,
                code::INVALID_REQUEST,
                "Forbidden: the session belongs to another identity",
            )),
            None => Err(refuse(
                StatusCode::NOT_FOUND,
                code::INVALID_REQUEST,
                "Session not found (it ended or expired): initialize a new one",
            )),
        }
    }

    /// A new session, whose messages go straight to the open streams.
    fn new_session(&self, identity: Option<Identity>) -> Option<(String, Arc<HttpSession>)> {
        let id = new_session_id()?;
        let http = Arc::new_cyclic(|me: &std::sync::Weak<HttpSession>| {
            let to: std::sync::Weak<dyn Deliver> = me.clone();
            let session = Session::new(self.core.clone(), Outbound::Routed(to));
            session.set_identity(identity.clone().map(Arc::new));
            HttpSession {
                session,
                routes: Mutex::new(Routes::default()),
                last_seen: Mutex::new(Instant::now()),
                identity,
            }
        });
        Some((id, http))
    }
}

impl Deliver for HttpSession {
    /// Puts a message on the stream it belongs to: its request's, else the GET stream.
    fn deliver(&self, message: Outgoing) {
        let mut routes = lock(&self.routes);
        if let Some(related) = message.related.clone()
            && let Some(stream) = routes.requests.get(&related)
        {
            let done = message.is_response;
            if stream.send(message).is_err() || done {
                routes.requests.remove(&related);
            }
            return;
        }
        match &routes.standalone {
            Some(stream) if !message.is_response => {
                if stream.send(message).is_err() {
                    routes.standalone = None;
                }
            }
            _ => tracing::debug!("no open stream for a message; dropped"),
        }
    }
}

/// `https://host:port/a/b` → (`https://host:port`, `/a/b`).
fn split_url(url: &str) -> (&str, &str) {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(i) => url.split_at(after_scheme + i),
        None => (url, ""),
    }
}

/// 32 random bytes, hex: visible ASCII, unguessable. `None` without system randomness (a
/// guessable id is never handed out).
fn new_session_id() -> Option<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn check_version(headers: &HeaderMap) -> Result<Option<ProtocolVersion>, Refusal> {
    match headers.get(&VERSION_HEADER) {
        None => Ok(None),
        Some(v) => match v.to_str().ok().and_then(ProtocolVersion::parse) {
            Some(version) => Ok(Some(version)),
            None => Err(refuse(
                StatusCode::BAD_REQUEST,
                code::INVALID_REQUEST,
                &format!(
                    "Bad Request: unsupported MCP-Protocol-Version `{}`; supported: {}",
                    v.to_str().unwrap_or("?"),
                    ProtocolVersion::SUPPORTED
                        .map(ProtocolVersion::as_str)
                        .join(", ")
                ),
            )),
        },
    }
}

async fn handle_post(
    State(endpoint): State<Arc<Endpoint>>,
    request: axum::extract::Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let identity = match endpoint.admit(&parts).await {
        Ok(i) => i,
        Err(r) => return *r,
    };
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !content_type
        .to_ascii_lowercase()
        .starts_with("application/json")
    {
        return rpc_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            code::INVALID_REQUEST,
            "Unsupported Media Type: the body must be application/json",
        );
    }
    let body = match axum::body::to_bytes(body, endpoint.config.body_limit).await {
        Ok(b) => b,
        Err(_) => {
            return rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                code::INVALID_REQUEST,
                &format!(
                    "Payload Too Large: the limit is {} bytes",
                    endpoint.config.body_limit
                ),
            );
        }
    };
    // Parsed once: the id and method decide how to answer, and the session takes the message.
    let message = match protocol::parse(&body) {
        Ok(message) => message,
        Err(response) => {
            return (
                StatusCode::BAD_REQUEST,
                [(header::CONTENT_TYPE, "application/json")],
                response,
            )
                .into_response();
        }
    };
    let (id, is_initialize) = match &message {
        Message::Request { id, method, .. } => {
            (Some(protocol::id_key(id.get())), method == "initialize")
        }
        _ => (None, false),
    };
    if id.is_some()
        && let Err(r) = endpoint.refuse_if_stopping()
    {
        return *r;
    }
    let version = match check_version(&parts.headers) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    if endpoint.config.stateless {
        return stateless_post(&endpoint, message, id, version, identity).await;
    }
    let (session_id, http) = if is_initialize {
        if parts.headers.contains_key(&SESSION_HEADER) {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                code::INVALID_REQUEST,
                "Bad Request: initialize opens a new session; send it without Mcp-Session-Id",
            );
        }
        let Some((session_id, http)) = endpoint.new_session(identity) else {
            return rpc_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                code::INTERNAL_ERROR,
                "no randomness available for a session id",
            );
        };
        lock(&endpoint.sessions).insert(session_id.clone(), http.clone());
        (Some(session_id), http)
    } else {
        match endpoint.session(&parts, identity.as_ref()) {
            Ok(s) => (None, s),
            Err(r) => return *r,
        }
    };
    let Some(id) = id else {
        // A notification or a response: accepted, nothing to say.
        http.session.handle_message(message);
        return StatusCode::ACCEPTED.into_response();
    };
    let (tx, rx) = mpsc::unbounded_channel();
    lock(&http.routes).requests.insert(id.clone(), tx);
    http.session.handle_message(message);
    let mut response = respond(rx, endpoint.config.sse_responses).await;
    if let Some(session_id) = session_id
        && let Ok(v) = HeaderValue::from_str(&session_id)
    {
        response.headers_mut().insert(SESSION_HEADER, v);
    }
    response
}

/// Answers one request: JSON when its response is the first message for it (unless `sse`),
/// otherwise an SSE stream of everything that belongs to it, ending with the response.
async fn respond(mut rx: mpsc::UnboundedReceiver<Outgoing>, sse: bool) -> Response {
    let Some(first) = rx.recv().await else {
        // The call was cancelled: no response will come.
        return StatusCode::ACCEPTED.into_response();
    };
    if first.is_response {
        if first.text.is_empty() {
            // Cancelled: the client expects no response.
            return StatusCode::ACCEPTED.into_response();
        }
        if !sse {
            return ([(header::CONTENT_TYPE, "application/json")], first.text).into_response();
        }
    }
    let stream =
        futures_util::stream::unfold((Some(first), Some(rx)), |(pending, rx)| async move {
            let mut rx = rx?;
            let message = match pending {
                Some(m) => m,
                None => rx.recv().await?,
            };
            if message.text.is_empty() {
                return None;
            }
            let event = Bytes::from(format!("event: message\ndata: {}\n\n", message.text));
            // The stream ends with the response.
            let rx = (!message.is_response).then_some(rx);
            Some((Ok::<_, std::convert::Infallible>(event), (None, rx)))
        });
    sse_response(Body::from_stream(stream))
}

fn sse_response(body: Body) -> Response {
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(body)
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// Stateless mode: a fresh session per POST, JSON only.
async fn stateless_post(
    endpoint: &Endpoint,
    message: Message<'_>,
    id: Option<Arc<str>>,
    version: Option<ProtocolVersion>,
    identity: Option<Identity>,
) -> Response {
    let (tx, mut rx) = mpsc::unbounded_channel::<Outgoing>();
    let session = Session::one_shot(endpoint.core.clone(), tx);
    session.set_identity(identity.map(Arc::new));
    session.set_stateless(version.unwrap_or(ProtocolVersion::LATEST));
    session.handle_message(message);
    let Some(id) = id else {
        return StatusCode::ACCEPTED.into_response();
    };
    while let Some(message) = rx.recv().await {
        if message.is_response && message.related.as_deref() == Some(&*id) {
            return ([(header::CONTENT_TYPE, "application/json")], message.text).into_response();
        }
    }
    StatusCode::ACCEPTED.into_response()
}

async fn handle_get(
    State(endpoint): State<Arc<Endpoint>>,
    request: axum::extract::Request,
) -> Response {
    let (parts, _) = request.into_parts();
    let identity = match endpoint.admit(&parts).await {
        Ok(i) => i,
        Err(r) => return *r,
    };
    if endpoint.config.stateless {
        return method_not_allowed("GET");
    }
    if let Err(r) = endpoint.refuse_if_stopping() {
        return *r;
    }
    let accepts_sse = parts
        .headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/event-stream") || a.contains("*/*"));
    if !accepts_sse {
        return rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            code::INVALID_REQUEST,
            "Not Acceptable: GET opens an SSE stream; accept text/event-stream",
        );
    }
    let http = match endpoint.session(&parts, identity.as_ref()) {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let (tx, rx) = mpsc::unbounded_channel();
    {
        let mut routes = lock(&http.routes);
        if routes.standalone.as_ref().is_some_and(|s| !s.is_closed()) {
            return rpc_error(
                StatusCode::CONFLICT,
                code::INVALID_REQUEST,
                "Conflict: this session's GET stream is already open",
            );
        }
        routes.standalone = Some(tx);
    }
    let shutdown = endpoint.shutdown.subscribe();
    let stream =
        futures_util::stream::unfold((rx, shutdown), |(mut rx, mut shutdown)| async move {
            let keepalive = tokio::time::sleep(Duration::from_secs(25));
            let event = tokio::select! {
                message = rx.recv() => {
                    let message = message?;
                    Bytes::from(format!("event: message\ndata: {}\n\n", message.text))
                }
                () = keepalive => Bytes::from_static(b": keep-alive\n\n"),
                _ = shutdown.wait_for(|stop| *stop) => return None,
            };
            Some((Ok::<_, std::convert::Infallible>(event), (rx, shutdown)))
        });
    sse_response(Body::from_stream(stream))
}

async fn handle_delete(
    State(endpoint): State<Arc<Endpoint>>,
    request: axum::extract::Request,
) -> Response {
    let (parts, _) = request.into_parts();
    let identity = match endpoint.admit(&parts).await {
        Ok(i) => i,
        Err(r) => return *r,
    };
    if endpoint.config.stateless {
        return method_not_allowed("DELETE");
    }
    let http = match endpoint.session(&parts, identity.as_ref()) {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let id = parts
        .headers
        .get(&SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    lock(&endpoint.sessions).remove(&id);
    http.session.abort_all();
    let mut routes = lock(&http.routes);
    routes.standalone = None;
    routes.requests.clear();
    StatusCode::OK.into_response()
}

async fn handle_metadata(State(endpoint): State<Arc<Endpoint>>) -> Response {
    let Some(meta) = &endpoint.config.resource_metadata else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let mut body = json!({
        "resource": meta.resource,
        "authorization_servers": meta.authorization_servers,
        "bearer_methods_supported": ["header"],
    });
    if !meta.scopes_supported.is_empty() {
        body["scopes_supported"] = json!(meta.scopes_supported);
    }
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn method_not_allowed(method: &str) -> Response {
    let mut r = rpc_error(
        StatusCode::METHOD_NOT_ALLOWED,
        code::INVALID_REQUEST,
        &format!("Method Not Allowed: {method} is not supported by a stateless server"),
    );
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    r
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
