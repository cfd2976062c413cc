//! Tasks: a tool call that goes on after its request was answered, polled for its status and
//! fetched later, in both protocol versions.
//!
//! - 2025-11-25 (core tasks): the client asks for a task (`tools/call` with `task`); the
//!   answer is `CreateTaskResult`; `tasks/get`, `tasks/result` (waits for the end), `tasks/list`
//!   and `tasks/cancel`; `notifications/tasks/status`. A tool's questions to the user are
//!   requests on the session, tagged with the task, while the task shows `input_required`.
//! - 2026-07-28 (the `io.modelcontextprotocol/tasks` extension): the server decides. A call of
//!   a task-capable tool from a client that declared the extension first runs as a plain
//!   request — questions asked before the tool waits on anything else go back to the client
//!   as input-required rounds — and becomes a task the moment it waits; `tasks/get` shows it
//!   (with its questions, its result or its error inlined), `tasks/update` answers its
//!   questions, `tasks/cancel` stops it.
//!
//! A task's record lives in a [`TaskStore`]: in memory by default, or in Redis (feature
//! `redis`) so that every replica sees every task and results outlive a restart. The server
//! running a task renews a lease on it; a task whose server died is reported `failed` once the
//! lease runs out.

#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub mod redis;
pub(crate) mod store;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Notify;

use crate::protocol::wire::{Empty, ExtensionsOf};
use crate::protocol::{RpcError, code};
use crate::store::{StoreUrl, StoreUrlError};
use crate::sync::lock;
use crate::tool::{CancellationToken, TaskSupport};

pub use store::{
    MemoryTaskStore, StoreFuture, StoreResult, TaskChange, TaskOutcome, TaskQuota, TaskRecord,
    TaskStatus, TaskStore, TaskStoreError, apply,
};

/// The identifier of the tasks extension (2026-07-28).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// How tasks are kept and paced.
#[derive(Debug, Clone)]
pub struct TaskSettings {
    /// How long a task is kept when the client asks for no time to live (default 1 hour).
    pub default_ttl: Duration,
    /// The longest time to live a client may ask for (default 24 hours).
    pub max_ttl: Duration,
    /// How often clients are asked to poll (default 1 second).
    pub poll_interval: Duration,
    /// The most live tasks one client may hold (default 1000): a subject's, or those of every
    /// session of one address when there are no credentials. A call beyond is refused.
    pub max_per_owner: usize,
    /// The most live tasks the server keeps of all clients together (default 50,000). A call
    /// beyond is refused until some end or expire.
    pub max_tasks: usize,
    /// How long a running task's server vouches for it without renewing (default 30 s): a
    /// task whose server stopped is reported failed this long after.
    pub lease: Duration,
}

impl Default for TaskSettings {
    fn default() -> Self {
        TaskSettings {
            default_ttl: Duration::from_secs(3600),
            max_ttl: Duration::from_secs(24 * 3600),
            poll_interval: Duration::from_secs(1),
            max_per_owner: 1000,
            max_tasks: 50_000,
            lease: Duration::from_secs(30),
        }
    }
}

/// Reads a duration such as `30s`, `500ms`, `2m` (a whole number and a unit).
pub(crate) fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().ok().filter(|n| *n > 0)?;
    match unit {
        "ms" => Some(Duration::from_millis(n)),
        "s" => Some(Duration::from_secs(n)),
        "m" => Some(Duration::from_secs(n.checked_mul(60)?)),
        _ => None,
    }
}

/// Opens the task store a URL names: `memory` (or nothing), or `redis://…` (feature `redis`;
/// `redis+unix://…` for a socket, `rediss://…` when the redis crate is built with TLS).
pub fn store_from_url(url: &str) -> Result<Arc<dyn TaskStore>, StoreUrlError> {
    Ok(match StoreUrl::parse("task store", url)? {
        StoreUrl::Memory => Arc::new(MemoryTaskStore::new()),
        #[cfg(feature = "redis")]
        StoreUrl::Redis(at) => Arc::new(redis::RedisTaskStore::on(*at)),
    })
}

/// A task running in this process: how to stop it, and how to wake it when an answer came.
pub(crate) struct Local {
    pub(crate) abort: tokio::task::AbortHandle,
    pub(crate) cancel: CancellationToken,
    pub(crate) wake: Arc<Notify>,
}

/// The server's tasks: the store, the settings, and the tasks this process runs.
pub(crate) struct Tasks {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) settings: TaskSettings,
    local: Mutex<HashMap<String, Local>>,
}

impl Tasks {
    pub(crate) fn new(store: Arc<dyn TaskStore>, settings: TaskSettings) -> Self {
        Tasks {
            store,
            settings,
            local: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Local>> {
        lock(&self.local)
    }

    /// The time to live of a new task: what the client asked for, within the bounds.
    pub(crate) fn ttl_for(&self, requested: Option<u64>) -> u64 {
        let max = millis(self.settings.max_ttl);
        requested
            .map_or(millis(self.settings.default_ttl), |r| r.max(1))
            .min(max)
    }

    /// How many tasks a client and the server may hold.
    pub(crate) fn quota(&self) -> TaskQuota {
        TaskQuota {
            per_share: self.settings.max_per_owner,
            total: self.settings.max_tasks,
        }
    }

    /// Forgets the tasks of an owner that is gone for good (an unauthenticated session that
    /// ended: nobody can ask for them any more), stopping those this process runs.
    pub(crate) async fn forget_owner(&self, owner: &str) {
        match self.store.remove_owner(owner).await {
            Ok(ids) => {
                for id in &ids {
                    self.stop_local(id);
                }
                if !ids.is_empty() {
                    tracing::debug!(tasks = ids.len(), "the tasks of an ended session dropped");
                }
            }
            Err(e) => tracing::warn!(error = %e, "the tasks of an ended session were not dropped"),
        }
    }

    /// Stops the task if this process runs it (its record says `cancelled` already).
    pub(crate) fn stop_local(&self, id: &str) {
        if let Some(local) = self.lock().remove(id) {
            local.cancel.cancel();
            local.abort.abort();
            local.wake.notify_waiters();
        }
    }

    /// The signal of a task this process runs: notified when an answer comes for it and when
    /// it ends (so `tasks/result` hears of the end at once).
    pub(crate) fn local_signal(&self, id: &str) -> Option<Arc<Notify>> {
        self.lock().get(id).map(|local| local.wake.clone())
    }

    /// Wakes the task if this process runs it (an answer came).
    pub(crate) fn wake_local(&self, id: &str) {
        if let Some(local) = self.lock().get(id) {
            local.wake.notify_waiters();
        }
    }

    /// The record of `id`, if `owner` may see it; a task whose server stopped renewing its
    /// lease is failed first.
    pub(crate) async fn get_for(&self, id: &str, owner: &str) -> Result<TaskRecord, RpcError> {
        let record = self
            .store
            .get(id)
            .await
            .map_err(store_error)?
            .filter(|t| t.owner == owner)
            .ok_or_else(|| unknown_task(id))?;
        self.check_lease(record).await
    }

    /// Fails a task still running past its lease: the server that ran it is gone.
    async fn check_lease(&self, record: TaskRecord) -> Result<TaskRecord, RpcError> {
        let now = store::now_ms();
        if record.status.is_terminal() || record.lease_until_ms >= now {
            return Ok(record);
        }
        if self.lock().contains_key(&record.id) {
            // Running here: the lease is late, not lost.
            return Ok(record);
        }
        let lost = RpcError::new(
            code::INTERNAL_ERROR,
            "the server running this task stopped before it finished (its lease ran out)",
        );
        let changed = self
            .store
            .change(&record.id, TaskChange::Finish(TaskOutcome::Error(lost)))
            .await
            .map_err(store_error)?;
        Ok(changed.unwrap_or(record))
    }
}

/// The owner of the tasks of an unauthenticated 2025 session, by the session's random name.
pub(crate) fn session_owner(nonce: &str) -> String {
    format!("session:{nonce}")
}

pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// -32602 for a task that does not exist (or is not the caller's).
pub(crate) fn unknown_task(id: &str) -> RpcError {
    RpcError::new(code::INVALID_PARAMS, format!("Unknown task: `{id}`"))
}

/// -32603 for a store that failed (or refused).
pub(crate) fn store_error(e: TaskStoreError) -> RpcError {
    RpcError::new(code::INTERNAL_ERROR, e.to_string())
}

/// -32021 for a request that needs the tasks extension the client did not declare.
pub(crate) fn needs_extension(what: &str) -> RpcError {
    let required = ExtensionsOf {
        extensions: std::collections::BTreeMap::from([(TASKS_EXTENSION, Empty {})]),
    };
    RpcError::missing_capability(
        format!(
            "Missing required client capability: {what} needs the `{TASKS_EXTENSION}` extension"
        ),
        serde_json::to_value(required).unwrap_or(Value::Null),
    )
}

/// How one `tools/call` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskMode {
    /// As a plain call.
    Plain,
    /// As a task from the start (2025-11-25, the client asked for one), kept this long.
    Now { ttl: Option<u64> },
    /// As a plain call until it waits, then as a task (2026-07-28); `required`: a call that
    /// finishes at once still becomes a (finished) task.
    Detach { required: bool },
}

/// Decides how a call of a tool with `support` runs: `asked` is the 2025 `task` param's time
/// to live (`Some(None)`: asked without one), `extension` whether a 2026 client declared
/// tasks, `stateless` whether the request is 2026's.
pub(crate) fn mode(
    tool: &str,
    support: TaskSupport,
    asked: Option<Option<u64>>,
    extension: bool,
    stateless: bool,
) -> Result<TaskMode, RpcError> {
    if stateless {
        // The server decides; a `task` param is a leftover of 2025 and is ignored.
        return match (support, extension) {
            (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => Ok(TaskMode::Plain),
            (TaskSupport::Optional, true) => Ok(TaskMode::Detach { required: false }),
            (TaskSupport::Required, true) => Ok(TaskMode::Detach { required: true }),
            (TaskSupport::Required, false) => Err(needs_extension(&format!(
                "tool `{tool}` runs only as a task, so it"
            ))),
        };
    }
    match (support, asked) {
        (TaskSupport::Forbidden, Some(_)) => Err(RpcError::new(
            code::METHOD_NOT_FOUND,
            format!("tool `{tool}` does not run as a task: call it without `task`"),
        )),
        (TaskSupport::Required, None) => Err(RpcError::new(
            code::METHOD_NOT_FOUND,
            format!("tool `{tool}` runs only as a task: call it with `task`"),
        )),
        (_, Some(ttl)) => Ok(TaskMode::Now { ttl }),
        (_, None) => Ok(TaskMode::Plain),
    }
}

pub(crate) use crate::server::state::new_id;

/// A time as RFC 3339 (`2026-07-28T10:30:00.123Z`).
pub(crate) fn rfc3339(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = i64::try_from(days).unwrap_or(0) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        ms % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_store_urls() {
        for url in ["memory", "", " memory "] {
            assert!(store_from_url(url).is_ok(), "{url:?}");
        }
        let e = store_from_url("sqlite://tasks.db").err().unwrap();
        assert_eq!(
            e.to_string(),
            "task store `sqlite://tasks.db`: expected `memory` or a `redis://host:port` URL"
        );
    }

    #[test]
    fn timestamps_are_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339(1_785_233_400_123), "2026-07-28T10:10:00.123Z");
    }

    #[test]
    fn the_mode_follows_the_tool_and_the_era() {
        use TaskSupport::*;
        assert_eq!(
            mode("t", Optional, Some(Some(5)), false, false),
            Ok(TaskMode::Now { ttl: Some(5) })
        );
        assert_eq!(mode("t", Optional, None, false, false), Ok(TaskMode::Plain));
        assert_eq!(
            mode("t", Forbidden, Some(None), false, false)
                .unwrap_err()
                .code,
            -32601
        );
        assert_eq!(
            mode("t", Required, None, false, false).unwrap_err().code,
            -32601
        );
        assert_eq!(
            mode("t", Forbidden, Some(None), true, true),
            Ok(TaskMode::Plain)
        );
        assert_eq!(mode("t", Optional, None, false, true), Ok(TaskMode::Plain));
        assert_eq!(
            mode("t", Optional, None, true, true),
            Ok(TaskMode::Detach { required: false })
        );
        let e = mode("t", Required, None, false, true).unwrap_err();
        assert_eq!(e.code, -32021);
        assert!(e.data.unwrap()["requiredCapabilities"]["extensions"][TASKS_EXTENSION].is_object());
    }

    #[test]
    fn ids_are_long_and_distinct() {
        let (a, b) = (new_id(), new_id());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
