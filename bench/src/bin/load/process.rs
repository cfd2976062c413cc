//! The server process: its CPU time, peak RSS, start and end.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use super::Result;

/// The process's CPU time so far, in seconds: the sum of its threads' run time from
/// `/proc/<pid>/task/*/schedstat` (nanoseconds), or, when a thread counted in `before` has
/// gone since (its time would be lost), user + system time from `/proc/<pid>/stat`
/// (clock ticks).
#[derive(Debug, Clone, Default)]
pub(crate) struct CpuSample {
    threads: BTreeMap<u32, u64>,
    stat_seconds: f64,
}

impl CpuSample {
    pub(crate) fn take(pid: u32, ticks: f64) -> Result<CpuSample> {
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
    pub(crate) fn since(&self, before: &CpuSample) -> f64 {
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
pub(crate) fn cpu_seconds(pid: u32, ticks: f64) -> Result<f64> {
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
pub(crate) fn peak_rss_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .ok_or("no VmHWM")?;
    Ok(line.split_whitespace().nth(1).ok_or("bad VmHWM")?.parse()?)
}

pub(crate) fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// The CPU every server is started on (`--pin`), if any.
static SERVER_CPU: OnceLock<usize> = OnceLock::new();

/// Pins this process to CPU `driver` (the threads it starts from now on inherit it) and every
/// server started from now on to CPU `server`, with `taskset`: on a small machine the driver
/// and the server then never take each other's core.
pub(crate) fn pin(server: usize, driver: usize) -> Result<()> {
    let pid = std::process::id().to_string();
    let status = Command::new("taskset")
        .args(["-p", "-c", &driver.to_string(), &pid])
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("--pin needs taskset (util-linux): {e}"))?;
    if !status.success() {
        return Err(format!("taskset could not pin the driver to CPU {driver}").into());
    }
    SERVER_CPU
        .set(server)
        .map_err(|_| "the servers' CPU is already set")?;
    Ok(())
}

/// A server command: a sibling binary, its arguments and environment, and the bearer token
/// its HTTP clients send (when it requires one).
#[derive(Debug, Clone, Default)]
pub(crate) struct ServerCmd {
    pub(crate) label: String,
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) bearer: Option<String>,
}

impl ServerCmd {
    /// Starts the server (under `taskset -c CPU` when pinned: taskset executes the server in
    /// its own place, so the child's pid is the server's).
    pub(crate) fn spawn(&self, extra: &[String]) -> Result<Child> {
        let mut command = match SERVER_CPU.get() {
            Some(cpu) => {
                let mut command = Command::new("taskset");
                command.arg("-c").arg(cpu.to_string()).arg(&self.program);
                command
            }
            None => Command::new(&self.program),
        };
        command
            .args(&self.args)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .env("RUST_LOG", "error")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.program.display()).into())
    }
}

/// Waits for a child to exit, killing it after `grace`.
pub(crate) fn reap(mut child: Child, grace: Duration) {
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

pub(crate) fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at] as f64 / 1000.0
}
