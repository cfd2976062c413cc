//! Mounts that act for each calling user (a connection with `grant: authorization_code`): a
//! user signs in to the remote's authorization server through URL-mode elicitation, the
//! authorization server sends them back to the gateway's own HTTP endpoint, and the tokens,
//! the connection and the tool list that follow are that user's alone.
//!
//! A user is known by [`Ctx::user_key`] (the authenticated subject, or the one local client
//! of a stdio connection, who comes back to a loopback listener instead: `loopback`). Until
//! they sign in, they see one tool of the mount, `label__sign_in`; a call of it (or of any of
//! the mount's tools) asks them to open the authorization page, and waits for them. The sign-in runs in a task of its own, so that a 2026-07-28 call, which
//! ends with its question and runs again with the answer, finds the same sign-in (the same
//! page) when it comes back.

mod loopback;
mod tools;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;

use crate::client::oauth::OAuthClient;
use crate::client::{ClientHandler, McpClient};
use crate::sync::lock;
use crate::tool::{Ctx, DynamicArgs, DynamicTool, Elicitation, ToolError, ToolResult};

use super::config::LABEL_SEPARATOR;
use super::connection::UserGrant;
use super::kept::Kept;
use super::redirect::{Redirects, SIGN_IN_WAIT, SignInAgent};
use super::seal::SealKey;
use super::tokens::{UserTokens, new_id};
use super::{Mount, Relay, ServerHandle};

/// The path the gateway receives its users on, when their connection names no `redirect_uri`.
pub const REDIRECT_PATH: &str = "/oauth/callback";

/// The name of the tool that signs a user in, after the mount's label.
pub(super) const SIGN_IN: &str = "sign_in";

/// How long the authorization server may take to be found (its metadata, a registration)
/// before the page can be shown.
const DISCOVERY_WAIT: Duration = Duration::from_secs(30);

/// The most users one mount keeps a connection for; beyond, the one unused the longest is
/// closed (their tokens stay: they reconnect without signing in again).
const MAX_USERS: usize = 1000;

/// The key under which a 2026-07-28 round carries the sign-in its answer was given for.
const SIGN_IN_MEMO: &str = "sign-in";

/// A sign-in that failed: which one (its random id), and why.
#[derive(Clone)]
struct Failed {
    id: Arc<str>,
    why: String,
}

/// Where a user is with a per-user mount.
#[derive(Clone)]
enum Phase {
    /// Not signed in, and no sign-in under way (or the last one failed).
    Out(Option<Failed>),
    /// A sign-in is under way (its random id); its page, once the authorization server is
    /// found.
    SigningIn(Arc<str>, Option<String>),
    /// Signed in: the user's connection and the remote tools it lists (as allowed).
    In(McpClient, Arc<BTreeMap<String, Value>>),
}

/// One user of a per-user mount.
struct User {
    phase: watch::Sender<Phase>,
    /// The remote tools listed to the user: set before they count as signed in, so that the
    /// list their sign-in's answer sends them to holds them.
    listed: Mutex<Arc<BTreeMap<String, Value>>>,
    /// The sign-in task under way, to stop when the user declines.
    task: Mutex<Option<tokio::task::AbortHandle>>,
    /// Which sign-in the phase belongs to: a connection signed out (or a sign-in given up)
    /// no longer changes it.
    generation: AtomicU64,
    used: AtomicU64,
}

/// The users of one mount, and what their sign-ins share.
pub(super) struct Users {
    grant: UserGrant,
    /// Registrations (one per authorization server) and every user's tokens, by user, with
    /// the account each user signed in as.
    tokens: Arc<UserTokens>,
    redirects: Arc<Redirects>,
    table: Mutex<HashMap<String, Arc<User>>>,
    clock: AtomicU64,
    /// Why nobody can sign in (the sign-ins' file cannot be kept as asked).
    broken: OnceLock<String>,
}

impl Users {
    pub(super) fn new(label: &str, grant: UserGrant, redirects: Arc<Redirects>) -> Self {
        let kept = Kept::new(label, grant.sign_in_store.clone());
        Users {
            grant,
            tokens: Arc::new(UserTokens::new(kept)),
            redirects,
            table: Mutex::new(HashMap::new()),
            clock: AtomicU64::new(0),
            broken: OnceLock::new(),
        }
    }

    /// The path users come back on.
    pub(super) fn redirect_path(&self) -> String {
        self.grant
            .redirect_uri
            .as_deref()
            .map_or(REDIRECT_PATH, super::connection::redirect_path)
            .to_owned()
    }

    /// Where users come back to: the connection's `redirect_uri`, else the address the
    /// gateway serves HTTP on.
    fn redirect_uri(&self, label: &str, server: &ServerHandle) -> Result<String, ToolError> {
        if !server.shared.receives_redirects.load(Ordering::SeqCst) {
            return Err(ToolError::new(
                "SIGN_IN_UNAVAILABLE",
                format!(
                    "signing in to `{label}` needs the gateway served over HTTP, where the authorization server sends the user back to"
                ),
            ));
        }
        if let Some(uri) = &self.grant.redirect_uri {
            return Ok(uri.clone());
        }
        server
            .shared
            .http_origin
            .get()
            .map(|origin| format!("{origin}{REDIRECT_PATH}"))
            .ok_or_else(|| {
                ToolError::new(
                    "SIGN_IN_UNAVAILABLE",
                    format!(
                        "signing in to `{label}` needs the gateway's address for the authorization server to send the user back to: serve it over HTTP on a named address, or give its connection a `redirect_uri`"
                    ),
                )
            })
    }

    /// The user `key`, kept from before or new (the one unused the longest closed when the
    /// table is full).
    fn user(&self, key: &str) -> Result<Arc<User>, ToolError> {
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        let mut table = lock(&self.table);
        if let Some(user) = table.get(key) {
            user.used.store(now, Ordering::Relaxed);
            return Ok(user.clone());
        }
        if table.len() >= MAX_USERS {
            let oldest = table
                .iter()
                .filter(|(_, u)| !matches!(*u.phase.borrow(), Phase::SigningIn(..)))
                .min_by_key(|(_, u)| u.used.load(Ordering::Relaxed))
                .map(|(k, _)| k.clone());
            let Some(oldest) = oldest else {
                return Err(ToolError::new(
                    "GATEWAY_BUSY",
                    format!("{MAX_USERS} users are signing in already; try again shortly"),
                )
                .retryable(true));
            };
            if let Some(user) = table.remove(&oldest)
                && let Phase::In(client, _) = &*user.phase.borrow()
            {
                let client = client.clone();
                tokio::spawn(async move { client.close().await });
            }
        }
        let user = Arc::new(User {
            phase: watch::Sender::new(Phase::Out(None)),
            listed: Mutex::default(),
            task: Mutex::new(None),
            generation: AtomicU64::new(0),
            used: AtomicU64::new(now),
        });
        table.insert(key.to_owned(), user.clone());
        Ok(user)
    }

    /// Whether the user `key` is signed in.
    fn signed_in(&self, key: Option<&str>) -> bool {
        key.and_then(|k| lock(&self.table).get(k).cloned())
            .is_some_and(|u| matches!(*u.phase.borrow(), Phase::In(..)))
    }

    /// Whether the user `key`'s connection lists `remote`.
    fn lists(&self, key: Option<&str>, remote: &str) -> bool {
        key.and_then(|k| lock(&self.table).get(k).cloned())
            .is_some_and(|u| lock(&u.listed).contains_key(remote))
    }

    /// Every signed-in user's tools, each name once (the first definition seen).
    fn union(&self) -> BTreeMap<String, Value> {
        let users: Vec<Arc<User>> = lock(&self.table).values().cloned().collect();
        let mut all = BTreeMap::new();
        for user in users {
            let listed = lock(&user.listed).clone();
            for (name, def) in listed.iter() {
                all.entry(name.clone()).or_insert_with(|| def.clone());
            }
        }
        all
    }
}

impl Mount {
    fn users(&self) -> &Users {
        self.users.as_ref().expect("a per-user mount")
    }

    /// Registers the sign-in tool, listed to the users not signed in.
    pub(super) fn start_users(self: &Arc<Self>, server: &ServerHandle) {
        let shared = &server.shared;
        let key = SealKey::from_state_key(&shared.state_key);
        if let Err(why) =
            self.users()
                .tokens
                .kept()
                .attach(shared.replicas.keys(), shared.replicas.shared(), key)
        {
            tracing::error!(mount = %self.label(), problem = %why, "nobody can sign in");
            let _ = self.users().broken.set(why);
        }
        let name = format!("{}{LABEL_SEPARATOR}{SIGN_IN}", self.label());
        let mount = self.clone();
        let shown = self.clone();
        let tool = DynamicTool::new(
            name,
            format!(
                "Sign in to the `{}` server, to use its tools as yourself: you are asked to open its sign-in page. Its tools are listed once you have signed in.",
                self.label()
            ),
            move |args: DynamicArgs| {
                let mount = mount.clone();
                async move { mount.sign_in_tool(&args.ctx).await }
            },
        )
        .shown_to(move |key| !shown.users().signed_in(key));
        for problem in server.update_dynamic_tools(vec![tool], &[]) {
            tracing::warn!(mount = %self.label(), %problem, "the sign-in tool could not be added");
        }
    }

    async fn sign_in_tool(self: Arc<Self>, ctx: &Ctx) -> Result<ToolResult, ToolError> {
        let (_, tools) = self.user_client(ctx).await?;
        let mut names: Vec<String> = tools
            .keys()
            .map(|t| format!("{}{LABEL_SEPARATOR}{t}", self.label()))
            .collect();
        names.sort();
        Ok(ToolResult::text(format!(
            "Signed in to `{}`. Its tools: {}.",
            self.label(),
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        )))
    }

    /// The calling user's connection: theirs if signed in, else after they sign in (asked
    /// through URL-mode elicitation). An error says why there is none.
    pub(super) async fn user_client(
        self: &Arc<Self>,
        ctx: &Ctx,
    ) -> Result<(McpClient, Arc<BTreeMap<String, Value>>), ToolError> {
        let label = self.label();
        let key = ctx.user_key().ok_or_else(|| {
            ToolError::new(
                "SIGN_IN_UNAVAILABLE",
                format!(
                    "the `{label}` server acts for each user, and this call comes from nobody known: the gateway needs authentication for it"
                ),
            )
        })?;
        if let Some(why) = self.users().broken.get() {
            return Err(ToolError::new("SIGN_IN_UNAVAILABLE", why.clone()));
        }
        let user = self.users().user(&key)?;
        // The sign-in this call has seen under way: in 2026-07-28, the one the round's answer
        // was given for (carried in the sealed request state).
        let mut seen: Option<Arc<str>> = ctx
            .rounds()
            .and_then(|round| round.recall(SIGN_IN_MEMO))
            .and_then(|id| id.as_str().map(Arc::from));
        let mut phase = user.phase.subscribe();
        loop {
            let now = phase.borrow_and_update().clone();
            match now {
                Phase::In(client, tools) => return Ok((client, tools)),
                // The sign-in this call waited for (or answered) failed: said once, and the
                // next call starts another (never one whose page the user has not seen).
                Phase::Out(Some(failed)) if seen.as_deref() == Some(&*failed.id) => {
                    user.phase.send_if_modified(|p| {
                        let same = matches!(p, Phase::Out(Some(f)) if f.id == failed.id);
                        if same {
                            *p = Phase::Out(None);
                        }
                        same
                    });
                    return Err(ToolError::new(
                        "SIGN_IN_FAILED",
                        format!("signing in to `{label}` failed: {}", failed.why),
                    ));
                }
                Phase::Out(_) => self.start_sign_in(ctx, &key, &user)?,
                Phase::SigningIn(id, None) => {
                    seen = Some(id);
                    if tokio::time::timeout(DISCOVERY_WAIT, phase.changed())
                        .await
                        .is_err()
                    {
                        return Err(ToolError::new(
                            "SIGN_IN_FAILED",
                            format!(
                                "the authorization server of `{label}` could not be reached within {} s",
                                DISCOVERY_WAIT.as_secs()
                            ),
                        )
                        .retryable(true));
                    }
                }
                Phase::SigningIn(id, Some(page)) => {
                    return self.ask_user(ctx, &user, &id, &page).await;
                }
            }
        }
    }

    /// Shows the user the page and waits until they have signed in.
    async fn ask_user(
        self: &Arc<Self>,
        ctx: &Ctx,
        user: &Arc<User>,
        id: &Arc<str>,
        page: &str,
    ) -> Result<(McpClient, Arc<BTreeMap<String, Value>>), ToolError> {
        let label = self.label();
        if ctx.client().capabilities["elicitation"]
            .get("url")
            .is_none()
        {
            // Over stdio the page is the user's own (a loopback listener): given in the error.
            if loopback::applies(
                &ctx.user_key().unwrap_or_default(),
                ctx.state.conn().server(),
            ) {
                return Err(loopback::open_and_call_again(label, page));
            }
            return Err(ToolError::new(
                "SIGN_IN_UNAVAILABLE",
                format!(
                    "signing in to `{label}` needs URL-mode elicitation, which this client did not declare (capability `elicitation.url`)"
                ),
            ));
        }
        tracing::debug!(mount = %label, "the user is asked to sign in");
        // In 2026-07-28 the answer is named after this sign-in: an "accept" given for the page
        // of a sign-in that is over is never taken for another's (which the user has not seen).
        if let Some(round) = ctx.rounds() {
            round.remember(SIGN_IN_MEMO, Value::String(id.to_string()));
        }
        let key = format!("sign-in-{id}");
        let asked = ctx
            .input(&key)
            .elicit_url(
                format!("Sign in to the `{label}` server to use its tools as yourself."),
                page,
            )
            .await?;
        if asked.answer != Elicitation::Accept(()) {
            user.give_up();
            return Err(ToolError::new(
                "SIGN_IN_DECLINED",
                format!("the user did not sign in to `{label}`; nothing was sent to it"),
            ));
        }
        let mut phase = user.phase.subscribe();
        let done = tokio::time::timeout(
            SIGN_IN_WAIT,
            phase.wait_for(|p| !matches!(p, Phase::SigningIn(..))),
        )
        .await;
        let now = match done {
            Ok(Ok(now)) => now.clone(),
            _ => {
                user.give_up();
                return Err(ToolError::new(
                    "SIGN_IN_FAILED",
                    format!(
                        "the user did not sign in to `{label}` within {} s",
                        SIGN_IN_WAIT.as_secs()
                    ),
                ));
            }
        };
        match now {
            Phase::In(client, tools) => {
                ctx.elicitation_complete(&asked.elicitation_id);
                Ok((client, tools))
            }
            Phase::Out(failed) => Err(ToolError::new(
                "SIGN_IN_FAILED",
                format!(
                    "signing in to `{label}` failed: {}",
                    failed
                        .as_ref()
                        .map_or("it was given up", |f| f.why.as_str())
                ),
            )),
            Phase::SigningIn(..) => Err(ToolError::new(
                "SIGN_IN_FAILED",
                format!("signing in to `{label}` did not end"),
            )),
        }
    }

    /// Starts the sign-in of `user` in a task of its own.
    fn start_sign_in(
        self: &Arc<Self>,
        ctx: &Ctx,
        key: &str,
        user: &Arc<User>,
    ) -> Result<(), ToolError> {
        let users = self.users();
        let server = ctx.state.conn().server().clone();
        // Over stdio, the user comes back to a listener of this sign-in's own.
        let (redirect_uri, listener) = users.redirect_to(self.label(), key, &server)?;
        let id: Arc<str> = Arc::from(new_id()?);
        let started = user.phase.send_if_modified(|p| {
            if matches!(p, Phase::Out(_)) {
                *p = Phase::SigningIn(id.clone(), None);
                true
            } else {
                false
            }
        });
        if !started {
            return Ok(());
        }
        let generation = user.generation.fetch_add(1, Ordering::SeqCst) + 1;
        tracing::debug!(mount = %self.label(), user = %key, "a sign-in starts");
        let agent = Arc::new(SignInAgent {
            redirect_uri,
            redirects: users.redirects.clone(),
            show: {
                let (user, id) = (user.clone(), id.clone());
                let (label, open) = (self.label().to_owned(), users.redirects.open_browser());
                let stdio = listener.is_some();
                Box::new(move |page: &str| {
                    if stdio {
                        loopback::tell(&label, page, open);
                    }
                    user.set(
                        generation,
                        Phase::SigningIn(id.clone(), Some(page.to_owned())),
                    );
                })
            },
            open: AtomicBool::new(true),
            outcome: Mutex::new(None),
        });
        users.tokens.begin(key);
        let mut oauth = OAuthClient::authorization_code(agent.clone())
            .principal(key)
            .store(users.tokens.clone())
            .client_name(format!("mcp-tool gateway ({})", self.label()));
        if let Some(id) = &users.grant.client_id {
            oauth = oauth.client_id(id);
        }
        if let Some(secret) = &users.grant.client_secret {
            oauth = oauth.client_secret(secret);
        }
        if let Some(issuer) = &users.grant.issuer {
            oauth = oauth.issuer(issuer);
        }
        if let Some(scopes) = &users.grant.scopes {
            oauth = oauth.scopes(scopes.iter().cloned());
        }
        let connect = self.connect.clone().oauth(oauth);
        let (mount, user_now, key) = (self.clone(), user.clone(), key.to_owned());
        let failed = {
            let id = id.clone();
            move |why: String| Phase::Out(Some(Failed { id, why }))
        };
        let task = tokio::spawn(async move {
            // What the user signed in with before (here, on another replica, or before a
            // restart): its tokens are used, and nobody is asked.
            mount.users().tokens.kept().load(&key).await;
            let handler: Arc<dyn ClientHandler> = Arc::new(Relay);
            let connected = tokio::time::timeout(
                SIGN_IN_WAIT + DISCOVERY_WAIT,
                McpClient::connect_with(connect, handler),
            )
            .await;
            agent.open.store(false, Ordering::SeqCst);
            // The redirect came back, or never will: the loopback listener closes.
            drop(listener);
            // Signed in only once the exchange succeeded and the account is the user's own.
            let checked = match connected {
                Ok(Ok(client)) => match mount.users().tokens.check(&key) {
                    Ok(()) => Ok(client),
                    Err(why) => {
                        client.close().await;
                        Err(why)
                    }
                },
                Ok(Err(e)) => Err(e.to_string()),
                Err(_) => Err("it took too long".to_owned()),
            };
            match checked {
                Ok(client) => {
                    let agent = Some(agent);
                    let at = (generation, id, agent);
                    mount.follow(server, user_now, client, at).await;
                }
                Err(why) => {
                    tracing::info!(mount = %mount.label(), error = %why, "a user's sign-in failed");
                    agent.finish(Err(why.clone()));
                    user_now.set(generation, failed(why));
                }
            }
        });
        if let Some(before) = lock(&user.task).replace(task.abort_handle()) {
            before.abort();
        }
        Ok(())
    }

    /// Drops the calling user's connection: their next call connects again with the tokens
    /// they have, or asks them to sign in when those were refused (the authorization flow
    /// forgets refused tokens).
    pub(super) fn disconnect(self: &Arc<Self>, ctx: &Ctx) {
        let Some(key) = ctx.user_key() else {
            return;
        };
        // Taken out of the table first: the table's lock is not held while the tools are
        // registered again (which reads every user).
        let user = lock(&self.users().table).get(&key).cloned();
        if let Some(user) = user {
            user.generation.fetch_add(1, Ordering::SeqCst);
            *lock(&user.listed) = Arc::default();
            let was = user.phase.send_replace(Phase::Out(None));
            if let Phase::In(client, _) = was {
                tokio::spawn(async move { client.close().await });
            }
            self.register_users_tools(ctx.state.conn().server());
        }
    }
}

impl User {
    /// Whether the sign-in `generation` is still the user's own.
    fn current(&self, generation: u64) -> bool {
        self.generation.load(Ordering::SeqCst) == generation
    }

    /// Sets the phase, if the sign-in `generation` is still the user's own.
    fn set(&self, generation: u64, phase: Phase) {
        self.phase.send_if_modified(|p| {
            let current = self.current(generation);
            if current {
                *p = phase;
            }
            current
        });
    }

    /// Stops a sign-in the user declined or never finished.
    fn give_up(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        if let Some(task) = lock(&self.task).take() {
            task.abort();
        }
        self.phase.send_if_modified(|p| {
            if matches!(p, Phase::SigningIn(..)) {
                *p = Phase::Out(None);
                true
            } else {
                false
            }
        });
    }
}
