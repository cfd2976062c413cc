//! The runtime a server binary runs on (`--threads N`, `MCP_TOOL_THREADS`): one thread when
//! asked (or when the process may use one CPU), several otherwise (over HTTP each serving its
//! share of the connections); and on one thread as on
//! several, a synchronous tool stuck on the blocking pool and an async tool awaiting for ever
//! hold no other call, session or protocol era, over stdio and HTTP, and the process still
//! exits when its input closes or on SIGTERM. The bounds are generous: they tell "answers"
//! from "hangs", they time nothing.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mcp_tool_tests::{ExampleHttp, TempDir, wait_bounded};
use serde_json::{Value, json};

const STUCK: &str = env!("CARGO_BIN_EXE_stuck");

/// Long enough for a busy machine; a server that hangs never gets there.
const BOUND: Duration = Duration::from_secs(20);

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"runtime-test","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A `tools/call` of `tool` with `arguments`: 2025-11-25, or 2026-07-28 with its `_meta`.
fn call(id: u64, tool: &str, arguments: Value, stateless: bool) -> String {
    let mut params = json!({"name": tool, "arguments": arguments});
    if stateless {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        });
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

/// Waits (at most [`BOUND`]) until the tool that creates `marker` runs.
fn wait_for(marker: &Path) {
    let deadline = Instant::now() + BOUND;
    while !marker.exists() {
        assert!(Instant::now() < deadline, "{} never ran", marker.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The threads of process `pid` (Linux).
fn threads_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("the process's threads")
        .count()
}

/// `stuck` on stdio with `--threads threads`: `stuck` and `waits` called and running, then
/// `quick` must be answered, and the process must exit once stdin closes.
fn stdio_serves_beside_hung_tools(threads: &str, stateless: bool) {
    let dir = TempDir::new("runtime-stdio");
    let (stuck, waits) = (dir.path().join("stuck"), dir.path().join("waits"));
    let mut child = Command::new(STUCK)
        .args(["--threads", threads])
        .env("STUCK_MARKER", &stuck)
        .env("WAITS_MARKER", &waits)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("starts");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let lines = lines_of(child.stdout.take().expect("piped stdout"));
    if !stateless {
        writeln!(stdin, "{INITIALIZE}\n{INITIALIZED}").expect("written");
    }
    let (hang, wait) = (
        call(2, "stuck", json!({}), stateless),
        call(3, "waits", json!({}), stateless),
    );
    writeln!(stdin, "{hang}\n{wait}").expect("written");
    stdin.flush().expect("flushed");
    wait_for(&stuck);
    wait_for(&waits);
    writeln!(stdin, "{}", call(4, "quick", json!({"a": 41}), stateless)).expect("written");
    stdin.flush().expect("flushed");
    let deadline = Instant::now() + BOUND;
    let answer = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("`quick` not answered with {threads} thread(s)"));
        let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        if message["id"] == 4 {
            break message;
        }
    };
    assert_eq!(answer["result"]["content"][0]["text"], "42", "{answer}");
    drop(stdin);
    let status = exit_of(&mut child, &format!("stdin closed ({threads} thread(s))"));
    assert!(status.success(), "{status}");
}

/// How `child` exits, which it must within [`BOUND`] after `what`.
fn exit_of(child: &mut Child, what: &str) -> ExitStatus {
    let deadline = Instant::now() + BOUND;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("still running {BOUND:?} after {what}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every line of `stdout`, as it comes.
fn lines_of(stdout: ChildStdout) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

#[test]
fn on_one_thread_stdio_answers_while_a_tool_blocks_and_another_awaits() {
    stdio_serves_beside_hung_tools("1", false);
    stdio_serves_beside_hung_tools("1", true);
}

#[test]
fn on_two_threads_stdio_answers_while_a_tool_blocks_and_another_awaits() {
    stdio_serves_beside_hung_tools("2", false);
    stdio_serves_beside_hung_tools("2", true);
}

/// `stuck --http` with `--threads threads`, mounting another `stuck` over stdio as `me`: one
/// session's call blocks a pool thread, another session's awaits for ever; a third session,
/// the awaiting session itself and a 2026-07-28 request are all answered, by its own tool and
/// by the mounted one, and SIGTERM ends the process.
fn http_serves_beside_hung_tools(threads: &str) {
    let dir = TempDir::new("runtime-http");
    let (stuck, waits) = (dir.path().join("stuck"), dir.path().join("waits"));
    let mounts = dir.path().join("mounts.json");
    let mount = json!([{"type": "mcp", "server_label": "me", "command": [STUCK]}]);
    std::fs::write(&mounts, mount.to_string()).expect("the mount file is written");
    let markers = [
        ("STUCK_MARKER", stuck.to_str().expect("a UTF-8 path")),
        ("WAITS_MARKER", waits.to_str().expect("a UTF-8 path")),
    ];
    let mounts = mounts.to_str().expect("a UTF-8 path");
    let args = ["--threads", threads, "--mount", mounts];
    let mut server = ExampleHttp::start_bin(STUCK, "stuck", &args, &markers);
    let (a, b, c) = (session(&server), session(&server), session(&server));
    // Their answers never come: the connections stay open, unread.
    let _hung = server.send_raw(Some(&a), &call(2, "stuck", json!({}), false), BOUND);
    let _waiting = server.send_raw(Some(&b), &call(2, "waits", json!({}), false), BOUND);
    wait_for(&stuck);
    wait_for(&waits);
    let routes = [(Some(&c), 1), (Some(&b), 2), (None, 3)];
    for ((session, a), tool) in routes
        .into_iter()
        .flat_map(|r| [(r, "quick"), (r, "me__quick")])
    {
        let stateless = session.is_none();
        let request = call(3, tool, json!({"a": a}), stateless);
        let answer = server.post_raw(session.map(String::as_str), &request, BOUND);
        let body = answer.split("\r\n\r\n").nth(1).unwrap_or("");
        let json = body
            .lines()
            .find_map(|l| l.strip_prefix("data: ").filter(|d| !d.trim().is_empty()))
            .unwrap_or(body);
        let message: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {answer}"));
        assert_eq!(
            message["result"]["content"][0]["text"],
            (a + 1).to_string(),
            "{tool}: {answer}"
        );
    }
    let pid = server.child.id().to_string();
    let status = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let status = exit_of(&mut server.child, &format!("SIGTERM ({threads} thread(s))"));
    assert!(status.success(), "{status}");
}

#[test]
fn on_one_thread_http_serves_other_sessions_while_a_tool_blocks_and_another_awaits() {
    http_serves_beside_hung_tools("1");
}

#[test]
fn on_two_threads_http_serves_other_sessions_while_a_tool_blocks_and_another_awaits() {
    http_serves_beside_hung_tools("2");
}

#[cfg(target_os = "linux")]
#[test]
fn the_setting_and_the_cpus_choose_one_thread_or_several() {
    // Asked on the command line, which wins over the environment.
    let one = ExampleHttp::start_bin(
        STUCK,
        "stuck",
        &["--threads", "1"],
        &[("MCP_TOOL_THREADS", "3")],
    );
    session(&one);
    assert_eq!(threads_of(one.child.id()), 1, "--threads 1");
    let three = ExampleHttp::start_bin(
        STUCK,
        "stuck",
        &["--threads", "3"],
        &[("MCP_TOOL_THREADS", "1")],
    );
    session(&three);
    assert_eq!(
        threads_of(three.child.id()),
        3,
        "--threads 3 over HTTP: main and two more, each serving its connections"
    );
    // Asked in the environment.
    let env = ExampleHttp::start_bin(STUCK, "stuck", &[], &[("MCP_TOOL_THREADS", "1")]);
    session(&env);
    assert_eq!(threads_of(env.child.id()), 1, "MCP_TOOL_THREADS=1");
    // Not asked: one CPU allowed, one thread.
    let unset = [("MCP_TOOL_THREADS", "")];
    let pinned = ExampleHttp::start_bin("taskset", "stuck", &["-c", "0", STUCK], &unset);
    session(&pinned);
    assert_eq!(threads_of(pinned.child.id()), 1, "on one CPU");
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    if cpus > 1 {
        let all = ExampleHttp::start_bin(STUCK, "stuck", &[], &unset);
        session(&all);
        assert_eq!(
            threads_of(all.child.id()),
            cpus,
            "a thread per CPU, main one of them"
        );
    }
}

/// Over HTTP on three threads, the connections are shared between them in turn, and a
/// connection's call runs on the thread serving it: six calls, each on a connection of its
/// own, ran twice on each thread.
#[cfg(target_os = "linux")]
#[test]
fn http_connections_are_shared_between_the_threads_in_turn() {
    let server = ExampleHttp::start_bin(STUCK, "stuck", &["--threads", "3"], &[]);
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for id in 0..6 {
        let answer = server.post_raw(None, &call(id, "thread", json!({}), true), BOUND);
        let body = answer.split("\r\n\r\n").nth(1).unwrap_or("");
        let message: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {answer}"));
        let name = message["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("a thread's name: {answer}"));
        *seen.entry(name.to_owned()).or_default() += 1;
    }
    let want = [("http-1", 2), ("http-2", 2), ("main", 2)]
        .map(|(name, n)| (name.to_owned(), n))
        .into();
    assert_eq!(seen, want);
    assert_eq!(threads_of(server.child.id()), 3);
}

#[test]
fn a_number_of_threads_that_does_not_fit_is_refused_naming_where_it_came_from() {
    for (args, env, named) in [
        (&["--threads", "0"][..], None, "--threads: `0`"),
        (&["--threads", "many"][..], None, "--threads: `many`"),
        (&["--threads"][..], None, "`--threads` needs a number"),
        (
            &["--http", "127.0.0.1:0", "--threads", "1025"][..],
            None,
            "`1025`",
        ),
        (&[][..], Some("0"), "MCP_TOOL_THREADS: `0`"),
        (&["list"][..], Some("two"), "MCP_TOOL_THREADS: `two`"),
    ] {
        let mut command = Command::new(STUCK);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        match env {
            Some(value) => command.env("MCP_TOOL_THREADS", value),
            None => command.env_remove("MCP_TOOL_THREADS"),
        };
        let mut child = command.spawn().expect("starts");
        let Some((status, _, err)) = wait_bounded(&mut child, BOUND) else {
            panic!("{args:?} {env:?}: still running");
        };
        assert_eq!(status.code(), Some(2), "{args:?} {env:?}: {err}");
        assert!(err.contains(named), "{args:?} {env:?}: {err}");
    }
}

/// A 2025-11-25 session: its id.
fn session(server: &ExampleHttp) -> String {
    server.session_raw(INITIALIZE, BOUND)
}
