//! MCP tasks (2025-11-25) through a real client that implements them: the official TypeScript
//! SDK's task API (`client.experimental.tasks` of npm `@modelcontextprotocol/sdk`, pinned in
//! `interop/package-lock.json`), driven by `interop/ts-tasks.mjs` against the `reports` example
//! over stdio and over Streamable HTTP (`reports --http 127.0.0.1:0`).
//!
//! (The official Python SDK, `mcp` 2.3.0, has no client-side tasks: its 2025-11-25 method
//! tables leave `tasks/*` out on purpose.)
//!
//! The script checks what it saw itself, exits non-zero on any failed check and prints one
//! JSON line summarizing it, which the tests here check again: a `sales_report` task created,
//! polled with `tasks/get` to `completed` and its report fetched with `tasks/result`; the task
//! in `tasks/list`; a slow report cancelled with `tasks/cancel`; `purge_reports` (task
//! required) asking its question through the client's elicitation handler, tagged with its
//! task, while the task shows `input_required`; and the `notifications/tasks/status` the
//! client heard.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_tool_tests::{ExampleHttp, example_bin, interop_dir, wait_bounded};
use serde_json::{Value, json};

/// The longest the script may run (it gives up by itself after 90 s).
const SCRIPT_LIMIT: Duration = Duration::from_secs(150);

/// The SDK version `interop/package.json` pins.
fn pinned_sdk() -> String {
    let text =
        std::fs::read_to_string(interop_dir().join("package.json")).expect("interop/package.json");
    let json: Value = serde_json::from_str(&text).expect("package.json is JSON");
    json["dependencies"]["@modelcontextprotocol/sdk"]
        .as_str()
        .expect("@modelcontextprotocol/sdk is pinned in package.json")
        .to_owned()
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Transport {
    Stdio,
    Http,
}

/// Runs `ts-tasks.mjs` against `reports` over `transport`; returns its JSON summary after
/// checking that it exited 0 and reported no failure.
fn run(transport: Transport) -> Value {
    let label = format!("TypeScript SDK tasks over {transport:?}");
    let dir = interop_dir();
    assert!(
        dir.join("node_modules/@modelcontextprotocol/sdk/package.json")
            .exists(),
        "@modelcontextprotocol/sdk is missing: install the interop clients with \
         `bash interop/setup.sh` (.ci/run does it)"
    );
    let reports = example_bin("reports");
    let server = (transport == Transport::Http).then(|| ExampleHttp::start("reports", &[], &[]));
    let args: Vec<&str> = match &server {
        None => vec!["stdio", reports],
        Some(server) => vec!["http", server.url.as_str()],
    };
    let started = Instant::now();
    let mut child = Command::new("node")
        .arg("ts-tasks.mjs")
        .args(&args)
        .current_dir(&dir)
        .env_remove("MCP_TOOL_BEARER_TOKENS")
        .env_remove("MCP_TOOL_TASK_STORE")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{label}: cannot run node: {e}"));
    let (status, out, err) = wait_bounded(&mut child, SCRIPT_LIMIT)
        .unwrap_or_else(|| panic!("{label}: ts-tasks.mjs ran for more than {SCRIPT_LIMIT:?}"));
    drop(server);
    let line = out
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let summary: Value = serde_json::from_str(line).unwrap_or_else(|e| {
        panic!("{label}: the last line of stdout is not a JSON summary ({e}):\n{out}\n--- stderr:\n{err}")
    });
    assert!(
        status.success() && summary["ok"] == true,
        "{label}: ts-tasks.mjs exited with {status}; failures: {:#}\n--- stderr:\n{err}",
        summary["failures"]
    );
    assert_eq!(summary["failures"], json!([]), "{label}");
    eprintln!(
        "{label}: ok in {:.2} s: {line}",
        started.elapsed().as_secs_f64()
    );
    check(&label, transport, &summary);
    summary
}

/// The summary's checks, again.
fn check(label: &str, transport: Transport, s: &Value) {
    assert_eq!(s["sdkVersion"], pinned_sdk(), "{label}");
    assert_eq!(s["api"], "client.experimental.tasks", "{label}");
    assert_eq!(s["protocolVersion"], "2025-11-25", "{label}");
    assert_eq!(s["server"]["name"], "reports", "{label}");
    assert_eq!(
        s["tasksCapability"],
        json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } }),
        "{label}"
    );
    assert_eq!(
        s["taskSupport"],
        json!({ "purge_reports": "required", "sales_report": "optional" }),
        "{label}"
    );
    assert_eq!(s["plainCallOfRequired"], "refused by the SDK", "{label}");

    // The report: created, polled to completion, fetched.
    let report = &s["report"];
    let id = report["created"]["taskId"].as_str().expect("a task id");
    assert_eq!(report["created"]["status"], "working", "{label}");
    assert_eq!(report["created"]["ttl"], 60_000, "{label}");
    let polled = report["polled"].as_array().expect("polled");
    assert_eq!(polled.last(), Some(&json!("completed")), "{label}");
    let result = &report["result"];
    assert_eq!(result["year"], 2024, "{label}");
    assert_eq!(result["months"], 12, "{label}");
    assert_eq!(result["monthsInOrder"], true, "{label}");
    assert_eq!(result["totalOrders"], result["ordersSum"], "{label}");
    assert_eq!(result["totalRevenueCents"], result["revenueSum"], "{label}");
    let progress: Vec<Value> = (1..=12).map(|i| json!([i, 12])).collect();
    assert_eq!(report["progress"], json!(progress), "{label}");
    assert_eq!(report["getTask"]["status"], "completed", "{label}");
    assert_eq!(
        report["resultAgain"],
        json!({ "same": true, "relatedTask": id }),
        "{label}"
    );
    assert_eq!(s["listed"]["report"]["taskId"], id, "{label}");
    assert_eq!(s["listed"]["report"]["status"], "completed", "{label}");

    // The slow one, cancelled.
    let cancelled = &s["cancelled"];
    let slow = cancelled["created"]["taskId"].as_str().expect("a task id");
    assert_eq!(cancelled["cancelAnswer"]["taskId"], slow, "{label}");
    assert_eq!(cancelled["cancelAnswer"]["status"], "cancelled", "{label}");
    assert_eq!(cancelled["getTask"], "cancelled", "{label}");

    // The purge: one question, tagged with its task, answered; then done.
    let purge = &s["purge"];
    let purge_id = purge["created"]["taskId"].as_str().expect("a task id");
    assert_eq!(
        purge["result"],
        json!({ "isError": false, "text": "purged 1 reports" }),
        "{label}"
    );
    assert_eq!(purge["getTask"], "completed", "{label}");
    let asked = s["elicitations"].as_array().expect("elicitations");
    assert_eq!(asked.len(), 1, "{label}: {asked:?}");
    assert_eq!(asked[0]["message"], "Purge 1 reports?", "{label}");
    assert_eq!(asked[0]["relatedTaskId"], purge_id, "{label}");
    assert_eq!(asked[0]["statusWhileAsking"], "input_required", "{label}");

    // What the status notifications said (the order of the purge's own is the server's).
    let heard: Vec<&str> = s["statusNotifications"]
        .as_array()
        .expect("statusNotifications")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for expected in [
        "report:completed",
        "cancelled:cancelled",
        "purge:input_required",
        "purge:completed",
    ] {
        assert!(
            heard.contains(&expected),
            "{label}: {expected} in {heard:?}"
        );
    }
    if transport == Transport::Http {
        assert_eq!(s["getStream"], "open", "{label}");
        assert_eq!(s["sessionTerminated"], true, "{label}: DELETE");
    }
}

#[test]
fn typescript_sdk_tasks_over_stdio() {
    run(Transport::Stdio);
}

#[test]
fn typescript_sdk_tasks_over_http() {
    run(Transport::Http);
}
