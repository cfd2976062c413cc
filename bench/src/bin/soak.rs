//! `soak`: a long mixed load on `bench-server` over stdio and Streamable HTTP at once, with the
//! server's resident memory and open files sampled every minute. Not part of the test run
//! (it takes minutes): `cargo run --release -p mcp-tool-bench --bin soak -- [seconds]`
//! (600 by default).
//!
//! stdio: one connection, up to 2,000 calls in flight (`add`, `create_user`, valid and not,
//! unknown tools, lines that are no JSON, `wait` of 10 ms to 1 s), a third of the waits
//! cancelled at a random moment, and a reader that stops reading for 2 s every 30 s (a slow
//! client: the server must stop reading, not queue). Every request not cancelled must be
//! answered exactly once, a cancelled one at most once.
//!
//! HTTP: 32 clients, each opening sessions one after another: `initialize`, 20–100 calls of
//! the same mix (cancellations sent on a second connection while the call waits), then
//! `DELETE`; one session in ten vanishes instead (a call left running, its connection dropped,
//! no `DELETE`). Every POST must get an answer (JSON-RPC, or a 4xx for what is not), and
//! every answer to a request must carry its id. Every POST of theirs is timed (sent → whole
//! answer read): the end prints their p50, p99, p99.9 and max, and their error rate (no
//! answer, a 5xx, a 503 or 429 refusal, another id, a connection that failed).
//!
//! `soak SECONDS --flood`: beside that load, an anonymous attacker on 127.0.0.2 (the
//! well-behaved clients stay on 127.0.0.1) floods the HTTP server for the whole run:
//! `initialize` at up to 500 a second, never deleted (refused 503 once its address holds its
//! share of sessions); `tools/call` of `quick_job` as tasks of a day in a few of its sessions;
//! 2,000 2026-07-28 `subscriptions/listen` streams attempted and kept open; 1,100 connections
//! that send half a request head, and 200 a head announcing a megabyte and one byte of it,
//! then say nothing (reconnecting once the server closes them). What the flood got is printed
//! apart; it counts neither toward the well-behaved errors nor toward the exit code.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpSocket, TcpStream};
use tokio::process::{Child, Command};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;
use tokio::time::MissedTickBehavior;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"soak","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A small xorshift generator: the mix needs no better randomness.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One operation of the mix, as the params of a `tools/call` (or `None`: a line that is no
/// JSON), and the `wait` it makes, if any (milliseconds).
fn operation(rng: &mut Rng) -> (Option<Value>, Option<u64>) {
    match rng.below(10) {
        0..=2 => (
            Some(json!({"name": "add", "arguments": {"a": rng.below(1000), "b": 7}})),
            None,
        ),
        3 | 4 => (
            Some(json!({"name": "create_user", "arguments": {
                "email": format!("u{}@example.com", rng.below(100_000)),
                "name": "Soak Test",
                "role": "user"
            }})),
            None,
        ),
        // Bad input: a field the schema refuses, an unknown tool, no JSON at all.
        5 => (
            Some(json!({"name": "create_user", "arguments": {"email": "nope", "name": "x"}})),
            None,
        ),
        6 => (Some(json!({"name": "no_such_tool", "arguments": {}})), None),
        7 => (None, None),
        _ => {
            let ms = 10 + rng.below(990);
            (
                Some(json!({"name": "wait", "arguments": {"ms": ms}})),
                Some(ms),
            )
        }
    }
}

fn call_line(id: u64, params: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

fn cancel_line(id: u64) -> String {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
           "params": {"requestId": id, "reason": "soak"}})
    .to_string()
}

/// The server's resident set (VmRSS, KiB) and open file descriptors.
fn sample(pid: u32) -> (u64, usize) {
    let rss = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0);
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count);
    (rss, fds)
}

fn server_path() -> Result<PathBuf> {
    let me = std::env::current_exe()?;
    Ok(me.with_file_name("bench-server"))
}

// ---- stdio ----

/// What became of each request id of the stdio connection.
const SENT: u8 = 0;
const ANSWERED: u8 = 1;
const CANCELLED: u8 = 2;
const CANCELLED_ANSWERED: u8 = 3;

#[derive(Default)]
struct StdioCounts {
    requests: AtomicU64,
    answers: AtomicU64,
    cancels: AtomicU64,
    null_ids: AtomicU64,
    wrong: AtomicU64,
}

struct StdioLeg {
    child: Child,
    counts: Arc<StdioCounts>,
    states: Arc<Mutex<Vec<u8>>>,
}

async fn start_stdio(stop: Arc<tokio::sync::Notify>) -> Result<StdioLeg> {
    let mut child = Command::new(server_path()?)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .env("RUST_LOG", "error")
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or("stdin")?;
    let stdout = child.stdout.take().ok_or("stdout")?;
    let counts = Arc::new(StdioCounts::default());
    // Id 0 is the handshake's.
    let states = Arc::new(Mutex::new(vec![SENT]));
    // One more for the handshake, whose answer gives its permit back.
    let window = Arc::new(Semaphore::new(2001));
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        while let Some(line) = rx.recv().await {
            if stdin.write_all(line.as_bytes()).await.is_err()
                || stdin.write_all(b"\n").await.is_err()
            {
                break;
            }
        }
        // Dropped: the server's input closes.
    });
    tx.send(INITIALIZE.into())?;
    tx.send(INITIALIZED.into())?;
    // The reader: a slow client every 30 s.
    {
        let (counts, states, window) = (counts.clone(), states.clone(), window.clone());
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            let mut pause = Instant::now() + Duration::from_secs(30);
            while let Ok(Some(line)) = lines.next_line().await {
                if Instant::now() > pause {
                    tokio::time::sleep(Duration::from_secs(2)).await;
                    pause = Instant::now() + Duration::from_secs(30);
                }
                let Ok(message) = serde_json::from_str::<Value>(&line) else {
                    counts.wrong.fetch_add(1, Ordering::Relaxed);
                    continue;
                };
                if message.get("method").is_some() {
                    continue;
                }
                let Some(id) = message["id"].as_u64() else {
                    counts.null_ids.fetch_add(1, Ordering::Relaxed);
                    continue;
                };
                counts.answers.fetch_add(1, Ordering::Relaxed);
                let mut states = states.lock().expect("states");
                let Some(state) = states.get_mut(id as usize) else {
                    counts.wrong.fetch_add(1, Ordering::Relaxed);
                    continue;
                };
                match *state {
                    SENT => {
                        *state = ANSWERED;
                        window.add_permits(1);
                    }
                    CANCELLED => *state = CANCELLED_ANSWERED,
                    _ => {
                        if counts.wrong.fetch_add(1, Ordering::Relaxed) < 3 {
                            eprintln!("stdio: answered again (state {}): {line}", *state);
                        }
                    }
                }
            }
        });
    }
    // The writer of the mix.
    {
        let (counts, states) = (counts.clone(), states.clone());
        tokio::spawn(async move {
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
            loop {
                let permit = tokio::select! {
                    p = window.acquire() => p,
                    () = stop.notified() => break,
                };
                let Ok(permit) = permit else { break };
                let (params, wait) = operation(&mut rng);
                let Some(params) = params else {
                    let _ = tx.send(format!("{{not json {}", rng.below(1000)));
                    continue;
                };
                permit.forget();
                let id = {
                    let mut states = states.lock().expect("states");
                    states.push(SENT);
                    (states.len() - 1) as u64
                };
                counts.requests.fetch_add(1, Ordering::Relaxed);
                if tx.send(call_line(id, &params)).is_err() {
                    break;
                }
                if let Some(ms) = wait
                    && rng.below(3) == 0
                {
                    let after = Duration::from_millis(rng.below(ms + 1));
                    let (tx, states, window, counts) =
                        (tx.clone(), states.clone(), window.clone(), counts.clone());
                    tokio::spawn(async move {
                        tokio::time::sleep(after).await;
                        let mut states = states.lock().expect("states");
                        if states[id as usize] == SENT {
                            states[id as usize] = CANCELLED;
                            window.add_permits(1);
                            counts.cancels.fetch_add(1, Ordering::Relaxed);
                            let _ = tx.send(cancel_line(id));
                        }
                    });
                }
            }
            // `tx` drops here (and in the cancel tasks once they end): stdin closes.
        });
    }
    Ok(StdioLeg {
        child,
        counts,
        states,
    })
}

// ---- HTTP ----

#[derive(Default)]
struct HttpCounts {
    sessions: AtomicU64,
    vanished: AtomicU64,
    posts: AtomicU64,
    answers: AtomicU64,
    refused: AtomicU64,
    cancels: AtomicU64,
    cancelled_unanswered: AtomicU64,
    wrong: AtomicU64,
}

struct Conn {
    sender: SendRequest<Full<Bytes>>,
    host: String,
}

/// A connection to `addr`, from `local` (the attacker's address) if given.
async fn connect_from(addr: SocketAddr, local: Option<IpAddr>) -> std::io::Result<TcpStream> {
    let Some(ip) = local else {
        return TcpStream::connect(addr).await;
    };
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(ip, 0))?;
    socket.connect(addr).await
}

impl Conn {
    async fn open(addr: SocketAddr, local: Option<IpAddr>) -> Result<Conn> {
        let stream = connect_from(addr, local).await?;
        stream.set_nodelay(true)?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Conn {
            sender,
            host: addr.to_string(),
        })
    }

    /// Sends a request; the status, the session header and the body.
    async fn send(
        &mut self,
        method: &str,
        session: Option<&str>,
        body: String,
    ) -> Result<(u16, Option<String>, String)> {
        let mut request = hyper::Request::builder()
            .method(method)
            .uri("/mcp")
            .header("host", &self.host)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25");
        if let Some(s) = session {
            request = request.header("mcp-session-id", s);
        }
        let request = request.body(Full::new(Bytes::from(body)))?;
        self.sender.ready().await?;
        let response = self.sender.send_request(request).await?;
        let status = response.status().as_u16();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = response.into_body().collect().await?.to_bytes();
        Ok((status, session, String::from_utf8_lossy(&body).into_owned()))
    }
}

/// Checks the answer to a POST: a request's JSON-RPC answer carries its id (a cancelled one
/// may instead get a 202 without a body: no response is sent for a cancelled request);
/// anything else is a 202 (a notification) or a 4xx (what is no request). Whether the answer
/// is right (a 429 refusal of what is no request passes here, but is an error for
/// [`Timings`]).
fn check_answer(
    counts: &HttpCounts,
    id: Option<u64>,
    cancelled: bool,
    status: u16,
    body: &str,
) -> bool {
    counts.posts.fetch_add(1, Ordering::Relaxed);
    match (id, status) {
        (Some(_), 202) if cancelled && body.is_empty() => {
            counts.cancelled_unanswered.fetch_add(1, Ordering::Relaxed);
            true
        }
        (Some(id), 200) => match serde_json::from_str::<Value>(body) {
            Ok(m) if m["id"] == id => {
                counts.answers.fetch_add(1, Ordering::Relaxed);
                true
            }
            _ => {
                wrong(counts, Some(id), status, body);
                false
            }
        },
        (None, 202 | 400..=499) => {
            counts.refused.fetch_add(1, Ordering::Relaxed);
            true
        }
        _ => {
            wrong(counts, id, status, body);
            false
        }
    }
}

fn wrong(counts: &HttpCounts, id: Option<u64>, status: u16, body: &str) {
    if counts.wrong.fetch_add(1, Ordering::Relaxed) < 3 {
        eprintln!("HTTP: id {id:?}: {status} {body}");
    }
}

/// A refusal (503, 429) or a server error: an error for a well-behaved client, whatever it
/// sent.
fn refusal(status: u16) -> bool {
    status == 429 || status >= 500
}

/// Whether the answer to a notification (`notifications/initialized`, a cancellation) is an
/// error: none, a refusal or a server error.
fn notification_error(answer: &Result<(u16, Option<String>, String)>) -> bool {
    match answer {
        Ok((status, ..)) => refusal(*status),
        Err(_) => true,
    }
}

/// The most latencies kept of all the well-behaved clients (4 bytes each): more than a run
/// of hours makes.
const MAX_SAMPLES: usize = 50_000_000;
const HTTP_CLIENTS: u64 = 32;

/// What one well-behaved HTTP client saw of its POSTs.
#[derive(Default)]
struct Timings {
    /// Every POST's latency (sent → whole answer read), in microseconds, up to the cap.
    all: Vec<u32>,
    /// Those of the POSTs that do not wait on purpose (all but the `wait` calls, which take
    /// 10 ms to 1 s by design).
    quick: Vec<u32>,
    /// POSTs sent, and connections that could not be opened (each an `initialize` lost).
    posts: u64,
    failed_connections: u64,
    /// POSTs with no answer, a 5xx, a 503 or 429 refusal or a wrong answer, and the failed
    /// connections.
    errors: u64,
    /// Latencies not kept (beyond the cap).
    dropped: u64,
}

impl Timings {
    fn record(&mut self, elapsed: Duration, quick: bool, error: bool) {
        let cap = MAX_SAMPLES / HTTP_CLIENTS as usize;
        let micros = u32::try_from(elapsed.as_micros()).unwrap_or(u32::MAX);
        self.posts += 1;
        self.errors += u64::from(error);
        if self.all.len() < cap {
            self.all.push(micros);
            if quick {
                self.quick.push(micros);
            }
        } else {
            self.dropped += 1;
        }
    }

    fn connection_failed(&mut self) {
        self.failed_connections += 1;
        self.errors += 1;
    }

    fn merge(&mut self, other: Timings) {
        self.all.extend(other.all);
        self.quick.extend(other.quick);
        self.posts += other.posts;
        self.failed_connections += other.failed_connections;
        self.errors += other.errors;
        self.dropped += other.dropped;
    }
}

/// p50, p99, p99.9 and max of `samples` (microseconds, sorted here), in milliseconds.
fn percentiles(samples: &mut [u32]) -> String {
    if samples.is_empty() {
        return "no samples".into();
    }
    samples.sort_unstable();
    let at = |p: f64| {
        // The nearest rank.
        let rank = (p / 100.0 * samples.len() as f64).ceil() as usize;
        f64::from(samples[rank.clamp(1, samples.len()) - 1]) / 1000.0
    };
    format!(
        "p50 {:.2} ms, p99 {:.2} ms, p99.9 {:.2} ms, max {:.2} ms",
        at(50.0),
        at(99.0),
        at(99.9),
        at(100.0)
    )
}

/// Runs `f`, and says how long it took.
async fn timed<T>(f: impl Future<Output = T>) -> (T, Duration) {
    let start = Instant::now();
    let out = f.await;
    (out, start.elapsed())
}

async fn http_client(
    addr: SocketAddr,
    seed: u64,
    counts: Arc<HttpCounts>,
    until: Instant,
) -> Timings {
    let mut rng = Rng(seed);
    let mut id = 1_u64;
    let mut t = Timings::default();
    while Instant::now() < until {
        let (Ok(mut conn), Ok(mut side)) =
            (Conn::open(addr, None).await, Conn::open(addr, None).await)
        else {
            counts.wrong.fetch_add(1, Ordering::Relaxed);
            t.connection_failed();
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let (init, elapsed) = timed(conn.send("POST", None, INITIALIZE.into())).await;
        t.record(elapsed, true, !matches!(init, Ok((200, Some(_), _))));
        let Ok((200, Some(session), _)) = init else {
            counts.wrong.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        counts.sessions.fetch_add(1, Ordering::Relaxed);
        let s = Some(session.as_str());
        let (answer, elapsed) = timed(conn.send("POST", s, INITIALIZED.into())).await;
        t.record(elapsed, true, notification_error(&answer));
        for _ in 0..20 + rng.below(80) {
            id += 1;
            let (params, wait) = operation(&mut rng);
            let Some(params) = params else {
                let (answer, elapsed) = timed(conn.send("POST", s, "{not json".into())).await;
                let error = match answer {
                    Ok((status, _, body)) => {
                        !check_answer(&counts, None, false, status, &body) || refusal(status)
                    }
                    Err(_) => {
                        counts.wrong.fetch_add(1, Ordering::Relaxed);
                        true
                    }
                };
                t.record(elapsed, true, error);
                continue;
            };
            let line = call_line(id, &params);
            let cancel = wait.filter(|_| rng.below(3) == 0);
            let (answer, elapsed) = match cancel {
                None => timed(conn.send("POST", s, line)).await,
                Some(ms) => {
                    let call = timed(conn.send("POST", s, line));
                    let after = Duration::from_millis(rng.below(ms + 1));
                    let cancel = async {
                        tokio::time::sleep(after).await;
                        counts.cancels.fetch_add(1, Ordering::Relaxed);
                        timed(side.send("POST", s, cancel_line(id))).await
                    };
                    let (answer, (cancel_answer, cancel_elapsed)) = tokio::join!(call, cancel);
                    t.record(cancel_elapsed, true, notification_error(&cancel_answer));
                    answer
                }
            };
            let error = match answer {
                // A cancelled call's POST is answered too (an error, or its result if it won).
                Ok((status, _, body)) => {
                    !check_answer(&counts, Some(id), cancel.is_some(), status, &body)
                }
                Err(_) => {
                    counts.wrong.fetch_add(1, Ordering::Relaxed);
                    true
                }
            };
            t.record(elapsed, wait.is_none(), error);
        }
        if rng.below(10) == 0 {
            // Vanishes: a call left running on a connection that is dropped, no DELETE (not
            // timed: its answer is not waited for).
            counts.vanished.fetch_add(1, Ordering::Relaxed);
            let line = call_line(id + 1, &json!({"name": "wait", "arguments": {"ms": 5000}}));
            let _ =
                tokio::time::timeout(Duration::from_millis(50), conn.send("POST", s, line)).await;
        } else {
            let _ = conn.send("DELETE", s, String::new()).await;
        }
    }
    t
}

// ---- the flood ----

/// The attacker's address: an anonymous client apart from the well-behaved ones (127.0.0.1),
/// with shares of its own. Linux answers all of 127.0.0.0/8 on loopback.
const ATTACKER: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
/// `initialize`s a second, at most (the driver must not be the bottleneck).
const FLOOD_INITIALIZES: u64 = 500;
/// Task calls a second, at most, over [`TASK_SESSIONS`] sessions.
const FLOOD_TASKS: u64 = 1_000;
const TASK_SESSIONS: u64 = 4;
/// `subscriptions/listen` streams attempted over the run, and how many a second.
const LISTEN_ATTEMPTS: u64 = 2_000;
const LISTENS_PER_SECOND: u64 = 200;
/// Connections that send half a head, and a head announcing a body of a megabyte and one
/// byte of it.
const SLOW_HEADS: u64 = 1_100;
const SLOW_BODIES: u64 = 200;
/// A connection that ends sooner than this after its last byte was not held: refused.
const HELD: Duration = Duration::from_secs(5);

/// What the flood got, by kind.
#[derive(Default)]
struct FloodCounts {
    /// Session flood: sessions opened, `initialize`s refused with 503 (the address's share of
    /// sessions used up), other answers.
    sessions: AtomicU64,
    sessions_refused: AtomicU64,
    sessions_other: AtomicU64,
    sessions_conn: ConnCounts,
    /// Task flood: its sessions, tasks created, calls refused with a JSON-RPC error, other
    /// answers.
    task_sessions: AtomicU64,
    tasks: AtomicU64,
    tasks_refused: AtomicU64,
    tasks_other: AtomicU64,
    tasks_conn: ConnCounts,
    /// Listen flood: attempts, streams acknowledged, refused with a JSON-RPC error, streams
    /// the server ended before the run did, other answers.
    listen_attempts: AtomicU64,
    listens: AtomicU64,
    listens_refused: AtomicU64,
    listens_ended: AtomicU64,
    listens_other: AtomicU64,
    listens_conn: ConnCounts,
    /// Half heads: sent, held until the server closed them (and for how long in all),
    /// refused or closed at once.
    heads: SlowCounts,
    /// Stalled bodies: likewise, and how many were answered 408.
    bodies: SlowCounts,
    bodies_408: AtomicU64,
    /// Unexpected answers printed so far.
    odd: AtomicU64,
}

/// What became of a flood's connections: answered 503 and closed at once (the address holds
/// its share of connections), or failed otherwise (refused, reset, closed).
#[derive(Default)]
struct ConnCounts {
    refused: AtomicU64,
    failed: AtomicU64,
}

#[derive(Default)]
struct SlowCounts {
    sent: AtomicU64,
    held: AtomicU64,
    held_ms: AtomicU64,
    refused: AtomicU64,
    failed: AtomicU64,
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

fn get(counter: &AtomicU64) -> u64 {
    counter.load(Ordering::Relaxed)
}

impl FloodCounts {
    fn odd(&self, what: &str, detail: &str) {
        if self.odd.fetch_add(1, Ordering::Relaxed) < 5 {
            let detail: String = detail.chars().take(300).collect();
            eprintln!("flood: {what}: {detail}");
        }
    }
}

/// A second or two: how long the attacker waits after a refused connection (it keeps going,
/// without spinning).
async fn back_off(rng: &mut Rng) {
    tokio::time::sleep(Duration::from_millis(1000 + rng.below(1000))).await;
}

fn ticker(per_second: u64) -> tokio::time::Interval {
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / per_second.max(1)));
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    tick
}

/// Whether an answer to a POST is the accept loop's refusal of the connection (a bare 503).
fn conn_refused(answer: &(u16, Option<String>, String)) -> bool {
    answer.0 == 503 && answer.2.is_empty()
}

/// `initialize` as fast as allowed, on one kept-alive connection (another once it closes),
/// never deleting a session.
async fn session_flood(addr: SocketAddr, counts: Arc<FloodCounts>, per_second: u64, seed: u64) {
    let mut rng = Rng(seed);
    let mut tick = ticker(per_second);
    let mut conn: Option<Conn> = None;
    loop {
        tick.tick().await;
        let c = match conn.as_mut() {
            Some(c) => c,
            None => match Conn::open(addr, Some(ATTACKER)).await {
                Ok(c) => conn.insert(c),
                Err(_) => {
                    bump(&counts.sessions_conn.failed);
                    back_off(&mut rng).await;
                    continue;
                }
            },
        };
        match c.send("POST", None, INITIALIZE.into()).await {
            Ok(answer) if conn_refused(&answer) => {
                bump(&counts.sessions_conn.refused);
                conn = None;
                back_off(&mut rng).await;
            }
            Ok((200, Some(_), _)) => bump(&counts.sessions),
            Ok((503, _, _)) => bump(&counts.sessions_refused),
            Ok((status, _, body)) => {
                bump(&counts.sessions_other);
                counts.odd("initialize", &format!("{status} {body}"));
            }
            Err(_) => {
                bump(&counts.sessions_conn.failed);
                conn = None;
                back_off(&mut rng).await;
            }
        }
    }
}

/// `tools/call` of `quick_job` as a task of a day (the longest the server keeps one), over
/// and over, in a session of its own.
async fn task_flood(addr: SocketAddr, counts: Arc<FloodCounts>, per_second: u64, seed: u64) {
    let mut rng = Rng(seed);
    let mut tick = ticker(per_second);
    let mut id = 1_u64;
    let mut session: Option<String> = None;
    let mut conn: Option<Conn> = None;
    loop {
        let c = match conn.as_mut() {
            Some(c) => c,
            None => match Conn::open(addr, Some(ATTACKER)).await {
                Ok(c) => conn.insert(c),
                Err(_) => {
                    bump(&counts.tasks_conn.failed);
                    back_off(&mut rng).await;
                    continue;
                }
            },
        };
        let Some(s) = session.as_deref() else {
            match c.send("POST", None, INITIALIZE.into()).await {
                Ok((200, Some(new), _)) => {
                    bump(&counts.task_sessions);
                    let _ = c.send("POST", Some(&new), INITIALIZED.into()).await;
                    session = Some(new);
                }
                Ok(answer) => {
                    if conn_refused(&answer) {
                        bump(&counts.tasks_conn.refused);
                        conn = None;
                    } else {
                        counts.odd("task flood's initialize", &answer.2);
                    }
                    back_off(&mut rng).await;
                }
                Err(_) => {
                    bump(&counts.tasks_conn.failed);
                    conn = None;
                    back_off(&mut rng).await;
                }
            }
            continue;
        };
        tick.tick().await;
        id += 1;
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "quick_job", "arguments": {"n": id}, "task": {"ttl": 86_400_000}}})
        .to_string();
        match c.send("POST", Some(s), call).await {
            Ok(answer) if conn_refused(&answer) => {
                bump(&counts.tasks_conn.refused);
                conn = None;
                back_off(&mut rng).await;
            }
            Ok((200, _, body)) => match serde_json::from_str::<Value>(&body) {
                Ok(m) if m["result"]["task"].is_object() => bump(&counts.tasks),
                Ok(m) if m.get("error").is_some() => {
                    if get(&counts.tasks_refused) == 0 {
                        eprintln!("flood: the first task refused: {body}");
                    }
                    bump(&counts.tasks_refused);
                }
                _ => {
                    bump(&counts.tasks_other);
                    counts.odd("task call", &body);
                }
            },
            Ok((404, _, _)) => session = None,
            Ok((status, _, body)) => {
                bump(&counts.tasks_other);
                counts.odd("task call", &format!("{status} {body}"));
            }
            Err(_) => {
                bump(&counts.tasks_conn.failed);
                conn = None;
                back_off(&mut rng).await;
            }
        }
    }
}

/// The first whole JSON-RPC message of an answer: the body of a JSON one, the first `data:`
/// of an event stream.
fn first_message(sse: bool, text: &str) -> Option<Value> {
    if !sse {
        return serde_json::from_str(text).ok();
    }
    let end = text.find("\n\n").or_else(|| text.find("\r\n\r\n"))?;
    let data: String = text[..end]
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim_start)
        .collect();
    serde_json::from_str(&data).ok()
}

/// 2026-07-28 `subscriptions/listen` streams, [`LISTEN_ATTEMPTS`] of them at most, each on a
/// connection of its own kept open as long as the server keeps it.
async fn listen_flood(addr: SocketAddr, counts: Arc<FloodCounts>) {
    let mut tick = ticker(LISTENS_PER_SECOND);
    let mut streams = JoinSet::new();
    for id in 1..=LISTEN_ATTEMPTS {
        tick.tick().await;
        streams.spawn(listen_once(addr, counts.clone(), id));
        // Reaps the attempts done.
        while streams.try_join_next().is_some() {}
    }
    while streams.join_next().await.is_some() {}
}

async fn listen_once(addr: SocketAddr, counts: Arc<FloodCounts>, id: u64) {
    bump(&counts.listen_attempts);
    let Ok(stream) = connect_from(addr, Some(ATTACKER)).await else {
        bump(&counts.listens_conn.failed);
        return;
    };
    let Ok((mut sender, conn)) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await
    else {
        bump(&counts.listens_conn.failed);
        return;
    };
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
    "notifications": {"toolsListChanged": true},
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    }}})
    .to_string();
    let Ok(request) = hyper::Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("host", addr.to_string())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(Full::new(Bytes::from(body)))
    else {
        return;
    };
    let Ok(response) = sender.send_request(request).await else {
        bump(&counts.listens_conn.failed);
        return;
    };
    let status = response.status().as_u16();
    let sse = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let mut body = response.into_body();
    let mut text = String::new();
    let mut acknowledged = false;
    loop {
        let Some(Ok(frame)) = body.frame().await else {
            // Ended: the server closed an acknowledged stream, or an answer is whole.
            if acknowledged {
                bump(&counts.listens_ended);
            } else if status == 503 && text.is_empty() {
                bump(&counts.listens_conn.refused);
            } else {
                match first_message(false, &text) {
                    Some(m) if m.get("error").is_some() => bump(&counts.listens_refused),
                    _ => {
                        bump(&counts.listens_other);
                        counts.odd("listen", &format!("{status} {text}"));
                    }
                }
            }
            return;
        };
        let Some(data) = frame.data_ref() else {
            continue;
        };
        if acknowledged {
            // Held open: what comes is not kept.
            continue;
        }
        text.push_str(&String::from_utf8_lossy(data));
        if !sse {
            continue;
        }
        match first_message(true, &text) {
            None => {}
            Some(m) if m.get("error").is_some() => {
                bump(&counts.listens_refused);
                return;
            }
            Some(_) => {
                bump(&counts.listens);
                acknowledged = true;
                text = String::new();
            }
        }
    }
}

/// A connection that sends `bytes` (less than a request) and then nothing, until the server
/// closes it; then another. `stalled_body`: the server answers 408 once it gives up.
async fn slow_connection(
    addr: SocketAddr,
    counts: Arc<FloodCounts>,
    stalled_body: bool,
    bytes: Arc<[u8]>,
    seed: u64,
) {
    let mut rng = Rng(seed);
    let slow = if stalled_body {
        &counts.bodies
    } else {
        &counts.heads
    };
    loop {
        let Ok(mut stream) = connect_from(addr, Some(ATTACKER)).await else {
            bump(&slow.failed);
            back_off(&mut rng).await;
            continue;
        };
        let sent = stream.write_all(&bytes).await;
        let start = Instant::now();
        let mut answer = [0_u8; 64];
        let read = if sent.is_ok() {
            bump(&slow.sent);
            stream.read(&mut answer).await
        } else {
            Ok(0)
        };
        let held = start.elapsed();
        let answer = match read {
            Ok(n) => &answer[..n],
            Err(_) => &[],
        };
        if stalled_body && answer.starts_with(b"HTTP/1.1 408") {
            bump(&counts.bodies_408);
        }
        if answer.starts_with(b"HTTP/1.1 503") || held < HELD {
            // Refused (or closed) at once: the address holds its share of connections.
            bump(&slow.refused);
            back_off(&mut rng).await;
        } else {
            bump(&slow.held);
            slow.held_ms.fetch_add(
                u64::try_from(held.as_millis()).unwrap_or(u64::MAX),
                Ordering::Relaxed,
            );
        }
    }
}

/// The whole flood, until dropped (its tasks with it).
async fn flood(addr: SocketAddr, counts: Arc<FloodCounts>) {
    let mut tasks = JoinSet::new();
    // Its task sessions first: the session flood soon uses up the address's share.
    for i in 0..TASK_SESSIONS {
        tasks.spawn(task_flood(
            addr,
            counts.clone(),
            FLOOD_TASKS / TASK_SESSIONS,
            0xbad + i,
        ));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    tasks.spawn(session_flood(
        addr,
        counts.clone(),
        FLOOD_INITIALIZES,
        0xbad5e55,
    ));
    tasks.spawn(listen_flood(addr, counts.clone()));
    // The slow connections, over a second or so.
    let half_head: Arc<[u8]> =
        format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: applic")
            .into_bytes()
            .into();
    let stalled: Arc<[u8]> = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         Content-Length: 1000000\r\n\r\n{{"
    )
    .into_bytes()
    .into();
    let mut tick = ticker(1_000);
    for i in 0..SLOW_HEADS + SLOW_BODIES {
        tick.tick().await;
        // The stalled bodies spread among the half heads.
        let total = SLOW_HEADS + SLOW_BODIES;
        let body = (i + 1) * SLOW_BODIES / total > i * SLOW_BODIES / total;
        let bytes = if body {
            stalled.clone()
        } else {
            half_head.clone()
        };
        tasks.spawn(slow_connection(addr, counts.clone(), body, bytes, 0x51 + i));
    }
    while tasks.join_next().await.is_some() {}
}

fn print_flood(counts: &FloodCounts) {
    let c = counts;
    let conn = |c: &ConnCounts| {
        format!(
            "{} connections refused (bare 503), {} failed (reset or closed before an answer)",
            get(&c.refused),
            get(&c.failed)
        )
    };
    let slow = |c: &SlowCounts| {
        let held = get(&c.held);
        format!(
            "{} sent, {} held until the server closed them ({:.1} s on average), {} refused or \
             closed at once, {} connections failed",
            get(&c.sent),
            held,
            get(&c.held_ms) as f64 / 1000.0 / held.max(1) as f64,
            get(&c.refused),
            get(&c.failed)
        )
    };
    println!("\nflood (anonymous, from {ATTACKER}; not counted in the figures above):");
    println!(
        "  sessions: {} opened, {} initializes refused 503, {} other answers; {}",
        get(&c.sessions),
        get(&c.sessions_refused),
        get(&c.sessions_other),
        conn(&c.sessions_conn)
    );
    println!(
        "  tasks: {} sessions, {} tasks created (ttl a day), {} calls refused (JSON-RPC error), \
         {} other answers; {}",
        get(&c.task_sessions),
        get(&c.tasks),
        get(&c.tasks_refused),
        get(&c.tasks_other),
        conn(&c.tasks_conn)
    );
    println!(
        "  listens: {} attempted, {} streams acknowledged and held ({} ended by the server \
         before the end), {} refused (JSON-RPC error), {} other answers; {}",
        get(&c.listen_attempts),
        get(&c.listens),
        get(&c.listens_ended),
        get(&c.listens_refused),
        get(&c.listens_other),
        conn(&c.listens_conn)
    );
    println!(
        "  half heads ({SLOW_HEADS} connections): {}",
        slow(&c.heads)
    );
    println!(
        "  stalled bodies ({SLOW_BODIES} connections): {}; {} answered 408",
        slow(&c.bodies),
        get(&c.bodies_408)
    );
}

async fn start_http() -> Result<(Child, SocketAddr)> {
    let mut child = Command::new(server_path()?)
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env("RUST_LOG", "info")
        // The bounds a deployed server has, which the flood runs into.
        .env("BENCH_SERVER_LIMITS", "default")
        .spawn()?;
    let stderr = child.stderr.take().ok_or("stderr")?;
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let line = lines.next_line().await?.ok_or("no endpoint line")?;
        if let Some(url) = line.split("MCP endpoint ").nth(1) {
            break url.trim().to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()?;
    Ok((child, addr))
}

#[tokio::main]
async fn main() -> Result<()> {
    let mut seconds = 600;
    let mut with_flood = false;
    for arg in std::env::args().skip(1) {
        if arg == "--flood" {
            with_flood = true;
        } else {
            seconds = arg.parse().map_err(|e| format!("seconds: {e}"))?;
        }
    }
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let stop = Arc::new(tokio::sync::Notify::new());
    let mut stdio = start_stdio(stop.clone()).await?;
    let (mut http, addr) = start_http().await?;
    let http_counts = Arc::new(HttpCounts::default());
    let flood_counts = Arc::new(FloodCounts::default());
    let flooding = with_flood.then(|| tokio::spawn(flood(addr, flood_counts.clone())));
    let clients: Vec<_> = (0..HTTP_CLIENTS)
        .map(|i| {
            tokio::spawn(http_client(
                addr,
                0x5eed + i * 7919,
                http_counts.clone(),
                until,
            ))
        })
        .collect();
    let (stdio_pid, http_pid) = (
        stdio.child.id().ok_or("stdio pid")?,
        http.id().ok_or("http pid")?,
    );
    println!(
        "| minute | stdio RSS (MiB) | stdio fds | stdio answers | HTTP RSS (MiB) | HTTP fds | HTTP sessions | HTTP answers |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut minute = 0;
    loop {
        let (srss, sfds) = sample(stdio_pid);
        let (hrss, hfds) = sample(http_pid);
        println!(
            "| {minute} | {:.1} | {sfds} | {} | {:.1} | {hfds} | {} | {} |",
            srss as f64 / 1024.0,
            stdio.counts.answers.load(Ordering::Relaxed),
            hrss as f64 / 1024.0,
            http_counts.sessions.load(Ordering::Relaxed),
            http_counts.answers.load(Ordering::Relaxed),
        );
        if Instant::now() >= until {
            break;
        }
        let next = started + Duration::from_secs(60 * (minute + 1));
        tokio::time::sleep_until(next.min(until).into()).await;
        minute += 1;
    }
    stop.notify_one();
    let mut timings = Timings::default();
    for client in clients {
        if let Ok(t) = client.await {
            timings.merge(t);
        }
    }
    // The flood lasts as long as the well-behaved clients (they finish their sessions).
    if let Some(flooding) = flooding {
        flooding.abort();
        let _ = flooding.await;
    }
    // The calls still running finish (a wait is at most 1 s; the slow reader pauses 2 s).
    tokio::time::sleep(Duration::from_secs(5)).await;
    // The stdio server has ended (its input closed); the HTTP one, its sessions deleted or
    // vanished, is sampled once more.
    let (hrss, hfds) = sample(http_pid);
    println!(
        "| after | (exited) | | {} | {:.1} | {hfds} | {} | {} |",
        stdio.counts.answers.load(Ordering::Relaxed),
        hrss as f64 / 1024.0,
        http_counts.sessions.load(Ordering::Relaxed),
        http_counts.answers.load(Ordering::Relaxed),
    );
    // stdio: every request not cancelled answered exactly once, a cancelled one at most once.
    let states = stdio.states.lock().expect("states").clone();
    let unanswered = states.iter().filter(|s| **s == SENT).count();
    let c = &stdio.counts;
    println!(
        "\nstdio: {} requests, {} answers, {} cancelled ({} of them answered before the \
         cancellation landed), {} lines that were no JSON answered with a null id, {} \
         unanswered, {} duplicate or unknown answers",
        c.requests.load(Ordering::Relaxed),
        c.answers.load(Ordering::Relaxed),
        c.cancels.load(Ordering::Relaxed),
        states.iter().filter(|s| **s == CANCELLED_ANSWERED).count(),
        c.null_ids.load(Ordering::Relaxed),
        unanswered,
        c.wrong.load(Ordering::Relaxed),
    );
    let h = &http_counts;
    println!(
        "HTTP: {} sessions ({} vanished), {} POSTs, {} answered with their id, {} cancellations \
         ({} answered 202 without a response), {} refused as no request (4xx), {} wrong (no \
         answer, another id, 5xx)",
        h.sessions.load(Ordering::Relaxed),
        h.vanished.load(Ordering::Relaxed),
        h.posts.load(Ordering::Relaxed),
        h.answers.load(Ordering::Relaxed),
        h.cancels.load(Ordering::Relaxed),
        h.cancelled_unanswered.load(Ordering::Relaxed),
        h.refused.load(Ordering::Relaxed),
        h.wrong.load(Ordering::Relaxed),
    );
    let quick = timings.quick.len();
    let attempts = timings.posts + timings.failed_connections;
    println!(
        "HTTP well-behaved clients ({HTTP_CLIENTS}, from 127.0.0.1{}): {} POSTs timed (sent → \
         whole answer read){}",
        if with_flood { ", under the flood" } else { "" },
        timings.posts,
        if timings.dropped > 0 {
            format!(", {} beyond the cap not kept", timings.dropped)
        } else {
            String::new()
        },
    );
    println!("  all POSTs: {}", percentiles(&mut timings.all));
    println!(
        "  the {quick} without a `wait` call (10 ms to 1 s by design): {}",
        percentiles(&mut timings.quick)
    );
    println!(
        "  errors: {} of {attempts} ({:.4} %): no answer, 5xx, 503/429 refusals, wrong answers, \
         {} connections that failed",
        timings.errors,
        timings.errors as f64 * 100.0 / attempts.max(1) as f64,
        timings.failed_connections,
    );
    if with_flood {
        print_flood(&flood_counts);
    }
    let _ = http.kill().await;
    // stdio: closing its input ends the server.
    let status = tokio::time::timeout(Duration::from_secs(20), stdio.child.wait()).await;
    println!("stdio server exit after its input closed: {status:?}");
    let failed = unanswered > 0
        || c.wrong.load(Ordering::Relaxed) > 0
        || h.wrong.load(Ordering::Relaxed) > 0;
    if failed {
        return Err("the soak found lost, duplicate or wrong answers".into());
    }
    Ok(())
}
