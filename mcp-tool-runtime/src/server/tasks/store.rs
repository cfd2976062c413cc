//! Where tasks live: the [`TaskStore`] trait, the record of one task, and the in-memory store
//! every server has unless told otherwise.
//!
//! A store keeps each task's status, its outstanding input requests and the answers to them,
//! and its final outcome, until its time to live runs out. Every change goes through
//! [`TaskStore::change`], which applies it atomically and never moves a task out of a terminal
//! status, so a cancelled task stays cancelled whatever its runner does afterwards. A store
//! shared by several servers (Redis) makes a task created on one visible, cancellable and
//! answerable on all of them.

use std::collections::HashMap;
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
        self.ttl_ms
            .is_some_and(|ttl| self.created_ms.saturating_add(ttl) <= now_ms)
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

/// Why a store refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskStoreError {
    /// The owner holds as many live tasks as it may.
    Full {
        /// How many tasks an owner may hold.
        limit: usize,
    },
    /// The store itself failed (a lost connection, say).
    Backend(String),
}

impl fmt::Display for TaskStoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TaskStoreError::Full { limit } => write!(
                f,
                "this client holds {limit} tasks already, the most it may: wait for some to end or expire"
            ),
            TaskStoreError::Backend(why) => write!(f, "the task store failed: {why}"),
        }
    }
}

impl std::error::Error for TaskStoreError {}

/// The result of a store operation.
pub type StoreResult<T> = Result<T, TaskStoreError>;

/// A store operation in progress.
pub type StoreFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = StoreResult<T>> + Send + 'a>>;

/// Where tasks are kept. Implement it to keep them elsewhere; every method is atomic on its
/// own.
pub trait TaskStore: Send + Sync + 'static {
    /// Creates a task, unless its owner holds `max_per_owner` live tasks already.
    fn create(&self, task: TaskRecord, max_per_owner: usize) -> StoreFuture<'_, ()>;

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
/// met and when tasks are created.
#[derive(Default)]
pub struct MemoryTaskStore {
    tasks: Mutex<HashMap<String, TaskRecord>>,
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryTaskStore::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, TaskRecord>> {
        lock(&self.tasks)
    }
}

impl fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MemoryTaskStore({} tasks)", self.lock().len())
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, task: TaskRecord, max_per_owner: usize) -> StoreFuture<'_, ()> {
        let now = now_ms();
        let mut tasks = self.lock();
        tasks.retain(|_, t| !t.expired(now));
        let held = tasks.values().filter(|t| t.owner == task.owner).count();
        let outcome = if held >= max_per_owner {
            Err(TaskStoreError::Full {
                limit: max_per_owner,
            })
        } else {
            tasks.insert(task.id.clone(), task);
            Ok(())
        };
        Box::pin(std::future::ready(outcome))
    }

    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>> {
        let now = now_ms();
        let mut tasks = self.lock();
        let found = match tasks.get(id) {
            Some(t) if t.expired(now) => {
                tasks.remove(id);
                None
            }
            other => other.cloned(),
        };
        Box::pin(std::future::ready(Ok(found)))
    }

    fn change<'a>(
        &'a self,
        id: &'a str,
        change: TaskChange,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        let now = now_ms();
        let mut tasks = self.lock();
        let found = tasks.get_mut(id).filter(|t| !t.expired(now)).map(|t| {
            apply(t, change, now);
            t.clone()
        });
        Box::pin(std::future::ready(Ok(found)))
    }

    fn take_answer<'a>(&'a self, id: &'a str, key: &'a str) -> StoreFuture<'a, Option<Value>> {
        let answer = self.lock().get_mut(id).and_then(|t| t.answers.remove(key));
        Box::pin(std::future::ready(Ok(answer)))
    }

    fn list<'a>(
        &'a self,
        owner: &'a str,
        after: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, Vec<TaskRecord>> {
        let now = now_ms();
        let tasks = self.lock();
        let mut mine: Vec<&TaskRecord> = tasks
            .values()
            .filter(|t| t.owner == owner && !t.expired(now))
            .collect();
        mine.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
        let start = match after.and_then(|a| tasks.get(a)) {
            Some(cursor) => mine
                .iter()
                .position(|t| (t.created_ms, &t.id) > (cursor.created_ms, &cursor.id))
                .unwrap_or(mine.len()),
            None if after.is_some() => mine.len(),
            None => 0,
        };
        let page = mine.into_iter().skip(start).take(limit).cloned().collect();
        Box::pin(std::future::ready(Ok(page)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn record(id: &str, owner: &str, created_ms: u64) -> TaskRecord {
        TaskRecord {
            id: id.into(),
            owner: owner.into(),
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

    #[tokio::test]
    async fn memory_store_bounds_owners_expires_and_pages() {
        let store = MemoryTaskStore::new();
        let now = now_ms();
        for i in 0..3 {
            store
                .create(record(&format!("t{i}"), "alice", now + i), 3)
                .await
                .unwrap();
        }
        assert_eq!(
            store.create(record("t3", "alice", now + 3), 3).await,
            Err(TaskStoreError::Full { limit: 3 })
        );
        store.create(record("b0", "bob", now), 3).await.unwrap();
        let page = store.list("alice", None, 2).await.unwrap();
        assert_eq!(
            page.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
            ["t0", "t1"]
        );
        let rest = store.list("alice", Some("t1"), 2).await.unwrap();
        assert_eq!(
            rest.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
            ["t2"]
        );
        let mut old = record("old", "carol", 1);
        old.ttl_ms = Some(1);
        store.create(old, 3).await.unwrap();
        assert_eq!(store.get("old").await.unwrap(), None, "expired");
        assert!(store.get("b0").await.unwrap().is_some());
    }
}
