//! Remote calls held across the input rounds of a 2026-07-28 request, for a mounted server
//! that asks its questions in the middle of its call (one speaking 2025-11-25; a remote
//! speaking 2026-07-28 needs nothing held, see `rounds`).
//!
//! In 2026-07-28 a call that needs the client's answer ends with an input-required result,
//! and the client sends the call again with the answer: the tool runs again from the start.
//! A call forwarded to such a remote cannot: the remote asked in the middle of *its* call, and
//! a new remote call would ask again (or ask something else). So the gateway keeps the remote
//! call running in a task of its own once it asks something, under a random id. The id, the
//! replica holding the call and the questions still open travel in the sealed request state
//! (which the client cannot change, and which opens only for the same principal, tool and
//! arguments). Each round takes the client's answers to those questions — on whichever
//! replica it lands — to the held call, which either ends with the remote's result or asks
//! its next questions (all those asked together, in one round).
//!
//! A round that reaches a replica other than the holder is forwarded to it through the
//! replicas' shared state (`Event::HeldRound`): the holder says at once that it took the
//! round (a holder silent for [`TAKEN_WITHIN`] is taken for gone), then how the round went,
//! within as long as a held call may wait (the remote's progress during a forwarded round stays
//! on the holder). `REMOTE_CALL_GONE` so means only that the call ended or expired, or that
//! the replica holding it stopped.
//!
//! A held call lives until its result is taken, until the request is cancelled, or until no
//! round has come for it for as long as a request state stays valid; then the remote call is
//! cancelled. At most [`MAX_HELD`] calls per mount wait so, and at most
//! [`MAX_HELD_PER_CLIENT`] of them for one client (a subject, else an address): the client's
//! share is taken before the remote hears of the call, so that one client's calls never reach
//! the remote's own limits, which would fail everyone's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::client::{
    CallOptions, CallProgress, Canceller, ClientError, ClientFuture, ClientHandler, McpClient,
};
use crate::protocol::{RpcError, code};
use crate::server::replicas::{Event, HeldAnswer, HeldQuestion, HeldStep};
use crate::sync::lock;
use crate::tool::input::InputRound;
use crate::tool::{Ctx, ToolError};

use super::relay::{Relay, marked};
use crate::gateway::{Mount, unavailable};

/// The most calls of one mount that may wait for their client's answers at once.
pub(crate) const MAX_HELD: usize = 1024;

/// The most of those one client may hold.
pub(crate) const MAX_HELD_PER_CLIENT: usize = 64;

/// How long the replica holding a call may take to say it took a round forwarded to it.
pub(crate) const TAKEN_WITHIN: Duration = Duration::from_secs(3);

/// The name the held call is kept under in the request state.
const MEMO: &str = "relay";

/// What the request state keeps of a held call between rounds.
#[derive(Serialize, Deserialize)]
struct Memo {
    /// The replica holding it.
    at: String,
    id: String,
    /// The remote's questions waiting for the client's answers.
    #[serde(default)]
    open: Vec<HeldQuestion>,
}

/// How far a round took a held call.
enum Step {
    /// The remote call ended.
    Done(Result<Value, ClientError>),
    /// The remote asks these.
    Asks(Vec<HeldQuestion>),
    /// No such call is held (it ended or expired), or its holder is gone.
    Gone(&'static str),
    /// The holder could not go on with the call.
    Failed(ToolError),
}

/// The held calls of one mount, by id, and how many each client holds.
#[derive(Default)]
pub(in crate::gateway) struct HeldCalls {
    calls: Mutex<Calls>,
    /// The rounds this replica forwarded to the replicas holding their calls, waiting for
    /// their word (at most [`MAX_HELD`]).
    forwarded: Mutex<HashMap<String, mpsc::Sender<HeldStep>>>,
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

    fn remove(&self, id: &str) -> Option<Arc<Held>> {
        let mut calls = lock(&self.calls);
        let held = calls.by_id.remove(id)?;
        if let Some(n) = calls.per_client.get_mut(&held.client) {
            *n -= 1;
            if *n == 0 {
                calls.per_client.remove(&held.client);
            }
        }
        Some(held)
    }

    /// Lists `held` under `id`, unless the mount or its client holds as many as it may.
    fn insert(&self, id: &str, held: &Arc<Held>) -> Result<(), Full> {
        let mut calls = lock(&self.calls);
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
enum Said {
    /// The remote asks its client something.
    Question {
        method: String,
        params: Value,
        reply: oneshot::Sender<Result<Value, RpcError>>,
    },
    /// The remote call ended.
    Done(Result<Value, ClientError>),
}

/// What a round works through, one round at a time.
struct Drive {
    said: mpsc::Receiver<Said>,
    /// The questions waiting for their answers, and where each answer goes.
    open: Vec<(HeldQuestion, oneshot::Sender<Result<Value, RpcError>>)>,
    asked: u32,
}

/// One remote call held across rounds.
struct Held {
    drive: tokio::sync::Mutex<Drive>,
    /// The call of the round that drives it here now: its progress goes there.
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

impl Held {
    /// Gives the held call the answers a round brought, and waits for what the remote does
    /// next: it ends, or asks (its questions still open, when some were not answered).
    async fn drive(&self, label: &str, answers: Vec<HeldAnswer>) -> Step {
        let mut drive = self.drive.lock().await;
        *lock(&self.parked) = None;
        for answer in answers {
            if let Some(at) = drive.open.iter().position(|(q, _)| q.key == answer.key) {
                let (_, reply) = drive.open.swap_remove(at);
                let _ = reply.send(match answer.error {
                    Some(e) => Err(e),
                    None => Ok(answer.result.unwrap_or(Value::Null)),
                });
            }
        }
        let step = if drive.open.is_empty() {
            next_step(&mut drive, label).await
        } else {
            Step::Asks(drive.open.iter().map(|(q, _)| q.clone()).collect())
        };
        if matches!(step, Step::Asks(_)) {
            *lock(&self.parked) = Some(Instant::now());
        }
        step
    }
}

/// The remote's next word: its result, or its questions (all those asked together).
async fn next_step(drive: &mut Drive, label: &str) -> Step {
    let mut next = drive.said.recv().await;
    loop {
        match next {
            Some(Said::Question {
                method,
                params,
                reply,
            }) => {
                drive.asked += 1;
                let key = format!("{label}/{}", drive.asked);
                let question = HeldQuestion {
                    key,
                    method,
                    params,
                };
                drive.open.push((question, reply));
            }
            Some(Said::Done(result)) => return Step::Done(result),
            None => return Step::Gone("it expired"),
        }
        match drive.said.try_recv() {
            Ok(said) => next = Some(said),
            Err(_) => break,
        }
    }
    Step::Asks(drive.open.iter().map(|(q, _)| q.clone()).collect())
}

/// Passes the remote's questions to the rounds.
struct Asker {
    said: mpsc::Sender<Said>,
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
            let question = Said::Question {
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
            self.said.send(question).await.map_err(|_| given_up())?;
            answer.await.map_err(|_| given_up())?
        })
    }
}

/// Gives a held call up (the remote call cancelled) when the round driving it here goes away
/// before the drive ends: its request was cancelled.
struct Leave<'a> {
    calls: &'a HeldCalls,
    id: &'a str,
    held: &'a Held,
    done: bool,
}

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        *lock(&self.held.round) = None;
        if !self.done {
            self.calls.remove(self.id);
            self.held.stop.cancel();
        }
    }
}

/// A round forwarded to the replica holding its call: its place in the waiting list is freed
/// when it ends, and the holder told to give the call up when its request went away.
struct Away<'a> {
    mount: &'a Mount,
    memo: &'a Memo,
    round: &'a str,
    done: bool,
}

impl Drop for Away<'_> {
    fn drop(&mut self) {
        lock(&self.mount.held.forwarded).remove(self.round);
        if !self.done
            && let Some(shared) = self.mount.shared()
        {
            shared.replicas.publish(Event::HeldCancel {
                to: self.memo.at.clone(),
                mount: self.mount.label().to_owned(),
                id: self.memo.id.clone(),
            });
        }
    }
}

/// Whether a round goes on with a held call (its request state names one).
pub(in crate::gateway) fn holds(round: &InputRound) -> bool {
    round.recall(MEMO).is_some()
}

impl Mount {
    /// Forwards a call of a 2026-07-28 request to a remote that asks in the middle of its
    /// call — or, on a retry, goes on with the remote call an earlier round held, wherever it
    /// is held — until the remote answers or asks something the round cannot answer (the
    /// round then ends waiting for input).
    pub(in crate::gateway) async fn call_held(
        self: &Arc<Self>,
        remote: &str,
        arguments: Value,
        ctx: &Ctx,
        round: &InputRound,
        client: Option<McpClient>,
    ) -> Result<Result<Value, ClientError>, ToolError> {
        let (mut memo, mut step) = match round.recall(MEMO) {
            Some(memo) => {
                let memo: Memo = serde_json::from_value(memo)
                    .map_err(|_| gone(self.label(), "it is not one this gateway holds"))?;
                let answers = self.answers(ctx, &memo.open).await;
                let step = self.drive(&memo, answers, ctx).await;
                (memo, step)
            }
            None => {
                let client = match client {
                    Some(client) => client,
                    None => self.connected()?,
                };
                let (id, held) = self.start(&client, remote, arguments, ctx.share_key())?;
                let step = self.drive_here(&id, &held, Vec::new(), ctx).await;
                let at = self.origin();
                let memo = Memo {
                    at,
                    id,
                    open: Vec::new(),
                };
                (memo, step)
            }
        };
        loop {
            match step {
                Step::Done(result) => return Ok(result),
                Step::Gone(why) => return Err(gone(self.label(), why)),
                Step::Failed(e) => return Err(e),
                Step::Asks(open) => {
                    memo.open = open;
                    round.remember(MEMO, serde_json::to_value(&memo).unwrap_or_default());
                    // The client's answers: an answer the round has returns at once, and the
                    // first one it has not ends the round.
                    let answers = self.answers(ctx, &memo.open).await;
                    step = self.drive(&memo, answers, ctx).await;
                }
            }
        }
    }

    /// The client's answers to the remote's open questions (the round ends at the first it
    /// does not have).
    async fn answers(&self, ctx: &Ctx, open: &[HeldQuestion]) -> Vec<HeldAnswer> {
        join_all(open.iter().map(|q| async move {
            let params = marked(self.label(), &q.method, q.params.clone());
            let answer = ctx.input(&q.key).relay(&q.method, params).await;
            let (result, error) = match answer {
                Ok(result) => (Some(result), None),
                Err(e) => (
                    None,
                    Some(RpcError::new(code::INTERNAL_ERROR, e.message().to_owned())),
                ),
            };
            HeldAnswer {
                key: q.key.clone(),
                result,
                error,
            }
        }))
        .await
    }

    /// Drives the held call `memo` names with `answers`, here or on the replica holding it.
    async fn drive(self: &Arc<Self>, memo: &Memo, answers: Vec<HeldAnswer>, ctx: &Ctx) -> Step {
        if memo.at == self.origin() {
            match self.held.get(&memo.id) {
                Some(held) => self.drive_here(&memo.id, &held, answers, ctx).await,
                None => Step::Gone("it ended or expired"),
            }
        } else {
            self.drive_there(memo, answers).await
        }
    }

    /// Drives a call held here, for a round of this replica: progress goes to the round.
    async fn drive_here(&self, id: &str, held: &Held, answers: Vec<HeldAnswer>, ctx: &Ctx) -> Step {
        *lock(&held.round) = Some(ctx.clone());
        let mut leave = Leave {
            calls: &self.held,
            id,
            held,
            done: false,
        };
        let step = held.drive(self.label(), answers).await;
        leave.done = true;
        if !matches!(step, Step::Asks(_)) {
            self.held.remove(id);
        }
        step
    }

    /// Forwards a round to the replica holding its call, and waits for its word.
    async fn drive_there(&self, memo: &Memo, answers: Vec<HeldAnswer>) -> Step {
        const STOPPED: &str = "the replica holding it stopped or restarted";
        let Some(shared) = self.shared().filter(|s| s.replicas.shared()) else {
            return Step::Gone("another replica holds it, and this one shares no state with it");
        };
        let round = crate::server::state::new_id();
        let (tx, mut rx) = mpsc::channel(2);
        {
            let mut forwarded = lock(&self.held.forwarded);
            if forwarded.len() >= MAX_HELD {
                return Step::Failed(busy(format!(
                    "{MAX_HELD} rounds of calls to the `{}` server wait for other replicas already; try again shortly",
                    self.label()
                )));
            }
            forwarded.insert(round.clone(), tx);
        }
        let mut away = Away {
            mount: self,
            memo,
            round: &round,
            done: false,
        };
        shared.replicas.publish(Event::HeldRound {
            to: memo.at.clone(),
            from: shared.replicas.origin().to_owned(),
            mount: self.label().to_owned(),
            id: memo.id.clone(),
            round: round.clone(),
            answers,
        });
        let step = match tokio::time::timeout(TAKEN_WITHIN, rx.recv()).await {
            Ok(Some(HeldStep::Taken)) => {
                match tokio::time::timeout(self.hold_for(), rx.recv()).await {
                    Ok(Some(step)) => step,
                    _ => {
                        return Step::Failed(unavailable(
                            self.label(),
                            "the replica holding the call gave no word in time",
                        ));
                    }
                }
            }
            Ok(Some(step)) => step,
            _ => {
                away.done = true;
                return Step::Gone(STOPPED);
            }
        };
        away.done = true;
        match step {
            HeldStep::Taken => Step::Gone(STOPPED),
            HeldStep::Gone => Step::Gone("it ended or expired"),
            HeldStep::Asks { questions } => Step::Asks(questions),
            HeldStep::Done {
                result,
                error,
                failed,
                retryable,
            } => match (error, failed) {
                (Some(e), _) => Step::Done(Err(ClientError::Rpc(e))),
                (None, Some(why)) if retryable => Step::Failed(unavailable(self.label(), &why)),
                (None, Some(why)) => Step::Failed(ToolError::new(
                    "REMOTE_ERROR",
                    format!("`{}`: {why}", self.label()),
                )),
                (None, None) => Step::Done(Ok(result.unwrap_or(Value::Null))),
            },
        }
    }

    /// Another replica's word about a held call of this mount (the event is for this
    /// replica): a round to drive, the holder's word on a round forwarded, or a call given up.
    pub(in crate::gateway) fn on_held(self: &Arc<Self>, event: Event) {
        match event {
            Event::HeldRound {
                from,
                id,
                round,
                answers,
                ..
            } => {
                let Some(shared) = self.shared() else { return };
                let Some(held) = self.held.get(&id) else {
                    shared.replicas.publish(Event::HeldStep {
                        to: from,
                        round,
                        step: HeldStep::Gone,
                    });
                    return;
                };
                shared.replicas.publish(Event::HeldStep {
                    to: from.clone(),
                    round: round.clone(),
                    step: HeldStep::Taken,
                });
                let mount = self.clone();
                tokio::spawn(async move {
                    let step = held.drive(mount.label(), answers).await;
                    if !matches!(step, Step::Asks(_)) {
                        mount.held.remove(&id);
                    }
                    let step = match step {
                        Step::Asks(questions) => HeldStep::Asks { questions },
                        Step::Gone(_) => HeldStep::Gone,
                        Step::Done(Ok(result)) => HeldStep::Done {
                            result: Some(result),
                            error: None,
                            failed: None,
                            retryable: false,
                        },
                        Step::Done(Err(ClientError::Rpc(e))) => HeldStep::Done {
                            result: None,
                            error: Some(e),
                            failed: None,
                            retryable: false,
                        },
                        Step::Done(Err(e)) => {
                            if e.is_retryable() && mount.users.is_none() {
                                // This replica's connection to the remote is what failed.
                                mount.lost.notify_one();
                            }
                            HeldStep::Done {
                                result: None,
                                error: None,
                                failed: Some(e.to_string()),
                                retryable: e.is_retryable(),
                            }
                        }
                        Step::Failed(e) => HeldStep::Done {
                            result: None,
                            error: None,
                            failed: Some(e.message().to_owned()),
                            retryable: false,
                        },
                    };
                    shared.replicas.publish(Event::HeldStep {
                        to: from,
                        round,
                        step,
                    });
                });
            }
            Event::HeldStep { round, step, .. } => {
                if let Some(waiting) = lock(&self.held.forwarded).get(&round) {
                    let _ = waiting.try_send(step);
                }
            }
            Event::HeldCancel { id, .. } => {
                if let Some(held) = self.held.remove(&id) {
                    held.stop.cancel();
                }
            }
            _ => {}
        }
    }

    /// Starts the remote call in a task of its own, which ends it when it was held unanswered
    /// for longer than a request state lives. The client's share is taken first: a call
    /// beyond it never reaches the remote.
    fn start(
        self: &Arc<Self>,
        client: &McpClient,
        remote: &str,
        arguments: Value,
        client_key: String,
    ) -> Result<(String, Arc<Held>), ToolError> {
        let id = random_id()?;
        let (said, receiver) = mpsc::channel(16);
        let held = Arc::new(Held {
            drive: tokio::sync::Mutex::new(Drive {
                said: receiver,
                open: Vec::new(),
                asked: 0,
            }),
            round: Mutex::new(None),
            parked: Mutex::new(None),
            stop: Canceller::new(),
            client: client_key.into(),
        });
        if let Err(full) = self.held.insert(&id, &held) {
            return Err(busy(match full {
                Full::Mount => format!(
                    "{MAX_HELD} calls to the `{}` server wait for their clients' answers already; try again shortly",
                    self.label()
                ),
                Full::Client => format!(
                    "this client has {MAX_HELD_PER_CLIENT} calls to the `{}` server waiting for its answers already, the most one client may: answer or cancel some",
                    self.label()
                ),
            }));
        }
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
            handler: Some(Arc::new(Asker { said: said.clone() })),
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
                        let _ = said.send(Said::Done(result)).await;
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

/// The error of a retry whose held call is no longer held.
fn gone(label: &str, why: &str) -> ToolError {
    ToolError::new(
        "REMOTE_CALL_GONE",
        format!(
            "the call to the `{label}` server that these answers belong to is no longer held ({why}); call the tool again"
        ),
    )
    .retryable(true)
}

fn busy(why: String) -> ToolError {
    ToolError::new("GATEWAY_BUSY", why).retryable(true)
}

fn random_id() -> Result<String, ToolError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| ToolError::new("REMOTE_ERROR", format!("no randomness: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
