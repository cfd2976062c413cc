//! Middleware around every request and tool call: layers of one's own (refusing, answering,
//! changing results and arguments, their order), and the four built-ins — rate limits, masked
//! errors, result budgets, audit lines — in both protocol eras, in-process (the stdio code
//! path) and over HTTP.

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mcp_tool::middleware::{
    Audit, Call, CallFuture, Flow, MaskErrors, Middleware, Next, RESULTS_URI_PREFIX,
    RETRY_AFTER_META_KEY, RateLimit, RequestInfo, ResultBudget,
};
use mcp_tool::prelude::*;
use mcp_tool::protocol::RpcError;
use mcp_tool::testing::{CallResult, Client};
use mcp_tool_tests::raw_http::Endpoint;
use serde_json::{Value, json};

/// Echo the text.
#[tool]
fn mw_echo(text: String) -> String {
    text
}

/// Panic, with a message that must not reach the model.
#[tool]
fn mw_panic() -> String {
    panic!("the vault key is hunter2");
}

/// Fail with an `io::Error` whose text must not reach the model.
#[tool]
fn mw_io() -> Result<String, std::io::Error> {
    Err(std::io::Error::new(
        std::io::ErrorKind::PermissionDenied,
        "open /srv/private/db.key: permission denied",
    ))
}

/// Fail with an `io::Error` whose text has a line break (and what would forge a log line).
#[tool]
fn mw_lines() -> Result<String, std::io::Error> {
    Err(std::io::Error::other("no row 7\nINFO forged: granted"))
}

/// Fail with an error written for the model.
#[tool]
fn mw_written() -> Result<String, ToolError> {
    Err(ToolError::new("NO_SUCH_ROW", "row 7 does not exist").suggestion("list the rows first"))
}

#[derive(Serialize, JsonSchema)]
struct Rows {
    rows: Vec<String>,
}

/// `n` rows of text.
#[tool]
fn mw_rows(n: usize) -> Json<Rows> {
    Json(Rows {
        rows: (0..n)
            .map(|i| format!("row {i:05} of the report"))
            .collect(),
    })
}

const TOOLS: [&str; 6] = [
    "mw_echo",
    "mw_panic",
    "mw_io",
    "mw_lines",
    "mw_written",
    "mw_rows",
];

fn server() -> Server {
    Server::new("mw", "0").only(TOOLS)
}

/// Both eras, in-process: a 2025-11-25 session, and 2026-07-28 requests.
async fn clients(server: impl Fn() -> Server) -> Vec<(&'static str, Client)> {
    vec![
        ("2025-11-25", Client::start(server()).await.unwrap()),
        (
            "2026-07-28",
            Client::stateless(server(), json!({})).unwrap(),
        ),
    ]
}

/// What the layers of the ordering test saw, in order.
type Log = Arc<Mutex<Vec<String>>>;

/// A layer that logs, marks results with its name, and can refuse one method.
struct Marker {
    name: &'static str,
    log: Log,
    refuse: Option<&'static str>,
}

impl Middleware for Marker {
    fn request(&self, request: &RequestInfo<'_>) -> Flow {
        self.log
            .lock()
            .unwrap()
            .push(format!("{} sees {}", self.name, request.method()));
        if self.refuse == Some(request.method()) {
            return Flow::Refuse(RpcError::new(
                -32000,
                format!("{} refuses {}", self.name, request.method()),
            ));
        }
        Flow::Continue
    }

    fn call<'a>(&'a self, call: Call<'a>, next: Next<'a>) -> CallFuture<'a> {
        Box::pin(async move {
            self.log
                .lock()
                .unwrap()
                .push(format!("{} before {}", self.name, call.tool()));
            let mut outcome = next.run(call).await;
            if let Some(result) = outcome.result_mut() {
                result
                    .content
                    .push(Content::text(format!("marked by {}", self.name)));
            }
            self.log
                .lock()
                .unwrap()
                .push(format!("{} after", self.name));
            outcome
        })
    }
}

#[tokio::test]
async fn three_layers_run_in_the_order_registered_in_both_eras() {
    for era in ["2025-11-25", "2026-07-28"] {
        let log: Log = Arc::default();
        let layer = |name| Marker {
            name,
            log: log.clone(),
            refuse: None,
        };
        let server = server()
            .middleware(layer("a"))
            .middleware(layer("b"))
            .middleware(layer("c"));
        let client = match era {
            "2025-11-25" => Client::start(server).await.unwrap(),
            _ => Client::stateless(server, json!({})).unwrap(),
        };
        log.lock().unwrap().clear();
        let result = client.call("mw_echo", json!({"text": "hi"})).await.unwrap();
        assert_eq!(
            result.text(),
            "hi\nmarked by c\nmarked by b\nmarked by a",
            "{era}"
        );
        assert_eq!(
            *log.lock().unwrap(),
            [
                "a sees tools/call",
                "b sees tools/call",
                "c sees tools/call",
                "a before mw_echo",
                "b before mw_echo",
                "c before mw_echo",
                "c after",
                "b after",
                "a after"
            ],
            "{era}"
        );
    }
}

#[tokio::test]
async fn a_layer_refuses_a_request_and_the_layers_after_it_are_not_asked() {
    let log: Log = Arc::default();
    let (l1, l2) = (log.clone(), log.clone());
    let server = move || {
        server()
            .middleware(Marker {
                name: "gate",
                log: l1.clone(),
                refuse: Some("tools/list"),
            })
            .middleware(Marker {
                name: "inner",
                log: l2.clone(),
                refuse: None,
            })
    };
    for (era, client) in clients(server).await {
        log.lock().unwrap().clear();
        let e = client.list_tools().await.unwrap_err();
        assert_eq!(e.code, -32000, "{era}");
        assert_eq!(e.message, "gate refuses tools/list", "{era}");
        assert_eq!(*log.lock().unwrap(), ["gate sees tools/list"], "{era}");
        // Other methods go through.
        let ok = client.call("mw_echo", json!({"text": "x"})).await.unwrap();
        assert!(ok.text().starts_with('x'), "{era}: {ok:?}");
    }
}

/// Answers `tools/list` itself, answers calls of `mw_io` instead of the tool, and
/// upper-cases `mw_echo`'s argument on the way in.
struct Steer;

impl Middleware for Steer {
    fn request(&self, request: &RequestInfo<'_>) -> Flow {
        match request.method() {
            "tools/list" => Flow::Answer(
                json!({ "tools": [{ "name": "from-layer", "inputSchema": { "type": "object" } }] }),
            ),
            _ => Flow::Continue,
        }
    }

    fn call<'a>(&'a self, mut call: Call<'a>, next: Next<'a>) -> CallFuture<'a> {
        if call.tool() == "mw_io" {
            return Box::pin(async { ToolResult::text("answered by the layer").into() });
        }
        if let Some(Value::String(text)) = call.arguments_mut().get_mut("text") {
            *text = text.to_uppercase();
        }
        next.run(call)
    }
}

#[tokio::test]
async fn a_layer_answers_instead_of_the_handler_and_changes_arguments() {
    for (era, client) in clients(|| server().middleware(Steer)).await {
        let answered = client.call("mw_io", json!({})).await.unwrap();
        assert_eq!(answered.text(), "answered by the layer", "{era}");
        assert!(!answered.is_error(), "{era}");
        let echoed = client
            .call("mw_echo", json!({"text": "quiet"}))
            .await
            .unwrap();
        assert_eq!(echoed.text(), "QUIET", "{era}");
        let tools = client.request("tools/list", json!({})).await.unwrap();
        assert_eq!(tools["tools"][0]["name"], "from-layer", "{era}: {tools}");
        if era == "2026-07-28" {
            // The answer has the revision's shape, as every complete result does.
            assert_eq!(tools["resultType"], "complete", "{tools}");
        }
    }
}

#[tokio::test]
async fn a_burst_over_the_rate_limit_is_refused_retryable_then_accepted_after_the_wait() {
    let limit = || server().middleware(RateLimit::parse("2/1s,mw_rows=1/1m").unwrap());
    for (era, client) in clients(limit).await {
        for _ in 0..2 {
            let ok = client.call("mw_echo", json!({"text": "x"})).await.unwrap();
            assert!(!ok.is_error(), "{era}: {ok:?}");
        }
        let refused = client.call("mw_echo", json!({"text": "x"})).await.unwrap();
        assert!(refused.is_error(), "{era}: {refused:?}");
        assert!(
            refused.text().contains("[RATE_LIMITED]"),
            "{era}: {}",
            refused.text()
        );
        assert!(
            refused.text().contains("(retryable)"),
            "{era}: {}",
            refused.text()
        );
        let wait = refused.0["_meta"][RETRY_AFTER_META_KEY]
            .as_u64()
            .unwrap_or_else(|| panic!("{era}: no wait in {refused:?}"));
        assert!((1..=1000).contains(&wait), "{era}: {wait}");
        tokio::time::sleep(Duration::from_millis(wait)).await;
        let again = client.call("mw_echo", json!({"text": "x"})).await.unwrap();
        assert!(
            !again.is_error(),
            "{era}: accepted after the wait: {again:?}"
        );
        // The tool's own limit: one call a minute.
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert!(
            !client
                .call("mw_rows", json!({"n": 1}))
                .await
                .unwrap()
                .is_error()
        );
        let second = client.call("mw_rows", json!({"n": 1})).await.unwrap();
        assert!(
            second.text().contains("at most 1 per 1m"),
            "{era}: {}",
            second.text()
        );
    }
}

/// The log lines of the process (every test of this file writes there), as text.
fn log() -> &'static Mutex<Vec<u8>> {
    static LOG: OnceLock<Mutex<Vec<u8>>> = OnceLock::new();
    LOG.get_or_init(|| {
        struct Sink;
        impl Write for Sink {
            fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
                log().lock().unwrap().extend_from_slice(bytes);
                Ok(bytes.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let subscriber = tracing_subscriber::fmt()
            .with_writer(|| Sink)
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("one subscriber");
        Mutex::new(Vec::new())
    })
}

fn log_text() -> String {
    String::from_utf8_lossy(&log().lock().unwrap()).into_owned()
}

/// The id in a masked error's text.
fn masked_id(result: &CallResult) -> String {
    let text = result.text();
    let id = text
        .strip_prefix("Internal error (id ")
        .and_then(|t| t.split_once(')'))
        .map(|(id, _)| id.to_owned())
        .unwrap_or_else(|| panic!("not masked: {text}"));
    assert_eq!(id.len(), 16, "{text}");
    id
}

#[tokio::test]
async fn a_panic_and_an_io_error_are_masked_with_an_id_the_log_has_with_the_details() {
    let _ = log();
    for (era, client) in clients(|| server().middleware(MaskErrors)).await {
        for (tool, detail) in [
            ("mw_panic", "the vault key is hunter2"),
            ("mw_io", "open /srv/private/db.key"),
        ] {
            let result = client.call(tool, json!({})).await.unwrap();
            assert!(result.is_error(), "{era} {tool}");
            let wire = result.0.to_string();
            assert!(!wire.contains(detail), "{era} {tool}: {wire}");
            let id = masked_id(&result);
            let line = log_text()
                .lines()
                .find(|l| l.contains(&id))
                .map(str::to_owned)
                .unwrap_or_else(|| panic!("{era} {tool}: no log line with {id}"));
            assert!(line.contains(detail), "{era} {tool}: {line}");
            assert!(line.contains(tool), "{era} {tool}: {line}");
        }
        // Errors meant for the model pass: the author's, and a bad argument.
        let written = client.call("mw_written", json!({})).await.unwrap();
        assert!(written.text().contains("row 7 does not exist"), "{era}");
        let invalid = client.call("mw_echo", json!({"text": 5})).await.unwrap();
        assert!(invalid.text().contains("text"), "{era}: {}", invalid.text());
        assert!(!invalid.text().contains("Internal error"), "{era}");
    }
    // Without the layer, the model reads the error as it is.
    let plain = Client::start(server()).await.unwrap();
    let io = plain.call("mw_io", json!({})).await.unwrap();
    assert!(io.text().contains("permission denied"), "{}", io.text());
}

#[tokio::test]
async fn an_audit_line_per_call_names_the_tool_the_principal_the_time_and_the_outcome() {
    let _ = log();
    for (era, client) in clients(|| server().middleware(Audit)).await {
        client.call("mw_written", json!({})).await.unwrap();
        let text = log_text();
        let line = text
            .lines()
            .rev()
            .find(|l| l.contains("mcp_tool::audit") && l.contains("mw_written") && l.contains(era))
            .unwrap_or_else(|| panic!("{era}: no audit line in\n{text}"));
        for field in [
            "gen_ai.tool.name=\"mw_written\"",
            "enduser.id=\"local\"",
            "outcome=\"error\"",
            "error.type=\"NO_SUCH_ROW\"",
            "duration_ms=",
        ] {
            assert!(line.contains(field), "{era}: {field} in {line}");
        }
    }
}

/// A subject with a line break, and an error whose text has one, forge no log line: over HTTP
/// in both eras, each call's audit line holds the subject escaped, and the masked error's line
/// its text escaped.
#[tokio::test]
async fn a_line_break_from_outside_forges_no_audit_line() {
    let _ = log();
    let forged = "mcp_tool::audit: tool call gen_ai.tool.name=\"mw_rows\" enduser.id=admin";
    let subject = format!("eve-{}\n{forged}", std::process::id());
    let tokens = mcp_tool::http::BearerTokens::new().token("tok-eve", subject.as_str());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let handle = server()
        .middleware(Audit)
        .middleware(MaskErrors)
        .build()
        .unwrap();
    let config = mcp_tool::http::HttpConfig::default().with_auth(tokens);
    tokio::spawn(async move { handle.serve_http(listener, config).await });
    let endpoint = Endpoint::new(base);
    let session = endpoint.session(Some("tok-eve")).await;
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": "mw_lines", "arguments": {}}});
    let request = endpoint
        .in_session(Some("tok-eve"), &session)
        .body(call.to_string());
    let old = mcp_tool_tests::raw_http::send(request).await.body;
    assert_eq!(old["result"]["isError"], true, "{old}");
    let new = endpoint
        .call_tool(Some("tok-eve"), "mw_lines", json!({}))
        .await
        .body;
    assert_eq!(new["result"]["isError"], true, "{new}");
    let text = log_text();
    let escaped = subject.replace('\n', "\\n").replace('"', "\\\"");
    let audited: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("mcp_tool::audit") && l.contains(&escaped))
        .collect();
    assert_eq!(audited.len(), 2, "{text}");
    for line in &audited {
        assert!(line.contains("gen_ai.tool.name=\"mw_lines\""), "{line}");
    }
    // No line of the log is the forged one, nor begins with what followed a line break.
    for line in text.lines() {
        assert!(!line.starts_with("mcp_tool::audit"), "{line}");
        assert!(!line.starts_with("INFO forged"), "{line}");
    }
    let masked: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("mcp_tool::masked") && l.contains("mw_lines"))
        .collect();
    assert!(!masked.is_empty(), "{text}");
    for line in masked {
        assert!(line.contains("no row 7\\nINFO forged: granted"), "{line}");
    }
}

/// Calls `mw_rows` over the budget and reads the whole result through its link.
async fn cut_and_read_whole(era: &str, client: &Client) {
    let uncut = Client::start(server()).await.unwrap();
    let whole = uncut.call("mw_rows", json!({"n": 2000})).await.unwrap();
    let result = client.call("mw_rows", json!({"n": 2000})).await.unwrap();
    let wire = result.0.to_string();
    assert!(wire.len() <= 4096 + 200, "{era}: {} bytes", wire.len());
    assert!(result.structured().is_none(), "{era}");
    assert!(
        result.text().contains("[cut: the result of `mw_rows` is"),
        "{era}"
    );
    let link = result.0["content"]
        .as_array()
        .and_then(|blocks| blocks.iter().find(|b| b["type"] == "resource_link"))
        .unwrap_or_else(|| panic!("{era}: no link in {wire}"));
    let uri = link["uri"].as_str().unwrap();
    assert!(uri.starts_with(RESULTS_URI_PREFIX), "{era}: {uri}");
    let read = client
        .request("resources/read", json!({"uri": uri}))
        .await
        .unwrap();
    let text = read["contents"][0]["text"].as_str().unwrap();
    let kept: Value = serde_json::from_str(text).unwrap();
    assert_eq!(
        kept["structuredContent"], whole.0["structuredContent"],
        "{era}"
    );
    assert_eq!(
        kept["structuredContent"]["rows"].as_array().unwrap().len(),
        2000
    );
}

#[tokio::test]
async fn a_result_over_budget_is_cut_and_read_whole_through_its_link() {
    for (era, client) in clients(|| server().middleware(ResultBudget::new(4096))).await {
        cut_and_read_whole(era, &client).await;
        // A result within the budget is untouched.
        let small = client.call("mw_rows", json!({"n": 2})).await.unwrap();
        assert_eq!(
            small.structured().unwrap()["rows"][1],
            "row 00001 of the report"
        );
    }
}

/// The server of the HTTP test: every built-in, over HTTP.
async fn serve_http(server: Server) -> Endpoint {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let handle = server.build().unwrap();
    tokio::spawn(async move {
        handle
            .serve_http(listener, mcp_tool::http::HttpConfig::default())
            .await
    });
    Endpoint::new(base)
}

#[tokio::test]
async fn over_http_in_both_eras_the_built_ins_hold_and_a_kept_result_is_the_callers_own() {
    let _ = log();
    let endpoint = serve_http(
        server()
            .middleware(Audit)
            .middleware(RateLimit::parse("mw_echo=1/1m").unwrap())
            .middleware(MaskErrors)
            .middleware(ResultBudget::new(4096)),
    )
    .await;
    let call = |name: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": name, "arguments": arguments}})
    };
    // 2025-11-25: a session.
    let session = endpoint.session(None).await;
    let post = |body: Value| {
        let request = endpoint.in_session(None, &session).body(body.to_string());
        mcp_tool_tests::raw_http::send(request)
    };
    let masked = post(call("mw_panic", json!({}))).await.body;
    assert!(
        masked["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("Internal error (id ")),
        "{masked}"
    );
    let first = post(call("mw_echo", json!({"text": "a"}))).await.body;
    assert_eq!(first["result"]["content"][0]["text"], "a", "{first}");
    let limited = post(call("mw_echo", json!({"text": "a"}))).await.body;
    assert_eq!(limited["result"]["isError"], true, "{limited}");
    assert!(
        limited["result"]["_meta"][RETRY_AFTER_META_KEY].is_u64(),
        "{limited}"
    );
    let cut = post(call("mw_rows", json!({"n": 2000}))).await.body;
    let uri = kept_uri(&cut);
    let read =
        json!({"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": uri}});
    let whole = post(read.clone()).await.body;
    assert!(
        whole["result"]["contents"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("row 01999 of the report")),
        "{whole}"
    );
    // 2026-07-28 from the same address: the same principal, so the same limit and the same
    // kept result.
    let stateless = endpoint
        .call_tool(None, "mw_echo", json!({"text": "b"}))
        .await
        .body;
    assert_eq!(stateless["result"]["isError"], true, "{stateless}");
    let read_again = endpoint.read_resource(None, &uri).await.body;
    assert!(
        read_again["result"]["contents"][0]["text"].is_string(),
        "{read_again}"
    );
    let masked_io = endpoint.call_tool(None, "mw_io", json!({})).await.body;
    let text = masked_io["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.starts_with("Internal error (id "), "{masked_io}");
    assert!(
        log_text().contains("address 127.0.0.1"),
        "the audit names the address"
    );
}

#[tokio::test]
async fn a_kept_result_is_not_readable_by_another_principal() {
    // Over HTTP with bearer tokens: alice's kept result is refused to bob.
    let tokens = mcp_tool::http::BearerTokens::new()
        .token("tok-a", "alice")
        .token("tok-b", "bob");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let handle = server()
        .middleware(ResultBudget::new(4096))
        .build()
        .unwrap();
    let config = mcp_tool::http::HttpConfig::default().with_auth(tokens);
    tokio::spawn(async move { handle.serve_http(listener, config).await });
    let endpoint = Endpoint::new(base);
    let cut = endpoint
        .call_tool(Some("tok-a"), "mw_rows", json!({"n": 2000}))
        .await
        .body;
    let uri = kept_uri(&cut);
    let by_bob = endpoint.read_resource(Some("tok-b"), &uri).await.body;
    assert!(
        by_bob["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("another client")),
        "{by_bob}"
    );
    let by_alice = endpoint.read_resource(Some("tok-a"), &uri).await.body;
    assert!(
        by_alice["result"]["contents"][0]["text"].is_string(),
        "{by_alice}"
    );
}

/// The URI of the `resource_link` a call's cut result (`body`) points to, where the rest is kept.
fn kept_uri(body: &Value) -> String {
    body["result"]["content"]
        .as_array()
        .and_then(|b| b.iter().find(|b| b["type"] == "resource_link"))
        .and_then(|b| b["uri"].as_str())
        .unwrap_or_else(|| panic!("{body}"))
        .to_owned()
}

/// A server binary (`calc`) over stdio with the built-ins switched on from its environment.
fn calc_with(env: &[(&str, &str)], lines: &[Value]) -> std::process::Output {
    use std::process::{Command, Stdio};
    let mut child = Command::new(mcp_tool_tests::example_bin("calc"))
        .envs(env.iter().copied())
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("calc starts");
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let (status, stdout, stderr) =
        mcp_tool_tests::wait_bounded(&mut child, Duration::from_secs(30)).expect("calc exits");
    std::process::Output {
        status,
        stdout: stdout.into_bytes(),
        stderr: stderr.into_bytes(),
    }
}

#[test]
fn every_server_binary_switches_the_built_ins_on_from_its_environment() {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let call = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "multiply", "arguments": {"a": 2, "b": 3}}})
    };
    let templates = json!({"jsonrpc": "2.0", "id": 9, "method": "resources/templates/list"});
    let env = [
        ("MCP_TOOL_RATE_LIMIT", "2/1m"),
        ("MCP_TOOL_AUDIT", "1"),
        ("MCP_TOOL_MASK_ERRORS", "1"),
        ("MCP_TOOL_RESULT_BUDGET", "64KiB"),
    ];
    let out = calc_with(&env, &[init, done, call(1), call(2), call(3), templates]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let answers: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let by_id = |id: u64| {
        answers
            .iter()
            .find(|a| a["id"] == id)
            .unwrap_or_else(|| panic!("no answer {id} in {stdout}"))
    };
    assert_eq!(by_id(1)["result"]["content"][0]["text"], "6", "{stdout}");
    assert_eq!(by_id(2)["result"]["content"][0]["text"], "6", "{stdout}");
    let third = &by_id(3)["result"];
    assert_eq!(third["isError"], true, "{stdout}");
    assert!(
        third["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("RATE_LIMITED")
    );
    // The budget serves its kept results.
    let listed = by_id(9)["result"]["resourceTemplates"].to_string();
    assert!(listed.contains(RESULTS_URI_PREFIX), "{listed}");
    // The audit: a line per call on stderr, though the default level is `warn`.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let audited: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("mcp_tool::audit"))
        .collect();
    assert_eq!(audited.len(), 3, "{stderr}");
    // (The refused call may end first: the others run on the blocking pool.)
    let refused = audited
        .iter()
        .filter(|l| l.contains("error.type=\"RATE_LIMITED\""));
    assert_eq!(refused.count(), 1, "{stderr}");

    // A value that does not fit stops the binary, naming the variable.
    for (name, value) in [
        ("MCP_TOOL_RATE_LIMIT", "lots"),
        ("MCP_TOOL_RESULT_BUDGET", "big"),
    ] {
        let out = calc_with(&[(name, value)], &[]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with(&format!("error: {name}: `{value}`")),
            "{stderr}"
        );
    }
}

#[tokio::test]
async fn over_http_a_layer_of_ones_own_refuses_and_marks_in_both_eras() {
    let log: Log = Arc::default();
    let endpoint = serve_http(
        server()
            .middleware(Marker {
                name: "gate",
                log: log.clone(),
                refuse: Some("resources/list"),
            })
            // Its kept results make the server one with resources: `resources/list` exists.
            .middleware(ResultBudget::new(4096)),
    )
    .await;
    // 2025-11-25: a session.
    let session = endpoint.session(None).await;
    let post = |body: Value| {
        let request = endpoint.in_session(None, &session).body(body.to_string());
        mcp_tool_tests::raw_http::send(request)
    };
    let refused = post(json!({"jsonrpc": "2.0", "id": 5, "method": "resources/list"}))
        .await
        .body;
    assert_eq!(
        refused["error"]["message"], "gate refuses resources/list",
        "{refused}"
    );
    let call = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
                      "params": {"name": "mw_echo", "arguments": {"text": "hi"}}});
    let marked = post(call).await.body;
    assert_eq!(
        marked["result"]["content"][1]["text"], "marked by gate",
        "{marked}"
    );
    // 2026-07-28.
    let refused = endpoint
        .stateless(None, "resources/list", None, json!({}))
        .await
        .body;
    assert_eq!(
        refused["error"]["message"], "gate refuses resources/list",
        "{refused}"
    );
    let marked = endpoint
        .call_tool(None, "mw_echo", json!({"text": "hi"}))
        .await
        .body;
    assert_eq!(
        marked["result"]["content"][1]["text"], "marked by gate",
        "{marked}"
    );
    assert_eq!(marked["result"]["resultType"], "complete", "{marked}");
}
