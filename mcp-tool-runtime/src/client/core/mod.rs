//! The client's engine: the handshake (`server/discover`, else `initialize`), requests matched
//! to their answers, the server's own requests answered by the right handler, progress
//! routed to its call, list changes heard, and 2026-07-28's input-required rounds replayed.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};

use serde_json::{Map, Value, json};
use tokio::sync::{Semaphore, mpsc, oneshot, watch};

use crate::protocol::jsonrpc;
use crate::protocol::{ProtocolVersion, RpcError};
use crate::sync::lock;
use crate::tool::ParamHeader;
use crate::tool::definition::headers::{param_headers, param_value};

mod inbound;

use self::inbound::{Questions, within};
use super::http::HttpWire;
use super::message::{Inbound, Outbound, TRANSPORT, UNAUTHORIZED};
use super::meta::WithMeta;
use super::oauth::{AuthAnswer, AuthFailure};
use super::stdio::StdioWire;
use super::{
    CallOptions, CallProgress, ClientError, ClientHandler, Connect, ServerInfo, Target,
    VersionChoice,
};

/// The most input-required rounds one call may take.
const MAX_ROUNDS: usize = 16;

/// 2026-07-28's UnsupportedProtocolVersionError.
const UNSUPPORTED_VERSION: i64 = -32022;

/// How messages reach the server.
pub(super) enum Wire {
    Http(HttpWire),
    Stdio(StdioWire),
}

impl Wire {
    async fn send(
        &self,
        out: Outbound<'_>,
    ) -> Result<Option<tokio::task::AbortHandle>, ClientError> {
        match self {
            Wire::Http(w) => w.send(out).await,
            Wire::Stdio(w) => w.send(&out.text).await.map(|()| None),
        }
    }
}

/// A call in progress: who answers the requests its server makes while it runs.
struct Active {
    handler: Option<Arc<dyn ClientHandler>>,
    /// The server's questions about this request that the client is answering.
    asking: Arc<Questions>,
}

type Waiter = oneshot::Sender<Result<Value, RpcError>>;
type OnProgress = Arc<dyn Fn(CallProgress) + Send + Sync>;

pub(super) struct Core {
    pub(super) wire: Wire,
    connect: Connect,
    handler: Arc<dyn ClientHandler>,
    next: AtomicU64,
    pending: Mutex<HashMap<u64, Waiter>>,
    active: Mutex<HashMap<u64, Active>>,
    progress: Mutex<HashMap<String, OnProgress>>,
    server: RwLock<Option<ServerInfo>>,
    /// 2026-07-28: every request carries `_meta`.
    stateless: AtomicBool,
    /// That `_meta` for the client's own handler, made once.
    meta: OnceLock<Map<String, Value>>,
    open: AtomicBool,
    /// Counts list changes heard.
    changed: watch::Sender<u64>,
    /// The server's requests being answered at once, at most [`inbound::MAX_QUESTIONS`].
    questions: Arc<Semaphore>,
    /// 2026-07-28: the arguments each listed tool mirrors into `Mcp-Param-*` headers.
    mirrored: Mutex<HashMap<String, Vec<ParamHeader>>>,
}

impl Core {
    pub(super) async fn connect(
        connect: Connect,
        handler: Arc<dyn ClientHandler>,
    ) -> Result<Arc<Core>, ClientError> {
        let (tx, rx) = mpsc::unbounded_channel::<Inbound>();
        let wire = match &connect.target {
            Target::Http(url) => Wire::Http(HttpWire::new(
                url,
                &connect.headers,
                connect.oauth.as_ref(),
                tx,
            )?),
            Target::Stdio { command, args, env } => {
                Wire::Stdio(StdioWire::spawn(command, args, env, tx)?)
            }
        };
        let core = Arc::new(Core {
            wire,
            connect,
            handler,
            next: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            active: Mutex::new(HashMap::new()),
            progress: Mutex::new(HashMap::new()),
            server: RwLock::new(None),
            stateless: AtomicBool::new(false),
            meta: OnceLock::new(),
            open: AtomicBool::new(true),
            changed: watch::channel(0).0,
            questions: Arc::new(Semaphore::new(inbound::MAX_QUESTIONS)),
            mirrored: Mutex::new(HashMap::new()),
        });
        tokio::spawn(pump(Arc::downgrade(&core), rx));
        core.handshake().await?;
        Ok(core)
    }

    /// `server/discover` first (2026-07-28), else `initialize`, as the version asked for allows.
    async fn handshake(self: &Arc<Self>) -> Result<(), ClientError> {
        if self.connect.version == VersionChoice::V2025_11_25 {
            if let Wire::Http(w) = &self.wire {
                w.set_stateless(false);
            }
        } else {
            self.stateless.store(true, Ordering::SeqCst);
            let mut discovered = self.request("server/discover", &json!({}), None).await;
            // An UnsupportedProtocolVersion refusal that lists 2026-07-28 after all: asked
            // once more (the server named what it takes); one that does not is answered by
            // `initialize` below.
            if let Err(ClientError::Rpc(e)) = &discovered
                && e.code == UNSUPPORTED_VERSION
                && e.data.as_ref().is_some_and(|d| {
                    d["supported"]
                        .as_array()
                        .is_some_and(|v| v.iter().any(|v| v == "2026-07-28"))
                })
            {
                discovered = self.request("server/discover", &json!({}), None).await;
            }
            match discovered {
                Ok(found) => {
                    let speaks = found["supportedVersions"]
                        .as_array()
                        .is_some_and(|v| v.iter().any(|v| v == "2026-07-28"));
                    if speaks {
                        *crate::sync::write(&self.server) = Some(ServerInfo {
                            protocol_version: ProtocolVersion::V2026_07_28,
                            info: found["_meta"]["io.modelcontextprotocol/serverInfo"].clone(),
                            capabilities: found["capabilities"].clone(),
                            instructions: found["instructions"].as_str().map(String::from),
                        });
                        self.start_listening();
                        return Ok(());
                    }
                }
                Err(e) if self.connect.version == VersionChoice::V2026_07_28 => return Err(e),
                // The server is there but would not take the client: `initialize` would fare
                // no better.
                Err(e @ ClientError::Unauthorized(_)) => return Err(e),
                Err(e) if !e.is_retryable() || matches!(e, ClientError::TimedOut(_)) => {
                    tracing::debug!(error = %e, "no server/discover: falling back to initialize");
                }
                Err(e) => return Err(e),
            }
            if self.connect.version == VersionChoice::V2026_07_28 {
                return Err(ClientError::Protocol(
                    "the server does not speak 2026-07-28".into(),
                ));
            }
            self.stateless.store(false, Ordering::SeqCst);
            if let Wire::Http(w) = &self.wire {
                w.set_stateless(false);
            }
        }
        let result = self
            .request(
                "initialize",
                &json!({
                    "protocolVersion": ProtocolVersion::LATEST_STATEFUL.as_str(),
                    "capabilities": self.handler.capabilities(),
                    "clientInfo": { "name": self.connect.client_name, "version": env!("CARGO_PKG_VERSION") }
                }),
                None,
            )
            .await?;
        let version = result["protocolVersion"]
            .as_str()
            .and_then(ProtocolVersion::parse)
            .ok_or_else(|| {
                ClientError::Protocol(format!(
                    "initialize settled on an unknown version: {}",
                    result["protocolVersion"]
                ))
            })?;
        *crate::sync::write(&self.server) = Some(ServerInfo {
            protocol_version: version,
            info: result["serverInfo"].clone(),
            capabilities: result["capabilities"].clone(),
            instructions: result["instructions"].as_str().map(String::from),
        });
        if let Wire::Http(w) = &self.wire {
            w.set_version(version);
        }
        self.notify("notifications/initialized", json!({})).await?;
        if let Wire::Http(w) = &self.wire {
            w.open_standalone_stream().await;
        }
        Ok(())
    }

    pub(super) fn server(&self) -> ServerInfo {
        crate::sync::read(&self.server)
            .clone()
            .unwrap_or(ServerInfo {
                protocol_version: ProtocolVersion::LATEST,
                info: Value::Null,
                capabilities: Value::Null,
                instructions: None,
            })
    }

    pub(super) fn is_open(&self) -> bool {
        self.open.load(Ordering::SeqCst)
    }

    fn is_stateless(&self) -> bool {
        self.stateless.load(Ordering::SeqCst)
    }

    /// The `_meta` of a 2026-07-28 request answered by `handler`: made once for the client's
    /// own handler (and any other declaring the same capabilities).
    fn meta(&self, handler: &dyn ClientHandler) -> Cow<'_, Map<String, Value>> {
        let make = |capabilities: Value| {
            let mut meta = Map::new();
            meta.insert(
                "io.modelcontextprotocol/protocolVersion".into(),
                Value::from("2026-07-28"),
            );
            meta.insert(
                "io.modelcontextprotocol/clientCapabilities".into(),
                capabilities,
            );
            meta.insert(
                "io.modelcontextprotocol/clientInfo".into(),
                json!({ "name": self.connect.client_name, "version": env!("CARGO_PKG_VERSION") }),
            );
            meta
        };
        let own = self.meta.get_or_init(|| make(self.handler.capabilities()));
        if std::ptr::addr_eq(handler, &*self.handler) {
            return Cow::Borrowed(own);
        }
        let capabilities = handler.capabilities();
        if own.get("io.modelcontextprotocol/clientCapabilities") == Some(&capabilities) {
            Cow::Borrowed(own)
        } else {
            Cow::Owned(make(capabilities))
        }
    }

    /// The text of a request (or, without `id`, a notification): in 2026-07-28 its params
    /// carry the `_meta` of `handler`, merged in as they are written.
    fn message(
        &self,
        id: Option<u64>,
        method: &str,
        params: &Value,
        handler: &dyn ClientHandler,
    ) -> String {
        if !self.is_stateless() {
            return match id {
                Some(id) => jsonrpc::request(id, method, params),
                None => jsonrpc::notification(method, params),
            };
        }
        let meta = self.meta(handler);
        let params = WithMeta {
            params,
            meta: &meta,
        };
        match id {
            Some(id) => jsonrpc::request(id, method, &params),
            None => jsonrpc::notification(method, &params),
        }
    }

    /// Sends a request and waits for its answer (within the client's time limit, or until
    /// `cancel`).
    pub(super) async fn request(
        self: &Arc<Self>,
        method: &str,
        params: &Value,
        options: Option<&CallOptions>,
    ) -> Result<Value, ClientError> {
        if !self.is_open() {
            return Err(ClientError::Unavailable("the connection is closed".into()));
        }
        let handler = options
            .and_then(|o| o.handler.as_deref())
            .unwrap_or(&*self.handler);
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let name = match method {
            "tools/call" | "prompts/get" => params["name"].as_str().map(String::from),
            "resources/read" => params["uri"].as_str().map(String::from),
            m if m.starts_with("tasks/") => params["taskId"].as_str().map(String::from),
            _ => None,
        };
        let mirrored = if method == "tools/call" && self.is_stateless() {
            self.mirrored_params(params)
        } else {
            Vec::new()
        };
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        let asking = Arc::new(Questions::default());
        lock(&self.active).insert(
            id,
            Active {
                handler: options.and_then(|o| o.handler.clone()),
                asking: asking.clone(),
            },
        );
        let mut forget = Forget {
            core: self,
            id,
            abort: None,
            answered: false,
        };
        let text = self.message(Some(id), method, params, handler);
        let sent = self
            .wire
            .send(Outbound {
                text,
                id: Some(id),
                method,
                name,
                params: mirrored,
            })
            .await;
        let abort = match sent {
            Ok(abort) => abort,
            Err(e) => {
                // Never sent: nothing to cancel.
                forget.answered = true;
                return Err(e);
            }
        };
        forget.abort = abort.clone();
        let cancelled = async {
            match options.and_then(|o| o.cancel.as_ref()) {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        };
        let outcome = tokio::select! {
            answer = within(self.connect.timeout, &asking, rx) => match answer {
                Some(Ok(Ok(result))) => Ok(result),
                Some(Ok(Err(e))) if e.code == TRANSPORT => Err(ClientError::Unavailable(e.message)),
                Some(Ok(Err(e))) if e.code == UNAUTHORIZED => {
                    let answer = AuthAnswer::from_data(e.data.as_ref());
                    Err(ClientError::Unauthorized(AuthFailure::new(e.message, answer)))
                }
                Some(Ok(Err(e))) => Err(ClientError::Rpc(e)),
                Some(Err(_)) => Err(ClientError::Unavailable("the connection closed before the answer".into())),
                None => {
                    self.cancel(id, abort, "the client's time limit passed").await;
                    Err(ClientError::TimedOut(self.connect.timeout))
                }
            },
            () = cancelled => {
                self.cancel(id, abort, "cancelled by the client").await;
                Err(ClientError::Cancelled)
            }
        };
        forget.answered = true;
        outcome
    }

    /// The `Mcp-Param-*` headers of a call: each argument the tool mirrors, encoded; an
    /// argument that is absent or null is left out.
    fn mirrored_params(&self, params: &Value) -> Vec<(String, String)> {
        let Some(name) = params["name"].as_str() else {
            return Vec::new();
        };
        let mirrored = lock(&self.mirrored);
        let Some(headers) = mirrored.get(name) else {
            return Vec::new();
        };
        headers
            .iter()
            .filter_map(|h| {
                let value = param_value(params["arguments"].get(&h.argument)?)?;
                Some((h.header.clone(), value))
            })
            .collect()
    }

    /// Reads a page of listed tools: in 2026-07-28, a tool whose `x-mcp-header` annotations
    /// break the rules is left out (logged: a client must not call it), and the arguments the
    /// others mirror into headers are kept for their calls.
    pub(super) fn learn_tools(&self, tools: &mut Vec<Value>) {
        if !self.is_stateless() {
            return;
        }
        let mut mirrored = lock(&self.mirrored);
        tools.retain(|tool| {
            let name = tool["name"].as_str().unwrap_or_default();
            match param_headers(&tool["inputSchema"]) {
                Ok(headers) => {
                    if headers.is_empty() {
                        mirrored.remove(name);
                    } else {
                        mirrored.insert(name.to_owned(), headers);
                    }
                    true
                }
                Err(problems) => {
                    tracing::warn!(
                        tool = name,
                        problems = %problems.join("; "),
                        "a listed tool's x-mcp-header annotations are invalid: the tool is left out"
                    );
                    mirrored.remove(name);
                    false
                }
            }
        });
    }

    /// Tells the server a request is abandoned: `notifications/cancelled`, and the request's
    /// HTTP stream closed.
    async fn cancel(self: &Arc<Self>, id: u64, abort: Option<tokio::task::AbortHandle>, why: &str) {
        if let Some(abort) = abort {
            abort.abort();
        }
        let _ = self
            .notify(
                "notifications/cancelled",
                json!({ "requestId": id, "reason": why }),
            )
            .await;
    }

    pub(super) async fn notify(
        self: &Arc<Self>,
        method: &str,
        params: Value,
    ) -> Result<(), ClientError> {
        let text = self.message(None, method, &params, &*self.handler);
        self.wire
            .send(Outbound {
                text,
                id: None,
                method,
                name: None,
                params: Vec::new(),
            })
            .await
            .map(|_| ())
    }

    /// `tools/call`, with its progress, its handler and — in 2026-07-28 — its input rounds:
    /// answered here with the handler, or (`round` given) one request whose result is the
    /// caller's to answer.
    pub(super) async fn call_tool(
        self: &Arc<Self>,
        name: &str,
        arguments: Value,
        options: CallOptions,
        round: Option<super::Round>,
    ) -> Result<Value, ClientError> {
        let mut params = json!({ "name": name, "arguments": arguments });
        let mut meta = options.meta.clone().unwrap_or_default();
        let token = options.progress.as_ref().map(|_| {
            let token = format!("progress-{}", self.next.fetch_add(1, Ordering::Relaxed));
            meta.insert("progressToken".into(), Value::String(token.clone()));
            token
        });
        if !meta.is_empty() {
            params["_meta"] = Value::Object(meta);
        }
        let options = Arc::new(options);
        if let (Some(token), Some(_)) = (&token, &options.progress) {
            let on = options.clone();
            lock(&self.progress).insert(
                format!("\"{token}\""),
                Arc::new(move |p| {
                    if let Some(f) = &on.progress {
                        f(p);
                    }
                }),
            );
        }
        let outcome = match round {
            None => self.rounds(params, &options).await,
            Some(round) => {
                if !round.responses.is_empty() || round.state.is_some() {
                    continue_with(&mut params, round.responses, round.state.as_ref());
                }
                self.request("tools/call", &params, Some(&options)).await
            }
        };
        if let Some(token) = token {
            lock(&self.progress).remove(&format!("\"{token}\""));
        }
        outcome
    }

    async fn rounds(
        self: &Arc<Self>,
        mut params: Value,
        options: &CallOptions,
    ) -> Result<Value, ClientError> {
        for _ in 0..MAX_ROUNDS {
            let result = self.request("tools/call", &params, Some(options)).await?;
            if result["resultType"] != "input_required" {
                return Ok(result);
            }
            let handler = options
                .handler
                .clone()
                .unwrap_or_else(|| self.handler.clone());
            let mut answers = Map::new();
            for (key, asked) in result["inputRequests"].as_object().into_iter().flatten() {
                let method = asked["method"].as_str().unwrap_or_default();
                let answer = handler
                    .request(method, asked["params"].clone())
                    .await
                    .map_err(ClientError::Rpc)?;
                answers.insert(key.clone(), answer);
            }
            continue_with(&mut params, answers, result.get("requestState"));
        }
        Err(ClientError::Protocol(format!(
            "the call still needed input after {MAX_ROUNDS} rounds"
        )))
    }

    /// 2026-07-28: a `subscriptions/listen` stream for list changes, reopened when it ends.
    fn start_listening(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut backoff = std::time::Duration::from_millis(200);
            loop {
                let Some(core) = weak.upgrade() else { return };
                if !core.is_open() {
                    return;
                }
                let params = json!({ "notifications": { "toolsListChanged": true } });
                // The stream lasts as long as the server keeps it: no time limit here.
                let id = core.next.fetch_add(1, Ordering::Relaxed);
                let (tx, rx) = oneshot::channel();
                lock(&core.pending).insert(id, tx);
                let sent = core
                    .wire
                    .send(Outbound {
                        text: core.message(
                            Some(id),
                            "subscriptions/listen",
                            &params,
                            &*core.handler,
                        ),
                        id: Some(id),
                        method: "subscriptions/listen",
                        name: None,
                        params: Vec::new(),
                    })
                    .await;
                drop(core);
                if sent.is_ok() {
                    let _ = rx.await;
                    backoff = std::time::Duration::from_millis(200);
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(std::time::Duration::from_secs(30));
            }
        });
    }

    pub(super) async fn tools_changed(&self) -> bool {
        let mut rx = self.changed.subscribe();
        rx.mark_unchanged();
        self.next_change(&mut rx).await
    }

    /// The tool list's changes, from now on.
    pub(super) fn tool_changes(&self) -> watch::Receiver<u64> {
        let mut rx = self.changed.subscribe();
        rx.mark_unchanged();
        rx
    }

    /// Waits for a change `rx` has not seen (`true`), or the connection's end (`false`).
    pub(super) async fn next_change(&self, rx: &mut watch::Receiver<u64>) -> bool {
        loop {
            if !self.is_open() {
                return false;
            }
            tokio::select! {
                changed = rx.changed() => return changed.is_ok(),
                () = tokio::time::sleep(std::time::Duration::from_millis(500)) => {}
            }
        }
    }

    pub(super) async fn close(self: &Arc<Self>) {
        if self.open.swap(false, Ordering::SeqCst) {
            match &self.wire {
                Wire::Http(w) => w.close().await,
                Wire::Stdio(w) => w.close(),
            }
            self.fail_all("the client closed the connection");
        }
    }

    /// Fails every request still waiting (the connection is gone).
    fn fail_all(&self, why: &str) {
        self.open.store(false, Ordering::SeqCst);
        for (_, waiter) in lock(&self.pending).drain() {
            // A transport error: the caller sees `Unavailable` (the connection broke).
            let _ = waiter.send(Err(RpcError::new(TRANSPORT, why)));
        }
        self.changed.send_modify(|n| *n += 1);
    }
}

/// Forgets a request's bookkeeping when its waiter goes. A request dropped before it was
/// answered (its caller gave up: a gateway's call cancelled by its own client, a `select!`
/// elsewhere) is cancelled at the server too: its stream closed and `notifications/cancelled`
/// sent, so the server stops working on it.
struct Forget<'a> {
    core: &'a Arc<Core>,
    id: u64,
    abort: Option<tokio::task::AbortHandle>,
    answered: bool,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        lock(&self.core.pending).remove(&self.id);
        lock(&self.core.active).remove(&self.id);
        if !self.answered
            && self.core.is_open()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let (core, id, abort) = (self.core.clone(), self.id, self.abort.take());
            runtime.spawn(async move {
                core.cancel(id, abort, "the caller gave up").await;
            });
        }
    }
}

/// Hands each message of the server to the client, until the connection ends.
/// A call's params for its next round: the answers, and the server's state as it came.
fn continue_with(params: &mut Value, answers: Map<String, Value>, state: Option<&Value>) {
    params["inputResponses"] = Value::Object(answers);
    match state {
        Some(state) => params["requestState"] = state.clone(),
        None => {
            if let Some(p) = params.as_object_mut() {
                p.remove("requestState");
            }
        }
    }
}

async fn pump(core: Weak<Core>, mut rx: mpsc::UnboundedReceiver<Inbound>) {
    while let Some(inbound) = rx.recv().await {
        let Some(core) = core.upgrade() else { return };
        if inbound.is_last() {
            core.fail_all(&inbound.text);
            return;
        }
        core.receive(inbound);
    }
    if let Some(core) = core.upgrade() {
        core.fail_all("the connection to the server ended");
    }
}
