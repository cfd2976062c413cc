//! The endpoint: its shared state and sessions, the checks every request passes (Host and
//! Origin, credentials, protocol version, media type, body size), and the POST, GET and DELETE
//! handlers that drive the sessions.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::sync::{mpsc, watch};

use crate::protocol::jsonrpc::{self, Message};
use crate::protocol::request::{Method, Request};
use crate::protocol::{ProtocolVersion, RpcError, code};
use crate::server::ServerHandle;
use crate::server::replicas::SessionRecord;
use crate::server::session::{Deliver, Opening, Outgoing, Principal, Session};
use crate::tool::Identity;

use super::auth::AuthError;
use super::auth::handle_metadata;
use super::config::HttpConfig;
use super::delete::handle_delete;
use super::get::handle_get;
use super::origin::check_origin;
use super::resume::{self, Streams, Tap};
use super::sse;
use super::stateless::{stateless_post, stateless_request};

pub(super) const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
const VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// One session of the HTTP transport: the protocol session and where its messages go.
pub(super) struct HttpSession {
    pub(super) session: Arc<Session>,
    pub(super) routes: Mutex<Routes>,
    last_seen: Mutex<Instant>,
    /// When the session's record in the shared state was last renewed (replicas).
    last_shared: Mutex<Instant>,
    pub(super) identity: Option<Identity>,
}

#[derive(Default)]
pub(super) struct Routes {
    /// The open response stream of each request in flight, by request id (JSON text).
    pub(super) requests: HashMap<Arc<str>, mpsc::UnboundedSender<Outgoing>>,
    /// The GET stream, for messages that belong to no request.
    pub(super) standalone: Option<mpsc::UnboundedSender<Outgoing>>,
    /// The GET stream's writer, when it is resumable.
    pub(super) standalone_tap: Option<Arc<Tap>>,
}

impl HttpSession {
    fn touch(&self) {
        *lock(&self.last_seen) = Instant::now();
    }

    fn busy(&self) -> bool {
        let routes = lock(&self.routes);
        !routes.requests.is_empty() || routes.standalone_open()
    }
}

/// The endpoint's shared state.
pub(super) struct Endpoint {
    pub(super) server: ServerHandle,
    pub(super) config: HttpConfig,
    pub(super) sessions: Mutex<HashMap<String, Arc<HttpSession>>>,
    pub(super) shutting_down: AtomicBool,
    pub(super) shutdown: watch::Sender<bool>,
    /// The resumable SSE streams.
    pub(super) streams: Arc<Streams>,
}

impl Endpoint {
    /// The endpoint's router and its shared state.
    pub(super) fn router(server: ServerHandle, config: HttpConfig) -> (Router, Arc<Endpoint>) {
        let (shutdown, _) = watch::channel(false);
        let endpoint = Arc::new(Endpoint {
            server,
            config: config.clone(),
            sessions: Mutex::new(HashMap::new()),
            shutting_down: AtomicBool::new(false),
            shutdown,
            streams: Arc::new(Streams::new(config.event_store.clone(), config.sse_retry)),
        });
        if !config.stateless {
            spawn_reaper(&endpoint);
            let server = &endpoint.server;
            server
                .shared
                .replicas
                .start(server, endpoint.config.session_idle);
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
                s.session.close();
            }
        }
    });
}

/// A refused request's response (boxed: it is the cold path).
pub(super) type Refusal = Box<Response>;

pub(super) fn refuse(status: StatusCode, code: i64, message: &str) -> Refusal {
    Box::new(rpc_error(status, code, message))
}

/// A JSON-RPC error as an HTTP response.
fn rpc_error(status: StatusCode, code: i64, message: &str) -> Response {
    let body = jsonrpc::error_response("null", &RpcError::new(code, message));
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

impl Endpoint {
    /// The `WWW-Authenticate` challenge.
    fn challenge(&self, error: &AuthError) -> Response {
        let mut value = String::from("Bearer realm=\"mcp\"");
        if let Some(code) = error.code {
            value.push_str(&format!(
                ", error=\"{code}\", error_description=\"{}\"",
                error.description.replace('"', "'")
            ));
        }
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
    pub(super) fn refuse_if_stopping(&self) -> Result<(), Refusal> {
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
    pub(super) async fn admit(&self, parts: &Parts) -> Result<Option<Identity>, Refusal> {
        check_origin(&self.config, &parts.headers)?;
        match &self.config.auth {
            None => Ok(None),
            Some(auth) => match auth.authenticate(parts).await {
                Ok(identity) => Ok(Some(identity)),
                Err(e) => Err(Box::new(self.challenge(&e))),
            },
        }
    }

    /// The checks of a request that only a session can answer (GET, DELETE): Host and Origin,
    /// credentials, a stateful endpoint, and the session it names.
    pub(super) async fn session_of(
        &self,
        parts: &Parts,
        method: &str,
    ) -> Result<Arc<HttpSession>, Refusal> {
        let identity = self.admit(parts).await?;
        if self.config.stateless {
            return Err(Box::new(method_not_allowed(method)));
        }
        self.session_anywhere(parts, identity.as_ref()).await
    }

    /// [`session`](Self::session), taking up from the shared state a session this replica
    /// does not hold, when the replicas share sessions.
    async fn session_anywhere(
        &self,
        parts: &Parts,
        identity: Option<&Identity>,
    ) -> Result<Arc<HttpSession>, Refusal> {
        if let Some(id) = parts
            .headers
            .get(&SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            && !lock(&self.sessions).contains_key(id)
        {
            self.take_up(id, identity).await;
        }
        self.session(parts, identity)
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
        let mut session = lock(&self.sessions).get(id).cloned();
        if session.as_ref().is_some_and(|s| s.session.ended()) {
            // Ended by its client on another replica.
            lock(&self.sessions).remove(id);
            session = None;
        }
        match session {
            Some(s) if s.identity.as_ref() == identity => {
                s.touch();
                self.renew_shared(&s);
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

    /// A session another replica opened, from its record in the shared state (`None`: no
    /// such session, or it belongs to someone else).
    async fn take_up(&self, id: &str, identity: Option<&Identity>) -> Option<Arc<HttpSession>> {
        let replicas = &self.server.shared.replicas;
        if !replicas.shared() || id.is_empty() || id.len() > 128 {
            return None;
        }
        let text = replicas.load(id).await?;
        let record: SessionRecord = match serde_json::from_str(&text) {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, "an unreadable session record in the shared state");
                return None;
            }
        };
        if record.subject.as_deref() != identity.map(|i| i.subject.as_str()) {
            return None;
        }
        let http = self.open_session(id.to_owned(), identity.cloned());
        http.session.restore(record);
        // Two requests of the session may have taken it up at once: the first one kept wins.
        let kept = lock(&self.sessions)
            .entry(id.to_owned())
            .or_insert_with(|| http.clone())
            .clone();
        if !Arc::ptr_eq(&kept, &http) {
            http.session.close();
        } else {
            tracing::debug!("a session opened on another replica is served here");
        }
        Some(kept)
    }

    /// Renews the session's record in the shared state, at most every quarter of its idle
    /// time.
    fn renew_shared(&self, http: &HttpSession) {
        let Some(name) = http.session.shared_name() else {
            return;
        };
        let every = self.config.session_idle / 4;
        let mut last = lock(&http.last_shared);
        if last.elapsed() >= every {
            *last = Instant::now();
            self.server.shared.replicas.touch(name);
        }
    }

    /// Whether this replica holds session `id`.
    pub(super) fn holds(&self, id: &str) -> bool {
        lock(&self.sessions).contains_key(id)
    }

    /// A new session, whose messages go straight to the open streams.
    fn new_session(&self, identity: Option<Identity>) -> Option<(String, Arc<HttpSession>)> {
        let id = new_session_id()?;
        Some((id.clone(), self.open_session(id, identity)))
    }

    /// The HTTP side and the protocol session of session `id`.
    fn open_session(&self, id: String, identity: Option<Identity>) -> Arc<HttpSession> {
        Arc::new_cyclic(|me: &Weak<HttpSession>| {
            let to: Weak<dyn Deliver> = me.clone();
            let session = Session::open(
                &self.server,
                crate::server::session::Outbound::Routed(to),
                Opening {
                    principal: principal_of(identity.as_ref()),
                    identity: identity.clone(),
                    one_shot: None,
                    shared_name: Some(id.into()),
                },
            );
            HttpSession {
                session,
                routes: Mutex::new(Routes::default()),
                last_seen: Mutex::new(Instant::now()),
                last_shared: Mutex::new(Instant::now()),
                identity,
            }
        })
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
            drop(routes);
            if done {
                // A session is idle from the end of its last call, not from its start.
                self.touch();
            }
            return;
        }
        if message.text.is_empty() {
            // A request to let its stream go, after that stream ended.
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

/// Whether the client takes an SSE answer: its `Accept` names `text/event-stream` (or
/// anything), or it sent none.
pub(super) fn accepts_sse(headers: &HeaderMap) -> bool {
    match headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) {
        None => true,
        Some(accept) => accept.split(',').any(|t| {
            let t = t.split(';').next().unwrap_or("").trim();
            t.eq_ignore_ascii_case("text/event-stream") || t == "*/*" || t == "text/*"
        }),
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
                    ProtocolVersion::supported_list()
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
    // The media type, without parameters (`application/json; charset=utf-8`).
    let media_type = content_type.split(';').next().unwrap_or("").trim();
    if !media_type.eq_ignore_ascii_case("application/json") {
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
    let message = match jsonrpc::parse(&body) {
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
    // A request is read once: its headers, the session and the handler all take this value.
    let request = match &message {
        Message::Request { id, method, params } => {
            Some(Request::read(Some(id), method.clone(), *params))
        }
        _ => None,
    };
    let (id, raw_id, is_initialize) = match &request {
        Some(r) => (
            Some(jsonrpc::id_key(r.id_text())),
            r.id_text().to_owned(),
            r.method == Method::Initialize,
        ),
        None => (None, String::new(), false),
    };
    if id.is_some()
        && let Err(r) = endpoint.refuse_if_stopping()
    {
        return *r;
    }
    let header_version = parts
        .headers
        .get(&VERSION_HEADER)
        .map(|v| v.to_str().unwrap_or("?").to_owned());
    let stateless = header_version
        .as_deref()
        .and_then(ProtocolVersion::parse)
        .is_some_and(ProtocolVersion::is_stateless)
        || request.as_ref().is_some_and(|r| r.stateless);
    if stateless {
        let Some(request) = &request else {
            // The revision defines no notification or response a client sends over HTTP.
            return StatusCode::ACCEPTED.into_response();
        };
        return stateless_request(
            &endpoint,
            &parts,
            request,
            header_version.as_deref(),
            identity,
        )
        .await;
    }
    let version = match check_version(&parts.headers) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    if endpoint.config.stateless {
        return stateless_post(&endpoint, message, request.as_ref(), version, identity).await;
    }
    let (session_id, http) = if is_initialize {
        if parts.headers.contains_key(&SESSION_HEADER) {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                code::INVALID_REQUEST,
                "Bad Request: initialize opens a new session; send it without Mcp-Session-Id",
            );
        }
        let max = endpoint.server.shared.limits.max_sessions;
        if lock(&endpoint.sessions).len() >= max {
            tracing::warn!(
                max,
                "an initialize was refused: the server holds its most sessions"
            );
            return rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                code::INTERNAL_ERROR,
                "Service Unavailable: the server holds as many sessions as it may; try again later",
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
        match endpoint.session_anywhere(&parts, identity.as_ref()).await {
            // A header naming another supported revision than the session's is accepted:
            // the official conformance suite itself sends 2025-03-26 on 2025-11-25 sessions.
            Ok(s) => (None, s),
            Err(r) => return *r,
        }
    };
    let (Some(id), Some(request)) = (id, &request) else {
        // A notification or a response: accepted, nothing to say.
        http.session.dispatch(message);
        return StatusCode::ACCEPTED.into_response();
    };
    let (tx, rx) = mpsc::unbounded_channel();
    {
        let mut routes = lock(&http.routes);
        if routes.requests.contains_key(&id) {
            // Its answer could not tell the two apart.
            drop(routes);
            return rpc_error(
                StatusCode::CONFLICT,
                code::INVALID_REQUEST,
                "Conflict: a request with this id is still running in this session",
            );
        }
        routes.requests.insert(id.clone(), tx);
    }
    http.session.dispatch_request(request, false);
    if let Some(session_id) = &session_id
        && !http.session.initialized.load(Ordering::Relaxed)
    {
        // A failed initialize opens no session.
        lock(&endpoint.sessions).remove(session_id);
        http.session.close();
        return sse::respond(rx, false, |_| StatusCode::OK, None).await;
    }
    if let Some(session_id) = &session_id {
        // Kept for the other replicas before the client hears of the session: its next
        // request may reach any of them.
        let replicas = &endpoint.server.shared.replicas;
        if replicas.shared()
            && let Ok(record) = serde_json::to_string(&http.session.record())
            && let Err(e) = replicas.save_now(session_id, &record).await
        {
            tracing::warn!(error = %e, "a new session is not in the shared state: only this replica serves it");
        }
    }
    let mut response = if !is_initialize
        && accepts_sse(&parts.headers)
        && resume::resumable(http.session.client().protocol_version)
    {
        let session = parts.headers.get(&SESSION_HEADER);
        let owner = resume::owner_of(
            session.and_then(|v| v.to_str().ok()).unwrap_or(""),
            http.identity.as_ref(),
        );
        let sse = endpoint.config.sse_responses;
        endpoint.streams.respond(rx, sse, &raw_id, owner).await
    } else if accepts_sse(&parts.headers) {
        sse::respond(
            rx,
            endpoint.config.sse_responses,
            |_| StatusCode::OK,
            Some(&raw_id),
        )
        .await
    } else {
        sse::respond_json_only(rx, |_| StatusCode::OK, Some(&raw_id)).await
    };
    if let Some(session_id) = session_id
        && let Ok(v) = HeaderValue::from_str(&session_id)
    {
        response.headers_mut().insert(SESSION_HEADER, v);
    }
    response
}

/// Who a request comes from, for what outlives it in 2026-07-28.
pub(super) fn principal_of(identity: Option<&Identity>) -> Principal {
    match identity {
        Some(i) => Principal::Subject(i.subject.clone()),
        None => Principal::Anonymous,
    }
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

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
