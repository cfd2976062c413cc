//! What the replicas of one server share besides tasks, through a [`ReplicaStore`]: the
//! changes each raises that every replica's clients should hear of (list changes, resource
//! updates, the server-wide tool selection, a client's answer to a request another replica
//! made), and the records of 2025-11-25 sessions, so that a session's request reaching a
//! replica that never saw it is served there.
//!
//! Besides these, the store keeps keys that expire ([`ReplicaStore::put`] and the rest): the
//! state of other parts of the server that every replica must see alike.
//!
//! Without a store (the default) nothing leaves the process. [`MemoryReplicaStore`] shares
//! within one process (servers built with the same store); `redis::RedisReplicaStore`
//! (feature `redis`) shares among processes and machines: Redis pub/sub for the changes,
//! expiring keys for the sessions. Server binaries take `--shared-state URL` and
//! `MCP_TOOL_SHARED_STATE`.
//!
//! Changes are told to this replica's clients at once, then published; every replica hears
//! every message and drops its own (by origin). Pub/sub delivers at most once: a replica cut
//! from the store for a moment misses the changes of that moment (`list_changed` is a hint
//! whose loss costs a client a stale list until the next one).

mod memory;
mod record;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub mod redis;

pub use memory::MemoryReplicaStore;
pub(crate) use record::SessionRecord;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::protocol::RpcError;
use crate::store::{StoreUrl, StoreUrlError, StoreUrlProblem};
use crate::sync::lock;
use crate::tool::Batch;

/// What a store operation gives: a value, or why the store could not.
pub type ReplicaFuture<'a, T> =
    Pin<Box<dyn Future<Output = Result<T, ReplicaStoreError>> + Send + 'a>>;

/// A store operation's failure (a lost connection, say). A change not published is lost for
/// the other replicas; a session not saved is served by this replica only.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the shared state failed: {0}")]
pub struct ReplicaStoreError(pub String);

/// Where the replicas of a server meet: a channel every replica hears, and session records
/// that expire.
pub trait ReplicaStore: Send + Sync + 'static {
    /// Sends `message` to every replica subscribed (this one included).
    fn publish<'a>(&'a self, message: &'a str) -> ReplicaFuture<'a, ()>;

    /// The messages published from now on, for as long as the receiver lives (a store that
    /// loses its connection makes it again).
    fn subscribe(&self) -> mpsc::UnboundedReceiver<String>;

    /// Keeps the record of session `id` for `ttl`.
    fn save_session<'a>(
        &'a self,
        id: &'a str,
        record: &'a str,
        ttl: Duration,
    ) -> ReplicaFuture<'a, ()>;

    /// The record of session `id` if it has one, its time to live renewed to `ttl`.
    fn load_session<'a>(&'a self, id: &'a str, ttl: Duration) -> ReplicaFuture<'a, Option<String>>;

    /// Renews the record of session `id` for `ttl`.
    fn touch_session<'a>(&'a self, id: &'a str, ttl: Duration) -> ReplicaFuture<'a, ()>;

    /// Forgets session `id`.
    fn end_session<'a>(&'a self, id: &'a str) -> ReplicaFuture<'a, ()>;

    /// Keeps `value` under `key` for `ttl`, replacing what was there.
    fn put<'a>(&'a self, key: &'a str, value: &'a str, ttl: Duration) -> ReplicaFuture<'a, ()>;

    /// Keeps `value` under `key` for `ttl` unless `key` holds something: whether it was new
    /// (and so kept).
    fn put_new<'a>(
        &'a self,
        key: &'a str,
        value: &'a str,
        ttl: Duration,
    ) -> ReplicaFuture<'a, bool>;

    /// What `key` holds, if it has not expired.
    fn get<'a>(&'a self, key: &'a str) -> ReplicaFuture<'a, Option<String>>;

    /// What `key` holds, removed: of callers taking the same key at once, at most one gets it.
    fn take<'a>(&'a self, key: &'a str) -> ReplicaFuture<'a, Option<String>>;

    /// Forgets `key`.
    fn remove<'a>(&'a self, key: &'a str) -> ReplicaFuture<'a, ()>;

    /// One event against each of `limits`, in one atomic step (GCRA, on the store's clock):
    /// if every limit admits it, each counts it; if one does not, none does, and the answer
    /// names the first that refused and how long until it admits one.
    fn admit<'a>(&'a self, limits: &'a [Limit]) -> ReplicaFuture<'a, Admission>;
}

/// A limit on how often something happens, under a key: a burst of `calls`, one more every
/// `per / calls` (a token bucket of `calls` tokens refilled at `calls` per `per`, kept as the
/// instant it is full again — GCRA's theoretical arrival time). Limits whose keys start
/// alike up to a `}` share a Redis Cluster slot: keys of one [`ReplicaStore::admit`] should.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    /// What is limited (a principal, a principal and a tool).
    pub key: String,
    /// The burst, and the events per `per`.
    pub calls: u32,
    /// The period.
    pub per: Duration,
}

/// What [`ReplicaStore::admit`] answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Every limit counted the event.
    Admitted,
    /// `limits[which]` refused it; it admits one in `wait`.
    Refused {
        /// The index of the limit that refused.
        which: usize,
        /// How long until it admits one.
        wait: Duration,
    },
}

/// The store for `url`: `memory` (this process), or `redis://…` (feature `redis`;
/// `redis+unix://…` for a socket, `rediss://…` when the redis crate is built with TLS).
pub fn replica_store_from_url(url: &str) -> Result<Arc<dyn ReplicaStore>, StoreUrlError> {
    // Here nothing is not `memory`: a server given no store shares nothing at all.
    if url.trim().is_empty() {
        return Err(StoreUrlError::new(STORE, "", StoreUrlProblem::Unknown));
    }
    Ok(match StoreUrl::parse(STORE, url)? {
        StoreUrl::Memory => Arc::new(MemoryReplicaStore::default()),
        #[cfg(feature = "redis")]
        StoreUrl::Redis(at) => Arc::new(redis::RedisReplicaStore::on(*at)),
    })
}

/// What a bad store URL is called in errors.
const STORE: &str = "shared state";

/// A tool selection as it travels (`Batch` applied to the default selection gives it back).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SelectionWire {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) enable: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) disable: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) allow: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) block: Option<Vec<String>>,
}

impl From<&Batch> for SelectionWire {
    fn from(b: &Batch) -> Self {
        SelectionWire {
            enable: b.enable.clone(),
            disable: b.disable.clone(),
            allow: b.allow.clone(),
            block: b.block.clone(),
        }
    }
}

impl From<SelectionWire> for Batch {
    fn from(w: SelectionWire) -> Self {
        Batch {
            enable: w.enable,
            disable: w.disable,
            allow: w.allow,
            block: w.block,
        }
    }
}

/// What one replica tells the others.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Event {
    ToolsChanged,
    PromptsChanged,
    ResourcesChanged,
    ResourceUpdated {
        uri: String,
    },
    /// `ServerHandle::change_tools`: the selection of every session.
    Selection {
        batch: SelectionWire,
    },
    /// A client's answer to request `id` of session `session`, which reached a replica that
    /// does not wait for it.
    Answer {
        session: String,
        id: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<RpcError>,
    },
    /// The client ended session `session` (DELETE): replicas holding it drop it.
    SessionEnded {
        session: String,
    },
    /// A tool manager changed the tool selection of an authenticated subject (2026-07-28).
    PrincipalTools {
        subject: String,
        batch: SelectionWire,
    },
    /// A round of gateway call `id` of mount `mount`, held on replica `to` (its remote asks
    /// in the middle of the call), brought by a retry that reached replica `from`: the
    /// answers to the remote's open questions, by their keys.
    #[cfg_attr(not(feature = "client"), allow(dead_code))] // read by the gateway
    HeldRound {
        to: String,
        from: String,
        mount: String,
        id: String,
        round: String,
        answers: Vec<HeldAnswer>,
    },
    /// The holding replica's word on round `round` of replica `to`.
    #[cfg_attr(not(feature = "client"), allow(dead_code))] // read by the gateway
    HeldStep {
        to: String,
        round: String,
        step: HeldStep,
    },
    /// Replica `to` gives held call `id` of mount `mount` up: its round's request went away.
    #[cfg_attr(not(feature = "client"), allow(dead_code))] // read by the gateway
    HeldCancel {
        to: String,
        mount: String,
        id: String,
    },
}

/// A client's answer to a held call's question, as it travels to the replica holding it.
#[cfg_attr(not(feature = "client"), allow(dead_code))] // read by the gateway
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct HeldAnswer {
    pub(crate) key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<RpcError>,
}

/// A question of a held call's remote, under the input key the client sees.
#[cfg_attr(not(feature = "client"), allow(dead_code))] // read by the gateway
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct HeldQuestion {
    pub(crate) key: String,
    pub(crate) method: String,
    pub(crate) params: Value,
}

/// What the replica holding a call says of a round forwarded to it.
#[cfg_attr(not(feature = "client"), allow(dead_code))] // read by the gateway
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub(crate) enum HeldStep {
    /// It holds the call and drives it on (its outcome follows).
    Taken,
    /// It holds no such call (it ended, or expired).
    Gone,
    /// The remote call ended: its result, or why it failed (`retryable`: the remote was
    /// unavailable).
    Done {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<RpcError>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failed: Option<String>,
        #[serde(default)]
        retryable: bool,
    },
    /// The remote asks these (the round ends waiting for the client's answers).
    Asks { questions: Vec<HeldQuestion> },
}

#[derive(Serialize, Deserialize)]
struct Envelope {
    origin: String,
    #[serde(flatten)]
    event: Event,
}

/// One write to the store, queued so that they happen in order.
enum Op {
    Publish(String),
    Save(Arc<str>, String),
    Touch(Arc<str>),
    /// The session's record deleted; then `done` told (after every change queued before it).
    End(Arc<str>, tokio::sync::oneshot::Sender<()>),
    Put(String, String, Duration),
}

/// This replica's side of the store.
pub(crate) struct Replicas {
    store: Option<Arc<dyn ReplicaStore>>,
    /// Where keys live: the shared store, or (without one) this process's memory.
    keys: Arc<dyn ReplicaStore>,
    /// This process's random name: messages it published come back to it and are dropped.
    origin: String,
    /// How long a session record lives without a request.
    session_ttl: Mutex<Duration>,
    queue: OnceLock<mpsc::UnboundedSender<Op>>,
}

impl Replicas {
    pub(crate) fn new(store: Option<Arc<dyn ReplicaStore>>) -> Self {
        let keys = match &store {
            Some(store) => store.clone(),
            None => Arc::new(MemoryReplicaStore::default()) as Arc<dyn ReplicaStore>,
        };
        Replicas {
            store,
            keys,
            origin: crate::server::state::new_id(),
            session_ttl: Mutex::new(Duration::from_secs(600)),
            queue: OnceLock::new(),
        }
    }

    /// This replica's name among the replicas (random, new at each start).
    #[cfg_attr(not(feature = "client"), allow(dead_code))] // the gateway's held calls
    pub(crate) fn origin(&self) -> &str {
        &self.origin
    }

    /// Whether sessions and changes are shared with other replicas.
    pub(crate) fn shared(&self) -> bool {
        self.store.is_some()
    }

    pub(crate) fn session_ttl(&self) -> Duration {
        *lock(&self.session_ttl)
    }

    /// Starts the writer and the listener of the store, once, on the current runtime: each
    /// event another replica publishes goes to `apply`, until it answers `false` (the server
    /// is gone).
    pub(crate) fn start(
        &self,
        session_ttl: Duration,
        apply: impl Fn(Event) -> bool + Send + 'static,
    ) {
        let Some(store) = &self.store else { return };
        *lock(&self.session_ttl) = session_ttl;
        if self.queue.get().is_some() || tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let (tx, mut rx) = mpsc::unbounded_channel::<Op>();
        if self.queue.set(tx).is_err() {
            return;
        }
        let writer = store.clone();
        tokio::spawn(async move {
            while let Some(op) = rx.recv().await {
                let ttl = session_ttl;
                let done = match &op {
                    Op::Publish(text) => writer.publish(text).await,
                    Op::Save(id, record) => writer.save_session(id, record, ttl).await,
                    Op::Touch(id) => writer.touch_session(id, ttl).await,
                    Op::End(id, _) => writer.end_session(id).await,
                    Op::Put(key, value, ttl) => writer.put(key, value, *ttl).await,
                };
                if let Err(e) = done {
                    tracing::warn!(error = %e, "the shared state did not take a change");
                }
                if let Op::End(_, ended) = op {
                    let _ = ended.send(());
                }
            }
        });
        let mut messages = store.subscribe();
        let origin = self.origin.clone();
        tokio::spawn(async move {
            while let Some(text) = messages.recv().await {
                match serde_json::from_str::<Envelope>(&text) {
                    Ok(envelope) if envelope.origin == origin => {}
                    Ok(envelope) => {
                        if !apply(envelope.event) {
                            return;
                        }
                    }
                    Err(e) => tracing::debug!(error = %e, "an unreadable replica message"),
                }
            }
        });
    }

    fn send(&self, op: Op) {
        if let Some(queue) = self.queue.get() {
            let _ = queue.send(op);
        }
    }

    /// Tells the other replicas.
    pub(crate) fn publish(&self, event: Event) {
        if self.store.is_none() {
            return;
        }
        let envelope = Envelope {
            origin: self.origin.clone(),
            event,
        };
        if let Ok(text) = serde_json::to_string(&envelope) {
            self.send(Op::Publish(text));
        }
    }

    /// Keeps `value` under `key` in the shared store for `ttl`, in order with the other
    /// writes (a message published after it is heard once it is there). Nothing without a
    /// shared store.
    pub(crate) fn put_in_order(&self, key: String, value: String, ttl: Duration) {
        self.send(Op::Put(key, value, ttl));
    }

    /// Saves a session's record (in order with the other writes).
    pub(crate) fn save(&self, id: &Arc<str>, record: String) {
        self.send(Op::Save(id.clone(), record));
    }

    /// Saves a session's record and waits until the store has it (a new session: its
    /// client's next request may reach another replica).
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // HTTP sessions are shared
    pub(crate) async fn save_now(&self, id: &str, record: &str) -> Result<(), ReplicaStoreError> {
        match &self.store {
            Some(store) => tokio::time::timeout(
                Duration::from_secs(5),
                store.save_session(id, record, self.session_ttl()),
            )
            .await
            .map_err(|_| ReplicaStoreError("no answer within 5 s".to_owned()))?,
            None => Ok(()),
        }
    }

    /// The record of a session this replica does not hold.
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // HTTP sessions are shared
    pub(crate) async fn load(&self, id: &str) -> Option<String> {
        let store = self.store.as_ref()?;
        match tokio::time::timeout(
            Duration::from_secs(5),
            store.load_session(id, self.session_ttl()),
        )
        .await
        {
            Ok(Ok(found)) => found,
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "the shared state did not give a session");
                None
            }
            Err(_) => {
                tracing::warn!("the shared state did not answer within 5 s");
                None
            }
        }
    }

    #[cfg_attr(not(feature = "http"), allow(dead_code))] // HTTP sessions are shared
    pub(crate) fn touch(&self, id: &Arc<str>) {
        self.send(Op::Touch(id.clone()));
    }

    /// Forgets a session in the store and on every replica (the caller closed it). Returns
    /// once its record is gone from the store (at most [`STORE_TIMEOUT`]), after every change
    /// this replica queued before: no replica, this one included, can take the session up
    /// again from a record still there, or one a queued write would put back.
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // HTTP sessions are shared
    pub(crate) async fn end(&self, id: &Arc<str>) {
        let (ended, gone) = tokio::sync::oneshot::channel();
        self.send(Op::End(id.clone(), ended));
        self.publish(Event::SessionEnded {
            session: id.to_string(),
        });
        if self.queue.get().is_some() && tokio::time::timeout(STORE_TIMEOUT, gone).await.is_err() {
            tracing::warn!("the shared state did not forget an ended session within 5 s");
        }
    }
}

/// How long a replica waits for the store to answer one operation.
const STORE_TIMEOUT: Duration = Duration::from_secs(5);

/// `operation`'s answer, or an error when the store gave none within [`STORE_TIMEOUT`].
async fn within<T>(operation: ReplicaFuture<'_, T>) -> Result<T, ReplicaStoreError> {
    tokio::time::timeout(STORE_TIMEOUT, operation)
        .await
        .map_err(|_| ReplicaStoreError("no answer within 5 s".to_owned()))?
}

/// Keys that expire, in the shared store (or this process's memory without one); each waits
/// at most 5 s for the store.
#[allow(dead_code)] // each part of the server uses the keys it needs
impl Replicas {
    /// The store keys live in: the shared one, or this process's own.
    pub(crate) fn keys(&self) -> &Arc<dyn ReplicaStore> {
        &self.keys
    }

    pub(crate) async fn put(
        &self,
        key: &str,
        value: &str,
        ttl: Duration,
    ) -> Result<(), ReplicaStoreError> {
        within(self.keys.put(key, value, ttl)).await
    }

    pub(crate) async fn put_new(
        &self,
        key: &str,
        value: &str,
        ttl: Duration,
    ) -> Result<bool, ReplicaStoreError> {
        within(self.keys.put_new(key, value, ttl)).await
    }

    pub(crate) async fn get(&self, key: &str) -> Result<Option<String>, ReplicaStoreError> {
        within(self.keys.get(key)).await
    }

    pub(crate) async fn take(&self, key: &str) -> Result<Option<String>, ReplicaStoreError> {
        within(self.keys.take(key)).await
    }

    pub(crate) async fn remove(&self, key: &str) -> Result<(), ReplicaStoreError> {
        within(self.keys.remove(key)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_travel_as_json() {
        let envelope = Envelope {
            origin: "a".into(),
            event: Event::Answer {
                session: "s".into(),
                id: 7,
                result: Some(serde_json::json!({"action": "accept"})),
                error: None,
            },
        };
        let text = serde_json::to_string(&envelope).unwrap();
        assert_eq!(
            text,
            r#"{"origin":"a","kind":"answer","session":"s","id":7,"result":{"action":"accept"}}"#
        );
        let back: Envelope = serde_json::from_str(&text).unwrap();
        assert!(matches!(back.event, Event::Answer { id: 7, .. }));
        let text = r#"{"origin":"b","kind":"selection","batch":{"allow":["x"]}}"#;
        let back: Envelope = serde_json::from_str(text).unwrap();
        match back.event {
            Event::Selection { batch } => assert_eq!(batch.allow, Some(vec!["x".into()])),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_held_calls_round_and_its_outcome_travel_as_json() {
        let round = Envelope {
            origin: "b".into(),
            event: Event::HeldRound {
                to: "a".into(),
                from: "b".into(),
                mount: "cf".into(),
                id: "h1".into(),
                round: "r1".into(),
                answers: vec![HeldAnswer {
                    key: "cf/1".into(),
                    result: Some(serde_json::json!({"action": "decline"})),
                    error: None,
                }],
            },
        };
        let text = serde_json::to_string(&round).unwrap();
        assert_eq!(
            text,
            r#"{"origin":"b","kind":"held_round","to":"a","from":"b","mount":"cf","id":"h1","round":"r1","answers":[{"key":"cf/1","result":{"action":"decline"}}]}"#
        );
        let text = r#"{"origin":"a","kind":"held_step","to":"b","round":"r1","step":{"step":"asks","questions":[{"key":"cf/2","method":"roots/list","params":{}}]}}"#;
        let back: Envelope = serde_json::from_str(text).unwrap();
        match back.event {
            Event::HeldStep {
                step: HeldStep::Asks { questions },
                ..
            } => assert_eq!(questions[0].key, "cf/2"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_shared_state_is_named_not_left_out() {
        assert!(replica_store_from_url(" memory ").is_ok());
        for url in ["", "  "] {
            let e = replica_store_from_url(url).err().unwrap();
            assert_eq!(e.problem(), &StoreUrlProblem::Unknown);
            assert_eq!(
                e.to_string(),
                "shared state: expected `memory` or a `redis://host:port` URL"
            );
        }
        let e = replica_store_from_url("mem").err().unwrap();
        assert_eq!(
            e.to_string(),
            "shared state `mem`: expected `memory` or a `redis://host:port` URL"
        );
    }

    #[tokio::test]
    async fn replicas_without_a_store_keep_keys_in_memory() {
        let replicas = Replicas::new(None);
        let ttl = Duration::from_secs(60);
        replicas.put("k", "v", ttl).await.unwrap();
        assert!(!replicas.put_new("k", "w", ttl).await.unwrap());
        assert_eq!(replicas.get("k").await.unwrap().as_deref(), Some("v"));
        assert_eq!(replicas.take("k").await.unwrap().as_deref(), Some("v"));
        replicas.remove("k").await.unwrap();
        // Two servers sharing a memory store share its keys.
        let store: Arc<dyn ReplicaStore> = Arc::new(MemoryReplicaStore::default());
        let (a, b) = (
            Replicas::new(Some(store.clone())),
            Replicas::new(Some(store)),
        );
        a.put("k", "v", ttl).await.unwrap();
        assert_eq!(b.take("k").await.unwrap().as_deref(), Some("v"));
    }

    #[tokio::test]
    async fn an_ended_session_is_gone_from_the_store_when_its_end_returns() {
        let store: Arc<dyn ReplicaStore> = Arc::new(MemoryReplicaStore::default());
        let replicas = Replicas::new(Some(store.clone()));
        let ttl = Duration::from_secs(60);
        replicas.start(ttl, |_| true);
        let id: Arc<str> = "s1".into();
        replicas.save(&id, "{}".into());
        while store.load_session(&id, ttl).await.unwrap().is_none() {
            tokio::task::yield_now().await;
        }
        // A write queued just before the end does not put the record back after it.
        replicas.save(&id, "{\"again\":1}".into());
        replicas.end(&id).await;
        assert_eq!(store.load_session(&id, ttl).await.unwrap(), None);
    }
}
