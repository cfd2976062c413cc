//! What a running tool can do, through the in-process client: progress, cancellation,
//! timeouts, logging (and `tracing`), sampling, elicitation, the tool manager, visibility,
//! shared state and request metadata.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcp_tool::extract::{
    Batch, CancellationToken, ClientInfo, Elicitation, Logger, Meta, Peer, Progress, RequestId,
    SamplingRequest, State, ToolManager,
};
use mcp_tool::prelude::*;
use mcp_tool::testing::Client;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(5);

/// Reports progress three times.
#[tool]
async fn steps(progress: Progress) -> String {
    for i in 1..=3 {
        progress.report(f64::from(i) * 10.0, 30.0, &format!("step {i}"));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Not increasing: not sent.
    progress.report(5.0, 30.0, "");
    format!("tracked={}", progress.is_tracked())
}

/// The tags of the `slow` calls that started, and of those dropped before they finished.
/// Each test tags its own calls: tests run at once and must not read each other's.
static SLOW_STARTED: Mutex<Vec<String>> = Mutex::new(Vec::new());
static SLOW_DROPPED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn tagged(list: &Mutex<Vec<String>>, tag: &str) -> bool {
    list.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .any(|t| t == tag)
}

/// Waits (at most [`WAIT`]) until `done` holds.
async fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within {WAIT:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

struct Guard(String);

impl Drop for Guard {
    fn drop(&mut self) {
        SLOW_DROPPED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(std::mem::take(&mut self.0));
    }
}

/// Runs until cancelled.
#[tool]
async fn slow(tag: String, cancel: CancellationToken) -> String {
    SLOW_STARTED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(tag.clone());
    let _guard = Guard(tag);
    tokio::time::sleep(Duration::from_secs(30)).await;
    format!("finished, cancelled={}", cancel.is_cancelled())
}

static SPIN_STARTED: AtomicBool = AtomicBool::new(false);
static BLOCKING_SAW_CANCEL: AtomicBool = AtomicBool::new(false);

/// A synchronous tool that polls its cancellation token.
#[tool]
fn spin(cancel: CancellationToken) -> String {
    SPIN_STARTED.store(true, Ordering::SeqCst);
    for _ in 0..500 {
        if cancel.is_cancelled() {
            BLOCKING_SAW_CANCEL.store(true, Ordering::SeqCst);
            return "stopped".into();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    "ran out".into()
}

/// Has its own time limit.
#[tool(timeout = "200ms")]
async fn limited() -> String {
    tokio::time::sleep(Duration::from_secs(10)).await;
    "too late".into()
}

/// Logs at several levels.
#[tool]
async fn chatty(log: Logger) -> String {
    let db = log.named("db");
    db.debug("debug detail");
    db.info("connected");
    log.warning("disk almost full");
    log.error("query failed");
    log.log(mcp_tool::extract::LogLevel::Critical, json!({ "code": 7 }));
    tracing::info!(rows = 3, "fetched rows");
    "logged".into()
}

/// Logs through `tracing` from a synchronous tool.
#[tool]
fn traced_sync() -> String {
    tracing::warn!("from a blocking thread");
    "ok".into()
}

/// Asks the client's model.
#[tool]
async fn ask(ctx: Ctx, question: String) -> Result<String, ToolError> {
    let answer = ctx.sample_text(question, 100).await?;
    Ok(format!("model said: {answer}"))
}

/// Asks the client's model with a full request.
#[tool]
async fn ask_full(peer: Peer) -> Result<String, ToolError> {
    let result = peer
        .sample(
            SamplingRequest::new(50)
                .system("be brief")
                .user("hi")
                .temperature(0.2),
        )
        .await?;
    Ok(format!(
        "{} via {}",
        result.text(),
        result.model().unwrap_or("?")
    ))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Color {
    Red,
    Green,
}

#[derive(Debug, Deserialize, JsonSchema)]
enum Size {
    /// Small
    #[schemars(title = "Small size")]
    S,
    /// Large
    #[schemars(title = "Large size")]
    L,
}

fn default_age() -> u32 {
    30
}

/// The contact form.
#[derive(Debug, Deserialize, JsonSchema)]
struct Contact {
    /// Your name
    name: String,
    /// Your age
    #[serde(default = "default_age")]
    age: u32,
    /// Newsletter?
    subscribe: Option<bool>,
    color: Color,
    size: Size,
    tags: Vec<Color>,
}

/// Asks the user for contact details.
#[tool]
async fn form(ctx: Ctx) -> Result<String, ToolError> {
    match ctx.elicit::<Contact>("Who are you?").await? {
        Elicitation::Accept(c) => Ok(format!(
            "{} {} {:?} {:?} {:?} {:?}",
            c.name, c.age, c.subscribe, c.color, c.size, c.tags
        )),
        Elicitation::Decline => Ok("declined".into()),
        Elicitation::Cancel => Ok("cancelled".into()),
    }
}

/// Enables and disables tools for this session.
#[tool]
fn manage(
    tools: ToolManager,
    enable: Vec<String>,
    disable: Vec<String>,
) -> Result<String, ToolError> {
    let active = tools.batch(Batch {
        enable,
        disable,
        ..Batch::default()
    })?;
    Ok(active.join(","))
}

/// Switches to allow-list mode.
#[tool(always_visible)]
fn allow_only(tools: ToolManager, names: Vec<String>) -> Result<String, ToolError> {
    Ok(tools.set_allowed(names)?.join(","))
}

/// Unlocks the secret tool through its result.
#[tool]
fn unlock() -> ToolResult {
    ToolResult::text("unlocked").enable_tools(["secret"])
}

/// A hidden tool.
#[tool(hidden)]
fn secret() -> &'static str {
    "the secret"
}

/// Another hidden tool, with the `default_visible` spelling.
#[tool(default_visible = false)]
fn secret_too() -> &'static str {
    "the other secret"
}

/// Adds to a shared counter.
#[tool]
fn bump(counter: State<AtomicUsize>) -> usize {
    counter.fetch_add(1, Ordering::SeqCst) + 1
}

/// Shows request metadata.
#[tool]
fn meta(meta: Meta, id: RequestId, client: ClientInfo) -> Json<Value> {
    Json(json!({
        "meta": meta.0,
        "id": id.0,
        "client": client.info["name"],
        "sampling": client.has_capability("sampling"),
    }))
}

fn server() -> Server {
    Server::new("ctx", "0").state(AtomicUsize::new(0))
}

async fn client() -> Client {
    let c = Client::connect(server()).unwrap();
    c.initialize_with("2025-11-25", json!({ "sampling": {}, "elicitation": {} }))
        .await
        .unwrap();
    c
}

async fn start(
    c: &Client,
    tool: &str,
    args: Value,
    meta: Option<Value>,
) -> (Value, tokio::sync::oneshot::Receiver<Value>) {
    let mut params = json!({ "name": tool, "arguments": args });
    if let Some(m) = meta {
        params["_meta"] = m;
    }
    c.start_request("tools/call", params).await
}

async fn finish(rx: tokio::sync::oneshot::Receiver<Value>) -> Value {
    tokio::time::timeout(WAIT, rx).await.unwrap().unwrap()
}

#[tokio::test]
async fn progress_echoes_the_token_and_increases() {
    for token in [json!("tok-1"), json!(42)] {
        let c = client().await;
        let (_, rx) = start(
            &c,
            "steps",
            json!({}),
            Some(json!({ "progressToken": token })),
        )
        .await;
        let mut seen = Vec::new();
        while seen.len() < 3 {
            let n = c.wait_for("notifications/progress", WAIT).await.unwrap();
            assert_eq!(n["params"]["progressToken"], token);
            seen.push(n["params"].clone());
        }
        let response = finish(rx).await;
        assert_eq!(response["result"]["content"][0]["text"], "tracked=true");
        let progress: Vec<i64> = seen
            .iter()
            .map(|p| p["progress"].as_i64().unwrap())
            .collect();
        assert_eq!(progress, [10, 20, 30]);
        assert_eq!(seen[0]["total"], 30);
        assert_eq!(seen[0]["message"], "step 1");
        assert!(
            c.next_message(Duration::from_millis(100)).await.is_none(),
            "the non-increasing report was sent"
        );
    }
    let c = client().await;
    let r = c.call("steps", json!({})).await.unwrap();
    assert_eq!(r.text(), "tracked=false");
    assert!(c.next_message(Duration::from_millis(100)).await.is_none());
}

#[tokio::test]
async fn cancelling_a_call_drops_it_and_sends_nothing() {
    let c = client().await;
    let (id, mut rx) = start(&c, "slow", json!({ "tag": "cancelled" }), None).await;
    until("the call runs", || tagged(&SLOW_STARTED, "cancelled")).await;
    c.notify(
        "notifications/cancelled",
        json!({ "requestId": id, "reason": "enough" }),
    )
    .await;
    until("the tool's future is dropped", || {
        tagged(&SLOW_DROPPED, "cancelled")
    })
    .await;
    assert!(
        rx.try_recv().is_err(),
        "no response for a cancelled request"
    );
    assert!(c.next_message(Duration::from_millis(200)).await.is_none());
    // Cancelling something unknown or finished is ignored.
    c.notify("notifications/cancelled", json!({ "requestId": 999 }))
        .await;
    assert_eq!(c.request("ping", json!({})).await.unwrap(), json!({}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_tool_sees_its_cancellation_token() {
    let c = client().await;
    let (id, _rx) = start(&c, "spin", json!({}), None).await;
    until("the call runs", || SPIN_STARTED.load(Ordering::SeqCst)).await;
    c.notify("notifications/cancelled", json!({ "requestId": id }))
        .await;
    until("the tool sees its token cancelled", || {
        BLOCKING_SAW_CANCEL.load(Ordering::SeqCst)
    })
    .await;
}

#[tokio::test]
async fn timeouts_are_errors_naming_the_limit() {
    let c = client().await;
    let r = c.call("limited", json!({})).await.unwrap();
    assert!(r.is_error());
    assert_eq!(r.text(), "tool `limited` timed out after 200ms");
    let c = Client::start(server().timeout(Duration::from_millis(150)))
        .await
        .unwrap();
    let r = c.call("slow", json!({ "tag": "timed out" })).await.unwrap();
    assert_eq!(r.text(), "tool `slow` timed out after 150ms");
    assert!(tagged(&SLOW_DROPPED, "timed out"));
}

async fn log_messages(c: &Client) -> Vec<Value> {
    let mut messages = Vec::new();
    while let Some(m) = c.next_message(Duration::from_millis(200)).await {
        if m["method"] == "notifications/message" {
            messages.push(m["params"].clone());
        }
    }
    messages
}

#[tokio::test]
async fn log_levels_filter_what_the_client_gets() {
    let _ = tracing::subscriber::set_global_default({
        use tracing_subscriber::layer::SubscriberExt as _;
        tracing_subscriber::registry().with(mcp_tool::server::ClientLogLayer)
    });
    let c = client().await;
    c.call("chatty", json!({})).await.unwrap();
    let all = log_messages(&c).await;
    let levels: Vec<&str> = all.iter().map(|m| m["level"].as_str().unwrap()).collect();
    assert_eq!(
        levels,
        ["debug", "info", "warning", "error", "critical", "info"]
    );
    assert_eq!(
        all[0],
        json!({ "level": "debug", "logger": "db", "data": "debug detail" })
    );
    assert!(all[2].get("logger").is_none());
    assert_eq!(all[4]["data"], json!({ "code": 7 }));
    assert_eq!(
        all[5]["data"],
        json!({ "message": "fetched rows", "rows": 3 })
    );
    assert_eq!(all[5]["logger"], "context");

    assert_eq!(
        c.request("logging/setLevel", json!({ "level": "warning" }))
            .await
            .unwrap(),
        json!({})
    );
    c.call("chatty", json!({})).await.unwrap();
    let filtered = log_messages(&c).await;
    let levels: Vec<&str> = filtered
        .iter()
        .map(|m| m["level"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["warning", "error", "critical"]);

    c.call("traced_sync", json!({})).await.unwrap();
    let sync = log_messages(&c).await;
    assert_eq!(sync.len(), 1);
    assert_eq!(sync[0]["data"], "from a blocking thread");

    let e = c
        .request("logging/setLevel", json!({ "level": "loud" }))
        .await
        .unwrap_err();
    assert_eq!(e.code, -32602);
}

#[tokio::test]
async fn sampling_round_trip() {
    let c = Arc::new(client().await);
    let (_, rx) = start(&c, "ask", json!({ "question": "2+2?" }), None).await;
    let request = c.wait_for("sampling/createMessage", WAIT).await.unwrap();
    assert_eq!(
        request["params"],
        json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": "2+2?" } }], "maxTokens": 100 })
    );
    c.respond(
        &request["id"],
        json!({ "role": "assistant", "content": { "type": "text", "text": "4" }, "model": "m1", "stopReason": "endTurn" }),
    )
    .await;
    assert_eq!(
        finish(rx).await["result"]["content"][0]["text"],
        "model said: 4"
    );

    let (_, rx) = start(&c, "ask_full", json!({}), None).await;
    let request = c.wait_for("sampling/createMessage", WAIT).await.unwrap();
    assert_eq!(request["params"]["systemPrompt"], "be brief");
    assert_eq!(request["params"]["temperature"], 0.2);
    c.respond(
        &request["id"],
        json!({ "role": "assistant", "content": { "type": "text", "text": "yo" }, "model": "m2" }),
    )
    .await;
    assert_eq!(
        finish(rx).await["result"]["content"][0]["text"],
        "yo via m2"
    );

    let (_, rx) = start(&c, "ask", json!({ "question": "?" }), None).await;
    let request = c.wait_for("sampling/createMessage", WAIT).await.unwrap();
    c.respond_error(&request["id"], -1, "user rejected sampling")
        .await;
    let response = finish(rx).await;
    assert_eq!(response["result"]["isError"], true);
    assert!(
        response["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("user rejected sampling")
    );
}

#[tokio::test]
async fn elicitation_accept_decline_cancel() {
    let c = client().await;
    let (_, rx) = start(&c, "form", json!({}), None).await;
    let request = c.wait_for("elicitation/create", WAIT).await.unwrap();
    let schema = &request["params"]["requestedSchema"];
    assert_eq!(request["params"]["message"], "Who are you?");
    assert_eq!(schema["type"], "object");
    assert_eq!(
        schema["properties"]["name"],
        json!({ "type": "string", "description": "Your name" })
    );
    assert_eq!(schema["properties"]["age"]["default"], 30);
    assert_eq!(schema["properties"]["age"]["type"], "integer");
    assert_eq!(schema["properties"]["subscribe"]["type"], "boolean");
    assert_eq!(
        schema["properties"]["color"]["enum"],
        json!(["red", "green"])
    );
    assert_eq!(schema["properties"]["size"]["type"], "string");
    assert_eq!(
        schema["properties"]["size"]["oneOf"],
        json!([{ "const": "S", "title": "Small size" }, { "const": "L", "title": "Large size" }])
    );
    assert_eq!(schema["properties"]["tags"]["type"], "array");
    assert_eq!(
        schema["properties"]["tags"]["items"],
        json!({ "type": "string", "enum": ["red", "green"] })
    );
    let required: Vec<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        required.contains(&"name")
            && !required.contains(&"subscribe")
            && !required.contains(&"age")
    );
    c.respond(
        &request["id"],
        json!({ "action": "accept", "content": { "name": "Ann", "color": "red", "size": "L", "tags": ["green"] } }),
    )
    .await;
    assert_eq!(
        finish(rx).await["result"]["content"][0]["text"],
        "Ann 30 None Red L [Green]"
    );

    for (action, text) in [("decline", "declined"), ("cancel", "cancelled")] {
        let (_, rx) = start(&c, "form", json!({}), None).await;
        let request = c.wait_for("elicitation/create", WAIT).await.unwrap();
        c.respond(&request["id"], json!({ "action": action })).await;
        assert_eq!(finish(rx).await["result"]["content"][0]["text"], text);
    }

    let (_, rx) = start(&c, "form", json!({}), None).await;
    let request = c.wait_for("elicitation/create", WAIT).await.unwrap();
    c.respond(
        &request["id"],
        json!({ "action": "accept", "content": { "name": 5 } }),
    )
    .await;
    let response = finish(rx).await;
    assert_eq!(response["result"]["isError"], true);
}

#[tokio::test]
async fn a_missing_client_capability_is_a_clear_error() {
    let c = Client::start(server()).await.unwrap();
    let r = c.call("ask", json!({ "question": "?" })).await.unwrap();
    assert!(r.is_error());
    assert!(r.text().contains("`sampling` capability"), "{}", r.text());
    let r = c.call("form", json!({})).await.unwrap();
    assert!(
        r.text().contains("`elicitation` capability"),
        "{}",
        r.text()
    );
}

async fn names(c: &Client) -> Vec<String> {
    c.list_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn the_tool_manager_changes_the_list_and_says_so() {
    let c = client().await;
    let initial = names(&c).await;
    assert!(initial.contains(&"ask".to_owned()));
    assert!(!initial.contains(&"secret".to_owned()) && !initial.contains(&"secret_too".to_owned()));
    let e = c.call("secret", json!({})).await.unwrap_err();
    assert_eq!(e.code, -32602, "a hidden tool is unknown until enabled");

    let r = c
        .call(
            "manage",
            json!({ "enable": ["secret"], "disable": ["ask"] }),
        )
        .await
        .unwrap();
    assert!(
        r.text().contains("secret") && !r.text().contains("ask,"),
        "{}",
        r.text()
    );
    let changed = c.wait_for("notifications/tools/list_changed", WAIT).await;
    assert!(changed.is_some());
    let now = names(&c).await;
    assert!(now.contains(&"secret".to_owned()) && !now.contains(&"ask".to_owned()));
    assert_eq!(
        c.call("secret", json!({})).await.unwrap().text(),
        "the secret"
    );
    assert_eq!(
        c.call("ask", json!({ "question": "?" }))
            .await
            .unwrap_err()
            .code,
        -32602
    );

    // A change that changes nothing sends nothing.
    c.call("manage", json!({ "enable": ["secret"], "disable": [] }))
        .await
        .unwrap();
    assert!(
        c.wait_for(
            "notifications/tools/list_changed",
            Duration::from_millis(200)
        )
        .await
        .is_none()
    );

    // Unknown names are refused.
    let r = c
        .call("manage", json!({ "enable": ["nope"], "disable": [] }))
        .await
        .unwrap();
    assert!(r.is_error() && r.text().contains("`nope`"));

    // Allow-list mode keeps always-visible tools.
    c.call("allow_only", json!({ "names": ["bump"] }))
        .await
        .unwrap();
    assert!(
        c.wait_for("notifications/tools/list_changed", WAIT)
            .await
            .is_some()
    );
    assert_eq!(names(&c).await, ["allow_only", "bump"]);

    // Other sessions are not affected.
    assert_eq!(names(&client().await).await, initial);
}

#[tokio::test]
async fn a_result_can_enable_tools() {
    let c = client().await;
    assert_eq!(
        c.call("unlock", json!({})).await.unwrap().text(),
        "unlocked"
    );
    assert!(
        c.wait_for("notifications/tools/list_changed", WAIT)
            .await
            .is_some()
    );
    assert_eq!(
        c.call("secret", json!({})).await.unwrap().text(),
        "the secret"
    );
}

#[tokio::test]
async fn the_server_can_change_every_session() {
    let core = server().build().unwrap();
    let active = core
        .change_tools(Batch {
            enable: vec!["secret_too".into()],
            ..Batch::default()
        })
        .unwrap();
    assert!(active.contains(&"secret_too".to_owned()));
    assert!(
        core.change_tools(Batch {
            enable: vec!["nope".into()],
            ..Batch::default()
        })
        .is_err()
    );
}

#[tokio::test]
async fn state_and_request_metadata_are_injected() {
    let c = client().await;
    assert_eq!(c.call("bump", json!({})).await.unwrap().text(), "1");
    assert_eq!(c.call("bump", json!({})).await.unwrap().text(), "2");
    let r = c
        .request(
            "tools/call",
            json!({ "name": "meta", "arguments": {}, "_meta": { "trace": "t1" } }),
        )
        .await
        .unwrap();
    // `Value`'s schema is not an object schema, so the output is wrapped.
    let s = &r["structuredContent"]["result"];
    assert_eq!(s["meta"], json!({ "trace": "t1" }));
    assert!(s["id"].is_i64());
    assert_eq!(s["client"], "mcp-tool-testing");
    assert_eq!(s["sampling"], true);

    let err = Server::new("no-state", "0").build().unwrap_err();
    assert!(
        err.to_string()
            .contains("State<core::sync::atomic::AtomicUsize>"),
        "{err}"
    );
}
