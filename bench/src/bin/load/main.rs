//! `load`: the benchmark driver. It starts each server as a child process, drives it with
//! `tools/call` requests and prints markdown tables of the results, side by side.
//!
//! ```text
//! load all      [options]   stdio, HTTP and 1000-tool legs (what BENCHMARKS.md shows)
//! load stdio    [options]   stdio: add and create_user, W=64 and W=1, every server
//! load http     [options]   Streamable HTTP: M clients, stateless and session mode
//! load many     [options]   1000 generated tools: start, tools/list, cost per call
//! load diag     [options]   mcp-tool only: `add` as a sync fn and as an `async fn`
//! load custom -- CMD ARGS   drive any stdio server (`--tool add|create_user|add_async`,
//!                           `--window W`; default `add` at W=64 and W=1), e.g. under perf
//!
//! options: --n N (calls per run, default 20000)   --repeat R (stdio runs per cell, default 3)
//!          --clients M (HTTP clients, default 16) --quick (N=2000, R=1)
//!          --servers a,b,… (from mcp-tool, rmcp-fast, rmcp-doc, floor, or LABEL=PATH for
//!                           another build of bench-server, such as an earlier commit's)
//!          --no-build (do not build the servers first)
//! ```
//!
//! The servers are the sibling binaries of this one (the same target directory). Started by
//! `cargo run --release -p mcp-tool-bench --bin load -- all`, it first builds them (`cargo
//! build -p mcp-tool-bench --bins`, same profile and target directory); started directly,
//! build them first with `cargo build --release -p mcp-tool-bench`.
//!
//! Every response is checked: its id is one of ours and answered once, `add` gives the sum as
//! text, `create_user` gives back the email it was sent in `structuredContent` and no error.
//! The server's CPU time is read from `/proc/<pid>/stat` (user + system, every thread) after
//! the warm-up and after the last response; its peak RSS is `VmHWM` from `/proc/<pid>/status`
//! just before its input is closed.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;

type Error = Box<dyn std::error::Error + Send + Sync>;
type Result<T, E = Error> = std::result::Result<T, E>;

/// The protocol revision the driver asks for (every server here speaks it).
const PROTOCOL: &str = "2025-11-25";

// ---------------------------------------------------------------------------------------------
// What is measured

/// One of the two benchmark tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Tool {
    Add,
    CreateUser,
    /// `add` written as an `async fn` (only `bench-server` has it; the `diag` leg).
    AddAsync,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::Add => "add",
            Tool::CreateUser => "create_user",
            Tool::AddAsync => "add_async",
        }
    }

    /// The arguments of call number `i`.
    fn arguments(self, i: usize) -> String {
        match self {
            Tool::Add | Tool::AddAsync => format!(r#"{{"a":{i},"b":{}}}"#, i + 1),
            Tool::CreateUser => format!(
                r#"{{"email":"user{i}@example.com","name":"Bench User {i}","role":"admin","metadata":{{"team":"bench","seq":"{i}"}}}}"#
            ),
        }
    }

    /// Checks the result of call number `i`.
    fn check(self, i: usize, result: &CallResult<'_>) -> Result<(), String> {
        if result.is_error {
            return Err(format!(
                "call {i}: isError: {}",
                result.content.first().map_or("", |b| &b.text)
            ));
        }
        match self {
            Tool::Add | Tool::AddAsync => {
                let text = result.content.first().map_or("", |b| &b.text);
                let want = (2 * i + 1).to_string();
                if text != want {
                    return Err(format!("call {i}: add answered {text:?}, not {want}"));
                }
            }
            Tool::CreateUser => {
                let user = result
                    .structured
                    .as_ref()
                    .ok_or_else(|| format!("call {i}: no structuredContent"))?;
                let want = format!("user{i}@example.com");
                if user.email != want || !user.id.starts_with("usr_") || user.role != "admin" {
                    return Err(format!("call {i}: unexpected user {user:?}"));
                }
                if result.content.is_empty() {
                    return Err(format!("call {i}: no text copy of the user"));
                }
            }
        }
        Ok(())
    }
}

#[derive(Deserialize)]
struct Response<'a> {
    id: Option<u64>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CallResult<'a> {
    #[serde(borrow, default)]
    content: Vec<TextBlock<'a>>,
    #[serde(rename = "structuredContent", borrow)]
    structured: Option<UserOut<'a>>,
    #[serde(rename = "isError", default)]
    is_error: bool,
}

#[derive(Deserialize)]
struct TextBlock<'a> {
    #[serde(borrow, default)]
    text: Cow<'a, str>,
}

#[derive(Debug, Deserialize)]
struct UserOut<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow)]
    email: Cow<'a, str>,
    #[serde(borrow)]
    role: Cow<'a, str>,
}

/// Parses one response line and checks it; returns the id.
fn check_response(line: &str, tool: Tool, first_id: u64, n: usize) -> Result<usize, String> {
    let response: Response<'_> =
        serde_json::from_str(line).map_err(|e| format!("bad response line ({e}): {line}"))?;
    let id = response
        .id
        .ok_or_else(|| format!("a response without a numeric id: {line}"))?;
    let i = id
        .checked_sub(first_id)
        .filter(|i| (*i as usize) < n)
        .ok_or_else(|| format!("an id that is not ours: {id}"))? as usize;
    if let Some(error) = response.error {
        return Err(format!("call {i}: JSON-RPC error {}", error.get()));
    }
    let result = response
        .result
        .ok_or_else(|| format!("call {i}: neither result nor error"))?;
    let result: CallResult<'_> = serde_json::from_str(result.get())
        .map_err(|e| format!("call {i}: bad result ({e}): {}", result.get()))?;
    tool.check(i, &result)?;
    Ok(i)
}

fn call_line(id: u64, tool: Tool, i: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{}","arguments":{}}}}}"#,
        tool.name(),
        tool.arguments(i)
    )
}

fn initialize_line(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":"{PROTOCOL}","capabilities":{{}},"clientInfo":{{"name":"mcp-tool-bench","version":"0.1.0"}}}}}}"#
    )
}

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// The figures of one run.
#[derive(Debug, Clone, Default)]
struct Run {
    calls_per_s: f64,
    p50_us: f64,
    p99_us: f64,
    /// Server CPU time (user + system) per call, µs.
    cpu_us: f64,
    /// Server peak RSS, KiB.
    rss_kib: u64,
    /// From spawn to the `initialize` response (stdio) or to the first accepted connection.
    start_ms: f64,
}

// ---------------------------------------------------------------------------------------------
// The server process

/// The process's CPU time so far, in seconds: the sum of its threads' run time from
/// `/proc/<pid>/task/*/schedstat` (nanoseconds), or, when a thread counted in `before` has
/// gone since (its time would be lost), user + system time from `/proc/<pid>/stat`
/// (clock ticks).
#[derive(Debug, Clone, Default)]
struct CpuSample {
    threads: BTreeMap<u32, u64>,
    stat_seconds: f64,
}

impl CpuSample {
    fn take(pid: u32, ticks: f64) -> Result<CpuSample> {
        let mut threads = BTreeMap::new();
        for entry in std::fs::read_dir(format!("/proc/{pid}/task"))? {
            let entry = entry?;
            let Ok(tid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            if let Ok(s) = std::fs::read_to_string(entry.path().join("schedstat"))
                && let Some(ns) = s.split_whitespace().next().and_then(|v| v.parse().ok())
            {
                threads.insert(tid, ns);
            }
        }
        Ok(CpuSample {
            threads,
            stat_seconds: cpu_seconds(pid, ticks)?,
        })
    }

    /// Seconds of CPU used between `before` and `self`.
    fn since(&self, before: &CpuSample) -> f64 {
        let all_alive = before.threads.keys().all(|t| self.threads.contains_key(t));
        if all_alive && !self.threads.is_empty() {
            let ns: u64 = self
                .threads
                .iter()
                .map(|(t, ns)| ns - before.threads.get(t).copied().unwrap_or(0).min(*ns))
                .sum();
            ns as f64 / 1e9
        } else {
            self.stat_seconds - before.stat_seconds
        }
    }
}

/// Reads the process's CPU time (user + system, all threads, in seconds).
fn cpu_seconds(pid: u32, ticks: f64) -> Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // The command name may hold spaces; the fields after it are space-separated.
    let after = &stat[stat.rfind(')').ok_or("bad /proc stat")? + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    // Fields 14 and 15 of stat (utime, stime) are at 11 and 12 after the name.
    let utime: f64 = fields[11].parse()?;
    let stime: f64 = fields[12].parse()?;
    Ok((utime + stime) / ticks)
}

/// The process's peak resident set (VmHWM), KiB.
fn peak_rss_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .ok_or("no VmHWM")?;
    Ok(line.split_whitespace().nth(1).ok_or("bad VmHWM")?.parse()?)
}

fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// A server command: a sibling binary and its arguments.
#[derive(Debug, Clone)]
struct ServerCmd {
    label: String,
    program: PathBuf,
    args: Vec<String>,
}

impl ServerCmd {
    fn spawn(&self, extra: &[String]) -> Result<Child> {
        Command::new(&self.program)
            .args(&self.args)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .env("RUST_LOG", "error")
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.program.display()).into())
    }
}

/// Waits for a child to exit, killing it after `grace`.
fn reap(mut child: Child, grace: Duration) {
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at] as f64 / 1000.0
}

// ---------------------------------------------------------------------------------------------
// stdio

/// A stdio connection to a child server.
struct Stdio2 {
    child: Child,
    out: BufWriter<ChildStdin>,
    input: BufReader<ChildStdout>,
    line: String,
}

impl Stdio2 {
    /// Starts the server and initializes; returns the connection and the start-up time.
    fn start(server: &ServerCmd, extra: &[String]) -> Result<(Stdio2, Duration)> {
        let t = Instant::now();
        let mut child = server.spawn(extra)?;
        let out = BufWriter::with_capacity(64 * 1024, child.stdin.take().ok_or("no stdin")?);
        let input = BufReader::with_capacity(64 * 1024, child.stdout.take().ok_or("no stdout")?);
        let mut conn = Stdio2 {
            child,
            out,
            input,
            line: String::new(),
        };
        conn.send(&initialize_line(0))?;
        let answer = conn.recv()?;
        let started = t.elapsed();
        if !answer.contains("\"protocolVersion\"") {
            return Err(format!("{}: bad initialize answer: {answer}", server.label).into());
        }
        conn.send(INITIALIZED)?;
        Ok((conn, started))
    }

    fn send(&mut self, line: &str) -> Result<()> {
        self.out.write_all(line.as_bytes())?;
        self.out.write_all(b"\n")?;
        self.out.flush()?;
        Ok(())
    }

    fn recv(&mut self) -> Result<String> {
        self.line.clear();
        if self.input.read_line(&mut self.line)? == 0 {
            return Err("the server closed its output".into());
        }
        Ok(self.line.trim_end().to_owned())
    }

    /// Sends `lines` with at most `window` unanswered, checking each response; returns the
    /// latencies (ns) and the elapsed time.
    fn drive(
        self,
        lines: Vec<String>,
        window: usize,
        tool: Tool,
        first_id: u64,
    ) -> Result<(Stdio2Parts, Vec<u64>, Duration)> {
        let n = lines.len();
        let Stdio2 {
            child,
            out,
            mut input,
            mut line,
        } = self;
        let sent: Arc<Vec<AtomicU64>> = Arc::new((0..n).map(|_| AtomicU64::new(0)).collect());
        let base = Instant::now();
        let (credit_tx, credit_rx) = mpsc::channel::<usize>();
        let sent_w = sent.clone();
        let writer = thread::spawn(move || -> std::io::Result<BufWriter<ChildStdin>> {
            let mut out = out;
            let mut credits = window;
            for (i, l) in lines.iter().enumerate() {
                while let Ok(k) = credit_rx.try_recv() {
                    credits += k;
                }
                if credits == 0 {
                    out.flush()?;
                    match credit_rx.recv() {
                        Ok(k) => credits += k,
                        Err(_) => break,
                    }
                }
                sent_w[i].store(base.elapsed().as_nanos() as u64, Ordering::Relaxed);
                out.write_all(l.as_bytes())?;
                out.write_all(b"\n")?;
                credits -= 1;
            }
            out.flush()?;
            Ok(out)
        });
        let mut seen = vec![false; n];
        let mut latencies = Vec::with_capacity(n);
        let mut failure = None;
        for _ in 0..n {
            line.clear();
            match input.read_line(&mut line) {
                Ok(0) => {
                    failure = Some("the server closed its output".to_owned());
                    break;
                }
                Err(e) => {
                    failure = Some(e.to_string());
                    break;
                }
                Ok(_) => {}
            }
            let now = base.elapsed().as_nanos() as u64;
            match check_response(line.trim_end(), tool, first_id, n) {
                Ok(i) if !seen[i] => {
                    seen[i] = true;
                    latencies.push(now.saturating_sub(sent[i].load(Ordering::Relaxed)));
                }
                Ok(i) => {
                    failure = Some(format!("call {i} answered twice"));
                    break;
                }
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
            let _ = credit_tx.send(1);
        }
        let elapsed = base.elapsed();
        drop(credit_tx);
        if let Some(f) = failure {
            let mut child = child;
            let _ = child.kill();
            let _ = child.wait();
            return Err(f.into());
        }
        let out = writer.join().map_err(|_| "the writer panicked")??;
        Ok((Stdio2Parts { child, out, input }, latencies, elapsed))
    }
}

/// What is left of a connection after a run.
struct Stdio2Parts {
    child: Child,
    out: BufWriter<ChildStdin>,
    input: BufReader<ChildStdout>,
}

impl Stdio2Parts {
    fn rejoin(self) -> Stdio2 {
        Stdio2 {
            child: self.child,
            out: self.out,
            input: self.input,
            line: String::new(),
        }
    }
}

/// One stdio run: start, warm up, `n` calls of `tool` with `window` in flight.
fn stdio_run(
    server: &ServerCmd,
    extra: &[String],
    tool: Tool,
    n: usize,
    window: usize,
    ticks: f64,
) -> Result<Run> {
    let (conn, started) = Stdio2::start(server, extra)?;
    let pid = conn.child.id();
    // Warm-up: a tenth of the run, at the same window.
    let warm = (n / 10).clamp(100, 2000);
    let lines: Vec<String> = (0..warm)
        .map(|i| call_line(1_000 + i as u64, tool, i))
        .collect();
    let (parts, _, _) = conn.drive(lines, window, tool, 1_000)?;
    let conn = parts.rejoin();
    let first_id = 1_000_000;
    let lines: Vec<String> = (0..n)
        .map(|i| call_line(first_id + i as u64, tool, i))
        .collect();
    let cpu_before = CpuSample::take(pid, ticks)?;
    let (parts, mut latencies, elapsed) = conn.drive(lines, window, tool, first_id)?;
    let cpu = CpuSample::take(pid, ticks)?.since(&cpu_before);
    let rss = peak_rss_kib(pid)?;
    let Stdio2Parts { child, out, input } = parts;
    drop(out);
    drop(input);
    reap(child, Duration::from_secs(15));
    latencies.sort_unstable();
    Ok(Run {
        calls_per_s: n as f64 / elapsed.as_secs_f64(),
        p50_us: percentile(&latencies, 0.50),
        p99_us: percentile(&latencies, 0.99),
        cpu_us: cpu * 1e6 / n as f64,
        rss_kib: rss,
        start_ms: started.as_secs_f64() * 1e3,
    })
}

// ---------------------------------------------------------------------------------------------
// HTTP

mod http_client {
    //! A minimal Streamable HTTP client on hyper: one HTTP/1.1 keep-alive connection per
    //! client, requests one after another.

    use http_body_util::{BodyExt, Full};
    use hyper::body::Bytes;
    use hyper::client::conn::http1::SendRequest;
    use hyper_util::rt::TokioIo;

    use super::Result;

    pub(super) struct Conn {
        sender: SendRequest<Full<Bytes>>,
        host: String,
        pub(super) session: Option<String>,
    }

    pub(super) struct Answer {
        pub(super) status: u16,
        pub(super) session: Option<String>,
        /// The JSON-RPC message: the body, or the data of the SSE event that carries it.
        pub(super) message: Option<String>,
    }

    impl Conn {
        pub(super) async fn open(addr: std::net::SocketAddr) -> Result<Conn> {
            let stream = tokio::net::TcpStream::connect(addr).await?;
            stream.set_nodelay(true)?;
            let (sender, conn) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            Ok(Conn {
                sender,
                host: addr.to_string(),
                session: None,
            })
        }

        pub(super) async fn post(&mut self, body: String) -> Result<Answer> {
            let mut request = hyper::Request::post("/mcp")
                .header("host", &self.host)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", super::PROTOCOL);
            if let Some(s) = &self.session {
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
            let sse = response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("text/event-stream"));
            let body = response.into_body().collect().await?.to_bytes();
            let text = String::from_utf8(body.to_vec())?;
            let message = if sse {
                // The last `data:` line that holds a JSON-RPC response.
                text.lines()
                    .rev()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim)
                    .find(|d| {
                        d.starts_with('{') && (d.contains("\"result\"") || d.contains("\"error\""))
                    })
                    .map(str::to_owned)
            } else if text.is_empty() {
                None
            } else {
                Some(text)
            };
            Ok(Answer {
                status,
                session,
                message,
            })
        }
    }
}

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// One HTTP run: start the server on a free port, `clients` connections (each initializing a
/// session unless stateless), `n` calls of `tool` in all.
fn http_run(
    server: &ServerCmd,
    stateless: bool,
    tool: Tool,
    n: usize,
    clients: usize,
    ticks: f64,
) -> Result<Run> {
    let port = free_port()?;
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse()?;
    let mut extra = vec!["--http".to_owned(), addr.to_string()];
    if stateless {
        extra.push("--stateless".to_owned());
    }
    let t = Instant::now();
    let child = server.spawn(&extra)?;
    let pid = child.id();
    let ready = loop {
        if TcpStream::connect(addr).is_ok() {
            break t.elapsed();
        }
        if t.elapsed() > Duration::from_secs(20) {
            let mut child = child;
            let _ = child.kill();
            return Err(format!("{} did not listen on {addr}", server.label).into());
        }
        thread::sleep(Duration::from_millis(2));
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let outcome = runtime.block_on(http_drive(addr, stateless, tool, n, clients, pid, ticks));
    let rss = peak_rss_kib(pid);
    let mut child = child;
    let _ = child.kill();
    let _ = child.wait();
    let (latencies, elapsed, cpu) = outcome?;
    let mut latencies = latencies;
    latencies.sort_unstable();
    Ok(Run {
        calls_per_s: n as f64 / elapsed.as_secs_f64(),
        p50_us: percentile(&latencies, 0.50),
        p99_us: percentile(&latencies, 0.99),
        cpu_us: cpu * 1e6 / n as f64,
        rss_kib: rss?,
        start_ms: ready.as_secs_f64() * 1e3,
    })
}

async fn http_client_open(
    addr: SocketAddr,
    stateless: bool,
    c: usize,
) -> Result<http_client::Conn> {
    let mut conn = http_client::Conn::open(addr).await?;
    if !stateless {
        let answer = conn.post(initialize_line(c as u64)).await?;
        if answer.status != 200 {
            return Err(format!("initialize: HTTP {}", answer.status).into());
        }
        conn.session = Some(answer.session.ok_or("no Mcp-Session-Id")?);
        let answer = conn.post(INITIALIZED.to_owned()).await?;
        if answer.status != 202 && answer.status != 200 {
            return Err(format!("notifications/initialized: HTTP {}", answer.status).into());
        }
    }
    Ok(conn)
}

async fn http_drive(
    addr: SocketAddr,
    stateless: bool,
    tool: Tool,
    n: usize,
    clients: usize,
    pid: u32,
    ticks: f64,
) -> Result<(Vec<u64>, Duration, f64)> {
    let mut conns = Vec::with_capacity(clients);
    for c in 0..clients {
        conns.push(http_client_open(addr, stateless, c).await?);
    }
    // Warm-up, then the measured calls; each client takes every `clients`-th call.
    let mut cpu_before = CpuSample::default();
    let mut result = (Vec::new(), Duration::ZERO);
    for (phase, count, first_id) in [(0, (n / 10).clamp(100, 2000), 1_000u64), (1, n, 1_000_000)] {
        if phase == 1 {
            cpu_before = CpuSample::take(pid, ticks)?;
        }
        let base = Instant::now();
        let mut tasks = Vec::with_capacity(clients);
        for (c, mut conn) in conns.drain(..).enumerate() {
            tasks.push(tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(count / clients + 1);
                for i in (c..count).step_by(clients) {
                    let t = Instant::now();
                    let answer = conn.post(call_line(first_id + i as u64, tool, i)).await?;
                    let message = answer.message.ok_or_else(|| {
                        format!("call {i}: HTTP {} without a message", answer.status)
                    })?;
                    let got = check_response(&message, tool, first_id, count)?;
                    if got != i {
                        return Err::<_, Error>(format!("call {i} answered as {got}").into());
                    }
                    latencies.push(t.elapsed().as_nanos() as u64);
                }
                Ok((conn, latencies))
            }));
        }
        let mut latencies = Vec::with_capacity(count);
        for task in tasks {
            let (conn, l) = task.await??;
            conns.push(conn);
            latencies.extend(l);
        }
        result = (latencies, base.elapsed());
    }
    let cpu = CpuSample::take(pid, ticks)?.since(&cpu_before);
    Ok((result.0, result.1, cpu))
}

// ---------------------------------------------------------------------------------------------
// 1000 tools

#[derive(Debug, Default, Clone)]
struct Many {
    start_ms: f64,
    list_ms: f64,
    list_bytes: usize,
    inproc: String,
    calls: Vec<(String, Run)>,
}

/// The `many-tools` leg: start-up and `tools/list` over stdio, in-process figures, and the cost
/// per call of the same tool with a catalog of 1 and of 1000.
fn many_leg(dir: &Path, n: usize, ticks: f64) -> Result<Many> {
    let program = dir.join("many-tools");
    let all = ServerCmd {
        label: "1000 tools".into(),
        program: program.clone(),
        args: vec![],
    };
    let one = ServerCmd {
        label: "1 tool".into(),
        program: program.clone(),
        args: vec!["--only".into(), "tool_0500".into()],
    };
    let mut many = Many::default();
    // Start-up (median of 5) and tools/list (median of 21) over stdio.
    let mut starts = Vec::new();
    let mut lists = Vec::new();
    for round in 0..5 {
        let (mut conn, started) = Stdio2::start(&all, &[])?;
        starts.push(started.as_secs_f64() * 1e3);
        if round == 0 {
            for k in 0..21 {
                let t = Instant::now();
                conn.send(&format!(
                    r#"{{"jsonrpc":"2.0","id":{},"method":"tools/list"}}"#,
                    10 + k
                ))?;
                let page = conn.recv()?;
                lists.push(t.elapsed().as_secs_f64() * 1e3);
                let tools = page.matches(r#""name":"tool_"#).count();
                if tools != 1000 {
                    return Err(format!("tools/list listed {tools} tools, not 1000").into());
                }
                many.list_bytes = page.len();
            }
        }
        drop(conn.out);
        reap(conn.child, Duration::from_secs(15));
    }
    many.start_ms = median_f(&mut starts);
    many.list_ms = median_f(&mut lists);
    let measured = Command::new(&program).arg("--measure").output()?;
    many.inproc = String::from_utf8_lossy(&measured.stdout).trim().to_owned();
    // Cost per call of tool_0500 with 1 and with 1000 tools in the catalog.
    for (label, server) in [("1 tool", &one), ("1000 tools", &all)] {
        for window in [64, 1] {
            let run = many_run(server, n, window, ticks)?;
            many.calls.push((format!("{label}, W={window}"), run));
        }
    }
    Ok(many)
}

/// `tool_0500(a, b) = a + b + 500`: the `add` check does not fit, so this run checks by hand.
fn many_run(server: &ServerCmd, n: usize, window: usize, ticks: f64) -> Result<Run> {
    // Arguments chosen so that the sum is the `add` tool's expected text for call i:
    // a = i - 500 (may be negative), b = i + 1, a + b + 500 = 2i + 1.
    let line = |id: u64, i: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"tool_0500","arguments":{{"a":{},"b":{}}}}}}}"#,
            i as i64 - 500,
            i + 1
        )
    };
    let (conn, started) = Stdio2::start(server, &[])?;
    let pid = conn.child.id();
    let warm = (n / 10).clamp(100, 2000);
    let (parts, _, _) = conn.drive(
        (0..warm).map(|i| line(1_000 + i as u64, i)).collect(),
        window,
        Tool::Add,
        1_000,
    )?;
    let conn = parts.rejoin();
    let cpu_before = CpuSample::take(pid, ticks)?;
    let (parts, mut latencies, elapsed) = conn.drive(
        (0..n).map(|i| line(1_000_000 + i as u64, i)).collect(),
        window,
        Tool::Add,
        1_000_000,
    )?;
    let cpu = CpuSample::take(pid, ticks)?.since(&cpu_before);
    let rss = peak_rss_kib(pid)?;
    drop(parts.out);
    reap(parts.child, Duration::from_secs(15));
    latencies.sort_unstable();
    Ok(Run {
        calls_per_s: n as f64 / elapsed.as_secs_f64(),
        p50_us: percentile(&latencies, 0.5),
        p99_us: percentile(&latencies, 0.99),
        cpu_us: cpu * 1e6 / n as f64,
        rss_kib: rss,
        start_ms: started.as_secs_f64() * 1e3,
    })
}

fn median_f(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

// ---------------------------------------------------------------------------------------------
// Tables

/// The runs of one cell (server × scenario), summarized by their median.
fn summarize(runs: &[Run]) -> (Run, f64, f64) {
    let med = |f: &dyn Fn(&Run) -> f64| {
        let mut v: Vec<f64> = runs.iter().map(f).collect();
        median_f(&mut v)
    };
    let lo = runs.iter().map(|r| r.calls_per_s).fold(f64::MAX, f64::min);
    let hi = runs.iter().map(|r| r.calls_per_s).fold(0.0, f64::max);
    (
        Run {
            calls_per_s: med(&|r| r.calls_per_s),
            p50_us: med(&|r| r.p50_us),
            p99_us: med(&|r| r.p99_us),
            cpu_us: med(&|r| r.cpu_us),
            rss_kib: runs.iter().map(|r| r.rss_kib).max().unwrap_or(0),
            start_ms: med(&|r| r.start_ms),
        },
        lo,
        hi,
    )
}

fn thousands(x: f64) -> String {
    let n = x.round() as u64;
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push('\u{202f}');
        }
        out.push(ch);
    }
    out
}

fn table_header(out: &mut String, first: &str) {
    let _ = writeln!(
        out,
        "| {first} | calls/s (min–max) | p50 µs | p99 µs | server CPU µs/call | peak RSS MiB | start ms |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
}

fn table_row(out: &mut String, label: &str, runs: &[Run]) {
    let (m, lo, hi) = summarize(runs);
    let spread = if runs.len() > 1 {
        format!(" ({}–{})", thousands(lo), thousands(hi))
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "| {label} | {}{spread} | {:.0} | {:.0} | {:.1} | {:.1} | {:.1} |",
        thousands(m.calls_per_s),
        m.p50_us,
        m.p99_us,
        m.cpu_us,
        m.rss_kib as f64 / 1024.0,
        m.start_ms
    );
}

/// Ratios of mcp-tool against each other server: throughput (mcp-tool ÷ other), p50 latency
/// and CPU per call (other ÷ mcp-tool). Above 1 means mcp-tool is better.
fn ratio_rows(out: &mut String, scenario: &str, cells: &BTreeMap<String, Vec<Run>>) {
    let Some(ours) = cells.get("mcp-tool").map(|r| summarize(r).0) else {
        return;
    };
    for (label, runs) in cells {
        if label == "mcp-tool" {
            continue;
        }
        let theirs = summarize(runs).0;
        let _ = writeln!(
            out,
            "| {scenario} | mcp-tool vs {label} | {:.2}× | {:.2}× | {:.2}× |",
            ours.calls_per_s / theirs.calls_per_s,
            theirs.p50_us / ours.p50_us,
            theirs.cpu_us / ours.cpu_us
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Legs

struct Options {
    n: usize,
    repeat: usize,
    clients: usize,
    servers: Vec<String>,
    dir: PathBuf,
    /// `custom`: the tool to call and the one window to use (both windows when `None`).
    tool: Tool,
    window: Option<usize>,
}

const SERVERS: [&str; 4] = ["mcp-tool", "rmcp-fast", "rmcp-doc", "floor"];

/// A server by label: a sibling binary, or `LABEL=PATH` for any binary that serves the
/// benchmark's tools as `bench-server` does (a build of an earlier commit, say).
fn server_cmd(dir: &Path, label: &str) -> ServerCmd {
    if let Some((label, path)) = label.split_once('=') {
        return ServerCmd {
            label: label.to_owned(),
            program: PathBuf::from(path),
            args: vec![],
        };
    }
    let bin = match label {
        "mcp-tool" => "bench-server",
        other => other,
    };
    ServerCmd {
        label: label.to_owned(),
        program: dir.join(bin),
        args: vec![],
    }
}

type Cells = BTreeMap<(Tool, usize), BTreeMap<String, Vec<Run>>>;

/// The stdio leg's scenarios: each tool at W=64 and W=1.
const STDIO_SCENARIOS: [(Tool, usize); 4] = [
    (Tool::Add, 64),
    (Tool::Add, 1),
    (Tool::CreateUser, 64),
    (Tool::CreateUser, 1),
];

/// The `diag` leg's: mcp-tool's `add` as a sync fn (blocking pool) and as an `async fn`.
const DIAG_SCENARIOS: [(Tool, usize); 4] = [
    (Tool::Add, 64),
    (Tool::AddAsync, 64),
    (Tool::Add, 1),
    (Tool::AddAsync, 1),
];

fn stdio_leg(
    opts: &Options,
    ticks: f64,
    servers: &[ServerCmd],
    scenarios: &[(Tool, usize)],
    out: &mut String,
) -> Result<()> {
    let mut cells: Cells = BTreeMap::new();
    for rep in 0..opts.repeat {
        for &(tool, window) in scenarios {
            // Rotate the order each repetition, so no server always runs first or last.
            for k in 0..servers.len() {
                let server = &servers[(k + rep) % servers.len()];
                eprint!(
                    "\r\x1b[Kstdio run {}/{}: {} {} W={window} …",
                    rep + 1,
                    opts.repeat,
                    server.label,
                    tool.name()
                );
                let run = stdio_run(server, &[], tool, opts.n, window, ticks)
                    .map_err(|e| format!("{} {} W={window}: {e}", server.label, tool.name()))?;
                cells
                    .entry((tool, window))
                    .or_default()
                    .entry(server.label.clone())
                    .or_default()
                    .push(run);
            }
        }
    }
    eprintln!("\r\x1b[Kstdio: done");
    let _ = writeln!(
        out,
        "### stdio: N = {} calls per run, median of {} runs (calls/s range in brackets)\n",
        opts.n, opts.repeat
    );
    for ((tool, window), by_server) in &cells {
        let _ = writeln!(out, "**`{}`, W = {window}**\n", tool.name());
        table_header(out, "server");
        for s in servers {
            if let Some(runs) = by_server.get(&s.label) {
                table_row(out, &s.label, runs);
            }
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "**Ratios** (throughput: mcp-tool ÷ other; p50 and CPU/call: other ÷ mcp-tool; above 1 = mcp-tool better)\n"
    );
    let _ = writeln!(out, "| scenario | pair | calls/s | p50 | CPU/call |");
    let _ = writeln!(out, "|---|---|---:|---:|---:|");
    for ((tool, window), by_server) in &cells {
        ratio_rows(out, &format!("`{}` W={window}", tool.name()), by_server);
    }
    out.push('\n');
    Ok(())
}

fn http_leg(opts: &Options, ticks: f64, servers: &[ServerCmd], out: &mut String) -> Result<()> {
    let servers: Vec<&ServerCmd> = servers.iter().filter(|s| s.label != "floor").collect();
    let mut cells: BTreeMap<(bool, Tool), BTreeMap<String, Vec<Run>>> = BTreeMap::new();
    for stateless in [true, false] {
        for tool in [Tool::Add, Tool::CreateUser] {
            for server in &servers {
                let mode = if stateless { "stateless" } else { "session" };
                eprint!("\r\x1b[Khttp: {} {mode} {} …", server.label, tool.name());
                let run = http_run(server, stateless, tool, opts.n, opts.clients, ticks)
                    .map_err(|e| format!("{} HTTP {mode} {}: {e}", server.label, tool.name()))?;
                cells
                    .entry((stateless, tool))
                    .or_default()
                    .entry(server.label.clone())
                    .or_default()
                    .push(run);
            }
        }
    }
    eprintln!("\r\x1b[Khttp: done");
    let _ = writeln!(
        out,
        "### Streamable HTTP: N = {} calls, M = {} keep-alive clients over loopback, one run each\n",
        opts.n, opts.clients
    );
    for ((stateless, tool), by_server) in cells.iter().rev() {
        let mode = if *stateless {
            "stateless, JSON answers"
        } else {
            "sessions"
        };
        let _ = writeln!(out, "**`{}`, {mode}**\n", tool.name());
        table_header(out, "server");
        for s in &servers {
            if let Some(runs) = by_server.get(&s.label) {
                table_row(out, &s.label, runs);
            }
        }
        out.push('\n');
    }
    let _ = writeln!(out, "**Ratios** (as above)\n");
    let _ = writeln!(out, "| scenario | pair | calls/s | p50 | CPU/call |");
    let _ = writeln!(out, "|---|---|---:|---:|---:|");
    for ((stateless, tool), by_server) in cells.iter().rev() {
        let mode = if *stateless { "stateless" } else { "session" };
        ratio_rows(out, &format!("`{}` {mode}", tool.name()), by_server);
    }
    out.push('\n');
    Ok(())
}

fn many_section(opts: &Options, ticks: f64, out: &mut String) -> Result<()> {
    eprint!("\r\x1b[K1000 tools …");
    let many = many_leg(&opts.dir, opts.n, ticks)?;
    eprintln!("\r\x1b[K1000 tools: done");
    let _ = writeln!(out, "### 1000 generated tools (`many-tools`)\n");
    let _ = writeln!(
        out,
        "- process start to `initialize` answer, 1000 tools, stdio: **{:.1} ms** (median of 5)",
        many.start_ms
    );
    let _ = writeln!(
        out,
        "- `tools/list` round trip, 1000 tools ({} KiB), stdio: **{:.2} ms** (median of 21)",
        many.list_bytes / 1024,
        many.list_ms
    );
    let _ = writeln!(
        out,
        "- in-process (`many-tools --measure`): `{}`\n",
        many.inproc
    );
    let _ = writeln!(
        out,
        "Cost per call of `tool_0500` over stdio, N = {}, the same binary with a catalog of 1 and of 1000 tools:\n",
        opts.n
    );
    table_header(out, "catalog");
    for (label, run) in &many.calls {
        table_row(out, label, std::slice::from_ref(run));
    }
    out.push('\n');
    Ok(())
}

fn custom_leg(opts: &Options, ticks: f64, command: &[String], out: &mut String) -> Result<()> {
    let (program, args) = command.split_first().ok_or("custom needs a command")?;
    let server = ServerCmd {
        label: program.clone(),
        program: program.into(),
        args: args.to_vec(),
    };
    table_header(out, "run");
    let windows = opts.window.map_or(vec![64, 1], |w| vec![w]);
    for window in windows {
        let mut runs = Vec::new();
        for _ in 0..opts.repeat {
            runs.push(stdio_run(&server, &[], opts.tool, opts.n, window, ticks)?);
        }
        table_row(out, &format!("{} W={window}", opts.tool.name()), &runs);
    }
    Ok(())
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_owned())
        })
        .unwrap_or_else(|| "?".into());
    let cores = thread::available_parallelism().map_or(0, usize::from);
    let rustc = Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|| "?".into());
    let load = std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    format!("{cores} cores, {cpu}, {rustc}, load average at start {load}")
}

/// When started by `cargo run`, builds the sibling binaries (servers) of this one first, into
/// the same target directory and profile: `cargo run --bin load` builds only `load`.
fn build_siblings(dir: &Path) -> Result<()> {
    let Some(cargo) = std::env::var_os("CARGO") else {
        return Ok(());
    };
    let target_dir = dir.parent().ok_or("no target directory")?;
    let mut command = Command::new(cargo);
    command
        .args([
            "build",
            "--quiet",
            "-p",
            "mcp-tool-bench",
            "--bins",
            "--target-dir",
        ])
        .arg(target_dir);
    match dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => {}
        Some("release") => {
            command.arg("--release");
        }
        Some(profile) => {
            command.args(["--profile", profile]);
        }
        None => {}
    }
    eprintln!("load: building the benchmark servers (cargo build -p mcp-tool-bench --bins)");
    if !command.status()?.success() {
        return Err("building the benchmark servers failed".into());
    }
    Ok(())
}

fn usage() -> ! {
    eprintln!(
        "usage: load <all|stdio|http|many|diag|custom -- CMD ARGS> [--n N] [--repeat R] [--clients M] [--servers a,b] [--tool T] [--window W] [--quick] [--no-build]"
    );
    std::process::exit(2)
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let leg = args.next().unwrap_or_else(|| usage());
    let dir = std::env::current_exe()?
        .parent()
        .ok_or("no directory")?
        .to_path_buf();
    let mut opts = Options {
        n: 20_000,
        repeat: 3,
        clients: 16,
        servers: SERVERS.iter().map(|s| (*s).to_owned()).collect(),
        dir,
        tool: Tool::Add,
        window: None,
    };
    let mut command = Vec::new();
    let mut build = true;
    while let Some(a) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .unwrap_or_else(|| panic!("{name} needs a value"))
        };
        match a.as_str() {
            "--n" => opts.n = value("--n").parse()?,
            "--repeat" => opts.repeat = value("--repeat").parse::<usize>()?.max(1),
            "--clients" => opts.clients = value("--clients").parse::<usize>()?.max(1),
            "--servers" => {
                opts.servers = value("--servers").split(',').map(str::to_owned).collect();
            }
            "--tool" => {
                opts.tool = match value("--tool").as_str() {
                    "add" => Tool::Add,
                    "add_async" => Tool::AddAsync,
                    "create_user" => Tool::CreateUser,
                    _ => usage(),
                };
            }
            "--window" => opts.window = Some(value("--window").parse::<usize>()?.max(1)),
            "--no-build" => build = false,
            "--quick" => {
                opts.n = 2_000;
                opts.repeat = 1;
            }
            "--" => command.extend(args.by_ref()),
            _ => usage(),
        }
    }
    if build && leg != "custom" {
        build_siblings(&opts.dir)?;
    }
    let ticks = clock_ticks();
    let servers: Vec<ServerCmd> = opts
        .servers
        .iter()
        .map(|s| server_cmd(&opts.dir, s))
        .collect();
    for s in servers.iter().filter(|_| leg != "custom") {
        if !s.program.exists() {
            return Err(format!(
                "{} not found: build the package first (cargo build --release -p mcp-tool-bench)",
                s.program.display()
            )
            .into());
        }
    }
    let mut out = String::new();
    let _ = writeln!(out, "Machine: {}\n", machine());
    match leg.as_str() {
        "all" => {
            stdio_leg(&opts, ticks, &servers, &STDIO_SCENARIOS, &mut out)?;
            http_leg(&opts, ticks, &servers, &mut out)?;
            many_section(&opts, ticks, &mut out)?;
        }
        "stdio" => stdio_leg(&opts, ticks, &servers, &STDIO_SCENARIOS, &mut out)?,
        "diag" => {
            let ours = [server_cmd(&opts.dir, "mcp-tool")];
            stdio_leg(&opts, ticks, &ours, &DIAG_SCENARIOS, &mut out)?;
        }
        "http" => http_leg(&opts, ticks, &servers, &mut out)?,
        "many" => many_section(&opts, ticks, &mut out)?,
        "custom" => custom_leg(&opts, ticks, &command, &mut out)?,
        _ => usage(),
    }
    print!("{out}");
    Ok(())
}
