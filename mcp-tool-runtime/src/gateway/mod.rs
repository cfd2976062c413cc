//! Remote MCP servers mounted beside the local tools (feature `client`): the gateway of the
//! `MCPTool` document. Each mount connects with the [`McpClient`], lists the remote tools its
//! rules allow as `label__tool`, forwards calls (progress, cancellation and the remote's
//! questions passed through; approval asked first where required), follows the remote's
//! list changes, and reconnects with backoff when the remote goes away — its tools then fail
//! with a retryable error while local tools keep working. A mount whose credentials are
//! refused for good is not retried until its connection store changes; `label__status` tells
//! its callers why meanwhile (`refused`). The tokens a mount obtains for itself (client
//! credentials, assertion grants) are renewed once three quarters of their lifetime are gone.
//!
//! A 2026-07-28 client gets the remote's questions as input requests of its rounds, on
//! whichever replica each round lands: a remote speaking 2026-07-28 holds nothing, its own
//! round travels sealed in the gateway's request state (`rounds`); a remote of 2025-11-25,
//! which asks in the middle of its call, has the call held on the replica that started it,
//! which rounds reaching other replicas are forwarded to (`held`).
//!
//! A mount whose connection says `grant: authorization_code` connects once per calling user
//! instead (`user`): each signs in through URL-mode elicitation and comes back on the
//! gateway's own HTTP endpoint (`redirect`); their tokens, connection and tool list are theirs.

mod assertion;
mod calls;
mod config;
mod connection;
mod kept;
mod list;
mod openapi;
mod redirect;
mod refused;
mod remotes;
mod seal;
mod tokens;
mod user;

use list::{RELIST_PAUSE, RELIST_PAUSE_MAX};

use std::collections::BTreeSet;
use std::future::Future;
use std::hash::RandomState;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::{Notify, watch};

use crate::client::{ClientError, ClientHandler, Connect, McpClient};
use crate::protocol::Content;
use crate::tool::{Ctx, DynamicArgs, Elicitation, ToolError, ToolResult};

use crate::server::core::handle::{ServerHandle, Shared, SignInPage, StartsWith};
use crate::server::replicas::Event;

use calls::held;
pub use calls::relay::ORIGIN_META;
use calls::relay::Relay;
pub use config::{
    AllowedTools, Approval, LABEL_SEPARATOR, McpTool, MountFileError, RequireApproval, ToolConfig,
    ToolFilter, ToolHints, read_mounts,
};
pub use user::REDIRECT_PATH;

/// How long a gateway's first `tools/list` (or `tools/call`) waits, at most, for the mounts
/// reachable at start to list their tools ([`Server::mount_wait`]).
///
/// [`Server::mount_wait`]: crate::server::Server::mount_wait
pub const DEFAULT_MOUNT_WAIT: Duration = Duration::from_secs(5);

/// The mounts' first sync: how many are still to have it, and until when it is waited for.
struct Gate {
    pending: watch::Sender<usize>,
    wait: Duration,
    /// Set when the mounts start.
    deadline: OnceLock<tokio::time::Instant>,
}

impl Gate {
    /// Whether requests go on at once: every mount has had its first sync, or the bound has
    /// passed.
    fn open(&self) -> bool {
        *self.pending.borrow() == 0
            || self
                .deadline
                .get()
                .is_some_and(|d| tokio::time::Instant::now() >= *d)
    }

    async fn settled(&self) {
        let Some(deadline) = self.deadline.get().copied() else {
            return;
        };
        let mut pending = self.pending.subscribe();
        if tokio::time::timeout_at(deadline, pending.wait_for(|n| *n == 0))
            .await
            .is_err()
        {
            tracing::warn!(
                pending = *self.pending.borrow(),
                wait_ms = self.wait.as_millis() as u64,
                "mounted servers have not listed their tools in time: answering without them (they join with list_changed)"
            );
        }
    }
}

/// One mounted server while the server runs.
pub(crate) struct Mount {
    config: McpTool,
    connect: Connect,
    client: RwLock<Option<McpClient>>,
    /// Our names of the remote tools registered now.
    names: Mutex<BTreeSet<String>>,
    /// Set when a call found the remote gone: the connection is remade.
    lost: Notify,
    up: AtomicBool,
    /// Remote calls held across the input rounds of 2026-07-28 requests (remotes that ask in
    /// the middle of a call).
    held: held::HeldCalls,
    /// The server this mount serves (set when it starts): its replicas reach held calls.
    server: OnceLock<Weak<Shared>>,
    /// How long a held call may wait for its next round: as long as a request state lives.
    hold_for: OnceLock<Duration>,
    /// Whether the first sync (or the first failure) was told to the gate.
    settled: AtomicBool,
    /// A digest of the remote's last list (keyed at random, so that a remote cannot make two
    /// lists look alike).
    digest: AtomicU64,
    digests: RandomState,
    /// The users of a mount that acts for each of them (`grant: authorization_code`); `None`:
    /// one connection for everyone.
    users: Option<user::Users>,
    /// Whether the mount's credentials are refused for good, and why (`refused`).
    refusal: refused::Refusal,
}

/// The user's answer to "run this remote tool?".
#[derive(Deserialize, JsonSchema)]
struct Approve {
    /// Run it?
    approve: bool,
}

impl Mount {
    /// A mount of `config`, its target and credentials resolved (the connection store
    /// included); an error names what is missing.
    pub(crate) fn new(
        config: McpTool,
        connections: Option<&std::path::Path>,
        redirects: &Arc<redirect::Redirects>,
    ) -> Result<Arc<Mount>, String> {
        let label = config.server_label.clone();
        let (connect, grant) = connection::target(&config, connections)?;
        let connection_id = config
            .project_connection_id
            .clone()
            .or_else(|| config.connector_id.clone());
        let users = grant.map(|grant| user::Users::new(&label, grant, redirects.clone()));
        Ok(Arc::new(Mount {
            config,
            connect,
            client: RwLock::new(None),
            names: Mutex::new(BTreeSet::new()),
            lost: Notify::new(),
            up: AtomicBool::new(false),
            held: held::HeldCalls::default(),
            server: OnceLock::new(),
            hold_for: OnceLock::new(),
            settled: AtomicBool::new(false),
            digest: AtomicU64::new(0),
            digests: RandomState::new(),
            users,
            refusal: refused::Refusal::new(connections, connection_id),
        }))
    }

    fn label(&self) -> &str {
        &self.config.server_label
    }

    /// The server this mount serves, while it runs.
    fn shared(&self) -> Option<Arc<Shared>> {
        self.server.get()?.upgrade()
    }

    /// This replica's name among the replicas (it names the holder of a held call).
    fn origin(&self) -> String {
        self.shared()
            .map(|s| s.replicas.origin().to_owned())
            .unwrap_or_default()
    }

    fn hold_for(&self) -> Duration {
        *self
            .hold_for
            .get_or_init(|| crate::server::DEFAULT_STATE_TTL)
    }

    /// The client of the connection now up, or the retryable error that says it is down.
    fn connected(&self) -> Result<McpClient, ToolError> {
        crate::sync::read(&self.client)
            .clone()
            .filter(|_| self.up.load(Ordering::SeqCst))
            .ok_or_else(|| match self.refusal.why() {
                Some(why) => refused::refused_error(self.label(), &why),
                None => unavailable(self.label(), "not connected"),
            })
    }

    /// Tells the gate this mount's first sync is done (or failed), once.
    fn settle(&self, gate: &Gate) {
        if !self.settled.swap(true, Ordering::SeqCst) {
            gate.pending.send_modify(|n| *n = n.saturating_sub(1));
        }
    }

    /// Connects, lists, follows changes, reconnects — for as long as the server runs.
    async fn run(self: Arc<Self>, server: ServerHandle, gate: Arc<Gate>) {
        let _ = self.hold_for.set(server.shared.state_key.ttl());
        let _ = self.server.set(Arc::downgrade(&server.shared));
        if self.users.is_some() {
            // Each user connects when they sign in: nothing to wait for at start.
            self.start_users(&server);
            self.settle(&gate);
            return;
        }
        let mut backoff = Duration::from_millis(250);
        let mut said = false;
        // The connection store's, read again when it changes after a refusal.
        let mut connect = self.connect.clone();
        loop {
            let handler: Arc<dyn ClientHandler> = Arc::new(Relay);
            match McpClient::connect_with(connect.clone(), handler).await {
                Ok(client) => {
                    backoff = Duration::from_millis(250);
                    said = false;
                    tracing::info!(mount = %self.label(), "connected to the mounted server");
                    self.accepted(&server);
                    *crate::sync::write(&self.client) = Some(client.clone());
                    self.up.store(true, Ordering::SeqCst);
                    // Followed from before the first list: a change announced while listing
                    // is not missed.
                    let mut changes = client.tool_changes();
                    let mut pause = RELIST_PAUSE;
                    loop {
                        let synced = self.sync(&server, &client).await;
                        self.settle(&gate);
                        match synced {
                            Err(e) => {
                                tracing::warn!(mount = %self.label(), error = %e, "the mounted server's tools could not be listed");
                                break;
                            }
                            // A change announced that changed nothing: the next list waits,
                            // longer each time, so a server that announces for ever costs
                            // little.
                            Ok(false) => {
                                pause = (pause * 2).min(RELIST_PAUSE_MAX);
                                tokio::select! {
                                    () = tokio::time::sleep(pause) => {}
                                    () = self.lost.notified() => break,
                                }
                            }
                            Ok(true) => pause = RELIST_PAUSE,
                        }
                        tokio::select! {
                            changed = changes.next() => if !changed { break },
                            () = self.lost.notified() => break,
                        }
                    }
                    self.up.store(false, Ordering::SeqCst);
                    client.close().await;
                }
                Err(e) => {
                    if let Some(why) = refused::permanent(&e) {
                        // Not tried again with the same credentials (RFC 6749 §5.2): the
                        // callers are told why until the store gives others.
                        self.refused(&server, why);
                        self.settle(&gate);
                        if let Some(again) = self.until_store_changes(&server).await {
                            connect = again;
                        }
                        (backoff, said) = (Duration::from_millis(250), false);
                        continue;
                    }
                    self.settle(&gate);
                    if !said {
                        tracing::warn!(mount = %self.label(), error = %e, "the mounted server is unavailable; retrying");
                        said = true;
                    }
                }
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(30));
        }
    }

    /// One forwarded call: approval first where required, then the remote call with this
    /// call's progress, cancellation and questions passed through.
    async fn forward(
        self: Arc<Self>,
        remote: &str,
        args: DynamicArgs,
        approval: bool,
    ) -> Result<ToolResult, ToolError> {
        let ctx = args.ctx.clone();
        let arguments = Value::Object(args.arguments);
        if approval {
            self.approve(&ctx, remote, &arguments).await?;
        }
        // A per-user call may be made twice (below): its arguments are kept for that.
        let again = self.users.is_some().then(|| arguments.clone());
        let mut result = self.call(remote, arguments, &ctx).await?;
        if let Some(arguments) = again
            && matches!(result, Err(ClientError::Unauthorized(_)))
        {
            // The user's tokens were refused for good: they sign in again, and the call is
            // made once more.
            tracing::debug!(mount = %self.label(), "a user's tokens were refused: they sign in again");
            self.disconnect(&ctx);
            result = self.call(remote, arguments, &ctx).await?;
        }
        match result {
            Ok(result) => Ok(to_result(result)),
            Err(ClientError::Unavailable(why)) => {
                self.lost_for(&ctx);
                Err(unavailable(self.label(), &why))
            }
            Err(e) if e.is_retryable() => {
                self.lost_for(&ctx);
                Err(unavailable(self.label(), &e.to_string()))
            }
            Err(e) => Err(ToolError::new(
                "REMOTE_ERROR",
                format!("`{}`: {e}", self.label()),
            )),
        }
    }

    /// The connection a call found gone is made again: the mount's, or the calling user's
    /// (with the tokens they have, on their next call).
    fn lost_for(self: &Arc<Self>, ctx: &Ctx) {
        if self.users.is_some() {
            self.disconnect(ctx);
        } else {
            self.lost.notify_one();
        }
    }

    /// The remote call itself, on the calling user's connection (signed in first if need be)
    /// or the mount's.
    async fn call(
        self: &Arc<Self>,
        remote: &str,
        arguments: Value,
        ctx: &Ctx,
    ) -> Result<Result<Value, ClientError>, ToolError> {
        let own = match &self.users {
            Some(_) => {
                let (client, tools) = self.user_client(ctx).await?;
                if !tools.contains_key(remote) {
                    return Err(ToolError::new(
                        "UNKNOWN_TOOL",
                        format!(
                            "the `{}` server does not list `{remote}` for this user",
                            self.label()
                        ),
                    ));
                }
                Some(client)
            }
            None => None,
        };
        // A retry going on with a held call needs no connection here: the call is held.
        if let Some(round) = ctx.rounds().filter(|r| held::holds(r)) {
            return self.call_held(remote, arguments, ctx, round, own).await;
        }
        let client = match own {
            Some(client) => client,
            None => self.connected()?,
        };
        Ok(match ctx.rounds() {
            // A remote speaking 2026-07-28 ends its call with its questions: nothing held.
            Some(round) if client.server().protocol_version.is_stateless() => {
                self.call_in_rounds(&client, remote, arguments, ctx, round)
                    .await?
            }
            Some(round) => {
                self.call_held(remote, arguments, ctx, round, Some(client))
                    .await?
            }
            None => client.call_with(remote, arguments, self.options(ctx)).await,
        })
    }

    /// Asks the user whether `remote` may run with `arguments`: an error unless they approve
    /// (or when they cannot be asked).
    async fn approve(&self, ctx: &Ctx, remote: &str, arguments: &Value) -> Result<(), ToolError> {
        let cannot = |why: &str| {
            ToolError::new(
                "APPROVAL_UNAVAILABLE",
                format!(
                    "`{remote}` needs the user's approval, and it could not be asked: {why}; nothing was sent to `{}`",
                    self.label()
                ),
            )
        };
        if !ctx.client().has_capability("elicitation") {
            return Err(cannot(
                "the client did not declare the `elicitation` capability",
            ));
        }
        let question = format!(
            "Allow the `{}` server to run `{remote}` with {}?",
            self.label(),
            crate::protocol::jsonrpc::json_string(arguments)
        );
        let answer = ctx
            .elicit::<Approve>(question)
            .await
            .map_err(|e| cannot(e.message()))?;
        if matches!(answer, Elicitation::Accept(Approve { approve: true })) {
            Ok(())
        } else {
            Err(ToolError::new(
                "NOT_APPROVED",
                format!(
                    "the user did not approve `{remote}`; nothing was sent to `{}`",
                    self.label()
                ),
            ))
        }
    }
}

fn unavailable(label: &str, why: &str) -> ToolError {
    ToolError::new(
        "REMOTE_UNAVAILABLE",
        format!("the `{label}` server is unavailable ({why}); try again shortly"),
    )
    .retryable(true)
}

/// A remote `CallToolResult` as this server's result (content blocks passed as they are).
fn to_result(mut result: Value) -> ToolResult {
    let content = match result.get_mut("content").map(Value::take) {
        Some(Value::Array(blocks)) => blocks.into_iter().map(Content::Raw).collect(),
        _ => Vec::new(),
    };
    ToolResult {
        content,
        structured_content: result.get_mut("structuredContent").map(|s| s.take().into()),
        is_error: result["isError"] == Value::Bool(true),
        // The remote's own identity (`io.modelcontextprotocol/…`) is not this server's.
        meta: match result.get_mut("_meta").map(Value::take) {
            Some(Value::Object(mut m)) => {
                m.retain(|k, _| !k.starts_with("io.modelcontextprotocol/"));
                (!m.is_empty()).then_some(m)
            }
            _ => None,
        },
        ..ToolResult::default()
    }
}

/// The mounts of a server, started once.
pub(crate) struct Mounts {
    pub(crate) list: Vec<Arc<Mount>>,
    apis: Vec<Arc<openapi::ApiMount>>,
    started: AtomicBool,
    gate: Arc<Gate>,
    /// The sign-ins of per-user mounts waiting for their users to come back.
    redirects: Arc<redirect::Redirects>,
}

impl StartsWith for Mounts {
    /// Starts every mount's connection (once), if a runtime is at hand.
    fn start(&self, server: &ServerHandle) {
        Mounts::start(self, server);
    }

    fn settling(&self) -> Option<Pin<Box<dyn Future<Output = ()> + Send + '_>>> {
        self.unsettled()
            .then(|| Box::pin(self.gate.settled()) as Pin<Box<dyn Future<Output = ()> + Send + '_>>)
    }

    fn unsettled(&self) -> bool {
        !self.gate.open()
    }

    fn redirect_paths(&self) -> Vec<String> {
        let mut paths: Vec<String> = self
            .list
            .iter()
            .filter_map(|m| m.users.as_ref().map(user::Users::redirect_path))
            .collect();
        paths.sort();
        paths.dedup();
        paths
    }

    fn sign_in_page<'a>(
        &'a self,
        query: &'a str,
        cookies: &'a str,
    ) -> Pin<Box<dyn Future<Output = SignInPage> + Send + 'a>> {
        Box::pin(self.redirects.page(query, cookies))
    }

    fn refused(&self, tool: &str) -> Option<String> {
        let mount = self.list.iter().find(|m| {
            tool.strip_prefix(m.label())
                .is_some_and(|rest| rest.starts_with(LABEL_SEPARATOR))
        })?;
        let why = mount.refusal.why()?;
        Some(
            refused::refused_error(mount.label(), &why)
                .message()
                .to_owned(),
        )
    }

    fn held(&self, server: &ServerHandle, event: Event) {
        let (to, mount) = match &event {
            Event::HeldRound { to, mount, .. } | Event::HeldCancel { to, mount, .. } => {
                (to, Some(mount))
            }
            Event::HeldStep { to, .. } => (to, None),
            _ => return,
        };
        if *to != server.shared.replicas.origin() {
            return;
        }
        match mount {
            Some(label) => {
                if let Some(m) = self.list.iter().find(|m| m.label() == label) {
                    m.on_held(event);
                }
            }
            // The word on a round this replica forwarded: the mount that waits for it takes it.
            None => {
                for m in &self.list {
                    m.on_held(event.clone());
                }
            }
        }
    }
}

impl Mounts {
    pub(crate) fn new(list: Vec<Arc<Mount>>, wait: Duration) -> Self {
        let pending = list.len();
        Mounts {
            list,
            apis: Vec::new(),
            started: AtomicBool::new(false),
            redirects: Arc::default(),
            gate: Arc::new(Gate {
                pending: watch::Sender::new(pending),
                wait,
                deadline: OnceLock::new(),
            }),
        }
    }

    /// Starts every mount's connection (once), if a runtime is at hand.
    pub(crate) fn start(&self, server: &ServerHandle) {
        let none = self.list.is_empty() && self.apis.is_empty();
        if none || tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        if self.started.swap(true, Ordering::SeqCst) {
            return;
        }
        let _ = self
            .gate
            .deadline
            .set(tokio::time::Instant::now() + self.gate.wait);
        self.redirects.attach(server.shared.replicas.keys().clone());
        for mount in &self.list {
            tokio::spawn(mount.clone().run(server.clone(), self.gate.clone()));
        }
        openapi::start(&self.apis, server, &self.gate);
    }
}

impl std::fmt::Debug for Mounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let labels: Vec<&str> = self.list.iter().map(|m| m.label()).collect();
        f.debug_struct("Mounts").field("labels", &labels).finish()
    }
}
