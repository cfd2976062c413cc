//! The shapes of tasks on the wire: 2025-11-25's core tasks and the 2026-07-28 tasks
//! extension's, as derived types.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::{Empty, ResultMeta};
use crate::protocol::error::RpcError;

/// A task as a result or notification shows it: 2025-11-25's names (`ttl`, `pollInterval`)
/// or the 2026-07-28 extension's (`ttlMs`, `pollIntervalMs`), whichever is set.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskView<'a> {
    pub(crate) task_id: &'a str,
    pub(crate) status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) status_message: Option<&'a str>,
    pub(crate) created_at: String,
    pub(crate) last_updated_at: String,
    /// 2025-11-25: the time to live (`null`: unlimited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ttl: Option<Option<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) poll_interval: Option<u64>,
    /// 2026-07-28: the time to live (`null`: unlimited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ttl_ms: Option<Option<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) poll_interval_ms: Option<u64>,
}

/// 2025-11-25's `CreateTaskResult`.
#[derive(Serialize)]
pub(crate) struct CreateTask<'a> {
    pub(crate) task: TaskView<'a>,
}

/// 2026-07-28's flat `CreateTaskResult` (`resultType: "task"`).
#[derive(Serialize)]
pub(crate) struct CreatedTask<'a> {
    #[serde(flatten)]
    pub(crate) task: TaskView<'a>,
    #[serde(rename = "resultType")]
    pub(crate) result_type: &'static str,
    #[serde(rename = "_meta")]
    pub(crate) meta: ResultMeta<'a>,
}

/// The detailed task of 2026-07-28's `tasks/get`: its questions, result or error inlined.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DetailedTask<'a> {
    #[serde(flatten)]
    pub(crate) task: TaskView<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) input_requests: Option<&'a Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<&'a RpcError>,
}

/// The result of 2025-11-25's `tasks/list`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListTasks<'a> {
    pub(crate) tasks: Vec<TaskView<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) next_cursor: Option<&'a str>,
}

/// 2025-11-25's `tasks` server capability: listing, cancelling, and task-augmented
/// `tools/call`.
#[derive(Debug, Clone, Serialize, Default)]
pub(crate) struct TasksCapability {
    pub(crate) list: Empty,
    pub(crate) cancel: Empty,
    pub(crate) requests: TaskRequests,
}

/// Which requests may be tasks.
#[derive(Debug, Clone, Serialize, Default)]
pub(crate) struct TaskRequests {
    pub(crate) tools: TaskToolRequests,
}

/// `tools/call` may be a task.
#[derive(Debug, Clone, Serialize, Default)]
pub(crate) struct TaskToolRequests {
    pub(crate) call: Empty,
}

/// `{extensions: {id: {}}}`.
#[derive(Serialize)]
pub(crate) struct ExtensionsOf<'a> {
    pub(crate) extensions: BTreeMap<&'a str, Empty>,
}
