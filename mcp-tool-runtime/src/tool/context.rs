//! The context of one call, [`Ctx`], and what a tool reaches through it: its client
//! ([`ClientInfo`], [`Identity`]), [`Progress`], cancellation, the [`Logger`] and the
//! [`ToolManager`].
//!
//! A call talks to its connection only through [`Connection`], which the server's session
//! implements: this module knows no session and no transport.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::protocol::wire::{LogParams, ProgressParams, number};
use crate::protocol::{LogLevel, ProtocolVersion, RpcError, jsonrpc};
use crate::sync::lock;

use crate::tool::call_meta::CallMeta;
pub(crate) use crate::tool::context_id::RelatedId;
use crate::tool::input::InputRound;

/// The answer to a request the server made of the client.
pub(crate) type Answer<'a> = Pin<Box<dyn Future<Output = Result<Value, RpcError>> + Send + 'a>>;

/// What a call may ask of the connection it arrived on. The server's session implements it;
/// messages are JSON text already, and `related` names the request they belong to (so a
/// transport that routes can put them on that request's stream).
pub(crate) trait Connection: Send + Sync {
    /// Sends a notification.
    fn send(&self, related: Option<&Arc<str>>, message: String);
    /// Sends a request to the client (`params` as JSON text) and waits for its answer.
    fn request<'a>(
        &'a self,
        related: Option<&'a Arc<str>>,
        method: &'a str,
        params: String,
    ) -> Answer<'a>;
    /// Asks the client for input (`elicitation/create`, `sampling/createMessage`,
    /// `roots/list`) under `key` when the tool named one: a request on the connection, unless
    /// the connection keeps input some other way (a task's).
    fn ask<'a>(
        &'a self,
        related: Option<&'a Arc<str>>,
        _key: Option<&'a str>,
        method: &'a str,
        params: String,
    ) -> Answer<'a> {
        self.request(related, method, params)
    }
    /// Whether a log message at `level` goes to the client.
    fn logs(&self, level: LogLevel) -> bool;
    /// Changes which tools the session sees; returns the active tools.
    fn change_tools(
        &self,
        related: Option<&Arc<str>>,
        batch: &Batch,
    ) -> Result<Vec<String>, String>;
    /// The active tools' names, in order.
    fn active_tools(&self) -> Vec<String>;
    /// The running server the connection belongs to.
    fn server(&self) -> &RunningServer;
    /// Who the client counts as in per-client shares: its subject, else its address, else
    /// the connection itself.
    #[cfg_attr(not(feature = "client"), allow(dead_code))] // held gateway calls
    fn share_key(&self) -> String;
}

/// The layer that serves calls, seen from this one: a port it fills with its own type
/// (`impl Serves for Host { type Server = ServerHandle; }`), so that a call reaches its
/// running server typed, while this layer imports nothing from the one above.
pub(crate) trait Serves {
    /// The running server's handle.
    type Server: Clone + Send + Sync + 'static;
}

/// The one implementor of [`Serves`]: the server layer above.
pub(crate) enum Host {}

/// The running server a connection belongs to.
pub(crate) type RunningServer = <Host as Serves>::Server;

/// What the client said about itself.
#[derive(Debug, Clone, Default)]
pub struct ClientInfo {
    /// The negotiated protocol version.
    pub protocol_version: ProtocolVersion,
    /// The client's `clientInfo` (name, version, …).
    pub info: Value,
    /// The client's `capabilities`.
    pub capabilities: Value,
}

impl ClientInfo {
    /// Whether the client declared a capability (`"sampling"`, `"elicitation"`, `"roots"`…).
    pub fn has_capability(&self, name: &str) -> bool {
        self.capabilities.get(name).is_some_and(|c| !c.is_null())
    }
}

/// Who made a request, as an authenticator established it (HTTP with auth).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Identity {
    /// The subject (user or client) the credentials belong to.
    pub subject: String,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// The OAuth client the access token was issued to (`client_id`, or `azp`), when known.
    pub client_id: Option<String>,
}

impl Identity {
    /// `subject`, granted `scopes`.
    pub fn new<S: Into<String>>(
        subject: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        Identity {
            subject: subject.into(),
            scopes: scopes.into_iter().map(Into::into).collect(),
            client_id: None,
        }
    }

    /// Whether `other` is the same principal: the same subject through the same client.
    /// What each may do (its scopes) is no part of who it is: a token stepped up for more
    /// scopes (RFC 6750 §3.1, `insufficient_scope`) stands for the same principal.
    pub(crate) fn same_principal(&self, other: &Identity) -> bool {
        self.subject == other.subject && self.client_id == other.client_id
    }
}

/// Everything about one call that does not change while it runs.
pub(crate) struct CallState {
    /// The JSON-RPC id as a value, read from `related` when a tool first asks for it (few do).
    pub(crate) id: std::sync::OnceLock<Value>,
    /// The id's canonical JSON text: what the call's own messages are routed by.
    pub(crate) related: RelatedId,
    pub(crate) tool: Arc<str>,
    /// The request's `_meta`, read into a map when a tool first asks for it.
    pub(crate) meta: CallMeta,
    pub(crate) client: Arc<ClientInfo>,
    pub(crate) identity: Option<Arc<Identity>>,
    pub(crate) conn: Arc<dyn Connection>,
    /// The call's cancellation token, made when first asked for: a call answered at once,
    /// that no one waits on and that never looks, needs none.
    pub(crate) cancel: std::sync::OnceLock<CancellationToken>,
    pub(crate) progress: ProgressState,
    /// Which log messages go to the client.
    pub(crate) log: LogPolicy,
    /// For a stateless (2026-07-28) request: the answers it came with and what it asks.
    pub(crate) input: Option<InputRound>,
    /// Once the call runs as a task: the task's connection, which replaces `conn` (and the
    /// input rounds).
    pub(crate) task: std::sync::OnceLock<Arc<dyn Connection>>,
}

impl CallState {
    /// The id's canonical JSON text: what the call's own messages are routed by.
    pub(crate) fn related(&self) -> &Arc<str> {
        self.related.get()
    }

    /// The call's cancellation token (made on first use).
    pub(crate) fn cancel(&self) -> &CancellationToken {
        self.cancel.get_or_init(CancellationToken::default)
    }

    /// Whether the call was cancelled (a token never made was never cancelled).
    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancel
            .get()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// The connection the call reaches its client through now.
    pub(crate) fn conn(&self) -> &Arc<dyn Connection> {
        self.task.get().unwrap_or(&self.conn)
    }
}

/// Which log messages of a call go to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogPolicy {
    /// As the session's `logging/setLevel` says (2025-11-25 and earlier).
    Session,
    /// As the request's `_meta` says: at and above this level, or none (2026-07-28).
    Request(Option<LogLevel>),
}

/// The context of the current call: its request (id, `_meta`, the tool), its client and the
/// negotiated protocol version, and what it can do on its connection — report progress, log,
/// notice cancellation, ask the client (sampling, elicitation), change the session's tools.
/// Take it as a parameter of any type: it is cheap to clone.
///
/// ```
/// use mcp_tool::prelude::*;
///
/// /// Count down, reporting each step.
/// #[tool]
/// async fn countdown(from: u32, ctx: Ctx) -> String {
///     for i in 0..from {
///         ctx.progress(f64::from(i + 1), f64::from(from), "counting");
///     }
///     format!("{} counted down from {from}", ctx.tool())
/// }
/// ```
#[derive(Clone)]
pub struct Ctx {
    pub(crate) state: Arc<CallState>,
}

impl fmt::Debug for Ctx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ctx")
            .field("id", self.id())
            .field("tool", &self.state.tool)
            .field("meta", &self.state.meta)
            .finish_non_exhaustive()
    }
}

impl Ctx {
    pub(crate) fn new(state: CallState) -> Self {
        Ctx {
            state: Arc::new(state),
        }
    }

    /// The JSON-RPC id of the request (a string or a number), as the client sent it.
    pub fn id(&self) -> &Value {
        let state = &self.state;
        state
            .id
            .get_or_init(|| serde_json::from_str(state.related()).unwrap_or(Value::Null))
    }

    /// The name of the tool being called.
    pub fn tool(&self) -> &str {
        &self.state.tool
    }

    /// The request's `_meta`, if it had one.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.state.meta.map()
    }

    /// The request's progress token, exactly as received (string or number).
    pub fn progress_token(&self) -> Option<&Value> {
        self.state.progress.token.as_ref()
    }

    /// The client and the negotiated protocol version.
    pub fn client(&self) -> &ClientInfo {
        &self.state.client
    }

    /// Who made the request, when an authenticator established it (HTTP).
    pub fn identity(&self) -> Option<&Identity> {
        self.state.identity.as_deref()
    }

    /// Who the call's client counts as in per-client shares (held gateway calls).
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn share_key(&self) -> String {
        self.state.conn().share_key()
    }

    /// The key of the calling user where something is kept per user (a gateway's per-user
    /// connections): `subject …` when authenticated, `local` over stdio, none for an
    /// anonymous HTTP caller.
    pub(crate) fn user_key(&self) -> Option<String> {
        crate::tool::definition::def::user_key(
            self.identity().map(|i| i.subject.as_str()),
            self.share_key() == "local",
        )
    }

    /// The negotiated protocol version.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.state.client.protocol_version
    }

    /// Reports progress (see [`Progress::report`]).
    pub fn progress(&self, done: f64, total: impl Into<Option<f64>>, message: &str) {
        self.state.progress.report(
            &**self.state.conn(),
            self.state.related(),
            done,
            total.into(),
            message,
        );
    }

    /// Whether the client cancelled this request (or it timed out).
    pub fn is_cancelled(&self) -> bool {
        self.state.is_cancelled()
    }

    /// The call's cancellation token.
    pub fn cancellation(&self) -> &CancellationToken {
        self.state.cancel()
    }

    /// A logger sending `notifications/message` to the client.
    pub fn logger(&self) -> Logger {
        Logger {
            conn: self.state.conn().clone(),
            related: Some(self.state.related().clone()),
            name: None,
            policy: self.state.log,
        }
    }

    /// Lets the connection carrying this call's answer go, when it is a resumable SSE stream
    /// (Streamable HTTP, 2025-11-25): the client reconnects with `Last-Event-ID` after the
    /// stream's `retry:` delay and gets what the call sent meanwhile, its result included
    /// (SSE polling: no connection held open through a long call). Does nothing elsewhere.
    pub fn close_stream(&self) {
        if self.state.task.get().is_none() {
            // An empty message is no message: the transport reads it as this request.
            self.state
                .conn
                .send(Some(self.state.related()), String::new());
        }
    }

    /// This session's tool manager.
    pub fn tools(&self) -> ToolManager {
        ToolManager {
            conn: self.state.conn().clone(),
            related: Some(self.state.related().clone()),
        }
    }
}

/// The progress of one call: reported with [`Progress::report`], sent to the client as
/// `notifications/progress` with the request's progress token. Without a token it does
/// nothing.
#[derive(Clone, Debug)]
pub struct Progress {
    pub(crate) ctx: Ctx,
}

impl Progress {
    /// Reports `done` out of `total` (if known) with a message (`""` for none). Values must
    /// increase: a value not above the last one is not sent.
    pub fn report(&self, done: f64, total: impl Into<Option<f64>>, message: &str) {
        self.ctx.progress(done, total, message);
    }

    /// Whether the client asked for progress (gave a progress token).
    pub fn is_tracked(&self) -> bool {
        self.ctx.progress_token().is_some()
    }
}

/// What progress a call has reported.
#[derive(Default)]
pub(crate) struct ProgressState {
    pub(crate) token: Option<Value>,
    last: std::sync::Mutex<Option<(f64, Instant)>>,
}

/// How long a result waits after a progress notification, so clients that handle
/// notifications asynchronously do not lose the last one to the result.
const PROGRESS_SETTLE: Duration = Duration::from_millis(30);

impl ProgressState {
    pub(crate) fn new(token: Option<Value>) -> Self {
        ProgressState {
            token,
            last: std::sync::Mutex::new(None),
        }
    }

    fn report(
        &self,
        conn: &dyn Connection,
        related: &Arc<str>,
        done: f64,
        total: Option<f64>,
        message: &str,
    ) {
        let Some(token) = &self.token else { return };
        {
            let mut last = lock(&self.last);
            if let Some((prev, _)) = *last
                && done <= prev
            {
                tracing::debug!(done, prev, "progress must increase; not sent");
                return;
            }
            *last = Some((done, Instant::now()));
        }
        let params = ProgressParams {
            progress_token: token,
            progress: number(done),
            total: total.map(number),
            message: Some(message).filter(|m| !m.is_empty()),
        };
        conn.send(
            Some(related),
            jsonrpc::notification("notifications/progress", &params),
        );
    }

    /// How long until the last progress notification is [`PROGRESS_SETTLE`] old; `None`
    /// when it is, or none was sent.
    pub(crate) fn unsettled(&self) -> Option<Duration> {
        let at = lock(&self.last).map(|(_, at)| at)?;
        PROGRESS_SETTLE
            .checked_sub(at.elapsed())
            .filter(|d| !d.is_zero())
    }
}

/// Cancellation of one call. The call's future is dropped when the client cancels it (or it
/// times out), so most tools need nothing; this token lets code that must clean up, or a
/// synchronous tool on a blocking thread, notice.
#[derive(Clone, Default)]
pub struct CancellationToken {
    inner: Arc<CancelInner>,
}

#[derive(Default)]
struct CancelInner {
    cancelled: AtomicBool,
    notify: tokio::sync::Notify,
}

impl CancellationToken {
    /// Whether the call was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Completes when the call is cancelled.
    pub async fn cancelled(&self) {
        let notified = self.inner.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if self.is_cancelled() {
            return;
        }
        notified.await;
    }

    pub(crate) fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }
}

impl fmt::Debug for CancellationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CancellationToken({})", self.is_cancelled())
    }
}

/// Sends log messages to the client (`notifications/message`), honouring the level the client
/// set with `logging/setLevel` (2025-11-25) or asked for in the request's `_meta` (2026-07-28:
/// a request that asks for no level gets no log messages).
#[derive(Clone)]
pub struct Logger {
    conn: Arc<dyn Connection>,
    related: Option<Arc<str>>,
    name: Option<Arc<str>>,
    policy: LogPolicy,
}

impl fmt::Debug for Logger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Logger").field("name", &self.name).finish()
    }
}

macro_rules! levels {
    ($($fn:ident => $level:ident),*) => {$(
        #[doc = concat!("Logs a message at level `", stringify!($fn), "`.")]
        pub fn $fn(&self, message: impl Into<String>) {
            self.log(LogLevel::$level, Value::String(message.into()));
        }
    )*};
}

impl Logger {
    /// The same logger, naming its messages' source.
    #[must_use]
    pub fn named(&self, name: impl Into<Arc<str>>) -> Logger {
        Logger {
            conn: self.conn.clone(),
            related: self.related.clone(),
            name: Some(name.into()),
            policy: self.policy,
        }
    }

    /// Logs any JSON-serializable data at `level`.
    pub fn log(&self, level: LogLevel, data: impl Serialize) {
        let wanted = match self.policy {
            LogPolicy::Session => self.conn.logs(level),
            LogPolicy::Request(min) => min.is_some_and(|min| level >= min),
        };
        if !wanted {
            return;
        }
        let data = serde_json::to_value(data).unwrap_or_else(|e| Value::String(e.to_string()));
        let params = LogParams {
            level: level.as_str(),
            logger: self.name.as_deref(),
            data: &data,
        };
        self.conn.send(
            self.related.as_ref(),
            jsonrpc::notification("notifications/message", &params),
        );
    }

    levels!(
        debug => Debug, info => Info, notice => Notice, warning => Warning,
        error => Error, critical => Critical, alert => Alert, emergency => Emergency
    );

    /// Logs a message with structured data at `level` (`logger.info(msg, data)` in other
    /// frameworks): the notification's `data` is `{"message": …, "data": …}`.
    pub fn log_with(&self, level: LogLevel, message: impl Into<String>, data: impl Serialize) {
        #[derive(Serialize)]
        struct WithData<D> {
            message: String,
            data: D,
        }
        self.log(
            level,
            WithData {
                message: message.into(),
                data,
            },
        );
    }
}

/// Several changes to a session's tool selection, applied together (one `list_changed` at
/// most): first the allow or block list (which switch the mode and forget earlier enables and
/// disables), then the enables, then the disables.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batch {
    /// Tools to enable.
    pub enable: Vec<String>,
    /// Tools to disable.
    pub disable: Vec<String>,
    /// Switch to allow-list mode with these tools.
    pub allow: Option<Vec<String>>,
    /// Switch to block-list mode with these tools.
    pub block: Option<Vec<String>>,
}

impl Batch {
    /// Whether the batch changes nothing.
    pub fn is_empty(&self) -> bool {
        self.enable.is_empty()
            && self.disable.is_empty()
            && self.allow.is_none()
            && self.block.is_none()
    }
}

/// Turns on and off the tools of the current session. Every change that alters the list of
/// active tools sends `notifications/tools/list_changed`.
///
/// A tool is active when it was enabled explicitly or is `always_visible` (unless disabled
/// explicitly); in allow-list mode when the list names it; in block-list mode when it is not
/// `hidden` and the list does not name it; otherwise when it is not `hidden`.
#[derive(Clone)]
pub struct ToolManager {
    conn: Arc<dyn Connection>,
    related: Option<Arc<str>>,
}

impl fmt::Debug for ToolManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolManager").finish_non_exhaustive()
    }
}

fn names<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Vec<String> {
    names.into_iter().map(Into::into).collect()
}

impl ToolManager {
    /// Enables tools (hidden ones included); returns the active tools.
    pub fn enable<I: IntoIterator<Item = S>, S: Into<String>>(
        &self,
        tools: I,
    ) -> Result<Vec<String>, crate::tool::ToolError> {
        self.batch(Batch {
            enable: names(tools),
            ..Batch::default()
        })
    }

    /// Disables tools; returns the active tools.
    pub fn disable<I: IntoIterator<Item = S>, S: Into<String>>(
        &self,
        tools: I,
    ) -> Result<Vec<String>, crate::tool::ToolError> {
        self.batch(Batch {
            disable: names(tools),
            ..Batch::default()
        })
    }

    /// Switches to allow-list mode: only these tools (and always-visible ones) are active.
    pub fn set_allowed<I: IntoIterator<Item = S>, S: Into<String>>(
        &self,
        tools: I,
    ) -> Result<Vec<String>, crate::tool::ToolError> {
        self.batch(Batch {
            allow: Some(names(tools)),
            ..Batch::default()
        })
    }

    /// Switches to block-list mode: every visible tool except these is active.
    pub fn set_blocked<I: IntoIterator<Item = S>, S: Into<String>>(
        &self,
        tools: I,
    ) -> Result<Vec<String>, crate::tool::ToolError> {
        self.batch(Batch {
            block: Some(names(tools)),
            ..Batch::default()
        })
    }

    /// Applies several changes at once; returns the active tools.
    pub fn batch(&self, batch: Batch) -> Result<Vec<String>, crate::tool::ToolError> {
        self.conn
            .change_tools(self.related.as_ref(), &batch)
            .map_err(|e| crate::tool::ToolError::new("UNKNOWN_TOOL", e))
    }

    /// The active tools' names, in order.
    pub fn active(&self) -> Vec<String> {
        self.conn.active_tools()
    }
}
