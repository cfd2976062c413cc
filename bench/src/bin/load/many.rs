//! 1000 generated tools (`many-tools`): start-up, `tools/list`, cost per call; the same for
//! rmcp 3.11 with the same tools (`rmcp-many`).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use super::process::{CpuSample, ServerCmd, peak_rss_kib, percentile, reap};
use super::stdio::Stdio2;
use super::tables::median_f;
use super::wire::{Calls, Tool, Version};
use super::{Result, Run};

#[derive(Debug, Default, Clone)]
pub(crate) struct Many {
    pub(crate) start_ms: f64,
    pub(crate) list_ms: f64,
    pub(crate) list_bytes: usize,
    pub(crate) inproc: String,
    pub(crate) calls: Vec<(String, Run)>,
    /// rmcp 3.11 with the same 1000 tools (`rmcp-many`), when built: start, `tools/list`.
    pub(crate) rmcp: Option<(f64, f64, usize)>,
}

/// Start-up (median of 5) and `tools/list` (median of 21) of a server with the 1000 tools,
/// over stdio: (start ms, list ms, list bytes).
fn start_and_list(server: &ServerCmd) -> Result<(f64, f64, usize)> {
    let mut starts = Vec::new();
    let mut lists = Vec::new();
    let mut bytes = 0;
    for round in 0..5 {
        let (mut conn, started) = Stdio2::start(server, &[], Version::V2025_11_25, false)?;
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
                    return Err(format!(
                        "{}: tools/list listed {tools} tools, not 1000",
                        server.label
                    )
                    .into());
                }
                bytes = page.len();
            }
        }
        drop(conn.out);
        reap(conn.child, Duration::from_secs(15));
    }
    Ok((median_f(&mut starts), median_f(&mut lists), bytes))
}

/// The `many-tools` leg: start-up and `tools/list` over stdio, in-process figures, and the cost
/// per call of the same tool with a catalog of 1 and of 1000.
pub(crate) fn many_leg(dir: &Path, n: usize, ticks: f64) -> Result<Many> {
    let program = dir.join("many-tools");
    let all = ServerCmd {
        label: "1000 tools".into(),
        program: program.clone(),
        ..ServerCmd::default()
    };
    let one = ServerCmd {
        label: "1 tool".into(),
        program: program.clone(),
        args: vec!["--only".into(), "tool_0500".into()],
        ..ServerCmd::default()
    };
    let mut many = Many::default();
    (many.start_ms, many.list_ms, many.list_bytes) = start_and_list(&all)?;
    let rmcp = ServerCmd {
        label: "rmcp 1000 tools".into(),
        program: dir.join("rmcp-many"),
        ..ServerCmd::default()
    };
    if rmcp.program.exists() {
        many.rmcp = Some(start_and_list(&rmcp)?);
    }
    let measured = Command::new(&program).arg("--measure").output()?;
    many.inproc = String::from_utf8_lossy(&measured.stdout).trim().to_owned();
    // Cost per call of tool_0500 with 1 and with 1000 tools in the catalog.
    for (label, server) in [("1 tool", &one), ("1000 tools", &all)] {
        for window in [64, 1] {
            let run = many_run(server, n, window, ticks)?;
            many.calls.push((format!("{label}, W={window}"), run));
        }
    }
    if many.rmcp.is_some() {
        for window in [64, 1] {
            let run = many_run(&rmcp, n, window, ticks)?;
            many.calls
                .push((format!("rmcp, 1000 tools, W={window}"), run));
        }
    }
    Ok(many)
}

/// `tool_0500(a, b) = a + b + 500`: the `add` check does not fit, so this run checks by hand.
pub(crate) fn many_run(server: &ServerCmd, n: usize, window: usize, ticks: f64) -> Result<Run> {
    // Arguments chosen so that the sum is the `add` tool's expected text for call i:
    // a = i - 500 (may be negative), b = i + 1, a + b + 500 = 2i + 1.
    let line = |id: u64, i: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"tool_0500","arguments":{{"a":{},"b":{}}}}}}}"#,
            i as i64 - 500,
            i + 1
        )
    };
    let (conn, started) = Stdio2::start(server, &[], Version::V2025_11_25, false)?;
    let pid = conn.child.id();
    let warm = Calls {
        tool: Tool::Add,
        version: Version::V2025_11_25,
        first_id: 1_000,
        n: (n / 10).clamp(100, 2000),
    };
    let (parts, _, _) = conn.drive(
        (0..warm.n).map(|i| line(1_000 + i as u64, i)).collect(),
        window,
        warm,
    )?;
    let conn = parts.rejoin();
    let cpu_before = CpuSample::take(pid, ticks)?;
    let (parts, mut latencies, elapsed) = conn.drive(
        (0..n).map(|i| line(1_000_000 + i as u64, i)).collect(),
        window,
        Calls {
            first_id: 1_000_000,
            n,
            ..warm
        },
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
