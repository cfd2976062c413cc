//! The tasks methods and the shapes a task takes on the wire, per version: 2025-11-25's `Task`
//! (`ttl`, `pollInterval`; `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`) and the
//! 2026-07-28 extension's (`ttlMs`, `pollIntervalMs`, a flat `CreateTaskResult` with
//! `resultType: "task"`, the detailed task of `tasks/get`; `tasks/update`, `tasks/cancel`),
//! and the related-task `_meta` that ties a 2025-11-25 message to its task.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::protocol::walk::JsonText;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::protocol::jsonrpc::Reply;
use crate::protocol::request::Request;
use crate::protocol::wire::{
    CreateTask, CreatedTask, DetailedTask, Empty, Implementation, ListTasks, ResultMeta, TaskView,
};
use crate::protocol::{ProtocolVersion, RpcError, code, jsonrpc};
use crate::tool::CancellationToken;

use crate::server::core::request::{Cx, response};
use crate::server::core::session::Session;
use crate::server::offerings::selection::Principal;
use crate::server::tasks::store::{TaskChange, TaskOutcome, TaskRecord, TaskStatus};
use crate::server::tasks::{self, TASKS_EXTENSION, store_error, unknown_task};

/// The most tasks one `tasks/list` page holds.
const LIST_PAGE: usize = 50;

/// The `_meta` key that ties a message to its task (2025-11-25).
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// How often `tasks/result` looks at a task it waits for that runs in another process.
const RESULT_POLL: Duration = Duration::from_millis(100);

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskIdParams {
    task_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdateParams {
    task_id: String,
    #[serde(default)]
    input_responses: Map<String, Value>,
}

#[derive(Deserialize, Default)]
struct CursorParams {
    #[serde(default)]
    cursor: Option<String>,
}

/// A task in the version's names.
fn view(record: &TaskRecord, version: ProtocolVersion) -> TaskView<'_> {
    let stateless = version.is_stateless();
    TaskView {
        task_id: &record.id,
        status: record.status.as_str(),
        status_message: record.status_message.as_deref(),
        created_at: tasks::rfc3339(record.created_ms),
        last_updated_at: tasks::rfc3339(record.updated_ms),
        ttl: (!stateless).then_some(record.ttl_ms),
        poll_interval: (!stateless).then_some(record.poll_ms),
        ttl_ms: stateless.then_some(record.ttl_ms),
        poll_interval_ms: stateless.then_some(record.poll_ms),
    }
}

/// The detailed task of 2026-07-28's `tasks/get`: its questions, its result or its error
/// inlined.
fn detailed(record: &TaskRecord) -> DetailedTask<'_> {
    let (input_requests, result, error) = match (&record.status, &record.outcome) {
        (TaskStatus::InputRequired, _) => (Some(&record.asked), None, None),
        (TaskStatus::Completed, Some(TaskOutcome::Result(result))) => (None, Some(result), None),
        (TaskStatus::Failed, Some(TaskOutcome::Error(e))) => (None, None, Some(e)),
        _ => (None, None, None),
    };
    DetailedTask {
        task: view(record, ProtocolVersion::V2026_07_28),
        input_requests,
        result,
        error,
    }
}

/// The answer to the request that created a task: 2025's `{task}`, or 2026's flat
/// `CreateTaskResult` with `resultType: "task"`.
pub(crate) fn created_response(
    session: &Session,
    id: &str,
    version: ProtocolVersion,
    record: &TaskRecord,
) -> String {
    if version.is_stateless() {
        return jsonrpc::result_response(
            id,
            &CreatedTask {
                task: view(record, version),
                result_type: "task",
                meta: ResultMeta {
                    server_info: &session.server.shared.info,
                    extra: None,
                },
            },
        );
    }
    jsonrpc::result_response(
        id,
        &CreateTask {
            task: view(record, version),
        },
    )
}

/// `notifications/tasks/status` to a 2025-11-25 session that can hear it.
pub(crate) fn send_status(session: &Session, record: &TaskRecord) {
    if session.live() && session.initialized.load(Ordering::Relaxed) {
        session.notify(
            "notifications/tasks/status",
            &view(record, ProtocolVersion::V2025_11_25),
        );
    }
}

/// Adds `{"_meta": {"io.modelcontextprotocol/related-task": {"taskId": id}}}` to `params`.
pub(crate) fn tag(params: &mut Value, id: &str) {
    if let Some(params) = params.as_object_mut() {
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            let mut related = Map::new();
            related.insert("taskId".into(), Value::String(id.to_owned()));
            meta.insert(RELATED_TASK.into(), Value::Object(related));
        }
    }
}

/// What a tasks method answers.
enum Answer {
    Get(TaskRecord),
    Detailed(TaskRecord),
    List(Vec<TaskRecord>, Option<String>),
    /// A call's stored result, as the call would have answered.
    Result(Value),
    /// An empty acknowledgement.
    Ack,
}

impl Answer {
    fn respond(&self, id: &str, version: ProtocolVersion, info: &Implementation) -> Reply {
        match self {
            Answer::Get(r) => response(id, version, info, Ok(view(r, version)), None),
            Answer::Detailed(r) => response(id, version, info, Ok(detailed(r)), None),
            Answer::List(tasks, next) => response(
                id,
                version,
                info,
                Ok(ListTasks {
                    tasks: tasks.iter().map(|t| view(t, version)).collect(),
                    next_cursor: next.as_deref(),
                }),
                None,
            ),
            Answer::Result(v) => response(id, version, info, Ok(v), None),
            Answer::Ack => response(id, version, info, Ok(Empty {}), None),
        }
    }
}

/// Who a task belongs to: the authenticated subject, the one client of a stdio connection, a
/// 2025 session of its own (HTTP without authentication), or — in 2026, with neither — the
/// address the request comes from (so that each anonymous client has its own share of
/// tasks), else every anonymous client (the id is then the only secret).
pub(crate) fn task_owner(cx: &Cx<'_>) -> String {
    match (&cx.session.principal, &cx.stateless, cx.session.address) {
        (Principal::Anonymous, None, _) => session_owner(cx.session),
        (Principal::Anonymous, Some(_), Some(address)) => address_share(address),
        _ => cx.session.principal_key().into_owned(),
    }
}

/// Whose share of tasks a new task counts against: its owner's, but the sessions of one
/// anonymous client (one address) share one.
pub(crate) fn task_share(cx: &Cx<'_>) -> String {
    match (&cx.session.principal, cx.session.address) {
        (Principal::Anonymous, Some(address)) => address_share(address),
        _ => task_owner(cx),
    }
}

fn address_share(address: std::net::IpAddr) -> String {
    format!("client:address {address}")
}

fn session_owner(session: &Session) -> String {
    tasks::session_owner(session.nonce())
}

/// Whether a 2026 request declared the tasks extension.
pub(crate) fn declares_tasks(cx: &Cx<'_>) -> bool {
    cx.stateless.as_ref().is_some_and(|s| {
        s.client
            .capabilities
            .get("extensions")
            .and_then(|e| e.get(TASKS_EXTENSION))
            .is_some_and(|v| !v.is_null())
    })
}

/// Serves a tasks method, each as its version defines it (the dispatcher checked the method
/// exists in the version): in 2026-07-28 the client must declare the tasks extension (checked
/// before the task is looked for); the params are read into the method's type; the answer
/// comes from a task of its own, as the store may be remote.
fn serve<P, F, Fut>(cx: &Cx<'_>, request: &Request<'_>, run: F)
where
    P: for<'de> Deserialize<'de>,
    F: FnOnce(Arc<Session>, P, String, ProtocolVersion) -> Fut,
    Fut: Future<Output = Result<Answer, RpcError>> + Send + 'static,
{
    if cx.stateless.is_some() && !declares_tasks(cx) {
        let e = tasks::needs_extension(&format!("`{}`", request.name));
        return cx.refuse(&e);
    }
    let params: P = match parse(request.params.map(JsonText::get)) {
        Ok(params) => params,
        Err(e) => return cx.refuse(&e),
    };
    let (id, version) = (cx.id().to_owned(), cx.version());
    let session = cx.session.clone();
    let run = run(session.clone(), params, task_owner(cx), version);
    cx.session.spawn_tracked(
        (cx.id(), cx.key()),
        CancellationToken::default(),
        async move {
            match run.await {
                Ok(answer) => answer.respond(&id, version, &session.server.shared.info),
                Err(e) => Reply::error(&id, &e),
            }
        },
    );
}

/// `tasks/get`: 2025's task, or 2026's detailed task.
pub(crate) fn get(cx: &Cx<'_>, request: &Request<'_>) {
    serve(
        cx,
        request,
        |session, p: TaskIdParams, owner, version| async move {
            let record = session
                .server
                .shared
                .tasks
                .get_for(&p.task_id, &owner)
                .await?;
            Ok(if version.is_stateless() {
                Answer::Detailed(record)
            } else {
                Answer::Get(record)
            })
        },
    );
}

/// 2025's `tasks/result`: waits for the end, then answers as the call would have.
pub(crate) fn result(cx: &Cx<'_>, request: &Request<'_>) {
    serve(
        cx,
        request,
        |session, p: TaskIdParams, owner, _| async move { task_result(&session, p, &owner).await },
    );
}

async fn task_result(session: &Session, p: TaskIdParams, owner: &str) -> Result<Answer, RpcError> {
    let tasks = &session.server.shared.tasks;
    let record = loop {
        // A task this process runs signals its end; one running elsewhere is looked at every
        // `RESULT_POLL`.
        let signal = tasks.local_signal(&p.task_id);
        let mut ended = signal.as_deref().map(|s| Box::pin(s.notified()));
        if let Some(ended) = ended.as_mut() {
            ended.as_mut().enable();
        }
        let record = tasks.get_for(&p.task_id, owner).await?;
        if record.status.is_terminal() {
            break record;
        }
        match ended {
            Some(ended) => {
                let _ = tokio::time::timeout(RESULT_POLL, ended).await;
            }
            None => tokio::time::sleep(RESULT_POLL).await,
        }
    };
    match record.outcome {
        Some(TaskOutcome::Result(mut result)) => {
            tag(&mut result, &record.id);
            Ok(Answer::Result(result))
        }
        Some(TaskOutcome::Error(e)) => Err(e),
        None => Err(RpcError::new(
            code::INTERNAL_ERROR,
            format!(
                "task `{}` was cancelled{}",
                record.id,
                record
                    .status_message
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            ),
        )),
    }
}

/// 2025's `tasks/list`: the owner's tasks, a page at a time.
pub(crate) fn list(cx: &Cx<'_>, request: &Request<'_>) {
    serve(
        cx,
        request,
        |session, p: Option<CursorParams>, owner, _| async move {
            let p = p.unwrap_or_default();
            let tasks = &session.server.shared.tasks;
            let mut page = tasks
                .store
                .list(&owner, p.cursor.as_deref(), LIST_PAGE + 1)
                .await
                .map_err(store_error)?;
            if p.cursor.is_some() && page.is_empty() {
                // An unknown (or expired) cursor names no place in the list.
                let known = match p.cursor.as_deref() {
                    Some(c) => tasks.store.get(c).await.map_err(store_error)?.is_some(),
                    None => true,
                };
                if !known {
                    return Err(RpcError::new(code::INVALID_PARAMS, "Invalid cursor"));
                }
            }
            let more = page.len() > LIST_PAGE;
            page.truncate(LIST_PAGE);
            let next = more.then(|| page.last().map(|t| t.id.clone())).flatten();
            Ok(Answer::List(page, next))
        },
    );
}

/// `tasks/cancel`: stops a task that has not ended (2026 acknowledges one that has, 2025
/// refuses it).
pub(crate) fn cancel(cx: &Cx<'_>, request: &Request<'_>) {
    serve(
        cx,
        request,
        |session, p: TaskIdParams, owner, version| async move {
            task_cancel(&session, p, &owner, version).await
        },
    );
}

async fn task_cancel(
    session: &Session,
    p: TaskIdParams,
    owner: &str,
    version: ProtocolVersion,
) -> Result<Answer, RpcError> {
    let tasks = &session.server.shared.tasks;
    let record = tasks.get_for(&p.task_id, owner).await?;
    if record.status.is_terminal() {
        return if version.is_stateless() {
            Ok(Answer::Ack)
        } else {
            Err(RpcError::new(
                code::INVALID_PARAMS,
                format!(
                    "task `{}` is {} already: it cannot be cancelled",
                    record.id,
                    record.status.as_str()
                ),
            ))
        };
    }
    let cancelled = tasks
        .store
        .change(
            &record.id,
            TaskChange::Cancel {
                message: Some("The task was cancelled by request.".into()),
            },
        )
        .await
        .map_err(store_error)?
        .ok_or_else(|| unknown_task(&record.id))?;
    tasks.stop_local(&record.id);
    if version.is_stateless() {
        Ok(Answer::Ack)
    } else {
        send_status(session, &cancelled);
        Ok(Answer::Get(cancelled))
    }
}

/// 2026's `tasks/update`: answers to the task's questions (others are ignored); the record
/// has them before the acknowledgement goes out.
pub(crate) fn update(cx: &Cx<'_>, request: &Request<'_>) {
    serve(
        cx,
        request,
        |session, p: UpdateParams, owner, _| async move {
            let tasks = &session.server.shared.tasks;
            let record = tasks.get_for(&p.task_id, &owner).await?;
            if !p.input_responses.is_empty() && !record.status.is_terminal() {
                tasks
                    .store
                    .change(&record.id, TaskChange::Answer(p.input_responses))
                    .await
                    .map_err(store_error)?;
                tasks.wake_local(&record.id);
            }
            Ok(Answer::Ack)
        },
    );
}

fn parse<T: for<'de> Deserialize<'de>>(params: Option<&str>) -> Result<T, RpcError> {
    let text = params.unwrap_or("null");
    serde_json::from_str(text)
        .map_err(|e| RpcError::new(code::INVALID_PARAMS, format!("Invalid params: {e}")))
}
