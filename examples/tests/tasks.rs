//! The `reports` example as tasks, in both protocol versions, over stdio and Streamable HTTP.
//!
//! - 2025-11-25: the client asks for a task (`tools/call` with `task`); `tasks/get`,
//!   `tasks/result` (waits for the end), `tasks/list` (paged), `tasks/cancel`;
//!   `notifications/tasks/status`; progress and the task's elicitation tagged with the
//!   related-task `_meta`; a session sees only its own tasks.
//! - 2026-07-28: a client declaring the `io.modelcontextprotocol/tasks` extension gets a task
//!   once the tool waits; `tasks/get` shows its question, its result; `tasks/update` answers;
//!   without the extension an optional tool runs plainly and a required one is refused.
//!
//! Tasks live in the servers' memory here; `tasks_redis.rs` shares them through Redis.

mod common;
#[path = "common/tasks.rs"]
mod tasks_common;

use std::collections::HashSet;
use std::thread;
use std::time::Duration;

use common::stateless::HttpServer;
use common::{Proc, text};
use serde_json::{Value, json};
use tasks_common::{
    Client2026, Http, RELATED_TASK, REPORTS, TASKS_EXTENSION, assert_report, assert_task_2025,
    confirm_2026, create_2026, err, get_2026, ok, one_elicitation, poll_2026, task_id, with_tasks,
};

// ---------------------------------------------------------------------------------------------
// 2025-11-25 over stdio

/// A 2025-11-25 client over stdio that keeps every notification it was sent.
struct Client2025 {
    p: Proc,
    notes: Vec<Value>,
}

impl Client2025 {
    /// Spawns `reports` and completes the handshake, declaring elicitation.
    fn start() -> Client2025 {
        Client2025 {
            p: Proc::initialized_with(REPORTS, &[], json!({ "elicitation": {} })),
            notes: Vec::new(),
        }
    }

    /// Sends a request and returns its response; the notifications before it are kept, a
    /// request of the server before it fails the test.
    fn exchange(&mut self, method: &str, params: Value) -> Value {
        let id = Value::from(self.p.next_id());
        self.p.send_request(&id, method, params);
        let (before, response) = self.p.until_response(&id);
        for m in &before {
            assert!(m.get("id").is_none(), "unexpected request: {m}");
        }
        self.notes.extend(before);
        response
    }

    fn result(&mut self, method: &str, params: Value) -> Value {
        ok(&self.exchange(method, params)).clone()
    }

    fn error(&mut self, method: &str, params: Value) -> Value {
        err(&self.exchange(method, params)).clone()
    }

    /// Calls `tool` as a task (`task` is the task param) with a progress token; asserts the
    /// `CreateTaskResult` and returns its task.
    fn create(&mut self, tool: &str, arguments: Value, task: Value, token: &str) -> Value {
        let result = self.result(
            "tools/call",
            json!({
                "name": tool,
                "arguments": arguments,
                "task": task,
                "_meta": { "progressToken": token }
            }),
        );
        assert!(
            result.get("content").is_none() && result.get("resultType").is_none(),
            "a CreateTaskResult, no tool result: {result}"
        );
        let task = result["task"].clone();
        assert_task_2025(&task);
        assert_eq!(task["status"], "working", "{result}");
        task
    }

    fn get(&mut self, id: &str) -> Value {
        let task = self.result("tasks/get", json!({ "taskId": id }));
        assert_task_2025(&task);
        assert_eq!(task["taskId"], id, "{task}");
        task
    }

    /// The statuses `notifications/tasks/status` told of task `id`, in order.
    fn statuses(&self, id: &str) -> Vec<String> {
        self.notes
            .iter()
            .filter(|m| m["method"] == "notifications/tasks/status" && m["params"]["taskId"] == id)
            .map(|m| {
                assert_task_2025(&m["params"]);
                m["params"]["status"].as_str().expect("status").to_owned()
            })
            .collect()
    }

    /// The progress notifications of `token`, each asserted to be tagged with task `id`.
    fn progress(&self, token: &str, id: &str) -> Vec<Value> {
        let progress: Vec<Value> = self
            .notes
            .iter()
            .filter(|m| {
                m["method"] == "notifications/progress" && m["params"]["progressToken"] == token
            })
            .map(|m| m["params"].clone())
            .collect();
        for p in &progress {
            assert_eq!(
                p["_meta"][RELATED_TASK]["taskId"], id,
                "progress inside a task carries the related task: {p}"
            );
        }
        progress
    }

    /// Every notification that comes within a short while.
    fn settle(&mut self) {
        let more = self.p.drain_for(common::QUIET);
        self.notes.extend(more);
    }
}

/// The ids of a `tasks/list` page.
fn ids(list: &Value) -> Vec<String> {
    list["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("`tasks` is an array: {list}"))
        .iter()
        .map(|t| {
            assert_task_2025(t);
            task_id(t)
        })
        .collect()
}

#[test]
fn sales_report_as_a_task_2025() {
    let mut c = Client2025::start();
    let task = c.create(
        "sales_report",
        json!({ "year": 2024, "pace_ms": 150 }),
        json!({ "ttl": 60_000 }),
        "sales",
    );
    let id = task_id(&task);
    assert_eq!(
        task["ttl"], 60_000,
        "the ttl asked for, within bounds: {task}"
    );

    // Twelve months at 150 ms: still working right after.
    let got = c.get(&id);
    assert_eq!(got["status"], "working", "{got}");
    assert_eq!(got["createdAt"], task["createdAt"], "{got}");

    // tasks/result waits for the end (the task was working when it was asked), then answers
    // as the call would have, tagged with the task.
    let result = c.result("tasks/result", json!({ "taskId": id }));
    assert!(result.get("isError").is_none_or(|e| e == false), "{result}");
    assert_report(&result["structuredContent"], 2024);
    assert_eq!(result["_meta"][RELATED_TASK]["taskId"], id, "{result}");
    c.settle();
    let statuses = c.statuses(&id);
    assert_eq!(
        statuses.last().map(String::as_str),
        Some("completed"),
        "notifications/tasks/status told of the end: {statuses:?}"
    );
    let progress = c.progress("sales", &id);
    assert_eq!(
        progress.len(),
        12,
        "a progress notification a month: {progress:?}"
    );
    assert_eq!(progress[11]["progress"], 12.0, "{progress:?}");
    assert_eq!(progress[11]["total"], 12.0, "{progress:?}");

    let done = c.get(&id);
    assert_eq!(done["status"], "completed", "{done}");
    // The result again: the task keeps it.
    let again = c.result("tasks/result", json!({ "taskId": id }));
    assert_eq!(again["structuredContent"], result["structuredContent"]);

    let list = c.result("tasks/list", json!({}));
    assert_eq!(ids(&list), [id.as_str()], "{list}");
    assert!(list.get("nextCursor").is_none(), "{list}");

    // A finished task cannot be cancelled; an unknown one is unknown everywhere.
    let e = c.error("tasks/cancel", json!({ "taskId": id }));
    assert_eq!(e["code"], -32602, "{e}");
    assert_eq!(c.get(&id)["status"], "completed");
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let e = c.error(method, json!({ "taskId": "no-such-task" }));
        assert_eq!(e["code"], -32602, "{method}: {e}");
    }
}

#[test]
fn task_ttl_stays_within_bounds_2025() {
    let mut c = Client2025::start();
    let asked = 10_u64.pow(12);
    let huge = c.create(
        "sales_report",
        json!({ "year": 2001, "pace_ms": 0 }),
        json!({ "ttl": asked }),
        "huge",
    );
    let ttl = huge["ttl"].as_u64().expect("a ttl");
    assert!(ttl > 0 && ttl < asked, "a ttl capped by the server: {huge}");
    let default = c.create(
        "sales_report",
        json!({ "year": 2002, "pace_ms": 0 }),
        json!({}),
        "default",
    );
    assert!(
        default["ttl"].as_u64().is_some_and(|t| t > 0 && t <= ttl),
        "a default ttl within bounds: {default}"
    );
}

#[test]
fn tasks_end_with_tool_errors_and_expire_2025() {
    let mut c = Client2025::start();
    // A tool error is a completed task whose result says so.
    let task = c.create(
        "sales_report",
        json!({ "year": 1999 }),
        json!({ "ttl": 60_000 }),
        "early",
    );
    let id = task_id(&task);
    let result = c.result("tasks/result", json!({ "taskId": id }));
    assert_eq!(result["isError"], true, "{result}");
    assert!(text(&result).contains("no sales in 1999"), "{result}");
    assert_eq!(result["_meta"][RELATED_TASK]["taskId"], id, "{result}");
    assert_eq!(c.get(&id)["status"], "completed");

    // A task is kept for its ttl, then forgotten.
    let short = c.create(
        "sales_report",
        json!({ "year": 2003, "pace_ms": 0 }),
        json!({ "ttl": 300 }),
        "short",
    );
    assert_eq!(short["ttl"], 300, "{short}");
    let short_id = task_id(&short);
    let deadline = std::time::Instant::now() + common::TIMEOUT;
    loop {
        let response = c.exchange("tasks/get", json!({ "taskId": short_id }));
        if let Some(e) = response.get("error") {
            assert_eq!(e["code"], -32602, "an expired task is unknown: {e}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the task outlived its ttl: {response}"
        );
        thread::sleep(Duration::from_millis(50));
    }
    let list = c.result("tasks/list", json!({}));
    assert_eq!(ids(&list), [id], "{list}");
}

#[test]
fn task_list_pages_2025() {
    let mut c = Client2025::start();
    let mut created = Vec::new();
    for i in 0..55 {
        let task = c.create(
            "sales_report",
            json!({ "year": 2000 + i, "pace_ms": 0 }),
            json!({ "ttl": 60_000 }),
            &format!("t{i}"),
        );
        created.push(task_id(&task));
    }
    let first = c.result("tasks/list", json!({}));
    let first_ids = ids(&first);
    assert_eq!(first_ids.len(), 50, "a page holds 50 tasks: {first}");
    let cursor = first["nextCursor"]
        .as_str()
        .unwrap_or_else(|| panic!("more to come: {first}"));
    let second = c.result("tasks/list", json!({ "cursor": cursor }));
    let second_ids = ids(&second);
    assert!(
        second.get("nextCursor").is_none(),
        "the last page: {second}"
    );
    // Every task once (tasks created within the same millisecond may come in any order).
    let listed: Vec<String> = first_ids.into_iter().chain(second_ids).collect();
    assert_eq!(listed.len(), 55, "{listed:?}");
    let unique: HashSet<&String> = listed.iter().collect();
    assert_eq!(unique, created.iter().collect::<HashSet<_>>());
    let created_at = |list: &Value| -> Vec<String> {
        list["tasks"]
            .as_array()
            .expect("tasks")
            .iter()
            .map(|t| t["createdAt"].as_str().expect("createdAt").to_owned())
            .collect()
    };
    let times: Vec<String> = created_at(&first)
        .into_iter()
        .chain(created_at(&second))
        .collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "oldest first: {times:?}"
    );

    let e = c.error("tasks/list", json!({ "cursor": "no-such-cursor" }));
    assert_eq!(e["code"], -32602, "{e}");
}

#[test]
fn cancelled_task_stays_cancelled_2025() {
    let mut c = Client2025::start();
    // Twelve months at 100 ms: 1.2 s.
    let task = c.create(
        "sales_report",
        json!({ "year": 2030, "pace_ms": 100 }),
        json!({ "ttl": 60_000 }),
        "doomed",
    );
    let id = task_id(&task);
    let cancelled = c.result("tasks/cancel", json!({ "taskId": id }));
    assert_task_2025(&cancelled);
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert_eq!(c.get(&id)["status"], "cancelled");

    let e = c.error("tasks/result", json!({ "taskId": id }));
    assert!(
        e["message"].as_str().unwrap_or_default().contains("cancel"),
        "{e}"
    );
    let e = c.error("tasks/cancel", json!({ "taskId": id }));
    assert_eq!(e["code"], -32602, "cancelled already: {e}");

    // Past the time it would have finished, it is still cancelled and never completed.
    thread::sleep(Duration::from_millis(1_800));
    c.settle();
    assert_eq!(c.get(&id)["status"], "cancelled");
    let statuses = c.statuses(&id);
    assert!(
        statuses.contains(&"cancelled".to_owned()) && !statuses.contains(&"completed".to_owned()),
        "{statuses:?}"
    );
    let progress = c.progress("doomed", &id);
    assert!(progress.len() < 12, "the report stopped: {progress:?}");
    let list = c.result("tasks/list", json!({}));
    let entry = &list["tasks"][0];
    assert_eq!(entry["taskId"], id, "{list}");
    assert_eq!(entry["status"], "cancelled", "{list}");
}

#[test]
fn purge_runs_only_as_a_task_and_asks_while_it_runs_2025() {
    let mut c = Client2025::start();
    let e = c.error(
        "tools/call",
        json!({ "name": "purge_reports", "arguments": {} }),
    );
    assert_eq!(e["code"], -32601, "a task-only tool without `task`: {e}");

    // One report, built plainly.
    let report = c.result(
        "tools/call",
        json!({ "name": "sales_report", "arguments": { "year": 2024, "pace_ms": 0 } }),
    );
    assert_report(&report["structuredContent"], 2024);
    assert!(report["_meta"].get(RELATED_TASK).is_none(), "{report}");

    let task = c.create("purge_reports", json!({}), json!({}), "purge");
    let id = task_id(&task);

    // The question comes on the session, tagged with the task, while it shows input_required.
    let (notes, request) = c.p.next_non_notification();
    c.notes.extend(notes);
    assert_eq!(request["method"], "elicitation/create", "{request}");
    assert_eq!(
        request["params"]["message"], "Purge 1 reports?",
        "{request}"
    );
    assert_eq!(
        request["params"]["_meta"][RELATED_TASK]["taskId"], id,
        "the question is tagged with its task: {request}"
    );
    assert_eq!(c.get(&id)["status"], "input_required");
    assert!(
        c.statuses(&id).contains(&"input_required".to_owned()),
        "{:?}",
        c.notes
    );

    c.p.respond(
        &request["id"],
        json!({ "action": "accept", "content": { "confirm": true } }),
    );
    let result = c.result("tasks/result", json!({ "taskId": id }));
    assert_eq!(text(&result), "purged 1 reports", "{result}");
    assert_eq!(result["_meta"][RELATED_TASK]["taskId"], id, "{result}");
    c.settle();
    assert_eq!(c.get(&id)["status"], "completed");
    let statuses = c.statuses(&id);
    assert_eq!(
        statuses.last().map(String::as_str),
        Some("completed"),
        "{statuses:?}"
    );
    let input = statuses.iter().position(|s| s == "input_required");
    let working = statuses.iter().rposition(|s| s == "working");
    assert!(
        input.is_some() && working > input,
        "working again once answered: {statuses:?}"
    );
    let progress = c.progress("purge", &id);
    assert_eq!(progress.len(), 2, "{progress:?}");
}

// ---------------------------------------------------------------------------------------------
// 2025-11-25 over HTTP: a session sees its own tasks

#[test]
fn sessions_see_only_their_own_tasks_2025() {
    let server = HttpServer::start(REPORTS, &[], &[]);
    let a = server.session_2025(None, json!({}));
    let b = server.session_2025(None, json!({}));
    let reply = server.request_2025(
        Some(&a),
        None,
        "tools/call",
        json!({
            "name": "sales_report",
            "arguments": { "year": 2024, "pace_ms": 100 },
            "task": { "ttl": 60_000 }
        }),
    );
    let task = reply.result()["task"].clone();
    assert_task_2025(&task);
    let id = task_id(&task);

    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let reply = server.request_2025(Some(&b), None, method, json!({ "taskId": id }));
        assert_eq!(
            reply.error()["code"],
            -32602,
            "{method} of another session's task: {reply:?}"
        );
    }
    let reply = server.request_2025(Some(&b), None, "tasks/list", json!({}));
    assert_eq!(ids(reply.result()), Vec::<String>::new(), "{reply:?}");

    let reply = server.request_2025(Some(&a), None, "tasks/list", json!({}));
    assert_eq!(ids(reply.result()), [id.as_str()], "{reply:?}");
    let reply = server.request_2025(Some(&a), None, "tasks/result", json!({ "taskId": id }));
    let result = reply.result();
    assert_report(&result["structuredContent"], 2024);
    assert_eq!(result["_meta"][RELATED_TASK]["taskId"], id, "{reply:?}");
    let reply = server.request_2025(Some(&a), None, "tasks/get", json!({ "taskId": id }));
    assert_eq!(reply.result()["status"], "completed", "{reply:?}");
    // B's attempt to cancel changed nothing.
    let reply = server.request_2025(Some(&b), None, "tasks/get", json!({ "taskId": id }));
    assert_eq!(reply.error()["code"], -32602, "{reply:?}");
}

// ---------------------------------------------------------------------------------------------
// 2026-07-28, over stdio and over HTTP

/// The whole 2026-07-28 story of `reports` through `c` (a fresh server).
fn reports_2026(c: &mut dyn Client2026) {
    // With the extension, a report becomes a task once it waits.
    let task = create_2026(c, "sales_report", json!({ "year": 2024, "pace_ms": 100 }));
    let id = task_id(&task);
    assert!(
        matches!(task["status"].as_str(), Some("working" | "completed")),
        "{task}"
    );
    let done = poll_2026(c, &id, &["completed"]);
    assert_eq!(done["taskId"], id.as_str(), "{done}");
    assert_report(&done["result"]["structuredContent"], 2024);
    assert!(done.get("inputRequests").is_none(), "{done}");
    assert!(done.get("error").is_none(), "{done}");

    // Without it, the same tool runs plainly.
    let response = c.request(
        "tools/call",
        json!({ "name": "sales_report", "arguments": { "year": 2025, "pace_ms": 0 } }),
    );
    let plain = ok(&response);
    assert_eq!(plain["resultType"], "complete", "{plain}");
    assert_report(&plain["structuredContent"], 2025);

    // A task-only tool needs the extension.
    let response = c.request(
        "tools/call",
        json!({ "name": "purge_reports", "arguments": {} }),
    );
    let e = err(&response);
    assert_eq!(e["code"], -32021, "{e}");
    assert!(
        e["data"]["requiredCapabilities"]["extensions"][TASKS_EXTENSION].is_object(),
        "{e}"
    );

    // With it: a task that asks its question through tasks/get, answered by tasks/update.
    let purge = create_2026(c, "purge_reports", json!({}));
    let purge_id = task_id(&purge);
    let waiting = poll_2026(c, &purge_id, &["input_required"]);
    let key = one_elicitation(&waiting, "Purge 2 reports?");
    confirm_2026(c, &purge_id, &key, true);
    let purged = poll_2026(c, &purge_id, &["completed"]);
    assert_eq!(text(&purged["result"]), "purged 2 reports", "{purged}");
    assert!(purged.get("inputRequests").is_none(), "{purged}");

    // tasks/result and tasks/list are 2025-11-25's.
    for (method, params) in [
        ("tasks/result", json!({ "taskId": id })),
        ("tasks/list", json!({})),
    ] {
        let response = c.request(method, with_tasks(params));
        assert_eq!(err(&response)["code"], -32601, "{method}: {response}");
    }

    // Without the extension, the tasks methods are refused before any task is looked for.
    for task in [id.as_str(), "no-such-task"] {
        let response = c.request("tasks/get", json!({ "taskId": task }));
        let e = err(&response);
        assert_eq!(e["code"], -32021, "{e}");
        assert!(
            e["data"]["requiredCapabilities"]["extensions"][TASKS_EXTENSION].is_object(),
            "{e}"
        );
    }
    let response = get_2026(c, "no-such-task");
    assert_eq!(err(&response)["code"], -32602, "{response}");

    // Cancelling: a running task is cancelled and stays so; a finished one is acknowledged.
    let long = create_2026(c, "sales_report", json!({ "year": 2026, "pace_ms": 100 }));
    let long_id = task_id(&long);
    let response = c.request("tasks/cancel", with_tasks(json!({ "taskId": long_id })));
    assert_eq!(ok(&response)["resultType"], "complete", "{response}");
    let cancelled = poll_2026(c, &long_id, &["cancelled"]);
    assert!(cancelled.get("result").is_none(), "{cancelled}");
    thread::sleep(Duration::from_millis(1_500));
    let response = get_2026(c, &long_id);
    assert_eq!(ok(&response)["status"], "cancelled", "{response}");
    let response = c.request("tasks/cancel", with_tasks(json!({ "taskId": id })));
    assert_eq!(ok(&response)["resultType"], "complete", "{response}");
    let response = get_2026(c, &id);
    assert_eq!(ok(&response)["status"], "completed", "{response}");
}

#[test]
fn reports_as_tasks_over_stdio_2026() {
    let mut p = Proc::spawn(REPORTS);
    reports_2026(&mut p);
}

#[test]
fn reports_as_tasks_over_http_2026() {
    let server = HttpServer::start(REPORTS, &[], &[]);
    reports_2026(&mut Http::new(&server));
}
