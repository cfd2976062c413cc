//! Resumable SSE streams of 2025-11-25 sessions over real sockets: a request's stream cut
//! mid-call and resumed with `Last-Event-ID` gets exactly the events it missed; the GET stream
//! resumes and goes on; a call may let its stream go (polling); unknown, malformed and
//! trimmed ids are refused clearly; a JSON answer never touches the event store; and, with a
//! real `redis-server`, a stream started on one replica (a process) resumes on another.
//!
//! Servers run in-process on `127.0.0.1:0` (the Redis test spawns two `conformance`
//! examples), and every wait is bounded.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_tool::http::HttpConfig;
use mcp_tool::http::events::{EventFuture, EventStore, MemoryEventStore, Replay};
use mcp_tool::prelude::*;
use mcp_tool::server::ServerHandle;
use mcp_tool_tests::ExampleHttp;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{Value, json};

/// The longest any single wait may take.
const WAIT: Duration = Duration::from_secs(10);

const SESSION: &str = "mcp-session-id";

// ---------------------------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------------------------

/// Reports progress `n` times, `gap_ms` apart, then answers.
#[tool]
async fn ticks(n: u32, gap_ms: u64, progress: Progress) -> String {
    for i in 1..=n {
        progress.report(f64::from(i), f64::from(n), &format!("tick {i}"));
        tokio::time::sleep(Duration::from_millis(gap_ms)).await;
    }
    format!("{n} ticks")
}

/// Lets its stream go at once, then reports progress twice and answers.
#[tool]
async fn polled(ctx: Ctx) -> String {
    ctx.close_stream();
    tokio::time::sleep(Duration::from_millis(30)).await;
    ctx.progress(1.0, 2.0, "one");
    ctx.progress(2.0, 2.0, "two");
    "polled".into()
}

/// Tells every session that the tool list changed.
#[tool]
fn changed(server: ServerHandle) -> &'static str {
    server.notify_tools_changed();
    "told"
}

/// Greets someone.
#[tool]
fn hello(name: String) -> String {
    format!("hello {name}")
}

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

/// A server on a loopback port; stopped when dropped.
struct Served {
    url: String,
    http: reqwest::Client,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(config: HttpConfig) -> Served {
    let core = Server::new("t", "0")
        .only(["ticks", "polled", "changed", "hello"])
        .build()
        .expect("the test server builds");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("local addr").port();
    let router = core.into_router(config);
    let task = tokio::spawn(async move {
        axum::serve(listener, router).await.expect("axum serves");
    });
    Served {
        url: format!("http://127.0.0.1:{port}/mcp"),
        http: client(),
        task,
    }
}

fn client() -> reqwest::Client {
    mcp_tool_tests::http_client()
}

/// A 2025-11-25 session of the endpoint at `url`.
struct Session {
    url: String,
    http: reqwest::Client,
    id: String,
}

impl Session {
    async fn open(url: &str, http: &reqwest::Client) -> Session {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "sse-resume-test", "version": "0"}}});
        let reply = within(post(http, url, None, &init).send()).await;
        assert_eq!(reply.status(), StatusCode::OK);
        let id = reply.headers()[SESSION].to_str().expect("ascii").to_owned();
        let session = Session {
            url: url.to_owned(),
            http: http.clone(),
            id,
        };
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let reply = within(session.post(&done).send()).await;
        assert_eq!(reply.status(), StatusCode::ACCEPTED);
        session
    }

    fn post(&self, body: &Value) -> reqwest::RequestBuilder {
        post(&self.http, &self.url, Some(&self.id), body)
    }

    /// Calls a tool (with a progress token) and returns its SSE answer.
    async fn call_stream(&self, id: u64, tool: &str, arguments: Value) -> Sse {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": tool, "arguments": arguments, "_meta": {"progressToken": "p"}}});
        let reply = within(self.post(&body).send()).await;
        assert_eq!(reply.status(), StatusCode::OK);
        Sse::new(reply)
    }

    /// A GET of the session's endpoint, resuming after `last_event` if given.
    async fn get(&self, last_event: Option<&str>) -> reqwest::Response {
        let mut get = self
            .http
            .get(&self.url)
            .header(ACCEPT, "text/event-stream")
            .header(SESSION, &self.id);
        if let Some(id) = last_event {
            get = get.header("last-event-id", id);
        }
        within(get.send()).await
    }

    async fn resume(&self, last_event: &str) -> Sse {
        let reply = self.get(Some(last_event)).await;
        assert_eq!(
            reply.status(),
            StatusCode::OK,
            "resuming after {last_event}"
        );
        Sse::new(reply)
    }
}

fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &Value,
) -> reqwest::RequestBuilder {
    let mut post = http
        .post(url)
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .body(body.to_string());
    if let Some(id) = session {
        post = post.header(SESSION, id);
    }
    post
}

async fn within<T, E: std::fmt::Debug>(f: impl Future<Output = Result<T, E>>) -> T {
    tokio::time::timeout(WAIT, f)
        .await
        .expect("an answer within the bound")
        .expect("the request succeeds")
}

/// One SSE event as read.
#[derive(Debug, Clone)]
struct Event {
    id: Option<String>,
    data: String,
    retry: Option<u64>,
}

impl Event {
    fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }

    /// The number after the stream key in the event's id.
    fn seq(&self) -> u64 {
        let id = self.id.as_deref().expect("an id");
        id.rsplit_once('.')
            .and_then(|(_, n)| n.parse().ok())
            .unwrap_or_else(|| panic!("not `stream.n`: {id}"))
    }

    fn stream(&self) -> &str {
        let id = self.id.as_deref().expect("an id");
        id.rsplit_once('.').expect("stream.n").0
    }
}

/// An SSE response read event by event.
struct Sse {
    response: reqwest::Response,
    buffer: String,
}

impl Sse {
    fn new(response: reqwest::Response) -> Sse {
        let kind = response.headers().get(CONTENT_TYPE).cloned();
        assert_eq!(
            kind.as_ref().and_then(|v| v.to_str().ok()),
            Some("text/event-stream")
        );
        Sse {
            response,
            buffer: String::new(),
        }
    }

    /// The next event (keep-alive comments skipped); `None` when the stream ended.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(at) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..at + 2).collect();
                let mut event = Event {
                    id: None,
                    data: String::new(),
                    retry: None,
                };
                let mut fields = 0;
                for line in block.lines() {
                    let (field, value) = line.split_once(':').unwrap_or((line, ""));
                    let value = value.strip_prefix(' ').unwrap_or(value);
                    match field {
                        "id" => event.id = Some(value.to_owned()),
                        "data" => event.data.push_str(value),
                        "retry" => event.retry = value.parse().ok(),
                        _ => continue,
                    }
                    fields += 1;
                }
                if fields > 0 {
                    return Some(event);
                }
                continue;
            }
            let chunk = tokio::time::timeout(WAIT, self.response.chunk())
                .await
                .expect("an event within the bound")
                .expect("the stream reads");
            match chunk {
                Some(bytes) => self
                    .buffer
                    .push_str(std::str::from_utf8(&bytes).expect("UTF-8")),
                None => return None,
            }
        }
    }

    /// Every event to the end of the stream.
    async fn rest(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        while let Some(e) = self.next().await {
            events.push(e);
        }
        events
    }
}

/// The priming event: an id ending in `.0`, empty data, and `retry:`.
fn assert_priming(event: &Event) {
    assert_eq!(event.seq(), 0, "{event:?}");
    assert!(event.data.is_empty(), "{event:?}");
    assert!(event.retry.is_some(), "{event:?}");
}

/// The progress value of a `notifications/progress` event.
fn progress_of(event: &Event) -> u64 {
    let message = event.json();
    assert_eq!(message["method"], "notifications/progress", "{event:?}");
    message["params"]["progress"].as_f64().expect("progress") as u64
}

/// Checks that `events` are `stream.from`, `stream.from+1`, … with no gap or repeat, and ends
/// with the response to request `id` whose text is `text`.
fn assert_runs_to_the_response(events: &[Event], stream: &str, from: u64, id: u64, text: &str) {
    let seqs: Vec<u64> = events.iter().map(Event::seq).collect();
    let want: Vec<u64> = (from..from + events.len() as u64).collect();
    assert_eq!(seqs, want, "events in order, none missed or repeated");
    assert!(events.iter().all(|e| e.stream() == stream));
    let last = events.last().expect("at least the response").json();
    assert_eq!(last["id"], id);
    assert_eq!(last["result"]["content"][0]["text"], text, "{last}");
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_cut_stream_resumes_with_exactly_the_events_it_missed() {
    let served = serve(HttpConfig::default()).await;
    let session = Session::open(&served.url, &served.http).await;
    let mut sse = session
        .call_stream(2, "ticks", json!({"n": 8, "gap_ms": 20}))
        .await;
    let priming = sse.next().await.expect("the priming event");
    assert_priming(&priming);
    let stream = priming.stream().to_owned();
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(sse.next().await.expect("an event"));
    }
    assert_eq!(seen.iter().map(progress_of).collect::<Vec<_>>(), [1, 2, 3]);
    // The client goes away mid-call; the call goes on.
    drop(sse);
    let last = seen[2].id.clone().expect("an id");
    let missed = session.resume(&last).await.rest().await;
    assert_runs_to_the_response(&missed, &stream, 4, 2, "8 ticks");
    let progress: Vec<u64> = missed[..missed.len() - 1].iter().map(progress_of).collect();
    assert_eq!(progress, [4, 5, 6, 7, 8]);
    // Once the call is over, the stream is still there to replay, from any event of it.
    let again = session.resume(&format!("{stream}.6")).await.rest().await;
    assert_runs_to_the_response(&again, &stream, 7, 2, "8 ticks");
}

#[tokio::test]
async fn the_get_stream_resumes_and_goes_on() {
    let served = serve(HttpConfig::default()).await;
    let session = Session::open(&served.url, &served.http).await;
    let call = |id: u64| {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "changed", "arguments": {}}});
        session.post(&body).send()
    };
    let mut get = Sse::new(session.get(None).await);
    let priming = get.next().await.expect("the priming event");
    assert_priming(&priming);
    let stream = priming.stream().to_owned();
    within(call(2)).await;
    let first = get.next().await.expect("the first change");
    assert_eq!(first.json()["method"], "notifications/tools/list_changed");
    assert_eq!(first.seq(), 1);
    drop(get);
    // Told while nobody listens: kept for the resume.
    within(call(3)).await;
    within(call(4)).await;
    let mut resumed = session.resume(&format!("{stream}.1")).await;
    for seq in [2, 3] {
        let event = resumed.next().await.expect("a missed change");
        assert_eq!((event.stream(), event.seq()), (stream.as_str(), seq));
        assert_eq!(event.json()["method"], "notifications/tools/list_changed");
    }
    // The resumed stream is the session's GET stream: a second one is refused, and what
    // comes next arrives on it.
    assert_eq!(session.get(None).await.status(), StatusCode::CONFLICT);
    within(call(5)).await;
    let live = resumed
        .next()
        .await
        .expect("a change told after the resume");
    assert_eq!((live.stream(), live.seq()), (stream.as_str(), 4));
}

#[tokio::test]
async fn a_call_may_let_its_stream_go_and_the_client_resumes_it() {
    let served = serve(HttpConfig::default()).await;
    let session = Session::open(&served.url, &served.http).await;
    let mut sse = session.call_stream(2, "polled", json!({})).await;
    let priming = sse.next().await.expect("the priming event");
    assert_priming(&priming);
    // Let go: a `retry:` and the end of the connection, no result.
    let rest = sse.rest().await;
    assert!(rest.iter().all(|e| e.data.is_empty()), "{rest:?}");
    assert!(rest.iter().any(|e| e.retry.is_some()), "{rest:?}");
    let resumed = session
        .resume(priming.id.as_deref().expect("an id"))
        .await
        .rest()
        .await;
    assert_runs_to_the_response(&resumed, priming.stream(), 1, 2, "polled");
    let progress: Vec<u64> = resumed[..2].iter().map(progress_of).collect();
    assert_eq!(progress, [1, 2]);
}

#[tokio::test]
async fn unknown_malformed_and_foreign_ids_are_refused_clearly() {
    let served = serve(HttpConfig::default()).await;
    let session = Session::open(&served.url, &served.http).await;
    let refusal = |reply: reqwest::Response| async move {
        let status = reply.status();
        let body: Value = within(reply.json()).await;
        (
            status,
            body["error"]["message"].as_str().unwrap_or("").to_owned(),
        )
    };
    let (status, message) = refusal(
        session
            .get(Some("0123456789abcdef0123456789abcdef.3"))
            .await,
    )
    .await;
    assert_eq!(status, StatusCode::GONE);
    assert!(message.contains("unknown or expired"), "{message}");
    let (status, message) = refusal(session.get(Some("not-an-event")).await).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(message.contains("not an event id"), "{message}");
    // Another session's stream is no stream of this one.
    let other = Session::open(&served.url, &served.http).await;
    let mut sse = other
        .call_stream(2, "ticks", json!({"n": 1, "gap_ms": 0}))
        .await;
    let theirs = sse.next().await.expect("the priming event");
    let (status, _) = refusal(session.get(theirs.id.as_deref()).await).await;
    assert_eq!(status, StatusCode::GONE);
}

#[tokio::test]
async fn a_stream_over_its_cap_loses_its_oldest_events_and_says_so() {
    let store = MemoryEventStore::new().max_per_stream(4);
    let served = serve(HttpConfig::default().with_event_store(store)).await;
    let session = Session::open(&served.url, &served.http).await;
    let mut sse = session
        .call_stream(2, "ticks", json!({"n": 10, "gap_ms": 0}))
        .await;
    let priming = sse.next().await.expect("the priming event");
    let stream = priming.stream().to_owned();
    drop(sse);
    // Events 1-10 are progress, 11 the response; following from 10 waits for the end.
    let end = session.resume(&format!("{stream}.10")).await.rest().await;
    assert_runs_to_the_response(&end, &stream, 11, 2, "10 ticks");
    // Only the newest four are kept: a resume from before them is refused, not served a gap.
    let reply = session.get(Some(&format!("{stream}.0"))).await;
    assert_eq!(reply.status(), StatusCode::GONE);
    let body: Value = within(reply.json()).await;
    let message = body["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("were dropped"), "{message}");
    let kept = session.resume(&format!("{stream}.7")).await.rest().await;
    assert_runs_to_the_response(&kept, &stream, 8, 2, "10 ticks");
}

/// Sends one call answered whole as an SSE stream (`sse_responses`) on a server with
/// `config`, checks its priming event and answer, then resumes it from the priming event and
/// gets the answer again.
async fn a_whole_answer_resumes(mut config: HttpConfig) {
    config.sse_responses = true;
    let served = serve(config).await;
    let session = Session::open(&served.url, &served.http).await;
    let hello = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "hello", "arguments": {"name": "ann"}}});
    let mut sse = Sse::new(within(session.post(&hello).send()).await);
    let priming = sse.next().await.expect("the priming event");
    assert_priming(&priming);
    let stream = priming.stream().to_owned();
    assert_runs_to_the_response(&sse.rest().await, &stream, 1, 2, "hello ann");
    let again = session.resume(&format!("{stream}.0")).await.rest().await;
    assert_runs_to_the_response(&again, &stream, 1, 2, "hello ann");
}

#[tokio::test]
async fn a_whole_answer_sent_as_a_stream_is_kept_for_a_resume() {
    // The in-memory store names the answer's stream itself.
    a_whole_answer_resumes(HttpConfig::default()).await;
}

#[tokio::test]
async fn a_whole_answer_is_kept_by_a_store_that_does_not_name_answers() {
    // `Counting` leaves `keep_answer` as the trait has it: the transport names the stream
    // and appends the answer to it.
    let store = Counting::default();
    let calls = store.calls.clone();
    a_whole_answer_resumes(HttpConfig::default().with_event_store(store)).await;
    // The append of the answer, and the replay of the resume.
    assert_eq!(calls.load(Ordering::SeqCst), 2, "the answer was not kept");
    // A name a resume could not give is not used: the answer goes to a stream of ours.
    let store = Counting {
        bad_names: true,
        ..Counting::default()
    };
    let calls = store.calls.clone();
    a_whole_answer_resumes(HttpConfig::default().with_event_store(store)).await;
    assert_eq!(calls.load(Ordering::SeqCst), 2, "the answer was not kept");
}

/// The in-memory store, counting what it is asked; it names no answer itself (or, with
/// `bad_names`, names each with what is no stream key).
#[derive(Default)]
struct Counting {
    inner: MemoryEventStore,
    calls: Arc<AtomicUsize>,
    bad_names: bool,
}

impl EventStore for Counting {
    fn open<'a>(&'a self, stream: &'a str, owner: &'a str) -> EventFuture<'a, ()> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.open(stream, owner)
    }

    fn append<'a>(
        &'a self,
        stream: &'a str,
        owner: &'a str,
        seq: u64,
        data: &'a str,
        last: bool,
    ) -> EventFuture<'a, ()> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.append(stream, owner, seq, data, last)
    }

    fn keep_answer<'a>(&'a self, _: &'a str, _: &'a str) -> EventFuture<'a, Option<String>> {
        let name = self.bad_names.then(|| "not.a stream key".to_owned());
        Box::pin(std::future::ready(Ok(name)))
    }

    fn end<'a>(&'a self, stream: &'a str, seq: u64) -> EventFuture<'a, ()> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.end(stream, seq)
    }

    fn replay<'a>(&'a self, stream: &'a str, after: u64) -> EventFuture<'a, Option<Replay>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.replay(stream, after)
    }
}

#[tokio::test]
async fn a_json_answer_never_touches_the_event_store() {
    let store = Counting::default();
    let calls = store.calls.clone();
    let served = serve(HttpConfig::default().with_event_store(store)).await;
    let session = Session::open(&served.url, &served.http).await;
    let hello = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "hello", "arguments": {"name": "ann"}}});
    let reply = within(session.post(&hello).send()).await;
    assert_eq!(reply.headers()[CONTENT_TYPE], "application/json");
    let body: Value = within(reply.json()).await;
    assert_eq!(body["result"]["content"][0]["text"], "hello ann");
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "a JSON answer touched the store"
    );
    // An SSE answer does: open, then one append per event (a progress and the response).
    let events = session
        .call_stream(3, "ticks", json!({"n": 1, "gap_ms": 0}))
        .await
        .rest()
        .await;
    assert_eq!(events.len(), 3);
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

/// A `redis-server` of this test's own on a free loopback port, without persistence; killed
/// when dropped.
struct Redis {
    child: Child,
    port: u16,
}

impl Redis {
    fn start() -> Redis {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "redis-server does not start ({e}): install it (`apt-get install redis-server`)"
                )
            });
        let redis = Redis { child, port };
        let deadline = Instant::now() + WAIT;
        while !redis.pong() {
            assert!(
                Instant::now() < deadline,
                "redis-server never answered PING"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        redis
    }

    fn pong(&self) -> bool {
        let Ok(mut tcp) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let mut reply = [0u8; 7];
        tcp.write_all(b"PING\r\n").is_ok()
            && tcp.read_exact(&mut reply).is_ok()
            && &reply == b"+PONG\r\n"
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn a_stream_started_on_one_replica_resumes_on_another() {
    let redis = Redis::start();
    let url = format!("redis://127.0.0.1:{}", redis.port);
    let env = [("MCP_TOOL_EVENT_STORE", url.as_str())];
    let a = ExampleHttp::start("conformance", &[], &env);
    let b = ExampleHttp::start("conformance", &[], &env);
    let http = client();
    let on_a = Session::open(&a.url, &http).await;
    // Progress 0, 50 and 100, 50 ms apart, then the response.
    let mut sse = on_a
        .call_stream(2, "test_tool_with_progress", json!({}))
        .await;
    let priming = sse.next().await.expect("the priming event");
    assert_priming(&priming);
    let first = sse.next().await.expect("the first progress");
    assert_eq!(progress_of(&first), 0);
    drop(sse);
    // Replica B has never seen the session: it replays the stream from Redis, then follows
    // it there while A writes the rest.
    let on_b = Session {
        url: b.url.clone(),
        http: http.clone(),
        id: on_a.id.clone(),
    };
    let rest = on_b
        .resume(first.id.as_deref().expect("an id"))
        .await
        .rest()
        .await;
    let seqs: Vec<u64> = rest.iter().map(Event::seq).collect();
    assert_eq!(seqs, [2, 3, 4], "each event once, in order: {rest:?}");
    assert!(rest.iter().all(|e| e.stream() == priming.stream()));
    let progress: Vec<u64> = rest[..2].iter().map(progress_of).collect();
    assert_eq!(progress, [50, 100]);
    let response = rest[2].json();
    assert_eq!(response["id"], 2);
    assert!(
        response["result"]["content"][0]["text"].is_string(),
        "{response}"
    );
    // Someone else's session id does not open the stream on B either.
    let stranger = Session {
        url: b.url.clone(),
        http: http.clone(),
        id: "00".repeat(32),
    };
    let reply = stranger.get(first.id.as_deref()).await;
    assert_eq!(reply.status(), StatusCode::GONE);
}

#[tokio::test]
async fn the_environment_bounds_the_answers_kept_for_a_resume() {
    // Two events in all: of three answers sent whole as streams, the first is forgotten.
    const TEXT: &str = "This is a simple text response for testing.";
    let env = [("MCP_TOOL_EVENT_STORE_BOUNDS", "events=2,age=10m")];
    let server = ExampleHttp::start("conformance", &["--sse"], &env);
    let http = client();
    let session = Session::open(&server.url, &http).await;
    let mut streams = Vec::new();
    for id in 2..=4 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "test_simple_text", "arguments": {}}});
        let mut sse = Sse::new(within(session.post(&call).send()).await);
        let priming = sse.next().await.expect("the priming event");
        streams.push(priming.stream().to_owned());
        assert_runs_to_the_response(&sse.rest().await, &streams[streams.len() - 1], 1, id, TEXT);
    }
    let reply = session.get(Some(&format!("{}.0", streams[0]))).await;
    assert_eq!(reply.status(), StatusCode::GONE);
    let again = session
        .resume(&format!("{}.0", streams[2]))
        .await
        .rest()
        .await;
    assert_runs_to_the_response(&again, &streams[2], 1, 4, TEXT);
}
