//! Driving a server over stdio: a writer thread gated by credits, the reader checking.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Child, ChildStdin, ChildStdout};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use super::process::{CpuSample, ServerCmd, peak_rss_kib, percentile, reap};
use super::wire::{
    Calls, INITIALIZED, Step, Tool, V2026_07_28, Version, discover_line, initialize_line,
};
use super::{Result, Run};

/// A stdio connection to a child server.
pub(crate) struct Stdio2 {
    pub(crate) child: Child,
    pub(crate) out: BufWriter<ChildStdin>,
    pub(crate) input: BufReader<ChildStdout>,
    pub(crate) line: String,
}

/// What the reader tells the writer.
pub(crate) enum Feed {
    /// One more call may be sent.
    Credit,
    /// A line to send now (an answer to the server, a retry).
    Line(String),
}

impl Stdio2 {
    /// Starts the server and opens the conversation: `initialize` (declaring elicitation when
    /// `elicits`) and `notifications/initialized` in 2025-11-25, `server/discover` in
    /// 2026-07-28; returns the connection and the start-up time (to the first answer).
    pub(crate) fn start(
        server: &ServerCmd,
        extra: &[String],
        version: Version,
        elicits: bool,
    ) -> Result<(Stdio2, Duration)> {
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
        match version {
            Version::V2025_11_25 => {
                conn.send(&initialize_line(0, elicits))?;
                let answer = conn.recv()?;
                let started = t.elapsed();
                if !answer.contains("\"protocolVersion\"") {
                    return Err(format!("{}: bad initialize answer: {answer}", server.label).into());
                }
                conn.send(INITIALIZED)?;
                Ok((conn, started))
            }
            Version::V2026_07_28 => {
                conn.send(&discover_line(0))?;
                let answer = conn.recv()?;
                let started = t.elapsed();
                if !answer.contains("\"supportedVersions\"") || !answer.contains(V2026_07_28) {
                    return Err(
                        format!("{}: bad server/discover answer: {answer}", server.label).into(),
                    );
                }
                Ok((conn, started))
            }
        }
    }

    /// Lists the tools (2025-11-25) until `name` is among them: a mounted server's tools
    /// appear once the gateway has connected to it (at most 10 s).
    pub(crate) fn wait_for_tool(&mut self, name: &str) -> Result<()> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let needle = format!("\"name\":\"{name}\"");
        let mut id = 900_000_000u64;
        loop {
            id += 1;
            self.send(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#
            ))?;
            let answer = loop {
                let line = self.recv()?;
                if line.contains(&format!("\"id\":{id}")) {
                    break line;
                }
            };
            if answer.contains(&needle) {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!("`{name}` never appeared: {answer}").into());
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    pub(crate) fn send(&mut self, line: &str) -> Result<()> {
        self.out.write_all(line.as_bytes())?;
        self.out.write_all(b"\n")?;
        self.out.flush()?;
        Ok(())
    }

    pub(crate) fn recv(&mut self) -> Result<String> {
        self.line.clear();
        if self.input.read_line(&mut self.line)? == 0 {
            return Err("the server closed its output".into());
        }
        Ok(self.line.trim_end().to_owned())
    }

    /// Sends `lines` (the first requests of `calls`) with at most `window` calls unanswered,
    /// reading every message with `calls.read`: answers and retries are sent as they come, a
    /// call counts as answered when its final response is right. Returns the latencies (ns,
    /// from the first request of a call to its final response) and the elapsed time.
    pub(crate) fn drive(
        self,
        lines: Vec<String>,
        window: usize,
        calls: Calls,
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
        let (feed_tx, feed_rx) = mpsc::channel::<Feed>();
        let sent_w = sent.clone();
        let writer = spawn_writer(out, lines, window, sent_w, base, feed_rx);
        let mut seen = vec![false; n];
        let mut latencies = Vec::with_capacity(n);
        let mut failure = None;
        while latencies.len() < n {
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
            match calls.read(line.trim_end()) {
                Ok(Step::Done(i)) if !seen[i] => {
                    seen[i] = true;
                    latencies.push(now.saturating_sub(sent[i].load(Ordering::Relaxed)));
                    let _ = feed_tx.send(Feed::Credit);
                }
                Ok(Step::Done(i)) => {
                    failure = Some(format!("call {i} answered twice"));
                    break;
                }
                Ok(Step::Send(l)) => {
                    let _ = feed_tx.send(Feed::Line(l));
                }
                Ok(Step::Skip) => {}
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        let elapsed = base.elapsed();
        drop(feed_tx);
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
pub(crate) struct Stdio2Parts {
    pub(crate) child: Child,
    pub(crate) out: BufWriter<ChildStdin>,
    pub(crate) input: BufReader<ChildStdout>,
}

impl Stdio2Parts {
    pub(crate) fn rejoin(self) -> Stdio2 {
        Stdio2 {
            child: self.child,
            out: self.out,
            input: self.input,
            line: String::new(),
        }
    }
}

/// One stdio run: start, warm up, `n` calls of `tool` in `version` with `window` in flight.
pub(crate) fn stdio_run(
    server: &ServerCmd,
    extra: &[String],
    tool: Tool,
    version: Version,
    n: usize,
    window: usize,
    ticks: f64,
) -> Result<Run> {
    let (mut conn, started) = Stdio2::start(server, extra, version, tool == Tool::ConfirmAdd)?;
    if tool == Tool::MountedAdd {
        conn.wait_for_tool(tool.name())?;
    }
    let pid = conn.child.id();
    // Warm-up: a tenth of the run, at the same window.
    let warm = Calls {
        tool,
        version,
        first_id: 1_000,
        n: (n / 10).clamp(100, 2000),
    };
    let lines: Vec<String> = (0..warm.n).map(|i| warm.line(i)).collect();
    let (parts, _, _) = conn.drive(lines, window, warm)?;
    let conn = parts.rejoin();
    let calls = Calls {
        first_id: 1_000_000,
        n,
        ..warm
    };
    let lines: Vec<String> = (0..n).map(|i| calls.line(i)).collect();
    let cpu_before = CpuSample::take(pid, ticks)?;
    let (parts, mut latencies, elapsed) = conn.drive(lines, window, calls)?;
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

/// The writer thread of a windowed run: sends `lines` in order with at most `window` of them
/// unanswered (each answer feeds a `Credit`), noting when each was sent (ns since `base`) in
/// `sent`, and writes the `Line`s fed to it (answers, retries, follow-ups) as they come; ends
/// when every feeder is gone, returning the stream.
pub(crate) fn spawn_writer(
    out: BufWriter<ChildStdin>,
    lines: Vec<String>,
    window: usize,
    sent: Arc<Vec<AtomicU64>>,
    base: Instant,
    feed_rx: mpsc::Receiver<Feed>,
) -> thread::JoinHandle<std::io::Result<BufWriter<ChildStdin>>> {
    let n = lines.len();
    thread::spawn(move || {
        let mut out = out;
        let mut credits = window;
        let mut next = 0;
        let write = |out: &mut BufWriter<ChildStdin>, l: &str| -> std::io::Result<()> {
            out.write_all(l.as_bytes())?;
            out.write_all(b"\n")
        };
        loop {
            while let Ok(feed) = feed_rx.try_recv() {
                match feed {
                    Feed::Credit => credits += 1,
                    Feed::Line(l) => write(&mut out, &l)?,
                }
            }
            if credits > 0 && next < n {
                sent[next].store(base.elapsed().as_nanos() as u64, Ordering::Relaxed);
                write(&mut out, &lines[next])?;
                next += 1;
                credits -= 1;
                continue;
            }
            out.flush()?;
            match feed_rx.recv() {
                Ok(Feed::Credit) => credits += 1,
                Ok(Feed::Line(l)) => write(&mut out, &l)?,
                Err(_) => break,
            }
        }
        out.flush()?;
        Ok(out)
    })
}
