//! JSON-RPC and MCP behaviour through the in-process client, which speaks real JSON-RPC text
//! over the same code path as stdio.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use mcp_tool::extract::{FromContext, ToolCall};
use mcp_tool::prelude::*;
use mcp_tool::testing::Client;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

/// The longest any single wait may take.
const WAIT: Duration = Duration::from_secs(10);

/// Add two integers.
#[tool(read_only, idempotent)]
fn add(#[arg(description = "First addend")] a: i64, b: i64) -> i64 {
    a + b
}

/// Greet someone.
#[tool(title = "Greeter")]
async fn greet(
    #[arg(description = "Who to greet")] name: String,
    #[arg(rename = "loudly")] shout: Option<bool>,
    #[arg(default)] times: u32,
) -> String {
    let text = format!("hello {name}");
    let text = if shout == Some(true) {
        text.to_uppercase()
    } else {
        text
    };
    vec![text; times.max(1) as usize].join(" ")
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Plan {
    Free,
    Pro,
}

#[derive(Deserialize, JsonSchema)]
struct Signup {
    /// Contact address
    #[schemars(email)]
    email: String,
    #[schemars(length(min = 2, max = 10))]
    name: String,
    plan: Plan,
    #[schemars(range(min = 1, max = 5))]
    seats: Option<u32>,
}

/// Sign up for a plan.
#[tool]
fn signup(Args(s): Args<Signup>) -> String {
    let plan = match s.plan {
        Plan::Free => "free",
        Plan::Pro => "pro",
    };
    format!(
        "{} <{}> on {plan} with {} seats",
        s.name,
        s.email,
        s.seats.unwrap_or(1)
    )
}

/// Always panics.
#[tool]
async fn explode() -> String {
    panic!("boom")
}

/// Always panics, synchronously.
#[tool]
fn explode_sync() -> String {
    panic!("sync boom")
}

/// Fails with a structured error.
#[tool]
fn fail() -> Result<String, ToolError> {
    Err(ToolError::new("E_CODE", "went wrong")
        .suggestion("try again later")
        .retryable(true))
}

/// Fails with a plain error type.
#[tool]
fn fail_io() -> Result<String, std::io::Error> {
    Err(std::io::Error::other("disk on fire"))
}

#[derive(Serialize, JsonSchema)]
struct Point {
    x: i32,
    y: i32,
}

/// A point as structured output.
#[tool]
fn point() -> Json<Point> {
    Json(Point { x: 1, y: 2 })
}

/// A number as structured output.
#[tool]
fn answer() -> Json<u32> {
    Json(42)
}

/// The test's side of `gated`: a permit when a call started, and the gate it waits at.
static GATE_STARTED: Semaphore = Semaphore::const_new(0);
static GATE: Semaphore = Semaphore::const_new(0);

/// Waits without blocking until the test opens the gate.
#[tool]
async fn gated() -> &'static str {
    GATE_STARTED.add_permits(1);
    GATE.acquire().await.expect("never closed").forget();
    "through the gate"
}

/// The test's side of `block_until_released`: a permit when a call blocks its thread, and
/// whether they may all go.
static BLOCKED: Semaphore = Semaphore::const_new(0);
static RELEASED: Mutex<bool> = Mutex::new(false);
static RELEASE: Condvar = Condvar::new();

/// Blocks its thread (a synchronous tool) until the test releases it, or for 20 s: a runtime
/// this call stalled could never release it.
#[tool]
fn block_until_released() -> &'static str {
    BLOCKED.add_permits(1);
    let released = RELEASED.lock().unwrap_or_else(PoisonError::into_inner);
    let (_released, wait) = RELEASE
        .wait_timeout_while(released, Duration::from_secs(20), |released| !*released)
        .unwrap_or_else(PoisonError::into_inner);
    if wait.timed_out() {
        "never released"
    } else {
        "released"
    }
}

/// The request's id and protocol version.
#[tool]
fn whoami(ctx: Ctx) -> String {
    format!("{} {} {}", ctx.id(), ctx.protocol_version(), ctx.tool())
}

struct Tenant(String);

impl FromContext for Tenant {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        call.ctx()
            .meta()
            .and_then(|m| m.get("tenant"))
            .and_then(Value::as_str)
            .map(|t| Tenant(t.to_owned()))
            .ok_or_else(|| ToolError::new("NO_TENANT", "this tool needs `_meta.tenant`"))
    }
}

/// The caller's tenant.
#[tool]
fn tenant(t: Tenant) -> String {
    t.0
}

static WAIT_DROPPED: AtomicBool = AtomicBool::new(false);
static WAIT_STARTED: AtomicBool = AtomicBool::new(false);

struct DropGuard;

impl Drop for DropGuard {
    fn drop(&mut self) {
        WAIT_DROPPED.store(true, Ordering::SeqCst);
    }
}

/// Waits until cancelled.
#[tool]
async fn wait_forever() -> String {
    let _guard = DropGuard;
    WAIT_STARTED.store(true, Ordering::SeqCst);
    std::future::pending::<()>().await;
    unreachable!()
}

#[derive(Default)]
struct Counter {
    n: AtomicU64,
}

#[tools]
impl Counter {
    /// Increment the counter.
    #[tool]
    fn incr(&self) -> u64 {
        self.n.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Read the counter.
    #[tool(name = "counter.get", read_only)]
    async fn get(self: Arc<Self>) -> u64 {
        self.n.load(Ordering::SeqCst)
    }

    /// The counter's version.
    #[tool]
    fn version() -> &'static str {
        "v1"
    }
}

fn server() -> Server {
    Server::new("test", "1.2.3").service(Counter::default())
}

async fn client() -> Client {
    Client::start(server()).await.expect("server starts")
}

#[tokio::test]
async fn initialize_negotiates_each_supported_version() {
    for version in ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
        let c = Client::connect(server()).unwrap();
        let r = c.initialize(version).await.unwrap();
        assert_eq!(r["protocolVersion"], version);
        assert_eq!(r["serverInfo"]["name"], "test");
        assert_eq!(r["serverInfo"]["version"], "1.2.3");
        assert!(r["capabilities"]["tools"].is_object());
    }
    let c = Client::connect(server()).unwrap();
    let r = c.initialize("1999-01-01").await.unwrap();
    assert_eq!(r["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn unknown_method_before_initialize_is_32601_and_the_session_goes_on() {
    let c = Client::connect(server()).unwrap();
    let e = c.request("server/frobnicate", json!({})).await.unwrap_err();
    assert_eq!(e.code, -32601);
    assert!(e.message.contains("server/frobnicate"));
    c.initialize("2025-11-25").await.unwrap();
    let e = c
        .request("resources/frobnicate", json!({}))
        .await
        .unwrap_err();
    assert_eq!(e.code, -32601);
}

#[tokio::test]
async fn ping_result_is_exactly_empty() {
    let c = client().await;
    assert_eq!(c.request("ping", json!({})).await.unwrap(), json!({}));
    let r = c
        .request_raw("\"p\"", r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#)
        .await
        .unwrap();
    assert_eq!(r, json!({}));
}

#[tokio::test]
async fn malformed_json_is_32700_and_the_server_keeps_going() {
    let c = client().await;
    c.send_raw("{not json").await;
    let m = c.next_message(Duration::from_secs(5)).await.unwrap();
    assert_eq!(m["error"]["code"], -32700);
    assert_eq!(m["id"], Value::Null);
    assert_eq!(c.request("ping", json!({})).await.unwrap(), json!({}));
}

#[tokio::test]
async fn invalid_requests_are_32600() {
    let c = client().await;
    for (line, id) in [
        (r#"{"id":1,"method":"ping"}"#, json!(1)),
        (r#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#, json!(2)),
        (r#"[{"jsonrpc":"2.0","id":3,"method":"ping"}]"#, Value::Null),
        (r#""hello""#, Value::Null),
        (r#"42"#, Value::Null),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            Value::Null,
        ),
        (r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#, Value::Null),
        (
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"ping","params":[1]}"#,
            json!(4),
        ),
        (r#"{"jsonrpc":"2.0","id":5,"method":7}"#, json!(5)),
        (r#"{"jsonrpc":"2.0"}"#, Value::Null),
    ] {
        c.send_raw(line).await;
        let m = c
            .next_message(Duration::from_secs(5))
            .await
            .unwrap_or_else(|| panic!("no answer to {line}"));
        assert_eq!(m["error"]["code"], -32600, "{line} -> {m}");
        assert_eq!(m["id"], id, "{line} -> {m}");
    }
    assert_eq!(c.request("ping", json!({})).await.unwrap(), json!({}));
}

#[tokio::test]
async fn unknown_notifications_get_no_answer() {
    let c = client().await;
    c.notify("notifications/whatever", json!({})).await;
    assert!(c.next_message(Duration::from_millis(300)).await.is_none());
}

#[tokio::test]
async fn tools_list_is_sorted_and_describes_every_tool() {
    let c = client().await;
    let tools = c.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    for expected in [
        "add",
        "counter.get",
        "greet",
        "incr",
        "signup",
        "version",
        "whoami",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    for t in &tools {
        assert!(t["description"].as_str().is_some_and(|d| !d.is_empty()));
        assert_eq!(t["inputSchema"]["type"], "object");
    }
    let add = tools.iter().find(|t| t["name"] == "add").unwrap();
    assert_eq!(
        add["annotations"],
        json!({ "readOnlyHint": true, "idempotentHint": true })
    );
    assert_eq!(add["description"], "Add two integers.");
    assert_eq!(add["inputSchema"]["required"], json!(["a", "b"]));
    assert_eq!(
        add["inputSchema"]["properties"]["a"]["description"],
        "First addend"
    );
    assert_eq!(add["inputSchema"]["additionalProperties"], false);
    assert!(add.get("outputSchema").is_none());

    let greet = tools.iter().find(|t| t["name"] == "greet").unwrap();
    assert_eq!(greet["title"], "Greeter");
    assert_eq!(greet["annotations"], json!({ "title": "Greeter" }));
    assert_eq!(greet["inputSchema"]["required"], json!(["name"]));
    let props = greet["inputSchema"]["properties"].as_object().unwrap();
    assert!(props.contains_key("loudly") && props.contains_key("times"));

    let signup = tools.iter().find(|t| t["name"] == "signup").unwrap();
    let schema = &signup["inputSchema"];
    assert_eq!(schema["properties"]["email"]["format"], "email");
    assert_eq!(
        schema["properties"]["email"]["description"],
        "Contact address"
    );
    assert_eq!(schema["required"], json!(["email", "name", "plan"]));

    let point = tools.iter().find(|t| t["name"] == "point").unwrap();
    assert_eq!(point["outputSchema"]["type"], "object");
    assert_eq!(point["outputSchema"]["required"], json!(["x", "y"]));
    let answer = tools.iter().find(|t| t["name"] == "answer").unwrap();
    assert_eq!(
        answer["outputSchema"]["properties"]["result"]["type"],
        "integer"
    );
    assert_eq!(answer["outputSchema"]["required"], json!(["result"]));

    let noargs = tools.iter().find(|t| t["name"] == "version").unwrap();
    assert_eq!(
        noargs["inputSchema"],
        json!({ "type": "object", "properties": {}, "additionalProperties": false })
    );
}

#[tokio::test]
async fn tools_list_paginates_with_a_cursor() {
    let c = Client::start(server().page_size(3)).await.unwrap();
    let first = c.request("tools/list", json!({})).await.unwrap();
    assert_eq!(first["tools"].as_array().unwrap().len(), 3);
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();
    let all = c.list_tools().await.unwrap();
    let unpaged = client().await.list_tools().await.unwrap();
    assert_eq!(all, unpaged);
    let second = c
        .request("tools/list", json!({ "cursor": cursor }))
        .await
        .unwrap();
    assert_eq!(second["tools"][0], unpaged[3]);
    let e = c
        .request("tools/list", json!({ "cursor": "bogus" }))
        .await
        .unwrap_err();
    assert_eq!(e.code, -32602);
}

#[tokio::test]
async fn a_call_whose_meta_is_no_object_is_32602() {
    let c = client().await;
    for meta in [json!(5), json!("x"), json!([1])] {
        let e = c
            .request(
                "tools/call",
                json!({ "name": "add", "arguments": { "a": 1, "b": 2 }, "_meta": meta }),
            )
            .await
            .unwrap_err();
        assert_eq!(e.code, -32602, "{meta}: {e:?}");
        assert!(e.message.contains("_meta"), "{e:?}");
    }
    let fine = c
        .request(
            "tools/call",
            json!({ "name": "add", "arguments": { "a": 1, "b": 2 }, "_meta": null }),
        )
        .await
        .unwrap();
    assert_eq!(fine["content"][0]["text"], "3", "{fine}");
}

#[tokio::test]
async fn calls_return_text_and_numbers() {
    let c = client().await;
    let r = c.call("add", json!({ "a": 2, "b": 40 })).await.unwrap();
    assert_eq!(r.text(), "42");
    assert!(!r.is_error());
    let r = c
        .call(
            "greet",
            json!({ "name": "ann", "loudly": true, "times": 2 }),
        )
        .await
        .unwrap();
    assert_eq!(r.text(), "HELLO ANN HELLO ANN");
    let r = c.call("greet", json!({ "name": "bo" })).await.unwrap();
    assert_eq!(r.text(), "hello bo");
}

#[tokio::test]
async fn missing_arguments_count_as_empty() {
    let c = client().await;
    let r = c
        .request_raw(
            "7",
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"version"}}"#,
        )
        .await
        .unwrap();
    assert_eq!(r["content"][0]["text"], "v1");
    let r = c
        .request_raw(
            "8",
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"add"}}"#,
        )
        .await
        .unwrap();
    assert_eq!(r["isError"], true);
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("a: required argument is missing"), "{text}");
    assert!(text.contains("b: required argument is missing"), "{text}");
}

#[tokio::test]
async fn bad_call_params_are_protocol_errors() {
    let c = client().await;
    let e = c.call("nope", json!({})).await.unwrap_err();
    assert_eq!(e.code, -32602);
    assert!(e.message.contains("nope"));
    let e = c
        .request("tools/call", json!({ "name": "add", "arguments": 5 }))
        .await
        .unwrap_err();
    assert_eq!(e.code, -32602);
    let e = c.request("tools/call", json!({})).await.unwrap_err();
    assert_eq!(e.code, -32602);
    let e = c
        .request_raw("9", r#"{"jsonrpc":"2.0","id":9,"method":"tools/call"}"#)
        .await
        .unwrap_err();
    assert_eq!(e.code, -32602);
}

async fn error_text(c: &Client, tool: &str, args: Value) -> String {
    let r = c.call(tool, args).await.unwrap();
    assert!(r.is_error(), "{tool} should fail: {r:?}");
    r.text()
}

#[tokio::test]
async fn validation_errors_name_the_field_and_the_rule() {
    let c = client().await;
    let ok = json!({ "email": "a@b.co", "name": "Ann", "plan": "pro" });
    assert_eq!(
        c.call("signup", ok.clone()).await.unwrap().text(),
        "Ann <a@b.co> on pro with 1 seats"
    );
    let with = |k: &str, v: Value| {
        let mut a = ok.clone();
        a[k] = v;
        a
    };
    let t = error_text(&c, "signup", with("email", json!("x"))).await;
    assert!(t.contains(r#"email: "x" is not a valid email"#), "{t}");
    let t = error_text(&c, "signup", with("name", json!("A"))).await;
    assert!(
        t.contains(r#"name: "A" is shorter than 2 characters"#),
        "{t}"
    );
    let t = error_text(&c, "signup", with("name", json!("A very long name"))).await;
    assert!(t.contains("name:") && t.contains("longer than 10"), "{t}");
    let t = error_text(&c, "signup", with("plan", json!("gold"))).await;
    assert!(t.contains(r#"plan: "gold" is not one of"#), "{t}");
    let t = error_text(&c, "signup", with("seats", json!(9))).await;
    assert!(
        t.contains("seats: 9 is greater than the maximum of 5"),
        "{t}"
    );
    let t = error_text(&c, "signup", with("seats", json!("two"))).await;
    assert!(t.contains("seats:"), "{t}");
    let t = error_text(&c, "signup", json!({ "email": "a@b.co" })).await;
    assert!(t.contains("name: required argument is missing"), "{t}");
    assert!(t.contains("plan: required argument is missing"), "{t}");
    let t = error_text(&c, "add", json!({ "a": 1, "b": "2" })).await;
    assert!(t.contains(r#"b: "2" is not of type integer"#), "{t}");
    let t = error_text(&c, "add", json!({ "a": 1, "b": 2, "c": 3 })).await;
    assert!(t.contains("c: unknown argument"), "{t}");
    let t = error_text(&c, "add", json!({ "a": 1.5, "b": 2 })).await;
    assert!(t.contains("a:"), "{t}");
}

#[tokio::test]
async fn errors_become_is_error_results() {
    let c = client().await;
    let r = c.call("fail", json!({})).await.unwrap();
    assert!(r.is_error());
    assert_eq!(
        r.text(),
        "[E_CODE] went wrong\nSuggestion: try again later\n(retryable)"
    );
    assert_eq!(
        r.0["_meta"][mcp_tool::content::ERROR_META_KEY],
        json!({ "code": "E_CODE", "message": "went wrong", "suggestion": "try again later", "retryable": true })
    );
    assert_eq!(error_text(&c, "fail_io", json!({})).await, "disk on fire");
}

#[tokio::test]
async fn a_panicking_tool_is_an_error_and_the_server_keeps_serving() {
    let c = client().await;
    let t = error_text(&c, "explode", json!({})).await;
    assert!(t.contains("panicked") && t.contains("boom"), "{t}");
    let t = error_text(&c, "explode_sync", json!({})).await;
    assert!(t.contains("panicked") && t.contains("sync boom"), "{t}");
    assert_eq!(
        c.call("add", json!({ "a": 1, "b": 1 }))
            .await
            .unwrap()
            .text(),
        "2"
    );
}

#[tokio::test]
async fn structured_output_has_a_text_copy_and_non_objects_are_wrapped() {
    let c = client().await;
    let r = c.call("point", json!({})).await.unwrap();
    assert_eq!(r.structured(), Some(&json!({ "x": 1, "y": 2 })));
    let copy: Value = serde_json::from_str(&r.text()).unwrap();
    assert_eq!(copy, json!({ "x": 1, "y": 2 }));
    let r = c.call("answer", json!({})).await.unwrap();
    assert_eq!(r.structured(), Some(&json!({ "result": 42 })));
    assert_eq!(r.text(), "42");
}

#[tokio::test]
async fn service_methods_share_their_instance() {
    let c = client().await;
    assert_eq!(c.call("incr", json!({})).await.unwrap().text(), "1");
    assert_eq!(c.call("incr", json!({})).await.unwrap().text(), "2");
    assert_eq!(c.call("counter.get", json!({})).await.unwrap().text(), "2");
    assert_eq!(c.call("version", json!({})).await.unwrap().text(), "v1");
}

#[tokio::test]
async fn context_values_are_injected_by_type() {
    let c = client().await;
    let r = c
        .request_raw(
            "\"abc\"",
            r#"{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"whoami","arguments":{}}}"#,
        )
        .await
        .unwrap();
    assert_eq!(r["content"][0]["text"], "\"abc\" 2025-11-25 whoami");
    // The id as the tool sees it is the value the client sent, escapes read.
    let r = c
        .request_raw(
            "\"café\"",
            r#"{"jsonrpc":"2.0","id":"caf\u00e9","method":"tools/call","params":{"name":"whoami","arguments":{}}}"#,
        )
        .await
        .unwrap();
    assert_eq!(r["content"][0]["text"], "\"café\" 2025-11-25 whoami");
    let r = c
        .request(
            "tools/call",
            json!({ "name": "tenant", "arguments": {}, "_meta": { "tenant": "acme" } }),
        )
        .await
        .unwrap();
    assert_eq!(r["content"][0]["text"], "acme");
    let t = error_text(&c, "tenant", json!({})).await;
    assert!(t.contains("NO_TENANT"), "{t}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_run_concurrently_and_are_answered_as_they_finish() {
    let c = Arc::new(client().await);
    let held = {
        let c = c.clone();
        tokio::spawn(async move { c.call("gated", json!({})).await })
    };
    tokio::time::timeout(WAIT, GATE_STARTED.acquire())
        .await
        .expect("the gated call runs")
        .expect("never closed")
        .forget();
    // While it waits, another call is answered.
    assert_eq!(
        c.call("add", json!({ "a": 1, "b": 2 }))
            .await
            .unwrap()
            .text(),
        "3"
    );
    assert!(!held.is_finished());
    GATE.add_permits(1);
    assert_eq!(held.await.unwrap().unwrap().text(), "through the gate");

    let mut calls = Vec::new();
    for i in 0..100 {
        let c = c.clone();
        calls.push(tokio::spawn(async move {
            c.call("add", json!({ "a": i, "b": 1 }))
                .await
                .unwrap()
                .text()
        }));
    }
    for (i, call) in calls.into_iter().enumerate() {
        assert_eq!(call.await.unwrap(), (i + 1).to_string());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_tool_does_not_stall_the_runtime() {
    let c = Arc::new(client().await);
    let blocking: Vec<_> = (0..4)
        .map(|_| {
            let c = c.clone();
            tokio::spawn(async move { c.call("block_until_released", json!({})).await })
        })
        .collect();
    // Four threads blocked: twice the runtime's workers.
    tokio::time::timeout(WAIT, BLOCKED.acquire_many(4))
        .await
        .expect("the four blocking calls run")
        .expect("never closed")
        .forget();
    // The runtime answers while they block; only then are they released.
    assert_eq!(c.request("ping", json!({})).await.unwrap(), json!({}));
    assert_eq!(
        c.call("add", json!({ "a": 1, "b": 2 }))
            .await
            .unwrap()
            .text(),
        "3"
    );
    *RELEASED.lock().unwrap_or_else(PoisonError::into_inner) = true;
    RELEASE.notify_all();
    for b in blocking {
        assert_eq!(b.await.unwrap().unwrap().text(), "released");
    }
}

/// Waits (at most [`WAIT`]) until `done` holds.
async fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + WAIT;
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: not within {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_cancelled_call_is_dropped_and_gets_no_response() {
    let c = client().await;
    c.send_raw(
        r#"{"jsonrpc":"2.0","id":"w1","method":"tools/call","params":{"name":"wait_forever","arguments":{}}}"#,
    )
    .await;
    until("the call runs", || WAIT_STARTED.load(Ordering::SeqCst)).await;
    c.notify(
        "notifications/cancelled",
        json!({ "requestId": "w1", "reason": "user gave up" }),
    )
    .await;
    until("the tool's future is dropped", || {
        WAIT_DROPPED.load(Ordering::SeqCst)
    })
    .await;
    assert!(c.next_message(Duration::from_millis(300)).await.is_none());
    assert_eq!(c.request("ping", json!({})).await.unwrap(), json!({}));
}

#[tokio::test]
async fn in_process_calls_validate_like_tools_call() {
    let core = server().build().unwrap();
    let r = core.call("add", json!({ "a": 1, "b": 2 })).await.unwrap();
    assert_eq!(r.text_content(), "3");
    let r = core.call("add", json!({ "a": 1 })).await.unwrap();
    assert!(r.is_error);
    assert_eq!(core.call("nope", json!({})).await.unwrap_err().code, -32602);
}

#[derive(Deserialize, JsonSchema)]
enum Documented {
    /// The first.
    One,
    /// The second.
    Two,
}

/// Takes an enum whose variants are documented (schemars writes a `oneOf` of `const`s).
#[tool]
fn pick(choice: Documented) -> &'static str {
    match choice {
        Documented::One => "one",
        Documented::Two => "two",
    }
}

#[tokio::test]
async fn one_of_constants_errors_list_the_allowed_values() {
    let c = client().await;
    assert_eq!(
        c.call("pick", json!({ "choice": "Two" }))
            .await
            .unwrap()
            .text(),
        "two"
    );
    let t = error_text(&c, "pick", json!({ "choice": "Three" })).await;
    assert!(
        t.contains(r#"choice: "Three" is not one of ["One","Two"]"#),
        "{t}"
    );
}

#[tokio::test]
async fn older_versions_get_the_shapes_they_know() {
    let c = Client::connect(server()).unwrap();
    c.initialize("2024-11-05").await.unwrap();
    let tools = c.list_tools().await.unwrap();
    let point = tools.iter().find(|t| t["name"] == "point").unwrap();
    assert!(point.get("outputSchema").is_none());
    let greet = tools.iter().find(|t| t["name"] == "greet").unwrap();
    assert!(greet.get("title").is_none() && greet.get("annotations").is_none());
    let r = c.call("point", json!({})).await.unwrap();
    assert!(r.structured().is_none());
    assert_eq!(r.text(), r#"{"x":1,"y":2}"#);

    let c = Client::connect(server()).unwrap();
    c.initialize("2025-03-26").await.unwrap();
    let tools = c.list_tools().await.unwrap();
    let add = tools.iter().find(|t| t["name"] == "add").unwrap();
    assert_eq!(add["annotations"]["readOnlyHint"], true);
    let greet = tools.iter().find(|t| t["name"] == "greet").unwrap();
    assert!(greet.get("title").is_none());
}
