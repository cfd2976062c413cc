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
//! every answer to a request must carry its id.

use std::net::SocketAddr;
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
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{Semaphore, mpsc};

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

impl Conn {
    async fn open(addr: SocketAddr) -> Result<Conn> {
        let stream = tokio::net::TcpStream::connect(addr).await?;
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
/// anything else is a 202 (a notification) or a 4xx (what is no request).
fn check_answer(counts: &HttpCounts, id: Option<u64>, cancelled: bool, status: u16, body: &str) {
    counts.posts.fetch_add(1, Ordering::Relaxed);
    match (id, status) {
        (Some(_), 202) if cancelled && body.is_empty() => {
            counts.cancelled_unanswered.fetch_add(1, Ordering::Relaxed);
        }
        (Some(id), 200) => match serde_json::from_str::<Value>(body) {
            Ok(m) if m["id"] == id => {
                counts.answers.fetch_add(1, Ordering::Relaxed);
            }
            _ => wrong(counts, Some(id), status, body),
        },
        (None, 202 | 400..=499) => {
            counts.refused.fetch_add(1, Ordering::Relaxed);
        }
        _ => wrong(counts, id, status, body),
    }
}

fn wrong(counts: &HttpCounts, id: Option<u64>, status: u16, body: &str) {
    if counts.wrong.fetch_add(1, Ordering::Relaxed) < 3 {
        eprintln!("HTTP: id {id:?}: {status} {body}");
    }
}

async fn http_client(addr: SocketAddr, seed: u64, counts: Arc<HttpCounts>, until: Instant) {
    let mut rng = Rng(seed);
    let mut id = 1_u64;
    while Instant::now() < until {
        let (Ok(mut conn), Ok(mut side)) = (Conn::open(addr).await, Conn::open(addr).await) else {
            counts.wrong.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let Ok((200, Some(session), _)) = conn.send("POST", None, INITIALIZE.into()).await else {
            counts.wrong.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        counts.sessions.fetch_add(1, Ordering::Relaxed);
        let s = Some(session.as_str());
        let _ = conn.send("POST", s, INITIALIZED.into()).await;
        for _ in 0..20 + rng.below(80) {
            id += 1;
            let (params, wait) = operation(&mut rng);
            let Some(params) = params else {
                match conn.send("POST", s, "{not json".into()).await {
                    Ok((status, _, body)) => check_answer(&counts, None, false, status, &body),
                    Err(_) => {
                        counts.wrong.fetch_add(1, Ordering::Relaxed);
                    }
                }
                continue;
            };
            let line = call_line(id, &params);
            let cancel = wait.filter(|_| rng.below(3) == 0);
            let answer = match cancel {
                None => conn.send("POST", s, line).await,
                Some(ms) => {
                    let call = conn.send("POST", s, line);
                    let after = Duration::from_millis(rng.below(ms + 1));
                    let cancel = async {
                        tokio::time::sleep(after).await;
                        counts.cancels.fetch_add(1, Ordering::Relaxed);
                        side.send("POST", s, cancel_line(id)).await
                    };
                    let (answer, _) = tokio::join!(call, cancel);
                    answer
                }
            };
            match answer {
                // A cancelled call's POST is answered too (an error, or its result if it won).
                Ok((status, _, body)) => {
                    check_answer(&counts, Some(id), cancel.is_some(), status, &body);
                }
                Err(_) => {
                    counts.wrong.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        if rng.below(10) == 0 {
            // Vanishes: a call left running on a connection that is dropped, no DELETE.
            counts.vanished.fetch_add(1, Ordering::Relaxed);
            let line = call_line(id + 1, &json!({"name": "wait", "arguments": {"ms": 5000}}));
            let _ =
                tokio::time::timeout(Duration::from_millis(50), conn.send("POST", s, line)).await;
        } else {
            let _ = conn.send("DELETE", s, String::new()).await;
        }
    }
}

async fn start_http() -> Result<(Child, SocketAddr)> {
    let mut child = Command::new(server_path()?)
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env("RUST_LOG", "info")
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
    let seconds: u64 = std::env::args()
        .nth(1)
        .map_or(Ok(600), |s| s.parse())
        .map_err(|e| format!("seconds: {e}"))?;
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let stop = Arc::new(tokio::sync::Notify::new());
    let mut stdio = start_stdio(stop.clone()).await?;
    let (mut http, addr) = start_http().await?;
    let http_counts = Arc::new(HttpCounts::default());
    let clients: Vec<_> = (0..32)
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
    for client in clients {
        let _ = client.await;
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
