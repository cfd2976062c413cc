//! Helpers of the tasks tests (`tasks.rs`, `tasks_redis.rs`), included by each with
//! `#[path = "common/tasks.rs"] mod tasks_common;` next to `mod common;`: the `reports`
//! example, the shapes a task takes in each version, and a 2026-07-28 client over stdio or HTTP
//! that sends the `Mcp-Name` header the tasks methods need.
//!
//! Every wait is bounded by [`TIMEOUT`].

#![allow(dead_code)]

use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::stateless::{
    HttpServer, V2026_07_28, params_2026, request_2026, with_capabilities,
};
use crate::common::{Proc, TIMEOUT};

/// The `reports` example server.
pub(crate) const REPORTS: &str = env!("CARGO_BIN_EXE_reports");

/// The identifier of the tasks extension (2026-07-28).
pub(crate) const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The `_meta` key tying a message or a result to its task (2025-11-25).
pub(crate) const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// How often the tests poll a task (faster than the server's `pollInterval`, to keep them
/// short; the server does not mind).
pub(crate) const POLL: Duration = Duration::from_millis(50);

/// The client capabilities of a 2026-07-28 client that takes tasks and answers elicitations.
pub(crate) fn task_caps() -> Value {
    json!({ "elicitation": {}, "extensions": { TASKS_EXTENSION: {} } })
}

/// `params` declaring [`task_caps`].
pub(crate) fn with_tasks(params: Value) -> Value {
    with_capabilities(params, task_caps())
}

/// Asserts that `v` is an RFC 3339 date-time (`2026-07-28T10:30:00.123Z`, `…+02:00`).
pub(crate) fn assert_rfc3339(v: &Value) {
    let s = v
        .as_str()
        .unwrap_or_else(|| panic!("a timestamp is a string: {v}"));
    let b = s.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        b.get(range.clone())
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    let ok = b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && matches!(b[10], b'T' | b't')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    assert!(ok, "not an RFC 3339 date-time: {s:?}");
    let mut rest = &s[19..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let n = fraction.bytes().take_while(u8::is_ascii_digit).count();
        assert!(n > 0, "an empty fraction of a second: {s:?}");
        rest = &fraction[n..];
    }
    let zone_ok = matches!(rest, "Z" | "z")
        || (rest.len() == 6
            && matches!(rest.as_bytes()[0], b'+' | b'-')
            && rest.as_bytes()[3] == b':'
            && rest[1..3].bytes().all(|c| c.is_ascii_digit())
            && rest[4..6].bytes().all(|c| c.is_ascii_digit()));
    assert!(zone_ok, "an RFC 3339 date-time ends with its zone: {s:?}");
    let month: u32 = s[5..7].parse().expect("digits");
    let day: u32 = s[8..10].parse().expect("digits");
    let hour: u32 = s[11..13].parse().expect("digits");
    assert!(
        (1..=12).contains(&month) && (1..=31).contains(&day) && hour < 24,
        "an RFC 3339 date-time names a real time: {s:?}"
    );
}

/// Asserts the structured `SalesReport` of `year`: twelve months in order, the totals their
/// sums.
pub(crate) fn assert_report(report: &Value, year: u64) {
    assert_eq!(report["year"], year, "{report}");
    let months = report["months"]
        .as_array()
        .unwrap_or_else(|| panic!("`months` is an array: {report}"));
    assert_eq!(months.len(), 12, "{report}");
    for (i, m) in months.iter().enumerate() {
        assert_eq!(m["month"], i as u64 + 1, "{report}");
    }
    let revenue: u64 = months
        .iter()
        .map(|m| m["revenue_cents"].as_u64().expect("revenue"))
        .sum();
    let orders: u64 = months
        .iter()
        .map(|m| m["orders"].as_u64().expect("orders"))
        .sum();
    assert_eq!(report["totalRevenueCents"], revenue, "{report}");
    assert_eq!(report["totalOrders"], orders, "{report}");
}

/// The id of a task, from any of its shapes.
pub(crate) fn task_id(task: &Value) -> String {
    task["taskId"]
        .as_str()
        .filter(|id| !id.is_empty())
        .unwrap_or_else(|| panic!("a task has a `taskId`: {task}"))
        .to_owned()
}

/// Asserts a 2025-11-25 `Task`: its id, status, RFC 3339 timestamps, `ttl` and
/// `pollInterval`.
pub(crate) fn assert_task_2025(task: &Value) {
    task_id(task);
    assert!(
        matches!(
            task["status"].as_str(),
            Some("working" | "input_required" | "completed" | "failed" | "cancelled")
        ),
        "{task}"
    );
    assert_rfc3339(&task["createdAt"]);
    assert_rfc3339(&task["lastUpdatedAt"]);
    assert!(
        task["createdAt"].as_str() <= task["lastUpdatedAt"].as_str(),
        "updated after created: {task}"
    );
    assert!(
        task["ttl"].is_u64() || task["ttl"].is_null(),
        "`ttl` is a number or null: {task}"
    );
    assert!(
        task["pollInterval"].as_u64().is_some_and(|p| p > 0),
        "{task}"
    );
    assert!(
        task.get("ttlMs").is_none() && task.get("pollIntervalMs").is_none(),
        "2025-11-25 names: {task}"
    );
}

/// Asserts a 2026-07-28 task (the flat `CreateTaskResult`, or `tasks/get`'s detailed task):
/// its id, status, RFC 3339 timestamps, `ttlMs` and `pollIntervalMs`.
pub(crate) fn assert_task_2026(task: &Value) {
    task_id(task);
    assert!(
        matches!(
            task["status"].as_str(),
            Some("working" | "input_required" | "completed" | "failed" | "cancelled")
        ),
        "{task}"
    );
    assert_rfc3339(&task["createdAt"]);
    assert_rfc3339(&task["lastUpdatedAt"]);
    assert!(
        task["ttlMs"].is_u64() || task["ttlMs"].is_null(),
        "`ttlMs` is a number or null: {task}"
    );
    assert!(
        task["pollIntervalMs"].as_u64().is_some_and(|p| p > 0),
        "{task}"
    );
    assert!(
        task.get("ttl").is_none() && task.get("pollInterval").is_none(),
        "2026-07-28 names: {task}"
    );
}

/// A client of protocol 2026-07-28: a request's params get the version's `_meta` (see
/// [`params_2026`]); the response (result or error) comes back whole.
pub(crate) trait Client2026 {
    /// Sends `method` with `params` and returns the JSON-RPC response.
    fn request(&mut self, method: &str, params: Value) -> Value;

    /// Where, for messages.
    fn name(&self) -> &'static str;
}

impl Client2026 for Proc {
    fn request(&mut self, method: &str, params: Value) -> Value {
        request_2026(self, method, params)
    }

    fn name(&self) -> &'static str {
        "stdio"
    }
}

/// A 2026-07-28 client of an HTTP server, with a bearer token when given.
pub(crate) struct Http<'a> {
    pub(crate) server: &'a HttpServer,
    pub(crate) token: Option<&'a str>,
}

impl<'a> Http<'a> {
    /// An anonymous client of `server`.
    pub(crate) fn new(server: &'a HttpServer) -> Http<'a> {
        Http {
            server,
            token: None,
        }
    }

    /// A client of `server` with the bearer `token`.
    pub(crate) fn with_token(server: &'a HttpServer, token: &'a str) -> Http<'a> {
        Http {
            server,
            token: Some(token),
        }
    }
}

impl Client2026 for Http<'_> {
    fn request(&mut self, method: &str, params: Value) -> Value {
        http_2026(self.server, self.token, method, params)
    }

    fn name(&self) -> &'static str {
        "http"
    }
}

/// Sends a 2026-07-28 request over HTTP with the headers the version needs:
/// `MCP-Protocol-Version`, `Mcp-Method`, and `Mcp-Name` (the tool of `tools/call`, the task
/// of `tasks/get`, `tasks/update` and `tasks/cancel`); returns the JSON-RPC response.
pub(crate) fn http_2026(
    server: &HttpServer,
    token: Option<&str>,
    method: &str,
    params: Value,
) -> Value {
    let params = params_2026(params);
    let name = match method {
        "tools/call" => params["name"].as_str(),
        "tasks/get" | "tasks/update" | "tasks/cancel" => params["taskId"].as_str(),
        _ => None,
    }
    .map(str::to_owned);
    let authorization = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("MCP-Protocol-Version", V2026_07_28),
        ("Mcp-Method", method),
    ];
    if let Some(name) = &name {
        headers.push(("Mcp-Name", name));
    }
    if let Some(a) = &authorization {
        headers.push(("Authorization", a));
    }
    let body =
        json!({ "jsonrpc": "2.0", "id": server.next_id(), "method": method, "params": params });
    let reply = server.post(&headers, &body);
    let response = reply.response().clone();
    assert_eq!(response["id"], body["id"], "{reply:?}");
    assert!(
        response.get("result").is_some() != response.get("error").is_some(),
        "a response has exactly one of `result` and `error`: {response}"
    );
    if response.get("result").is_some() {
        assert_eq!(reply.status, 200, "{reply:?}");
    }
    response
}

/// The `result` of a response; an error fails the test.
pub(crate) fn ok(response: &Value) -> &Value {
    response
        .get("result")
        .unwrap_or_else(|| panic!("expected a result: {response}"))
}

/// The `error` of a response; a result fails the test.
pub(crate) fn err(response: &Value) -> &Value {
    let e = response
        .get("error")
        .unwrap_or_else(|| panic!("expected an error: {response}"));
    assert!(e["code"].is_i64() && e["message"].is_string(), "{response}");
    e
}

/// Calls `tool` declaring the tasks extension; asserts that the call became a task (the flat
/// 2026-07-28 `CreateTaskResult`) and returns it.
pub(crate) fn create_2026(c: &mut dyn Client2026, tool: &str, arguments: Value) -> Value {
    let response = c.request(
        "tools/call",
        with_tasks(json!({ "name": tool, "arguments": arguments })),
    );
    let task = ok(&response).clone();
    assert_eq!(task["resultType"], "task", "{task}");
    assert_task_2026(&task);
    assert!(
        task.get("content").is_none() && task.get("task").is_none(),
        "a flat task, no result yet: {task}"
    );
    assert!(
        task["_meta"]["io.modelcontextprotocol/serverInfo"]["name"].is_string(),
        "{task}"
    );
    task
}

/// `tasks/get` of `id` declaring the extension: the response.
pub(crate) fn get_2026(c: &mut dyn Client2026, id: &str) -> Value {
    c.request("tasks/get", with_tasks(json!({ "taskId": id })))
}

/// Polls `tasks/get` of `id` (bounded) until its status is one of `want`; a terminal status
/// not wanted fails the test. Returns the detailed task.
pub(crate) fn poll_2026(c: &mut dyn Client2026, id: &str, want: &[&str]) -> Value {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let response = get_2026(c, id);
        let task = ok(&response).clone();
        assert_task_2026(&task);
        assert_eq!(task["resultType"], "complete", "{task}");
        let status = task["status"].as_str().unwrap_or_default();
        if want.contains(&status) {
            return task;
        }
        assert!(
            !matches!(status, "completed" | "failed" | "cancelled"),
            "task {id} ended `{status}`, expected one of {want:?} ({}): {task}",
            c.name()
        );
        assert!(
            Instant::now() < deadline,
            "task {id} is still `{status}` after {TIMEOUT:?}, expected one of {want:?} ({}): {task}",
            c.name()
        );
        thread::sleep(POLL);
    }
}

/// Asserts a detailed task asks exactly one `elicitation/create` question whose message is
/// `message`; returns its key.
pub(crate) fn one_elicitation(task: &Value, message: &str) -> String {
    assert_eq!(task["status"], "input_required", "{task}");
    let requests = task["inputRequests"]
        .as_object()
        .unwrap_or_else(|| panic!("`inputRequests` is an object: {task}"));
    assert_eq!(requests.len(), 1, "one input request: {task}");
    let (key, request) = requests.iter().next().expect("one");
    assert!(!key.is_empty(), "{task}");
    assert_eq!(request["method"], "elicitation/create", "{task}");
    assert_eq!(request["params"]["message"], message, "{task}");
    assert_eq!(
        request["params"]["requestedSchema"]["properties"]["confirm"]["type"], "boolean",
        "{task}"
    );
    key.clone()
}

/// Answers the question `key` of task `id` with an accepted `{confirm}`; asserts the
/// acknowledgement.
pub(crate) fn confirm_2026(c: &mut dyn Client2026, id: &str, key: &str, confirm: bool) {
    let response = c.request(
        "tasks/update",
        with_tasks(json!({
            "taskId": id,
            "inputResponses": {
                key: { "action": "accept", "content": { "confirm": confirm } }
            }
        })),
    );
    assert_eq!(ok(&response)["resultType"], "complete", "{response}");
}

/// The text of a `CallToolResult`'s text blocks.
pub(crate) fn result_text(result: &Value) -> String {
    crate::common::text(result)
}
