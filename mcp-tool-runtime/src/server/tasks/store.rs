//! Where tasks live: the [`TaskStore`] trait, the record of one task, and the in-memory store
//! every server has unless told otherwise.
//!
//! A store keeps each task's status, its outstanding input requests and the answers to them,
//! and its final outcome, until its time to live runs out. Every change goes through
//! [`TaskStore::change`], which applies it atomically and never moves a task out of a terminal
//! status, so a cancelled task stays cancelled whatever its runner does afterwards. A store
//! shared by several servers (Redis) makes a task created on one visible, cancellable and
//! answerable on all of them.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::protocol::RpcError;
use crate::sync::lock;

/// A task's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for input from the client.
    InputRequired,
    /// Finished with a result (which may be a tool error, `isError`).
    Completed,
    /// Ended with a JSON-RPC error.
    Failed,
    /// Cancelled.
    Cancelled,
}

impl TaskStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Parses a wire name.
    pub fn parse(text: &str) -> Option<TaskStatus> {
        Some(match text {
            "working" => TaskStatus::Working,
            "input_required" => TaskStatus::InputRequired,
            "completed" => TaskStatus::Completed,
            "failed" => TaskStatus::Failed,
            "cancelled" => TaskStatus::Cancelled,
            _ => return None,
        })
    }

    /// Whether the task is over (`completed`, `failed` or `cancelled`).
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// How a task ended: the call's result (a `CallToolResult`, as JSON), or a JSON-RPC error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskOutcome {
    /// The result the call would have answered with.
    Result(Value),
    /// The error the call would have answered with.
    Error(RpcError),
}

/// One task, as a store keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The task's id: random, unguessable.
    pub id: String,
    /// Who may see it: the client that created it (a principal or a session).
    pub owner: String,
    /// Whose share of tasks it counts against: the owner, or for the session of a client
    /// without credentials, that client (its address), so that one client's many sessions
    /// hold one share.
    pub share: String,
    /// The tool it runs.
    pub tool: String,
    /// Where it stands.
    pub status: TaskStatus,
    /// A human-readable word on the status.
    pub status_message: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// When its status last changed, in milliseconds since the Unix epoch.
    pub updated_ms: u64,
    /// How long the task is kept after its creation, in milliseconds (`None`: unlimited).
    pub ttl_ms: Option<u64>,
    /// How often a client should poll, in milliseconds.
    pub poll_ms: u64,
    /// Until when the server running the task vouches for it (it renews this while it runs);
    /// a task still running past it has lost its server.
    pub lease_until_ms: u64,
    /// The outstanding input requests, by key (`{method, params}`).
    pub asked: Map<String, Value>,
    /// Answers not yet taken by the task, by key.
    pub answers: Map<String, Value>,
    /// How it ended, once terminal (not for `cancelled`).
    pub outcome: Option<TaskOutcome>,
}

impl TaskRecord {
    /// Whether the time to live ran out at `now_ms`.
    pub fn expired(&self, now_ms: u64) -> bool {
        self.expires_ms().is_some_and(|at| at <= now_ms)
    }

    /// When the time to live runs out, in milliseconds since the Unix epoch (`None`: never).
    pub fn expires_ms(&self) -> Option<u64> {
        self.ttl_ms.map(|ttl| self.created_ms.saturating_add(ttl))
    }
}

/// A change to one task, applied atomically by [`TaskStore::change`]. Nothing changes a
/// terminal task (but renewing its lease is harmless).
#[derive(Debug, Clone, PartialEq)]
pub enum TaskChange {
    /// Records an input request (the task waits: `input_required`).
    Ask {
        /// The request's key, unique over the task's life.
        key: String,
        /// `{method, params}`.
        request: Value,
    },
    /// Records answers to outstanding requests (others are ignored); once none is
    /// outstanding, the task is `working` again.
    Answer(Map<String, Value>),
    /// Ends the task with its outcome (`completed` or `failed`).
    Finish(TaskOutcome),
    /// Cancels it.
    Cancel {
        /// Why, for the status message.
        message: Option<String>,
    },
    /// Extends the runner's lease.
    Renew {
        /// The new end of the lease, in milliseconds since the Unix epoch.
        until_ms: u64,
    },
}

/// How many live tasks a store may hold: per share (one client) and in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskQuota {
    /// The most live tasks of one share ([`TaskRecord::share`]).
    pub per_share: usize,
    /// The most live tasks of every client together.
    pub total: usize,
}

/// Why a store refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaskStoreError {
    /// The client holds as many live tasks as it may.
    #[error(
        "this client holds {limit} tasks already, the most it may: wait for some to end or expire"
    )]
    Full {
        /// How many tasks a client may hold.
        limit: usize,
    },
    /// The server holds as many live tasks as it keeps, of all clients together.
    #[error("the server holds {limit} tasks, the most it keeps: try again once some end or expire")]
    ServerFull {
        /// How many tasks the server keeps.
        limit: usize,
    },
    /// The store itself failed (a lost connection, say).
    #[error("the task store failed: {0}")]
    Backend(String),
}

/// The result of a store operation.
pub type StoreResult<T> = Result<T, TaskStoreError>;

/// A store operation in progress.
pub type StoreFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = StoreResult<T>> + Send + 'a>>;

/// Where tasks are kept. Implement it to keep them elsewhere; every method is atomic on its
/// own.
pub trait TaskStore: Send + Sync + 'static {
    /// Creates a task, unless its share or the store holds as many live tasks as `quota`
    /// allows already.
    fn create(&self, task: TaskRecord, quota: TaskQuota) -> StoreFuture<'_, ()>;

    /// Removes every task of `owner` (its client is gone for good: an unauthenticated
    /// session that ended); the ids removed.
    fn remove_owner<'a>(&'a self, owner: &'a str) -> StoreFuture<'a, Vec<String>>;

    /// The task, unless it does not exist or expired.
    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>>;

    /// Applies a change; the task afterwards (`None`: no such task).
    fn change<'a>(&'a self, id: &'a str, change: TaskChange)
    -> StoreFuture<'a, Option<TaskRecord>>;

    /// Takes the answer to the input request `key` (it is removed), if it came.
    fn take_answer<'a>(&'a self, id: &'a str, key: &'a str) -> StoreFuture<'a, Option<Value>>;

    /// The owner's live tasks, oldest first, after the task `after` (a cursor), at most
    /// `limit` of them.
    fn list<'a>(
        &'a self,
        owner: &'a str,
        after: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, Vec<TaskRecord>>;
}

/// Applies `change` to `task` at `now_ms`, as every store must.
pub fn apply(task: &mut TaskRecord, change: TaskChange, now_ms: u64) {
    if let TaskChange::Renew { until_ms } = change {
        task.lease_until_ms = task.lease_until_ms.max(until_ms);
        return;
    }
    if task.status.is_terminal() {
        return;
    }
    match change {
        TaskChange::Ask { key, request } => {
            task.asked.insert(key, request);
            task.status = TaskStatus::InputRequired;
        }
        TaskChange::Answer(responses) => {
            for (key, answer) in responses {
                if task.asked.remove(&key).is_some() {
                    task.answers.insert(key, answer);
                }
            }
            if task.asked.is_empty() && task.status == TaskStatus::InputRequired {
                task.status = TaskStatus::Working;
            }
        }
        TaskChange::Finish(outcome) => {
            task.status = match outcome {
                TaskOutcome::Result(_) => TaskStatus::Completed,
                TaskOutcome::Error(_) => TaskStatus::Failed,
            };
            if let TaskOutcome::Error(e) = &outcome {
                task.status_message = Some(e.message.clone());
            }
            task.outcome = Some(outcome);
            task.asked.clear();
        }
        TaskChange::Cancel { message } => {
            task.status = TaskStatus::Cancelled;
            task.status_message = message;
            task.asked.clear();
        }
        TaskChange::Renew { .. } => unreachable!("handled above"),
    }
    task.updated_ms = now_ms;
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The tasks of this process, in memory: the default. Expired tasks are dropped as they are
/// met and, oldest expiry first, when tasks are created; creating, finding and paging cost
/// the logarithm of the number of tasks, not a scan of them.
#[derive(Default)]
pub struct MemoryTaskStore {
    inner: Mutex<Memory>,
}

/// The tasks, and the indexes that keep every operation from scanning them.
#[derive(Default)]
struct Memory {
    tasks: HashMap<String, TaskRecord>,
    /// Each owner's tasks by creation, for paging.
    by_owner: HashMap<String, BTreeSet<(u64, String)>>,
    /// How many live tasks each share holds.
    by_share: HashMap<String, usize>,
    /// Every task that expires, by expiry.
    expiry: BTreeSet<(u64, String)>,
}

impl Memory {
    fn insert(&mut self, task: TaskRecord) {
        self.by_owner
            .entry(task.owner.clone())
            .or_default()
            .insert((task.created_ms, task.id.clone()));
        *self.by_share.entry(task.share.clone()).or_default() += 1;
        if let Some(at) = task.expires_ms() {
            self.expiry.insert((at, task.id.clone()));
        }
        self.tasks.insert(task.id.clone(), task);
    }

    fn remove(&mut self, id: &str) -> Option<TaskRecord> {
        let task = self.tasks.remove(id)?;
        if let Some(mine) = self.by_owner.get_mut(&task.owner) {
            mine.remove(&(task.created_ms, task.id.clone()));
            if mine.is_empty() {
                self.by_owner.remove(&task.owner);
            }
        }
        if let Some(held) = self.by_share.get_mut(&task.share) {
            *held -= 1;
            if *held == 0 {
                self.by_share.remove(&task.share);
            }
        }
        if let Some(at) = task.expires_ms() {
            self.expiry.remove(&(at, task.id.clone()));
        }
        Some(task)
    }

    /// Drops the tasks whose time to live ran out.
    fn prune(&mut self, now: u64) {
        while let Some((at, id)) = self.expiry.first().cloned()
            && at <= now
        {
            self.remove(&id);
        }
    }

    /// The task, unless it expired (then it is dropped).
    fn live(&mut self, id: &str, now: u64) -> Option<&mut TaskRecord> {
        if self.tasks.get(id).is_some_and(|t| t.expired(now)) {
            self.remove(id);
        }
        self.tasks.get_mut(id)
    }
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryTaskStore::default()
    }

    fn memory(&self) -> std::sync::MutexGuard<'_, Memory> {
        lock(&self.inner)
    }
}

impl fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MemoryTaskStore({} tasks)", self.memory().tasks.len())
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, task: TaskRecord, quota: TaskQuota) -> StoreFuture<'_, ()> {
        let mut memory = self.memory();
        memory.prune(now_ms());
        let held = memory.by_share.get(&task.share).copied().unwrap_or(0);
        let outcome = if held >= quota.per_share {
            Err(TaskStoreError::Full {
                limit: quota.per_share,
            })
        } else if memory.tasks.len() >= quota.total {
            Err(TaskStoreError::ServerFull { limit: quota.total })
        } else {
            memory.insert(task);
            Ok(())
        };
        Box::pin(std::future::ready(outcome))
    }

    fn remove_owner<'a>(&'a self, owner: &'a str) -> StoreFuture<'a, Vec<String>> {
        let mut memory = self.memory();
        let ids: Vec<String> = memory
            .by_owner
            .get(owner)
            .map(|mine| mine.iter().map(|(_, id)| id.clone()).collect())
            .unwrap_or_default();
        for id in &ids {
            memory.remove(id);
        }
        Box::pin(std::future::ready(Ok(ids)))
    }

    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>> {
        let found = self.memory().live(id, now_ms()).map(|t| t.clone());
        Box::pin(std::future::ready(Ok(found)))
    }

    fn change<'a>(
        &'a self,
        id: &'a str,
        change: TaskChange,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        let now = now_ms();
        let found = self.memory().live(id, now).map(|t| {
            apply(t, change, now);
            t.clone()
        });
        Box::pin(std::future::ready(Ok(found)))
    }

    fn take_answer<'a>(&'a self, id: &'a str, key: &'a str) -> StoreFuture<'a, Option<Value>> {
        let answer = self
            .memory()
            .tasks
            .get_mut(id)
            .and_then(|t| t.answers.remove(key));
        Box::pin(std::future::ready(Ok(answer)))
    }

    fn list<'a>(
        &'a self,
        owner: &'a str,
        after: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, Vec<TaskRecord>> {
        let now = now_ms();
        let memory = self.memory();
        let page = match (memory.by_owner.get(owner), after) {
            (None, _) => Vec::new(),
            (Some(mine), None) => collect(&memory, mine.iter(), now, limit),
            (Some(mine), Some(cursor)) => match memory.tasks.get(cursor) {
                Some(c) => {
                    let from = (c.created_ms, c.id.clone());
                    let rest = mine.range(from..).skip_while(|(_, id)| id == cursor);
                    collect(&memory, rest, now, limit)
                }
                // A cursor that expired or never was: nothing after it.
                None => Vec::new(),
            },
        };
        Box::pin(std::future::ready(Ok(page)))
    }
}

/// Up to `limit` live records of `ids`.
fn collect<'a>(
    memory: &Memory,
    ids: impl Iterator<Item = &'a (u64, String)>,
    now: u64,
    limit: usize,
) -> Vec<TaskRecord> {
    ids.filter_map(|(_, id)| memory.tasks.get(id))
        .filter(|t| !t.expired(now))
        .take(limit)
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn record(id: &str, owner: &str, created_ms: u64) -> TaskRecord {
        TaskRecord {
            id: id.into(),
            owner: owner.into(),
            share: owner.into(),
            tool: "t".into(),
            status: TaskStatus::Working,
            status_message: None,
            created_ms,
            updated_ms: created_ms,
            ttl_ms: Some(60_000),
            poll_ms: 500,
            lease_until_ms: created_ms + 10_000,
            asked: Map::new(),
            answers: Map::new(),
            outcome: None,
        }
    }

    #[test]
    fn terminal_tasks_do_not_change() {
        let mut t = record("a", "o", 1);
        apply(&mut t, TaskChange::Cancel { message: None }, 2);
        apply(
            &mut t,
            TaskChange::Finish(TaskOutcome::Result(json!({}))),
            3,
        );
        assert_eq!(t.status, TaskStatus::Cancelled);
        assert_eq!(t.updated_ms, 2);
        assert!(t.outcome.is_none());
    }

    #[test]
    fn answers_settle_only_outstanding_requests() {
        let mut t = record("a", "o", 1);
        apply(
            &mut t,
            TaskChange::Ask {
                key: "x".into(),
                request: json!({"method": "elicitation/create"}),
            },
            2,
        );
        apply(
            &mut t,
            TaskChange::Ask {
                key: "y".into(),
                request: json!({"method": "elicitation/create"}),
            },
            2,
        );
        assert_eq!(t.status, TaskStatus::InputRequired);
        let answers = |pairs: &[(&str, Value)]| {
            TaskChange::Answer(
                pairs
                    .iter()
                    .map(|(k, v)| ((*k).into(), v.clone()))
                    .collect(),
            )
        };
        apply(&mut t, answers(&[("x", json!(1)), ("nope", json!(2))]), 3);
        assert_eq!(t.status, TaskStatus::InputRequired);
        assert!(t.asked.contains_key("y") && !t.asked.contains_key("x"));
        assert!(!t.answers.contains_key("nope"));
        apply(&mut t, answers(&[("y", json!(3))]), 4);
        assert_eq!(t.status, TaskStatus::Working);
        assert_eq!(t.answers.len(), 2);
    }

    const QUOTA: TaskQuota = TaskQuota {
        per_share: 3,
        total: 100,
    };

    fn ids(page: &[TaskRecord]) -> Vec<&str> {
        page.iter().map(|t| t.id.as_str()).collect()
    }

    #[tokio::test]
    async fn memory_store_bounds_owners_expires_and_pages() {
        let store = MemoryTaskStore::new();
        let now = now_ms();
        for i in 0..3 {
            store
                .create(record(&format!("t{i}"), "alice", now + i), QUOTA)
                .await
                .unwrap();
        }
        assert_eq!(
            store.create(record("t3", "alice", now + 3), QUOTA).await,
            Err(TaskStoreError::Full { limit: 3 })
        );
        store.create(record("b0", "bob", now), QUOTA).await.unwrap();
        let page = store.list("alice", None, 2).await.unwrap();
        assert_eq!(ids(&page), ["t0", "t1"]);
        let rest = store.list("alice", Some("t1"), 2).await.unwrap();
        assert_eq!(ids(&rest), ["t2"]);
        assert!(
            store
                .list("alice", Some("gone"), 2)
                .await
                .unwrap()
                .is_empty()
        );
        let mut old = record("old", "carol", 1);
        old.ttl_ms = Some(1);
        store.create(old, QUOTA).await.unwrap();
        assert_eq!(store.get("old").await.unwrap(), None, "expired");
        assert!(store.get("b0").await.unwrap().is_some());
    }

    #[tokio::test]
    async fn sessions_of_one_client_hold_one_share_and_the_server_a_total() {
        let store = MemoryTaskStore::new();
        let now = now_ms();
        let of = |id: &str, session: &str, client: &str| {
            let mut task = record(id, session, now);
            task.share = client.into();
            task
        };
        let quota = TaskQuota {
            per_share: 2,
            total: 3,
        };
        store
            .create(of("a1", "session:1", "client:a"), quota)
            .await
            .unwrap();
        store
            .create(of("a2", "session:2", "client:a"), quota)
            .await
            .unwrap();
        assert_eq!(
            store.create(of("a3", "session:3", "client:a"), quota).await,
            Err(TaskStoreError::Full { limit: 2 }),
            "a third session of the same client has no share left"
        );
        store
            .create(of("b1", "session:4", "client:b"), quota)
            .await
            .unwrap();
        let refused = store.create(of("c1", "session:5", "client:c"), quota).await;
        assert_eq!(refused, Err(TaskStoreError::ServerFull { limit: 3 }));
        assert!(refused.unwrap_err().to_string().contains("3 tasks"));

        // The client's session ends: its tasks go, and with them their place in the shares.
        assert_eq!(store.remove_owner("session:1").await.unwrap(), ["a1"]);
        assert_eq!(store.get("a1").await.unwrap(), None);
        assert!(store.list("session:1", None, 10).await.unwrap().is_empty());
        store
            .create(of("a3", "session:3", "client:a"), quota)
            .await
            .unwrap();
        assert_eq!(
            store.create(of("c1", "session:5", "client:c"), quota).await,
            Err(TaskStoreError::ServerFull { limit: 3 })
        );
    }

    #[tokio::test]
    async fn expired_tasks_leave_their_share_and_the_total_without_a_scan() {
        let store = MemoryTaskStore::new();
        let quota = TaskQuota {
            per_share: 1,
            total: 1,
        };
        let mut short = record("short", "alice", now_ms());
        short.ttl_ms = Some(30);
        store.create(short, quota).await.unwrap();
        assert!(
            store
                .create(record("next", "alice", now_ms()), quota)
                .await
                .is_err()
        );
        tokio::time::sleep(std::time::Duration::from_millis(60)).await;
        store
            .create(record("next", "alice", now_ms()), quota)
            .await
            .unwrap();
        let memory = store.memory();
        assert_eq!(memory.tasks.len(), 1);
        assert_eq!(memory.expiry.len(), 1);
        assert_eq!(memory.by_share.get("alice"), Some(&1));
        assert_eq!(memory.by_owner.get("alice").map(BTreeSet::len), Some(1));
    }
}
