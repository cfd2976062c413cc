//! One connection's protocol state — the negotiated version and client, the calls in flight,
//! the requests made of the client, the log level, the tool selection, the subscriptions — and
//! the narrow interface the transports drive it through: a session is opened with an
//! [`Outbound`] for its messages, is handed each incoming message (`dispatch`), and is closed.
//!
//! The session is the [`Connection`] of the calls it runs.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::protocol::jsonrpc::Reply;
use crate::protocol::lines::Outbox;
use crate::protocol::wire::Empty;
use crate::protocol::{LogLevel, ProtocolVersion, RpcError, code, jsonrpc};
use crate::sync::lock;
use crate::tool::context::{Answer, Connection};
use crate::tool::{Batch, CancellationToken, ClientInfo, Identity};

use crate::server::core::handle::ServerHandle;
use crate::server::offerings::selection::Selector;
use crate::server::replicas::{Event, SelectionWire, SessionRecord};

/// One outgoing message (JSON text, no newline) and the request it belongs to, so a
/// transport that routes (HTTP) can put it on that request's stream.
#[derive(Debug)]
#[cfg_attr(not(feature = "http"), allow(dead_code))] // stdio writes every message in order
pub(crate) struct Outgoing {
    pub(crate) text: String,
    /// The canonical id of the client request this message belongs to (a response on stdio,
    /// which routes nothing, goes without it).
    pub(crate) related: Option<Arc<str>>,
    /// Whether this is the response to `related` (its stream ends with it). An empty `text`
    /// with `is_response` ends a cancelled request's stream without a response.
    pub(crate) is_response: bool,
    /// The code of the error the response carries, if it is one.
    pub(crate) error: Option<i64>,
}

/// Where a session's outgoing messages go: a channel to the one stream of a connection
/// (one-shot sessions), the lines of a connection's one stream (stdio), or a transport that
/// puts each message on its stream at once (HTTP sessions, whose messages belong to different
/// requests' streams).
#[cfg_attr(not(feature = "http"), allow(dead_code))] // only HTTP routes
pub(crate) enum Outbound {
    Channel(mpsc::UnboundedSender<Outgoing>),
    /// Each message a line of the buffer the connection's writer takes whole, its bytes
    /// counted so the reader can stop while the writer is behind (stdio). The writer ends
    /// once this is dropped and the buffer written.
    Lines(Arc<Outbox>),
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
            Outbound::Lines(lines) => lines.push(&message.text),
            Outbound::Routed(to) => {
                if let Some(to) = to.upgrade() {
                    to.deliver(message);
                }
            }
        }
    }

    /// Whether the messages go to the streams of the requests they belong to, and so need
    /// a request's key: not on stdio, whose writer puts every message on its one stream.
    fn routes(&self) -> bool {
        !matches!(self, Outbound::Lines(..))
    }

    pub(crate) fn is_closed(&self) -> bool {
        match self {
            Outbound::Channel(tx) => tx.is_closed(),
            Outbound::Lines(lines) => lines.is_refused(),
            Outbound::Routed(to) => to.strong_count() == 0,
        }
    }
}

impl Drop for Outbound {
    fn drop(&mut self) {
        if let Outbound::Lines(lines) = self {
            lines.end();
        }
    }
}

impl From<mpsc::UnboundedSender<Outgoing>> for Outbound {
    fn from(tx: mpsc::UnboundedSender<Outgoing>) -> Self {
        Outbound::Channel(tx)
    }
}

use crate::server::core::listen::Audience;
pub(crate) use crate::server::offerings::selection::Principal;

/// How a session is opened.
#[derive(Default)]
pub(crate) struct Opening {
    /// The credentials the session is opened with (HTTP with an authenticator): whose it
    /// is, and what a request that brings none of its own is granted.
    pub(crate) identity: Option<Identity>,
    /// Who is on the other end, for state that outlives a stateless request.
    pub(crate) principal: Principal,
    /// A session for one message (a 2026-07-28 request, sessionless HTTP, an in-process
    /// call), at this version: it makes no requests of the client and is not told of catalog
    /// changes.
    pub(crate) one_shot: Option<ProtocolVersion>,
    /// The session's id among replicas (HTTP sessions of a server sharing them): its record
    /// is kept in the shared state under it.
    pub(crate) shared_name: Option<Arc<str>>,
    /// The address an anonymous request comes from (its share of tasks), when the transport
    /// knows it.
    pub(crate) address: Option<std::net::IpAddr>,
}

/// Who a client counts as in per-client shares: its subject, else the address it comes from
/// (`None`: neither is known).
pub(crate) fn client_share(
    subject: Option<&str>,
    address: Option<std::net::IpAddr>,
) -> Option<String> {
    match (subject, address) {
        (Some(subject), _) => Some(format!("subject {subject}")),
        (None, Some(address)) => Some(format!("address {address}")),
        (None, None) => None,
    }
}

/// A call in flight: how to stop it.
pub(crate) struct InFlight {
    pub(crate) abort: tokio::task::AbortHandle,
    pub(crate) cancel: CancellationToken,
}

/// One connection's protocol state.
pub(crate) struct Session {
    pub(crate) server: ServerHandle,
    /// The key in the server's list of live sessions (`None`: a one-shot session).
    live: Option<u64>,
    out: Outbound,
    client: RwLock<Arc<ClientInfo>>,
    pub(crate) in_flight: Mutex<HashMap<Arc<str>, InFlight>>,
    next_request: AtomicU64,
    pending: Mutex<HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>>,
    /// The client's minimum log level; `u8::MAX` until it sets one (then everything is sent).
    pub(crate) log_level: AtomicU8,
    pub(crate) selector: Selector,
    /// The credentials the session was opened with: whose it is (a subject through a
    /// client, [`Identity::same_principal`]), and what its requests are granted when they
    /// bring no credentials of their own (a one-shot session's request, stdio). A request of
    /// an HTTP session brings its own, and is granted what they grant
    /// ([`Cx::identity`](crate::server::core::request::Cx::identity)).
    pub(crate) identity: Option<Arc<Identity>>,
    pub(crate) principal: Principal,
    /// See [`Opening::address`].
    pub(crate) address: Option<std::net::IpAddr>,
    /// Whether the client initialized the session (2025-11-25): only then is it sent
    /// notifications it did not ask for (`list_changed`).
    pub(crate) initialized: AtomicBool,
    /// The resource URIs the client subscribed to.
    pub(crate) subscriptions: Mutex<HashSet<String>>,
    /// A random name for the session, made when first needed (it owns the tasks of an
    /// unauthenticated 2025 session).
    nonce: std::sync::OnceLock<String>,
    /// The client's input ended: no request of ours can be answered any more.
    deaf: AtomicBool,
    /// The session's id among replicas, if they share it.
    shared_name: Option<Arc<str>>,
    /// The client ended the session on another replica.
    ended: AtomicBool,
    /// The session as the connection of its stateless requests' calls (made by
    /// `Cx::connection` on first use, and kept: one per session, not one per call).
    pub(crate) as_principal: std::sync::OnceLock<Arc<dyn Connection>>,
}

impl Session {
    /// Opens a session of `server` whose outgoing messages go to `out`.
    pub(crate) fn open(
        server: &ServerHandle,
        out: impl Into<Outbound>,
        opening: Opening,
    ) -> Arc<Session> {
        let client = ClientInfo {
            protocol_version: opening.one_shot.unwrap_or_default(),
            ..ClientInfo::default()
        };
        let live = opening.one_shot.is_none();
        let shared_name = opening
            .shared_name
            .filter(|_| server.shared.replicas.shared());
        // A session other replicas may serve too numbers its requests from a random start,
        // so that the ids of two replicas' requests do not meet.
        let first_request = if shared_name.is_some() {
            let mut bytes = [0u8; 4];
            let _ = getrandom::fill(&mut bytes);
            u64::from(u32::from_le_bytes(bytes) >> 1) << 16 | 1
        } else {
            1
        };
        Arc::new_cyclic(|me: &Weak<Session>| Session {
            server: server.clone(),
            live: live.then(|| server.shared.sessions.add(me.clone())),
            out: out.into(),
            client: RwLock::new(Arc::new(client)),
            in_flight: Mutex::new(HashMap::new()),
            next_request: AtomicU64::new(first_request),
            pending: Mutex::new(HashMap::new()),
            log_level: AtomicU8::new(u8::MAX),
            selector: Selector::starting_at(server.shared.selection()),
            identity: opening.identity.map(Arc::new),
            principal: opening.principal,
            address: opening.address,
            initialized: AtomicBool::new(false),
            subscriptions: Mutex::new(HashSet::new()),
            nonce: std::sync::OnceLock::new(),
            deaf: AtomicBool::new(false),
            shared_name,
            ended: AtomicBool::new(false),
            as_principal: std::sync::OnceLock::new(),
        })
    }

    /// The session's random name.
    pub(crate) fn nonce(&self) -> &str {
        let mut made = false;
        let nonce = self.nonce.get_or_init(|| {
            made = true;
            crate::server::state::new_id()
        });
        if made {
            self.persist();
        }
        nonce
    }

    /// The session's id among replicas, if they share it.
    pub(crate) fn shared_name(&self) -> Option<&Arc<str>> {
        self.shared_name.as_ref()
    }

    /// Whether the client ended the session on another replica.
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // HTTP sessions are shared
    pub(crate) fn ended(&self) -> bool {
        self.ended.load(Ordering::Relaxed)
    }

    /// Ends a session the client ended on another replica: its calls stop, and its transport
    /// answers 404 from now on.
    pub(crate) fn end_here(&self) {
        self.ended.store(true, Ordering::Relaxed);
        self.close();
    }

    /// What another replica needs to serve this session.
    pub(crate) fn record(&self) -> SessionRecord {
        let client = self.client();
        SessionRecord {
            protocol_version: client.protocol_version.as_str().to_owned(),
            client_info: client.info.clone(),
            capabilities: client.capabilities.clone(),
            log_level: self.log_level.load(Ordering::Relaxed),
            selection: SelectionWire::from(&self.selector.read().to_batch()),
            subscriptions: lock(&self.subscriptions).iter().cloned().collect(),
            subject: self.identity.as_ref().map(|i| i.subject.clone()),
            client_id: self.identity.as_ref().map(|i| i.client_id.clone()),
            nonce: self.nonce.get().cloned(),
        }
    }

    /// Takes up a session another replica opened, from its record.
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // HTTP sessions are shared
    pub(crate) fn restore(&self, record: SessionRecord) {
        self.set_client(ClientInfo {
            protocol_version: ProtocolVersion::parse(&record.protocol_version).unwrap_or_default(),
            info: record.client_info,
            capabilities: record.capabilities,
        });
        self.log_level.store(record.log_level, Ordering::Relaxed);
        let mut selection = crate::server::offerings::selection::Selection::default();
        selection.apply(&Batch::from(record.selection));
        self.selector.replace(selection);
        *lock(&self.subscriptions) = record.subscriptions.into_iter().collect();
        if let Some(nonce) = record.nonce {
            let _ = self.nonce.set(nonce);
        }
        self.initialized.store(true, Ordering::Relaxed);
    }

    /// Saves the session's record for the other replicas (after a change), if they share it.
    pub(crate) fn persist(&self) {
        if let Some(name) = &self.shared_name
            && self.initialized.load(Ordering::Relaxed)
            && let Ok(record) = serde_json::to_string(&self.record())
        {
            self.server.shared.replicas.save(name, record);
        }
    }

    /// Whether the session is one of the server's live sessions (a connection), not a
    /// session for one message.
    pub(crate) fn live(&self) -> bool {
        self.live.is_some()
    }

    /// Whether the connection's output is gone (the client left).
    pub(crate) fn out_closed(&self) -> bool {
        self.out.is_closed()
    }

    /// Completes when the connection's output is gone: for a one-shot session, when its
    /// response stream was dropped.
    pub(crate) async fn out_gone(&self) {
        match &self.out {
            Outbound::Channel(tx) => tx.closed().await,
            Outbound::Lines(lines) => lines.refused().await,
            Outbound::Routed(to) => {
                while to.strong_count() > 0 {
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                }
            }
        }
    }

    /// Whether the session can carry requests to the client and their answers back.
    fn can_request(&self) -> bool {
        self.live.is_some() && !self.out.is_closed() && !self.deaf.load(Ordering::Relaxed)
    }

    pub(crate) fn emit(&self, text: String, related: Option<&Arc<str>>, is_response: bool) {
        self.out.send(Outgoing {
            text,
            related: related.cloned(),
            is_response,
            error: None,
        });
    }

    /// Sends the response to the request whose canonical id is `related`.
    pub(crate) fn emit_reply(&self, reply: Reply, related: &Arc<str>) {
        self.out.send(Outgoing {
            text: reply.text,
            related: Some(related.clone()),
            is_response: true,
            error: reply.error.map(|e| e.code),
        });
    }

    /// Sends a message that belongs to no request.
    pub(crate) fn send(&self, text: String) {
        self.emit(text, None, false);
    }

    /// Sends the response to the request whose id is `id` (JSON text as received). Its key
    /// is computed only for an outbound that routes by it.
    pub(crate) fn respond(&self, id: &str, reply: Reply) {
        self.respond_as(|| jsonrpc::id_key(id), reply);
    }

    /// [`Session::respond`] to the request whose key `key` gives, if asked.
    pub(crate) fn respond_as(&self, key: impl FnOnce() -> Arc<str>, reply: Reply) {
        self.out.send(Outgoing {
            text: reply.text,
            related: self.out.routes().then(key),
            is_response: true,
            error: reply.error.map(|e| e.code),
        });
    }

    /// Sends a notification that belongs to no request.
    pub(crate) fn notify<P: serde::Serialize>(&self, method: &str, params: &P) {
        self.send(jsonrpc::notification(method, params));
    }

    pub(crate) fn client(&self) -> Arc<ClientInfo> {
        crate::sync::read(&self.client).clone()
    }

    pub(crate) fn set_client(&self, client: ClientInfo) {
        *crate::sync::write(&self.client) = Arc::new(client);
    }

    /// Changes the tool selection; tells the client when the list changed.
    pub(crate) fn apply_tools(
        &self,
        related: Option<&Arc<str>>,
        batch: &Batch,
    ) -> Result<Vec<String>, String> {
        let (active, changed) = self.selector.apply(&self.server.catalog(), batch)?;
        self.persist();
        if changed {
            self.tell("notifications/tools/list_changed", related);
        }
        Ok(active)
    }

    /// Sends a notification the client did not ask for (`…/list_changed`), on the stream of
    /// `related` if given — only once the client initialized the session: a client that never
    /// did (2026-07-28, or one still in its handshake) hears of changes through
    /// `subscriptions/listen` alone.
    pub(crate) fn tell(&self, method: &str, related: Option<&Arc<str>>) {
        if self.initialized.load(Ordering::Relaxed) {
            self.emit(jsonrpc::notification(method, &Empty {}), related, false);
        }
    }

    /// Fails every request made of the client that is still unanswered (its input ended:
    /// no answer can come), so the calls waiting for them go on at once.
    pub(crate) fn fail_pending(&self, why: &str) {
        self.deaf.store(true, Ordering::Relaxed);
        for (_, waiter) in lock(&self.pending).drain() {
            let _ = waiter.send(Err(RpcError::new(code::INTERNAL_ERROR, why)));
        }
    }

    /// Delivers the client's answer to a request we made — or, for a session the replicas
    /// share, to the replica that made it.
    pub(crate) fn answered(&self, id: u64, answer: Result<Value, RpcError>) -> bool {
        if let Some(name) = &self.shared_name
            && !lock(&self.pending).contains_key(&id)
        {
            let (result, error) = match answer {
                Ok(v) => (Some(v), None),
                Err(e) => (None, Some(e)),
            };
            self.server.shared.replicas.publish(Event::Answer {
                session: name.to_string(),
                id,
                result,
                error,
            });
            return true;
        }
        self.answered_here(id, answer)
    }

    /// Delivers the client's answer to a request this replica made.
    pub(crate) fn answered_here(&self, id: u64, answer: Result<Value, RpcError>) -> bool {
        match lock(&self.pending).remove(&id) {
            Some(waiter) => {
                let _ = waiter.send(answer);
                true
            }
            None => false,
        }
    }

    /// Who the session's client counts as in per-client shares (listen streams, held gateway
    /// calls): its subject, else the address it comes from, else the session itself.
    pub(crate) fn share_key(&self) -> String {
        let subject = match &self.principal {
            Principal::Subject(subject) => Some(subject.as_str()),
            Principal::Local => return "local".to_owned(),
            Principal::Anonymous => None,
        };
        client_share(subject, self.address).unwrap_or_else(|| format!("session {}", self.nonce()))
    }

    /// Ends the session for good (the client ended it, or it expired where no other replica
    /// serves it): it closes, and the tasks of a client without credentials, which only this
    /// session could see, are dropped with it.
    pub(crate) fn finish(&self) {
        self.close();
        if self.principal == Principal::Anonymous
            && let Some(nonce) = self.nonce.get()
        {
            let owner = crate::server::tasks::session_owner(nonce);
            let server = self.server.clone();
            tokio::spawn(async move { server.shared.tasks.forget_owner(&owner).await });
        }
    }

    /// Cancels every call still in flight and ends its listen streams (the connection is
    /// closing).
    pub(crate) fn close(&self) {
        self.server.shared.listeners.drop_session(self);
        for (_, call) in lock(&self.in_flight).drain() {
            call.cancel.cancel();
            call.abort.abort();
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(key) = self.live {
            self.server.shared.sessions.remove(key);
        }
    }
}

impl Audience for Session {
    fn principal(&self) -> &Principal {
        &self.principal
    }

    fn emit(&self, text: String, related: Option<&Arc<str>>, is_response: bool) {
        Session::emit(self, text, related, is_response);
    }

    fn out_closed(&self) -> bool {
        Session::out_closed(self)
    }
}

impl Connection for Session {
    fn send(&self, related: Option<&Arc<str>>, message: String) {
        self.emit(message, related, false);
    }

    fn request<'a>(
        &'a self,
        related: Option<&'a Arc<str>>,
        method: &'a str,
        params: String,
    ) -> Answer<'a> {
        Box::pin(async move {
            if !self.can_request() {
                return Err(RpcError::new(
                    code::INTERNAL_ERROR,
                    "this connection cannot carry requests to the client (sessionless or in-process)",
                ));
            }
            let id = self.next_request.fetch_add(1, Ordering::Relaxed);
            let (tx, rx) = oneshot::channel();
            lock(&self.pending).insert(id, tx);
            // Forget the request if the waiting call is dropped (cancelled) first.
            let _forget = Forget { session: self, id };
            let params = serde_json::value::RawValue::from_string(params).map_err(|e| {
                RpcError::new(code::INTERNAL_ERROR, format!("bad request params: {e}"))
            })?;
            self.emit(jsonrpc::request(id, method, &params), related, false);
            let wait = self.server.shared.limits.client_wait;
            match tokio::time::timeout(wait, rx).await {
                Ok(Ok(answer)) => answer,
                Ok(Err(_)) => Err(RpcError::new(
                    code::INTERNAL_ERROR,
                    "the connection closed before the client answered",
                )),
                Err(_) => Err(RpcError::new(
                    code::INTERNAL_ERROR,
                    format!(
                        "the client did not answer `{method}` within {} s",
                        wait.as_secs_f64()
                    ),
                )),
            }
        })
    }

    fn logs(&self, level: LogLevel) -> bool {
        let min = self.log_level.load(Ordering::Relaxed);
        min == u8::MAX || level as u8 >= min
    }

    fn change_tools(
        &self,
        related: Option<&Arc<str>>,
        batch: &Batch,
    ) -> Result<Vec<String>, String> {
        self.apply_tools(related, batch)
    }

    fn active_tools(&self) -> Vec<String> {
        self.selector.active(&self.server.catalog())
    }

    fn server(&self) -> &ServerHandle {
        &self.server
    }

    fn share_key(&self) -> String {
        Session::share_key(self)
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

/// The live sessions of a server, to tell them of changes. Adding and removing are O(1): a
/// session removes itself when it is dropped.
#[derive(Default)]
pub(crate) struct Sessions {
    next: AtomicU64,
    live: Mutex<HashMap<u64, Weak<Session>>>,
}

impl Sessions {
    fn add(&self, session: Weak<Session>) -> u64 {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        lock(&self.live).insert(key, session);
        key
    }

    fn remove(&self, key: u64) {
        lock(&self.live).remove(&key);
    }

    /// Every live session.
    pub(crate) fn all(&self) -> Vec<Arc<Session>> {
        lock(&self.live)
            .values()
            .filter_map(Weak::upgrade)
            .collect()
    }
}
