//! The `files` example in both protocol versions: each scenario runs with the 2025-11-25
//! handshake (`…_2025`) and stateless with the per-request `_meta` of 2026-07-28 (`…_2026`),
//! over real stdio, and over Streamable HTTP where who the client is matters (`login`).
//!
//! In 2026-07-28 a tool that asks the user (elicitation) or the model (sampling) ends its
//! request with an `input_required` result; the client retries with the answers and the
//! sealed `requestState`. These tests check the first response's shape, the retry's result,
//! that a tampered or foreign state is refused, and that no side effect happens twice.

mod common;

use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::stateless::{
    HttpServer, Version, VersionClient, exchange_2026, one_input_request, params_2026,
    request_2026, retry_params, same_tools_in_both_versions, tampered, with_capabilities,
};
use common::{Proc, QUIET, error_text, is_error, text};
use serde_json::{Value, json};

/// The `files` example server.
const FILES: &str = env!("CARGO_BIN_EXE_files");

/// The password every test server is started with.
const PASSWORD: &str = "open-sesame";

const A_TXT: &str = "alpha\n";
const B_MD: &str = "# Bravo\n\nThe second file, in Markdown.\n";

/// The tools every client has, sorted.
const VISIBLE: [&str; 5] = [
    "list_dir",
    "login",
    "read_file",
    "reindex",
    "summarize_file",
];

/// The tools `login` enables.
const HIDDEN: [&str; 2] = ["delete_file", "write_file"];

/// Alice's and Bob's bearer tokens on the HTTP servers that require one.
const ALICE: &str = "alice-token-7f3a9c";
const BOB: &str = "bob-token-51d2e8";

/// A temporary root folder (`a.txt`, `b.md`, `sub/`), removed when dropped.
struct Fixture {
    base: PathBuf,
    root: PathBuf,
}

impl Fixture {
    fn new(name: &str) -> Fixture {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let base = std::env::temp_dir().join(format!(
            "mcp-files-versions-{name}-{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let root = base.join("root");
        fs::create_dir_all(root.join("sub")).expect("create the root");
        fs::write(root.join("a.txt"), A_TXT).unwrap();
        fs::write(root.join("b.md"), B_MD).unwrap();
        Fixture { base, root }
    }

    fn args(&self) -> [&str; 4] {
        [
            "--root",
            self.root.to_str().expect("a UTF-8 temporary folder"),
            "--password",
            PASSWORD,
        ]
    }

    /// The server on this root over stdio, in `version`, the client declaring `capabilities`.
    fn client(&self, version: Version, capabilities: Value) -> VersionClient {
        VersionClient::start(FILES, &self.args(), version, capabilities)
    }

    /// The server on this root over HTTP, with these environment variables.
    fn http(&self, env: &[(&str, &str)]) -> HttpServer {
        HttpServer::start(FILES, &self.args(), env)
    }

    fn exists(&self, rel: &str) -> bool {
        self.root.join(rel).exists()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.base);
    }
}

/// The sorted names of some tools.
fn names(tools: &[Value]) -> Vec<String> {
    let mut n: Vec<String> = tools
        .iter()
        .map(|t| t["name"].as_str().expect("a tool has a name").to_owned())
        .collect();
    n.sort();
    n
}

/// The visible tools and the ones `login` enables, sorted.
fn all_tools() -> Vec<String> {
    let mut all: Vec<String> = VISIBLE
        .iter()
        .chain(&HIDDEN)
        .map(|s| s.to_string())
        .collect();
    all.sort();
    all
}

fn count_method(messages: &[Value], method: &str) -> usize {
    messages.iter().filter(|m| m["method"] == method).count()
}

/// The successful text of a tool result.
fn ok_text(result: &Value) -> String {
    assert!(!is_error(result), "expected success: {result}");
    text(result)
}

/// Asserts the question `delete_file` asks before deleting `path`: a form with one required
/// boolean, `confirm`, whose message names the file. The same in both versions.
fn assert_confirm_question(params: &Value, path: &str) {
    assert!(
        params["message"].as_str().is_some_and(|m| m.contains(path)),
        "the message names the file: {params}"
    );
    let schema = &params["requestedSchema"];
    assert_eq!(schema["type"], "object", "{params}");
    assert_eq!(
        schema["properties"]["confirm"]["type"], "boolean",
        "{params}"
    );
    assert_eq!(schema["required"], json!(["confirm"]), "{params}");
}

/// Asserts the request `summarize_file` makes of the client's model for a file holding
/// `content`. The same in both versions.
fn assert_summary_question(params: &Value, content: &str) {
    let messages = params["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 1, "{params}");
    assert_eq!(messages[0]["role"], "user", "{params}");
    assert_eq!(messages[0]["content"]["type"], "text", "{params}");
    assert!(
        messages[0]["content"]["text"]
            .as_str()
            .is_some_and(|t| t.contains(content)),
        "the prompt holds the file: {params}"
    );
    assert!(
        params["maxTokens"].as_u64().is_some_and(|n| n > 0),
        "an integer `maxTokens`: {params}"
    );
}

/// The model's answer the tests give to `summarize_file`.
fn summary() -> Value {
    json!({
        "role": "assistant",
        "content": { "type": "text", "text": "A summary." },
        "model": "test-model",
        "stopReason": "endTurn"
    })
}

/// Asserts that a response is the refusal of a `requestState` that fails verification.
fn assert_state_refused(response: &Value) {
    let e = &response["error"];
    assert_eq!(
        e["code"], -32602,
        "a bad requestState is invalid params: {response}"
    );
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("requestState")),
        "{response}"
    );
}

// ---------------------------------------------------------------------------------------------
// tools/list and the main tools

#[test]
fn files_lists_the_same_tools_in_both_versions() {
    let fx = Fixture::new("same-tools");
    let tools = same_tools_in_both_versions(FILES, &fx.args());
    assert_eq!(names(&tools), VISIBLE, "hidden tools are not listed");
    let list_dir = tools.iter().find(|t| t["name"] == "list_dir").unwrap();
    assert_eq!(list_dir["outputSchema"]["type"], "object", "{list_dir}");
}

fn files_read_and_list(version: Version) {
    let fx = Fixture::new("read-list");
    let mut c = fx.client(version, json!({}));
    let r = c.call("list_dir", json!({}));
    let listing = &r["structuredContent"];
    assert_eq!(listing["path"], ".", "{r}");
    let entries: Vec<(&str, &str)> = listing["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| (e["name"].as_str().unwrap(), e["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        entries,
        [("a.txt", "file"), ("b.md", "file"), ("sub", "dir")],
        "{r}"
    );
    let copy: Value = serde_json::from_str(&text(&r)).expect("the text copy is JSON");
    assert_eq!(&copy, listing);
    assert_eq!(
        ok_text(&c.call("read_file", json!({ "path": "a.txt" }))),
        A_TXT
    );
    let t = error_text(&c.call("read_file", json!({ "path": "../root/a.txt" })));
    assert!(t.contains("PATH_REFUSED"), "{t}");
}

#[test]
fn files_read_and_list_2025() {
    files_read_and_list(Version::V2025_11_25);
}

#[test]
fn files_read_and_list_2026() {
    files_read_and_list(Version::V2026_07_28);
}

// ---------------------------------------------------------------------------------------------
// login reveals write_file and delete_file

/// Logs in (a wrong password first) and checks what changes; returns the notifications seen
/// around the successful login.
fn log_in(c: &mut VersionClient) -> Vec<Value> {
    assert_eq!(names(&c.tools()), VISIBLE);
    let t = error_text(&c.call("login", json!({ "password": "wrong" })));
    assert!(t.contains("BAD_PASSWORD"), "{t}");
    let (mut seen, response) = c.exchange(
        "tools/call",
        json!({ "name": "login", "arguments": { "password": PASSWORD } }),
    );
    assert!(
        ok_text(&response["result"]).contains("Authenticated"),
        "{response}"
    );
    seen.extend(c.p.drain_for(QUIET));
    assert_eq!(names(&c.tools()), all_tools());
    seen
}

/// What the hidden tools do once enabled (the client has no elicitation: no question).
fn write_and_delete(c: &mut VersionClient, fx: &Fixture) {
    let t = ok_text(&c.call(
        "write_file",
        json!({ "path": "new.txt", "content": "fresh" }),
    ));
    assert!(t.contains("new.txt"), "{t}");
    assert_eq!(
        fs::read_to_string(fx.root.join("new.txt")).unwrap(),
        "fresh"
    );
    let (before, response) = c.exchange(
        "tools/call",
        json!({ "name": "delete_file", "arguments": { "path": "new.txt" } }),
    );
    assert!(
        before.is_empty(),
        "no question without elicitation: {before:?}"
    );
    assert!(ok_text(&response["result"]).contains("deleted new.txt"));
    assert!(!fx.exists("new.txt"));
}

#[test]
fn files_login_reveals_write_and_delete_2025() {
    let fx = Fixture::new("login-2025");
    let mut c = fx.client(Version::V2025_11_25, json!({}));
    let seen = log_in(&mut c);
    // The session hears that its list changed.
    assert_eq!(
        count_method(&seen, "notifications/tools/list_changed"),
        1,
        "{seen:?}"
    );
    write_and_delete(&mut c, &fx);
}

#[test]
fn files_login_reveals_write_and_delete_2026() {
    let fx = Fixture::new("login-2026");
    let mut c = fx.client(Version::V2026_07_28, json!({}));
    // Changes are heard on a `subscriptions/listen` stream (stdio: the one client's).
    let listen = json!("tools-listener");
    c.p.send_request(
        &listen,
        "subscriptions/listen",
        params_2026(json!({ "notifications": { "toolsListChanged": true } })),
    );
    let ack = c.p.recv();
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    let seen = log_in(&mut c);
    let changes: Vec<&Value> = seen
        .iter()
        .filter(|m| m["method"] == "notifications/tools/list_changed")
        .collect();
    assert_eq!(changes.len(), 1, "{seen:?}");
    assert_eq!(
        changes[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], listen,
        "tagged with the listen request's id: {seen:?}"
    );
    write_and_delete(&mut c, &fx);
    // Logging in again changes nothing, so nothing is announced.
    let (before, response) = c.exchange(
        "tools/call",
        json!({ "name": "login", "arguments": { "password": PASSWORD } }),
    );
    assert!(!is_error(&response["result"]), "{response}");
    assert!(before.is_empty(), "{before:?}");
    c.p.expect_silence();
}

// ---------------------------------------------------------------------------------------------
// delete_file asks first (elicitation)

#[test]
fn files_delete_asks_first_2025() {
    let fx = Fixture::new("delete-2025");
    fs::write(fx.root.join("doomed.txt"), "bye").unwrap();
    fs::write(fx.root.join("kept.txt"), "stay").unwrap();
    let mut c = fx.client(Version::V2025_11_25, json!({ "elicitation": {} }));
    log_in(&mut c);
    for (path, answer, outcome) in [
        (
            "kept.txt",
            json!({ "action": "decline" }),
            "kept.txt was not deleted",
        ),
        (
            "doomed.txt",
            json!({ "action": "accept", "content": { "confirm": true } }),
            "deleted doomed.txt",
        ),
    ] {
        let id = json!(format!("delete-{path}"));
        c.p.send_request(
            &id,
            "tools/call",
            json!({ "name": "delete_file", "arguments": { "path": path } }),
        );
        let (notes, request) = c.p.next_non_notification();
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(request["method"], "elicitation/create", "{request}");
        assert_confirm_question(&request["params"], path);
        assert!(fx.exists(path), "nothing is deleted while the user decides");
        c.p.respond(&request["id"], answer);
        let (_, response) = c.p.until_response(&id);
        assert_eq!(ok_text(&response["result"]), outcome);
    }
    assert!(!fx.exists("doomed.txt"));
    assert!(fx.exists("kept.txt"));
}

#[test]
fn files_delete_asks_first_2026() {
    let fx = Fixture::new("delete-2026");
    fs::write(fx.root.join("doomed.txt"), "bye").unwrap();
    fs::write(fx.root.join("kept.txt"), "stay").unwrap();
    let mut c = fx.client(Version::V2026_07_28, json!({ "elicitation": {} }));
    log_in(&mut c);
    let call = with_capabilities(
        json!({ "name": "delete_file", "arguments": { "path": "doomed.txt" } }),
        json!({ "elicitation": {} }),
    );

    // Round 1: the question, as an input request; nothing deleted.
    let first = request_2026(&mut c.p, "tools/call", call.clone());
    let result = &first["result"];
    let (key, params, state) = one_input_request(result, "elicitation/create");
    assert_confirm_question(params, "doomed.txt");
    assert_eq!(params["mode"], "form", "{result}");
    assert!(fx.exists("doomed.txt"));
    let accept = json!({ key.as_str(): { "action": "accept", "content": { "confirm": true } } });

    // A tampered state is refused, whatever the answers say; nothing deleted.
    for bad in tampered(state) {
        let response = request_2026(
            &mut c.p,
            "tools/call",
            retry_params(&call, accept.clone(), &bad),
        );
        assert_state_refused(&response);
        assert!(fx.exists("doomed.txt"), "{response}");
    }
    // So is the state of this request sent with another (another file to delete).
    let mut other = call.clone();
    other["arguments"]["path"] = json!("kept.txt");
    let response = request_2026(
        &mut c.p,
        "tools/call",
        retry_params(&other, accept.clone(), state),
    );
    assert_state_refused(&response);
    assert!(fx.exists("kept.txt"), "{response}");
    // An answer that is no elicitation result is a protocol error.
    let response = request_2026(
        &mut c.p,
        "tools/call",
        retry_params(&call, json!({ key.as_str(): { "action": "maybe" } }), state),
    );
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert!(fx.exists("doomed.txt"), "{response}");

    // Declined: kept.
    let response = request_2026(
        &mut c.p,
        "tools/call",
        retry_params(
            &call,
            json!({ key.as_str(): { "action": "decline" } }),
            state,
        ),
    );
    let done = &response["result"];
    assert_eq!(done["resultType"], "complete", "{response}");
    assert_eq!(ok_text(done), "doomed.txt was not deleted");
    assert!(fx.exists("doomed.txt"));

    // Accepted: deleted, once; the other file untouched.
    let response = request_2026(
        &mut c.p,
        "tools/call",
        retry_params(&call, accept.clone(), state),
    );
    let done = &response["result"];
    assert_eq!(done["resultType"], "complete", "{response}");
    assert!(done.get("inputRequests").is_none(), "{response}");
    assert_eq!(ok_text(done), "deleted doomed.txt");
    assert!(!fx.exists("doomed.txt"));
    assert!(fx.exists("kept.txt"));
    // The same retry again finds nothing to delete: a tool error, no other file touched.
    let response = request_2026(&mut c.p, "tools/call", retry_params(&call, accept, state));
    assert!(is_error(&response["result"]), "{response}");
    assert!(fx.exists("kept.txt"));
    let listing = c.call("list_dir", json!({}));
    assert_eq!(
        listing["structuredContent"]["entries"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
}

// ---------------------------------------------------------------------------------------------
// summarize_file asks the client's model (sampling)

#[test]
fn files_summarize_asks_the_model_2025() {
    let fx = Fixture::new("summary-2025");
    let mut c = fx.client(Version::V2025_11_25, json!({ "sampling": {} }));
    let id = json!("summary");
    c.p.send_request(
        &id,
        "tools/call",
        json!({ "name": "summarize_file", "arguments": { "path": "b.md" } }),
    );
    let (_, request) = c.p.next_non_notification();
    assert_eq!(request["method"], "sampling/createMessage", "{request}");
    assert_summary_question(&request["params"], B_MD);
    c.p.respond(&request["id"], summary());
    let (_, response) = c.p.until_response(&id);
    assert_eq!(ok_text(&response["result"]), "A summary.");
    // Without the sampling capability: the tool's error.
    let mut c = fx.client(Version::V2025_11_25, json!({}));
    let t = error_text(&c.call("summarize_file", json!({ "path": "b.md" })));
    assert!(t.contains("`sampling`"), "{t}");
}

#[test]
fn files_summarize_asks_the_model_2026() {
    let fx = Fixture::new("summary-2026");
    let mut c = fx.client(Version::V2026_07_28, json!({ "sampling": {} }));
    let call = with_capabilities(
        json!({ "name": "summarize_file", "arguments": { "path": "b.md" } }),
        json!({ "sampling": {} }),
    );
    let first = request_2026(&mut c.p, "tools/call", call.clone());
    let (key, params, state) = one_input_request(&first["result"], "sampling/createMessage");
    assert_summary_question(params, B_MD);
    let answers = json!({ key.as_str(): summary() });

    for bad in tampered(state) {
        let response = request_2026(
            &mut c.p,
            "tools/call",
            retry_params(&call, answers.clone(), &bad),
        );
        assert_state_refused(&response);
    }
    // An answer under another key is no answer: the question is asked again.
    let response = request_2026(
        &mut c.p,
        "tools/call",
        retry_params(&call, json!({ "not-asked": summary() }), state),
    );
    let (again, _, _) = one_input_request(&response["result"], "sampling/createMessage");
    assert_eq!(again, key);

    let response = request_2026(&mut c.p, "tools/call", retry_params(&call, answers, state));
    let done = &response["result"];
    assert_eq!(done["resultType"], "complete", "{response}");
    assert_eq!(ok_text(done), "A summary.");

    // Without the sampling capability: -32021, naming the capability needed.
    let response = request_2026(
        &mut c.p,
        "tools/call",
        with_capabilities(
            json!({ "name": "summarize_file", "arguments": { "path": "b.md" } }),
            json!({}),
        ),
    );
    let e = &response["error"];
    assert_eq!(e["code"], -32021, "{response}");
    assert!(
        e["data"]["requiredCapabilities"]["sampling"].is_object(),
        "{response}"
    );
}

// ---------------------------------------------------------------------------------------------
// reindex: progress, logs, cancellation

/// The `(level, data)` of the log messages among `messages`.
fn logs(messages: &[Value]) -> Vec<(String, Value)> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| {
            (
                m["params"]["level"].as_str().expect("a level").to_owned(),
                m["params"]["data"].clone(),
            )
        })
        .collect()
}

/// Runs `reindex` with a progress token (and `_meta` entries of the version) and checks its
/// notifications; returns them.
fn reindex_with(c: &mut VersionClient, meta: Value) -> Vec<Value> {
    let (before, response) = c.exchange(
        "tools/call",
        json!({ "name": "reindex", "arguments": {}, "_meta": meta }),
    );
    assert!(
        ok_text(&response["result"]).starts_with("indexed "),
        "{response}"
    );
    let progress: Vec<&Value> = before
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 10, "{before:?}");
    for (i, n) in progress.iter().enumerate() {
        assert_eq!(n["params"]["progressToken"], 7, "{n}");
        assert_eq!(n["params"]["progress"].as_u64(), Some(i as u64 + 1), "{n}");
        assert_eq!(n["params"]["total"].as_u64(), Some(10), "{n}");
    }
    before
}

#[test]
fn files_reindex_reports_progress_and_logs_2025() {
    let fx = Fixture::new("reindex-2025");
    let mut c = fx.client(Version::V2025_11_25, json!({}));
    // The session's level (set by `logging/setLevel`) filters the logs of every call.
    assert_eq!(
        c.p.result("logging/setLevel", json!({ "level": "error" })),
        json!({})
    );
    let before = reindex_with(&mut c, json!({ "progressToken": 7 }));
    assert!(logs(&before).is_empty(), "{before:?}");
    assert_eq!(
        c.p.result("logging/setLevel", json!({ "level": "info" })),
        json!({})
    );
    let before = reindex_with(&mut c, json!({ "progressToken": 7 }));
    assert_eq!(
        logs(&before),
        [
            ("info".to_owned(), json!("reindex started")),
            ("info".to_owned(), json!("reindex finished"))
        ],
        "{before:?}"
    );
}

#[test]
fn files_reindex_reports_progress_and_logs_2026() {
    let fx = Fixture::new("reindex-2026");
    let mut c = fx.client(Version::V2026_07_28, json!({}));
    // No log level in the request's `_meta`: no log messages for it.
    let before = reindex_with(&mut c, json!({ "progressToken": 7 }));
    assert!(logs(&before).is_empty(), "{before:?}");
    let level = "io.modelcontextprotocol/logLevel";
    let before = reindex_with(&mut c, json!({ "progressToken": 7, level: "info" }));
    assert_eq!(
        logs(&before),
        [
            ("info".to_owned(), json!("reindex started")),
            ("info".to_owned(), json!("reindex finished"))
        ],
        "{before:?}"
    );
    let before = reindex_with(&mut c, json!({ "progressToken": 7, level: "error" }));
    assert!(logs(&before).is_empty(), "{before:?}");
    // A level that does not exist is invalid params.
    let (_, response) = exchange_2026(
        &mut c.p,
        "tools/call",
        json!({ "name": "reindex", "arguments": {}, "_meta": { level: "loud" } }),
    );
    assert_eq!(response["error"]["code"], -32602, "{response}");
}

/// Starts `reindex` (its request shaped by `params`), cancels it after its first progress
/// notification, and checks it is never answered and stops reporting.
fn reindex_cancelled(p: &mut Proc, params: Value) {
    let id = json!("reindex-to-cancel");
    p.send_request(&id, "tools/call", params);
    // A log message may come first (2025-11-25 sessions log at `info` until told otherwise).
    loop {
        let m = p.recv();
        assert!(m["id"] != id, "answered before it could be cancelled: {m}");
        if m["method"] == "notifications/progress" {
            break;
        }
    }
    p.notify(
        "notifications/cancelled",
        json!({ "requestId": id, "reason": "test" }),
    );
    // The whole run takes about a second: listen for longer than that.
    let after = p.drain_for(Duration::from_millis(1500));
    assert!(
        after.iter().all(|m| m["id"] != id),
        "a cancelled request is not answered: {after:?}"
    );
    assert!(
        count_method(&after, "notifications/progress") < 9,
        "progress stops when cancelled: {after:?}"
    );
}

#[test]
fn files_reindex_cancelled_2025() {
    let fx = Fixture::new("cancel-2025");
    let mut c = fx.client(Version::V2025_11_25, json!({}));
    reindex_cancelled(
        &mut c.p,
        json!({ "name": "reindex", "arguments": {}, "_meta": { "progressToken": 1 } }),
    );
    assert_eq!(
        ok_text(&c.call("read_file", json!({ "path": "a.txt" }))),
        A_TXT
    );
}

#[test]
fn files_reindex_cancelled_2026() {
    let fx = Fixture::new("cancel-2026");
    let mut c = fx.client(Version::V2026_07_28, json!({}));
    reindex_cancelled(
        &mut c.p,
        params_2026(json!({ "name": "reindex", "arguments": {}, "_meta": { "progressToken": 1 } })),
    );
    assert_eq!(
        ok_text(&c.call("read_file", json!({ "path": "a.txt" }))),
        A_TXT
    );
}

// ---------------------------------------------------------------------------------------------
// Over HTTP: who logged in

#[test]
fn files_login_over_http_is_per_session_2025() {
    let fx = Fixture::new("http-2025");
    let server = fx.http(&[]);
    let one = server.session_2025(None, json!({}));
    let two = server.session_2025(None, json!({}));
    let tools = |session: &str| {
        let reply = server.request_2025(Some(session), None, "tools/list", json!({}));
        names(reply.result()["tools"].as_array().expect("tools"))
    };
    assert_eq!(tools(&one), VISIBLE);
    let reply = server.request_2025(
        Some(&one),
        None,
        "tools/call",
        json!({ "name": "login", "arguments": { "password": PASSWORD } }),
    );
    assert!(
        ok_text(reply.result()).contains("Authenticated"),
        "{reply:?}"
    );
    assert_eq!(tools(&one), all_tools());
    assert_eq!(tools(&two), VISIBLE, "another session is not logged in");
    let reply = server.request_2025(
        Some(&one),
        None,
        "tools/call",
        json!({ "name": "write_file", "arguments": { "path": "w.txt", "content": "one" } }),
    );
    ok_text(reply.result());
    let reply = server.request_2025(
        Some(&two),
        None,
        "tools/call",
        json!({ "name": "write_file", "arguments": { "path": "w.txt", "content": "two" } }),
    );
    assert_eq!(reply.error()["code"], -32602, "{reply:?}");
    assert_eq!(fs::read_to_string(fx.root.join("w.txt")).unwrap(), "one");
}

/// The tools a 2026-07-28 client with `token` is shown over HTTP.
fn http_tools_2026(server: &HttpServer, token: Option<&str>) -> Vec<String> {
    let reply = server.request_2026(token, "tools/list", json!({}));
    assert_eq!(reply.status, 200, "{reply:?}");
    names(reply.result()["tools"].as_array().expect("tools"))
}

#[test]
fn files_login_over_http_needs_a_bearer_token_2026() {
    let fx = Fixture::new("http-bearer");
    fs::write(fx.root.join("doomed.txt"), "bye").unwrap();
    let tokens = format!("alice:{ALICE},bob:{BOB}");
    let server = fx.http(&[("MCP_TOOL_BEARER_TOKENS", &tokens)]);

    // Without a token: 401, saying how to authenticate.
    let reply = server.request_2026(None, "tools/list", json!({}));
    assert_eq!(reply.status, 401, "{reply:?}");
    assert!(
        reply
            .header("www-authenticate")
            .is_some_and(|v| v.starts_with("Bearer")),
        "{reply:?}"
    );

    // Alice logs in: her requests see the hidden tools, Bob's do not.
    assert_eq!(http_tools_2026(&server, Some(ALICE)), VISIBLE);
    let reply = server.request_2026(
        Some(ALICE),
        "tools/call",
        json!({ "name": "login", "arguments": { "password": PASSWORD } }),
    );
    assert!(
        ok_text(reply.result()).contains("Authenticated"),
        "{reply:?}"
    );
    assert_eq!(reply.result()["resultType"], "complete");
    assert!(
        reply.header("mcp-session-id").is_none(),
        "no session: {reply:?}"
    );
    assert_eq!(http_tools_2026(&server, Some(ALICE)), all_tools());
    assert_eq!(http_tools_2026(&server, Some(BOB)), VISIBLE);
    let write =
        json!({ "name": "write_file", "arguments": { "path": "w.txt", "content": "alice" } });
    let reply = server.request_2026(Some(BOB), "tools/call", write.clone());
    assert_eq!(reply.error()["code"], -32602, "{reply:?}");
    assert!(!fx.exists("w.txt"));
    let reply = server.request_2026(Some(ALICE), "tools/call", write);
    ok_text(reply.result());
    assert_eq!(fs::read_to_string(fx.root.join("w.txt")).unwrap(), "alice");

    // Alice deletes a file: asked first, through the input_required round trip.
    let call = with_capabilities(
        json!({ "name": "delete_file", "arguments": { "path": "doomed.txt" } }),
        json!({ "elicitation": {} }),
    );
    let first = server.request_2026(Some(ALICE), "tools/call", call.clone());
    assert_eq!(first.status, 200, "{first:?}");
    let (key, params, state) = one_input_request(first.result(), "elicitation/create");
    assert_confirm_question(params, "doomed.txt");
    let accept = json!({ key.as_str(): { "action": "accept", "content": { "confirm": true } } });
    for bad in tampered(state) {
        let reply = server.request_2026(
            Some(ALICE),
            "tools/call",
            retry_params(&call, accept.clone(), &bad),
        );
        assert_state_refused(reply.response());
        assert!(fx.exists("doomed.txt"));
    }
    let reply = server.request_2026(
        Some(ALICE),
        "tools/call",
        retry_params(&call, accept, state),
    );
    assert_eq!(ok_text(reply.result()), "deleted doomed.txt");
    assert!(!fx.exists("doomed.txt"));
}

#[test]
fn files_anonymous_http_client_never_sees_the_hidden_tools_2026() {
    let fx = Fixture::new("http-anonymous");
    fs::write(fx.root.join("kept.txt"), "stay").unwrap();
    let server = fx.http(&[]);
    assert_eq!(http_tools_2026(&server, None), VISIBLE);
    // Whatever `login` answers, nothing is unlocked for a client nobody knows.
    let reply = server.request_2026(
        None,
        "tools/call",
        json!({ "name": "login", "arguments": { "password": PASSWORD } }),
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(http_tools_2026(&server, None), VISIBLE);
    let reply = server.request_2026(
        None,
        "tools/call",
        json!({ "name": "delete_file", "arguments": { "path": "kept.txt" } }),
    );
    assert_eq!(reply.error()["code"], -32602, "{reply:?}");
    assert!(fx.exists("kept.txt"));

    // Sampling works over HTTP too: the round trip, with `Mcp-Name` on both requests.
    let call = with_capabilities(
        json!({ "name": "summarize_file", "arguments": { "path": "a.txt" } }),
        json!({ "sampling": {} }),
    );
    let first = server.request_2026(None, "tools/call", call.clone());
    let (key, params, state) = one_input_request(first.result(), "sampling/createMessage");
    assert_summary_question(params, A_TXT);
    let reply = server.request_2026(
        None,
        "tools/call",
        retry_params(&call, json!({ key.as_str(): summary() }), state),
    );
    assert_eq!(ok_text(reply.result()), "A summary.");
    assert_eq!(reply.result()["resultType"], "complete");
}

#[test]
fn files_anonymous_login_over_http_fails_clearly_2026() {
    let fx = Fixture::new("http-anonymous-login");
    let server = fx.http(&[]);
    let reply = server.request_2026(
        None,
        "tools/call",
        json!({ "name": "login", "arguments": { "password": PASSWORD } }),
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    let result = reply.result();
    assert!(
        is_error(result),
        "a login that enables nothing must not say it did: {result}"
    );
    let t = text(result);
    assert!(
        !t.contains("are enabled"),
        "it must not claim the tools are enabled: {t}"
    );
    assert!(
        t.contains("authenticated") || t.contains("session"),
        "it says what is missing (an authenticated client, or a session): {t}"
    );
    assert_eq!(http_tools_2026(&server, None), VISIBLE);
}
