//! rmcp, the official Rust MCP SDK, as a client of the example servers over stdio (a child
//! process) and Streamable HTTP (`--http`), with its three lifecycles: the `initialize`
//! handshake (which rmcp 3 opens asking for 2026-07-28, so the server must answer with a version
//! it speaks: 2025-11-25), the `Auto` mode, which probes `server/discover` first and falls back to
//! `initialize`, and the `Discover` mode pinned to 2026-07-28 (no fallback: every request
//! stands alone, carrying the version, capabilities and client info in its `_meta`).
//!
//! Against `users`: each run lists the tools, creates a user and checks its structured content
//! against the advertised `outputSchema` (rmcp does not validate it itself), checks that a bad
//! email is an `isError` result, and that `seed_users {count: 5}` delivers all five progress
//! notifications in order.
//!
//! Against `files --root <tmp> --password <pw>`: `login` reveals `delete_file` in a fresh
//! `tools/list`; `delete_file` asks the user (elicitation), which the handler here accepts for
//! one file and declines for another; `summarize_file` asks the client's model (sampling), which
//! the handler answers with a fixed text. In 2026-07-28 each question comes back as an
//! `InputRequiredResult` that rmcp's `call_tool` answers and retries by itself; in 2025-11-25
//! it is a request from the server. Over HTTP the client sends a bearer token: in 2026-07-28
//! there is no session, so what `login` enables belongs to the token's subject.
//!
//! Every wait is bounded; every server process is killed at the end.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_tool_tests::{ExampleHttp, TempDir, example_bin};
use rmcp::ClientHandler;
// Sampling is deprecated in 2026-07-28 (SEP-2577) but still part of it, and this is its test.
#[allow(deprecated)]
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability, ErrorData, FormElicitationCapability, Implementation,
    InputRequest, ProgressNotificationParam, ProtocolVersion, SamplingCapability, SamplingMessage,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, MaybeSendFuture, NotificationContext, RequestContext,
    RoleClient, RunningService, ServiceExt,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{
    ConfigureCommandExt, IntoTransport, StreamableHttpClientTransport, TokioChildProcess,
};
use serde_json::{Value, json};

/// The longest one whole client session may take.
const SESSION_LIMIT: Duration = Duration::from_secs(60);

/// The version both sides speak after `initialize`, and the one `Auto` and `Discover` settle on.
const NEGOTIATED: &str = "2025-11-25";
const V2026_07_28: &str = "2026-07-28";

/// The `files` server's password, and the bearer token of its one HTTP subject.
const PASSWORD: &str = "open-sesame";
const TOKEN: &str = "rmcp-token";

/// What the handler's model answers.
const SUMMARY: &str = "A short note about the moon.";

// ---------------------------------------------------------------------------------------------
// The client
// ---------------------------------------------------------------------------------------------

/// A client handler that records the progress notifications, questions and prompts it gets,
/// declares elicitation and sampling, accepts deleting `gone.txt` (declining anything else) and
/// answers every prompt with [`SUMMARY`].
#[derive(Clone, Default)]
struct Recorder {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    elicitations: Arc<Mutex<Vec<Value>>>,
    samplings: Arc<Mutex<Vec<Value>>>,
}

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        let mut elicitation = ElicitationCapability::new();
        elicitation.form = Some(FormElicitationCapability::new());
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(elicitation);
        capabilities.sampling = Some(SamplingCapability::default());
        ClientConfig::new(
            capabilities,
            Implementation::new("mcp-tool-tests", env!("CARGO_PKG_VERSION")),
        )
    }

    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.progress.lock().expect("progress lock").push(params);
        std::future::ready(())
    }

    fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<ElicitResult, ErrorData>> + MaybeSendFuture + '_ {
        let seen = serde_json::to_value(&request).expect("an elicitation is JSON");
        let accept = seen["message"]
            .as_str()
            .is_some_and(|m| m.contains("gone.txt"));
        self.elicitations
            .lock()
            .expect("elicitation lock")
            .push(seen);
        std::future::ready(Ok(if accept {
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({ "confirm": true }))
        } else {
            ElicitResult::new(ElicitationAction::Decline)
        }))
    }

    #[allow(deprecated)] // sampling: see the imports
    fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<CreateMessageResult, ErrorData>> + MaybeSendFuture + '_ {
        let seen = serde_json::to_value(&params).expect("a sampling request is JSON");
        self.samplings.lock().expect("sampling lock").push(seen);
        std::future::ready(Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text(SUMMARY),
            "fixed-test-model".to_owned(),
        )
        .with_stop_reason(CreateMessageResult::STOP_REASON_END_TURN)))
    }
}

/// How the client starts its session.
#[derive(Clone, Copy, Debug)]
enum Lifecycle {
    /// `ServiceExt::serve`: the `initialize` handshake.
    Initialize,
    /// `ClientLifecycleMode::Auto`: `server/discover` first, then `initialize`.
    AutoDiscover,
    /// `ClientLifecycleMode::Discover` pinned to 2026-07-28: no fallback.
    Discover,
}

impl Lifecycle {
    /// The version the session must settle on.
    fn version(self) -> &'static str {
        match self {
            Lifecycle::Initialize => NEGOTIATED,
            Lifecycle::AutoDiscover | Lifecycle::Discover => V2026_07_28,
        }
    }

    fn mode(self) -> Option<ClientLifecycleMode> {
        match self {
            Lifecycle::Initialize => None,
            Lifecycle::AutoDiscover => Some(ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            }),
            Lifecycle::Discover => Some(ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            }),
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Transport {
    Stdio,
    Http,
}

/// A client of one example server; over HTTP, the server too (stopped after the client).
struct Connected {
    client: RunningService<RoleClient, Recorder>,
    recorder: Recorder,
    server: Option<ExampleHttp>,
}

impl Connected {
    /// Starts the example `name` with `args` and connects to it. Over HTTP the server accepts
    /// `token` (for the subject `alice`) and the client presents it.
    async fn start(
        name: &'static str,
        args: Vec<String>,
        token: Option<&'static str>,
        transport: Transport,
        lifecycle: Lifecycle,
        label: &str,
    ) -> Connected {
        let recorder = Recorder::default();
        match transport {
            Transport::Stdio => {
                let command = tokio::process::Command::new(example_bin(name)).configure(|cmd| {
                    cmd.args(&args).env_remove("RUST_LOG");
                });
                let transport = TokioChildProcess::new(command).expect("the server starts");
                let client = serve(recorder.clone(), transport, lifecycle, label).await;
                Connected {
                    client,
                    recorder,
                    server: None,
                }
            }
            Transport::Http => {
                let server = tokio::task::spawn_blocking(move || {
                    let args: Vec<&str> = args.iter().map(String::as_str).collect();
                    let tokens = token.map(|t| format!("alice:{t}"));
                    let env: Vec<(&str, &str)> = tokens
                        .iter()
                        .map(|t| (mcp_tool::env::BEARER_TOKENS, t.as_str()))
                        .collect();
                    ExampleHttp::start(name, &args, &env)
                })
                .await
                .expect("the server starts");
                let mut config = StreamableHttpClientTransportConfig::with_uri(server.url.clone());
                if let Some(token) = token {
                    config = config.auth_header(token);
                }
                mcp_tool_tests::install_crypto_provider();
                let transport = StreamableHttpClientTransport::from_config(config);
                let client = serve(recorder.clone(), transport, lifecycle, label).await;
                Connected {
                    client,
                    recorder,
                    server: Some(server),
                }
            }
        }
    }

    async fn stop(self) {
        // Over stdio closing stdin ends the server; rmcp kills it if it lingers.
        self.client.cancel().await.expect("the client stops");
        drop(self.server);
    }
}

async fn serve<T, E, A>(
    recorder: Recorder,
    transport: T,
    lifecycle: Lifecycle,
    label: &str,
) -> RunningService<RoleClient, Recorder>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    match lifecycle.mode() {
        None => recorder.serve(transport).await,
        Some(mode) => recorder.serve_with_lifecycle(transport, mode).await,
    }
    .unwrap_or_else(|e| panic!("{label}: the handshake failed: {e}"))
}

/// Checks the version the session settled on and the server's name.
fn check_peer(
    client: &RunningService<RoleClient, Recorder>,
    name: &str,
    lifecycle: Lifecycle,
    label: &str,
) {
    let info = client
        .peer_info()
        .expect("the server's info after the handshake");
    assert_eq!(
        info.protocol_version.to_string(),
        lifecycle.version(),
        "{label}: negotiated version"
    );
    let server = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(server.name, name, "{label}: server name");
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
    check_peer(client, "users", lifecycle, label);

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

async fn users(transport: Transport, lifecycle: Lifecycle) {
    let label = format!("rmcp over {transport:?}, {lifecycle:?}, users");
    let connected = Connected::start("users", Vec::new(), None, transport, lifecycle, &label).await;
    exercise(&connected.client, &connected.recorder, lifecycle, &label).await;
    connected.stop().await;
}

/// Names of the tools a fresh `tools/list` gives (rmcp's response cache cleared first: the
/// server lets a 2026-07-28 client keep a list for minutes).
async fn fresh_tool_names(client: &RunningService<RoleClient, Recorder>) -> Vec<String> {
    client.peer().clear_response_cache().await;
    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .expect("tools/list")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort_unstable();
    names
}

/// In 2026-07-28, the first answer to a call that asks something is an `InputRequiredResult`
/// with one question of `kind` and a sealed request state. (rmcp's `call_tool_once` stops
/// there, without asking the handler.)
async fn check_input_required(
    client: &RunningService<RoleClient, Recorder>,
    params: CallToolRequestParams,
    kind: &str,
    label: &str,
) {
    let first = client.call_tool_once(params).await.expect("tools/call");
    let CallToolResponse::InputRequired(first) = first else {
        panic!("{label}: expected an InputRequiredResult, got {first:?}");
    };
    let requests = first.input_requests.clone().unwrap_or_default();
    let kinds: Vec<&str> = requests
        .values()
        .map(|r| match r {
            InputRequest::CreateMessage(_) => "sampling",
            InputRequest::Elicitation(_) => "elicitation",
            InputRequest::ListRoots(_) => "roots",
            _ => "something else",
        })
        .collect();
    assert_eq!(kinds, [kind], "{label}: {first:?}");
    assert!(
        first
            .request_state
            .as_deref()
            .is_some_and(|s| !s.is_empty()),
        "{label}: no requestState in {first:?}"
    );
}

fn delete(path: &str) -> CallToolRequestParams {
    CallToolRequestParams::new("delete_file").with_arguments(args(json!({ "path": path })))
}

async fn files(transport: Transport, lifecycle: Lifecycle) {
    let label = format!("rmcp over {transport:?}, {lifecycle:?}, files");
    let root = TempDir::new("rmcp-files");
    let notes = "The moon keeps the same face turned to the Earth.\n";
    for (name, text) in [
        ("gone.txt", "delete me\n"),
        ("keep.txt", "keep me\n"),
        ("notes.txt", notes),
    ] {
        std::fs::write(root.path().join(name), text).expect("write the fixture");
    }
    let server_args = ["--root", root.arg(), "--password", PASSWORD].map(str::to_owned);
    let connected = Connected::start(
        "files",
        server_args.to_vec(),
        Some(TOKEN),
        transport,
        lifecycle,
        &label,
    )
    .await;
    let (client, recorder) = (&connected.client, &connected.recorder);
    check_peer(client, "files", lifecycle, &label);
    let stateless = lifecycle.version() == V2026_07_28;

    // login reveals the hidden tools.
    let before = fresh_tool_names(client).await;
    assert!(
        !before.iter().any(|n| n == "delete_file"),
        "{label}: {before:?}"
    );
    let login = client
        .call_tool(
            CallToolRequestParams::new("login")
                .with_arguments(args(json!({ "password": PASSWORD }))),
        )
        .await
        .expect("tools/call login");
    assert_ne!(login.is_error, Some(true), "{label}: {login:?}");
    let after = fresh_tool_names(client).await;
    for name in ["delete_file", "write_file"] {
        assert!(after.iter().any(|n| n == name), "{label}: {after:?}");
    }

    // Elicitation, accepted: the file goes.
    if stateless {
        check_input_required(client, delete("gone.txt"), "elicitation", &label).await;
        assert!(
            root.path().join("gone.txt").exists(),
            "{label}: deleted before the answer"
        );
    }
    let gone = client
        .call_tool(delete("gone.txt"))
        .await
        .expect("delete gone.txt");
    assert_ne!(gone.is_error, Some(true), "{label}: {gone:?}");
    assert_eq!(text_of(&gone), "deleted gone.txt", "{label}");
    assert!(
        !root.path().join("gone.txt").exists(),
        "{label}: gone.txt is still there"
    );

    // Elicitation, declined: the file stays.
    let kept = client
        .call_tool(delete("keep.txt"))
        .await
        .expect("delete keep.txt");
    assert_ne!(kept.is_error, Some(true), "{label}: {kept:?}");
    assert_eq!(text_of(&kept), "keep.txt was not deleted", "{label}");
    assert!(
        exists_with(root.path(), "keep.txt", "keep me\n"),
        "{label}: keep.txt"
    );

    let elicitations = recorder
        .elicitations
        .lock()
        .expect("elicitation lock")
        .clone();
    let asked: Vec<&Value> = elicitations.iter().map(|e| &e["message"]).collect();
    assert_eq!(
        asked,
        ["Delete `gone.txt`?", "Delete `keep.txt`?"],
        "{label}"
    );
    for e in &elicitations {
        assert_eq!(
            e["requestedSchema"]["properties"]["confirm"]["type"], "boolean",
            "{label}: {e}"
        );
    }

    // Sampling: the model's answer is the tool's result.
    let summarize = CallToolRequestParams::new("summarize_file")
        .with_arguments(args(json!({ "path": "notes.txt" })));
    if stateless {
        check_input_required(client, summarize.clone(), "sampling", &label).await;
    }
    let summary = client.call_tool(summarize).await.expect("summarize_file");
    assert_ne!(summary.is_error, Some(true), "{label}: {summary:?}");
    assert_eq!(text_of(&summary), SUMMARY, "{label}");
    let samplings = recorder.samplings.lock().expect("sampling lock").clone();
    assert_eq!(samplings.len(), 1, "{label}: {samplings:?}");
    let prompt: String = samplings[0]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .flat_map(|m| match &m["content"] {
            Value::Array(blocks) => blocks.clone(),
            block => vec![block.clone()],
        })
        .filter_map(|block| block["text"].as_str().map(str::to_owned))
        .collect();
    assert!(
        prompt.contains(notes.trim()),
        "{label}: the prompt does not quote the file: {prompt}"
    );

    connected.stop().await;
}

fn exists_with(root: &Path, name: &str, text: &str) -> bool {
    std::fs::read_to_string(root.join(name)).is_ok_and(|t| t == text)
}

async fn bounded(run: impl Future<Output = ()>) {
    tokio::time::timeout(SESSION_LIMIT, run)
        .await
        .expect("the client session took more than a minute");
}

/// Builds the example before the time limit starts.
async fn build(name: &'static str) {
    tokio::task::spawn_blocking(move || example_bin(name))
        .await
        .expect("build");
}

#[tokio::test]
async fn rmcp_stdio_initialize() {
    build("users").await;
    bounded(users(Transport::Stdio, Lifecycle::Initialize)).await;
}

#[tokio::test]
async fn rmcp_stdio_auto_discover() {
    build("users").await;
    bounded(users(Transport::Stdio, Lifecycle::AutoDiscover)).await;
}

#[tokio::test]
async fn rmcp_stdio_discover_2026() {
    build("users").await;
    bounded(users(Transport::Stdio, Lifecycle::Discover)).await;
}

#[tokio::test]
async fn rmcp_http_initialize() {
    build("users").await;
    bounded(users(Transport::Http, Lifecycle::Initialize)).await;
}

#[tokio::test]
async fn rmcp_http_auto_discover() {
    build("users").await;
    bounded(users(Transport::Http, Lifecycle::AutoDiscover)).await;
}

#[tokio::test]
async fn rmcp_http_discover_2026() {
    build("users").await;
    bounded(users(Transport::Http, Lifecycle::Discover)).await;
}

#[tokio::test]
async fn rmcp_files_stdio_initialize() {
    build("files").await;
    bounded(files(Transport::Stdio, Lifecycle::Initialize)).await;
}

#[tokio::test]
async fn rmcp_files_stdio_discover_2026() {
    build("files").await;
    bounded(files(Transport::Stdio, Lifecycle::Discover)).await;
}

#[tokio::test]
async fn rmcp_files_http_initialize() {
    build("files").await;
    bounded(files(Transport::Http, Lifecycle::Initialize)).await;
}

#[tokio::test]
async fn rmcp_files_http_discover_2026() {
    build("files").await;
    bounded(files(Transport::Http, Lifecycle::Discover)).await;
}
