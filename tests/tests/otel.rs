//! OpenTelemetry export, end to end, into a real collector nobody here wrote: Rotel (PyPI
//! `rotel`, a Rust OTLP collector shipped as a wheel with its binary; pinned in
//! `interop/requirements.txt`, installed into `interop/.venv` by `interop/setup.sh`, which
//! `.ci/run` runs). Rotel listens for OTLP/HTTP on a loopback port and prints every span it
//! receives (its debug log, in the OpenTelemetry Collector's `detailed` format); the `calc`
//! example, built with the `otel` feature, exports to it (`OTEL_EXPORTER_OTLP_ENDPOINT`) while
//! it serves a few calls in both versions — over stdio, and over Streamable HTTP (stopped
//! by SIGTERM, so it flushes on the way out). The spans must arrive with the semantic
//! conventions' names, kinds, attributes and status, and a request whose `_meta` carries a
//! `traceparent` must be a child of that span, in its trace.
//!
//! The test fails (it does not skip) when Rotel is not installed or does not start.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use mcp_tool_tests::{TempDir, wait_bounded};
use serde_json::{Value, json};

/// How long the spans may take to reach the collector after the servers stopped.
const ARRIVAL: Duration = Duration::from_secs(30);

const SETUP_HINT: &str = "install it with `bash interop/setup.sh` (.ci/run does it)";

/// The trace contexts the requests carry in `_meta`: (trace id, parent span id).
const STDIO_2025: (&str, &str) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
const STDIO_2026: (&str, &str) = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331");
const HTTP_2025: (&str, &str) = ("11111111111111111111111111111111", "2222222222222222");
const HTTP_2026: (&str, &str) = ("33333333333333333333333333333333", "4444444444444444");

fn traceparent((trace, parent): (&str, &str)) -> String {
    format!("00-{trace}-{parent}-01")
}

// ---------------------------------------------------------------------------------------------
// The collector
// ---------------------------------------------------------------------------------------------

/// Rotel's binary, inside its Python package in `interop/.venv`.
fn rotel_bin() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../interop");
    let python = root.join(".venv/bin/python");
    let out = Command::new(&python)
        .args([
            "-c",
            "import os, rotel; print(os.path.join(os.path.dirname(rotel.__file__), 'rotel-agent'))",
        ])
        .output()
        .unwrap_or_else(|e| panic!("no Python in interop/.venv ({e}): {SETUP_HINT}"));
    assert!(
        out.status.success(),
        "the `rotel` package is not in interop/.venv: {SETUP_HINT}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(
        path.is_file(),
        "no Rotel binary at {}: {SETUP_HINT}",
        path.display()
    );
    path
}

/// A port free on the loopback interface just now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// Rotel on loopback ports of its own, its output gathered; killed when dropped.
struct Collector {
    child: Child,
    /// Its OTLP/HTTP endpoint.
    endpoint: String,
    output: Arc<Mutex<String>>,
}

impl Collector {
    fn start() -> Collector {
        let bin = rotel_bin();
        let (http, grpc) = (free_port(), free_port());
        let mut child = Command::new(&bin)
            .args([
                "start",
                "--otlp-http-endpoint",
                &format!("127.0.0.1:{http}"),
                "--otlp-grpc-endpoint",
                &format!("127.0.0.1:{grpc}"),
                "--exporter",
                "blackhole",
                "--debug-log",
                "traces",
                "--debug-log-verbosity",
                "detailed",
                "--log-format",
                "text",
            ])
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("Rotel ({}) does not start: {e}", bin.display()));
        let output = Arc::new(Mutex::new(String::new()));
        for pipe in [
            Box::new(child.stdout.take().expect("piped stdout")) as Box<dyn Read + Send>,
            Box::new(child.stderr.take().expect("piped stderr")),
        ] {
            let output = output.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines() {
                    let Ok(line) = line else { break };
                    let mut all = output.lock().unwrap_or_else(PoisonError::into_inner);
                    all.push_str(&line);
                    all.push('\n');
                }
            });
        }
        let mut collector = Collector {
            child,
            endpoint: format!("http://127.0.0.1:{http}"),
            output,
        };
        // Ready when its OTLP/HTTP port takes connections.
        let deadline = Instant::now() + Duration::from_secs(15);
        while TcpStream::connect(("127.0.0.1", http)).is_err() {
            if let Ok(Some(status)) = collector.child.try_wait() {
                panic!("Rotel exited at start ({status}):\n{}", collector.text());
            }
            assert!(
                Instant::now() < deadline,
                "Rotel never listened on 127.0.0.1:{http}:\n{}",
                collector.text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        collector
    }

    fn text(&self) -> String {
        self.output
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The spans received so far.
    fn spans(&self) -> Vec<SpanRecord> {
        parse_spans(&self.text())
    }

    /// Waits until `done` holds for the spans received, or fails after [`ARRIVAL`].
    fn wait_for(&self, what: &str, done: impl Fn(&[SpanRecord]) -> bool) -> Vec<SpanRecord> {
        let deadline = Instant::now() + ARRIVAL;
        loop {
            let spans = self.spans();
            if done(&spans) {
                return spans;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: not received within {ARRIVAL:?}; the collector printed:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One span as the collector printed it.
#[derive(Debug, Clone, Default)]
struct SpanRecord {
    service: String,
    trace_id: String,
    parent_id: String,
    id: String,
    name: String,
    kind: String,
    status: String,
    message: String,
    attributes: BTreeMap<String, String>,
}

impl SpanRecord {
    fn attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }
}

/// Reads the collector's `detailed` debug output: `ResourceSpans #n` with its resource
/// attributes, then `Span #n` blocks of `Field : value` lines and `-> key: Type(value)`
/// attributes.
fn parse_spans(text: &str) -> Vec<SpanRecord> {
    enum In {
        Nothing,
        Resource,
        Span,
    }
    let mut spans: Vec<SpanRecord> = Vec::new();
    let mut service = String::new();
    let mut at = In::Nothing;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("ResourceSpans #") {
            service.clear();
            at = In::Resource;
        } else if trimmed.starts_with("ScopeSpans #") {
            at = In::Nothing;
        } else if trimmed.starts_with("Span #") {
            spans.push(SpanRecord {
                service: service.clone(),
                ..SpanRecord::default()
            });
            at = In::Span;
        } else if let Some(kv) = trimmed.strip_prefix("-> ") {
            let Some((key, value)) = kv.split_once(": ") else {
                continue;
            };
            // `Str(x)`, `Int(3)`, …: the text inside the parentheses.
            let value = value
                .split_once('(')
                .and_then(|(_, v)| v.strip_suffix(')'))
                .unwrap_or(value)
                .to_owned();
            match at {
                In::Resource if key == "service.name" => service = value,
                In::Span => {
                    if let Some(span) = spans.last_mut() {
                        span.attributes.insert(key.to_owned(), value);
                    }
                }
                _ => {}
            }
        } else if let (In::Span, Some((field, value))) = (&at, trimmed.split_once(':')) {
            let Some(span) = spans.last_mut() else {
                continue;
            };
            let value = value.trim().to_owned();
            match field.trim() {
                "Trace ID" => span.trace_id = value,
                "Parent ID" => span.parent_id = value,
                "ID" => span.id = value,
                "Name" => span.name = value,
                "Kind" => span.kind = value,
                "Status code" => span.status = value,
                "Status message" => span.message = value,
                _ => {}
            }
        }
    }
    spans
}

// ---------------------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------------------

/// The `calc` example built with the `otel` feature, copied where other builds of it (without
/// the feature) cannot replace it.
fn calc_otel(dir: &TempDir) -> PathBuf {
    let workspace = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let mut child = Command::new(env!("CARGO"))
        .args([
            "build",
            "-p",
            "mcp-tool-examples",
            "--bin",
            "calc",
            "--features",
            "otel",
            "--message-format=json",
        ])
        .current_dir(workspace)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cargo runs");
    let (status, out, err) = wait_bounded(&mut child, Duration::from_secs(600))
        .expect("building calc with the otel feature took more than 10 minutes");
    assert!(
        status.success(),
        "cargo build --features otel failed:\n{err}"
    );
    let built = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "calc")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("no calc executable in cargo's output:\n{err}"));
    let copy = dir.path().join("calc-otel");
    std::fs::copy(&built, &copy).expect("copy the calc executable");
    copy
}

/// The environment that makes the server export to `collector`, with short batches.
fn otel_env<'a>(collector: &'a Collector, service: &'a str) -> [(&'a str, &'a str); 3] {
    [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint.as_str()),
        ("OTEL_SERVICE_NAME", service),
        ("OTEL_BSP_SCHEDULE_DELAY", "200"),
    ]
}

/// The `_meta` of a 2026-07-28 request, with a trace context.
fn meta_2026(trace: (&str, &str)) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "otel-test", "version": "0" },
        "traceparent": traceparent(trace),
        "tracestate": "congo=t61rcWkgMzE",
    })
}

fn initialize() -> Value {
    json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": { "name": "otel-test", "version": "0" } } })
}

/// Serves five requests over stdio and closes its input: `initialize`, `multiply` (with a
/// trace context), `divide` by zero (an error result), an unknown tool (-32602), and a
/// 2026-07-28 `multiply` (with another trace context).
fn stdio_leg(calc: &Path, collector: &Collector) {
    let mut child = Command::new(calc)
        .envs(otel_env(collector, "calc-stdio"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("calc starts");
    let lines = [
        initialize(),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "multiply", "arguments": { "a": 6, "b": 7 },
            "_meta": { "traceparent": traceparent(STDIO_2025), "tracestate": "rojo=00f067aa0ba902b7" } } }),
        json!({ "jsonrpc": "2.0", "id": "three", "method": "tools/call", "params": {
            "name": "divide", "arguments": { "a": 1, "b": 0 } } }),
        json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
            "name": "no_such_tool", "arguments": {} } }),
        json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
            "name": "multiply", "arguments": { "a": 2, "b": 3 }, "_meta": meta_2026(STDIO_2026) } }),
    ];
    let mut stdin = child.stdin.take().expect("piped stdin");
    for line in &lines {
        writeln!(stdin, "{line}").expect("write a request");
    }
    drop(stdin);
    let (status, out, err) =
        wait_bounded(&mut child, Duration::from_secs(30)).expect("calc ends when its input does");
    assert!(status.success(), "calc failed ({status}):\n{err}");
    let answers: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(answers.len(), 5, "five answers:\n{out}\n{err}");
}

/// Serves a 2025-11-25 session (`initialize`, `multiply` with a trace context) and a
/// 2026-07-28 `multiply` (with another) over Streamable HTTP, then stops on SIGTERM.
async fn http_leg(calc: &Path, collector: &Collector) {
    let mut child = Command::new(calc)
        .args(["--http", "127.0.0.1:0"])
        .envs(otel_env(collector, "calc-http"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("calc --http starts");
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            match line.split("MCP endpoint ").nth(1) {
                Some(url) if tx.is_some() => {
                    let _ = tx.take().map(|tx| tx.send(url.trim().to_owned()));
                }
                _ => eprintln!("calc --http: {line}"),
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("calc --http says where it listens");
    let http = mcp_tool_tests::http_client();
    let post = |body: Value| {
        http.post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string())
    };
    let init = post(initialize()).send().await.expect("initialize");
    assert!(init.status().is_success(), "{init:?}");
    let session = init
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("a session id")
        .to_owned();
    let _ = init.text().await;
    let in_session = |body: Value| {
        post(body)
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
    };
    let sent = in_session(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
        .send()
        .await
        .expect("initialized");
    assert!(sent.status().is_success(), "{sent:?}");
    let call = in_session(
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "multiply", "arguments": { "a": 6, "b": 7 },
        "_meta": { "traceparent": traceparent(HTTP_2025) } } }),
    )
    .send()
    .await
    .expect("a call in the session");
    let text = call.text().await.expect("its answer");
    assert!(text.contains("42"), "{text}");
    let call = post(
        json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "multiply", "arguments": { "a": 2, "b": 3 }, "_meta": meta_2026(HTTP_2026) } }),
    )
    .header("mcp-protocol-version", "2026-07-28")
    .header("mcp-method", "tools/call")
    .header("mcp-name", "multiply")
    .send()
    .await
    .expect("a 2026-07-28 call");
    let text = call.text().await.expect("its answer");
    assert!(text.contains("\"6\""), "{text}");
    // SIGTERM: the server stops gracefully and flushes its spans.
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("calc --http did not stop within 30 s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "calc --http ended with {status}");
}

// ---------------------------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------------------------

fn find<'a>(spans: &'a [SpanRecord], service: &str, name: &str, trace: &str) -> &'a SpanRecord {
    spans
        .iter()
        .find(|s| {
            s.service == service && s.name == name && (trace.is_empty() || s.trace_id == trace)
        })
        .unwrap_or_else(|| panic!("no `{name}` span of {service} in trace `{trace}`: {spans:#?}"))
}

fn has(span: &SpanRecord, attributes: &[(&str, &str)]) {
    for (key, value) in attributes {
        assert_eq!(span.attr(key), Some(*value), "{key} of {span:#?}");
    }
}

/// The tool call's span under the request's.
fn tool_child<'a>(spans: &'a [SpanRecord], request: &SpanRecord, tool: &str) -> &'a SpanRecord {
    let name = format!("execute_tool {tool}");
    let child = spans
        .iter()
        .find(|s| s.name == name && s.parent_id == request.id)
        .unwrap_or_else(|| panic!("no `{name}` span under {request:#?}: {spans:#?}"));
    assert_eq!(child.trace_id, request.trace_id);
    assert_eq!(child.kind, "SPAN_KIND_INTERNAL");
    has(
        child,
        &[
            ("gen_ai.operation.name", "execute_tool"),
            ("gen_ai.tool.name", tool),
        ],
    );
    child
}

fn check_stdio(spans: &[SpanRecord]) {
    let service = "calc-stdio";
    let init = find(spans, service, "initialize", "");
    assert_eq!(init.kind, "SPAN_KIND_SERVER");
    assert_eq!(init.parent_id, "");
    has(
        init,
        &[
            ("mcp.method.name", "initialize"),
            ("jsonrpc.request.id", "1"),
            ("mcp.protocol.version", "2025-11-25"),
            ("network.transport", "pipe"),
        ],
    );
    assert_eq!(init.status, "STATUS_CODE_UNSET");

    // The trace context of `_meta` is the parent.
    let call = find(spans, service, "tools/call multiply", STDIO_2025.0);
    assert_eq!(call.parent_id, STDIO_2025.1, "{call:#?}");
    assert_eq!(call.kind, "SPAN_KIND_SERVER");
    has(
        call,
        &[
            ("mcp.method.name", "tools/call"),
            ("gen_ai.tool.name", "multiply"),
            ("gen_ai.operation.name", "execute_tool"),
            ("jsonrpc.request.id", "2"),
            ("mcp.protocol.version", "2025-11-25"),
            ("network.transport", "pipe"),
        ],
    );
    assert_eq!(call.status, "STATUS_CODE_UNSET");
    assert_eq!(call.attr("error.type"), None);
    tool_child(spans, call, "multiply");

    // An error result: `tool_error` on the request and on the call.
    let divide = find(spans, service, "tools/call divide", "");
    has(
        divide,
        &[
            ("error.type", "tool_error"),
            ("jsonrpc.request.id", "three"),
        ],
    );
    assert_eq!(divide.status, "STATUS_CODE_ERROR");
    let child = tool_child(spans, divide, "divide");
    has(child, &[("error.type", "tool_error")]);
    assert_eq!(child.status, "STATUS_CODE_ERROR");

    // A JSON-RPC error: its code and message.
    let unknown = find(spans, service, "tools/call no_such_tool", "");
    has(
        unknown,
        &[
            ("error.type", "-32602"),
            ("rpc.response.status_code", "-32602"),
        ],
    );
    assert_eq!(unknown.status, "STATUS_CODE_ERROR");
    assert_eq!(unknown.message, "Unknown tool: `no_such_tool`");

    // 2026-07-28: stateless, with its own trace context.
    let call_2026 = find(spans, service, "tools/call multiply", STDIO_2026.0);
    assert_eq!(call_2026.parent_id, STDIO_2026.1, "{call_2026:#?}");
    has(
        call_2026,
        &[
            ("mcp.protocol.version", "2026-07-28"),
            ("jsonrpc.request.id", "5"),
        ],
    );
    tool_child(spans, call_2026, "multiply");
}

fn check_http(spans: &[SpanRecord]) {
    let service = "calc-http";
    let http = [
        ("network.transport", "tcp"),
        ("network.protocol.name", "http"),
        ("network.protocol.version", "1.1"),
    ];
    let init = find(spans, service, "initialize", "");
    has(init, &http);
    has(init, &[("mcp.protocol.version", "2025-11-25")]);
    let call = find(spans, service, "tools/call multiply", HTTP_2025.0);
    assert_eq!(call.parent_id, HTTP_2025.1, "{call:#?}");
    has(call, &http);
    has(call, &[("mcp.protocol.version", "2025-11-25")]);
    tool_child(spans, call, "multiply");
    let call_2026 = find(spans, service, "tools/call multiply", HTTP_2026.0);
    assert_eq!(call_2026.parent_id, HTTP_2026.1, "{call_2026:#?}");
    has(call_2026, &http);
    has(call_2026, &[("mcp.protocol.version", "2026-07-28")]);
    tool_child(spans, call_2026, "multiply");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_reach_a_real_collector_in_both_versions_over_stdio_and_http() {
    let collector = Collector::start();
    let dir = TempDir::new("otel");
    let calc = calc_otel(&dir);

    stdio_leg(&calc, &collector);
    let spans = collector.wait_for("the stdio leg's spans", |spans| {
        spans.iter().filter(|s| s.service == "calc-stdio").count() >= 9
    });
    check_stdio(&spans);

    http_leg(&calc, &collector).await;
    let spans = collector.wait_for("the HTTP leg's spans", |spans| {
        spans.iter().filter(|s| s.service == "calc-http").count() >= 6
    });
    check_http(&spans);
}
