//! Our client (`mcp_tool::client`) against servers nobody here wrote, over stdio and
//! Streamable HTTP:
//!
//! - the official TypeScript `@modelcontextprotocol/server-everything` (npm, pinned in
//!   `interop/package.json`): tools listed (those it registers only for a client that declares
//!   elicitation and sampling included), called, a long operation's progress, its elicitation
//!   and sampling requests answered by our handler;
//! - a server on the official Python SDK (`interop/py-server.py`, PyPI `mcp`'s `MCPServer`,
//!   formerly FastMCP), whose `tools/list` comes in pages of two: every page followed, a call,
//!   progress, an elicitation (2025-11-25); over HTTP in both protocol versions (the SDK answers
//!   `server/discover`, so the client's default settles on 2026-07-28; `VersionChoice::V2025_11_25`
//!   gets 2025-11-25).
//!
//! And server-everything mounted behind a gateway (`calc --mount`): its elicitation and
//! sampling requests relayed to the gateway's client (2025-11-25).
//!
//! Installed by `bash interop/setup.sh` (which `.ci/run` runs).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_tool::client::{CallOptions, CallProgress, Connect, McpClient, VersionChoice};
use mcp_tool::protocol::ProtocolVersion;
use mcp_tool_tests::{User, interop_dir};
use serde_json::{Value, json};

const SETUP_HINT: &str = "install the interop packages with `bash interop/setup.sh` \
                          (.ci/run does it)";

fn everything_js() -> String {
    let path =
        interop_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(path.exists(), "server-everything is missing: {SETUP_HINT}");
    path.to_string_lossy().into_owned()
}

fn python() -> String {
    let path = interop_dir().join(".venv/bin/python");
    assert!(path.exists(), "the Python SDK is missing: {SETUP_HINT}");
    path.to_string_lossy().into_owned()
}

fn py_server() -> String {
    interop_dir()
        .join("py-server.py")
        .to_string_lossy()
        .into_owned()
}

/// A free loopback port (bound, then released for the server to take).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A server process on HTTP; killed when dropped.
struct Remote {
    child: Child,
    url: String,
}

impl Drop for Remote {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `program args` with `env`, and waits (at most 20 s) until `port` takes connections.
fn serve(program: &str, args: &[&str], env: &[(&str, &str)], port: u16) -> Remote {
    let mut child = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(interop_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
    // Drained (and shown with the test's output) so the server never blocks on its log.
    let stderr = child.stderr.take().expect("piped stderr");
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("server: {line}");
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{program} exited before listening: {status}");
        }
        assert!(
            Instant::now() < deadline,
            "{program} never listened on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Remote {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn names(tools: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = tools
        .iter()
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect();
    names.sort();
    names
}

/// Calls `name` with progress; returns the result and the reports.
async fn with_progress(
    client: &McpClient,
    name: &str,
    arguments: Value,
) -> (Value, Vec<CallProgress>) {
    let seen: Arc<Mutex<Vec<CallProgress>>> = Arc::default();
    let sink = seen.clone();
    let result = client
        .call_with(
            name,
            arguments,
            CallOptions {
                progress: Some(Box::new(move |p| sink.lock().unwrap().push(p))),
                ..CallOptions::default()
            },
        )
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let seen = seen.lock().unwrap().clone();
    (result, seen)
}

// ---------------------------------------------------------------------------------------------
// server-everything
// ---------------------------------------------------------------------------------------------

/// server-everything's elicitation and sampling tools (named with `prefix`), answered by
/// `user`: the answers reach the tools, and the questions are those the tools ask.
async fn questions_answered(client: &McpClient, user: &User, prefix: &str) {
    let elicited = client
        .call(&format!("{prefix}trigger-elicitation-request"), json!({}))
        .await
        .unwrap();
    assert!(text(&elicited).contains("Name: Ada"), "{elicited}");
    let sampled = client
        .call(
            &format!("{prefix}trigger-sampling-request"),
            json!({"prompt": "what is the moon?"}),
        )
        .await
        .unwrap();
    assert!(
        text(&sampled).contains("the moon is made of rock"),
        "{sampled}"
    );
    // (server-everything also lists the roots of a client that has them, when it likes.)
    let mut asked = user.asked.lock().unwrap().clone();
    asked.retain(|(m, _)| m != "roots/list");
    let methods: Vec<&str> = asked.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(methods, ["elicitation/create", "sampling/createMessage"]);
    assert!(
        asked[1].1["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("what is the moon?"),
        "{asked:?}"
    );
}

async fn everything(connect: Connect) {
    let user = Arc::new(User::saying("the moon is made of rock"));
    let client = McpClient::connect_with(connect.timeout(Duration::from_secs(30)), user.clone())
        .await
        .expect("connect to server-everything");
    let server = client.server();
    assert_eq!(server.protocol_version, ProtocolVersion::V2025_11_25);
    assert_eq!(
        server.info["name"], "mcp-servers/everything",
        "{:?}",
        server.info
    );

    // The tools it registers once it knows the client's capabilities come a moment later.
    let deadline = Instant::now() + Duration::from_secs(10);
    let tools = loop {
        let tools = names(&client.list_tools().await.expect("tools/list"));
        if tools.iter().any(|t| t == "trigger-sampling-request") {
            break tools;
        }
        assert!(Instant::now() < deadline, "{tools:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    for expected in [
        "echo",
        "get-sum",
        "trigger-long-running-operation",
        "trigger-elicitation-request",
        "trigger-sampling-request",
    ] {
        assert!(tools.iter().any(|t| t == expected), "{expected}: {tools:?}");
    }

    let echo = client
        .call("echo", json!({"message": "hello"}))
        .await
        .unwrap();
    assert_eq!(text(&echo), "Echo: hello");
    let sum = client
        .call("get-sum", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert!(text(&sum).contains('5'), "{sum}");

    let (done, progress) = with_progress(
        &client,
        "trigger-long-running-operation",
        json!({"duration": 0.3, "steps": 3}),
    )
    .await;
    assert!(text(&done).contains("Steps: 3"), "{done}");
    let steps: Vec<(f64, Option<f64>)> = progress.iter().map(|p| (p.progress, p.total)).collect();
    assert_eq!(
        steps,
        [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );

    questions_answered(&client, &user, "").await;
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_stdio() {
    everything(Connect::stdio(
        "node",
        [everything_js(), "stdio".to_owned()],
    ))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_http() {
    let port = free_port();
    let remote = serve(
        "node",
        &[&everything_js(), "streamableHttp"],
        &[("PORT", &port.to_string())],
        port,
    );
    everything(Connect::http(&remote.url)).await;
}

// ---------------------------------------------------------------------------------------------
// The Python SDK
// ---------------------------------------------------------------------------------------------

async fn python_server(connect: Connect, version: ProtocolVersion) {
    let user = Arc::new(User::saying("the moon is made of rock"));
    let client = McpClient::connect_with(connect.timeout(Duration::from_secs(30)), user.clone())
        .await
        .expect("connect to the Python server");
    assert_eq!(client.server().protocol_version, version);

    // Four pages of two.
    let tools = client.list_tools().await.expect("tools/list");
    assert_eq!(
        names(&tools),
        [
            "add", "ask_name", "count", "tool_1", "tool_2", "tool_3", "tool_4", "tool_5"
        ]
    );

    let sum = client.call("add", json!({"a": 2, "b": 3})).await.unwrap();
    assert_eq!(text(&sum), "5", "{sum}");
    assert_eq!(sum["structuredContent"]["result"], 5);
    let four = client.call("tool_4", json!({})).await.unwrap();
    assert_eq!(text(&four), "tool 4");

    let (counted, progress) = with_progress(&client, "count", json!({"steps": 3})).await;
    assert_eq!(text(&counted), "counted to 3", "{counted}");
    let steps: Vec<(f64, Option<f64>, Option<String>)> = progress
        .iter()
        .map(|p| (p.progress, p.total, p.message.clone()))
        .collect();
    assert_eq!(
        steps,
        [
            (1.0, Some(3.0), Some("step 1".into())),
            (2.0, Some(3.0), Some("step 2".into())),
            (3.0, Some(3.0), Some("step 3".into())),
        ]
    );

    // The SDK's `ctx.elicit` needs a back-channel, which 2026-07-28 has not (a tool there
    // returns an InputRequiredResult itself): `ask_name` is a 2025-11-25 tool. The input
    // rounds of 2026-07-28 are exercised against our own servers (tests/tests/gateway.rs).
    if version == ProtocolVersion::V2025_11_25 {
        let greeted = client.call("ask_name", json!({})).await.unwrap();
        assert_eq!(text(&greeted), "hello Ada", "{greeted}");
        let asked = user.asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert_eq!(asked[0].0, "elicitation/create");
        assert_eq!(asked[0].1["message"], "What is your name?");
    }

    let wrong = client.call("add", json!({"a": "two"})).await;
    assert!(
        wrong.as_ref().is_ok_and(|r| r["isError"] == true) || wrong.is_err(),
        "{wrong:?}"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_server_over_stdio() {
    python_server(
        Connect::stdio(python(), [py_server(), "stdio".to_owned()])
            .protocol_version(VersionChoice::V2025_11_25),
        ProtocolVersion::V2025_11_25,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_server_over_http_in_both_versions() {
    let port = free_port();
    let remote = serve(
        &python(),
        &[&py_server(), "http", &port.to_string()],
        &[],
        port,
    );
    python_server(
        Connect::http(&remote.url).protocol_version(VersionChoice::V2025_11_25),
        ProtocolVersion::V2025_11_25,
    )
    .await;
    python_server(Connect::http(&remote.url), ProtocolVersion::V2026_07_28).await;
}

// ---------------------------------------------------------------------------------------------
// server-everything mounted behind our gateway: its questions relayed to our client
// ---------------------------------------------------------------------------------------------

/// `calc --mount` with server-everything over stdio as `ev`: its elicitation and sampling
/// requests, made while a forwarded call runs, reach the gateway's own client (`Ctx::relay`):
/// as requests of a 2025-11-25 session, and as input requests of 2026-07-28 rounds (the
/// remote call held between them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_mounted_has_its_questions_relayed() {
    let dir = mcp_tool_tests::TempDir::new("everything-mount");
    let file = dir.path().join("mounts.json");
    std::fs::write(
        &file,
        json!([{"type": "mcp", "server_label": "ev",
                "command": ["node", everything_js(), "stdio"]}])
        .to_string(),
    )
    .unwrap();
    let gateway =
        mcp_tool_tests::ExampleHttp::start("calc", &["--mount", &file.to_string_lossy()], &[]);
    for version in [VersionChoice::V2025_11_25, VersionChoice::V2026_07_28] {
        relayed_through(&gateway.url, version).await;
    }
}

async fn relayed_through(url: &str, version: VersionChoice) {
    let user = Arc::new(User::saying("the moon is made of rock"));
    let client = McpClient::connect_with(
        Connect::http(url)
            .protocol_version(version)
            .timeout(Duration::from_secs(30)),
        user.clone(),
    )
    .await
    .expect("connect to the gateway");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let tools = names(&client.list_tools().await.expect("tools/list"));
        if tools.iter().any(|t| t == "ev__trigger-sampling-request") {
            break;
        }
        assert!(Instant::now() < deadline, "{tools:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    questions_answered(&client, &user, "ev__").await;
    client.close().await;
}
