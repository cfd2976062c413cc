//! The `tasks` leg: N tasks (10 000 by default) created and completed over stdio, with W in
//! flight, kept in memory and in Redis.
//!
//! - 2025-11-25: `tools/call` of `quick_job` with `task: {}` (the default time to live), whose
//!   answer is `{task: {taskId, status, …}}`, then `tasks/result` for that task, which answers
//!   the call's result once it is done. The server also sends `notifications/tasks/status`
//!   (counted, not waited for).
//! - 2026-07-28: `tools/call` of `quick_job` from a client declaring the tasks extension
//!   (`_meta["io.modelcontextprotocol/clientCapabilities"].extensions
//!   ["io.modelcontextprotocol/tasks"] = {}`); the tool awaits once, so the call becomes a task
//!   (`resultType: "task"`); then `tasks/get` at once and again after every answer that is not
//!   `completed` (the driver does not wait the `pollIntervalMs` the server suggests: it
//!   measures the server, not a polite client).
//!
//! Each task is timed from its `tools/call` to the task's answer (create) and to its result
//! (create → result). Memory: the server's resident set (`VmRSS`) after the warm-up and after
//! the N tasks are done (they are kept until their time to live, an hour), and with Redis its
//! `used_memory` (`INFO memory`) and `total_commands_processed` (`INFO stats`) before and
//! after, read over a raw TCP connection; the `redis-server` the leg starts is its own, on a
//! free loopback port, with no persistence.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::process::{CpuSample, ServerCmd, peak_rss_kib, percentile, reap};
use super::stdio::{Feed, Stdio2, Stdio2Parts, spawn_writer};
use super::tables::{median_f, thousands};
use super::wire::{V2025_11_25, V2026_07_28, Version};
use super::{Options, Result};

/// The tool every task runs.
const TOOL: &str = "quick_job";

/// A 2026-07-28 request's `_meta`: the version, the client's capabilities (the tasks
/// extension) and who it is.
const META_TASKS: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/clientInfo":{"name":"mcp-tool-bench","version":"0.1.0"}}"#;

/// The ids of task `i`'s requests: `first + i` creates it, `first + k * STRIDE + i` is its
/// k-th follow-up (`tasks/result`, or the k-th `tasks/get`).
const STRIDE: u64 = 1 << 32;

/// Where the tasks are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Store {
    Memory,
    Redis,
}

impl Store {
    fn name(self) -> &'static str {
        match self {
            Store::Memory => "memory",
            Store::Redis => "Redis",
        }
    }
}

/// The figures of one run.
#[derive(Debug, Clone, Default)]
struct TaskRun {
    tasks_per_s: f64,
    create_p50_us: f64,
    create_p99_us: f64,
    full_p50_us: f64,
    full_p99_us: f64,
    /// Server CPU per task, µs.
    cpu_us: f64,
    peak_rss_kib: u64,
    rss_after_kib: u64,
    /// (RSS after − RSS before) / N, bytes.
    rss_per_task: f64,
    /// `tasks/result` or `tasks/get` requests per task.
    follow_ups: f64,
    /// How many tasks took 100 ms or more from create to result.
    slow: usize,
    redis: Option<RedisFigures>,
}

#[derive(Debug, Clone, Default)]
struct RedisFigures {
    /// `used_memory` delta / N, bytes.
    memory_per_task: f64,
    /// `total_commands_processed` delta / N.
    commands_per_task: f64,
    /// redis-server's CPU per task, µs.
    cpu_us: f64,
}

// ---------------------------------------------------------------------------------------------
// The wire

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a str>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

/// 2025-11-25's `CreateTaskResult`.
#[derive(Deserialize)]
struct Created2025<'a> {
    #[serde(borrow)]
    task: TaskFields<'a>,
}

/// A task's id and status (2025's `Task`, 2026's `CreateTaskResult` and `tasks/get` answer).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskFields<'a> {
    #[serde(borrow)]
    task_id: &'a str,
    #[serde(borrow)]
    status: &'a str,
    #[serde(borrow, default)]
    result_type: Option<&'a str>,
    /// 2026-07-28 `tasks/get`, completed: the call's result.
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    /// A call that finished without becoming a task (2026): its content.
    #[serde(borrow, default)]
    content: Option<Vec<TextBlock<'a>>>,
}

#[derive(Deserialize)]
struct CallResult<'a> {
    #[serde(borrow, default)]
    content: Vec<TextBlock<'a>>,
    #[serde(rename = "isError", default)]
    is_error: bool,
}

#[derive(Deserialize)]
struct TextBlock<'a> {
    #[serde(borrow, default)]
    text: std::borrow::Cow<'a, str>,
}

/// The tasks of one phase: `n` tasks in `version`, ids from `first`.
#[derive(Debug, Clone, Copy)]
struct Phase {
    version: Version,
    first: u64,
    n: usize,
}

/// What a message means for the run.
enum Step {
    /// Task `i`'s create answer came; send this follow-up.
    Created(usize, String),
    /// Task `i` is not done yet; ask again.
    Again(String),
    /// Task `i` finished with the right result.
    Done(usize),
    /// Task `i` finished without becoming a task (2026: the tool did not wait).
    DoneAtOnce(usize),
    /// A notification.
    Notification,
}

impl Phase {
    fn create(&self, i: usize) -> String {
        let id = self.first + i as u64;
        match self.version {
            Version::V2025_11_25 => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{TOOL}","arguments":{{"n":{i}}},"task":{{}}}}}}"#
            ),
            Version::V2026_07_28 => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{TOOL}","arguments":{{"n":{i}}},{META_TASKS}}}}}"#
            ),
        }
    }

    fn follow_up(&self, i: usize, k: u64, task_id: &str) -> String {
        let id = self.first + k * STRIDE + i as u64;
        match self.version {
            Version::V2025_11_25 => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tasks/result","params":{{"taskId":"{task_id}"}}}}"#
            ),
            Version::V2026_07_28 => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tasks/get","params":{{"taskId":"{task_id}",{META_TASKS}}}}}"#
            ),
        }
    }

    /// Checks a call's result: `quick_job(i)` answers `2 i`.
    fn check(i: usize, result: &str) -> Result<(), String> {
        let r: CallResult<'_> =
            serde_json::from_str(result).map_err(|e| format!("task {i}: bad result ({e})"))?;
        let text = r.content.first().map_or("", |b| &b.text);
        if r.is_error || text != (2 * i).to_string() {
            return Err(format!(
                "task {i}: answered {text:?} (isError {})",
                r.is_error
            ));
        }
        Ok(())
    }

    fn read(&self, text: &str) -> Result<Step, String> {
        let m: Message<'_> =
            serde_json::from_str(text).map_err(|e| format!("bad message ({e}): {text}"))?;
        if m.method.is_some() {
            return match m.id {
                None => Ok(Step::Notification),
                Some(_) => Err(format!("an unexpected request from the server: {text}")),
            };
        }
        let id: u64 =
            m.id.and_then(|id| id.get().parse().ok())
                .ok_or_else(|| format!("a response without a numeric id: {text}"))?;
        let offset = id
            .checked_sub(self.first)
            .ok_or_else(|| format!("an id that is not ours: {id}"))?;
        let (k, i) = (offset / STRIDE, (offset % STRIDE) as usize);
        if i >= self.n {
            return Err(format!("an id that is not ours: {id}"));
        }
        if let Some(e) = m.error {
            return Err(format!(
                "task {i} (request {k}): JSON-RPC error {}",
                e.get()
            ));
        }
        let result = m
            .result
            .ok_or_else(|| format!("task {i}: neither result nor error"))?
            .get();
        let bad = |e: serde_json::Error| format!("task {i}: bad answer ({e}): {result}");
        match (self.version, k) {
            (Version::V2025_11_25, 0) => {
                let c: Created2025<'_> = serde_json::from_str(result).map_err(bad)?;
                if c.task.status != "working" && c.task.status != "completed" {
                    return Err(format!("task {i}: created as {}", c.task.status));
                }
                Ok(Step::Created(i, self.follow_up(i, 1, c.task.task_id)))
            }
            (Version::V2025_11_25, _) => {
                Self::check(i, result)?;
                Ok(Step::Done(i))
            }
            (Version::V2026_07_28, _) => {
                let t: TaskFields<'_> = serde_json::from_str(result).map_err(bad)?;
                if k == 0 {
                    return match t.result_type {
                        Some("task") => Ok(Step::Created(i, self.follow_up(i, 1, t.task_id))),
                        Some("complete") if t.content.is_some() => {
                            Self::check(i, result)?;
                            Ok(Step::DoneAtOnce(i))
                        }
                        other => Err(format!("task {i}: resultType {other:?}: {result}")),
                    };
                }
                match t.status {
                    "completed" => {
                        let r = t
                            .result
                            .ok_or_else(|| format!("task {i}: completed without a result"))?;
                        Self::check(i, r.get())?;
                        Ok(Step::Done(i))
                    }
                    "working" => Ok(Step::Again(self.follow_up(i, k + 1, t.task_id))),
                    other => Err(format!("task {i}: {other}: {result}")),
                }
            }
        }
    }
}

/// The timings of one phase.
#[derive(Default)]
struct Timings {
    create: Vec<u64>,
    full: Vec<u64>,
    follow_ups: usize,
    notifications: usize,
    at_once: usize,
    elapsed: Duration,
}

/// Sends the phase's `n` creates with at most `window` tasks unfinished, and each task's
/// follow-ups as their answers come; returns the timings (ns) when every task is done.
fn drive(conn: Stdio2, phase: Phase, window: usize) -> Result<(Stdio2Parts, Timings)> {
    let n = phase.n;
    let Stdio2 {
        child,
        out,
        mut input,
        mut line,
    } = conn;
    let lines: Vec<String> = (0..n).map(|i| phase.create(i)).collect();
    let sent: Arc<Vec<AtomicU64>> = Arc::new((0..n).map(|_| AtomicU64::new(0)).collect());
    let base = Instant::now();
    let (feed_tx, feed_rx) = mpsc::channel::<Feed>();
    let sent_w = sent.clone();
    let writer = spawn_writer(out, lines, window, sent_w, base, feed_rx);
    let mut done = vec![false; n];
    let mut t = Timings {
        create: Vec::with_capacity(n),
        full: Vec::with_capacity(n),
        ..Timings::default()
    };
    let deadline = Duration::from_secs(600);
    let mut failure = None;
    while t.full.len() < n {
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
        let now = base.elapsed();
        if now > deadline {
            failure = Some(format!("not done after {deadline:?}"));
            break;
        }
        let now = now.as_nanos() as u64;
        let since = |i: usize| now.saturating_sub(sent[i].load(Ordering::Relaxed));
        let mut finish = |i: usize, t: &mut Timings| -> Result<(), String> {
            if std::mem::replace(&mut done[i], true) {
                return Err(format!("task {i} finished twice"));
            }
            t.full.push(since(i));
            let _ = feed_tx.send(Feed::Credit);
            Ok(())
        };
        let step = phase.read(line.trim_end()).and_then(|step| match step {
            Step::Created(i, follow) => {
                t.create.push(since(i));
                t.follow_ups += 1;
                let _ = feed_tx.send(Feed::Line(follow));
                Ok(())
            }
            Step::Again(follow) => {
                t.follow_ups += 1;
                let _ = feed_tx.send(Feed::Line(follow));
                Ok(())
            }
            Step::Done(i) => finish(i, &mut t),
            Step::DoneAtOnce(i) => {
                t.create.push(since(i));
                t.at_once += 1;
                finish(i, &mut t)
            }
            Step::Notification => {
                t.notifications += 1;
                Ok(())
            }
        });
        if let Err(e) = step {
            failure = Some(e);
            break;
        }
    }
    t.elapsed = base.elapsed();
    drop(feed_tx);
    if let Some(f) = failure {
        let mut child = child;
        let _ = child.kill();
        let _ = child.wait();
        return Err(f.into());
    }
    let out = writer.join().map_err(|_| "the writer panicked")??;
    Ok((Stdio2Parts { child, out, input }, t))
}

/// The process's resident set (`VmRSS`), KiB.
fn rss_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .ok_or("no VmRSS")?;
    Ok(line.split_whitespace().nth(1).ok_or("bad VmRSS")?.parse()?)
}

// ---------------------------------------------------------------------------------------------
// Redis

/// A `redis-server` of the leg's own, on a free loopback port, without persistence.
struct Redis {
    child: Child,
    port: u16,
    conn: BufReader<TcpStream>,
}

impl Redis {
    /// Starts it and waits until it answers `PING`; `Ok(None)` when `redis-server` is not
    /// installed.
    fn start() -> Result<Option<Redis>> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let child = match Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(child) => child,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot start redis-server: {e}").into()),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(stream) = TcpStream::connect(("127.0.0.1", port)) {
                stream.set_read_timeout(Some(Duration::from_secs(10)))?;
                let mut redis = Redis {
                    child,
                    port,
                    conn: BufReader::new(stream),
                };
                if redis.command(&["PING"]).is_ok_and(|r| r == "PONG") {
                    return Ok(Some(redis));
                }
                let Redis { child: c, .. } = redis;
                return Err(stop_child(c, "redis-server does not answer PING"));
            }
            if Instant::now() > deadline {
                return Err(stop_child(child, "redis-server did not start listening"));
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Sends a command; its simple or bulk string answer (an integer as text).
    fn command(&mut self, args: &[&str]) -> Result<String> {
        let mut request = format!("*{}\r\n", args.len());
        for a in args {
            let _ = write!(request, "${}\r\n{a}\r\n", a.len());
        }
        self.conn.get_mut().write_all(request.as_bytes())?;
        let mut head = String::new();
        self.conn.read_line(&mut head)?;
        let head = head.trim_end();
        match head.as_bytes().first() {
            Some(b'+' | b':') => Ok(head[1..].to_owned()),
            Some(b'$') => {
                let len: usize = head[1..].parse()?;
                let mut body = vec![0; len + 2];
                self.conn.read_exact(&mut body)?;
                body.truncate(len);
                Ok(String::from_utf8(body)?)
            }
            _ => Err(format!("Redis answered {head:?}").into()),
        }
    }

    /// A field of `INFO section`, as a number.
    fn info(&mut self, section: &str, field: &str) -> Result<u64> {
        let text = self.command(&["INFO", section])?;
        let prefix = format!("{field}:");
        text.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .ok_or_else(|| format!("INFO {section} has no {field}"))?
            .trim()
            .parse()
            .map_err(Into::into)
    }

    fn stop(mut self) {
        let _ = self.command(&["SHUTDOWN", "NOSAVE"]);
        reap(self.child, Duration::from_secs(5));
    }
}

fn stop_child(mut child: Child, why: &str) -> super::Error {
    let _ = child.kill();
    let _ = child.wait();
    why.into()
}

// ---------------------------------------------------------------------------------------------
// A run

/// One run: start the server (tasks in `redis` when given, emptied first), warm up, then `n`
/// tasks with `window` unfinished.
fn task_run(
    server: &ServerCmd,
    mut redis: Option<&mut Redis>,
    version: Version,
    n: usize,
    window: usize,
    ticks: f64,
) -> Result<TaskRun> {
    let mut extra = Vec::new();
    if let Some(r) = redis.as_deref_mut() {
        r.command(&["FLUSHALL"])?;
        extra = vec!["--task-store".to_owned(), r.url()];
    }
    let (conn, _) = Stdio2::start(server, &extra, version, false)?;
    let pid = conn.child.id();
    let warm = Phase {
        version,
        first: 1_000,
        n: (n / 10).clamp(100, 2000),
    };
    let (parts, _) = drive(conn, warm, window)?;
    let conn = parts.rejoin();
    let phase = Phase {
        first: 1_000_000,
        n,
        ..warm
    };
    let rss_before = rss_kib(pid)?;
    let mut redis_before = None;
    if let Some(r) = redis.as_deref_mut() {
        let cpu = CpuSample::take(r.child.id(), ticks)?;
        redis_before = Some((
            r.info("memory", "used_memory")?,
            r.info("stats", "total_commands_processed")?,
            cpu,
        ));
    }
    let cpu_before = CpuSample::take(pid, ticks)?;
    let (parts, mut t) = drive(conn, phase, window)?;
    let cpu = CpuSample::take(pid, ticks)?.since(&cpu_before);
    let rss_after = rss_kib(pid)?;
    let peak = peak_rss_kib(pid)?;
    let mut figures = None;
    if let (Some(r), Some((memory, commands, redis_cpu))) = (redis, redis_before) {
        let cpu = CpuSample::take(r.child.id(), ticks)?.since(&redis_cpu);
        let memory_after = r.info("memory", "used_memory")?;
        // This INFO and the one before are commands too.
        let commands_after = r.info("stats", "total_commands_processed")?;
        figures = Some(RedisFigures {
            memory_per_task: (memory_after as f64 - memory as f64) / n as f64,
            commands_per_task: commands_after.saturating_sub(commands + 2) as f64 / n as f64,
            cpu_us: cpu * 1e6 / n as f64,
        });
    }
    let Stdio2Parts { child, out, input } = parts;
    drop(out);
    drop(input);
    reap(child, Duration::from_secs(15));
    if t.at_once > 0 {
        return Err(format!("{} of {n} calls finished without becoming tasks", t.at_once).into());
    }
    let slow = t.full.iter().filter(|&&ns| ns >= 100_000_000).count();
    t.create.sort_unstable();
    t.full.sort_unstable();
    Ok(TaskRun {
        tasks_per_s: n as f64 / t.elapsed.as_secs_f64(),
        create_p50_us: percentile(&t.create, 0.50),
        create_p99_us: percentile(&t.create, 0.99),
        full_p50_us: percentile(&t.full, 0.50),
        full_p99_us: percentile(&t.full, 0.99),
        cpu_us: cpu * 1e6 / n as f64,
        peak_rss_kib: peak,
        rss_after_kib: rss_after,
        rss_per_task: (rss_after as f64 - rss_before as f64) * 1024.0 / n as f64,
        follow_ups: t.follow_ups as f64 / n as f64,
        slow,
        redis: figures,
    })
}

// ---------------------------------------------------------------------------------------------
// The leg

/// A row: a server, a store, a version, a window.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Cell {
    version: Version,
    window: std::cmp::Reverse<usize>,
    label: String,
    store: Store,
}

const WINDOWS: [usize; 2] = [64, 1];

pub(crate) fn tasks_leg(
    opts: &Options,
    ticks: f64,
    servers: &[ServerCmd],
    out: &mut String,
) -> Result<()> {
    let ours: Vec<&ServerCmd> = servers
        .iter()
        .filter(|s| s.label == "mcp-tool" || s.label.contains('='))
        .collect();
    let ours: Vec<&ServerCmd> = if ours.is_empty() {
        servers.iter().filter(|s| s.label == "mcp-tool").collect()
    } else {
        ours
    };
    // rmcp 3.11 keeps its tasks in its `TaskManager` and speaks only 2026-07-28 tasks.
    let rmcp = super::server_cmd(&opts.dir, "rmcp-tasks");
    let with_rmcp = servers.iter().any(|s| s.label.starts_with("rmcp"));
    if with_rmcp && !rmcp.program.exists() {
        return Err(format!(
            "{} not found: build the package first",
            rmcp.program.display()
        )
        .into());
    }
    let n = opts.task_n;
    let mut redis = Redis::start()?;
    if redis.is_none() {
        eprintln!("tasks: redis-server is not installed: the Redis rows are skipped");
    }
    let stores: Vec<Store> = if redis.is_some() {
        vec![Store::Memory, Store::Redis]
    } else {
        vec![Store::Memory]
    };
    let mut plan = Vec::new();
    for version in [Version::V2025_11_25, Version::V2026_07_28] {
        for window in opts.window.map_or(WINDOWS.to_vec(), |w| vec![w]) {
            for server in &ours {
                for &store in &stores {
                    plan.push((*server, store, version, window));
                }
            }
            if with_rmcp && version == Version::V2026_07_28 {
                plan.push((&rmcp, Store::Memory, version, window));
            }
        }
    }
    let mut cells: BTreeMap<Cell, Vec<TaskRun>> = BTreeMap::new();
    let outcome = (|| -> Result<()> {
        for rep in 0..opts.repeat {
            for k in 0..plan.len() {
                // Rotate the order each repetition.
                let (server, store, version, window) = plan[(k + rep) % plan.len()];
                eprint!(
                    "\r\x1b[Ktasks run {}/{}: {} {} {} W={window} …",
                    rep + 1,
                    opts.repeat,
                    server.label,
                    store.name(),
                    version.as_str()
                );
                let r = if store == Store::Redis {
                    redis.as_mut()
                } else {
                    None
                };
                let run = task_run(server, r, version, n, window, ticks).map_err(|e| {
                    format!(
                        "{} {} {} W={window}: {e}",
                        server.label,
                        store.name(),
                        version.as_str()
                    )
                })?;
                cells
                    .entry(Cell {
                        version,
                        window: std::cmp::Reverse(window),
                        label: server.label.clone(),
                        store,
                    })
                    .or_default()
                    .push(run);
            }
        }
        Ok(())
    })();
    if let Some(r) = redis {
        r.stop();
    }
    outcome?;
    eprintln!("\r\x1b[Ktasks: done");
    let _ = writeln!(
        out,
        "### Tasks: N = {n} tasks of `{TOOL}` created and completed per run over stdio, median of {} runs (tasks/s range in brackets)\n",
        opts.repeat
    );
    for version in [Version::V2025_11_25, Version::V2026_07_28] {
        let how = match version {
            Version::V2025_11_25 => {
                format!("{V2025_11_25}: `tools/call` with `task`, then `tasks/result`")
            }
            Version::V2026_07_28 => {
                format!(
                    "{V2026_07_28}: `tools/call` (tasks extension), then `tasks/get` until completed"
                )
            }
        };
        let _ = writeln!(out, "**{how}**\n");
        let _ = writeln!(
            out,
            "| server, store | W | tasks/s (min–max) | create p50 µs | create p99 µs | create→result p50 µs | p99 µs | ≥ 100 ms | follow-ups/task | server CPU µs/task | peak RSS MiB | RSS after MiB | server RSS Δ B/task | Redis used_memory Δ B/task | Redis commands/task | Redis CPU µs/task |"
        );
        let _ = writeln!(
            out,
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        );
        for (cell, runs) in cells.iter().filter(|(c, _)| c.version == version) {
            row(out, cell, runs);
        }
        out.push('\n');
    }
    Ok(())
}

fn row(out: &mut String, cell: &Cell, runs: &[TaskRun]) {
    let med = |f: &dyn Fn(&TaskRun) -> f64| {
        let mut v: Vec<f64> = runs.iter().map(f).collect();
        median_f(&mut v)
    };
    let lo = runs.iter().map(|r| r.tasks_per_s).fold(f64::MAX, f64::min);
    let hi = runs.iter().map(|r| r.tasks_per_s).fold(0.0, f64::max);
    let spread = if runs.len() > 1 {
        format!(" ({}–{})", thousands(lo), thousands(hi))
    } else {
        String::new()
    };
    let redis = |f: &dyn Fn(&RedisFigures) -> f64, digits: usize| {
        if runs.iter().all(|r| r.redis.is_some()) {
            format!(
                "{:.digits$}",
                med(&|r| r.redis.as_ref().map_or(0.0, f)),
                digits = digits
            )
        } else {
            "—".to_owned()
        }
    };
    let peak = runs.iter().map(|r| r.peak_rss_kib).max().unwrap_or(0);
    let slow = runs.iter().map(|r| r.slow).max().unwrap_or(0);
    let _ = writeln!(
        out,
        "| {} {} | {} | {}{spread} | {:.0} | {:.0} | {:.0} | {:.0} | {slow} | {:.2} | {:.1} | {:.1} | {:.1} | {:.0} | {} | {} | {} |",
        cell.label,
        cell.store.name(),
        cell.window.0,
        thousands(med(&|r| r.tasks_per_s)),
        med(&|r| r.create_p50_us),
        med(&|r| r.create_p99_us),
        med(&|r| r.full_p50_us),
        med(&|r| r.full_p99_us),
        med(&|r| r.follow_ups),
        med(&|r| r.cpu_us),
        peak as f64 / 1024.0,
        med(&|r| r.rss_after_kib as f64) / 1024.0,
        med(&|r| r.rss_per_task),
        redis(&|r| r.memory_per_task, 0),
        redis(&|r| r.commands_per_task, 1),
        redis(&|r| r.cpu_us, 1),
    );
}
