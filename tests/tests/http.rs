//! The Streamable HTTP transport over real sockets: sessions, protocol-version and Host/Origin
//! checks, body limits, bearer-token auth with RFC 9728 metadata, JSON and SSE responses,
//! concurrent streams, requests of the client, the standalone GET stream, cancellation, the
//! sessionless mode, mounting beside other routes, and graceful shutdown of a real binary.
//!
//! Every server runs in-process on `127.0.0.1:0` (except the shutdown test, which spawns the
//! `users` example) and every wait is bounded.

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::get;
use mcp_tool::extract::{Batch, Elicitation, Identity, Logger, Progress, State, ToolManager};
use mcp_tool::http::{BearerTokens, HttpConfig, ResourceMetadata};
use mcp_tool::prelude::*;
use mcp_tool::server::ServerHandle;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST, ORIGIN, WWW_AUTHENTICATE};
use reqwest::{RequestBuilder, StatusCode};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::{Barrier, Semaphore};

/// The longest any single wait may take.
const WAIT: Duration = Duration::from_secs(10);

const LATEST: &str = "2025-11-25";

const SESSION: &str = "mcp-session-id";

const VERSION: &str = "mcp-protocol-version";

// ---------------------------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------------------------

/// A job that may run as a task.
#[tool(task = "optional")]
async fn job() -> &'static str {
    tokio::time::sleep(Duration::from_millis(20)).await;
    "done"
}

/// Greets someone.
#[tool]
fn hello(name: String) -> String {
    format!("hello {name}")
}

/// Reports progress three times.
#[tool]
async fn steps(progress: Progress) -> String {
    for i in 1..=3 {
        progress.report(f64::from(i), 3.0, &format!("step {i}"));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    "done".into()
}

/// Logs at four levels.
#[tool]
async fn chatty(log: Logger) -> String {
    log.debug("debug detail");
    log.info("connected");
    log.warning("disk almost full");
    log.error("query failed");
    "logged".into()
}

/// Waits until two other calls have arrived, reporting progress before and after.
#[tool]
async fn meet(barrier: State<Barrier>, progress: Progress, tag: String) -> String {
    progress.report(1.0, 2.0, &format!("{tag} waiting"));
    barrier.wait().await;
    progress.report(2.0, 2.0, &format!("{tag} met"));
    format!("met {tag}")
}

/// The tags of the `slow` calls that started.
static SLOW_STARTED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The tags of the `slow` calls dropped before they finished.
static SLOW_DROPPED: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct DropFlag(String);

impl Drop for DropFlag {
    fn drop(&mut self) {
        SLOW_DROPPED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(std::mem::take(&mut self.0));
    }
}

fn slow_dropped(tag: &str) -> bool {
    SLOW_DROPPED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .any(|t| t == tag)
}

/// Waits (at most [`WAIT`]) until the `slow` call tagged `tag` runs.
async fn slow_started(tag: &str) {
    let deadline = Instant::now() + WAIT;
    while !SLOW_STARTED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .any(|t| t == tag)
    {
        assert!(
            Instant::now() < deadline,
            "the `slow` call {tag} did not start within {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Runs for half a minute unless cancelled.
#[tool]
async fn slow(tag: String) -> String {
    SLOW_STARTED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(tag.clone());
    let _flag = DropFlag(tag);
    tokio::time::sleep(Duration::from_secs(30)).await;
    "finished".into()
}

/// What the `held` tool waits on: it says it started, then runs until the test releases it.
struct Hold {
    started: Semaphore,
    release: Semaphore,
}

impl Hold {
    fn new() -> Arc<Hold> {
        Arc::new(Hold {
            started: Semaphore::new(0),
            release: Semaphore::new(0),
        })
    }

    /// Waits (at most [`WAIT`]) until a `held` call runs.
    async fn started(&self) {
        tokio::time::timeout(WAIT, self.started.acquire())
            .await
            .expect("the `held` call did not start")
            .expect("never closed")
            .forget();
    }
}

/// Runs until the test releases it.
#[tool]
async fn held(hold: State<Arc<Hold>>) -> &'static str {
    hold.started.add_permits(1);
    hold.release.acquire().await.expect("never closed").forget();
    "released"
}

/// Who the user is.
#[derive(Debug, Deserialize, JsonSchema)]
struct Who {
    /// Your name
    name: String,
}

/// Asks the user for their name.
#[tool]
async fn ask_name(ctx: Ctx) -> Result<String, ToolError> {
    match ctx.elicit::<Who>("Who are you?").await? {
        Elicitation::Accept(who) => Ok(format!("hello {}", who.name)),
        Elicitation::Decline => Ok("declined".into()),
        Elicitation::Cancel => Ok("cancelled".into()),
    }
}

/// Asks the client's model.
#[tool]
async fn ask_model(ctx: Ctx) -> Result<String, ToolError> {
    let answer = ctx.sample_text("say hi", 20).await?;
    Ok(format!("model said: {answer}"))
}

/// Disables `hello` for this session; returns the tools still active.
#[tool]
fn hide_hello(tools: ToolManager) -> Result<String, ToolError> {
    Ok(tools.disable(["hello"])?.join(","))
}

/// Tells who is calling.
#[tool]
fn whoami(identity: Identity) -> String {
    identity.subject
}

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

fn core(tools: &[&str]) -> ServerHandle {
    Server::new("t", "0")
        .state(Barrier::new(3))
        .only(tools.iter().copied())
        .build()
        .expect("the test server builds")
}

fn client() -> reqwest::Client {
    mcp_tool_tests::http_client()
}

/// A server listening on a loopback port; stopped when dropped.
struct Served {
    port: u16,
    base: String,
    http: reqwest::Client,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn listen() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("local addr").port();
    (listener, port)
}

fn start(listener: TcpListener, port: u16, router: Router) -> Served {
    let task = tokio::spawn(async move {
        axum::serve(listener, router).await.expect("axum serves");
    });
    Served {
        port,
        base: format!("http://127.0.0.1:{port}"),
        http: client(),
        task,
    }
}

async fn serve(router: Router) -> Served {
    let (listener, port) = listen().await;
    start(listener, port, router)
}

async fn serve_core(core: &ServerHandle, config: HttpConfig) -> Served {
    serve(core.clone().into_router(config)).await
}

/// `core` served by `serve_http`, whose accept loop tells each request its client's address
/// (per-client shares): its port, and the task to stop.
async fn serve_with_accept_loop(
    core: &ServerHandle,
    config: HttpConfig,
) -> (u16, tokio::task::JoinHandle<std::io::Result<()>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = core.clone();
    (
        port,
        tokio::spawn(async move { server.serve_http(listener, config).await }),
    )
}

/// An HTTP client that connects from the loopback address `ip` (another client to the
/// server's per-address shares).
fn client_from(ip: [u8; 4]) -> reqwest::Client {
    mcp_tool_tests::install_crypto_provider();
    reqwest::Client::builder()
        .local_address(std::net::IpAddr::from(ip))
        .build()
        .unwrap()
}

/// A response read whole.
#[derive(Debug)]
struct Reply {
    status: StatusCode,
    headers: reqwest::header::HeaderMap,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    fn content_type(&self) -> &str {
        self.header("content-type").unwrap_or("")
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?} {}", self.status, self.body))
    }

    /// The JSON-RPC messages of the body: one JSON object, or the `data` of each SSE event.
    fn messages(&self) -> Vec<Value> {
        if self.content_type().starts_with("text/event-stream") {
            sse_events(&self.body)
        } else {
            vec![self.json()]
        }
    }

    /// The JSON-RPC error code of a refusal's body.
    fn error_code(&self) -> i64 {
        let body = self.json();
        body["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("not a JSON-RPC error: {body}"))
    }
}

async fn send(request: RequestBuilder) -> Reply {
    let response = tokio::time::timeout(WAIT, request.send())
        .await
        .expect("timed out waiting for the response head")
        .expect("the request was sent");
    read(response).await
}

async fn read(response: reqwest::Response) -> Reply {
    let status = response.status();
    let headers = response.headers().clone();
    let body = tokio::time::timeout(WAIT, response.text())
        .await
        .expect("timed out reading the response body")
        .expect("the body was read");
    Reply {
        status,
        headers,
        body,
    }
}

/// The `data` of each event of a whole SSE body (comments and empty events skipped).
fn sse_events(body: &str) -> Vec<Value> {
    body.replace("\r\n", "\n")
        .split("\n\n")
        .filter_map(event_data)
        .map(|data| serde_json::from_str(&data).expect("SSE data is JSON"))
        .collect()
}

fn event_data(event: &str) -> Option<String> {
    let data: Vec<&str> = event
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| d.strip_prefix(' ').unwrap_or(d))
        .collect();
    (!data.is_empty() && !data.iter().all(|d| d.is_empty())).then(|| data.join("\n"))
}

/// An SSE response read event by event.
struct Events {
    response: reqwest::Response,
    buf: String,
}

impl Events {
    fn new(response: reqwest::Response) -> Events {
        assert_eq!(response.status(), StatusCode::OK);
        let ct = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        assert!(ct.starts_with("text/event-stream"), "not SSE: {ct}");
        Events {
            response,
            buf: String::new(),
        }
    }

    /// The next event's message; `None` when the stream ended.
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let event: String = self.buf.drain(..end + 2).collect();
                match event_data(&event) {
                    Some(data) => return Some(serde_json::from_str(&data).expect("SSE JSON")),
                    None => continue,
                }
            }
            let chunk = tokio::time::timeout(WAIT, self.response.chunk())
                .await
                .expect("timed out waiting for an SSE event")
                .expect("the SSE stream broke");
            match chunk {
                Some(bytes) => self
                    .buf
                    .push_str(std::str::from_utf8(&bytes).expect("UTF-8 SSE")),
                None => {
                    assert!(self.buf.trim().is_empty(), "a partial event: {}", self.buf);
                    return None;
                }
            }
        }
    }

    /// Every remaining message, until the stream ends.
    async fn rest(mut self) -> Vec<Value> {
        let mut all = Vec::new();
        while let Some(m) = self.next().await {
            all.push(m);
        }
        all
    }
}

impl Served {
    fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// A POST as a client sends it, without a session.
    fn post(&self) -> RequestBuilder {
        self.http
            .post(self.url())
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
    }

    async fn post_json(&self, body: &Value) -> Reply {
        send(self.post().body(body.to_string())).await
    }

    /// Initializes a session (declaring `capabilities`) and sends `notifications/initialized`.
    async fn session(&self, capabilities: Value) -> Session<'_> {
        self.session_with(capabilities, |r| r).await
    }

    async fn session_with(
        &self,
        capabilities: Value,
        extra: impl Fn(RequestBuilder) -> RequestBuilder + 'static,
    ) -> Session<'_> {
        let reply = send(extra(
            self.post().body(initialize(capabilities).to_string()),
        ))
        .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        assert!(reply.content_type().starts_with("application/json"));
        assert_eq!(reply.json()["result"]["protocolVersion"], LATEST);
        let id = reply
            .header(SESSION)
            .expect("initialize gives Mcp-Session-Id")
            .to_owned();
        let session = Session {
            srv: self,
            id,
            next: AtomicI64::new(10),
            extra: Box::new(extra),
        };
        let reply = session.notify("notifications/initialized", json!({})).await;
        assert_eq!(reply.status, StatusCode::ACCEPTED);
        assert!(reply.body.is_empty(), "202 with a body: {}", reply.body);
        session
    }
}

fn initialize(capabilities: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LATEST,
            "capabilities": capabilities,
            "clientInfo": { "name": "http-test", "version": "0" },
        },
    })
}

fn request(id: i64, method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

fn call_params(tool: &str, args: Value, token: Option<&str>) -> Value {
    let mut params = json!({ "name": tool, "arguments": args });
    if let Some(t) = token {
        params["_meta"] = json!({ "progressToken": t });
    }
    params
}

/// An initialized session of a served endpoint.
struct Session<'a> {
    srv: &'a Served,
    id: String,
    next: AtomicI64,
    /// Headers every request of this session carries (credentials).
    extra: Box<dyn Fn(RequestBuilder) -> RequestBuilder + 'a>,
}

impl Session<'_> {
    fn next_id(&self) -> i64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// A POST in this session, with the protocol version header.
    fn post(&self) -> RequestBuilder {
        (self.extra)(
            self.srv
                .post()
                .header(SESSION, &self.id)
                .header(VERSION, LATEST),
        )
    }

    async fn post_json(&self, body: &Value) -> Reply {
        send(self.post().body(body.to_string())).await
    }

    async fn notify(&self, method: &str, params: Value) -> Reply {
        self.post_json(&json!({ "jsonrpc": "2.0", "method": method, "params": params }))
            .await
    }

    /// Sends a request; returns its id and the whole reply.
    async fn request(&self, method: &str, params: Value) -> (i64, Reply) {
        let id = self.next_id();
        (id, self.post_json(&request(id, method, params)).await)
    }

    /// Calls a tool expecting a JSON answer; returns the `result`.
    async fn call(&self, tool: &str, args: Value) -> Value {
        let (id, reply) = self
            .request("tools/call", call_params(tool, args, None))
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        assert!(
            reply.content_type().starts_with("application/json"),
            "{}: {}",
            reply.content_type(),
            reply.body
        );
        let body = reply.json();
        assert_eq!(body["id"], id);
        body["result"].clone()
    }

    /// Starts a request and returns the open response (its head has arrived).
    async fn open(&self, body: &Value) -> reqwest::Response {
        tokio::time::timeout(WAIT, self.post().body(body.to_string()).send())
            .await
            .expect("timed out waiting for the response head")
            .expect("the request was sent")
    }

    fn get(&self) -> RequestBuilder {
        (self.extra)(
            self.srv
                .http
                .get(self.srv.url())
                .header(ACCEPT, "text/event-stream")
                .header(SESSION, &self.id)
                .header(VERSION, LATEST),
        )
    }

    fn delete(&self) -> RequestBuilder {
        (self.extra)(
            self.srv
                .http
                .delete(self.srv.url())
                .header(SESSION, &self.id)
                .header(VERSION, LATEST),
        )
    }
}

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {result}"))
}

// ---------------------------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn initialize_issues_a_random_visible_ascii_session_id() {
    let core = core(&["hello"]);
    let srv = serve_core(&core, HttpConfig::default()).await;
    let a = srv.session(json!({})).await;
    let b = srv.session(json!({})).await;
    for id in [&a.id, &b.id] {
        assert!(id.len() >= 32, "a short session id: {id}");
        assert!(
            id.bytes().all(|c| (0x21..=0x7e).contains(&c)),
            "not visible ASCII: {id:?}"
        );
    }
    assert_ne!(a.id, b.id, "two sessions got the same id");

    // A JSON-RPC response from the client (to no request of ours) is accepted too.
    let reply = a
        .post_json(&json!({ "jsonrpc": "2.0", "id": 999, "result": {} }))
        .await;
    assert_eq!(reply.status, StatusCode::ACCEPTED);
    assert!(reply.body.is_empty());

    // Both sessions work, independently.
    assert_eq!(
        text_of(&a.call("hello", json!({"name": "a"})).await),
        "hello a"
    );
    assert_eq!(
        text_of(&b.call("hello", json!({"name": "b"})).await),
        "hello b"
    );

    // Sending initialize with a session id is refused (it opens a new one).
    let reply = send(a.post().body(initialize(json!({})).to_string())).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn requests_need_a_live_session() {
    let core = core(&["hello"]);
    let srv = serve_core(&core, HttpConfig::default()).await;
    let list = request(2, "tools/list", json!({}));

    // No session id.
    let reply = srv.post_json(&list).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    assert_eq!(reply.error_code(), -32600);
    let reply = srv
        .post_json(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);

    // An unknown one.
    let reply = send(
        srv.post()
            .header(SESSION, "no-such-session")
            .body(list.to_string()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.body);
    let reply = send(
        srv.http
            .delete(srv.url())
            .header(SESSION, "no-such-session"),
    )
    .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);

    // A terminated one.
    let s = srv.session(json!({})).await;
    let (_, reply) = s.request("tools/list", json!({})).await;
    assert_eq!(reply.status, StatusCode::OK);
    let reply = send(s.delete()).await;
    assert!(reply.status.is_success(), "DELETE: {:?}", reply.status);
    let (_, reply) = s.request("tools/list", json!({})).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.body);
    let reply = s.notify("notifications/initialized", json!({})).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    let reply = send(s.get()).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    let reply = send(s.delete()).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
}

/// A server of `tools` holding at most `max_sessions` sessions, which expire after 300 ms idle.
async fn short_lived(tools: &[&str], max_sessions: usize, hold: Arc<Hold>) -> Served {
    let core = Server::new("t", "0")
        .state(hold)
        .only(tools.iter().copied())
        .limits(mcp_tool::server::Limits::default().max_sessions(max_sessions))
        .build()
        .expect("the test server builds");
    let mut config = HttpConfig::default();
    config.session_idle = Duration::from_millis(300);
    serve_core(&core, config).await
}

/// Waits until the reaper frees a slot of a server that holds its most sessions: tries a new
/// `initialize` (503 while full) until one opens a session, whose id it returns. It sends
/// nothing in an existing session, so it touches none of them (any request would count as use).
async fn until_a_session_expires(srv: &Served) -> String {
    // A bound for a failure only: the reaper runs every 75 ms against 300 ms of idleness.
    let deadline = Instant::now() + WAIT;
    loop {
        let reply = srv.post_json(&initialize(json!({}))).await;
        if reply.status == StatusCode::OK {
            return reply.header(SESSION).expect("a session id").to_owned();
        }
        assert_eq!(
            reply.status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{}",
            reply.body
        );
        assert!(
            Instant::now() < deadline,
            "no session expired within {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn idle_sessions_expire() {
    let srv = short_lived(&["hello"], 1, Hold::new()).await;
    let s = srv.session(json!({})).await;
    // Used for twice the idle time, every 30 ms: still there. (30 ms between requests against
    // 300 ms of idleness allowed: a margin of 10x for a busy machine.)
    let used = Instant::now();
    while used.elapsed() < Duration::from_millis(600) {
        tokio::time::sleep(Duration::from_millis(30)).await;
        let (_, reply) = s.request("ping", json!({})).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    }
    // Then left alone: the reaper drops it, which frees the server's one slot, and it is gone.
    until_a_session_expires(&srv).await;
    let (_, reply) = s.request("ping", json!({})).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.body);
}

#[tokio::test]
async fn a_call_longer_than_the_idle_time_is_answered_and_keeps_its_session() {
    let hold = Hold::new();
    let srv = short_lived(&["held", "hello"], 2, hold.clone()).await;
    let a = srv.session(json!({})).await;
    let call = a.request("tools/call", call_params("held", json!({}), None));
    let meanwhile = async {
        hold.started().await;
        // A witness opened once the call runs: last used after `a`, and idle from then on.
        let b = srv.session(json!({})).await;
        // The server is full (a, b). When the reaper has dropped a session, `b` is gone, so the
        // reaper has seen `a` idle for longer than `b`: only its call in flight kept it.
        until_a_session_expires(&srv).await;
        let (_, reply) = b.request("ping", json!({})).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.body);
        let (_, reply) = a.request("ping", json!({})).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        hold.release.add_permits(1);
    };
    let ((id, reply), ()) = tokio::join!(call, meanwhile);
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.json()["id"], id);
    assert_eq!(text_of(&reply.json()["result"]), "released");
}

#[tokio::test]
async fn a_session_is_idle_from_the_end_of_its_last_call() {
    // Timers are what is under test here, so the margins are wide: 2 s of idleness (the
    // reaper looks every 500 ms), a call of 2.5 s, and a request 1 s after the call ended.
    let hold = Hold::new();
    let core = Server::new("t", "0")
        .state(hold.clone())
        .only(["held"])
        .build()
        .unwrap();
    let mut config = HttpConfig::default();
    config.session_idle = Duration::from_secs(2);
    let srv = serve_core(&core, config).await;
    let a = srv.session(json!({})).await;
    let call = a.request("tools/call", call_params("held", json!({}), None));
    let meanwhile = async {
        hold.started().await;
        // Longer than the idle time: the call in flight keeps the session.
        tokio::time::sleep(Duration::from_millis(2500)).await;
        hold.release.add_permits(1);
    };
    let ((_, reply), ()) = tokio::join!(call, meanwhile);
    assert_eq!(text_of(&reply.json()["result"]), "released");
    // Two reaper passes later the session is 1 s idle if counted from the end of its call
    // (kept), 3.5 s if counted from its start (dropped).
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (_, reply) = a.request("ping", json!({})).await;
    assert_eq!(
        reply.status,
        StatusCode::OK,
        "the session expired right after its call, as if idle since the call began: {}",
        reply.body
    );
}

#[tokio::test]
async fn protocol_version_header_is_checked() {
    let core = core(&["hello"]);
    let srv = serve_core(&core, HttpConfig::default()).await;
    let s = srv.session(json!({})).await;
    let base = || {
        srv.post()
            .header(SESSION, &s.id)
            .body(request(5, "tools/list", json!({})).to_string())
    };
    // Any version the server speaks is accepted on a session (the official conformance
    // suite sends 2025-03-26 on a 2025-11-25 session).
    for version in ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
        let reply = send(base().header(VERSION, version)).await;
        assert_eq!(reply.status, StatusCode::OK, "{version}: {}", reply.body);
        assert!(reply.json()["result"]["tools"].is_array());
    }
    let reply = send(base()).await;
    assert_eq!(reply.status, StatusCode::OK, "no header: {}", reply.body);
    let reply = send(base().header(VERSION, "1999-01-01")).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    assert_eq!(reply.error_code(), -32600);
    assert!(reply.body.contains("1999-01-01"), "{}", reply.body);
}

// ---------------------------------------------------------------------------------------------
// Host, Origin, bodies
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn host_and_origin_are_checked() {
    let core = core(&["hello"]);
    let srv = serve_core(&core, HttpConfig::default()).await;
    let init = initialize(json!({})).to_string();

    let reply = send(
        srv.post()
            .header(HOST, "evil.example.com")
            .body(init.clone()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN, "{}", reply.body);
    let reply = send(
        srv.post()
            .header(ORIGIN, "http://evil.example.com")
            .body(init.clone()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN, "{}", reply.body);
    let reply = send(
        srv.post()
            .header(HOST, "evil.example.com")
            .header(ORIGIN, "http://evil.example.com")
            .body(init.clone()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    // A look-alike of localhost is not loopback.
    let reply = send(
        srv.post()
            .header(ORIGIN, "http://localhost.evil.example.com")
            .body(init.clone()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);

    let port = srv.port;
    for (host, origin) in [
        (
            format!("localhost:{port}"),
            format!("http://localhost:{port}"),
        ),
        (
            format!("127.0.0.1:{port}"),
            format!("http://127.0.0.1:{port}"),
        ),
        (format!("[::1]:{port}"), format!("http://[::1]:{port}")),
        (
            format!("LocalHost:{port}"),
            format!("http://app.localhost:{port}"),
        ),
    ] {
        let reply = send(
            srv.post()
                .header(HOST, &host)
                .header(ORIGIN, &origin)
                .body(init.clone()),
        )
        .await;
        assert_eq!(
            reply.status,
            StatusCode::OK,
            "{host} {origin}: {}",
            reply.body
        );
        assert!(reply.header(SESSION).is_some());
    }
    // The other methods are guarded too.
    let s = srv.session(json!({})).await;
    let reply = send(s.get().header(HOST, "evil.example.com")).await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    let reply = send(s.delete().header(ORIGIN, "http://evil.example.com")).await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    let (_, reply) = s.request("ping", json!({})).await;
    assert_eq!(
        reply.status,
        StatusCode::OK,
        "the refused DELETE ended the session"
    );
}

#[tokio::test]
async fn configured_hosts_and_origins_are_admitted() {
    let core = core(&["hello"]);
    let mut config = HttpConfig::default();
    config.allowed_hosts = Some(vec!["mcp.example.com".into()]);
    config.allowed_origins = Some(vec!["https://app.example.com".into()]);
    let srv = serve_core(&core, config).await;
    let init = initialize(json!({})).to_string();

    for host in ["mcp.example.com", "mcp.example.com:443"] {
        let reply = send(
            srv.post()
                .header(HOST, host)
                .header(ORIGIN, "https://app.example.com")
                .body(init.clone()),
        )
        .await;
        assert_eq!(reply.status, StatusCode::OK, "{host}: {}", reply.body);
    }
    let reply = send(
        srv.post()
            .header(HOST, "evil.example.com")
            .body(init.clone()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    let reply = send(
        srv.post()
            .header(HOST, "mcp.example.com")
            .header(ORIGIN, "https://evil.example.com")
            .body(init.clone()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn bodies_are_limited_typed_and_parsed() {
    let core = core(&["hello"]);
    let mut config = HttpConfig::default();
    config.body_limit = 1024;
    let srv = serve_core(&core, config).await;

    // Too large: 10 KiB of valid JSON.
    let big = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": LATEST, "capabilities": {}, "clientInfo": { "name": "x".repeat(10 * 1024) } },
    });
    let reply = srv.post_json(&big).await;
    assert_eq!(
        reply.status,
        StatusCode::PAYLOAD_TOO_LARGE,
        "{}",
        reply.body
    );
    // Within the limit: fine.
    let reply = srv.post_json(&initialize(json!({}))).await;
    assert_eq!(reply.status, StatusCode::OK);

    let reply = send(
        srv.http
            .post(srv.url())
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "text/plain")
            .body(initialize(json!({})).to_string()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);

    let reply = send(
        srv.post()
            .body("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\""),
    )
    .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.error_code(), -32700);
    assert_eq!(reply.json()["id"], Value::Null);

    let reply = srv
        .post_json(&json!([
            request(1, "ping", json!({})),
            request(2, "ping", json!({}))
        ]))
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.error_code(), -32600);
}

// ---------------------------------------------------------------------------------------------
// Auth
// ---------------------------------------------------------------------------------------------

fn tokens() -> BearerTokens {
    BearerTokens::new()
        .token("s3cret", "alice")
        .token("b0b-token", "bob")
}

fn bearer(token: &'static str) -> impl Fn(RequestBuilder) -> RequestBuilder {
    move |r| r.header(AUTHORIZATION, format!("Bearer {token}"))
}

/// A head that announces a body, then one byte of it and silence: answered 408 once the body
/// deadline passes, and the connection closed (it held a connection slot for ever before).
#[tokio::test]
async fn a_body_that_stops_coming_is_answered_408_and_its_connection_closed() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let core = core(&["hello"]);
    let mut config = HttpConfig::default();
    config.body_timeout = Duration::from_secs(1);
    let srv = serve_core(&core, config).await;
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", srv.port))
        .await
        .expect("connect");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: 100\r\n\r\n{{",
        srv.port
    );
    stream
        .write_all(head.as_bytes())
        .await
        .expect("send the head");
    let mut answer = Vec::new();
    tokio::time::timeout(WAIT, stream.read_to_end(&mut answer))
        .await
        .expect("the server answers and closes within the bound")
        .expect("read");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer.contains("the body did not arrive within 1 s"),
        "{answer}"
    );
}

/// A header that routes, versions or authenticates a request, sent twice, is refused with
/// 400 before anything reads either value (the first authenticated as alice before).
#[tokio::test]
async fn a_routing_header_sent_twice_is_refused() {
    let core = core(&["whoami", "hello"]);
    let mut config = HttpConfig::default();
    config.auth = Some(Arc::new(tokens()));
    let srv = serve_core(&core, config).await;
    let alice = srv.session_with(json!({}), bearer("s3cret")).await;
    let list = request(3, "tools/list", json!({})).to_string();
    let twice: [(&str, &str, &str); 5] = [
        ("authorization", "Bearer s3cret", "Bearer b0b-token"),
        ("mcp-protocol-version", LATEST, "2025-06-18"),
        ("mcp-method", "tools/list", "tools/call"),
        ("mcp-name", "hello", "whoami"),
        ("mcp-param-region", "a", "b"),
    ];
    for (name, first, second) in twice {
        let mut post = srv.post().header(SESSION, &alice.id);
        if name != "authorization" {
            post = post.header(AUTHORIZATION, "Bearer s3cret");
        }
        let reply = send(
            post.header(name, first)
                .header(name, second)
                .body(list.clone()),
        )
        .await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{name}: {}",
            reply.body
        );
        assert!(
            reply.body.contains("sent more than once"),
            "{name}: {}",
            reply.body
        );
        assert!(!reply.body.contains("s3cret"), "{}", reply.body);
    }
    // Once each, the same request is served.
    assert_eq!(text_of(&alice.call("whoami", json!({})).await), "alice");
}

#[tokio::test]
async fn bearer_tokens_guard_the_endpoint() {
    let core = core(&["whoami", "hello"]);
    let mut config = HttpConfig::default();
    config.auth = Some(Arc::new(tokens()));
    let srv = serve_core(&core, config).await;
    let init = initialize(json!({})).to_string();

    let reply = send(srv.post().body(init.clone())).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{}", reply.body);
    let challenge = reply.header("www-authenticate").expect("WWW-Authenticate");
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(!challenge.contains("resource_metadata"), "{challenge}");
    // No credentials at all: no error code (RFC 6750 §3.1).
    assert!(!challenge.contains("error="), "{challenge}");

    let reply = send(
        srv.post()
            .header(AUTHORIZATION, "Bearer wrong")
            .body(init.clone()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    let challenge = reply.header("www-authenticate").expect("WWW-Authenticate");
    assert!(challenge.contains("invalid_token"), "{challenge}");
    // Another scheme is no bearer token.
    let reply = send(
        srv.post()
            .header(AUTHORIZATION, "Basic czNjcmV0")
            .body(init.clone()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);

    let alice = srv.session_with(json!({}), bearer("s3cret")).await;
    assert_eq!(text_of(&alice.call("whoami", json!({})).await), "alice");
    let bob = srv.session_with(json!({}), bearer("b0b-token")).await;
    assert_eq!(text_of(&bob.call("whoami", json!({})).await), "bob");

    // Alice's session with Bob's token, or with none.
    let reply = send(
        srv.post()
            .header(SESSION, &alice.id)
            .header(AUTHORIZATION, "Bearer b0b-token")
            .body(request(3, "tools/list", json!({})).to_string()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN, "{}", reply.body);
    let reply = send(
        srv.post()
            .header(SESSION, &alice.id)
            .body(request(3, "tools/list", json!({})).to_string()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    let reply = send(
        srv.http
            .delete(srv.url())
            .header(SESSION, &alice.id)
            .header(AUTHORIZATION, "Bearer b0b-token"),
    )
    .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    // Still Alice's.
    assert_eq!(text_of(&alice.call("whoami", json!({})).await), "alice");

    // No metadata configured: no metadata served.
    let reply = send(srv.http.get(format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        srv.base
    )))
    .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn protected_resource_metadata_is_served_and_named() {
    let (listener, port) = listen().await;
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let mut config = HttpConfig::default();
    config.resource_metadata = Some(ResourceMetadata {
        resource: resource.clone(),
        authorization_servers: vec!["https://auth.example.com".into()],
        scopes_supported: vec!["mcp:tools".into()],
    });
    // Through the entry point's configuration: `HttpConfig::with_auth` and `into_router`.
    let router = Server::new("t", "0")
        .only(["whoami"])
        .build()
        .expect("the server builds")
        .into_router(config.with_auth(tokens()));
    let srv = start(listener, port, router);

    let reply = send(srv.post().body(initialize(json!({})).to_string())).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    let challenge = reply
        .header(WWW_AUTHENTICATE.as_str())
        .expect("WWW-Authenticate");
    let metadata_url = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp");
    assert!(
        challenge.starts_with("Bearer ")
            && challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );

    for url in [
        metadata_url.clone(),
        format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource"),
    ] {
        let reply = send(srv.http.get(&url)).await;
        assert_eq!(reply.status, StatusCode::OK, "{url}");
        assert!(reply.content_type().starts_with("application/json"));
        let meta = reply.json();
        assert_eq!(meta["resource"], resource);
        assert_eq!(
            meta["authorization_servers"],
            json!(["https://auth.example.com"])
        );
        assert_eq!(meta["scopes_supported"], json!(["mcp:tools"]));
        assert_eq!(meta["bearer_methods_supported"], json!(["header"]));
    }

    let alice = srv.session_with(json!({}), bearer("s3cret")).await;
    assert_eq!(text_of(&alice.call("whoami", json!({})).await), "alice");
}

/// `serve_http`'s accept loop takes the endpoint's POSTs to their handler itself and hands
/// every other request to the router: each request below gets from it the answer the router
/// alone gives (`into_router` under `axum::serve`) — the endpoint's path with a query, another
/// case or a trailing slash, its other methods, the metadata routes, unknown paths, refusals —
/// with and without a layer around the routes (CORS, which sends every request to the router).
#[tokio::test]
async fn the_accept_loop_answers_every_path_as_the_router_does() {
    let config = |port: u16, cors: bool| {
        let mut config = HttpConfig::default();
        config.resource_metadata = Some(ResourceMetadata {
            resource: format!("http://127.0.0.1:{port}/mcp"),
            authorization_servers: vec!["https://auth.example.com".into()],
            scopes_supported: vec!["mcp:tools".into()],
        });
        if cors {
            config.cors_origins = Some(vec!["http://localhost:3000".into()]);
        }
        config
    };
    for cors in [false, true] {
        let (router_listener, router_port) = listen().await;
        let (loop_listener, loop_port) = listen().await;
        let router = start(
            router_listener,
            router_port,
            core(&["hello"]).into_router(config(router_port, cors)),
        );
        let server = core(&["hello"]);
        let config_of_loop = config(loop_port, cors);
        let task =
            tokio::spawn(async move { server.serve_http(loop_listener, config_of_loop).await });
        let http = client();
        let init = initialize(json!({})).to_string();
        // (method, path and query, content type, Host, body)
        let cases: Vec<(&str, &str, &str, Option<&str>, String)> = vec![
            ("POST", "/mcp", "application/json", None, init.clone()),
            ("POST", "/mcp?x=1", "application/json", None, init.clone()),
            ("POST", "/mcp/", "application/json", None, init.clone()),
            ("POST", "/MCP", "application/json", None, init.clone()),
            ("POST", "/mcp", "text/plain", None, init.clone()),
            (
                "POST",
                "/mcp",
                "application/json",
                Some("evil.example"),
                init.clone(),
            ),
            ("POST", "/mcp", "application/json", None, "{".into()),
            ("POST", "/nope", "application/json", None, init.clone()),
            ("GET", "/nope", "application/json", None, String::new()),
            ("GET", "/mcp", "application/json", None, String::new()),
            ("DELETE", "/mcp", "application/json", None, String::new()),
            ("PUT", "/mcp", "application/json", None, init.clone()),
            (
                "GET",
                "/.well-known/oauth-protected-resource",
                "",
                None,
                String::new(),
            ),
            (
                "GET",
                "/.well-known/oauth-protected-resource/mcp",
                "",
                None,
                String::new(),
            ),
            (
                "POST",
                "/.well-known/oauth-protected-resource",
                "",
                None,
                String::new(),
            ),
        ];
        for (method, path, content_type, host, body) in cases {
            let mut replies = Vec::new();
            for port in [router_port, loop_port] {
                let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
                let mut request = http
                    .request(method, format!("http://127.0.0.1:{port}{path}"))
                    .header(ACCEPT, "application/json, text/event-stream")
                    .body(body.clone());
                if !content_type.is_empty() {
                    request = request.header(CONTENT_TYPE, content_type);
                }
                if let Some(host) = host {
                    request = request.header(HOST, host);
                }
                replies.push(send(request).await);
            }
            let [by_router, by_loop] = <[Reply; 2]>::try_from(replies).unwrap();
            let what = format!("{method} {path} (CORS layer: {cors})");
            assert_eq!(by_loop.status, by_router.status, "{what}: {}", by_loop.body);
            assert_eq!(by_loop.content_type(), by_router.content_type(), "{what}");
            assert_eq!(by_loop.header("allow"), by_router.header("allow"), "{what}");
            assert_eq!(
                by_loop.header(SESSION).is_some(),
                by_router.header(SESSION).is_some(),
                "{what}"
            );
            // The metadata names each server's own address; everything else is the same.
            let body = |reply: &Reply, port: u16| reply.body.replace(&port.to_string(), "PORT");
            assert_eq!(
                body(&by_loop, loop_port),
                body(&by_router, router_port),
                "{what}"
            );
        }
        task.abort();
        drop(router);
    }
}

// ---------------------------------------------------------------------------------------------
// Responses: JSON, SSE, concurrency, requests of the client, the GET stream
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn plain_calls_get_json_and_progress_gets_a_stream() {
    let core = core(&["hello", "steps", "whoami"]);
    let srv = serve_core(&core, HttpConfig::default()).await;
    let s = srv.session(json!({})).await;

    let result = s.call("hello", json!({ "name": "http" })).await;
    assert_eq!(text_of(&result), "hello http");
    assert_ne!(result["isError"], true);
    // Without an authenticator there is no identity.
    let result = s.call("whoami", json!({})).await;
    assert_eq!(result["isError"], true, "{result}");

    // Without a progress token the progress reports are not sent: plain JSON.
    let result = s.call("steps", json!({})).await;
    assert_eq!(text_of(&result), "done");

    let id = s.next_id();
    let reply = s
        .post_json(&request(
            id,
            "tools/call",
            call_params("steps", json!({}), Some("tok")),
        ))
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(
        reply.content_type().starts_with("text/event-stream"),
        "{}",
        reply.content_type()
    );
    let messages = reply.messages();
    assert_eq!(messages.len(), 4, "{messages:#?}");
    for (i, m) in messages[..3].iter().enumerate() {
        assert_eq!(m["method"], "notifications/progress", "{m}");
        assert_eq!(m["params"]["progressToken"], "tok");
        assert_eq!(m["params"]["progress"], i + 1);
        assert_eq!(m["params"]["total"], 3);
        assert_eq!(m["params"]["message"], format!("step {}", i + 1));
    }
    let last = &messages[3];
    assert_eq!(last["id"], id);
    assert_eq!(text_of(&last["result"]), "done");
}

#[tokio::test]
async fn logs_go_on_the_calls_stream() {
    let core = core(&["chatty"]);
    let srv = serve_core(&core, HttpConfig::default()).await;
    let s = srv.session(json!({})).await;
    let (_, reply) = s
        .request("logging/setLevel", json!({ "level": "warning" }))
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.json()["result"], json!({}));

    let id = s.next_id();
    let reply = s
        .post_json(&request(
            id,
            "tools/call",
            call_params("chatty", json!({}), None),
        ))
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.content_type().starts_with("text/event-stream"));
    let messages = reply.messages();
    let logs: Vec<(&str, &str)> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| {
            (
                m["params"]["level"].as_str().unwrap_or("?"),
                m["params"]["data"].as_str().unwrap_or("?"),
            )
        })
        .collect();
    assert_eq!(
        logs,
        [("warning", "disk almost full"), ("error", "query failed")]
    );
    assert_eq!(messages.len(), 3, "{messages:#?}");
    assert_eq!(messages[2]["id"], id);
    assert_eq!(text_of(&messages[2]["result"]), "logged");
}

#[tokio::test]
async fn concurrent_calls_in_one_session_each_get_their_own_stream() {
    let core = core(&["meet"]);
    let srv = serve_core(&core, HttpConfig::default()).await;
    let s = srv.session(json!({})).await;
    // `meet` returns only when three calls wait at once: served one by one, they would hang.
    let one = |tag: &'static str| {
        let id = s.next_id();
        let body = request(
            id,
            "tools/call",
            call_params("meet", json!({ "tag": tag }), Some(tag)),
        );
        let s = &s;
        async move { (tag, id, s.post_json(&body).await) }
    };
    let replies = tokio::time::timeout(WAIT, async {
        let (a, b, c) = tokio::join!(one("a"), one("b"), one("c"));
        [a, b, c]
    })
    .await
    .expect("the three calls did not all run at once");
    for (tag, id, reply) in replies {
        assert_eq!(reply.status, StatusCode::OK, "{tag}: {}", reply.body);
        let messages = reply.messages();
        let (last, progress) = messages.split_last().expect("messages");
        assert_eq!(last["id"], id, "{tag}: {messages:#?}");
        assert_eq!(text_of(&last["result"]), format!("met {tag}"));
        assert_eq!(progress.len(), 2, "{tag}: {messages:#?}");
        for (p, message) in progress.iter().zip(["waiting", "met"]) {
            assert_eq!(p["method"], "notifications/progress");
            assert_eq!(p["params"]["progressToken"], tag, "another call's progress");
            assert_eq!(p["params"]["message"], format!("{tag} {message}"));
        }
    }
}

#[tokio::test]
async fn elicitation_and_sampling_go_over_the_calls_stream() {
    let core = core(&["ask_name", "ask_model"]);
    let srv = serve_core(&core, HttpConfig::default()).await;
    let s = srv
        .session(json!({ "elicitation": {}, "sampling": {} }))
        .await;

    // Elicitation, accepted.
    let call_id = s.next_id();
    let response = s
        .open(&request(
            call_id,
            "tools/call",
            call_params("ask_name", json!({}), None),
        ))
        .await;
    let mut events = Events::new(response);
    let ask = events.next().await.expect("the elicitation request");
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    assert_eq!(ask["params"]["message"], "Who are you?");
    assert_eq!(
        ask["params"]["requestedSchema"]["properties"]["name"]["type"],
        "string"
    );
    let reply = s
        .post_json(&json!({
            "jsonrpc": "2.0",
            "id": ask["id"],
            "result": { "action": "accept", "content": { "name": "Ada" } },
        }))
        .await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    assert!(reply.body.is_empty());
    let rest = events.rest().await;
    assert_eq!(rest.len(), 1, "{rest:#?}");
    assert_eq!(rest[0]["id"], call_id);
    assert_eq!(text_of(&rest[0]["result"]), "hello Ada");

    // Elicitation, declined with an error answer... and sampling.
    let call_id = s.next_id();
    let response = s
        .open(&request(
            call_id,
            "tools/call",
            call_params("ask_model", json!({}), None),
        ))
        .await;
    let mut events = Events::new(response);
    let ask = events.next().await.expect("the sampling request");
    assert_eq!(ask["method"], "sampling/createMessage", "{ask}");
    assert_eq!(ask["params"]["maxTokens"], 20);
    let reply = s
        .post_json(&json!({
            "jsonrpc": "2.0",
            "id": ask["id"],
            "result": {
                "role": "assistant",
                "content": { "type": "text", "text": "hi!" },
                "model": "test-model",
            },
        }))
        .await;
    assert_eq!(reply.status, StatusCode::ACCEPTED);
    let rest = events.rest().await;
    assert_eq!(rest.len(), 1, "{rest:#?}");
    assert_eq!(rest[0]["id"], call_id);
    assert_eq!(text_of(&rest[0]["result"]), "model said: hi!");

    // A session whose client did not declare elicitation: a tool error, as JSON.
    let plain = srv.session(json!({})).await;
    let result = plain.call("ask_name", json!({})).await;
    assert_eq!(result["isError"], true, "{result}");
}

#[tokio::test]
async fn the_get_stream_carries_messages_of_no_request() {
    let core = core(&["hello", "steps"]);
    let srv = serve_core(&core, HttpConfig::default()).await;
    let a = srv.session(json!({})).await;
    let b = srv.session(json!({})).await;

    // Without a session, or without accepting SSE.
    let reply = send(srv.http.get(srv.url()).header(ACCEPT, "text/event-stream")).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    let reply = send(
        srv.http
            .get(srv.url())
            .header(ACCEPT, "application/json")
            .header(SESSION, &a.id),
    )
    .await;
    assert_eq!(reply.status, StatusCode::NOT_ACCEPTABLE);

    let response = tokio::time::timeout(WAIT, a.get().send())
        .await
        .expect("GET head")
        .expect("GET");
    let mut a_events = Events::new(response);
    let reply = send(a.get()).await;
    assert_eq!(reply.status, StatusCode::CONFLICT, "{}", reply.body);
    let response = tokio::time::timeout(WAIT, b.get().send())
        .await
        .expect("GET head")
        .expect("GET");
    let mut b_events = Events::new(response);

    // Calls still answer on their own POST while the GET stream is open.
    assert_eq!(
        text_of(&a.call("hello", json!({"name": "x"})).await),
        "hello x"
    );

    let active = core
        .change_tools(Batch {
            disable: vec!["steps".into()],
            ..Batch::default()
        })
        .expect("a valid change");
    assert_eq!(active, ["hello"]);
    for events in [&mut a_events, &mut b_events] {
        let n = events.next().await.expect("list_changed");
        assert_eq!(n["method"], "notifications/tools/list_changed", "{n}");
        assert!(n.get("id").is_none());
    }
    let (_, reply) = a.request("tools/list", json!({})).await;
    let names: Vec<Value> = reply.json()["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, [json!("hello")]);

    // DELETE ends the session's GET stream.
    let reply = send(a.delete()).await;
    assert!(reply.status.is_success());
    assert_eq!(
        a_events.next().await,
        None,
        "the GET stream outlived its session"
    );

    // A client that dropped its GET stream can open it again.
    drop(b_events);
    let deadline = Instant::now() + WAIT;
    let response = loop {
        let response = tokio::time::timeout(WAIT, b.get().send())
            .await
            .expect("GET head")
            .expect("GET");
        if response.status() != StatusCode::CONFLICT {
            break response;
        }
        assert!(
            Instant::now() < deadline,
            "the dropped GET stream still counts as open {WAIT:?} later (409)"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let mut b_events = Events::new(response);
    core.change_tools(Batch {
        enable: vec!["steps".into()],
        ..Batch::default()
    })
    .expect("a valid change");
    let n = b_events.next().await.expect("list_changed");
    assert_eq!(n["method"], "notifications/tools/list_changed", "{n}");
}

#[tokio::test]
async fn tool_changes_made_by_a_call_go_on_its_stream() {
    let core = core(&["hello", "hide_hello"]);
    let srv = serve_core(&core, HttpConfig::default()).await;
    let a = srv.session(json!({})).await;
    let b = srv.session(json!({})).await;
    let response = tokio::time::timeout(WAIT, b.get().send())
        .await
        .expect("GET head")
        .expect("GET");
    let mut b_events = Events::new(response);
    let response = tokio::time::timeout(WAIT, a.get().send())
        .await
        .expect("GET head")
        .expect("GET");
    let mut a_events = Events::new(response);

    let id = a.next_id();
    let reply = a
        .post_json(&request(
            id,
            "tools/call",
            call_params("hide_hello", json!({}), None),
        ))
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    let messages = reply.messages();
    assert_eq!(messages.len(), 2, "{messages:#?}");
    assert_eq!(messages[0]["method"], "notifications/tools/list_changed");
    assert_eq!(messages[1]["id"], id);
    assert_eq!(text_of(&messages[1]["result"]), "hide_hello");

    // Only this session's list changed; the other one's is as before.
    let (_, reply) = b.request("tools/list", json!({})).await;
    assert_eq!(
        reply.json()["result"]["tools"].as_array().map(Vec::len),
        Some(2)
    );
    let (_, reply) = a.request("tools/list", json!({})).await;
    assert_eq!(
        reply.json()["result"]["tools"].as_array().map(Vec::len),
        Some(1)
    );
    // Nothing went on either GET stream: a global change is the next thing each sees.
    core.change_tools(Batch {
        disable: vec!["hide_hello".into()],
        ..Batch::default()
    })
    .expect("a valid change");
    for events in [&mut a_events, &mut b_events] {
        let n = events.next().await.expect("list_changed");
        assert_eq!(n["method"], "notifications/tools/list_changed", "{n}");
    }
}

#[tokio::test]
async fn cancelling_a_call_ends_its_post_without_a_response() {
    let core = core(&["slow", "hello"]);
    let srv = serve_core(&core, HttpConfig::default()).await;
    let s = srv.session(json!({})).await;
    let id = s.next_id();
    let body = request(
        id,
        "tools/call",
        call_params("slow", json!({ "tag": "plain" }), None),
    );
    // A call that ran on would run for 30 s: `post_json` gives up after WAIT (10 s) and fails.
    let (reply, cancelled) = tokio::join!(s.post_json(&body), async {
        slow_started("plain").await;
        s.notify(
            "notifications/cancelled",
            json!({ "requestId": id, "reason": "enough" }),
        )
        .await
    });
    assert_eq!(cancelled.status, StatusCode::ACCEPTED);
    match reply.status {
        StatusCode::ACCEPTED => assert!(reply.body.is_empty(), "{}", reply.body),
        StatusCode::OK => {
            assert!(reply.content_type().starts_with("text/event-stream"));
            let messages = reply.messages();
            assert!(
                messages
                    .iter()
                    .all(|m| m.get("result").is_none() && m.get("error").is_none()),
                "a cancelled call was answered: {messages:#?}"
            );
        }
        other => panic!("unexpected status {other}: {}", reply.body),
    }
    assert!(slow_dropped("plain"), "the call was not dropped");
    // The session goes on.
    assert_eq!(
        text_of(&s.call("hello", json!({"name": "again"})).await),
        "hello again"
    );
}

#[tokio::test]
async fn cancelling_works_for_a_string_id_written_with_escapes() {
    // JSON-RPC ids compare as values: `"caf\u00e9"` (as Python's json.dumps writes it) is the
    // id `café`, and a cancellation naming `café` names that call.
    let core = core(&["slow"]);
    let srv = serve_core(&core, HttpConfig::default()).await;
    let s = srv.session(json!({})).await;
    let body = r#"{"jsonrpc":"2.0","id":"caf\u00e9","method":"tools/call","params":{"name":"slow","arguments":{"tag":"escaped"}}}"#;
    let (reply, cancelled) = tokio::join!(
        tokio::time::timeout(WAIT, s.post().body(body).send()),
        async {
            slow_started("escaped").await;
            s.notify("notifications/cancelled", json!({ "requestId": "café" }))
                .await
        }
    );
    assert_eq!(cancelled.status, StatusCode::ACCEPTED);
    let reply = reply.expect("the cancellation was ignored: the 30 s call still runs");
    let reply = read(reply.expect("the request was sent")).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    assert!(slow_dropped("escaped"), "the call was not dropped");
}

// ---------------------------------------------------------------------------------------------
// Sessionless mode and mounting
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn sessionless_mode_answers_every_post_on_its_own() {
    let core = core(&["hello", "steps", "ask_model"]);
    let mut config = HttpConfig::default();
    config.sessionless = true;
    let srv = serve_core(&core, config).await;

    let reply = srv.post_json(&initialize(json!({ "sampling": {} }))).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert!(
        reply.header(SESSION).is_none(),
        "a sessionless server issued a session"
    );
    assert_eq!(reply.json()["result"]["protocolVersion"], LATEST);

    let reply = srv
        .post_json(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
        .await;
    assert_eq!(reply.status, StatusCode::ACCEPTED);

    let reply = send(
        srv.post().header(VERSION, LATEST).body(
            request(
                7,
                "tools/call",
                call_params("hello", json!({"name": "s"}), None),
            )
            .to_string(),
        ),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert!(reply.content_type().starts_with("application/json"));
    assert_eq!(reply.json()["id"], 7);
    assert_eq!(text_of(&reply.json()["result"]), "hello s");

    // Progress has nowhere to go: the answer is still one JSON object.
    let reply = srv
        .post_json(&request(
            8,
            "tools/call",
            call_params("steps", json!({}), Some("t")),
        ))
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.content_type().starts_with("application/json"));
    assert_eq!(text_of(&reply.json()["result"]), "done");

    // The client cannot be asked anything.
    let reply = srv
        .post_json(&request(
            9,
            "tools/call",
            call_params("ask_model", json!({}), None),
        ))
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.json()["result"]["isError"], true, "{}", reply.body);

    let reply = send(srv.http.get(srv.url()).header(ACCEPT, "text/event-stream")).await;
    assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED);
    let reply = send(srv.http.delete(srv.url())).await;
    assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED);

    // Still checked: Host and version.
    let reply = send(
        srv.post()
            .header(HOST, "evil.example.com")
            .body(initialize(json!({})).to_string()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    let reply = send(
        srv.post()
            .header(VERSION, "1999-01-01")
            .body(request(10, "ping", json!({})).to_string()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn the_router_mounts_beside_other_routes() {
    let core = core(&["hello"]);
    let mut config = HttpConfig::default();
    config.path = "/api/mcp".into();
    let app = Router::new()
        .route("/health", get(|| async { "ok" }))
        .merge(core.into_router(config));
    let srv = serve(app).await;

    let reply = send(srv.http.get(format!("{}/health", srv.base))).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.body, "ok");

    let reply = send(
        srv.http
            .post(format!("{}/api/mcp", srv.base))
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .body(initialize(json!({})).to_string()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let session = reply.header(SESSION).expect("a session").to_owned();
    let reply = send(
        srv.http
            .post(format!("{}/api/mcp", srv.base))
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .header(SESSION, &session)
            .body(
                request(
                    2,
                    "tools/call",
                    call_params("hello", json!({"name": "m"}), None),
                )
                .to_string(),
            ),
    )
    .await;
    assert_eq!(text_of(&reply.json()["result"]), "hello m");

    // The default path is not served when another is configured.
    let reply = srv.post_json(&initialize(json!({}))).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
}

// ---------------------------------------------------------------------------------------------
// Graceful shutdown of a real binary
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_calls_in_flight_finish_and_exits_cleanly() {
    // ExampleHttp builds the binary, waits until it listens and kills it when dropped.
    let mut server = tokio::task::spawn_blocking(mcp_tool_tests::ExampleHttp::users)
        .await
        .expect("the server starts");
    let pid = server.child.id().to_string();
    let port = server.addr.port();
    let srv = Served {
        port,
        base: format!("http://127.0.0.1:{port}"),
        http: client(),
        task: tokio::spawn(async {}),
    };
    let s = srv.session(json!({})).await;
    let call_id = s.next_id();
    let response = s
        .open(&request(
            call_id,
            "tools/call",
            call_params("seed_users", json!({ "count": 20 }), Some("seed")),
        ))
        .await;
    let mut events = Events::new(response);
    let first = events.next().await.expect("the first progress");
    assert_eq!(first["method"], "notifications/progress");
    // The rest of the call is read meanwhile; `answered` tells when its response came.
    let answered = Arc::new(AtomicBool::new(false));
    let reader = {
        let answered = answered.clone();
        tokio::spawn(async move {
            let mut rest = Vec::new();
            while let Some(m) = events.next().await {
                if m.get("id").is_some() {
                    answered.store(true, Ordering::SeqCst);
                }
                rest.push(m);
            }
            rest
        })
    };

    let status = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill runs");
    assert!(status.success());

    // New requests are refused (no connection, or 503) once the signal has landed; one sent
    // before may still be served, so they are tried until one is refused.
    let fresh = client();
    let deadline = Instant::now() + WAIT;
    loop {
        // The call runs about a second more after its first progress, and a signal lands
        // within milliseconds: a refusal of a request sent while the call had not been answered
        // is one during the shutdown, not after the exit.
        let in_flight = !answered.load(Ordering::SeqCst);
        let attempt = tokio::time::timeout(
            WAIT,
            fresh
                .post(srv.url())
                .header(ACCEPT, "application/json, text/event-stream")
                .header(CONTENT_TYPE, "application/json")
                .body(initialize(json!({})).to_string())
                .send(),
        )
        .await
        .expect("a new request hung during shutdown");
        let refused = match &attempt {
            Err(_) => true,
            Ok(r) if r.status() == StatusCode::SERVICE_UNAVAILABLE => true,
            Ok(r) => {
                assert_eq!(r.status(), StatusCode::OK, "{r:?}");
                false
            }
        };
        if refused {
            assert!(
                in_flight,
                "new requests were refused only once the call in flight had been answered"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "new requests were still served {WAIT:?} after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // The call in flight finishes, its progress then its result.
    let rest = reader.await.expect("the reader");
    let (last, progress) = rest.split_last().expect("the rest of the call");
    assert_eq!(last["id"], call_id, "{rest:#?}");
    assert_eq!(text_of(&last["result"]), "created 20 demo users");
    assert_eq!(progress.len(), 19, "{rest:#?}");
    assert_eq!(progress.last().expect("progress")["params"]["progress"], 20);

    // Then the process exits, with status 0.
    let deadline = Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = server.child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "users still running {WAIT:?} after its last call"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "users exited with {status}");
}

// ---------------------------------------------------------------------------------------------
// Bounds and answers owed
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn sessions_are_bounded_and_a_failed_initialize_opens_none() {
    let core = Server::new("t", "0")
        .only(["hello"])
        .limits(mcp_tool::server::Limits::default().max_sessions(2))
        .build()
        .unwrap();
    let srv = serve_core(&core, HttpConfig::default()).await;
    // An initialize without params fails: no session, no id.
    let reply = srv
        .post_json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"}))
        .await;
    assert_eq!(reply.json()["error"]["code"], -32602, "{}", reply.body);
    assert!(reply.header(SESSION).is_none(), "{:?}", reply.headers);
    let _a = srv.session(json!({})).await;
    let _b = srv.session(json!({})).await;
    let reply = srv.post_json(&initialize(json!({}))).await;
    assert_eq!(
        reply.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        reply.body
    );
    assert!(reply.header(SESSION).is_none());
}

/// One client cannot take every session: each subject (with credentials), else each address
/// (anonymous, through `serve_http`), holds at most its share, and others still initialize.
#[tokio::test]
async fn each_client_holds_at_most_its_share_of_sessions() {
    let core = Server::new("t", "0")
        .only(["whoami"])
        .limits(mcp_tool::server::Limits::default().max_sessions_per_client(2))
        .build()
        .unwrap();
    let mut config = HttpConfig::default();
    config.auth = Some(Arc::new(tokens()));
    let srv = serve_core(&core, config).await;
    let _a1 = srv.session_with(json!({}), bearer("s3cret")).await;
    let _a2 = srv.session_with(json!({}), bearer("s3cret")).await;
    let reply = send(
        srv.post()
            .header(AUTHORIZATION, "Bearer s3cret")
            .body(initialize(json!({})).to_string()),
    )
    .await;
    assert_eq!(
        reply.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        reply.body
    );
    assert!(
        reply.body.contains("this client holds as many sessions"),
        "{}",
        reply.body
    );
    assert!(reply.header(SESSION).is_none());
    // Bob is another client.
    let bob = srv.session_with(json!({}), bearer("b0b-token")).await;
    assert_eq!(text_of(&bob.call("whoami", json!({})).await), "bob");

    // Anonymous clients count by address through the accept loop of `serve_http`.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = core.clone();
    let task =
        tokio::spawn(async move { server.serve_http(listener, HttpConfig::default()).await });
    let mut refused = None;
    for _ in 0..3 {
        let reply = send(
            client()
                .post(&url)
                .header(CONTENT_TYPE, "application/json")
                .header(ACCEPT, "application/json, text/event-stream")
                .body(initialize(json!({})).to_string()),
        )
        .await;
        refused = Some(reply);
    }
    let refused = refused.unwrap();
    assert_eq!(
        refused.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        refused.body
    );
    task.abort();
}

/// Anonymous 2026-07-28 clients each have their own share of tasks (by the address they come
/// from): one that fills its share leaves the others room (they all shared one owner before).
#[tokio::test]
async fn anonymous_2026_clients_each_have_their_own_share_of_tasks() {
    let core = Server::new("t", "0")
        .only(["job"])
        .task_settings(mcp_tool::server::tasks::TaskSettings {
            max_per_owner: 2,
            ..Default::default()
        })
        .build()
        .unwrap();
    let (port, task) = serve_with_accept_loop(&core, HttpConfig::default()).await;
    // Two clients on two loopback addresses.
    let from = client_from;
    let run_job = |http: reqwest::Client| async move {
        let body = json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {
                "name": "job", "arguments": {},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {
                        "extensions": { "io.modelcontextprotocol/tasks": {} }
                    }
                }
            }
        });
        send(
            http.post(format!("http://127.0.0.1:{port}/mcp"))
                .header(CONTENT_TYPE, "application/json")
                .header(ACCEPT, "application/json, text/event-stream")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "job")
                .body(body.to_string()),
        )
        .await
    };
    let first = from([127, 0, 0, 1]);
    for _ in 0..2 {
        let reply = run_job(first.clone()).await;
        assert_eq!(
            reply.json()["result"]["resultType"],
            "task",
            "{}",
            reply.body
        );
    }
    let full = run_job(first).await;
    assert!(full.json()["error"].is_object(), "{}", full.body);
    // Another address still has its own two.
    let reply = run_job(from([127, 0, 0, 2])).await;
    assert_eq!(
        reply.json()["result"]["resultType"],
        "task",
        "{}",
        reply.body
    );
    task.abort();
}

/// Calls `job` as a 2025-11-25 task; the whole answer.
async fn as_task(s: &Session<'_>) -> Value {
    let mut params = call_params("job", json!({}), None);
    params["task"] = json!({ "ttl": 3_600_000 });
    let body = request(s.next_id(), "tools/call", params);
    s.post_json(&body).await.json()
}

/// The sessions of one anonymous 2025-11-25 client hold one share of tasks, the server a
/// total, and a session that ends takes its tasks with it (nobody else could ask for them):
/// before, each session had a share of its own and its tasks outlived it for their whole
/// time to live.
#[tokio::test]
async fn an_anonymous_clients_sessions_share_its_tasks_and_take_them_when_they_end() {
    let core = Server::new("t", "0")
        .only(["job"])
        .task_settings(mcp_tool::server::tasks::TaskSettings {
            max_per_owner: 2,
            max_tasks: 3,
            ..Default::default()
        })
        .build()
        .unwrap();
    let (port, task) = serve_with_accept_loop(&core, HttpConfig::default()).await;
    // Two clients on two loopback addresses (the server is served above, not by `Served`).
    let from = |ip: [u8; 4]| {
        let http = client_from(ip);
        Served {
            port,
            base: format!("http://127.0.0.1:{port}"),
            http,
            task: tokio::spawn(async {}),
        }
    };
    let srv = from([127, 0, 0, 1]);
    let one = srv.session(json!({})).await;
    let two = srv.session(json!({})).await;
    for _ in 0..2 {
        let created = as_task(&one).await;
        assert!(created["result"]["task"]["taskId"].is_string(), "{created}");
    }
    let refused = as_task(&two).await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("holds 2 tasks")),
        "another session of the same client has no share of its own: {refused}"
    );
    let other = from([127, 0, 0, 2]);
    let three = other.session(json!({})).await;
    let created = as_task(&three).await;
    assert!(created["result"]["task"]["taskId"].is_string(), "{created}");
    let refused = as_task(&three).await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("the server holds 3 tasks")),
        "the server keeps three in all: {refused}"
    );

    // The first session ends: its two tasks go, and the client's share is free again.
    let reply = send(one.delete()).await;
    assert!(reply.status.is_success(), "{}", reply.body);
    let deadline = Instant::now() + WAIT;
    loop {
        let again = as_task(&two).await;
        if again["result"]["task"]["taskId"].is_string() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the ended session's tasks still count: {again}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (_, listed) = two.request("tasks/list", json!({})).await;
    let listed = listed.json();
    assert_eq!(
        listed["result"]["tasks"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
    task.abort();
}

/// Listen streams are legitimate and endless, and each holds a connection: one client may
/// hold so many, the server so many in all — fewer than its connections — and a stream that
/// ends frees its place (before, 1,100 anonymous streams took every connection).
#[tokio::test]
async fn listen_streams_are_bounded_per_client_and_in_all() {
    let core = Server::new("t", "0")
        .only(["hello"])
        .limits(mcp_tool::server::Limits::default().max_listen_streams(3, 2))
        .build()
        .unwrap();
    let (port, task) = serve_with_accept_loop(&core, HttpConfig::default()).await;
    let from = client_from;
    // Opens a stream: the response once its head came (a stream), or the error it got.
    let listen = |http: reqwest::Client| async move {
        let body = json!({
            "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
            "params": {
                "notifications": { "toolsListChanged": true },
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {}
                }
            }
        });
        let response = tokio::time::timeout(
            WAIT,
            http.post(format!("http://127.0.0.1:{port}/mcp"))
                .header(CONTENT_TYPE, "application/json")
                .header(ACCEPT, "application/json, text/event-stream")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "subscriptions/listen")
                .body(body.to_string())
                .send(),
        )
        .await
        .expect("a response head")
        .expect("a response");
        if response
            .headers()
            .get(CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"))
        {
            Ok(response)
        } else {
            Err(response.text().await.unwrap_or_default())
        }
    };
    let one = from([127, 0, 0, 1]);
    let first = listen(one.clone()).await.expect("a first stream");
    let _second = listen(one.clone()).await.expect("a second stream");
    let refused = listen(one.clone())
        .await
        .expect_err("a third of one client");
    assert!(
        refused.contains("this client holds 2 listen streams"),
        "{refused}"
    );
    let _other = listen(from([127, 0, 0, 2]))
        .await
        .expect("another client's");
    let refused = listen(from([127, 0, 0, 3]))
        .await
        .expect_err("a fourth in all");
    assert!(
        refused.contains("the server holds 3 listen streams"),
        "{refused}"
    );
    // A stream that ends frees its place.
    drop(first);
    let deadline = Instant::now() + WAIT;
    loop {
        match listen(one.clone()).await {
            Ok(_again) => break,
            Err(e) => assert!(Instant::now() < deadline, "still refused: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    task.abort();
}

/// Connections that say nothing from one address hold at most that address's share of the
/// connection slots: the next one from it is answered 503 and closed, while another address
/// is served (before, 1,100 silent connections from one address held all 1,024).
#[tokio::test]
async fn one_address_holds_at_most_its_share_of_connections() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpSocket;

    let core = core(&["hello"]);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut config = HttpConfig::default();
    config.max_connections_per_address = 2;
    let server = core.clone();
    let task = tokio::spawn(async move { server.serve_http(listener, config).await });
    let connect_from = |ip: [u8; 4]| async move {
        let socket = TcpSocket::new_v4().unwrap();
        socket.bind(std::net::SocketAddr::from((ip, 0))).unwrap();
        socket.connect(addr).await.unwrap()
    };
    // Sends a whole request on `stream`; the status line of the answer.
    async fn ask(stream: &mut tokio::net::TcpStream) -> String {
        let body = initialize(json!({})).to_string();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(head.as_bytes()).await;
        let mut answer = Vec::new();
        let _ = tokio::time::timeout(WAIT, stream.read_to_end(&mut answer)).await;
        String::from_utf8_lossy(&answer)
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned()
    }
    // Two silent connections from one address.
    let silent = [
        connect_from([127, 0, 0, 1]).await,
        connect_from([127, 0, 0, 1]).await,
    ];
    let deadline = Instant::now() + WAIT;
    loop {
        let mut third = connect_from([127, 0, 0, 1]).await;
        let status = ask(&mut third).await;
        if status.contains("503") {
            break;
        }
        // The accept loop may not have counted the silent ones yet.
        assert!(
            Instant::now() < deadline,
            "a third connection got {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut other = connect_from([127, 0, 0, 2]).await;
    assert!(
        ask(&mut other).await.contains("200"),
        "another address is served"
    );
    // A silent connection that closes frees its place.
    drop(silent);
    let deadline = Instant::now() + WAIT;
    loop {
        let mut again = connect_from([127, 0, 0, 1]).await;
        let status = ask(&mut again).await;
        if status.contains("200") {
            break;
        }
        assert!(Instant::now() < deadline, "still refused: {status:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    task.abort();
}

#[tokio::test]
async fn a_request_whose_session_is_deleted_gets_an_error_not_silence() {
    let core = core(&["ask_name"]);
    let srv = serve_core(&core, HttpConfig::default()).await;
    let s = srv.session(json!({ "elicitation": {} })).await;
    let body = request(7, "tools/call", call_params("ask_name", json!({}), None));
    // The call's stream opens with its question: the call is running.
    let mut events = Events::new(s.open(&body).await);
    let asked = events.next().await.expect("the question");
    assert_eq!(asked["method"], "elicitation/create");
    let reply = send(s.delete()).await;
    assert!(reply.status.is_success(), "{}", reply.body);
    // The stream ends with an error for the request, not in silence.
    let rest = events.rest().await;
    let last = rest.last().expect("an answer before the stream ends");
    assert_eq!(last["id"], 7, "{last}");
    assert!(
        last["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("session ended")),
        "{last}"
    );
}

#[tokio::test]
async fn two_requests_with_one_id_at_once_are_told_apart() {
    let core = core(&["ask_name"]);
    let srv = serve_core(&core, HttpConfig::default()).await;
    let s = srv.session(json!({ "elicitation": {} })).await;
    let body = request(9, "tools/call", call_params("ask_name", json!({}), None));
    let mut first = Events::new(s.open(&body).await);
    let asked = first.next().await.expect("the first call's question");
    let second = s.post_json(&body).await;
    assert_eq!(second.status, StatusCode::CONFLICT, "{}", second.body);
    assert_eq!(second.error_code(), -32600);
    // The first still gets its own answer.
    let answer = json!({"action": "accept", "content": {"name": "Ada"}});
    let reply = s
        .post_json(&json!({"jsonrpc": "2.0", "id": asked["id"], "result": answer}))
        .await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    let rest = first.rest().await;
    assert_eq!(rest.last().unwrap()["id"], 9, "{rest:?}");
    assert!(rest.last().unwrap()["result"].is_object(), "{rest:?}");
}

#[tokio::test]
async fn a_client_that_accepts_only_json_gets_json() {
    let core = core(&["steps"]);
    let srv = serve_core(&core, HttpConfig::default()).await;
    let s = srv.session(json!({})).await;
    let body = request(3, "tools/call", call_params("steps", json!({}), Some("p")));
    let reply = send(
        srv.http
            .post(srv.url())
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/json")
            .header(SESSION, &s.id)
            .header(VERSION, LATEST)
            .body(body.to_string()),
    )
    .await;
    assert!(
        reply.content_type().starts_with("application/json"),
        "{}: {}",
        reply.content_type(),
        reply.body
    );
    assert_eq!(reply.json()["result"]["content"][0]["text"], "done");
}

#[tokio::test]
async fn only_json_is_taken_as_json() {
    let core = core(&["hello"]);
    let srv = serve_core(&core, HttpConfig::default()).await;
    for content_type in ["application/jsonx", "application/json-seq", "text/json"] {
        let reply = send(
            srv.http
                .post(srv.url())
                .header(ACCEPT, "application/json, text/event-stream")
                .header(CONTENT_TYPE, content_type)
                .body(initialize(json!({})).to_string()),
        )
        .await;
        assert_eq!(
            reply.status,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "{content_type}: {}",
            reply.body
        );
    }
    let reply = send(
        srv.http
            .post(srv.url())
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json; charset=utf-8")
            .body(initialize(json!({})).to_string()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
}

#[tokio::test]
async fn a_host_that_merely_starts_like_loopback_is_refused() {
    let core = core(&["hello"]);
    let srv = serve_core(&core, HttpConfig::default()).await;
    for host in ["[::1]evil.com", "[::1].evil.com:80", "127.0.0.1.evil.com"] {
        let reply = send(
            srv.post()
                .header(HOST, host)
                .body(initialize(json!({})).to_string()),
        )
        .await;
        assert_eq!(
            reply.status,
            StatusCode::FORBIDDEN,
            "{host}: {}",
            reply.body
        );
    }
    for origin in ["http://[::1].evil.com", "http://[::1]evil.com:8080"] {
        let reply = send(
            srv.post()
                .header(ORIGIN, origin)
                .body(initialize(json!({})).to_string()),
        )
        .await;
        assert_eq!(
            reply.status,
            StatusCode::FORBIDDEN,
            "{origin}: {}",
            reply.body
        );
    }
}

/// Serves `core` with `serve_http` itself (its accept loop), not through a router.
async fn serve_real(core: &ServerHandle, config: HttpConfig) -> (u16, tokio::task::JoinHandle<()>) {
    let (listener, port) = listen().await;
    let core = core.clone();
    let task = tokio::spawn(async move {
        let _ = core.serve_http(listener, config).await;
    });
    (port, task)
}

/// A connection to `serve_real` with heads due within `header_timeout`.
async fn connect_with_head_deadline(
    header_timeout: Duration,
) -> (tokio::net::TcpStream, tokio::task::JoinHandle<()>) {
    let core = core(&["hello"]);
    let mut config = HttpConfig::default();
    config.header_timeout = header_timeout;
    let (port, task) = serve_real(&core, config).await;
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    (stream, task)
}

/// Sends the start of a head whose rest never comes, and waits for the server to close the
/// connection (answering 408, or nothing).
async fn send_half_a_head_and_wait_for_the_close(stream: &mut tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let mut rest = Vec::new();
    let read = tokio::time::timeout(WAIT, stream.read_to_end(&mut rest)).await;
    assert!(read.is_ok(), "the connection stayed open");
    let text = String::from_utf8_lossy(&rest);
    assert!(
        text.is_empty() || text.starts_with("HTTP/1.1 408"),
        "{text}"
    );
}

#[tokio::test]
async fn a_connection_that_dribbles_its_head_is_closed() {
    let (mut stream, task) = connect_with_head_deadline(Duration::from_millis(300)).await;
    send_half_a_head_and_wait_for_the_close(&mut stream).await;
    task.abort();
}

/// Reads one bodiless answer's head from `stream` (as much as came with it).
async fn read_head(stream: &mut tokio::net::TcpStream) -> String {
    use tokio::io::AsyncReadExt;
    let mut got = Vec::new();
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let mut buf = [0u8; 1024];
        let n = tokio::time::timeout(WAIT, stream.read(&mut buf))
            .await
            .expect("an answer")
            .unwrap();
        assert!(
            n > 0,
            "closed before an answer: {}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&got).into_owned()
}

#[tokio::test]
async fn each_head_on_a_kept_connection_has_its_own_deadline() {
    use tokio::io::AsyncWriteExt;
    let (mut stream, task) = connect_with_head_deadline(Duration::from_millis(400)).await;
    let ask = b"GET /nothing-here HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    // Heads that come in time, past the first head's deadline: the connection stays.
    for _ in 0..3 {
        stream.write_all(ask).await.unwrap();
        let head = read_head(&mut stream).await;
        assert!(head.starts_with("HTTP/1.1 404"), "{head}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // A head that never ends is cut off at its own deadline: 400 ms after the last answer,
    // not at an earlier head's.
    stream.write_all(ask).await.unwrap();
    read_head(&mut stream).await;
    let answered = Instant::now();
    send_half_a_head_and_wait_for_the_close(&mut stream).await;
    let waited = answered.elapsed();
    assert!(
        waited >= Duration::from_millis(300),
        "cut off after {waited:?}"
    );
    task.abort();
}

#[tokio::test]
async fn connections_beyond_the_cap_wait_their_turn() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let core = core(&["hello"]);
    let mut config = HttpConfig::default();
    config.max_connections = 2;
    let (port, task) = serve_real(&core, config).await;
    let connect = || tokio::net::TcpStream::connect(("127.0.0.1", port));
    // Two idle connections hold both slots.
    let first = connect().await.unwrap();
    let second = connect().await.unwrap();
    // A third is queued by the kernel, not served, while they stay.
    let url = format!("http://127.0.0.1:{port}/mcp");
    let http = client();
    let waiting = tokio::spawn(async move {
        http.post(url)
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .body(initialize(json!({})).to_string())
            .send()
            .await
            .map(|r| r.status())
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !waiting.is_finished(),
        "a third connection was served beside two"
    );
    // One slot frees: it is served.
    drop(first);
    let status = tokio::time::timeout(WAIT, waiting)
        .await
        .expect("served once a slot freed")
        .unwrap()
        .unwrap();
    assert_eq!(status, StatusCode::OK);
    let mut second = second;
    let _ = second.write_all(b"\r\n").await;
    let mut sink = Vec::new();
    let _ = tokio::time::timeout(Duration::from_millis(10), second.read_to_end(&mut sink)).await;
    task.abort();
}

/// CORS for browser clients: off by default; with origins configured, their preflights are
/// answered (the MCP headers allowed, no others), their answers name them and expose the
/// session and version headers, and any other origin gets nothing.
#[tokio::test]
async fn cors_answers_the_configured_origins_only() {
    use reqwest::Method;

    let app = "https://app.example";
    let preflight = |srv: &Served, origin: &str| {
        srv.http
            .request(Method::OPTIONS, srv.url())
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "content-type, mcp-protocol-version, mcp-param-region, cookie",
            )
    };
    // Off by default: no preflight is answered.
    let plain = serve_core(&core(&["hello"]), HttpConfig::default()).await;
    let reply = send(preflight(&plain, app)).await;
    assert!(
        reply.header("access-control-allow-origin").is_none(),
        "{reply:?}"
    );

    let mut config = HttpConfig::default();
    config.cors_origins = Some(vec![app.to_owned()]);
    let srv = serve_core(&core(&["hello"]), config).await;
    let reply = send(preflight(&srv, app)).await;
    assert_eq!(reply.status, StatusCode::NO_CONTENT, "{reply:?}");
    assert_eq!(reply.header("access-control-allow-origin"), Some(app));
    assert_eq!(
        reply.header("access-control-allow-methods"),
        Some("GET, POST, DELETE")
    );
    assert_eq!(
        reply.header("access-control-allow-headers"),
        Some("content-type, mcp-protocol-version, mcp-param-region"),
        "cookie is not an MCP header"
    );
    // The answer to the origin's initialize names it and lets its script read the session.
    let reply = send(
        srv.post()
            .header("origin", app)
            .body(initialize(json!({})).to_string()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.header("access-control-allow-origin"), Some(app));
    assert!(
        reply
            .header("access-control-expose-headers")
            .is_some_and(|h| h.contains("mcp-session-id")),
        "{reply:?}"
    );
    // Another origin: no preflight, no CORS headers, and its requests refused.
    let evil = "https://evil.example";
    let reply = send(preflight(&srv, evil)).await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    assert!(reply.header("access-control-allow-origin").is_none());
    let reply = send(
        srv.post()
            .header("origin", evil)
            .body(initialize(json!({})).to_string()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN, "{}", reply.body);
    assert!(reply.header("access-control-allow-origin").is_none());
}

/// A server binary takes its CORS origins from `MCP_TOOL_CORS_ORIGINS`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_binary_takes_its_cors_origins_from_the_environment() {
    let app = "https://app.example";
    let calc = tokio::task::spawn_blocking(move || {
        mcp_tool_tests::ExampleHttp::start("calc", &[], &[("MCP_TOOL_CORS_ORIGINS", app)])
    })
    .await
    .unwrap();
    let reply = send(
        client()
            .request(reqwest::Method::OPTIONS, &calc.url)
            .header("origin", app)
            .header("access-control-request-method", "POST"),
    )
    .await;
    assert_eq!(reply.status, StatusCode::NO_CONTENT, "{reply:?}");
    assert_eq!(reply.header("access-control-allow-origin"), Some(app));
    // A POST to the endpoint goes through the CORS layer too: with origins configured, the
    // accept loop does not hand it straight to its handler.
    let reply = send(
        client()
            .post(&calc.url)
            .header("origin", app)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(initialize(json!({})).to_string()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
    assert_eq!(
        reply.header("access-control-allow-origin"),
        Some(app),
        "{reply:?}"
    );
}

/// CORS `*` (any origin) lifts the Origin check, so it is taken only where credentials are
/// required: without them, `serve_http` and a server binary refuse to start with it, and a
/// router answers no origin for it; with them, any origin is answered and a request without
/// its token is still refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_for_any_origin_needs_credentials() {
    let evil = "https://evil.example";
    let any = || Some(vec!["*".to_owned()]);
    // serve_http: an error at once, naming `*`.
    let mut config = HttpConfig::default();
    config.cors_origins = any();
    let (listener, _) = listen().await;
    let served = tokio::time::timeout(WAIT, core(&["hello"]).serve_http(listener, config))
        .await
        .expect("refused at once, not served");
    let e = served.unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}");
    assert!(e.to_string().contains("`*` among the CORS origins"), "{e}");
    // A router: `*` is not honoured, the page's request refused as any other origin's.
    let mut config = HttpConfig::default();
    config.cors_origins = any();
    let open = serve_core(&core(&["hello"]), config).await;
    let reply = send(
        open.post()
            .header("origin", evil)
            .body(initialize(json!({})).to_string()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN, "{}", reply.body);
    assert!(reply.header("access-control-allow-origin").is_none());
    // With credentials required: any origin answered, and still asked for its token.
    let mut config = HttpConfig::default().with_auth(BearerTokens::new().token("tok", "ann"));
    config.cors_origins = any();
    let guarded = serve_core(&core(&["hello"]), config).await;
    let reply = send(
        guarded
            .http
            .request(reqwest::Method::OPTIONS, guarded.url())
            .header("origin", evil)
            .header("access-control-request-method", "POST"),
    )
    .await;
    assert_eq!(reply.status, StatusCode::NO_CONTENT, "{reply:?}");
    assert_eq!(reply.header("access-control-allow-origin"), Some(evil));
    let post = || {
        guarded
            .post()
            .header("origin", evil)
            .body(initialize(json!({})).to_string())
    };
    let reply = send(post()).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{}", reply.body);
    let reply = send(post().header(AUTHORIZATION, "Bearer tok")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    // A server binary without credentials stops at start, naming the variable.
    let calc = tokio::task::spawn_blocking(|| mcp_tool_tests::example_bin("calc"))
        .await
        .unwrap();
    let run = tokio::process::Command::new(calc)
        .args(["--http", "127.0.0.1:0"])
        .env("MCP_TOOL_CORS_ORIGINS", "*")
        .env_remove("MCP_TOOL_BEARER_TOKENS")
        .env_remove("MCP_TOOL_OAUTH_ISSUER")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .output();
    let run = tokio::time::timeout(WAIT, run)
        .await
        .expect("the binary stops instead of serving")
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("MCP_TOOL_CORS_ORIGINS: `*` would let any web page"),
        "{stderr}"
    );
}

/// Sends one `initialize` over HTTP/1.1 on a Unix socket; the status line and the body.
#[cfg(unix)]
async fn initialize_over_unix_socket(path: &std::path::Path) -> (String, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::UnixStream::connect(path)
        .await
        .expect("the socket accepts");
    let body = initialize(json!({})).to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(WAIT, stream.read_to_end(&mut answer))
        .await
        .expect("an answer in time")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer.lines().next().unwrap_or_default().to_owned();
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// HTTP on a Unix socket, for hosts on the same machine: in process (`serve_http_unix`) and
/// from a server binary's command line (`--http unix:PATH`, a stale socket file replaced).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_is_served_on_a_unix_socket() {
    let dir = mcp_tool_tests::TempDir::new("unix-socket");
    let path = dir.path().join("mcp.sock");
    let listener = tokio::net::UnixListener::bind(&path).unwrap();
    let server = core(&["hello"]);
    let task = tokio::spawn(async move {
        server
            .serve_http_unix(listener, HttpConfig::default())
            .await
    });
    let (status, body) = initialize_over_unix_socket(&path).await;
    assert!(status.contains("200"), "{status}: {body}");
    assert!(body.contains("\"protocolVersion\""), "{body}");
    task.abort();
    // Its listener is dropped with it: the file is a stale socket nobody listens on.
    let _ = task.await;

    // A server binary, on the path a stopped one left its socket file at.
    let binary = tokio::task::spawn_blocking(|| mcp_tool_tests::example_bin("calc"))
        .await
        .unwrap();
    let arg = format!("unix:{}", path.display());
    let mut calc = tokio::process::Command::new(binary)
        .args(["--http", &arg])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + WAIT;
    loop {
        if tokio::net::UnixStream::connect(&path).await.is_ok() {
            break;
        }
        assert!(Instant::now() < deadline, "the socket was never served");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (status, body) = initialize_over_unix_socket(&path).await;
    assert!(status.contains("200"), "{status}: {body}");
    assert!(body.contains("\"calc\""), "{body}");
    let _ = calc.kill().await;
}

/// A second server started on the socket of a live one does not take it over: it stops,
/// naming the path, and the first goes on serving on its file.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_unix_socket_is_never_taken_over() {
    use std::process::Stdio;

    let dir = mcp_tool_tests::TempDir::new("unix-socket-live");
    let path = dir.path().join("mcp.sock");
    let binary = tokio::task::spawn_blocking(|| mcp_tool_tests::example_bin("calc"))
        .await
        .unwrap();
    let arg = format!("unix:{}", path.display());
    let mut first = tokio::process::Command::new(binary)
        .args(["--http", &arg])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + WAIT;
    while tokio::net::UnixStream::connect(&path).await.is_err() {
        assert!(Instant::now() < deadline, "the socket was never served");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let second = tokio::process::Command::new(binary)
        .args(["--http", &arg])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let second = tokio::time::timeout(WAIT, second)
        .await
        .expect("the second server stops instead of serving")
        .unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "cannot listen on {}: a server is listening there already",
            path.display()
        )),
        "{stderr}"
    );
    // The first still serves, on the same file.
    let (status, body) = initialize_over_unix_socket(&path).await;
    assert!(status.contains("200"), "{status}: {body}");
    assert!(body.contains("\"calc\""), "{body}");
    let _ = first.kill().await;
}

/// POSTs `body` over HTTP/1.1 on a Unix socket with `headers`; the answer's body.
#[cfg(unix)]
async fn post_over_unix_socket(path: &std::path::Path, headers: &str, body: &Value) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::UnixStream::connect(path)
        .await
        .expect("the socket accepts");
    let body = body.to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(WAIT, stream.read_to_end(&mut answer))
        .await
        .expect("an answer in time")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default()
}

/// Over a Unix socket every client is the one local principal, as over stdio: a rate limit
/// counts all of its 2026-07-28 requests together (each would otherwise be a new principal).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_unix_sockets_clients_are_one_local_principal() {
    let dir = mcp_tool_tests::TempDir::new("unix-principal");
    let path = dir.path().join("mcp.sock");
    let listener = tokio::net::UnixListener::bind(&path).unwrap();
    let server = Server::new("t", "0")
        .only(["hello"])
        .middleware(mcp_tool::middleware::RateLimit::parse("2/1m").unwrap())
        .build()
        .unwrap();
    let task = tokio::spawn(async move {
        server
            .serve_http_unix(listener, HttpConfig::default())
            .await
    });
    let headers =
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: hello\r\n";
    let mut limited = 0;
    for id in 0..4 {
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "hello",
            "arguments": { "name": "a" },
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": { "name": "t", "version": "0" }
            }
        }});
        let answer = post_over_unix_socket(&path, headers, &body).await;
        assert!(answer.contains("\"result\""), "{answer}");
        limited += usize::from(answer.contains("RATE_LIMITED"));
    }
    assert_eq!(
        limited, 2,
        "2 of 4 calls over the socket admitted under 2/1m"
    );
    task.abort();
}
