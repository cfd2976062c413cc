//! Several replicas behind nginx, sharing a Redis, as `deploy/replicas.sh` runs them: every test
//! starts its own (real redis-server, real nginx, three example servers on loopback ports)
//! through that script, and stops them.
//!
//! - 2026-07-28: the input-required rounds of one request answered by three different replicas
//!   (sealed `requestState` under the shared key); a task made on one replica fetched after that
//!   replica was killed; a `subscriptions/listen` stream hearing changes raised on another
//!   replica, and reconnecting to another replica when its own dies; a 2025-11-25 session's task
//!   found on a replica that took the session up before the task was made.
//! - 2025-11-25: a session outliving the replica it was opened on (taken up from Redis with its
//!   log level), and a client's answer to an elicitation reaching the replica that waits for it.
//! - Load through nginx, both versions, with a replica killed and restarted in the middle: every
//!   call answered once, or failed in a way the client retries (with a new id), none lost.
//! - State every replica sees alike: a rate limit of L admits L, and two anonymous clients
//!   behind nginx (127.0.0.1 and 127.0.0.2) have a share each, which a spoofed
//!   `X-Forwarded-For` does not change; a subject's tool selection and a kept result read on
//!   every replica, a restarted one included, the result by its principal only; a 2025-11-25
//!   session taken up on another replica with another token of its principal's, and served
//!   there to both its tokens, not to another subject.
//!
//! They need `nginx` and `redis-server` (Debian packages; `.ci/run` installs them).

use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcp_tool_tests::{TempDir, example_bin};
use serde_json::{Value, json};

const V2026_07_28: &str = "2026-07-28";
const V2025_11_25: &str = "2025-11-25";
const WAIT: Duration = Duration::from_secs(10);
const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// One cluster at a time: each is a Redis, an nginx and several servers, and killing and
/// restarting replicas beside another cluster's start made port and timing races on a
/// two-core machine.
static BUSY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A cluster's turn: taken before it starts (waiting for the one before to stop), given back
/// when dropped.
struct Turn;

impl Turn {
    fn take() -> Turn {
        while BUSY
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            std::thread::sleep(Duration::from_millis(50));
        }
        Turn
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        BUSY.store(false, Ordering::SeqCst);
    }
}

/// Redis, N replicas of an example and nginx, started by `deploy/replicas.sh`; stopped when
/// dropped.
struct Cluster {
    dir: TempDir,
    bin: &'static str,
    env: Vec<(String, String)>,
    port: u16,
    replica_ports: Vec<u16>,
    http: Http,
    /// This cluster's turn, given back after it is stopped (fields drop after `Drop::drop`).
    _turn: Turn,
}

fn free_ports(n: usize) -> Vec<u16> {
    // Held together, so the system gives n different ports; released just before use.
    let listeners: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("a free loopback port"))
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().expect("an address").port())
        .collect()
}

fn script() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/replicas.sh"
    ))
}

impl Cluster {
    fn up(example: &str, replicas: usize, env: &[(&str, &str)]) -> Cluster {
        let bin = example_bin(example);
        let turn = Turn::take();
        let ports = free_ports(replicas + 2);
        let cluster = Cluster {
            dir: TempDir::new("replicas"),
            bin,
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            port: ports[0],
            replica_ports: ports[2..].to_vec(),
            http: Http,
            _turn: turn,
        };
        let redis_port = ports[1].to_string();
        cluster.run(
            &["up", &replicas.to_string()],
            &[("REDIS_PORT", &redis_port)],
        );
        cluster
    }

    fn run(&self, args: &[&str], more: &[(&str, &str)]) {
        let ports: Vec<String> = self.replica_ports.iter().map(u16::to_string).collect();
        let output = Command::new("bash")
            .arg(script())
            .args(args)
            .env("RUN_DIR", self.dir.path())
            .env("PORT", self.port.to_string())
            .env("REPLICA_PORTS", ports.join(" "))
            .env("MCP_SERVER", self.bin)
            .env_remove("MCP_TOOL_STATE_KEY")
            .env_remove("MCP_TOOL_BEARER_TOKENS")
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .envs(more.iter().copied())
            .output()
            .expect("bash runs deploy/replicas.sh");
        if !output.status.success() {
            let logs = std::fs::read_dir(self.dir.path().join("logs"))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| {
                    format!(
                        "--- {}\n{}",
                        e.path().display(),
                        std::fs::read_to_string(e.path()).unwrap_or_default()
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            panic!(
                "deploy/replicas.sh {args:?} failed ({}):\n{}{}\n{logs}",
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }

    /// nginx's endpoint.
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Replica `i`'s own endpoint (1-based).
    fn replica(&self, i: usize) -> String {
        format!("http://127.0.0.1:{}/mcp", self.replica_ports[i - 1])
    }

    /// Kills replica `i` at once (SIGKILL).
    fn kill(&self, i: usize) {
        self.run(&["kill", &i.to_string()], &[]);
    }

    fn start(&self, i: usize) {
        self.run(&["start", &i.to_string()], &[]);
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("down")
            .env("RUN_DIR", self.dir.path())
            .output();
    }
}

/// One HTTP answer: status, session id, the JSON-RPC messages of its body.
#[derive(Debug)]
struct Reply {
    status: u16,
    session: Option<String>,
    messages: Vec<Value>,
}

impl Reply {
    fn response(&self) -> &Value {
        self.messages
            .iter()
            .rev()
            .find(|m| m.get("method").is_none() && m.get("id").is_some())
            .unwrap_or_else(|| panic!("no JSON-RPC response: {self:?}"))
    }

    fn result(&self) -> &Value {
        let r = self.response();
        r.get("result")
            .unwrap_or_else(|| panic!("expected a result: {r}"))
    }
}

/// The messages of a body: one JSON document, or the `data:` lines of SSE events.
fn messages(body: &str) -> Vec<Value> {
    let body = body.trim();
    if body.starts_with('{') {
        return serde_json::from_str(body).into_iter().collect();
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

/// A loopback HTTP/1.0 client: one connection per request, the body read to its end (or as it
/// comes, for streams) — no chunked encoding to undo, no TLS to configure.
#[derive(Clone, Copy)]
struct Http;

/// An answer's head read, and the connection still open for its body.
struct Open {
    status: u16,
    session: Option<String>,
    stream: tokio::net::TcpStream,
    /// Body bytes read with the head.
    rest: Vec<u8>,
}

impl Http {
    async fn send(self, url: &str, headers: &[(&str, &str)], body: &str) -> Result<Open, String> {
        self.request("POST", url, headers, body).await
    }

    async fn request(
        self,
        method: &str,
        url: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Result<Open, String> {
        self.request_from(None, method, url, headers, body).await
    }

    /// A request from the loopback address `source` (another client than 127.0.0.1's).
    async fn request_from(
        self,
        source: Option<IpAddr>,
        method: &str,
        url: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Result<Open, String> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let rest = url.strip_prefix("http://").ok_or("an http URL")?;
        let (addr, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let mut stream = match source {
            None => tokio::net::TcpStream::connect(addr).await,
            Some(source) => {
                let to: std::net::SocketAddr = addr.parse().map_err(|_| "an address")?;
                let socket = tokio::net::TcpSocket::new_v4().map_err(|e| e.to_string())?;
                socket
                    .bind(std::net::SocketAddr::new(source, 0))
                    .map_err(|e| e.to_string())?;
                socket.connect(to).await
            }
        }
        .map_err(|e| e.to_string())?;
        let mut head = format!(
            "{method} {path} HTTP/1.0\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        stream
            .write_all(head.as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        stream
            .write_all(body.as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        let mut raw = Vec::new();
        let mut chunk = [0u8; 8192];
        let end = loop {
            if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                break i;
            }
            let n = tokio::time::timeout(WAIT * 3, stream.read(&mut chunk))
                .await
                .map_err(|_| "no answer in time".to_owned())?
                .map_err(|e| e.to_string())?;
            if n == 0 {
                return Err("the connection closed before an answer".into());
            }
            raw.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&raw[..end]).into_owned();
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("not an HTTP answer: {head}"))?;
        let session = head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("mcp-session-id")
                .then(|| v.trim().to_owned())
        });
        Ok(Open {
            status,
            session,
            stream,
            rest: raw[end + 4..].to_vec(),
        })
    }
}

/// POSTs a JSON-RPC message; `Err` when the connection failed or broke (the client retries).
async fn post(
    http: &Http,
    url: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> Result<Reply, String> {
    post_from(http, None, url, headers, body).await
}

/// [`post`] from the loopback address `source`.
async fn post_from(
    http: &Http,
    source: Option<IpAddr>,
    url: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> Result<Reply, String> {
    use tokio::io::AsyncReadExt;
    let mut open = http
        .request_from(source, "POST", url, headers, &body.to_string())
        .await?;
    let mut body = std::mem::take(&mut open.rest);
    tokio::time::timeout(WAIT * 3, open.stream.read_to_end(&mut body))
        .await
        .map_err(|_| "the answer did not end in time".to_owned())?
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&body);
    let messages = messages(&text);
    // A stream cut short: its answer never came (the replica died).
    if open.status == 200
        && !messages
            .iter()
            .any(|m| m.get("id").is_some() && m.get("method").is_none())
    {
        return Err(format!("the stream broke: {text:?}"));
    }
    Ok(Reply {
        status: open.status,
        session: open.session,
        messages,
    })
}

fn meta_2026(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": V2026_07_28,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": { "name": "replica-tests", "version": "0.0.0" },
    })
}

/// A 2026-07-28 request (`params` gets its `_meta`) with the headers that version needs.
async fn request_2026(
    http: &Http,
    url: &str,
    id: u64,
    method: &str,
    mut params: Value,
    capabilities: Value,
) -> Result<Reply, String> {
    params["_meta"] = meta_2026(capabilities);
    let name = params["name"]
        .as_str()
        .or(params["taskId"].as_str())
        .unwrap_or_default()
        .to_owned();
    let mut headers = vec![
        ("MCP-Protocol-Version", V2026_07_28),
        ("Mcp-Method", method),
    ];
    if !name.is_empty() {
        headers.push(("Mcp-Name", &name));
    }
    let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
    post(http, url, &headers, &body).await
}

/// A 2025-11-25 request of session `session` (none: `initialize`).
async fn request_2025(
    http: &Http,
    url: &str,
    session: Option<&str>,
    id: Option<u64>,
    method: &str,
    params: Value,
) -> Result<Reply, String> {
    let mut headers = Vec::new();
    if let Some(s) = session {
        headers.push(("Mcp-Session-Id", s));
        headers.push(("MCP-Protocol-Version", V2025_11_25));
    }
    let mut body = json!({ "jsonrpc": "2.0", "method": method, "params": params });
    if let Some(id) = id {
        body["id"] = json!(id);
    }
    post(http, url, &headers, &body).await
}

/// Opens a 2025-11-25 session at `url` declaring `capabilities`; returns its id.
async fn session_2025(http: &Http, url: &str, capabilities: Value) -> String {
    let reply = request_2025(
        http,
        url,
        None,
        Some(0),
        "initialize",
        json!({
            "protocolVersion": V2025_11_25,
            "capabilities": capabilities,
            "clientInfo": { "name": "replica-tests", "version": "0.0.0" }
        }),
    )
    .await
    .expect("initialize");
    assert_eq!(reply.result()["protocolVersion"], V2025_11_25, "{reply:?}");
    let session = reply.session.clone().expect("a session id");
    let reply = request_2025(
        http,
        url,
        Some(&session),
        None,
        "notifications/initialized",
        json!({}),
    )
    .await
    .expect("initialized");
    assert_eq!(reply.status, 202, "{reply:?}");
    session
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

// ---------------------------------------------------------------------------------------------
// 2026-07-28

#[tokio::test]
async fn input_required_rounds_are_answered_by_three_replicas() {
    let cluster = Cluster::up("conformance", 3, &[]);
    let http = &cluster.http;
    let call = json!({ "name": "test_input_required_result_multi_round", "arguments": {} });
    let accept = |content: Value| json!({ "action": "accept", "content": content });
    // Round 1 on replica 1.
    let reply = request_2026(
        http,
        &cluster.replica(1),
        1,
        "tools/call",
        call.clone(),
        json!({"elicitation": {}}),
    )
    .await
    .unwrap();
    let first = reply.result().clone();
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert!(first["inputRequests"]["step1"].is_object(), "{first}");
    // Round 2 on replica 2: the state sealed on 1 opens there.
    let mut retry = call.clone();
    retry["inputResponses"] = json!({ "step1": accept(json!({"name": "Ada"})) });
    retry["requestState"] = first["requestState"].clone();
    let reply = request_2026(
        http,
        &cluster.replica(2),
        2,
        "tools/call",
        retry,
        json!({"elicitation": {}}),
    )
    .await
    .unwrap();
    let second = reply.result().clone();
    assert_eq!(second["resultType"], "input_required", "{second}");
    assert!(second["inputRequests"]["step2"].is_object(), "{second}");
    // Round 3 on replica 3, carrying what 1 and 2 learned.
    let mut retry = call.clone();
    retry["inputResponses"] = json!({ "step2": accept(json!({"color": "green"})) });
    retry["requestState"] = second["requestState"].clone();
    let reply = request_2026(
        http,
        &cluster.replica(3),
        3,
        "tools/call",
        retry.clone(),
        json!({"elicitation": {}}),
    )
    .await
    .unwrap();
    let done = reply.result();
    assert_eq!(done["resultType"], "complete", "{done}");
    assert_eq!(text(done), "Ada likes green", "{done}");
    // And through nginx, whichever replica it picks.
    let reply = request_2026(
        http,
        &cluster.url(),
        4,
        "tools/call",
        retry,
        json!({"elicitation": {}}),
    )
    .await
    .unwrap();
    assert_eq!(text(reply.result()), "Ada likes green");
}

#[tokio::test]
async fn a_task_is_fetched_after_the_replica_that_ran_it_was_killed() {
    let cluster = Cluster::up("reports", 3, &[]);
    let http = &cluster.http;
    let caps = json!({ "extensions": { TASKS_EXTENSION: {} } });
    let call = json!({ "name": "sales_report", "arguments": { "year": 2042, "pace_ms": 10 } });
    let reply = request_2026(
        http,
        &cluster.replica(1),
        1,
        "tools/call",
        call,
        caps.clone(),
    )
    .await
    .unwrap();
    let task = reply.result().clone();
    assert_eq!(task["resultType"], "task", "{task}");
    let id = task["taskId"].as_str().expect("a task id").to_owned();
    // Done, as replica 2 sees it.
    let deadline = Instant::now() + WAIT;
    let finished = loop {
        let reply = request_2026(
            http,
            &cluster.replica(2),
            2,
            "tasks/get",
            json!({ "taskId": id }),
            caps.clone(),
        )
        .await
        .unwrap();
        let got = reply.result().clone();
        if got["status"] == "completed" {
            break got;
        }
        assert_eq!(got["status"], "working", "{got}");
        assert!(Instant::now() < deadline, "not done in time: {got}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // 2025-11-25: a session's tasks are its own whichever replica holds it. Replica 2 takes
    // the session up before its first task is made on replica 1, and finds that task all the
    // same: the session's random name, which owns its tasks, is made when it opens and
    // travels with its record (made by each replica on first use, the two names differed).
    let session = session_2025(http, &cluster.replica(1), json!({ "tasks": {} })).await;
    let listed = request_2025(
        http,
        &cluster.replica(2),
        Some(&session),
        Some(1),
        "tools/list",
        json!({}),
    )
    .await
    .unwrap();
    assert_eq!(listed.status, 200, "taken up: {listed:?}");
    let call = json!({
        "name": "sales_report",
        "arguments": { "year": 2043, "pace_ms": 10 },
        "task": { "ttl": 60_000 }
    });
    let created = request_2025(
        http,
        &cluster.replica(1),
        Some(&session),
        Some(2),
        "tools/call",
        call,
    )
    .await
    .unwrap();
    let made = created.result()["task"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned();
    for (n, replica) in [2, 3, 1].into_iter().enumerate() {
        let got = request_2025(
            http,
            &cluster.replica(replica),
            Some(&session),
            Some(3 + n as u64),
            "tasks/get",
            json!({ "taskId": made }),
        )
        .await
        .unwrap();
        assert_eq!(
            got.result()["taskId"],
            made.as_str(),
            "replica {replica}: {got:?}"
        );
    }
    cluster.kill(1);
    for n in 0..3 {
        let reply = request_2026(
            http,
            &cluster.url(),
            10 + n,
            "tasks/get",
            json!({ "taskId": id }),
            caps.clone(),
        )
        .await
        .unwrap();
        let got = reply.result();
        assert_eq!(got["status"], "completed", "{got}");
        assert_eq!(got["result"], finished["result"], "{got}");
        assert_eq!(got["result"]["structuredContent"]["year"], 2042, "{got}");
    }
}

/// A streaming POST: its SSE messages as they come.
struct Stream {
    stream: tokio::net::TcpStream,
    buffer: String,
}

impl Stream {
    async fn post(http: Http, url: &str, headers: &[(&str, &str)], body: &Value) -> Stream {
        let open = http
            .send(url, headers, &body.to_string())
            .await
            .expect("a stream");
        assert_eq!(open.status, 200);
        Stream {
            stream: open.stream,
            buffer: String::from_utf8_lossy(&open.rest).into_owned(),
        }
    }

    async fn listen(http: Http, url: &str, id: u64, params: Value) -> Stream {
        let mut params = params;
        params["_meta"] = meta_2026(json!({}));
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params });
        let headers = [
            ("MCP-Protocol-Version", V2026_07_28),
            ("Mcp-Method", "subscriptions/listen"),
        ];
        Stream::post(http, url, &headers, &body).await
    }

    /// The next message, `None` if none came within `wait`; `Err` when the stream broke.
    async fn next(&mut self, wait: Duration) -> Result<Option<Value>, String> {
        use tokio::io::AsyncReadExt;
        let deadline = tokio::time::Instant::now() + wait;
        let mut chunk = [0u8; 8192];
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                if let Some(m) = messages(&event).into_iter().next() {
                    return Ok(Some(m));
                }
                continue;
            }
            match tokio::time::timeout_at(deadline, self.stream.read(&mut chunk)).await {
                Err(_) => return Ok(None),
                Ok(Ok(0)) => return Err("the stream ended".into()),
                Ok(Ok(n)) => self.buffer.push_str(&String::from_utf8_lossy(&chunk[..n])),
                Ok(Err(e)) => return Err(e.to_string()),
            }
        }
    }
}

async fn trigger_tool_change(cluster: &Cluster, replica: usize, id: u64) {
    let reply = request_2026(
        &cluster.http,
        &cluster.replica(replica),
        id,
        "tools/call",
        json!({ "name": "test_trigger_tool_change", "arguments": {} }),
        json!({}),
    )
    .await
    .unwrap();
    assert_eq!(text(reply.result()), "Tool list change notified");
}

#[tokio::test]
async fn listen_streams_hear_changes_raised_on_any_replica_and_reconnect() {
    let cluster = Cluster::up("conformance", 3, &[]);
    let filter = json!({ "notifications": { "toolsListChanged": true } });
    let mut stream = Stream::listen(cluster.http, &cluster.replica(1), 7, filter.clone()).await;
    let ack = stream
        .next(WAIT)
        .await
        .unwrap()
        .expect("an acknowledgement");
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    trigger_tool_change(&cluster, 2, 1).await;
    let heard = stream.next(WAIT).await.unwrap().expect("a change");
    assert_eq!(
        heard["method"], "notifications/tools/list_changed",
        "{heard}"
    );
    assert_eq!(
        heard["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    assert_eq!(
        stream.next(Duration::from_millis(300)).await,
        Ok(None),
        "told once"
    );

    // Replica 1 dies: the stream breaks; the client listens again, through nginx.
    cluster.kill(1);
    let broke = stream.next(WAIT).await;
    assert!(
        broke.is_err(),
        "the stream ends with its replica: {broke:?}"
    );
    let mut again = Stream::listen(cluster.http, &cluster.url(), 8, filter).await;
    let ack = again.next(WAIT).await.unwrap().expect("acknowledged again");
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    for (n, replica) in [(2, 2), (3, 3)] {
        trigger_tool_change(&cluster, replica, n).await;
        let heard = again.next(WAIT).await.unwrap().expect("a change");
        assert_eq!(
            heard["method"], "notifications/tools/list_changed",
            "{heard}"
        );
        assert_eq!(
            heard["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            8
        );
        assert_eq!(
            again.next(Duration::from_millis(300)).await,
            Ok(None),
            "no duplicate"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 2025-11-25

#[tokio::test]
async fn a_session_outlives_its_replica() {
    let cluster = Cluster::up("conformance", 3, &[]);
    let http = &cluster.http;
    let session = session_2025(http, &cluster.replica(1), json!({})).await;
    let reply = request_2025(
        http,
        &cluster.replica(1),
        Some(&session),
        Some(1),
        "logging/setLevel",
        json!({ "level": "error" }),
    )
    .await
    .unwrap();
    assert_eq!(reply.result(), &json!({}));
    cluster.kill(1);
    for id in 2..6 {
        let reply = request_2025(
            http,
            &cluster.url(),
            Some(&session),
            Some(id),
            "tools/call",
            json!({ "name": "test_tool_with_logging", "arguments": {} }),
        )
        .await
        .unwrap();
        assert_eq!(reply.status, 200, "served elsewhere: {reply:?}");
        reply.result();
        // The level set on replica 1 holds: no info logs.
        let logs: Vec<&Value> = reply
            .messages
            .iter()
            .filter(|m| m["method"] == "notifications/message")
            .collect();
        assert!(logs.is_empty(), "{logs:?}");
    }
    // Ended through nginx: every replica refuses it afterwards, those that had taken it up
    // included.
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", V2025_11_25),
    ];
    let deleted = Http
        .request("DELETE", &cluster.url(), &headers, "")
        .await
        .expect("DELETE");
    assert_eq!(deleted.status, 200);
    // The other replicas hear of it through Redis: poll (bounded) until both refuse it.
    for replica in [2, 3] {
        let deadline = Instant::now() + WAIT;
        loop {
            let reply = request_2025(
                http,
                &cluster.replica(replica),
                Some(&session),
                Some(7),
                "tools/list",
                json!({}),
            )
            .await
            .unwrap();
            if reply.status == 404 {
                break;
            }
            assert_eq!(reply.status, 200, "{reply:?}");
            assert!(
                Instant::now() < deadline,
                "replica {replica} still serves an ended session"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    // An unknown session is still refused.
    let reply = request_2025(
        http,
        &cluster.url(),
        Some("00ff"),
        Some(9),
        "tools/list",
        json!({}),
    )
    .await
    .unwrap();
    assert_eq!(reply.status, 404, "{reply:?}");
}

#[tokio::test]
async fn an_answer_reaching_another_replica_gets_to_the_one_that_waits() {
    let cluster = Cluster::up("conformance", 3, &[]);
    let http = cluster.http;
    let session = session_2025(&http, &cluster.replica(1), json!({ "elicitation": {} })).await;
    // The call waits on replica 1 for the elicitation's answer, on its own SSE stream.
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "test_elicitation", "arguments": { "message": "Who?" } }
    });
    let headers = [
        ("MCP-Protocol-Version", V2025_11_25),
        ("Mcp-Session-Id", session.as_str()),
    ];
    let mut waiting = Stream::post(http, &cluster.replica(1), &headers, &body).await;
    let asked = waiting.next(WAIT).await.unwrap().expect("an elicitation");
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    // The answer goes to replica 2, which never saw the session.
    let answer = json!({
        "jsonrpc": "2.0", "id": asked["id"],
        "result": { "action": "accept", "content": { "username": "ada", "email": "ada@example.com" } }
    });
    let reply = post(
        &http,
        &cluster.replica(2),
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", V2025_11_25),
        ],
        &answer,
    )
    .await
    .unwrap();
    assert_eq!(reply.status, 202, "{reply:?}");
    let done = waiting
        .next(WAIT)
        .await
        .unwrap()
        .expect("the call's result");
    assert_eq!(done["id"], 1, "{done}");
    let text = done["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("accept"), "{done}");
}

// ---------------------------------------------------------------------------------------------
// Load with a replica killed and restarted

#[derive(Default)]
struct Counts {
    sent: AtomicU64,
    answered: AtomicU64,
    retried: AtomicU64,
    tasks: AtomicU64,
}

/// A 2026-07-28 call of `sales_report` for `year`, re-issued with a new id while it fails in a
/// retryable way (connection refused or broken, a 502 from nginx); the report it got.
async fn report_2026(http: &Http, url: &str, ids: &AtomicU64, counts: &Counts, year: u64) -> Value {
    let call = json!({ "name": "sales_report", "arguments": { "year": year, "pace_ms": 0 } });
    for _ in 0..20 {
        let id = ids.fetch_add(1, Ordering::Relaxed);
        counts.sent.fetch_add(1, Ordering::Relaxed);
        match request_2026(http, url, id, "tools/call", call.clone(), json!({})).await {
            Ok(reply) if reply.status == 200 => {
                let response = reply.response();
                assert_eq!(response["id"], id, "the answer to this request: {response}");
                counts.answered.fetch_add(1, Ordering::Relaxed);
                return response["result"]["structuredContent"].clone();
            }
            Ok(reply) => assert!(reply.status == 502 || reply.status == 503, "{reply:?}"),
            Err(_) => {}
        }
        counts.retried.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("a call of {year} failed 20 times");
}

/// The same in a 2025-11-25 session.
async fn report_2025(
    http: &Http,
    url: &str,
    session: &str,
    ids: &AtomicU64,
    counts: &Counts,
    year: u64,
) -> Value {
    let call = json!({ "name": "sales_report", "arguments": { "year": year, "pace_ms": 0 } });
    for _ in 0..20 {
        let id = ids.fetch_add(1, Ordering::Relaxed);
        counts.sent.fetch_add(1, Ordering::Relaxed);
        match request_2025(
            http,
            url,
            Some(session),
            Some(id),
            "tools/call",
            call.clone(),
        )
        .await
        {
            Ok(reply) if reply.status == 200 => {
                let response = reply.response();
                assert_eq!(response["id"], id, "the answer to this request: {response}");
                counts.answered.fetch_add(1, Ordering::Relaxed);
                return response["result"]["structuredContent"].clone();
            }
            Ok(reply) => assert!(reply.status == 502 || reply.status == 503, "{reply:?}"),
            Err(_) => {}
        }
        counts.retried.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("a session call of {year} failed 20 times");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_through_nginx_survives_a_replica_killed_and_restarted() {
    // A task whose replica dies is failed after a 2 s lease instead of 30 s.
    let cluster = Arc::new(Cluster::up("reports", 3, &[("MCP_TOOL_TASK_LEASE", "2s")]));
    let url = cluster.url();
    let started = Instant::now();
    let counts = Arc::new(Counts::default());
    let ids = Arc::new(AtomicU64::new(1));
    const CLIENTS: u64 = 8;
    const CALLS: u64 = 250;
    let mut clients = Vec::new();
    for c in 0..CLIENTS {
        let (http, url, counts, ids) = (cluster.http, url.clone(), counts.clone(), ids.clone());
        clients.push(tokio::spawn(async move {
            // Even clients speak 2026-07-28, odd ones hold a 2025-11-25 session.
            let session = if c % 2 == 1 {
                Some(session_2025(&http, &url, json!({})).await)
            } else {
                None
            };
            let mut tasks = Vec::new();
            for n in 0..CALLS {
                let year = 2000 + (c * CALLS + n) % 101;
                let report = match &session {
                    Some(s) => report_2025(&http, &url, s, &ids, &counts, year).await,
                    None => report_2026(&http, &url, &ids, &counts, year).await,
                };
                assert_eq!(report["year"], year, "{report}");
                if session.is_none() && n % 50 == 0 {
                    // Now and then a task, fetched at the end.
                    let caps = json!({ "extensions": { TASKS_EXTENSION: {} } });
                    let call = json!({ "name": "sales_report", "arguments": { "year": year, "pace_ms": 5 } });
                    loop {
                        let id = ids.fetch_add(1, Ordering::Relaxed);
                        counts.sent.fetch_add(1, Ordering::Relaxed);
                        match request_2026(&http, &url, id, "tools/call", call.clone(), caps.clone()).await {
                            Ok(r) if r.status == 200 => {
                                counts.answered.fetch_add(1, Ordering::Relaxed);
                                counts.tasks.fetch_add(1, Ordering::Relaxed);
                                tasks.push((r.result()["taskId"].as_str().expect("id").to_owned(), year));
                                break;
                            }
                            _ => {
                                counts.retried.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                }
            }
            tasks
        }));
    }
    // In the middle: replica 2 dies, and comes back.
    let killer = {
        let (cluster, counts) = (cluster.clone(), counts.clone());
        tokio::task::spawn_blocking(move || {
            while counts.answered.load(Ordering::Relaxed) < CLIENTS * CALLS / 3 {
                std::thread::sleep(Duration::from_millis(10));
            }
            cluster.kill(2);
            while counts.answered.load(Ordering::Relaxed) < CLIENTS * CALLS * 2 / 3 {
                std::thread::sleep(Duration::from_millis(10));
            }
            cluster.start(2);
        })
    };
    let mut tasks = Vec::new();
    for c in clients {
        tasks.extend(c.await.expect("a client"));
    }
    killer.await.expect("the killer");
    // No task lost: each is found, completed with its report or failed for its replica's death.
    let caps = json!({ "extensions": { TASKS_EXTENSION: {} } });
    let deadline = Instant::now() + Duration::from_secs(15);
    let (mut completed, mut failed) = (0, 0);
    for (id, year) in &tasks {
        loop {
            let n = ids.fetch_add(1, Ordering::Relaxed);
            let Ok(reply) = request_2026(
                &cluster.http,
                &url,
                n,
                "tasks/get",
                json!({ "taskId": id }),
                caps.clone(),
            )
            .await
            else {
                continue;
            };
            let got = reply.result().clone();
            match got["status"].as_str() {
                Some("completed") => {
                    assert_eq!(got["result"]["structuredContent"]["year"], *year, "{got}");
                    completed += 1;
                    break;
                }
                Some("failed") => {
                    failed += 1;
                    break;
                }
                Some("working") => {}
                _ => panic!("task {id}: {got}"),
            }
            assert!(Instant::now() < deadline, "task {id} never ended: {got}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let (sent, answered, retried) = (
        counts.sent.load(Ordering::Relaxed),
        counts.answered.load(Ordering::Relaxed),
        counts.retried.load(Ordering::Relaxed),
    );
    eprintln!(
        "load: {CLIENTS} clients, {} calls in {:.1} s: {sent} requests sent, {answered} answered, \
         {retried} retried, 0 lost; {} tasks: {completed} completed, {failed} failed with their replica",
        CLIENTS * CALLS,
        started.elapsed().as_secs_f64(),
        tasks.len()
    );
    assert_eq!(
        answered,
        CLIENTS * CALLS + counts.tasks.load(Ordering::Relaxed)
    );
    assert_eq!(
        sent,
        answered + retried,
        "every request answered once or retried"
    );
    assert_eq!(completed + failed, tasks.len());
}

#[tokio::test]
async fn a_subjects_selection_and_kept_results_hold_on_every_replica_and_after_a_restart() {
    let root = TempDir::new("replicas-files");
    std::fs::write(root.path().join("big.txt"), "x".repeat(5000)).expect("a file");
    let args = format!("--root {} --password pw", root.arg());
    let cluster = Cluster::up(
        "files",
        3,
        &[
            ("MCP_SERVER_ARGS", &args),
            // Two tokens of alice's: the second grants a scope the first does not.
            (
                "MCP_TOOL_BEARER_TOKENS",
                "alice:ta,alice[files:admin]:ta-wide,bob:tb",
            ),
            ("MCP_TOOL_RESULT_BUDGET", "1KiB"),
        ],
    );
    // A 2026-07-28 request at `url` with `token`: its result, or its error.
    let call = |url: String, token: &'static str, id: u64, method: &'static str, params: Value| async move {
        let mut params = params;
        params["_meta"] = meta_2026(json!({}));
        let name = params["name"]
            .as_str()
            .or(params["uri"].as_str())
            .unwrap_or_default()
            .to_owned();
        let auth = format!("Bearer {token}");
        let mut headers = vec![
            ("MCP-Protocol-Version", V2026_07_28),
            ("Mcp-Method", method),
            ("Authorization", auth.as_str()),
        ];
        if !name.is_empty() {
            headers.push(("Mcp-Name", name.as_str()));
        }
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let reply = post(&Http, &url, &headers, &body).await.expect("an answer");
        reply.response().clone()
    };
    let names = |list: &Value| -> Vec<String> {
        list["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("tools: {list}"))
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect()
    };
    let write_file = "write_file".to_owned();
    for replica in 1..=3 {
        let list = call(cluster.replica(replica), "ta", 1, "tools/list", json!({})).await;
        assert!(!names(&list).contains(&write_file), "{list}");
    }
    let done = call(
        cluster.replica(1),
        "ta",
        2,
        "tools/call",
        json!({ "name": "login", "arguments": { "password": "pw" } }),
    )
    .await;
    assert!(text(&done["result"]).starts_with("Authenticated"), "{done}");
    // Alice's next requests reach replicas 2 and 3: they heard of it through Redis.
    for replica in [2, 3] {
        let deadline = Instant::now() + WAIT;
        loop {
            let list = call(cluster.replica(replica), "ta", 3, "tools/list", json!({})).await;
            if names(&list).contains(&write_file) {
                break;
            }
            assert!(Instant::now() < deadline, "replica {replica}: {list}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    // A result over the budget is cut where it was made; its whole reads on every replica.
    let cut = call(
        cluster.url(),
        "ta",
        4,
        "tools/call",
        json!({ "name": "read_file", "arguments": { "path": "big.txt" } }),
    )
    .await;
    let link = cut["result"]["content"]
        .as_array()
        .and_then(|c| c.iter().find(|b| b["type"] == "resource_link"))
        .and_then(|b| b["uri"].as_str())
        .unwrap_or_else(|| panic!("no link to the whole: {cut}"))
        .to_owned();
    let read = |token: &'static str, id: u64| {
        let params = json!({ "uri": link });
        call(cluster.url(), token, id, "resources/read", params)
    };
    let mut whole = 0;
    for id in 0..12 {
        let reply = read("ta", 10 + id).await;
        let contents = reply["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_default();
        whole += usize::from(contents.contains(&"x".repeat(5000)));
    }
    assert_eq!(
        whole, 12,
        "reads of the whole through nginx that answered it"
    );
    // Another subject is refused on every replica, without the content.
    for id in 0..3 {
        let reply = read("tb", 30 + id).await;
        assert!(reply.get("result").is_none(), "{reply}");
        assert!(reply.to_string().contains("NOT_FOUND"), "{reply}");
        assert!(!reply.to_string().contains("xxxx"), "{reply}");
    }
    // A replica started again knows alice's selection (from Redis): 6 of 6 lists through
    // nginx, 2 of which reach it.
    cluster.kill(2);
    cluster.start(2);
    let mut seen = 0;
    for id in 0..6 {
        let list = call(cluster.url(), "ta", 40 + id, "tools/list", json!({})).await;
        seen += usize::from(names(&list).contains(&write_file));
    }
    assert_eq!(seen, 6, "lists through nginx showing alice's selection");
    let list = call(cluster.replica(2), "ta", 50, "tools/list", json!({})).await;
    assert!(names(&list).contains(&write_file), "{list}");
    // Bob's selection is his own, there too.
    let list = call(cluster.replica(2), "tb", 51, "tools/list", json!({})).await;
    assert!(!names(&list).contains(&write_file), "{list}");
    // The kept result too.
    let reply = call(
        cluster.replica(2),
        "ta",
        52,
        "resources/read",
        json!({ "uri": link }),
    )
    .await;
    assert!(
        reply["result"]["contents"][0]["text"].is_string(),
        "{reply}"
    );

    // A 2025-11-25 session is its principal's on every replica, not its first token's: opened
    // on replica 1 with one of alice's tokens, it is taken up on replica 3 with another of
    // hers, and served there to both; bob is refused it where it is held (403) and where it
    // is not (404, not taken up for him).
    let in_session = |url: String, token: &'static str, session: Option<String>, id: u64| async move {
        let auth = format!("Bearer {token}");
        let mut headers = vec![("Authorization", auth.as_str())];
        let mut body = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/list" });
        if session.is_none() {
            body["method"] = json!("initialize");
            body["params"] = json!({
                "protocolVersion": V2025_11_25,
                "capabilities": {},
                "clientInfo": { "name": "replica-tests", "version": "0.0.0" },
            });
        }
        if let Some(session) = &session {
            headers.push(("Mcp-Session-Id", session));
            headers.push(("MCP-Protocol-Version", V2025_11_25));
        }
        post(&Http, &url, &headers, &body).await.expect("an answer")
    };
    let opened = in_session(cluster.replica(1), "ta", None, 60).await;
    let session = opened.session.clone().expect("a session id");
    for (replica, token, status) in [
        (3, "ta-wide", 200),
        (3, "ta", 200),
        (3, "tb", 403),
        (2, "tb", 404),
    ] {
        let reply = in_session(cluster.replica(replica), token, Some(session.clone()), 61).await;
        assert_eq!(
            reply.status, status,
            "replica {replica}, {token}: {reply:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// State every replica sees alike

/// Whether a tool call's reply was refused by the rate limit (else it must have succeeded).
fn rate_limited(reply: &Reply) -> bool {
    let result = reply.result();
    if result["isError"] == true {
        assert!(
            result.to_string().contains("RATE_LIMITED"),
            "an error other than the rate limit: {result}"
        );
        return true;
    }
    false
}

#[tokio::test]
async fn a_rate_limit_of_l_admits_l_across_replicas() {
    // Each era calls a tool of its own, so that each counts against a limit of its own.
    let limit = ("MCP_TOOL_RATE_LIMIT", "multiply=5/1m,divide=5/1m");
    let anonymous = Cluster::up("calc", 3, &[limit]);
    let url = anonymous.url();
    assert_eq!(
        admitted_2026(&url, None, "multiply").await,
        5,
        "anonymous, 2026-07-28"
    );
    // Another anonymous client behind nginx (nginx names it in X-Forwarded-For, and the
    // replicas trust nginx's address) has a share of its own; what it writes in the header
    // itself changes nothing, through nginx or straight to a replica.
    let other = Some(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)));
    const SPOOF: [(&str, &str); 2] = [
        ("X-Forwarded-For", "127.0.0.9"),
        ("Forwarded", "for=127.0.0.9"),
    ];
    let calls = |url: String, spoof: &'static [(&'static str, &'static str)]| {
        admitted_2026_from(url, other, None, spoof, "multiply")
    };
    assert_eq!(calls(url.clone(), &[]).await, 5, "the second client");
    assert_eq!(calls(url.clone(), &SPOOF).await, 0, "spoofed through nginx");
    for replica in 1..=3 {
        let direct = anonymous.replica(replica);
        assert_eq!(
            calls(direct, &SPOOF).await,
            0,
            "spoofed to replica {replica}"
        );
    }
    // An anonymous session is a principal of its own: one session, its requests spread.
    assert_eq!(
        admitted_2025(&url, None, "divide", 1).await,
        5,
        "anonymous, 2025-11-25"
    );
    drop(anonymous);
    let tokens = ("MCP_TOOL_BEARER_TOKENS", "alice:ta");
    let subjects = Cluster::up("calc", 3, &[limit, tokens]);
    let url = subjects.url();
    let alice = Some("Bearer ta");
    assert_eq!(
        admitted_2026(&url, alice, "multiply").await,
        5,
        "Alice, 2026-07-28"
    );
    assert_eq!(
        admitted_2025(&url, alice, "divide", 3).await,
        5,
        "Alice, 2025-11-25"
    );
}

/// Of 15 calls of `tool` through `url` (2026-07-28), how many the rate limit let through.
async fn admitted_2026(url: &str, token: Option<&str>, tool: &str) -> usize {
    admitted_2026_from(url.to_owned(), None, token, &[], tool).await
}

/// [`admitted_2026`] from the loopback address `source`, with `more` headers.
async fn admitted_2026_from(
    url: String,
    source: Option<IpAddr>,
    token: Option<&str>,
    more: &[(&str, &str)],
    tool: &str,
) -> usize {
    let mut admitted = 0;
    for id in 0..15 {
        let params = json!({
            "name": tool,
            "arguments": { "a": 2, "b": 3 },
            "_meta": meta_2026(json!({})),
        });
        let mut headers = vec![
            ("MCP-Protocol-Version", V2026_07_28),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", tool),
        ];
        if let Some(token) = token {
            headers.push(("Authorization", token));
        }
        headers.extend_from_slice(more);
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params });
        let reply = post_from(&Http, source, &url, &headers, &body)
            .await
            .expect("an answer");
        admitted += usize::from(!rate_limited(&reply));
    }
    admitted
}

/// Of 15 calls of `tool` over `n` 2025-11-25 sessions through `url`, how many the rate limit
/// let through.
async fn admitted_2025(url: &str, token: Option<&str>, tool: &str, n: usize) -> usize {
    let auth: Vec<(&str, &str)> = token.map(|t| ("Authorization", t)).into_iter().collect();
    let mut sessions = Vec::new();
    for _ in 0..n {
        let body = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": V2025_11_25,
            "capabilities": {},
            "clientInfo": { "name": "replica-tests", "version": "0.0.0" }
        }});
        let reply = post(&Http, url, &auth, &body).await.expect("initialize");
        let session = reply.session.clone().expect("a session id");
        let mut headers = auth.clone();
        headers.push(("Mcp-Session-Id", &session));
        headers.push(("MCP-Protocol-Version", V2025_11_25));
        let body = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
        let reply = post(&Http, url, &headers, &body)
            .await
            .expect("initialized");
        assert_eq!(reply.status, 202, "{reply:?}");
        sessions.push(session);
    }
    let mut admitted = 0;
    for id in 0..15 {
        let mut headers = auth.clone();
        headers.push(("Mcp-Session-Id", &sessions[id % n]));
        headers.push(("MCP-Protocol-Version", V2025_11_25));
        let params = json!({ "name": tool, "arguments": { "a": 2, "b": 3 } });
        let body =
            json!({ "jsonrpc": "2.0", "id": id + 1, "method": "tools/call", "params": params });
        let reply = post(&Http, url, &headers, &body).await.expect("an answer");
        admitted += usize::from(!rate_limited(&reply));
    }
    admitted
}

// ---------------------------------------------------------------------------------------------
// A gateway's rounds on any replica

/// The answer a test user gives a form: each field of its schema filled (`name`: Ada,
/// `color`: green).
fn fill(params: &Value) -> Value {
    let mut content = serde_json::Map::new();
    for field in params["requestedSchema"]["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
    {
        let value = match field.as_str() {
            "name" => "Ada",
            "color" => "green",
            _ => "x",
        };
        content.insert(field.clone(), json!(value));
    }
    json!({ "action": "accept", "content": content })
}

/// Calls `tool` of the gateway (2026-07-28), each round at the next of `urls` (round robin),
/// answering every question with [`fill`]: its last result.
async fn rounds(http: &Http, urls: &[String], ids: &AtomicU64, tool: &str) -> Value {
    let call = json!({ "name": tool, "arguments": {} });
    let mut params = call.clone();
    for round in 0..6 {
        let url = &urls[round % urls.len()];
        let id = ids.fetch_add(1, Ordering::Relaxed);
        let reply = request_2026(
            http,
            url,
            id,
            "tools/call",
            params.clone(),
            json!({"elicitation": {}}),
        )
        .await
        .unwrap_or_else(|e| panic!("{tool}, round {round}: {e}"));
        let result = reply.result().clone();
        if result["resultType"] != "input_required" {
            return result;
        }
        let answers: serde_json::Map<String, Value> = result["inputRequests"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(key, asked)| (key.clone(), fill(&asked["params"])))
            .collect();
        params = call.clone();
        params["inputResponses"] = Value::Object(answers);
        params["requestState"] = result["requestState"].clone();
    }
    panic!("{tool}: still asking after 6 rounds");
}

/// A gateway (`calc --mount`) on three replicas, mounting over stdio the conformance example
/// (it speaks 2026-07-28: its rounds travel sealed in the gateway's request state, nothing is
/// held) and a server of 2025-11-25 that asks in the middle of its call (`asking`: the call
/// is held on the replica that started it, and a round reaching another replica is forwarded
/// to it through Redis). Calls of two rounds each, every round through nginx, complete 6
/// times of 6 with either remote (before, 2 of 6 did: `REMOTE_CALL_GONE`), and with each
/// round on another replica named. Once the replica holding a call is killed, a round of it
/// gets `REMOTE_CALL_GONE` saying so, within seconds.
#[tokio::test]
async fn gateway_rounds_complete_on_any_replica_and_a_dead_holder_is_named() {
    let dir = TempDir::new("replica-mounts");
    let file = dir.path().join("mounts.json");
    let mounts = json!([
        {"type": "mcp", "server_label": "cf", "command": [example_bin("conformance")]},
        {"type": "mcp", "server_label": "old", "command": [env!("CARGO_BIN_EXE_asking")]}
    ]);
    std::fs::write(&file, mounts.to_string()).unwrap();
    let args = format!("--mount {}", file.display());
    let cluster = Cluster::up("calc", 3, &[("MCP_SERVER_ARGS", &args)]);
    let http = &cluster.http;
    let ids = AtomicU64::new(1);
    // Each replica lists both mounts' tools before the calls start.
    for i in 1..=3 {
        let deadline = Instant::now() + WAIT * 3;
        loop {
            let id = ids.fetch_add(1, Ordering::Relaxed);
            let list = request_2026(
                http,
                &cluster.replica(i),
                id,
                "tools/list",
                json!({}),
                json!({}),
            )
            .await
            .unwrap();
            let names = list.result()["tools"].to_string();
            if names.contains("cf__test_input_required_result_multi_round")
                && names.contains("old__ask")
            {
                break;
            }
            assert!(Instant::now() < deadline, "replica {i} lists {names}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let nginx = [cluster.url()];
    let each: Vec<String> = (1..=3).map(|i| cluster.replica(i)).collect();
    for tool in ["cf__test_input_required_result_multi_round", "old__ask"] {
        let mut done = 0;
        let mut failed = Vec::new();
        for _ in 0..6 {
            let result = rounds(http, &nginx, &ids, tool).await;
            if text(&result) == "Ada likes green" {
                done += 1;
            } else {
                failed.push(result);
            }
        }
        assert_eq!(
            done,
            6,
            "{tool}: {done} of 6 completed; first failure: {:?}",
            failed.first()
        );
        let result = rounds(http, &each, &ids, tool).await;
        assert_eq!(
            text(&result),
            "Ada likes green",
            "{tool}, replicas 1, 2, 3: {result}"
        );
    }

    // A call held on replica 1, which dies: its next round, on replica 2, names that.
    let id = ids.fetch_add(1, Ordering::Relaxed);
    let call = json!({ "name": "old__ask", "arguments": {} });
    let reply = request_2026(
        http,
        &cluster.replica(1),
        id,
        "tools/call",
        call.clone(),
        json!({"elicitation": {}}),
    )
    .await
    .unwrap();
    let first = reply.result().clone();
    assert_eq!(first["resultType"], "input_required", "{first}");
    cluster.kill(1);
    let mut retry = call;
    retry["inputResponses"] = json!({ "old/1": fill(&first["inputRequests"]["old/1"]["params"]) });
    retry["requestState"] = first["requestState"].clone();
    let asked = Instant::now();
    let reply = request_2026(
        http,
        &cluster.replica(2),
        id + 1,
        "tools/call",
        retry,
        json!({"elicitation": {}}),
    )
    .await
    .unwrap();
    let gone = reply.result();
    assert_eq!(gone["isError"], true, "{gone}");
    assert!(
        text(gone).contains("REMOTE_CALL_GONE") && text(gone).contains("stopped"),
        "{gone}"
    );
    assert!(asked.elapsed() < WAIT, "named after {:?}", asked.elapsed());
}
