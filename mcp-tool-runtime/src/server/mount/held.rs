//! Remote calls held across the input rounds of a 2026-07-28 request.
//!
//! In 2026-07-28 a call that needs the client's answer ends with an input-required result,
//! and the client sends the call again with the answer: the tool runs again from the start.
//! A forwarded call cannot: the remote server asked its question in the middle of *its* call,
//! and a new remote call would ask again (or ask something else). So the gateway keeps the
//! remote call running in a task of its own once it asks something, under a random id kept in
//! the sealed request state (which the client cannot change, and which opens only for the same
//! principal, tool and arguments). Each round of the request drives the held call: it passes
//! the answers the round brought to the questions waiting for them, and either ends with the
//! remote's result or asks the remote's next questions (all those asked together, in one
//! round).
//!
//! A held call lives until its result is taken, until the request is cancelled, or until no
//! round has come for it for as long as a request state stays valid; then the remote call is
//! cancelled. At most [`MAX_HELD`] calls per mount wait so, and at most
//! [`MAX_HELD_PER_CLIENT`] of them for one client (a subject, else an address), so that one
//! client cannot take them all. A retry that reaches a replica
//! other than the one holding its call (or comes after the call expired) gets a clear,
//! retryable error: the tool is called again from the start.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::client::{
    CallOptions, CallProgress, Canceller, ClientError, ClientFuture, ClientHandler, McpClient,
};
use crate::protocol::{RpcError, code};
use crate::tool::input::InputRound;
use crate::tool::{Ctx, ToolError};

use super::{Mount, Relay, marked};

/// The most calls of one mount that may wait for their client's answers at once.
pub(crate) const MAX_HELD: usize = 1024;

/// The most of those one client may hold.
pub(crate) const MAX_HELD_PER_CLIENT: usize = 64;

/// The name the held call's id is kept under in the request state.
const MEMO: &str = "relay";

/// The held calls of one mount, by id, and how many each client holds.
#[derive(Default)]
pub(super) struct HeldCalls {
    calls: Mutex<Calls>,
}

#[derive(Default)]
struct Calls {
    by_id: HashMap<String, Arc<Held>>,
    per_client: HashMap<Arc<str>, usize>,
}

/// Why a call could not be held.
enum Full {
    /// The mount holds [`MAX_HELD`] calls.
    Mount,
    /// The client holds [`MAX_HELD_PER_CLIENT`].
    Client,
}

impl HeldCalls {
    fn get(&self, id: &str) -> Option<Arc<Held>> {
        lock(&self.calls).by_id.get(id).cloned()
    }

    fn remove(&self, id: &str) {
        let mut calls = lock(&self.calls);
        if let Some(held) = calls.by_id.remove(id)
            && let Some(n) = calls.per_client.get_mut(&held.client)
        {
            *n -= 1;
            if *n == 0 {
                calls.per_client.remove(&held.client);
            }
        }
    }

    /// Lists `held` under `id`, unless the mount or its client holds as many as it may.
    fn insert(&self, id: &str, held: &Arc<Held>) -> Result<(), Full> {
        let mut calls = lock(&self.calls);
        if calls.by_id.contains_key(id) {
            return Ok(());
        }
        if calls.by_id.len() >= MAX_HELD {
            return Err(Full::Mount);
        }
        let mine = calls.per_client.entry(held.client.clone()).or_default();
        if *mine >= MAX_HELD_PER_CLIENT {
            return Err(Full::Client);
        }
        *mine += 1;
        calls.by_id.insert(id.to_owned(), held.clone());
        Ok(())
    }
}

/// What the remote call tells the rounds that drive it.
enum Event {
    /// The remote asks its client something.
    Question {
        method: String,
        params: Value,
        reply: oneshot::Sender<Result<Value, RpcError>>,
    },
    /// The remote call ended.
    Done(Result<Value, ClientError>),
}

/// A question of the remote waiting for its answer, under the input key the client sees.
struct Question {
    key: String,
    method: String,
    params: Value,
    reply: oneshot::Sender<Result<Value, RpcError>>,
}

/// What a round works through, one round at a time.
struct Drive {
    events: mpsc::Receiver<Event>,
    open: Vec<Question>,
    asked: u32,
}

/// One remote call held across rounds.
struct Held {
    drive: tokio::sync::Mutex<Drive>,
    /// The call of the round that drives it now: its progress goes there.
    round: Mutex<Option<Ctx>>,
    /// When the last round ended waiting for input (`None` while a round drives it).
    parked: Mutex<Option<Instant>>,
    /// Cancels the remote call.
    stop: Canceller,
    /// The client it is held for (its share).
    client: Arc<str>,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Passes the remote's questions to the rounds.
struct Asker {
    events: mpsc::Sender<Event>,
}

impl ClientHandler for Asker {
    fn capabilities(&self) -> Value {
        Relay.capabilities()
    }

    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> ClientFuture<'a, Result<Value, RpcError>> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            let question = Event::Question {
                method: method.to_owned(),
                params,
                reply,
            };
            let given_up = || {
                RpcError::new(
                    code::INTERNAL_ERROR,
                    "the gateway's client gave the call up before answering",
                )
            };
            self.events.send(question).await.map_err(|_| given_up())?;
            answer.await.map_err(|_| given_up())?
        })
    }
}

/// Ends a round's hold on a call: kept for the next round when the round waits for input,
/// given up (the remote call cancelled) when the request went away otherwise.
struct Leave<'a> {
    calls: &'a HeldCalls,
    id: &'a str,
    held: &'a Held,
    round: &'a InputRound,
    done: bool,
}

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        *lock(&self.held.round) = None;
        if !self.done && self.round.waited() {
            *lock(&self.held.parked) = Some(Instant::now());
        } else {
            self.calls.remove(self.id);
            if !self.done {
                self.held.stop.cancel();
            }
        }
    }
}

impl Mount {
    /// Forwards a call of a 2026-07-28 request — or, on a retry, goes on with the remote call
    /// an earlier round held — until the remote answers or asks something the round cannot
    /// answer (the round then ends waiting for input).
    pub(super) async fn call_in_rounds(
        self: &Arc<Self>,
        remote: &str,
        arguments: Value,
        ctx: &Ctx,
        round: &InputRound,
        own: Option<McpClient>,
    ) -> Result<Result<Value, ClientError>, ToolError> {
        let (id, held) = match round.recall(MEMO) {
            Some(Value::String(id)) => match self.held.get(&id) {
                Some(held) => (id, held),
                None => return Err(gone(self.label())),
            },
            Some(_) => return Err(gone(self.label())),
            None => {
                let client = match own {
                    Some(client) => client,
                    None => self.connected()?,
                };
                let (id, held) = self.start(&client, remote, arguments, ctx.share_key())?;
                round.remember(MEMO, Value::String(id.clone()));
                (id, held)
            }
        };
        *lock(&held.round) = Some(ctx.clone());
        *lock(&held.parked) = None;
        let mut leave = Leave {
            calls: &self.held,
            id: &id,
            held: &held,
            round,
            done: false,
        };
        let mut drive = held.drive.lock().await;
        loop {
            if !drive.open.is_empty() {
                // Every open question goes in this round; an answer the round has returns at
                // once, and the first one it has not ends the round.
                let answers = join_all(drive.open.iter().map(|q| {
                    ctx.input(&q.key)
                        .relay(&q.method, marked(self.label(), &q.method, q.params.clone()))
                }))
                .await;
                for (question, answer) in drive.open.drain(..).zip(answers) {
                    let answer = answer
                        .map_err(|e| RpcError::new(code::INTERNAL_ERROR, e.message().to_owned()));
                    let _ = question.reply.send(answer);
                }
            }
            let mut next = drive.events.recv().await;
            loop {
                match next {
                    Some(Event::Question {
                        method,
                        params,
                        reply,
                    }) => {
                        drive.asked += 1;
                        let key = format!("{}/{}", self.label(), drive.asked);
                        drive.open.push(Question {
                            key,
                            method,
                            params,
                            reply,
                        });
                    }
                    Some(Event::Done(result)) => {
                        leave.done = true;
                        return Ok(result);
                    }
                    None => {
                        leave.done = true;
                        return Ok(Err(ClientError::Unavailable(
                            "the remote call ended without an answer".into(),
                        )));
                    }
                }
                // Questions asked together go in one round.
                match drive.events.try_recv() {
                    Ok(event) => next = Some(event),
                    Err(_) => break,
                }
            }
            if let Err(full) = self.held.insert(&id, &held) {
                leave.done = true;
                let why = match full {
                    Full::Mount => format!(
                        "{MAX_HELD} calls to the `{}` server wait for their clients' answers already; try again shortly",
                        self.label()
                    ),
                    Full::Client => format!(
                        "this client has {MAX_HELD_PER_CLIENT} calls to the `{}` server waiting for its answers already, the most one client may: answer or cancel some",
                        self.label()
                    ),
                };
                return Err(ToolError::new("GATEWAY_BUSY", why).retryable(true));
            }
        }
    }

    /// Starts the remote call in a task of its own, which ends it when it was held unanswered
    /// for longer than a request state lives.
    fn start(
        self: &Arc<Self>,
        client: &McpClient,
        remote: &str,
        arguments: Value,
        client_key: String,
    ) -> Result<(String, Arc<Held>), ToolError> {
        let id = random_id()?;
        let (events, receiver) = mpsc::channel(16);
        let held = Arc::new(Held {
            drive: tokio::sync::Mutex::new(Drive {
                events: receiver,
                open: Vec::new(),
                asked: 0,
            }),
            round: Mutex::new(None),
            parked: Mutex::new(None),
            stop: Canceller::new(),
            client: client_key.into(),
        });
        let progress_to = Arc::downgrade(&held);
        let options = CallOptions {
            progress: Some(Box::new(move |p: CallProgress| {
                let Some(held) = progress_to.upgrade() else {
                    return;
                };
                if let Some(ctx) = lock(&held.round).as_ref() {
                    ctx.progress(p.progress, p.total, p.message.as_deref().unwrap_or(""));
                }
            })),
            cancel: Some(held.stop.token()),
            handler: Some(Arc::new(Asker {
                events: events.clone(),
            })),
            meta: None,
        };
        let (client, remote) = (client.clone(), remote.to_owned());
        let (watched, mount) = (Arc::downgrade(&held), Arc::downgrade(self));
        let (ttl, key) = (self.hold_for(), id.clone());
        tokio::spawn(async move {
            let call = client.call_with(&remote, arguments, options);
            tokio::pin!(call);
            let check = (ttl / 4).clamp(Duration::from_millis(50), Duration::from_secs(60));
            loop {
                tokio::select! {
                    result = &mut call => {
                        let _ = events.send(Event::Done(result)).await;
                        return;
                    }
                    () = tokio::time::sleep(check) => {
                        if expired(&watched, ttl) {
                            if let Some(mount) = mount.upgrade() {
                                tracing::debug!(mount = %mount.label(), "a held call waited too long for its client; cancelled");
                                mount.held.remove(&key);
                            }
                            return;
                        }
                    }
                }
            }
        });
        Ok((id, held))
    }
}

/// Whether the held call is gone, or parked for longer than `ttl`.
fn expired(held: &Weak<Held>, ttl: Duration) -> bool {
    let Some(held) = held.upgrade() else {
        return true;
    };
    lock(&held.parked).is_some_and(|at| at.elapsed() >= ttl)
}

/// The error of a retry whose held call is no longer here.
fn gone(label: &str) -> ToolError {
    ToolError::new(
        "REMOTE_CALL_GONE",
        format!(
            "the call to the `{label}` server that these answers belong to is no longer held here (it expired, or another replica holds it); call the tool again"
        ),
    )
    .retryable(true)
}

fn random_id() -> Result<String, ToolError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| ToolError::new("REMOTE_ERROR", format!("no randomness: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
