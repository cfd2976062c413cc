//! The gateway over real processes (the `MCPTool` document): the `gateway` example (or any
//! example with `--mount FILE`) mounting `users --http` and `calc` over stdio, spoken to by
//! `mcp_tool::client` in both versions — 2025-11-25 (a session) and 2026-07-28 (stateless).
//!
//! Checked: mounted tools listed as `label__tool` with the remote's schemas and the server's
//! description; calls forwarded with progress and cancellation (the remote stops); headers and
//! tokens seen by their own remote only (two echo servers of this file, and `users` with bearer
//! tokens, which refuses any other); the connection store; approval accepted, declined and
//! unsupported; `tool_configs` resolution (exact > `*` > server-wide), unknown names ignored;
//! `allowed_tools` by names and by `read_only`; a remote restarted on the same port and one
//! down at start; the first list holding a slow mount's tools over HTTP and stdio, and a silent
//! mount holding it only until the bound; tool search finding and revealing a deferred
//! mounted tool at once; a mounted
//! server's questions relayed in both versions, and a held remote call cancelled once no round
//! comes for it (an in-process gateway before a 2025-11-25 server of this file).

use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_tool::client::{
    CallOptions, CallProgress, Canceller, ClientError, ClientFuture, ClientHandler, Connect,
    McpClient, NoHandler, VersionChoice,
};
use mcp_tool::protocol::RpcError;
use mcp_tool_tests::{ExampleHttp, TempDir, User, example_bin, wait_bounded};
use serde_json::{Value, json};

/// The longest a mounted server may take to appear, or to come back.
const APPEAR: Duration = Duration::from_secs(30);

const BOTH: [VersionChoice; 2] = [VersionChoice::V2025_11_25, VersionChoice::V2026_07_28];

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// What the test's client answers when the gateway asks for approval.
#[derive(Clone, Copy, PartialEq)]
enum Answer {
    Approve,
    Decline,
}

/// A client that declares elicitation, answers every question the same way, and keeps them.
struct Asker {
    answer: Answer,
    asked: Mutex<Vec<Value>>,
}

impl Asker {
    fn new(answer: Answer) -> Arc<Asker> {
        Arc::new(Asker {
            answer,
            asked: Mutex::new(Vec::new()),
        })
    }

    fn asked(&self) -> Vec<Value> {
        self.asked.lock().unwrap().clone()
    }
}

impl ClientHandler for Asker {
    fn capabilities(&self) -> Value {
        json!({ "elicitation": { "form": {} } })
    }

    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> ClientFuture<'a, Result<Value, RpcError>> {
        Box::pin(async move {
            assert_eq!(method, "elicitation/create", "{params}");
            self.asked.lock().unwrap().push(params);
            Ok(match self.answer {
                Answer::Approve => json!({ "action": "accept", "content": { "approve": true } }),
                Answer::Decline => json!({ "action": "decline" }),
            })
        })
    }
}

async fn connect(url: &str, version: VersionChoice, handler: Arc<dyn ClientHandler>) -> McpClient {
    McpClient::connect_with(
        Connect::http(url)
            .protocol_version(version)
            .timeout(Duration::from_secs(20)),
        handler,
    )
    .await
    .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"))
}

fn names(tools: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = tools
        .iter()
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect();
    names.sort();
    names
}

/// Lists the client's tools until `ready` holds (a mount connects in the background).
async fn tools_when(client: &McpClient, ready: impl Fn(&[String]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + APPEAR;
    loop {
        let tools = client.list_tools().await.expect("tools/list");
        if ready(&names(&tools)) {
            return tools;
        }
        assert!(
            Instant::now() < deadline,
            "the mounted tools never appeared: {:?}",
            names(&tools)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn is_error(result: &Value) -> bool {
    result["isError"] == json!(true)
}

/// A mount file holding `mounts`.
fn mount_file(dir: &TempDir, mounts: &Value) -> String {
    let path = dir.path().join("mounts.json");
    std::fs::write(&path, mounts.to_string()).expect("write the mount file");
    path.to_string_lossy().into_owned()
}

/// The gateway example over HTTP, mounting `users` at `users_url` and `calc` over stdio.
fn gateway(users_url: &str) -> ExampleHttp {
    ExampleHttp::start(
        "gateway",
        &["--users", users_url, "--calc", example_bin("calc")],
        &[],
    )
}

/// A TCP proxy to the server at `url` that holds each new connection for `hold` before it
/// passes anything on; its URL (same path).
async fn slow_proxy(url: &str, hold: Duration) -> String {
    let target = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let path = url.trim_start_matches("http://")[target.len()..].to_owned();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            let target = target.clone();
            tokio::spawn(async move {
                tokio::time::sleep(hold).await;
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(&target).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    format!("http://{address}{path}")
}

/// The remote tool definitions `users` lists itself.
async fn users_own_tools(url: &str) -> Vec<Value> {
    let direct = McpClient::connect(Connect::http(url)).await.expect("users");
    let tools = direct.list_tools().await.expect("users' tools");
    direct.close().await;
    tools
}

// ---------------------------------------------------------------------------------------------
// Listing, forwarding, progress, cancellation
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mounted_tools_are_listed_with_their_prefix_schema_and_server_description() {
    let users = ExampleHttp::users();
    let gw = gateway(&users.url);
    let own = users_own_tools(&users.url).await;
    for version in BOTH {
        let client = connect(&gw.url, version, Arc::new(NoHandler)).await;
        let tools = tools_when(&client, |n| n.iter().any(|n| n.starts_with("users__"))).await;
        let listed = names(&tools);
        let mut expected: Vec<String> = names(&own).iter().map(|n| format!("users__{n}")).collect();
        expected.extend(["gateway_status".to_owned(), "search_tools".to_owned()]);
        expected.sort();
        // calc's tools are deferred: not listed, found through search_tools.
        assert_eq!(listed, expected, "{version:?}");
        for remote in &own {
            let name = format!("users__{}", remote["name"].as_str().unwrap());
            let ours = tools.iter().find(|t| t["name"] == name.as_str()).unwrap();
            assert_eq!(ours["inputSchema"], remote["inputSchema"], "{name}");
            assert_eq!(ours["outputSchema"], remote["outputSchema"], "{name}");
            assert_eq!(ours["title"], remote["title"], "{name}");
            assert_eq!(ours["annotations"], remote["annotations"], "{name}");
            let description = ours["description"].as_str().unwrap();
            assert!(
                description.starts_with(remote["description"].as_str().unwrap())
                    && description.contains("User accounts: create, read and delete users"),
                "{name}: {description}"
            );
        }
        let created = client
            .call(
                "users__create_user",
                json!({"email": "ada@example.com", "name": "Ada Lovelace"}),
            )
            .await
            .unwrap();
        assert!(!is_error(&created), "{created}");
        assert_eq!(created["structuredContent"]["email"], "ada@example.com");
        let status = client.call("gateway_status", json!({})).await.unwrap();
        assert!(text(&status).contains("users: 5 tools"), "{status}");
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_are_forwarded_with_progress_and_cancellation_reaches_the_remote() {
    let users = ExampleHttp::users();
    let gw = gateway(&users.url);
    for version in BOTH {
        let client = connect(&gw.url, version, Arc::new(NoHandler)).await;
        tools_when(&client, |n| n.iter().any(|n| n == "users__seed_users")).await;

        // Progress: each of the remote's reports reaches our client, in order.
        let seen: Arc<Mutex<Vec<CallProgress>>> = Arc::default();
        let sink = seen.clone();
        let result = client
            .call_with(
                "users__seed_users",
                json!({"count": 3}),
                CallOptions {
                    progress: Some(Box::new(move |p| sink.lock().unwrap().push(p))),
                    ..CallOptions::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(text(&result), "created 3 demo users", "{result}");
        let seen = seen.lock().unwrap().clone();
        let steps: Vec<(f64, Option<f64>)> = seen.iter().map(|p| (p.progress, p.total)).collect();
        assert_eq!(
            steps,
            [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))],
            "{version:?}"
        );
        assert!(
            seen[0]
                .message
                .as_deref()
                .unwrap()
                .starts_with("created usr_")
        );

        // Cancellation at the first report of a 20-user seed: the remote stops seeding.
        let before = next_user_number(&users.url).await;
        let cancel = Canceller::new();
        let trip = cancel.clone();
        let outcome = client
            .call_with(
                "users__seed_users",
                json!({"count": 20}),
                CallOptions {
                    progress: Some(Box::new(move |_| trip.cancel())),
                    cancel: Some(cancel.token()),
                    ..CallOptions::default()
                },
            )
            .await;
        assert_eq!(outcome, Err(ClientError::Cancelled), "{version:?}");
        // A seed left running would create its 20 users within 1 s (one every 50 ms).
        tokio::time::sleep(Duration::from_secs(2)).await;
        let after = next_user_number(&users.url).await;
        let seeded = after - before - 1;
        assert!(
            (1..5).contains(&seeded),
            "{version:?}: the remote went on seeding after the cancellation ({seeded} users)"
        );
        client.close().await;
    }
}

/// Creates a user directly on `users` and returns its number (ids count up from 1).
async fn next_user_number(url: &str) -> u64 {
    let direct = McpClient::connect(Connect::http(url)).await.expect("users");
    let created = direct
        .call(
            "create_user",
            json!({"email": "probe@example.com", "name": "Probe"}),
        )
        .await
        .expect("create_user");
    direct.close().await;
    let id = created["structuredContent"]["id"].as_str().expect("an id");
    u64::from_str_radix(id.trim_start_matches("usr_"), 16).expect("a hex number")
}

// ---------------------------------------------------------------------------------------------
// Approval
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_is_asked_before_forwarding_and_a_refusal_sends_nothing() {
    let users = ExampleHttp::users();
    let gw = gateway(&users.url);
    for version in BOTH {
        let direct = McpClient::connect(Connect::http(&users.url)).await.unwrap();
        let make =
            |n: &str| json!({"email": format!("{n}@example.com"), "name": format!("User {n}")});

        // Approved: the user is asked (a form naming the server, the tool and the
        // arguments), then the call is forwarded.
        let yes = Asker::new(Answer::Approve);
        let client = connect(&gw.url, version, yes.clone()).await;
        tools_when(&client, |n| n.iter().any(|n| n == "users__delete_user")).await;
        let id = direct.call("create_user", make("gone")).await.unwrap()["structuredContent"]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let deleted = client
            .call("users__delete_user", json!({"userId": id}))
            .await
            .unwrap();
        assert!(
            text(&deleted).starts_with(&format!("Deleted user {id}")),
            "{deleted}"
        );
        let asked = yes.asked();
        assert_eq!(asked.len(), 1, "{asked:?}");
        let message = asked[0]["message"].as_str().unwrap();
        assert!(
            message.contains("`users`") && message.contains("delete_user") && message.contains(&id),
            "{message}"
        );
        assert_eq!(
            asked[0]["requestedSchema"]["properties"]["approve"]["type"],
            "boolean"
        );
        // Tools without approval are not asked about.
        client
            .call("users__get_user", json!({"userId": "usr_nobody"}))
            .await
            .unwrap();
        assert_eq!(yes.asked().len(), 1);
        client.close().await;

        // Declined: an error result, and the user is still there.
        let no = Asker::new(Answer::Decline);
        let client = connect(&gw.url, version, no.clone()).await;
        tools_when(&client, |n| n.iter().any(|n| n == "users__delete_user")).await;
        let id = direct.call("create_user", make("kept")).await.unwrap()["structuredContent"]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let refused = client
            .call("users__delete_user", json!({"userId": id}))
            .await
            .unwrap();
        assert!(is_error(&refused), "{refused}");
        assert!(text(&refused).contains("NOT_APPROVED"), "{refused}");
        assert_eq!(no.asked().len(), 1);
        let still = direct
            .call("get_user", json!({"userId": id}))
            .await
            .unwrap();
        assert!(
            !is_error(&still),
            "a declined delete reached the server: {still}"
        );
        client.close().await;

        // A client without elicitation: a clear error, never a silent forward.
        let mute = connect(&gw.url, version, Arc::new(NoHandler)).await;
        tools_when(&mute, |n| n.iter().any(|n| n == "users__delete_user")).await;
        let unasked = mute.call("users__delete_user", json!({"userId": id})).await;
        assert_approval_unavailable(&unasked);
        let still = direct
            .call("get_user", json!({"userId": id}))
            .await
            .unwrap();
        assert!(
            !is_error(&still),
            "an unapproved delete reached the server: {still}"
        );
        mute.close().await;
        direct.close().await;
    }
}

/// A call needing approval, made by a client without elicitation: an error result naming
/// the missing capability, in both protocol versions; never forwarded.
fn assert_approval_unavailable(outcome: &Result<Value, ClientError>) {
    let result = outcome
        .as_ref()
        .expect("an error result, not a failed request");
    assert!(is_error(result), "{result}");
    assert!(
        text(result).contains("APPROVAL_UNAVAILABLE") && text(result).contains("`elicitation`"),
        "{result}"
    );
}

// ---------------------------------------------------------------------------------------------
// allowed_tools and tool_configs (a mount file on the `calc` example)
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_tools_and_tool_configs_resolve_exact_then_star_then_server_wide() {
    let users = ExampleHttp::users();
    let dir = TempDir::new("gateway-rules");
    let file = mount_file(
        &dir,
        &json!([
            // Only the read-only tools.
            {"type": "mcp", "server_label": "ro", "server_url": users.url,
             "allowed_tools": {"read_only": true}},
            // By name and read-only together: get_user only.
            {"type": "mcp", "server_label": "both", "server_url": users.url,
             "allowed_tools": {"tool_names": ["get_user", "delete_user"], "read_only": true}},
            // A list of names; the server-wide "always" beaten by `*`'s "never", which the
            // exact entry of delete_user beats in turn; `ghost` is not a tool of the server.
            {"type": "mcp", "server_label": "named", "server_url": users.url,
             "allowed_tools": ["create_user", "get_user", "delete_user"],
             "require_approval": "always",
             "tool_configs": {
                 "*": {"require_approval": "never", "description": "star"},
                 "create_user": {"description": "exact"},
                 "delete_user": {"require_approval": "always"},
                 "ghost": {"require_approval": "always", "defer_loading": true}
             }},
            // No `*`: the server-wide setting for the rest.
            {"type": "mcp", "server_label": "wide", "command": [example_bin("calc")],
             "require_approval": "always",
             "tool_configs": {"divide": {"require_approval": "never"}}}
        ]),
    );
    let calc = ExampleHttp::start("calc", &["--mount", &file], &[]);
    for version in BOTH {
        let client = connect(&calc.url, version, Arc::new(NoHandler)).await;
        let tools = tools_when(&client, |n| {
            ["ro__", "both__", "named__", "wide__"]
                .iter()
                .all(|p| n.iter().any(|n| n.starts_with(p)))
        })
        .await;
        assert_eq!(
            names(&tools),
            [
                "both__get_user",
                "divide",
                "multiply",
                "named__create_user",
                "named__delete_user",
                "named__get_user",
                "ro__get_user",
                "wide__divide",
                "wide__multiply",
            ],
            "{version:?}"
        );
        let describe = |name: &str| {
            tools.iter().find(|t| t["name"] == name).unwrap()["description"]
                .as_str()
                .unwrap()
                .to_owned()
        };
        assert_eq!(describe("named__create_user"), "exact");
        assert_eq!(describe("named__get_user"), "star");
        assert_eq!(describe("named__delete_user"), "star");

        // What is not allowed is not callable either.
        let hidden = client
            .call("ro__delete_user", json!({"userId": "usr_1"}))
            .await;
        assert!(
            matches!(&hidden, Err(ClientError::Rpc(_))) || hidden.as_ref().is_ok_and(is_error),
            "{hidden:?}"
        );

        // `*`'s "never" beats the server-wide "always": no question (this client has none).
        let made = client
            .call(
                "named__create_user",
                json!({"email": "c@example.com", "name": "Cee"}),
            )
            .await
            .unwrap();
        assert!(!is_error(&made), "{made}");
        // The exact "always" beats `*`'s "never".
        let deleting = client
            .call("named__delete_user", json!({"userId": "usr_1"}))
            .await;
        assert_approval_unavailable(&deleting);
        // No `*`: the exact "never" for divide, the server-wide "always" for multiply.
        let divided = client
            .call("wide__divide", json!({"a": 6, "b": 3}))
            .await
            .unwrap();
        assert_eq!(text(&divided), "2", "{divided}");
        let multiplied = client.call("wide__multiply", json!({"a": 6, "b": 3})).await;
        assert_approval_unavailable(&multiplied);
        client.close().await;
    }
}

// ---------------------------------------------------------------------------------------------
// Headers, tokens and the connection store
// ---------------------------------------------------------------------------------------------

/// What one echo server saw: the `Authorization` and `X-Tenant` of each request.
type Seen = Arc<Mutex<Vec<(Option<String>, Option<String>)>>>;

/// A small MCP server (2025-11-25 over Streamable HTTP, JSON answers) with one tool, `whoami`,
/// which answers the `Authorization` and `X-Tenant` headers of its own request; every request's
/// are kept.
async fn echo_server() -> (String, Seen) {
    use axum::http::{HeaderMap, StatusCode, header};
    use axum::response::IntoResponse;

    let seen: Seen = Arc::default();
    let log = seen.clone();
    let handle = move |headers: HeaderMap, body: String| {
        let log = log.clone();
        async move {
            let get = |name: &str| {
                headers
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(String::from)
            };
            let (auth, tenant) = (get("authorization"), get("x-tenant"));
            log.lock().unwrap().push((auth.clone(), tenant.clone()));
            let message: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            let id = message["id"].clone();
            if id.is_null() {
                return StatusCode::ACCEPTED.into_response();
            }
            let outcome = match message["method"].as_str().unwrap_or_default() {
                "initialize" => Ok(json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "echo", "version": "1.0.0"}
                })),
                "tools/list" => Ok(json!({"tools": [{
                    "name": "whoami",
                    "description": "The credentials of this request",
                    "inputSchema": {"type": "object"}
                }]})),
                "tools/call" => Ok(json!({"content": [{
                    "type": "text",
                    "text": json!({"authorization": auth, "tenant": tenant}).to_string()
                }]})),
                other => Err(json!({"code": -32601, "message": format!("no method {other}")})),
            };
            let reply = match outcome {
                Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
            };
            (
                [
                    (header::CONTENT_TYPE, "application/json"),
                    (header::HeaderName::from_static("mcp-session-id"), "echo-1"),
                ],
                reply.to_string(),
            )
                .into_response()
        }
    };
    (mcp_tool_tests::serve_mcp(handle).await, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headers_and_tokens_reach_their_own_server_and_no_other() {
    let (a_url, a_seen) = echo_server().await;
    let (b_url, b_seen) = echo_server().await;
    // `users` refuses any request without its token.
    let users = ExampleHttp::start(
        "users",
        &[],
        &[(
            mcp_tool::env::BEARER_TOKENS,
            "gateway[users:read users:write]:tok-users",
        )],
    );
    let refused = McpClient::connect(Connect::http(&users.url)).await;
    assert!(refused.is_err(), "users took a request without its token");

    let dir = TempDir::new("gateway-credentials");
    // The connection store: b's credentials and the users connector's URL and token.
    let store = dir.path().join("connections.json");
    std::fs::write(
        &store,
        json!({
            "conn-b": {"authorization": "tok-b", "headers": {"X-Tenant": "b"}},
            "connector_users": {"server_url": users.url, "authorization": "tok-users"}
        })
        .to_string(),
    )
    .unwrap();
    let file = mount_file(
        &dir,
        &json!([
            {"type": "mcp", "server_label": "a", "server_url": a_url,
             "headers": {"X-Tenant": "a"}, "authorization": "tok-a"},
            {"type": "mcp", "server_label": "b", "server_url": b_url,
             "project_connection_id": "conn-b"},
            {"type": "mcp", "server_label": "users", "connector_id": "connector_users"}
        ]),
    );
    let store_env = store.to_string_lossy().into_owned();
    let gw = ExampleHttp::start(
        "calc",
        &["--mount", &file],
        &[("MCP_TOOL_CONNECTIONS", &store_env)],
    );
    for version in BOTH {
        let client = connect(&gw.url, version, Arc::new(NoHandler)).await;
        tools_when(&client, |n| {
            ["a__whoami", "b__whoami", "users__get_user"]
                .iter()
                .all(|t| n.iter().any(|n| n == t))
        })
        .await;
        let a = client.call("a__whoami", json!({})).await.unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&text(&a)).unwrap(),
            json!({"authorization": "Bearer tok-a", "tenant": "a"})
        );
        let b = client.call("b__whoami", json!({})).await.unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&text(&b)).unwrap(),
            json!({"authorization": "Bearer tok-b", "tenant": "b"})
        );
        let u = client
            .call("users__get_user", json!({"userId": "usr_none"}))
            .await
            .unwrap();
        assert!(text(&u).contains("NOT_FOUND"), "{u}");
        client.close().await;
    }
    // Every request each echo server saw carried its own credentials, and only those.
    for (seen, token, tenant) in [
        (&a_seen, "Bearer tok-a", "a"),
        (&b_seen, "Bearer tok-b", "b"),
    ] {
        let seen = seen.lock().unwrap().clone();
        assert!(seen.len() >= 4, "{seen:?}");
        for (auth, t) in seen {
            assert_eq!(auth.as_deref(), Some(token));
            assert_eq!(t.as_deref(), Some(tenant));
        }
    }
}

#[test]
fn a_missing_connection_or_connector_is_named_at_start() {
    let dir = TempDir::new("gateway-missing");
    let store = dir.path().join("connections.json");
    std::fs::write(&store, json!({"other": {"authorization": "x"}}).to_string()).unwrap();
    for (mount, named) in [
        (
            json!({"type": "mcp", "server_label": "x", "server_url": "http://127.0.0.1:9/mcp",
                   "project_connection_id": "conn-missing"}),
            "conn-missing",
        ),
        (
            json!({"type": "mcp", "server_label": "y", "connector_id": "connector_dropbox"}),
            "connector_dropbox",
        ),
    ] {
        let file = mount_file(&dir, &json!([mount]));
        let mut child = Command::new(example_bin("calc"))
            .args(["--mount", &file])
            .env("MCP_TOOL_CONNECTIONS", &store)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (status, out, err) =
            wait_bounded(&mut child, Duration::from_secs(10)).expect("calc exits");
        assert!(!status.success());
        assert!(out.is_empty(), "{out}");
        assert!(
            err.contains(named) && err.contains("connection store"),
            "{err}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// A remote that goes away, and one down at start
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_remote_fails_retryably_then_works_again() {
    let mut first = ExampleHttp::start_at("users", "127.0.0.1:0", &[], &[]);
    let addr = first.addr;
    let url = first.url.clone();
    let gw = gateway(&url);
    for version in BOTH {
        let client = connect(&gw.url, version, Arc::new(NoHandler)).await;
        tools_when(&client, |n| n.iter().any(|n| n == "users__get_user")).await;
        let found = client
            .call("users__get_user", json!({"userId": "usr_x"}))
            .await
            .unwrap();
        assert!(text(&found).contains("NOT_FOUND"), "{found}");

        let _ = first.child.kill();
        let _ = first.child.wait();
        let down = client
            .call("users__get_user", json!({"userId": "usr_x"}))
            .await
            .unwrap();
        assert!(is_error(&down), "{down}");
        assert!(
            text(&down).contains("REMOTE_UNAVAILABLE") && text(&down).contains("(retryable)"),
            "{down}"
        );
        assert_eq!(
            down["_meta"]["dev.mcp-tool/error"]["retryable"], true,
            "{down}"
        );
        // Local tools keep working.
        let status = client.call("gateway_status", json!({})).await.unwrap();
        assert!(!is_error(&status), "{status}");

        first = ExampleHttp::start_at("users", &addr.to_string(), &[], &[]);
        let deadline = Instant::now() + APPEAR;
        loop {
            let r = client
                .call("users__get_user", json!({"userId": "usr_x"}))
                .await
                .unwrap();
            if text(&r).contains("NOT_FOUND") {
                break;
            }
            assert!(
                text(&r).contains("REMOTE_UNAVAILABLE") || text(&r).contains("unknown"),
                "{r}"
            );
            assert!(Instant::now() < deadline, "never reconnected: {r}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        client.close().await;
    }
    drop(first);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_list_holds_the_mounts_over_both_transports_and_a_silent_mount_holds_it_only_until_the_bound()
 {
    let users = ExampleHttp::users();
    // `users` behind a proxy that holds each new connection for a second: a mount that is
    // reachable, but lists its tools only after the gateway already serves.
    let slow = slow_proxy(&users.url, Duration::from_secs(1)).await;
    // A remote that takes connections and never answers: its first sync never comes.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://{}/mcp", silent.local_addr().unwrap());
    let dir = TempDir::new("gateway-wait");
    let file = mount_file(
        &dir,
        &json!([{"type": "mcp", "server_label": "silent", "server_url": silent_url}]),
    );
    for version in BOTH {
        // A fresh gateway each time: the very first list, sent as soon as it serves, holds
        // the slow mount's tools (no waiting for list_changed)…
        let gw = ExampleHttp::start(
            "gateway",
            &["--users", &slow, "--mount", &file],
            &[(mcp_tool::env::MOUNT_WAIT, "4s")],
        );
        let client = McpClient::connect(
            Connect::http(&gw.url)
                .protocol_version(version)
                .timeout(Duration::from_secs(15)),
        )
        .await
        .expect("connect");
        // …and the silent one holds it up only until the 4 s bound: without the bound the
        // list would wait for that mount's own time limit (60 s), past this client's 15 s.
        let listed = names(&client.list_tools().await.expect("the first tools/list"));
        assert!(
            listed.iter().any(|n| n == "users__get_user"),
            "{version:?}: {listed:?}"
        );
        assert!(
            !listed.iter().any(|n| n.starts_with("silent__")),
            "{version:?}: {listed:?}"
        );
        client.close().await;
        // The same over stdio: the gateway reads the list's line, sees its method, waits.
        let client = McpClient::connect(
            Connect::stdio(
                example_bin("gateway"),
                ["--users", slow.as_str(), "--mount", file.as_str()],
            )
            .env(mcp_tool::env::MOUNT_WAIT, "4s")
            .protocol_version(version)
            .timeout(Duration::from_secs(15)),
        )
        .await
        .expect("start the gateway over stdio");
        let listed = names(&client.list_tools().await.expect("the first tools/list"));
        assert!(
            listed.iter().any(|n| n == "users__get_user"),
            "stdio, {version:?}: {listed:?}"
        );
        client.close().await;
    }
    drop(silent);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_down_at_start_is_mounted_when_it_comes_up() {
    // A port nobody listens on (yet).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let gw = gateway(&url);
    for version in BOTH {
        let client = connect(&gw.url, version, Arc::new(NoHandler)).await;
        // The gateway serves its own tools meanwhile.
        let status = client.call("gateway_status", json!({})).await.unwrap();
        assert!(!is_error(&status), "{status}");
        client.close().await;
    }
    let users = ExampleHttp::start_at("users", &format!("127.0.0.1:{port}"), &[], &[]);
    for version in BOTH {
        let client = connect(&gw.url, version, Arc::new(NoHandler)).await;
        tools_when(&client, |n| n.iter().any(|n| n == "users__get_user")).await;
        let r = client
            .call("users__get_user", json!({"userId": "usr_x"}))
            .await
            .unwrap();
        assert!(text(&r).contains("NOT_FOUND"), "{r}");
        client.close().await;
    }
    drop(users);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_session_hears_list_changed_when_a_remote_comes_up() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let gw = gateway(&format!("http://127.0.0.1:{port}/mcp"));
    let client = connect(&gw.url, VersionChoice::V2025_11_25, Arc::new(NoHandler)).await;
    let before = names(&client.list_tools().await.unwrap());
    assert!(
        !before.iter().any(|n| n.starts_with("users__")),
        "{before:?}"
    );
    let users = ExampleHttp::start_at("users", &format!("127.0.0.1:{port}"), &[], &[]);
    let heard = tokio::time::timeout(APPEAR, client.tools_changed()).await;
    assert_eq!(heard, Ok(true));
    tools_when(&client, |n| n.iter().any(|n| n == "users__get_user")).await;
    client.close().await;
    drop(users);
}

// ---------------------------------------------------------------------------------------------
// Tool search over deferred mounted tools
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_search_finds_and_reveals_a_deferred_mounted_tool() {
    let users = ExampleHttp::users();
    // Authenticated: in 2026-07-28 what a search reveals belongs to the client's principal.
    let gw = ExampleHttp::start(
        "gateway",
        &["--users", &users.url, "--calc", example_bin("calc")],
        &[(mcp_tool::env::BEARER_TOKENS, "alice:tok-alice,bob:tok-bob")],
    );
    for (version, token) in [
        (VersionChoice::V2025_11_25, "tok-alice"),
        (VersionChoice::V2026_07_28, "tok-bob"),
    ] {
        let client = McpClient::connect(
            Connect::http(&gw.url)
                .protocol_version(version)
                .bearer(token)
                .timeout(Duration::from_secs(20)),
        )
        .await
        .expect("connect");
        // The first list holds both mounts' first sync (the gateway waits for it).
        let listed = names(&client.list_tools().await.expect("tools/list"));
        assert!(
            listed.iter().any(|n| n.starts_with("users__")),
            "{listed:?}"
        );
        assert!(
            !listed.iter().any(|n| n.starts_with("calc__")),
            "{listed:?}"
        );
        // Deferred and never found: not listed (callable by name: deferring saves the list,
        // it guards nothing). calc has had its first sync before the first list was
        // answered, so the search tool is there from the start and finds it.
        let found = client
            .call(
                "search_tools",
                json!({"query": "multiply two numbers", "limit": 1}),
            )
            .await
            .expect("search_tools");
        let found = found["structuredContent"]["tools"].clone();
        assert_eq!(found[0]["name"], "calc__multiply", "{found}");
        assert_eq!(found[0]["inputSchema"]["required"], json!(["a", "b"]));
        assert!(
            found[0]["description"]
                .as_str()
                .unwrap()
                .contains("Arithmetic"),
            "{found}"
        );
        let now = names(&client.list_tools().await.unwrap());
        assert!(
            now.iter().any(|n| n == "calc__multiply"),
            "{version:?}: {now:?}"
        );
        assert!(!now.iter().any(|n| n == "calc__divide"), "{now:?}");
        let product = client
            .call("calc__multiply", json!({"a": 6, "b": 7}))
            .await
            .unwrap();
        assert_eq!(text(&product), "42", "{product}");
        client.close().await;
    }
}

// ---------------------------------------------------------------------------------------------
// A mounted server's questions, relayed to the client in both protocol versions
// ---------------------------------------------------------------------------------------------

/// A mount file of the conformance example over stdio, as `cf`.
fn conformance_mounted(dir: &TempDir) -> String {
    mount_file(
        dir,
        &json!([{"type": "mcp", "server_label": "cf",
                 "command": [example_bin("conformance")]}]),
    )
}

/// Its tool that asks two questions, one after the other.
const MULTI_ROUND: &str = "cf__test_input_required_result_multi_round";

/// The conformance example mounted over stdio as `cf`: its tools ask their client questions
/// in the middle of a call — one after another, or several at once. The gateway's client gets
/// every one, in both versions: in 2026-07-28 each question is an input request of a round;
/// the remote (speaking 2026-07-28 itself) holds nothing, and its own round travels sealed in
/// the gateway's request state, so that a round sent again goes on from there again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_servers_questions_reach_the_client_in_both_versions() {
    let dir = TempDir::new("gateway-relay");
    let file = conformance_mounted(&dir);
    let gw = ExampleHttp::start("calc", &["--mount", &file], &[]);
    for version in BOTH {
        let user = Arc::new(User::default());
        let client = connect(&gw.url, version, user.clone()).await;
        tools_when(&client, |n| n.iter().any(|n| n == MULTI_ROUND)).await;

        // Two questions, the second asked only once the first is answered.
        let steps = client.call(MULTI_ROUND, json!({})).await.unwrap();
        assert_eq!(text(&steps), "Ada likes teal", "{steps}");
        let asked: Vec<String> = user
            .asked
            .lock()
            .unwrap()
            .drain(..)
            .map(|(m, p)| format!("{m}: {}", p["message"].as_str().unwrap_or_default()))
            .collect();
        assert_eq!(
            asked,
            [
                "elicitation/create: The `cf` server asks: Step 1: What is your name?",
                "elicitation/create: The `cf` server asks: Step 2: What is your favorite color?"
            ],
            "{version:?}"
        );

        // Three questions at once: a form, the model, the roots.
        let three = client
            .call("cf__test_input_required_result_multiple_inputs", json!({}))
            .await
            .unwrap();
        assert_eq!(text(&three), "Hello Ada (1 roots)", "{three}");
        let mut methods: Vec<String> = user
            .asked
            .lock()
            .unwrap()
            .drain(..)
            .map(|(m, _)| m)
            .collect();
        methods.sort();
        assert_eq!(
            methods,
            ["elicitation/create", "roots/list", "sampling/createMessage"],
            "{version:?}"
        );
        client.close().await;
    }

    // A 2026-07-28 retry of a round, sent twice: the first drives the held call to its end;
    // the second finds it gone.
    let http = mcp_tool_tests::http_client();
    let post = |body: Value| {
        let http = http.clone();
        let url = gw.url.clone();
        async move {
            let response = http
                .post(&url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "cf__test_input_required_result_multi_round")
                .json(&body)
                .send()
                .await
                .unwrap();
            let text = response.text().await.unwrap();
            let line = text
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .rfind(|l| !l.is_empty())
                .map_or(text.clone(), String::from);
            serde_json::from_str::<Value>(&line).unwrap_or_else(|e| panic!("{e}: {text}"))
        }
    };
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
    });
    let call = |extra: Value| {
        let mut params = json!({
            "name": "cf__test_input_required_result_multi_round",
            "arguments": {},
            "_meta": meta.clone()
        });
        for (k, v) in extra.as_object().unwrap() {
            params[k] = v.clone();
        }
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    };
    let first = post(call(json!({}))).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let (key, _) = result["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert_eq!(key, "cf/1", "{first}");
    let state = result["requestState"].clone();
    let answer = json!({"action": "accept", "content": {"name": "Ada"}});
    let second = post(call(json!({
        "inputResponses": {"cf/1": answer.clone()},
        "requestState": state.clone()
    })))
    .await;
    assert_eq!(second["result"]["resultType"], "input_required", "{second}");
    assert!(
        second["result"]["inputRequests"]["cf/2"]["params"]["message"]
            .as_str()
            .unwrap()
            .contains("Step 2"),
        "{second}"
    );
    let third = post(call(json!({
        "inputResponses": {"cf/2": {"action": "accept", "content": {"color": "red"}}},
        "requestState": second["result"]["requestState"].clone()
    })))
    .await;
    assert_eq!(text(&third["result"]), "Ada likes red", "{third}");
    // The first round's state again: the remote speaks 2026-07-28, so nothing was held —
    // its own round travels in the gateway's state, and goes on from there again.
    let again = post(call(json!({
        "inputResponses": {"cf/1": answer},
        "requestState": state
    })))
    .await;
    assert_eq!(again["result"]["resultType"], "input_required", "{again}");
    assert!(
        again["result"]["inputRequests"]["cf/2"].is_object(),
        "{again}"
    );
    // What the gateway keeps travels only in the sealed state: what the client names is not
    // read.
    let forged = post(call(json!({
        "inputResponses": {
            "mcp-tool.memo/relay": {"at": "x", "id": "00000000000000000000000000000000"},
            "mcp-tool.memo/remote": {"asked": 9, "open": []}
        }
    })))
    .await;
    assert_eq!(forged["result"]["resultType"], "input_required", "{forged}");
}

/// Answers like [`User`], after a pause.
struct Slow(User, Duration);

impl ClientHandler for Slow {
    fn capabilities(&self) -> Value {
        self.0.capabilities()
    }

    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> ClientFuture<'a, Result<Value, RpcError>> {
        Box::pin(async move {
            tokio::time::sleep(self.1).await;
            self.0.request(method, params).await
        })
    }
}

/// The client's time limit is the server's: it does not run while the client answers a
/// question of the server about the request (a user taking their time with a relayed form),
/// and still ends a call whose server is just slow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_time_limit_waits_while_the_client_answers_a_question() {
    // Long enough for the server to ask its question on a busy machine; the user takes twice
    // as long to answer.
    let limit = Duration::from_secs(2);
    let client = McpClient::connect_with(
        Connect::stdio(example_bin("conformance"), Vec::<String>::new())
            .protocol_version(VersionChoice::V2025_11_25)
            .timeout(limit),
        Arc::new(Slow(User::default(), limit * 2)),
    )
    .await
    .expect("start the conformance example");
    let answered = client
        .call("test_streaming_elicitation", json!({}))
        .await
        .expect("answered after twice the limit");
    assert!(text(&answered).contains("Ada"), "{answered}");
    client.close().await;

    // A sales report at 2 s a month takes 24 s; the limit leaves the process time to start
    // on a loaded machine (300 ms did not, at times).
    let limit = Duration::from_secs(3);
    let users = McpClient::connect_with(
        Connect::stdio(example_bin("reports"), Vec::<String>::new())
            .protocol_version(VersionChoice::V2025_11_25)
            .timeout(limit),
        Arc::new(NoHandler),
    )
    .await
    .expect("start the reports example");
    let slow = users
        .call("sales_report", json!({"year": 2024, "pace_ms": 2000}))
        .await;
    assert_eq!(slow, Err(ClientError::TimedOut(limit)), "{slow:?}");
    users.close().await;
}

/// The same relay when the gateway itself is served over stdio (each round a line, the
/// held call between them), to clients of both protocol versions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_over_stdio_relays_its_mounted_servers_questions_in_both_versions() {
    let dir = TempDir::new("gateway-relay-stdio");
    let file = conformance_mounted(&dir);
    for version in BOTH {
        let user = Arc::new(User::default());
        let client = McpClient::connect_with(
            Connect::stdio(example_bin("calc"), ["--mount", file.as_str()])
                .protocol_version(version)
                .timeout(Duration::from_secs(20)),
            user.clone(),
        )
        .await
        .expect("start calc with a mount");
        tools_when(&client, |n| n.iter().any(|n| n == MULTI_ROUND)).await;
        let steps = client.call(MULTI_ROUND, json!({})).await.unwrap();
        assert_eq!(text(&steps), "Ada likes teal", "{version:?}: {steps}");
        assert_eq!(
            user.methods(),
            ["elicitation/create", "elicitation/create"],
            "{version:?}"
        );
        client.close().await;
    }
}

// ---------------------------------------------------------------------------------------------
// A held call that no round comes for expires
// ---------------------------------------------------------------------------------------------

/// A 2025-11-25 server (a session; SSE answers) whose one tool, `ask`, asks its client a
/// question and then waits for ever; the `notifications/cancelled` it gets are kept, and the
/// calls it gets counted.
async fn asking_server() -> (
    String,
    Arc<Mutex<Vec<Value>>>,
    Arc<std::sync::atomic::AtomicUsize>,
) {
    use axum::body::Body;
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;
    use futures_util::StreamExt;

    let cancelled: Arc<Mutex<Vec<Value>>> = Arc::default();
    let calls: Arc<std::sync::atomic::AtomicUsize> = Arc::default();
    let seen = cancelled.clone();
    let counted = calls.clone();
    let handle = move |body: String| {
        let seen = seen.clone();
        let counted = counted.clone();
        async move {
            let message: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            let method = message["method"].as_str().unwrap_or_default().to_owned();
            let id = message["id"].clone();
            let json = |result: Value| {
                (
                    [
                        (header::CONTENT_TYPE, "application/json"),
                        (
                            header::HeaderName::from_static("mcp-session-id"),
                            "asking-1",
                        ),
                    ],
                    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
                )
                    .into_response()
            };
            match method.as_str() {
                "notifications/cancelled" => {
                    seen.lock().unwrap().push(message["params"].clone());
                    StatusCode::ACCEPTED.into_response()
                }
                _ if id.is_null() => StatusCode::ACCEPTED.into_response(),
                "initialize" => json(json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "asking", "version": "1.0.0"}
                })),
                "tools/list" => json(json!({"tools": [{
                    "name": "ask",
                    "description": "Asks a name, then waits",
                    "inputSchema": {"type": "object"}
                }]})),
                "tools/call" => {
                    counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let question = json!({
                        "jsonrpc": "2.0", "id": "q1", "method": "elicitation/create",
                        "params": {"message": "What is your name?", "requestedSchema": {
                            "type": "object",
                            "properties": {"name": {"type": "string"}},
                            "required": ["name"]
                        }}
                    });
                    let first = format!("data: {question}\n\n");
                    let events =
                        futures_util::stream::once(async move { Ok::<_, std::io::Error>(first) })
                            .chain(futures_util::stream::pending());
                    (
                        [(header::CONTENT_TYPE, "text/event-stream")],
                        Body::from_stream(events),
                    )
                        .into_response()
                }
                "server/discover" => (
                    [(header::CONTENT_TYPE, "application/json")],
                    json!({"jsonrpc": "2.0", "id": id,
                           "error": {"code": -32601, "message": "no server/discover"}})
                    .to_string(),
                )
                    .into_response(),
                _ => json(json!({})),
            }
        }
    };
    (mcp_tool_tests::serve_mcp(handle).await, cancelled, calls)
}

/// A gateway mounting the server at `remote` as `r` (with whatever else `configure` sets),
/// served over HTTP; its URL.
async fn gateway_mounting(
    remote: String,
    configure: impl FnOnce(mcp_tool::Server) -> mcp_tool::Server,
) -> String {
    let mount = mcp_tool::gateway::McpTool {
        server_url: Some(remote),
        ..mcp_tool::gateway::McpTool::default()
    };
    gateway_with(mount, configure).await
}

/// A gateway mounting `mount` as `r`, served over HTTP; its URL.
async fn gateway_with(
    mount: mcp_tool::gateway::McpTool,
    configure: impl FnOnce(mcp_tool::Server) -> mcp_tool::Server,
) -> String {
    let gateway = configure(mcp_tool::Server::new("gw", "0").without_registry())
        .mount(mcp_tool::gateway::McpTool {
            server_label: "r".into(),
            ..mount
        })
        .build()
        .expect("the gateway builds");
    serve_http(gateway).await
}

/// Serves `server` over HTTP on a loopback port (its accept loop telling each request its
/// client's address); its URL.
async fn serve_http(server: mcp_tool::server::ServerHandle) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        server
            .serve_http(listener, mcp_tool::http::HttpConfig::default())
            .await
    });
    url
}

/// A user who never answers.
struct Silent;

impl ClientHandler for Silent {
    fn capabilities(&self) -> Value {
        json!({ "elicitation": { "form": {} } })
    }

    fn request<'a>(
        &'a self,
        _method: &'a str,
        _params: Value,
    ) -> ClientFuture<'a, Result<Value, RpcError>> {
        Box::pin(std::future::pending())
    }
}

/// In 2026-07-28, a remote call held for its client's answer is cancelled at the remote once
/// no round has come for it within the request state's lifetime (2 s here), and not before:
/// the remote gets `notifications/cancelled` for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_call_no_round_comes_for_is_cancelled_at_the_remote() {
    let (remote, cancelled, _) = asking_server().await;
    let url = gateway_mounting(remote, |s| s.request_state_ttl(Duration::from_secs(2))).await;

    let client = connect(&url, VersionChoice::V2026_07_28, Arc::new(Silent)).await;
    tools_when(&client, |n| n.iter().any(|n| n == "r__ask")).await;
    // The call gets an input-required round, which the silent user never answers.
    let asked = Instant::now();
    let call = tokio::spawn(async move { client.call("r__ask", json!({})).await });
    // Held while the state is valid.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(cancelled.lock().unwrap().is_empty(), "cancelled while held");
    let deadline = Instant::now() + Duration::from_secs(20);
    while cancelled.lock().unwrap().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let after = asked.elapsed();
    let cancelled = cancelled.lock().unwrap().clone();
    assert_eq!(cancelled.len(), 1, "{cancelled:?}");
    assert!(after >= Duration::from_secs(2), "cancelled after {after:?}");
    assert!(
        cancelled[0]["requestId"].is_number() || cancelled[0]["requestId"].is_string(),
        "{cancelled:?}"
    );
    assert!(
        !call.is_finished(),
        "the user is still (silently) answering"
    );
    call.abort();
}

// ---------------------------------------------------------------------------------------------
// Totals: what one mounted server may list, the gateway's own pages, and re-lists
// ---------------------------------------------------------------------------------------------

/// A 2025-11-25 server that lists `count` tools named `{prefix}{i}`, `per_page` a page, each
/// with a description of `description` bytes; how many `tools/list` requests it received.
async fn lister(
    prefix: &'static str,
    count: usize,
    per_page: usize,
    description: usize,
) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let lists = Arc::new(AtomicUsize::new(0));
    let seen = lists.clone();
    let text = "x".repeat(description);
    let handle = move |body: String| {
        let (seen, text) = (seen.clone(), text.clone());
        async move {
            let message: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            let id = message["id"].clone();
            if id.is_null() {
                return StatusCode::ACCEPTED.into_response();
            }
            let result = match message["method"].as_str().unwrap_or_default() {
                "initialize" => json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "lister", "version": "1.0.0"}
                }),
                "tools/list" => {
                    seen.fetch_add(1, Ordering::SeqCst);
                    let start: usize = message["params"]["cursor"]
                        .as_str()
                        .and_then(|c| c.parse().ok())
                        .unwrap_or(0);
                    let end = (start + per_page).min(count);
                    let tools: Vec<Value> = (start..end)
                        .map(|i| {
                            json!({
                                "name": format!("{prefix}{i}"),
                                "description": text,
                                "inputSchema": {"type": "object"}
                            })
                        })
                        .collect();
                    let mut page = json!({ "tools": tools });
                    if end < count {
                        page["nextCursor"] = json!(end.to_string());
                    }
                    page
                }
                _ => json!({}),
            };
            (
                [
                    (header::CONTENT_TYPE, "application/json"),
                    (
                        header::HeaderName::from_static("mcp-session-id"),
                        "lister-1",
                    ),
                ],
                json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
            )
                .into_response()
        }
    };
    (mcp_tool_tests::serve_mcp(handle).await, lists)
}

/// A mounted server may list so many tools, and so many bytes of them: one that lists more
/// is not read further and none of its tools is mounted (before, a gateway took 6 GB from a
/// remote listing 12 pages of 50 MiB). The gateway's own pages are bounded in bytes too:
/// big tools come a few to a page (before, a page held 1,000 of whatever size).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_servers_list_is_bounded_and_the_gateways_pages_are_bounded_in_bytes() {
    use mcp_tool::gateway::McpTool;
    use mcp_tool::server::Limits;

    // 30 tools over pages of 10: more than the 20 a mount may list.
    let (many, many_lists) = lister("m", 30, 10, 10).await;
    // 3 tools of 800 KiB: more than the 2 MiB a mount may list.
    let (fat, _) = lister("f", 3, 1, 800 << 10).await;
    // 4 tools of 300 KiB: within both bounds, but more than a 512 KiB page holds.
    let (big, _) = lister("b", 4, 4, 300 << 10).await;
    let mount = |label: &str, url: String| McpTool {
        server_label: label.into(),
        server_url: Some(url),
        ..McpTool::default()
    };
    let gateway = mcp_tool::Server::new("gw", "0")
        .without_registry()
        .limits(
            Limits::default()
                .max_mount_list(20, 2 << 20)
                .max_page_bytes(512 << 10),
        )
        .mount(mount("many", many))
        .mount(mount("fat", fat))
        .mount(mount("big", big))
        .build()
        .expect("the gateway builds");
    let url = serve_http(gateway).await;

    for version in BOTH {
        let client = connect(&url, version, Arc::new(NoHandler)).await;
        let tools = tools_when(&client, |n| {
            n.iter().filter(|n| n.starts_with("big__")).count() == 4
        })
        .await;
        let listed = names(&tools);
        assert!(
            !listed
                .iter()
                .any(|n| n.starts_with("many__") || n.starts_with("fat__")),
            "{version:?}: {listed:?}"
        );
        // Page by page: at most about 512 KiB each, so one 300 KiB tool a page.
        let mut cursor: Option<String> = None;
        let mut pages = 0;
        loop {
            let params = cursor
                .as_ref()
                .map_or(json!({}), |c| json!({ "cursor": c }));
            let page = client.request("tools/list", params).await.expect("a page");
            let size = page.to_string().len();
            assert!(
                size <= (512 << 10) + 4096,
                "{version:?}: a page of {size} bytes"
            );
            pages += 1;
            match page["nextCursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
        }
        assert!(pages >= 4, "{version:?}: {pages} pages");
    }
    // The long list was not read to its end: the page that passed the bound was the last.
    let asked = many_lists.load(std::sync::atomic::Ordering::SeqCst);
    assert!(asked >= 3, "{asked} pages asked for");
}

/// A mounted server that announces `list_changed` again and again with the same list is
/// listed less and less often (before, each announcement cost a whole re-list: half a core
/// for a 20,000-tool list announced every second).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchanged_list_announced_again_and_again_is_listed_rarely() {
    use mcp_tool::http::HttpConfig;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let hello = mcp_tool::dynamic::DynamicTool::new(
        "hello",
        "Says hello.",
        |_: mcp_tool::dynamic::DynamicArgs| async move { "hello" },
    );
    let remote = mcp_tool::Server::new("remote", "0")
        .without_registry()
        .dynamic_tool(hello)
        .build()
        .expect("the remote builds");
    // Counts the remote's POSTs that list tools.
    let lists = Arc::new(AtomicUsize::new(0));
    let seen = lists.clone();
    let router =
        remote
            .clone()
            .into_router(HttpConfig::default())
            .layer(axum::middleware::from_fn(
                move |request: axum::extract::Request, next: axum::middleware::Next| {
                    let seen = seen.clone();
                    async move {
                        let (parts, body) = request.into_parts();
                        let bytes = axum::body::to_bytes(body, 1 << 20)
                            .await
                            .unwrap_or_default();
                        if std::str::from_utf8(&bytes).is_ok_and(|b| b.contains("\"tools/list\"")) {
                            seen.fetch_add(1, Ordering::SeqCst);
                        }
                        next.run(axum::extract::Request::from_parts(
                            parts,
                            axum::body::Body::from(bytes),
                        ))
                        .await
                    }
                },
            ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let remote_url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });

    let url = gateway_mounting(remote_url, |s| s).await;
    let client = connect(&url, VersionChoice::V2026_07_28, Arc::new(NoHandler)).await;
    tools_when(&client, |n| n.iter().any(|n| n == "r__hello")).await;

    // The remote announces a change every 50 ms for 3 s, its list the same.
    let before = lists.load(Ordering::SeqCst);
    let announcing = tokio::spawn({
        let remote = remote.clone();
        async move {
            loop {
                remote.notify_tools_changed();
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    });
    tokio::time::sleep(Duration::from_secs(3)).await;
    announcing.abort();
    let relists = lists.load(Ordering::SeqCst) - before;
    assert!(
        (1..=8).contains(&relists),
        "60 announcements in 3 s gave {relists} re-lists"
    );
    // The gateway's list is whole all the same.
    let tools = client.list_tools().await.expect("the gateway lists");
    assert!(names(&tools).contains(&"r__hello".to_owned()));
}

/// The calls a mount holds across input rounds are shared fairly: one client may hold so
/// many, and the next client's call is still held (before, one client filled all 1,024 and
/// everyone got `GATEWAY_BUSY` for up to 10 minutes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_holds_at_most_its_share_of_a_mounts_held_calls() {
    let (remote, _, _) = asking_server().await;
    let url = gateway_mounting(remote, |s| s).await;
    let client = connect(&url, VersionChoice::V2026_07_28, Arc::new(Silent)).await;
    tools_when(&client, |n| n.iter().any(|n| n == "r__ask")).await;

    // Calls `r__ask` once as 2026-07-28 from `ip`: the result.
    let call = |ip: [u8; 4], n: usize| {
        let url = url.clone();
        async move {
            mcp_tool_tests::install_crypto_provider();
            let http = reqwest::Client::builder()
                .local_address(std::net::IpAddr::from(ip))
                .build()
                .unwrap();
            let body = json!({
                "jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {
                    "name": "r__ask", "arguments": {},
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": { "elicitation": { "form": {} } }
                    }
                }
            });
            let reply = http
                .post(&url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "r__ask")
                .body(body.to_string())
                .send()
                .await
                .expect("an answer")
                .text()
                .await
                .expect("its body");
            let json = reply
                .lines()
                .find_map(|l| {
                    l.strip_prefix("data: ")
                        .or(Some(l))
                        .and_then(|l| serde_json::from_str::<Value>(l).ok())
                        .filter(|v| v.get("id").is_some())
                })
                .unwrap_or_else(|| panic!("no answer in {reply}"));
            json["result"].clone()
        }
    };
    for n in 0..64 {
        let held = call([127, 0, 0, 1], n).await;
        assert_eq!(held["resultType"], "input_required", "call {n}: {held}");
    }
    let refused = call([127, 0, 0, 1], 64).await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        refused
            .to_string()
            .contains("this client has 64 calls to the `r` server waiting"),
        "{refused}"
    );
    let other = call([127, 0, 0, 2], 65).await;
    assert_eq!(
        other["resultType"], "input_required",
        "another client's call is held: {other}"
    );
}

/// Calls `tool` once as 2026-07-28 from `ip`: the result.
async fn call_from(url: &str, tool: &str, arguments: &Value, ip: [u8; 4], n: usize) -> Value {
    mcp_tool_tests::install_crypto_provider();
    let http = reqwest::Client::builder()
        .local_address(std::net::IpAddr::from(ip))
        .build()
        .unwrap();
    let body = json!({
        "jsonrpc": "2.0", "id": n, "method": "tools/call",
        "params": {
            "name": tool, "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": { "elicitation": { "form": {} } }
            }
        }
    });
    let reply = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .body(body.to_string())
        .send()
        .await
        .expect("an answer")
        .text()
        .await
        .expect("its body");
    let json = reply
        .lines()
        .find_map(|l| {
            l.strip_prefix("data: ")
                .or(Some(l))
                .and_then(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|v| v.get("id").is_some())
        })
        .unwrap_or_else(|| panic!("no answer in {reply}"));
    json["result"].clone()
}

/// 100 calls of `tool` by one client (its address), 50 at a time, none answered; then one
/// of another client. How many of the first were held (input required) and refused
/// (`GATEWAY_BUSY`), and the other client's result.
async fn flood(url: &str, tool: &str, arguments: Value) -> (usize, usize, Value) {
    use futures_util::StreamExt;
    let results: Vec<Value> = futures_util::stream::iter(0..100)
        .map(|n| call_from(url, tool, &arguments, [127, 0, 0, 1], n))
        .buffer_unordered(50)
        .collect()
        .await;
    let held = results
        .iter()
        .filter(|r| r["resultType"] == "input_required")
        .count();
    let busy = results
        .iter()
        .filter(|r| r.to_string().contains("GATEWAY_BUSY"))
        .count();
    let other = call_from(url, tool, &arguments, [127, 0, 0, 2], 5000).await;
    (held, busy, other)
}

/// One client's many unanswered calls never take a mount from the others. A remote speaking
/// 2025-11-25 holds each call while it waits for its answer: the client's share (64) is taken
/// before the remote hears of a call, so that no more reach it. Before, the share was counted
/// only once the remote had asked: every call reached the remote (the review sent 1,100), past its own limits,
/// the connection was made again, and other clients got `REMOTE_UNAVAILABLE … not
/// connected`. A remote speaking 2026-07-28 (the conformance example over stdio) holds
/// nothing at all: every call gets its round.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_clients_unanswered_calls_leave_the_mount_to_the_others() {
    use mcp_tool::gateway::McpTool;
    use std::sync::atomic::Ordering;

    let (remote, _, reached) = asking_server().await;
    let url = gateway_mounting(remote, |s| s).await;
    let client = connect(&url, VersionChoice::V2026_07_28, Arc::new(Silent)).await;
    tools_when(&client, |n| n.iter().any(|n| n == "r__ask")).await;
    let (held, busy, other) = flood(&url, "r__ask", json!({})).await;
    assert_eq!((held, busy), (64, 36));
    assert_eq!(
        reached.load(Ordering::SeqCst),
        65,
        "the calls that reached the remote: one client's share, and the other client's"
    );
    assert_eq!(
        other["resultType"], "input_required",
        "another client's call: {other}"
    );

    let stdio = McpTool {
        command: Some(vec![example_bin("conformance").to_owned()]),
        ..McpTool::default()
    };
    let url = gateway_with(stdio, |s| s).await;
    let client = connect(&url, VersionChoice::V2026_07_28, Arc::new(Silent)).await;
    tools_when(&client, |n| n.iter().any(|n| n == "r__test_elicitation")).await;
    let (held, busy, other) = flood(&url, "r__test_elicitation", json!({"message": "Who?"})).await;
    assert_eq!((held, busy), (100, 0));
    assert_eq!(
        other["resultType"], "input_required",
        "another client's call: {other}"
    );
}
