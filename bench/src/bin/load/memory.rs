//! The `memory` leg: what a server holds, read as its resident set (`VmRSS` of
//! `/proc/<pid>/status`) once its CPU time has stopped moving:
//!
//! - idle over stdio, after `initialize` and `notifications/initialized`;
//! - idle over HTTP in session mode, listening, before any request;
//! - with N idle 2025-11-25 sessions (N = 10 000 by default) opened over HTTP — each an
//!   `initialize` and a `notifications/initialized` on one of 32 keep-alive connections — and
//!   left open; the first and the last of them must still answer a `ping` afterwards;
//! - with N calls in flight on one stdio connection: N `tools/call` of `wait` (which sleeps
//!   `WAIT_MS` before answering) all sent, none answered yet; every answer is then awaited and
//!   checked.
//!
//! Per session and per call: (RSS with them − RSS idle) ÷ N. The floor holds no session and
//! runs one call at a time: it shows only its idle figures.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use super::http::{free_port, http_client::Conn};
use super::process::{ServerCmd, cpu_seconds};
use super::stdio::Stdio2;
use super::tables::{median_f, thousands};
use super::wire::{INITIALIZED, V2025_11_25, Version, initialize_line};
use super::{Options, Result};

/// How long each `wait` call sleeps: longer than sending N calls takes the slowest server.
const WAIT_MS: u64 = 6_000;

/// Connections the sessions are opened on.
const SESSION_CONNS: usize = 32;

/// The figures of one run, KiB.
#[derive(Debug, Clone, Default)]
struct MemRun {
    idle_stdio: u64,
    in_flight: Option<u64>,
    idle_http: u64,
    sessions: Option<u64>,
}

fn rss_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| "no VmRSS".into())
}

/// Waits until the process has used less than 2 ms of CPU in 200 ms (at most 30 s), then
/// reads its resident set.
fn settled_rss(pid: u32, ticks: f64) -> Result<u64> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut before = cpu_seconds(pid, ticks)?;
    loop {
        thread::sleep(Duration::from_millis(200));
        let now = cpu_seconds(pid, ticks)?;
        if now - before < 0.002 || Instant::now() > deadline {
            return rss_kib(pid);
        }
        before = now;
    }
}

fn wait_line(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"wait","arguments":{{"ms":{WAIT_MS}}}}}}}"#
    )
}

/// Idle over stdio, then `n` calls in flight (when `calls`).
fn stdio_figures(
    server: &ServerCmd,
    n: usize,
    calls: bool,
    ticks: f64,
) -> Result<(u64, Option<u64>)> {
    let (mut conn, _) = Stdio2::start(server, &[], Version::V2025_11_25, false)?;
    let pid = conn.child.id();
    let idle = settled_rss(pid, ticks)?;
    if !calls {
        let _ = conn.child.kill();
        let _ = conn.child.wait();
        return Ok((idle, None));
    }
    // A reader thread takes the answers, noting whether any came before the measurement.
    let (tx, rx) = mpsc::channel::<Result<usize, String>>();
    let mut input = conn.input;
    let reader = thread::spawn(move || {
        let mut line = String::new();
        loop {
            line.clear();
            match input.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let checked = check_wait_answer(line.trim_end());
            if tx.send(checked).is_err() {
                return;
            }
        }
    });
    let t = Instant::now();
    for i in 0..n {
        conn.out.write_all(wait_line(1_000 + i).as_bytes())?;
        conn.out.write_all(b"\n")?;
    }
    conn.out.flush()?;
    let held = settled_rss(pid, ticks)?;
    let measured_at = t.elapsed();
    if let Ok(early) = rx.try_recv() {
        let _ = conn.child.kill();
        return Err(format!(
            "a call was answered before all {n} were in flight ({early:?}, after {measured_at:?})"
        )
        .into());
    }
    let mut answered = vec![false; n];
    let deadline = Instant::now() + Duration::from_millis(WAIT_MS) + Duration::from_secs(60);
    for _ in 0..n {
        let left = deadline.saturating_duration_since(Instant::now());
        let id = rx
            .recv_timeout(left)
            .map_err(|_| format!("not every call in flight was answered ({n} sent)"))??;
        let slot = id
            .checked_sub(1_000)
            .and_then(|k| answered.get_mut(k))
            .ok_or_else(|| format!("an answer to id {id}, not one of ours"))?;
        if std::mem::replace(slot, true) {
            return Err(format!("id {id} answered twice").into());
        }
    }
    drop(conn.out);
    let _ = conn.child.kill();
    let _ = conn.child.wait();
    let _ = reader.join();
    Ok((idle, Some(held)))
}

/// The id of a right answer to a `wait` call (its text is the milliseconds it waited).
fn check_wait_answer(line: &str) -> Result<usize, String> {
    let v: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("not JSON ({e}): {line}"))?;
    let id = v["id"]
        .as_u64()
        .ok_or_else(|| format!("no numeric id: {line}"))?;
    let result = &v["result"];
    let text = result["content"][0]["text"].as_str();
    if result["isError"] == true || text.and_then(|t| t.parse::<u64>().ok()) != Some(WAIT_MS) {
        return Err(format!("a wrong answer: {line}"));
    }
    usize::try_from(id).map_err(|e| e.to_string())
}

/// Idle over HTTP (session mode), then with `n` sessions opened and left (when `sessions`).
fn http_figures(
    server: &ServerCmd,
    n: usize,
    sessions: bool,
    ticks: f64,
) -> Result<(u64, Option<u64>)> {
    let addr: SocketAddr = format!("127.0.0.1:{}", free_port()?).parse()?;
    let mut child = server.spawn(&["--http".to_owned(), addr.to_string()])?;
    let pid = child.id();
    let t = Instant::now();
    while TcpStream::connect(addr).is_err() {
        if t.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            return Err(format!("{} did not listen on {addr}", server.label).into());
        }
        thread::sleep(Duration::from_millis(2));
    }
    let outcome = (|| -> Result<(u64, Option<u64>)> {
        let idle = settled_rss(pid, ticks)?;
        if !sessions {
            return Ok((idle, None));
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (first, last) = runtime.block_on(open_sessions(addr, n))?;
        let held = settled_rss(pid, ticks)?;
        // The sessions are still there: the first and the last answer a ping.
        runtime.block_on(async {
            for session in [first, last] {
                let mut conn = Conn::open(addr, V2025_11_25, None).await?;
                conn.session = Some(session.clone());
                let mut reply = conn
                    .post(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#, None)
                    .await?;
                let status = reply.status;
                let answer = reply.next().await?.unwrap_or_default();
                if status != 200 || !answer.contains("\"result\"") {
                    return Err(format!(
                        "session {session} is gone after {n} were opened: HTTP {status} {answer}"
                    )
                    .into());
                }
            }
            Ok::<_, super::Error>(())
        })?;
        Ok((idle, Some(held)))
    })();
    let _ = child.kill();
    let _ = child.wait();
    outcome
}

/// Opens `n` sessions on [`SESSION_CONNS`] connections; returns the first and the last.
async fn open_sessions(addr: SocketAddr, n: usize) -> Result<(String, String)> {
    let mut tasks = Vec::new();
    for c in 0..SESSION_CONNS {
        tasks.push(tokio::spawn(async move {
            let mut conn = Conn::open(addr, V2025_11_25, None).await?;
            let mut ids = Vec::new();
            for i in (c..n).step_by(SESSION_CONNS) {
                conn.session = None;
                let reply = conn
                    .post(initialize_line(i as u64, false).as_bytes(), None)
                    .await?;
                let session = reply.session.clone();
                let status = reply.finish().await?;
                let session = session
                    .filter(|_| status == 200)
                    .ok_or_else(|| format!("initialize {i}: HTTP {status}, no session"))?;
                conn.session = Some(session.clone());
                let status = conn
                    .post(INITIALIZED.as_bytes(), None)
                    .await?
                    .finish()
                    .await?;
                if status != 202 && status != 200 {
                    return Err(format!("notifications/initialized: HTTP {status}").into());
                }
                ids.push((i, session));
            }
            Ok::<_, super::Error>(ids)
        }));
    }
    let mut all = Vec::with_capacity(n);
    for task in tasks {
        all.extend(task.await??);
    }
    all.sort_unstable_by_key(|(i, _)| *i);
    let first = all.first().ok_or("no session")?.1.clone();
    let last = all.last().ok_or("no session")?.1.clone();
    Ok((first, last))
}

pub(crate) fn memory_leg(
    opts: &Options,
    ticks: f64,
    servers: &[ServerCmd],
    out: &mut String,
) -> Result<()> {
    let n = opts.task_n;
    let mut cells: BTreeMap<String, Vec<MemRun>> = BTreeMap::new();
    for rep in 0..opts.repeat {
        for k in 0..servers.len() {
            let server = &servers[(k + rep) % servers.len()];
            let holds = server.label != "floor";
            eprint!(
                "\r\x1b[Kmemory run {}/{}: {} …",
                rep + 1,
                opts.repeat,
                server.label
            );
            let (idle_stdio, in_flight) = stdio_figures(server, n, holds, ticks)
                .map_err(|e| format!("{} calls in flight: {e}", server.label))?;
            let (idle_http, sessions) = http_figures(server, n, holds, ticks)
                .map_err(|e| format!("{} sessions: {e}", server.label))?;
            cells.entry(server.label.clone()).or_default().push(MemRun {
                idle_stdio,
                in_flight,
                idle_http,
                sessions,
            });
        }
    }
    eprintln!("\r\x1b[Kmemory: done");
    let _ = writeln!(
        out,
        "### Memory: resident set idle, with {} idle sessions, with {} calls in flight (median of {} runs; per-item range in brackets)\n",
        thousands(n as f64),
        thousands(n as f64),
        opts.repeat
    );
    let _ = writeln!(
        out,
        "| server | idle, stdio MiB | {} calls in flight MiB | per call KiB | idle, HTTP MiB | {} sessions MiB | per session KiB |",
        thousands(n as f64),
        thousands(n as f64)
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    let mut per: BTreeMap<&str, (Option<f64>, Option<f64>, f64)> = BTreeMap::new();
    for s in servers {
        let Some(runs) = cells.get(&s.label) else {
            continue;
        };
        let med = |f: &dyn Fn(&MemRun) -> Option<f64>| -> Option<(f64, f64, f64)> {
            let mut v: Vec<f64> = runs.iter().filter_map(f).collect();
            if v.is_empty() {
                return None;
            }
            let lo = v.iter().copied().fold(f64::MAX, f64::min);
            let hi = v.iter().copied().fold(0.0, f64::max);
            Some((median_f(&mut v), lo, hi))
        };
        let mib = |kib: f64| format!("{:.1}", kib / 1024.0);
        let idle_stdio = med(&|r| Some(r.idle_stdio as f64)).map_or(0.0, |m| m.0);
        let idle_http = med(&|r| Some(r.idle_http as f64)).map_or(0.0, |m| m.0);
        let held = med(&|r| r.in_flight.map(|h| h as f64));
        let per_call = med(&|r| {
            r.in_flight
                .map(|h| (h as f64 - r.idle_stdio as f64) / n as f64)
        });
        let with_sessions = med(&|r| r.sessions.map(|h| h as f64));
        let per_session = med(&|r| {
            r.sessions
                .map(|h| (h as f64 - r.idle_http as f64) / n as f64)
        });
        let spread = |m: Option<(f64, f64, f64)>| {
            m.map_or("—".to_owned(), |(m, lo, hi)| {
                if runs.len() > 1 {
                    format!("{m:.2} ({lo:.2}–{hi:.2})")
                } else {
                    format!("{m:.2}")
                }
            })
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            s.label,
            mib(idle_stdio),
            held.map_or("—".to_owned(), |h| mib(h.0)),
            spread(per_call),
            mib(idle_http),
            with_sessions.map_or("—".to_owned(), |h| mib(h.0)),
            spread(per_session),
        );
        per.insert(
            &s.label,
            (per_call.map(|m| m.0), per_session.map(|m| m.0), idle_stdio),
        );
    }
    out.push('\n');
    if let Some(&(call, session, idle)) = per.get("mcp-tool") {
        let _ = writeln!(
            out,
            "**Ratios** (mcp-tool ÷ other: at or below 1 = mcp-tool holds no more)\n"
        );
        let _ = writeln!(
            out,
            "| pair | idle, stdio | per call in flight | per idle session |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|");
        for (label, &(c, s, i)) in &per {
            if *label == "mcp-tool" {
                continue;
            }
            let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
                _ => "—".to_owned(),
            };
            let _ = writeln!(
                out,
                "| mcp-tool vs {label} | {:.2}× | {} | {} |",
                idle / i,
                ratio(call, c),
                ratio(session, s)
            );
        }
        out.push('\n');
    }
    Ok(())
}
