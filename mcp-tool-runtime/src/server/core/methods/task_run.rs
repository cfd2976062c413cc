//! Running a task: its record is created (durably, before the client hears of it), the tool
//! runs in a tokio task of its own, its lease is renewed while it runs and its record watched
//! for a cancellation made elsewhere, and its outcome is stored when it ends.
//!
//! While it runs, the call reaches its client through [`TaskConnection`]: in 2025-11-25 the
//! session, every message tagged with the task; in 2026-07-28 nothing but the task's record —
//! a question becomes an input request of the task, answered by `tasks/update`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tokio::sync::Notify;

use crate::protocol::jsonrpc::Reply;
use crate::protocol::wire::InputRequest;
use crate::protocol::{LogLevel, ProtocolVersion, RpcError, code, jsonrpc};
use crate::tool::context::{Answer, Connection};
use crate::tool::input::Finish;
use crate::tool::{Batch, Ctx, ToolResult};

use super::tasks::{created_response, send_status, tag};
use crate::server::core::handle::ServerHandle;
use crate::server::core::session::Session;
use crate::server::tasks::store::{TaskChange, TaskOutcome, TaskRecord, TaskStatus, now_ms};
use crate::server::tasks::{Local, Tasks, store_error};

/// How often a waiting question looks for its answer in a shared store.
const ANSWER_POLL: Duration = Duration::from_millis(200);

/// The tool's run, ending with what the call came to.
pub(crate) type Run = Pin<Box<dyn Future<Output = Finish<ToolResult>> + Send>>;

/// A call's connection once it runs as the task `id`.
pub(crate) struct TaskConnection {
    session: Arc<Session>,
    inner: Arc<dyn Connection>,
    id: Arc<str>,
    version: ProtocolVersion,
    wake: Arc<Notify>,
    unnamed: AtomicU32,
}

impl TaskConnection {
    pub(crate) fn new(
        session: Arc<Session>,
        inner: Arc<dyn Connection>,
        id: &str,
        version: ProtocolVersion,
    ) -> Self {
        TaskConnection {
            session,
            inner,
            id: id.into(),
            version,
            wake: Arc::new(Notify::new()),
            unnamed: AtomicU32::new(0),
        }
    }

    fn tasks(&self) -> &Tasks {
        &self.session.server.shared.tasks
    }

    /// `message` (a JSON-RPC message) with the related-task `_meta` added to its params.
    fn tagged(&self, message: &str) -> String {
        let Ok(mut value) = serde_json::from_str::<Value>(message) else {
            return message.to_owned();
        };
        if let Some(object) = value.as_object_mut() {
            let params = object
                .entry("params")
                .or_insert_with(|| Value::Object(Map::new()));
            tag(params, &self.id);
        }
        jsonrpc::json_string(&value)
    }

    /// Records a change and tells a 2025 client the new status.
    async fn record(&self, change: TaskChange) -> Result<Option<TaskRecord>, RpcError> {
        let record = self
            .tasks()
            .store
            .change(&self.id, change)
            .await
            .map_err(store_error)?;
        if let Some(record) = &record
            && !self.version.is_stateless()
        {
            send_status(&self.session, record);
        }
        Ok(record)
    }

    /// Waits for the answer to `key`, given by `tasks/update` here or on another server.
    async fn answer(&self, key: &str) -> Result<Value, RpcError> {
        loop {
            let notified = self.wake.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let store = &self.tasks().store;
            if let Some(answer) = store
                .take_answer(&self.id, key)
                .await
                .map_err(store_error)?
            {
                return Ok(answer);
            }
            match store.get(&self.id).await.map_err(store_error)? {
                Some(t) if !t.status.is_terminal() => {}
                _ => {
                    return Err(RpcError::new(
                        code::INTERNAL_ERROR,
                        "the task ended while waiting for input",
                    ));
                }
            }
            let _ = tokio::time::timeout(ANSWER_POLL, notified).await;
        }
    }
}

impl Connection for TaskConnection {
    fn send(&self, _related: Option<&Arc<str>>, message: String) {
        // 2026-07-28 has no notifications for a task's progress or logs.
        if !self.version.is_stateless() {
            // The request that started the task was answered: its messages go on the
            // session's own stream.
            self.inner.send(None, self.tagged(&message));
        }
    }

    fn request<'a>(
        &'a self,
        _related: Option<&'a Arc<str>>,
        method: &'a str,
        params: String,
    ) -> Answer<'a> {
        Box::pin(async move {
            if self.version.is_stateless() {
                return Err(RpcError::new(
                    code::INTERNAL_ERROR,
                    format!(
                        "`{method}`: in protocol 2026-07-28 a task makes no requests of the client"
                    ),
                ));
            }
            let mut params: Value = serde_json::from_str(&params).unwrap_or(Value::Null);
            tag(&mut params, &self.id);
            self.inner
                .request(None, method, jsonrpc::json_string(&params))
                .await
        })
    }

    fn ask<'a>(
        &'a self,
        _related: Option<&'a Arc<str>>,
        key: Option<&'a str>,
        method: &'a str,
        params: String,
    ) -> Answer<'a> {
        Box::pin(async move {
            let key = match key {
                Some(k) => k.to_owned(),
                None => {
                    let n = self.unnamed.fetch_add(1, Ordering::Relaxed) + 1;
                    let kind = method.split('/').next().unwrap_or("input");
                    format!("{kind}-{n}")
                }
            };
            let request_params: Value = serde_json::from_str(&params).unwrap_or(Value::Null);
            let request = InputRequest {
                method,
                params: &request_params,
            };
            self.record(TaskChange::Ask {
                key: key.clone(),
                request: serde_json::to_value(request).unwrap_or(Value::Null),
            })
            .await?;
            if self.version.is_stateless() {
                return self.answer(&key).await;
            }
            // 2025-11-25: a request on the session, tagged with the task.
            let mut tagged = request_params;
            tag(&mut tagged, &self.id);
            let answer = self
                .inner
                .request(None, method, jsonrpc::json_string(&tagged))
                .await;
            let settled = answer.clone().unwrap_or(Value::Null);
            self.record(TaskChange::Answer(Map::from_iter([(key.clone(), settled)])))
                .await?;
            let _ = self.tasks().store.take_answer(&self.id, &key).await;
            answer
        })
    }

    fn logs(&self, level: LogLevel) -> bool {
        !self.version.is_stateless() && self.inner.logs(level)
    }

    fn change_tools(
        &self,
        _related: Option<&Arc<str>>,
        batch: &Batch,
    ) -> Result<Vec<String>, String> {
        self.inner.change_tools(None, batch)
    }

    fn active_tools(&self) -> Vec<String> {
        self.inner.active_tools()
    }

    fn server(&self) -> &ServerHandle {
        self.inner.server()
    }

    fn share_key(&self) -> String {
        self.inner.share_key()
    }
}

/// Starts the task `record` running `run` for the request `id` of `session`: creates its
/// record, answers the request with it, runs the tool, stores how it ended. `ctx` is the
/// call's context; its task connection is set here.
pub(crate) fn start(
    session: &Arc<Session>,
    id: &str,
    version: ProtocolVersion,
    record: TaskRecord,
    ctx: &Ctx,
    run: Run,
) {
    let task = Arc::new(TaskConnection::new(
        session.clone(),
        ctx.state.conn.clone(),
        &record.id,
        version,
    ));
    let wake = task.wake.clone();
    let _ = ctx.state.task.set(task);
    let cancel = ctx.cancellation().clone();
    let session = session.clone();
    let request_id = id.to_owned();
    let task_id = record.id.clone();
    let tasks = &session.server.shared.tasks;
    // The table is locked while spawning, so the task cannot remove its entry before it is
    // inserted.
    let mut local = tasks.lock();
    let runner = tokio::spawn(drive(session.clone(), request_id, version, record, run));
    local.insert(
        task_id,
        Local {
            abort: runner.abort_handle(),
            cancel,
            wake,
        },
    );
}

/// The life of a task, after its call was decided to be one.
async fn drive(
    session: Arc<Session>,
    request_id: String,
    version: ProtocolVersion,
    record: TaskRecord,
    run: Run,
) {
    let tasks = &session.server.shared.tasks;
    let id = record.id.clone();
    if let Err(e) = tasks.store.create(record.clone(), tasks.quota()).await {
        tasks.lock().remove(&id);
        let e = store_error(e);
        session.respond(&request_id, Reply::error(&request_id, &e));
        return;
    }
    session.respond(
        &request_id,
        Reply::result(created_response(&session, &request_id, version, &record)),
    );
    let finish = tokio::select! {
        finish = run => finish,
        () = watch(tasks, &id) => {
            // Cancelled (or gone) elsewhere: the tool's future is dropped here.
            tasks.lock().remove(&id);
            return;
        }
    };
    let outcome = match finish {
        Finish::Done(mut result) => match result.protocol_error.take() {
            Some(e) => TaskOutcome::Error(e),
            None => TaskOutcome::Result(result_value(&result, version, &session)),
        },
        Finish::NeedsInput => TaskOutcome::Error(RpcError::new(
            code::INTERNAL_ERROR,
            "the tool waits for input no round can give",
        )),
    };
    match tasks.store.change(&id, TaskChange::Finish(outcome)).await {
        Ok(Some(done)) if !version.is_stateless() => send_status(&session, &done),
        Ok(_) => {}
        Err(e) => tracing::error!(task = %id, error = %e, "the task's outcome could not be stored"),
    }
    if let Some(local) = tasks.lock().remove(&id) {
        // `tasks/result` requests waiting for it.
        local.wake.notify_waiters();
    }
}

/// A call's result as its request would have been answered (the version's `CallToolResult`).
fn result_value(result: &ToolResult, version: ProtocolVersion, session: &Session) -> Value {
    let text = result.respond("0", version, &session.server.shared.info);
    serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|mut v| v.get_mut("result").map(Value::take))
        .unwrap_or(Value::Null)
}

/// Renews the task's lease while it runs, and completes when its record says it was
/// cancelled (or it is gone): a `tasks/cancel` that reached another server.
async fn watch(tasks: &Tasks, id: &str) {
    let lease = tasks.settings.lease;
    let tick = (lease / 3).clamp(Duration::from_millis(50), Duration::from_millis(500));
    let mut renewed = Instant::now();
    loop {
        tokio::time::sleep(tick).await;
        match tasks.store.get(id).await {
            Ok(Some(t)) if t.status == TaskStatus::Cancelled => return,
            Ok(None) => return,
            Ok(Some(_)) | Err(_) => {}
        }
        if renewed.elapsed() >= lease / 3 {
            let until_ms = now_ms().saturating_add(crate::server::tasks::millis(lease));
            if let Err(e) = tasks.store.change(id, TaskChange::Renew { until_ms }).await {
                tracing::warn!(task = %id, error = %e, "the task's lease could not be renewed");
            }
            renewed = Instant::now();
        }
    }
}
