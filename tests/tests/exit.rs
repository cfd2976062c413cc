//! A blocking tool stuck for ever (a read that never returns) does not hold the process's
//! exit: once stdin closes (stdio) or on SIGTERM (HTTP), the server gives calls in flight its
//! shutdown grace, then exits, leaving the stuck thread behind. The bound is generous: it
//! tells "exits" from "hangs", it does not time the exit.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_tool_tests::{ExampleHttp, TempDir, wait_bounded};
use serde_json::Value;

const STUCK: &str = env!("CARGO_BIN_EXE_stuck");

/// Long enough for a busy machine; a process that hangs never gets there.
const EXIT_BOUND: Duration = Duration::from_secs(20);

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"exit-test","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const CALL: &str =
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stuck","arguments":{}}}"#;

/// Waits (at most [`EXIT_BOUND`]) until the stuck tool runs.
fn wait_for(marker: &Path) {
    let deadline = Instant::now() + EXIT_BOUND;
    while !marker.exists() {
        assert!(Instant::now() < deadline, "the stuck tool never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn stdio_exits_when_stdin_closes_while_a_blocking_tool_is_stuck() {
    let dir = TempDir::new("exit-stdio");
    let marker = dir.path().join("running");
    let mut child = Command::new(STUCK)
        .env("STUCK_MARKER", &marker)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let mut stdin = child.stdin.take().expect("piped stdin");
    writeln!(stdin, "{INITIALIZE}\n{INITIALIZED}\n{CALL}").expect("written");
    stdin.flush().expect("flushed");
    wait_for(&marker);
    drop(stdin);
    let Some((status, out, err)) = wait_bounded(&mut child, EXIT_BOUND) else {
        panic!("still running {EXIT_BOUND:?} after stdin closed, with a blocking tool stuck");
    };
    assert!(status.success(), "{status}: {err}");
    // The handshake was answered; every line out is JSON-RPC.
    let messages: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m["id"] == 1 && m["result"].is_object()),
        "{out}"
    );
}

#[test]
fn http_exits_on_sigterm_while_a_blocking_tool_is_stuck() {
    let dir = TempDir::new("exit-http");
    let marker = dir.path().join("running");
    let marker_env = marker.to_str().expect("a UTF-8 path");
    let mut server = ExampleHttp::start_bin(STUCK, "stuck", &[], &[("STUCK_MARKER", marker_env)]);

    let session = server.session_raw(INITIALIZE, EXIT_BOUND);
    // The call's connection stays open, its answer never read.
    let _call = server.send_raw(Some(&session), CALL, EXIT_BOUND);
    wait_for(&marker);

    let pid = server.child.id().to_string();
    let status = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let deadline = Instant::now() + EXIT_BOUND;
    let status = loop {
        if let Some(status) = exited(&mut server.child) {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "still running {EXIT_BOUND:?} after SIGTERM, with a blocking tool stuck"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status}");
}

fn exited(child: &mut Child) -> Option<std::process::ExitStatus> {
    child.try_wait().expect("try_wait")
}
