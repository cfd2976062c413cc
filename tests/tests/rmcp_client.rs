//! rmcp, the official Rust MCP SDK, as a client of the `users` example server over stdio (a
//! child process) and Streamable HTTP (`users --http`), with both of its lifecycles: the
//! `initialize` handshake (which rmcp 3 opens asking for 2026-07-28, so the server must answer
//! with a version it speaks) and the `Auto` mode, which probes `server/discover` first and falls
//! back to `initialize`.
//!
//! Each run lists the tools, creates a user and checks its structured content against the
//! advertised `outputSchema` (rmcp does not validate it itself), checks that a bad email is an
//! `isError` result, and that `seed_users {count: 5}` delivers all five progress notifications
//! in order. Every wait is bounded; every server process is killed at the end.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_tool_tests::{ExampleHttp, users_bin};
use rmcp::ClientHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, MaybeSendFuture, NotificationContext, RoleClient,
    RunningService, ServiceExt,
};
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Value, json};

/// The longest one whole client session may take.
const SESSION_LIMIT: Duration = Duration::from_secs(60);

/// The version both sides speak after `initialize`, and the one `Auto` settles on.
const NEGOTIATED: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

// ---------------------------------------------------------------------------------------------
// The server under test
// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// The client
// ---------------------------------------------------------------------------------------------

/// rmcp's default client handler, plus a record of the progress notifications received.
#[derive(Clone, Default)]
struct Recorder {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Recorder {
    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.progress.lock().expect("progress lock").push(params);
        std::future::ready(())
    }
}

/// How the client starts its session.
#[derive(Clone, Copy, Debug)]
enum Lifecycle {
    /// `ServiceExt::serve`: the `initialize` handshake.
    Initialize,
    /// `ClientLifecycleMode::Auto`: `server/discover` first, then `initialize`.
    AutoDiscover,
}

fn lifecycle_mode(lifecycle: Lifecycle) -> Option<ClientLifecycleMode> {
    match lifecycle {
        Lifecycle::Initialize => None,
        Lifecycle::AutoDiscover => Some(ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        }),
    }
}

fn args(value: Value) -> rmcp::model::JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, not {other}"),
    }
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The checks of one client session; `label` names it in failures.
async fn exercise(
    client: &RunningService<RoleClient, Recorder>,
    recorder: &Recorder,
    lifecycle: Lifecycle,
    label: &str,
) {
    let expected = match lifecycle {
        Lifecycle::Initialize => NEGOTIATED,
        Lifecycle::AutoDiscover => MODERN,
    };
    let info = client
        .peer_info()
        .expect("the server's info after the handshake");
    assert_eq!(
        info.protocol_version.to_string(),
        expected,
        "{label}: negotiated version"
    );
    let server = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(server.name, "users", "{label}: server name");

    let tools = client.list_all_tools().await.expect("tools/list");
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "create_user",
            "delete_user",
            "get_user",
            "seed_users",
            "send_email"
        ],
        "{label}: tools"
    );
    let create = tools
        .iter()
        .find(|t| t.name == "create_user")
        .expect("create_user");
    let output_schema = Value::Object(
        create
            .output_schema
            .as_deref()
            .cloned()
            .expect("create_user declares an outputSchema"),
    );
    assert_eq!(
        output_schema["type"], "object",
        "{label}: outputSchema type"
    );
    let validator = jsonschema::validator_for(&output_schema).expect("a valid outputSchema");

    // A good call: structured content that matches the advertised outputSchema.
    let created = client
        .call_tool(
            CallToolRequestParams::new("create_user").with_arguments(args(json!({
                "email": "jane.doe@example.com",
                "name": "Jane Doe",
                "metadata": { "team": "interop" }
            }))),
        )
        .await
        .expect("tools/call create_user");
    assert_ne!(created.is_error, Some(true), "{label}: {created:?}");
    let user = created
        .structured_content
        .clone()
        .expect("create_user returns structuredContent");
    let errors: Vec<String> = validator
        .iter_errors(&user)
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "{label}: structuredContent {user} does not match outputSchema {output_schema}: {errors:?}"
    );
    assert_eq!(user["email"], "jane.doe@example.com", "{label}");
    assert_eq!(user["name"], "Jane Doe", "{label}");
    assert_eq!(user["role"], "user", "{label}: the default role");
    let id = user["id"].as_str().expect("a string id");
    assert!(id.starts_with("usr_"), "{label}: id {id}");
    // The text copy is the same JSON.
    let copy: Value = serde_json::from_str(&text_of(&created)).expect("the text copy is JSON");
    assert_eq!(copy, user, "{label}: text copy");
    // The schema has teeth: a numeric id would not pass.
    let mut tampered = user.clone();
    tampered["id"] = json!(7);
    assert!(!validator.is_valid(&tampered), "{label}: schema too loose");

    let fetched = client
        .call_tool(
            CallToolRequestParams::new("get_user").with_arguments(args(json!({ "userId": id }))),
        )
        .await
        .expect("tools/call get_user");
    assert_eq!(fetched.structured_content.as_ref(), Some(&user), "{label}");

    // A bad call: an isError result naming the field, not a JSON-RPC error.
    let bad = client
        .call_tool(
            CallToolRequestParams::new("create_user")
                .with_arguments(args(json!({ "email": "x", "name": "Jane Doe" }))),
        )
        .await
        .expect("a bad call is still a result");
    assert_eq!(bad.is_error, Some(true), "{label}: {bad:?}");
    assert!(bad.structured_content.is_none(), "{label}: {bad:?}");
    assert!(
        text_of(&bad).contains(r#"email: "x" is not a valid email"#),
        "{label}: {}",
        text_of(&bad)
    );

    // Progress: all five notifications. (rmcp puts a progress token of its own, a number, on
    // every request, replacing any the caller set; the server must echo it.)
    let seed = CallToolRequestParams::new("seed_users").with_arguments(args(json!({ "count": 5 })));
    let seeded = client.call_tool(seed).await.expect("tools/call seed_users");
    assert_eq!(text_of(&seeded), "created 5 demo users", "{label}");
    // Notifications are handled on rmcp's own task: give the last one a moment to land.
    let deadline = Instant::now() + Duration::from_secs(2);
    while recorder.progress.lock().expect("progress lock").len() < 5 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let progress = recorder.progress.lock().expect("progress lock").clone();
    let seen: Vec<(f64, Option<f64>)> = progress.iter().map(|p| (p.progress, p.total)).collect();
    assert_eq!(
        seen,
        (1..=5)
            .map(|i| (f64::from(i), Some(5.0)))
            .collect::<Vec<_>>(),
        "{label}: progress"
    );
    assert!(
        progress
            .iter()
            .all(|p| p.progress_token == progress[0].progress_token),
        "{label}: progress tokens {progress:?}"
    );
}

async fn over_stdio(lifecycle: Lifecycle) {
    let label = format!("rmcp over stdio, {lifecycle:?}");
    let transport =
        TokioChildProcess::new(tokio::process::Command::new(users_bin()).configure(|cmd| {
            cmd.env_remove("RUST_LOG");
        }))
        .expect("users starts");
    let recorder = Recorder::default();
    let client = match lifecycle_mode(lifecycle) {
        None => recorder.clone().serve(transport).await,
        Some(mode) => recorder.clone().serve_with_lifecycle(transport, mode).await,
    }
    .unwrap_or_else(|e| panic!("{label}: the handshake failed: {e}"));
    exercise(&client, &recorder, lifecycle, &label).await;
    // Closing stdin ends the server; rmcp kills it if it lingers.
    client.cancel().await.expect("the client stops");
}

async fn over_http(lifecycle: Lifecycle) {
    let label = format!("rmcp over HTTP, {lifecycle:?}");
    let server = tokio::task::spawn_blocking(ExampleHttp::users)
        .await
        .expect("the server starts");
    let transport = StreamableHttpClientTransport::from_uri(server.url.clone());
    let recorder = Recorder::default();
    let client = match lifecycle_mode(lifecycle) {
        None => recorder.clone().serve(transport).await,
        Some(mode) => recorder.clone().serve_with_lifecycle(transport, mode).await,
    }
    .unwrap_or_else(|e| panic!("{label}: the handshake failed: {e}"));
    exercise(&client, &recorder, lifecycle, &label).await;
    client.cancel().await.expect("the client stops");
    drop(server);
}

async fn bounded(run: impl Future<Output = ()>) {
    tokio::time::timeout(SESSION_LIMIT, run)
        .await
        .expect("the client session took more than a minute");
}

#[tokio::test]
async fn rmcp_stdio_initialize() {
    tokio::task::spawn_blocking(users_bin).await.expect("build");
    bounded(over_stdio(Lifecycle::Initialize)).await;
}

#[tokio::test]
async fn rmcp_stdio_auto_discover() {
    tokio::task::spawn_blocking(users_bin).await.expect("build");
    bounded(over_stdio(Lifecycle::AutoDiscover)).await;
}

#[tokio::test]
async fn rmcp_http_initialize() {
    tokio::task::spawn_blocking(users_bin).await.expect("build");
    bounded(over_http(Lifecycle::Initialize)).await;
}

#[tokio::test]
async fn rmcp_http_auto_discover() {
    tokio::task::spawn_blocking(users_bin).await.expect("build");
    bounded(over_http(Lifecycle::AutoDiscover)).await;
}
