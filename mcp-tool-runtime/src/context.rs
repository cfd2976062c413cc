//! What a running tool can reach: the request's context, and the extractors built on it —
//! [`Progress`], [`Cancellation`], [`Logger`], [`Peer`] (sampling, elicitation), the
//! [`ToolManager`], [`State`], [`Meta`] and [`ClientInfo`].
//!
//! Each is a parameter type; the macros never look at names, the types decide.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::extract::{FromContext, ToolCall};
use crate::manager::Batch;
use crate::protocol::{ProtocolVersion, RpcError};
use crate::result::ToolError;
use crate::server::Session;

/// What the client said about itself when the session was initialized.
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

impl FromContext for ClientInfo {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        Ok((*call.request.client).clone())
    }
}

/// The context of one request.
pub struct RequestContext {
    pub(crate) id: Value,
    /// The id as JSON text: what the request's own messages are routed by.
    pub(crate) related: Arc<str>,
    pub(crate) tool: Arc<str>,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) client: Arc<ClientInfo>,
    pub(crate) identity: Option<Arc<crate::http::Identity>>,
    pub(crate) session: Arc<Session>,
    pub(crate) cancel: CancellationToken,
    pub(crate) progress: ProgressState,
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("id", &self.id)
            .field("tool", &self.tool)
            .field("meta", &self.meta)
            .finish_non_exhaustive()
    }
}

impl RequestContext {
    /// The JSON-RPC id of the request (a string or a number), as the client sent it.
    pub fn id(&self) -> &Value {
        &self.id
    }

    /// The name of the tool being called.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The request's `_meta`, if it had one.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.meta.as_ref()
    }

    /// The request's progress token, exactly as received (string or number).
    pub fn progress_token(&self) -> Option<&Value> {
        self.meta.as_ref()?.get("progressToken")
    }

    /// The client and the negotiated protocol version.
    pub fn client(&self) -> &ClientInfo {
        &self.client
    }

    /// Who made the request, when an authenticator established it (HTTP).
    pub fn identity(&self) -> Option<&crate::http::Identity> {
        self.identity.as_deref()
    }

    /// The negotiated protocol version.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.client.protocol_version
    }

    /// Reports progress (see [`Progress::report`]).
    pub fn progress(&self, done: f64, total: impl Into<Option<f64>>, message: &str) {
        self.progress
            .report(&self.session, &self.related, done, total.into(), message);
    }

    /// Whether the client cancelled this request (or it timed out).
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// The call's cancellation token.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// A logger sending `notifications/message` to the client.
    pub fn logger(&self) -> Logger {
        Logger {
            session: self.session.clone(),
            related: Some(self.related.clone()),
            name: None,
        }
    }

    /// The client, for requests the server makes of it (sampling, elicitation).
    pub fn peer(&self) -> Peer {
        Peer {
            session: self.session.clone(),
            related: Some(self.related.clone()),
            client: self.client.clone(),
        }
    }

    /// This session's tool manager.
    pub fn tools(&self) -> ToolManager {
        ToolManager {
            session: self.session.clone(),
            related: Some(self.related.clone()),
        }
    }
}

/// The progress of one call: reported with [`Progress::report`], sent to the client as
/// `notifications/progress` with the request's progress token. Without a token it does
/// nothing.
#[derive(Clone)]
pub struct Progress {
    request: Arc<RequestContext>,
}

impl Progress {
    /// Reports `done` out of `total` (if known) with a message (`""` for none). Values must
    /// increase: a value not above the last one is not sent.
    pub fn report(&self, done: f64, total: impl Into<Option<f64>>, message: &str) {
        self.request.progress(done, total, message);
    }

    /// Whether the client asked for progress (gave a progress token).
    pub fn is_tracked(&self) -> bool {
        self.request.progress_token().is_some()
    }
}

impl FromContext for Progress {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(Progress {
            request: call.request.clone(),
        })
    }
}

/// What progress a call has reported.
#[derive(Default)]
pub(crate) struct ProgressState {
    token: Option<Value>,
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
        session: &Session,
        related: &Arc<str>,
        done: f64,
        total: Option<f64>,
        message: &str,
    ) {
        let Some(token) = &self.token else { return };
        {
            let mut last = self
                .last
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some((prev, _)) = *last
                && done <= prev
            {
                tracing::debug!(done, prev, "progress must increase; not sent");
                return;
            }
            *last = Some((done, Instant::now()));
        }
        let mut params = Map::with_capacity(4);
        params.insert("progressToken".into(), token.clone());
        params.insert("progress".into(), number(done));
        if let Some(t) = total {
            params.insert("total".into(), number(t));
        }
        if !message.is_empty() {
            params.insert("message".into(), Value::String(message.into()));
        }
        session.notify(
            Some(related),
            "notifications/progress",
            Value::Object(params),
        );
    }

    /// Waits until the last progress notification is [`PROGRESS_SETTLE`] old.
    pub(crate) async fn settle(&self) {
        let sent = self
            .last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .map(|(_, at)| at);
        if let Some(at) = sent {
            let elapsed = at.elapsed();
            if elapsed < PROGRESS_SETTLE {
                tokio::time::sleep(PROGRESS_SETTLE - elapsed).await;
            }
        }
    }
}

/// A whole number as a JSON integer, anything else as a float.
fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        #[allow(clippy::cast_possible_truncation)] // checked: integral and in range
        Value::from(n as i64)
    } else {
        Value::from(n)
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

impl FromContext for CancellationToken {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(call.request.cancel.clone())
    }
}

/// The severity of a log message (RFC 5424 levels, as MCP uses them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The level's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// Parses a level's wire name.
    pub fn parse(s: &str) -> Option<LogLevel> {
        Self::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

/// Sends log messages to the client (`notifications/message`), honouring the level the
/// client set with `logging/setLevel`.
#[derive(Clone)]
pub struct Logger {
    session: Arc<Session>,
    related: Option<Arc<str>>,
    name: Option<Arc<str>>,
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
            session: self.session.clone(),
            related: self.related.clone(),
            name: Some(name.into()),
        }
    }

    /// Logs any JSON-serializable data at `level`.
    pub fn log(&self, level: LogLevel, data: impl Serialize) {
        if !self.session.logs(level) {
            return;
        }
        let data = serde_json::to_value(data).unwrap_or_else(|e| Value::String(e.to_string()));
        let mut params = Map::with_capacity(3);
        params.insert("level".into(), Value::String(level.as_str().into()));
        if let Some(n) = &self.name {
            params.insert("logger".into(), Value::String(n.to_string()));
        }
        params.insert("data".into(), data);
        self.session.notify(
            self.related.as_ref(),
            "notifications/message",
            Value::Object(params),
        );
    }

    levels!(
        debug => Debug, info => Info, notice => Notice, warning => Warning,
        error => Error, critical => Critical, alert => Alert, emergency => Emergency
    );
}

impl FromContext for Logger {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(call.request.logger())
    }
}

/// The client of the current session, for requests the server makes of it: sampling
/// (`sampling/createMessage`) and elicitation (`elicitation/create`).
#[derive(Clone)]
pub struct Peer {
    session: Arc<Session>,
    related: Option<Arc<str>>,
    client: Arc<ClientInfo>,
}

impl Peer {
    /// The client's declared information and capabilities.
    pub fn client(&self) -> &ClientInfo {
        &self.client
    }

    /// Sends a request to the client and waits for its answer.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        self.session
            .request(self.related.as_ref(), method, params)
            .await
    }

    /// Fails with a clear error unless the client declared `capability`.
    pub(crate) fn require(&self, capability: &str, what: &str) -> Result<(), ToolError> {
        if self.client.has_capability(capability) {
            Ok(())
        } else {
            Err(ToolError::new(
                "MISSING_CLIENT_CAPABILITY",
                format!(
                    "the client did not declare the `{capability}` capability, so {what} is not available"
                ),
            ))
        }
    }
}

impl FromContext for Peer {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(call.request.peer())
    }
}

/// Turns on and off the tools of the current session. Every change that alters the list of
/// active tools sends `notifications/tools/list_changed`.
#[derive(Clone)]
pub struct ToolManager {
    session: Arc<Session>,
    related: Option<Arc<str>>,
}

impl ToolManager {
    /// Enables tools (hidden ones included); returns the active tools.
    pub fn enable<I: IntoIterator<Item = S>, S: Into<String>>(
        &self,
        names: I,
    ) -> Result<Vec<String>, ToolError> {
        self.batch(Batch {
            enable: names.into_iter().map(Into::into).collect(),
            ..Batch::default()
        })
    }

    /// Disables tools; returns the active tools.
    pub fn disable<I: IntoIterator<Item = S>, S: Into<String>>(
        &self,
        names: I,
    ) -> Result<Vec<String>, ToolError> {
        self.batch(Batch {
            disable: names.into_iter().map(Into::into).collect(),
            ..Batch::default()
        })
    }

    /// Switches to allow-list mode: only these tools (and always-visible ones) are active.
    pub fn set_allowed<I: IntoIterator<Item = S>, S: Into<String>>(
        &self,
        names: I,
    ) -> Result<Vec<String>, ToolError> {
        self.batch(Batch {
            allow: Some(names.into_iter().map(Into::into).collect()),
            ..Batch::default()
        })
    }

    /// Switches to block-list mode: every visible tool except these is active.
    pub fn set_blocked<I: IntoIterator<Item = S>, S: Into<String>>(
        &self,
        names: I,
    ) -> Result<Vec<String>, ToolError> {
        self.batch(Batch {
            block: Some(names.into_iter().map(Into::into).collect()),
            ..Batch::default()
        })
    }

    /// Applies several changes at once; returns the active tools.
    pub fn batch(&self, batch: Batch) -> Result<Vec<String>, ToolError> {
        self.session
            .apply_tools(self.related.as_ref(), &batch)
            .map_err(|e| ToolError::new("UNKNOWN_TOOL", e))
    }

    /// The active tools' names, in order.
    pub fn active(&self) -> Vec<String> {
        self.session.active_tools()
    }
}

impl FromContext for ToolManager {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(call.request.tools())
    }
}

/// A value given to the server with [`Server::state`](crate::Server::state), shared by every
/// call. A tool that takes `State<T>` fails the server's start when no `T` was given.
pub struct State<T>(pub Arc<T>);

impl<T> Clone for State<T> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

impl<T> std::ops::Deref for State<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Send + Sync + 'static> FromContext for State<T> {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        call.request
            .session
            .core()
            .state::<T>()
            .map(State)
            .ok_or_else(|| {
                ToolError::msg(format!(
                    "internal error: no `{}` state was given to the server",
                    std::any::type_name::<T>()
                ))
            })
    }

    fn describe(def: &mut crate::schema::DefBuilder) {
        def.require_state(std::any::TypeId::of::<T>(), std::any::type_name::<T>());
    }
}

/// The request's `_meta` (empty when it had none).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Meta(pub Map<String, Value>);

impl FromContext for Meta {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(Meta(call.request.meta.clone().unwrap_or_default()))
    }
}

/// The request's JSON-RPC id, as the client sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestId(pub Value);

impl FromContext for RequestId {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(RequestId(call.request.id.clone()))
    }
}
