//! The endpoint's shared state: its sessions (each with the streams its messages go to), and
//! the checks every request passes before a handler acts on it (Host and Origin, credentials,
//! shutdown, the session it names). The handlers (`post`, `get`, `delete`, `stateless`) use it;
//! it uses none of them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use tokio::sync::{mpsc, watch};

use crate::protocol::{RpcError, code, jsonrpc};
use crate::server::ServerHandle;
use crate::server::core::session::{Deliver, Opening, Outgoing, Principal, Session, client_share};
use crate::server::replicas::SessionRecord;
use crate::sync::lock;
use crate::tool::Identity;

use crate::transport::http::access::auth::{AuthError, DPOP_ALGORITHMS, DpopMode};
use crate::transport::http::config::HttpConfig;
use crate::transport::http::head::Head;
use crate::transport::http::head::Source;
pub(super) use crate::transport::http::head::{SESSION_HEADER, accepts_sse};
use crate::transport::http::origin::check_origin;
use crate::transport::http::refusal::{Refusal, refuse, rpc_error};
use crate::transport::http::session_id::{RequestIds, SessionIds, new_session_id};
use crate::transport::http::streams::resume::{self, Streams, Tap};
use crate::transport::http::streams::sse::Held;

/// One session of the HTTP transport: the protocol session and where its messages go.
pub(super) struct HttpSession {
    pub(super) session: Arc<Session>,
    pub(super) routes: Mutex<Routes>,
    last_seen: Mutex<Instant>,
    /// When the session's record in the shared state was last renewed (replicas).
    last_shared: Mutex<Instant>,
    /// The credentials that opened the session: it is their principal's (their subject
    /// through their client), whatever scopes that principal's later tokens grant.
    pub(super) identity: Option<Identity>,
    /// Who the session's resumable streams belong to (a digest of its id and principal).
    pub(super) owner: String,
    /// The client whose share of sessions this one counts in (its subject, else its
    /// address), when known.
    pub(super) client: Option<Arc<str>>,
}

/// Whether a request came over a Unix socket (as its extensions are marked).
pub(super) fn on_local_socket(parts: &Parts) -> bool {
    Source::local(Source::marked(&parts.extensions))
}

/// The client a request from `source` counts for in per-client shares: its subject when it
/// carries credentials, else the address it comes from (unknown when served without the
/// accept loop), or `local` over a Unix socket.
pub(super) fn client_of(identity: Option<&Identity>, source: Option<Source>) -> Option<Arc<str>> {
    client_share(
        identity.map(|i| i.subject.as_str()),
        Source::address(source),
    )
    .or_else(|| Source::local(source).then(|| "local".to_owned()))
    .map(Into::into)
}

/// The address a request comes from, when `serve_http`'s accept loop told it (as its
/// extensions are marked).
pub(super) fn peer_address(parts: &Parts) -> Option<std::net::IpAddr> {
    Source::address(Source::marked(&parts.extensions))
}

#[derive(Default)]
pub(super) struct Routes {
    /// Where the messages of each request in flight go, by request id (JSON text).
    pub(super) requests: HashMap<Arc<str>, RequestRoute, RequestIds>,
    /// The GET stream, for messages that belong to no request.
    pub(super) standalone: Option<mpsc::UnboundedSender<Outgoing>>,
    /// The GET stream's writer, when it is resumable.
    pub(super) standalone_tap: Option<Arc<Tap>>,
}

/// Where the messages of one request in flight go.
pub(super) enum RequestRoute {
    /// Kept here until its POST handler takes them, right after the request is dispatched:
    /// a call answered at once (most are) is answered without a channel.
    Held(Held),
    /// The stream its POST handler answers from.
    Open(mpsc::UnboundedSender<Outgoing>),
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

impl Routes {
    /// Whether a client is connected to the GET stream.
    pub(super) fn standalone_open(&self) -> bool {
        match &self.standalone_tap {
            Some(tap) => tap.connected(),
            None => self.standalone.as_ref().is_some_and(|s| !s.is_closed()),
        }
    }
}

/// The endpoint's shared state.
pub(super) struct Endpoint {
    pub(super) server: ServerHandle,
    pub(super) config: HttpConfig,
    /// By id (hashed by [`SessionIds`]: every id in the map is random).
    pub(super) sessions: Mutex<HashMap<String, Arc<HttpSession>, SessionIds>>,
    pub(super) shutting_down: AtomicBool,
    pub(super) shutdown: watch::Sender<bool>,
    /// The resumable SSE streams.
    pub(super) streams: Arc<Streams>,
}

impl Endpoint {
    /// The endpoint's shared state; a stateful endpoint also starts dropping idle sessions
    /// and sharing its sessions with the other replicas.
    pub(super) fn start(server: ServerHandle, config: HttpConfig) -> Arc<Endpoint> {
        let (shutdown, _) = watch::channel(false);
        let endpoint = Arc::new(Endpoint {
            server,
            config: config.clone(),
            sessions: Mutex::new(HashMap::default()),
            shutting_down: AtomicBool::new(false),
            shutdown,
            streams: Arc::new(Streams::new(config.event_store.clone(), config.sse_retry)),
        });
        if !config.sessionless {
            spawn_reaper(&endpoint);
            let server = &endpoint.server;
            server.start_replicas(endpoint.config.session_idle);
        }
        endpoint
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
                // A session other replicas share may live on there; one only here ends.
                if s.session.shared_name().is_some() {
                    s.session.close();
                } else {
                    s.session.finish();
                }
            }
        }
    });
}

/// Where a server gives the nonce a client's next DPoP proof must carry (RFC 9449 §9).
const DPOP_NONCE: HeaderName = HeaderName::from_static("dpop-nonce");

impl Endpoint {
    /// The `WWW-Authenticate` challenge: `Bearer`, `DPoP` (RFC 9449 §7.1) or both, as the
    /// authenticator takes them, the error on the scheme the request used.
    fn challenge(&self, error: &AuthError) -> Response {
        if let Some(retry) = error.unavailable {
            // The fault is ours: no challenge, the client should come back.
            let mut response = rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                code::INTERNAL_ERROR,
                &format!("Service Unavailable: {}", error.description),
            );
            let seconds = retry.as_secs().max(1);
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
            return response;
        }
        let described = error.code.map(|code| {
            format!(
                ", error=\"{code}\", error_description=\"{}\"",
                error.description.replace(['"', '\\'], "'")
            )
        });
        let mut response = rpc_error(
            StatusCode::UNAUTHORIZED,
            code::INVALID_REQUEST,
            &format!("Unauthorized: {}", error.description),
        );
        let (bearer, dpop) = self.schemes();
        let headers = response.headers_mut();
        if bearer {
            let mut value = String::from("Bearer realm=\"mcp\"");
            if !error.is_dpop() {
                value.push_str(described.as_deref().unwrap_or_default());
            }
            self.name_initial_scopes(&mut value);
            self.name_metadata(&mut value);
            if let Ok(v) = HeaderValue::from_str(&value) {
                headers.append(header::WWW_AUTHENTICATE, v);
            }
        }
        if dpop || error.is_dpop() {
            let mut value = format!("DPoP algs=\"{DPOP_ALGORITHMS}\"");
            if error.is_dpop() {
                value.push_str(described.as_deref().unwrap_or_default());
            }
            self.name_initial_scopes(&mut value);
            self.name_metadata(&mut value);
            if let Ok(v) = HeaderValue::from_str(&value) {
                headers.append(header::WWW_AUTHENTICATE, v);
            }
        }
        if let Some(nonce) = error.dpop_nonce()
            && let Ok(v) = HeaderValue::from_str(nonce)
        {
            headers.insert(DPOP_NONCE, v);
        }
        response
    }

    /// Which schemes the challenges offer: `Bearer`, `DPoP`.
    fn schemes(&self) -> (bool, bool) {
        match self.config.auth.as_ref().map(|a| a.dpop_mode()) {
            Some(DpopMode::Required) => (false, true),
            Some(DpopMode::Allowed) => (true, true),
            _ => (true, false),
        }
    }

    /// Appends the `resource_metadata` parameter of a challenge, when there is metadata.
    fn name_metadata(&self, challenge: &mut String) {
        if let Some(meta) = &self.config.resource_metadata {
            let (origin, path) = split_url(&meta.resource);
            challenge.push_str(&format!(
                ", resource_metadata=\"{origin}/.well-known/oauth-protected-resource{path}\""
            ));
        }
    }

    /// Appends the `scope` parameter of a `401` challenge (RFC 6750 §3), when the endpoint
    /// has metadata: the scopes a client may start with, configured or those the read-only
    /// tools declare (the catalog may change), none when there are none.
    fn name_initial_scopes(&self, challenge: &mut String) {
        if self.config.resource_metadata.is_none() {
            return;
        }
        let scopes = match &self.config.initial_scopes {
            Some(scopes) => scope_value(scopes),
            None => scope_value(&self.server.catalog().reading_scopes()),
        };
        if !scopes.is_empty() {
            challenge.push_str(&format!(", scope=\"{scopes}\""));
        }
    }

    /// The step-up challenge (403, `insufficient_scope`) of request `id`, whose token lacks
    /// some of the scopes the request needs: it names all of them, and answers the request
    /// with the JSON-RPC error a call gets for it.
    pub(super) fn scope_challenge(
        &self,
        id: &str,
        error: &RpcError,
        needed: &[String],
    ) -> Response {
        let scope = scope_value(needed);
        let (bearer, dpop) = self.schemes();
        let values = [("Bearer", bearer), ("DPoP", dpop)].map(|(scheme, offered)| {
            offered.then(|| {
                let mut value = format!(
                    "{scheme} error=\"insufficient_scope\", scope=\"{scope}\", error_description=\"the request needs the scopes {scope}\""
                );
                if scheme == "DPoP" {
                    value.push_str(&format!(", algs=\"{DPOP_ALGORITHMS}\""));
                }
                self.name_metadata(&mut value);
                value
            })
        });
        let body = jsonrpc::error_response(id, error);
        let mut response = (
            StatusCode::FORBIDDEN,
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response();
        for value in values.into_iter().flatten() {
            if let Ok(v) = HeaderValue::from_str(&value) {
                response.headers_mut().append(header::WWW_AUTHENTICATE, v);
            }
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

    /// The checks every method of the endpoint shares: one value for each header that routes
    /// or authenticates the request, Host/Origin, credentials.
    pub(super) async fn admit(&self, parts: &Parts) -> Result<Option<Identity>, Refusal> {
        self.admit_with(parts, &Head::of(&parts.headers)).await
    }

    /// [`admit`](Self::admit), with the request's `head` read already.
    pub(super) async fn admit_with(
        &self,
        parts: &Parts,
        head: &Head<'_>,
    ) -> Result<Option<Identity>, Refusal> {
        check_single_headers(&parts.headers)?;
        check_origin(&self.config, head.host, head.origin)?;
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
        if self.config.sessionless {
            return Err(Box::new(method_not_allowed(method)));
        }
        self.session_anywhere(parts, identity.as_ref()).await
    }

    /// [`session`](Self::session), taking up from the shared state a session this replica
    /// does not hold, when the replicas share sessions.
    pub(super) async fn session_anywhere(
        &self,
        parts: &Parts,
        identity: Option<&Identity>,
    ) -> Result<Arc<HttpSession>, Refusal> {
        self.session_named(parts.headers.get(&SESSION_HEADER), identity)
            .await
    }

    /// [`session_anywhere`](Self::session_anywhere) of the session `id` names (the request's
    /// `Mcp-Session-Id`, if it sent one).
    pub(super) async fn session_named(
        &self,
        id: Option<&HeaderValue>,
        identity: Option<&Identity>,
    ) -> Result<Arc<HttpSession>, Refusal> {
        let Some(id) = id else {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                code::INVALID_REQUEST,
                "Bad Request: Mcp-Session-Id header is required",
            ));
        };
        let id = id.to_str().unwrap_or("");
        let mut session = lock(&self.sessions).get(id).cloned();
        if session.is_none() && !id.is_empty() {
            session = match self.take_up(id, identity).await {
                Some(s) => Some(s),
                None => lock(&self.sessions).get(id).cloned(),
            };
        }
        self.session(id, session, identity)
    }

    /// The session a request names (`session`: the one held by its id), checking that it
    /// still exists and belongs to the principal whose credentials the request carries (the
    /// same subject through the same client: a token stepped up for more scopes is accepted,
    /// and each request is granted its own token's scopes).
    fn session(
        &self,
        id: &str,
        mut session: Option<Arc<HttpSession>>,
        identity: Option<&Identity>,
    ) -> Result<Arc<HttpSession>, Refusal> {
        if session.as_ref().is_some_and(|s| s.session.ended()) {
            // Ended by its client on another replica.
            lock(&self.sessions).remove(id);
            session = None;
        }
        match session {
            Some(s) if same_principal(s.identity.as_ref(), identity) => {
                s.touch();
                self.renew_shared(&s);
                Ok(s)
            }
            Some(_) => Err(refuse(
                StatusCode::FORBIDDEN,
                code::INVALID_REQUEST,
                "Forbidden: the session belongs to another principal (subject or client)",
            )),
            None => Err(refuse(
                StatusCode::NOT_FOUND,
                code::INVALID_REQUEST,
                "Session not found (it ended or expired): initialize a new one",
            )),
        }
    }

    /// A session another replica opened, from its record in the shared state (`None`: no
    /// such session, or it belongs to another principal).
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
        if !record.belongs_to(identity) {
            return None;
        }
        let http = self.open_session(id.to_owned(), identity.cloned(), None, None, false);
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
    pub(super) fn new_session(
        &self,
        identity: Option<Identity>,
        client: Option<Arc<str>>,
        address: Option<std::net::IpAddr>,
        local: bool,
    ) -> Option<(String, Arc<HttpSession>)> {
        let id = new_session_id()?;
        let http = self.open_session(id.clone(), identity, client, address, local);
        if self.server.shared.replicas.shared() {
            // The session's random name (it owns the tasks of a client without credentials)
            // is made now, so that its first record carries it: a replica that took the
            // session up before the name was needed would make a name of its own, and not
            // find the session's tasks.
            http.session.nonce();
        }
        Some((id, http))
    }

    /// The HTTP side and the protocol session of session `id`.
    fn open_session(
        &self,
        id: String,
        identity: Option<Identity>,
        client: Option<Arc<str>>,
        address: Option<std::net::IpAddr>,
        local: bool,
    ) -> Arc<HttpSession> {
        let owner = resume::owner_of(&id, identity.as_ref());
        Arc::new_cyclic(|me: &Weak<HttpSession>| {
            let to: Weak<dyn Deliver> = me.clone();
            let session = Session::open(
                &self.server,
                crate::server::core::session::Outbound::Routed(to),
                Opening {
                    principal: principal_of(identity.as_ref(), local),
                    identity: identity.clone(),
                    one_shot: None,
                    shared_name: Some(id.into()),
                    address,
                },
            );
            HttpSession {
                session,
                routes: Mutex::new(Routes::default()),
                last_seen: Mutex::new(Instant::now()),
                last_shared: Mutex::new(Instant::now()),
                identity,
                owner,
                client,
            }
        })
    }
}

impl Deliver for HttpSession {
    /// Puts a message on the stream it belongs to: its request's, else the GET stream.
    fn deliver(&self, message: Outgoing) {
        let mut routes = lock(&self.routes);
        if let Some(related) = message.related.clone()
            && let Some(route) = routes.requests.get_mut(&related)
        {
            let done = message.is_response;
            match route {
                RequestRoute::Held(held) => held.push(message),
                RequestRoute::Open(stream) => {
                    if stream.send(message).is_err() || done {
                        routes.requests.remove(&related);
                    }
                }
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
pub(super) fn split_url(url: &str) -> (&str, &str) {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(i) => url.split_at(after_scheme + i),
        None => (url, ""),
    }
}

/// Whether a session opened with `opened`'s credentials belongs to the principal of a
/// request carrying `request`'s: both anonymous, or the same subject through the same client
/// (their scopes may differ).
fn same_principal(opened: Option<&Identity>, request: Option<&Identity>) -> bool {
    match (opened, request) {
        (None, None) => true,
        (Some(a), Some(b)) => a.same_principal(b),
        _ => false,
    }
}

/// Who a request comes from, for what outlives it: its subject; else, over a Unix socket
/// (`local`), the one local principal; else no one known.
pub(super) fn principal_of(identity: Option<&Identity>, local: bool) -> Principal {
    match identity {
        Some(i) => Principal::Subject(i.subject.clone()),
        None if local => Principal::Local,
        None => Principal::Anonymous,
    }
}

fn method_not_allowed(method: &str) -> Response {
    let mut r = rpc_error(
        StatusCode::METHOD_NOT_ALLOWED,
        code::INVALID_REQUEST,
        &format!("Method Not Allowed: {method} is not supported by a sessionless server"),
    );
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    r
}

/// The headers that route, version or authenticate a request: each must come once. With two
/// (`Authorization: Bearer alice` and `Authorization: Bearer bob`), what is checked here and
/// what a balancer in front routes on could differ (the first value, the last), so the
/// request is refused instead of one being picked.
const SINGLE_HEADERS: [&str; 6] = [
    "authorization",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "mcp-session-id",
    "last-event-id",
];

/// 400 for a request that repeats one of [`SINGLE_HEADERS`] or an `Mcp-Param-*` header.
fn check_single_headers(headers: &HeaderMap) -> Result<(), Refusal> {
    if headers.keys_len() == headers.len() {
        // No header comes twice.
        return Ok(());
    }
    for name in headers.keys() {
        let routed =
            SINGLE_HEADERS.contains(&name.as_str()) || name.as_str().starts_with("mcp-param-");
        if routed && headers.get_all(name).iter().nth(1).is_some() {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                code::INVALID_REQUEST,
                &format!("Bad Request: the `{name}` header is sent more than once"),
            ));
        }
    }
    Ok(())
}

/// Scopes as a challenge's `scope` value: separated by spaces, each a scope token as RFC 6749
/// §3.3 allows (`NQCHAR`s: no space, quote or backslash), so that the header stays valid; a
/// scope that is no token is left out.
pub(crate) fn scope_value(scopes: &[String]) -> String {
    let token = |s: &&String| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b))
    };
    scopes
        .iter()
        .filter(token)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ")
}
