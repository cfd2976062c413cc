//! Helpers shared by the integration tests: a server binary spawned as a child process and
//! spoken to over its real stdin/stdout, and a runner for one-shot command lines; [`stateless`]
//! speaks protocol 2026-07-28 over stdio and Streamable HTTP.
//!
//! Every wait is bounded; the child is killed when its guard is dropped; a line on stdout
//! that is not a JSON-RPC message fails the test (stdout carries the protocol only).

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

pub(crate) mod stateless;

/// The longest any single wait may take.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(10);

/// How long to listen for a message that must not come.
pub(crate) const QUIET: Duration = Duration::from_millis(300);

/// The `users` example server.
pub(crate) const USERS: &str = env!("CARGO_BIN_EXE_users");

/// The `calc` example server.
pub(crate) const CALC: &str = env!("CARGO_BIN_EXE_calc");

/// The version every example server reports (the examples package's).
pub(crate) const VERSION: &str = env!("CARGO_PKG_VERSION");

/// What the stdout reader thread saw on one line.
enum Line {
    Message(Value),
    NotJson(String),
}

/// A server process spoken to over stdio. Killed when dropped.
pub(crate) struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Line>,
    stderr: Arc<Mutex<Vec<u8>>>,
    next_id: i64,
    eof: bool,
}

impl Proc {
    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Spawns `bin` with no arguments (it serves MCP on stdio), all three streams piped.
    pub(crate) fn spawn(bin: &str) -> Proc {
        Proc::spawn_args(bin, &[])
    }

    /// Spawns `bin args…` (a server that serves MCP on stdio with these arguments), all
    /// three streams piped.
    pub(crate) fn spawn_args(bin: &str, args: &[&str]) -> Proc {
        let mut child = Command::new(bin)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn {bin}: {e}"));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr_pipe = child.stderr.take().expect("piped stderr");

        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let text = buf.strip_suffix(b"\n").unwrap_or(&buf);
                let line = match serde_json::from_slice::<Value>(text) {
                    Ok(v) => Line::Message(v),
                    Err(_) => Line::NotJson(String::from_utf8_lossy(text).into_owned()),
                };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });

        // Drained continuously so the server can never block writing its logs.
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let sink = stderr.clone();
        thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            loop {
                match stderr_pipe.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => sink
                        .lock()
                        .expect("stderr lock")
                        .extend_from_slice(&chunk[..n]),
                }
            }
        });

        Proc {
            child,
            stdin,
            lines,
            stderr,
            next_id: 0,
            eof: false,
        }
    }

    /// Spawns `bin` and completes the `initialize` handshake (latest protocol version).
    pub(crate) fn initialized(bin: &str) -> Proc {
        let mut p = Proc::spawn(bin);
        let result = p.result(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": { "name": "integration-tests", "version": "0.0.0" }
            }),
        );
        assert_eq!(result["protocolVersion"], "2025-11-25");
        p.notify("notifications/initialized", Value::Null);
        p
    }

    /// Spawns `bin args…` and completes the `initialize` handshake (latest protocol version),
    /// declaring the client `capabilities` given.
    pub(crate) fn initialized_with(bin: &str, args: &[&str], capabilities: Value) -> Proc {
        let mut p = Proc::spawn_args(bin, args);
        let result = p.result(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "clientInfo": { "name": "integration-tests", "version": "0.0.0" }
            }),
        );
        assert_eq!(result["protocolVersion"], "2025-11-25");
        p.notify("notifications/initialized", Value::Null);
        p
    }

    /// What the server wrote to stderr so far.
    pub(crate) fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().expect("stderr lock")).into_owned()
    }

    /// Writes raw bytes to the server's stdin, as they are.
    pub(crate) fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is already closed");
        if let Err(e) = stdin.write_all(bytes).and_then(|()| stdin.flush()) {
            panic!(
                "cannot write to the server: {e}; stderr:\n{}",
                self.stderr()
            );
        }
    }

    /// Writes one line of text (a newline is added).
    pub(crate) fn send_raw(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.send_bytes(&bytes);
    }

    /// Writes one message on its own line.
    pub(crate) fn send(&mut self, message: &Value) {
        let text = serde_json::to_string(message).expect("serializable");
        self.send_raw(&text);
    }

    /// Sends a notification (`params` omitted when `Null`).
    pub(crate) fn notify(&mut self, method: &str, params: Value) {
        let mut m = json!({ "jsonrpc": "2.0", "method": method });
        if !params.is_null() {
            m["params"] = params;
        }
        self.send(&m);
    }

    /// Closes the server's stdin (its input ends).
    pub(crate) fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next message, or `None` when nothing comes within `timeout` (or stdout ended).
    /// A line that is not JSON, or JSON that is not a JSON-RPC 2.0 message, fails the test.
    pub(crate) fn recv_timeout(&mut self, timeout: Duration) -> Option<Value> {
        if self.eof {
            return None;
        }
        match self.lines.recv_timeout(timeout) {
            Ok(Line::Message(v)) => {
                assert!(
                    v.is_object() && v["jsonrpc"] == "2.0",
                    "stdout carried JSON that is not a JSON-RPC 2.0 message: {v}"
                );
                Some(v)
            }
            Ok(Line::NotJson(line)) => panic!(
                "stdout carried a line that is not JSON (stdout is for protocol messages only): {line:?}\nstderr:\n{}",
                self.stderr()
            ),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                self.eof = true;
                None
            }
        }
    }

    /// The next message; fails the test when none comes within [`TIMEOUT`].
    pub(crate) fn recv(&mut self) -> Value {
        match self.recv_timeout(TIMEOUT) {
            Some(v) => v,
            None => panic!(
                "no message from the server within {TIMEOUT:?} (stdout ended: {}); stderr:\n{}",
                self.eof,
                self.stderr()
            ),
        }
    }

    /// Asserts that the server sends nothing for a short while.
    pub(crate) fn expect_silence(&mut self) {
        if let Some(v) = self.recv_timeout(QUIET) {
            panic!("expected no message, got {v}");
        }
    }

    /// Waits (bounded) until the server's stdout ends; true if it did.
    pub(crate) fn wait_stdout_closed(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while !self.eof {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            if let Some(v) = self.recv_timeout(left) {
                panic!("expected the end of stdout, got {v}");
            }
        }
        true
    }

    /// Waits (bounded) for the process to exit; `None` if it is still running.
    pub(crate) fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() >= deadline => return None,
                Ok(None) => thread::sleep(Duration::from_millis(10)),
                Err(e) => panic!("cannot wait for the server: {e}"),
            }
        }
    }

    /// A fresh numeric request id.
    pub(crate) fn next_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// Sends a request with the given id (`params` omitted when `Null`) without waiting for
    /// its response.
    pub(crate) fn send_request(&mut self, id: &Value, method: &str, params: Value) {
        let mut m = json!({ "jsonrpc": "2.0", "id": id.clone(), "method": method });
        if !params.is_null() {
            m["params"] = params;
        }
        self.send(&m);
    }

    /// Answers a request the server made of the client with a `result`.
    pub(crate) fn respond(&mut self, id: &Value, result: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "id": id.clone(), "result": result }));
    }

    /// Answers a request the server made of the client with an `error`.
    pub(crate) fn respond_error(&mut self, id: &Value, code: i64, message: &str) {
        self.send(&json!({
            "jsonrpc": "2.0",
            "id": id.clone(),
            "error": { "code": code, "message": message }
        }));
    }

    /// Every message up to and including the response with `id`: the messages before it
    /// (notifications, requests of the server) and the response. Fails the test when the
    /// response does not come within [`TIMEOUT`].
    pub(crate) fn until_response(&mut self, id: &Value) -> (Vec<Value>, Value) {
        let deadline = Instant::now() + TIMEOUT;
        let mut before = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(message) = self.recv_timeout(left) else {
                panic!(
                    "no response with id {id} within {TIMEOUT:?} (stdout ended: {}); got before: {before:?}; stderr:\n{}",
                    self.eof,
                    self.stderr()
                );
            };
            let is_response = message.get("method").is_none() && message["id"] == *id;
            if is_response {
                return (before, message);
            }
            before.push(message);
        }
    }

    /// The next message that is not a notification (a request of the server, or a
    /// response), with the notifications that came before it. Fails the test when none
    /// comes within [`TIMEOUT`].
    pub(crate) fn next_non_notification(&mut self) -> (Vec<Value>, Value) {
        let deadline = Instant::now() + TIMEOUT;
        let mut notes = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(message) = self.recv_timeout(left) else {
                panic!(
                    "nothing but notifications within {TIMEOUT:?} (stdout ended: {}): {notes:?}; stderr:\n{}",
                    self.eof,
                    self.stderr()
                );
            };
            if message.get("method").is_some() && message.get("id").is_none() {
                notes.push(message);
            } else {
                return (notes, message);
            }
        }
    }

    /// Every message that arrives within `window` (bounded: stops at the end of stdout).
    pub(crate) fn drain_for(&mut self, window: Duration) -> Vec<Value> {
        let deadline = Instant::now() + window;
        let mut got = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return got;
            }
            match self.recv_timeout(left) {
                Some(m) => got.push(m),
                None => return got,
            }
        }
    }

    /// Sends a request with the given id and returns its response (the whole message).
    /// Any other message arriving first fails the test.
    pub(crate) fn request_with_id(&mut self, id: Value, method: &str, params: Value) -> Value {
        let mut m = json!({ "jsonrpc": "2.0", "id": id.clone(), "method": method });
        if !params.is_null() {
            m["params"] = params;
        }
        self.send(&m);
        let response = self.recv();
        assert_eq!(
            response["id"], id,
            "expected the response to `{method}` (id {id}), got {response}"
        );
        let has_result = response.get("result").is_some();
        let has_error = response.get("error").is_some();
        assert!(
            has_result != has_error,
            "a response has exactly one of `result` and `error`: {response}"
        );
        response
    }

    /// Sends a request (`params` omitted when `Null`) and returns its response message.
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id();
        self.request_with_id(Value::from(id), method, params)
    }

    /// Sends a request and returns its `result`; an error response fails the test.
    pub(crate) fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params);
        match response.get("result") {
            Some(r) => r.clone(),
            None => panic!("`{method}` failed: {response}"),
        }
    }

    /// Sends a request and returns its `error` object; a success fails the test.
    pub(crate) fn rpc_error(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params);
        match response.get("error") {
            Some(e) => {
                assert!(e["code"].is_i64(), "error code must be an integer: {e}");
                assert!(
                    e["message"].is_string(),
                    "error message must be a string: {e}"
                );
                e.clone()
            }
            None => panic!("`{method}` was expected to fail: {response}"),
        }
    }

    /// Calls a tool and returns its `CallToolResult`.
    pub(crate) fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.result(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        )
    }

    /// The `tools/list` result's tools.
    pub(crate) fn tools(&mut self) -> Vec<Value> {
        let list = self.result("tools/list", Value::Null);
        assert!(
            list.get("nextCursor").is_none(),
            "one page expected: {list}"
        );
        list["tools"]
            .as_array()
            .expect("`tools` is an array")
            .clone()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.stdin = None;
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Lines written before the end must be protocol too, read or not.
        let deadline = Instant::now() + Duration::from_secs(2);
        let mut bad = None;
        while let Ok(line) = self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            if let Line::NotJson(text) = line {
                bad.get_or_insert(text);
            }
        }
        if let Some(text) = bad
            && !thread::panicking()
        {
            panic!("stdout carried a line that is not JSON: {text:?}");
        }
    }
}

/// The text of a tool result's text blocks, joined by newlines.
pub(crate) fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("`content` must be an array: {result}"))
        .iter()
        .filter(|b| b["type"] == "text")
        .map(|b| b["text"].as_str().expect("a text block has `text`"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether a tool result has `isError: true`.
pub(crate) fn is_error(result: &Value) -> bool {
    result.get("isError") == Some(&Value::Bool(true))
}

/// Asserts that a tool result is an error and returns its text.
pub(crate) fn error_text(result: &Value) -> String {
    assert!(is_error(result), "expected `isError: true`: {result}");
    let t = text(result);
    assert!(!t.is_empty(), "an error result explains itself: {result}");
    t
}

/// Whether an error text names `field` (as `field: …` on a line, or `` `field` ``).
pub(crate) fn names_field(text: &str, field: &str) -> bool {
    text.lines()
        .any(|l| l.trim_start().starts_with(&format!("{field}:")))
        || text.contains(&format!("`{field}`"))
}

/// An object from a JSON literal that must be one.
pub(crate) fn obj(v: &Value) -> &Map<String, Value> {
    v.as_object()
        .unwrap_or_else(|| panic!("expected an object, got {v}"))
}

/// The outcome of a one-shot command line.
#[derive(Debug)]
pub(crate) struct Output {
    /// The exit status.
    pub(crate) status: ExitStatus,
    /// Everything written to stdout.
    pub(crate) stdout: String,
    /// Everything written to stderr.
    pub(crate) stderr: String,
}

impl Output {
    /// The exit code (a signal fails the test).
    pub(crate) fn code(&self) -> i32 {
        self.status
            .code()
            .unwrap_or_else(|| panic!("killed by a signal: {self:?}"))
    }

    /// stdout parsed as one JSON document.
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {:?}", self.stdout))
    }
}

/// Runs `bin args…` with stdin closed and waits (bounded) for it to finish.
pub(crate) fn run(bin: &str, args: &[&str]) -> Output {
    let mut child = Command::new(bin)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot spawn {bin}: {e}"));
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let out_thread = thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err_thread = thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        match child.try_wait().expect("try_wait") {
            Some(status) => break status,
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "`{bin} {}` did not finish within {TIMEOUT:?}",
                    args.join(" ")
                );
            }
            None => thread::sleep(Duration::from_millis(10)),
        }
    };
    let stdout =
        String::from_utf8(out_thread.join().expect("stdout reader")).expect("UTF-8 stdout");
    let stderr = String::from_utf8_lossy(&err_thread.join().expect("stderr reader")).into_owned();
    Output {
        status,
        stdout,
        stderr,
    }
}
