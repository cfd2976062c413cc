//! `load`: the benchmark driver. It starts each server as a child process, drives it with
//! `tools/call` requests and prints markdown tables of the results, side by side.
//!
//! ```text
//! load all      [options]   stdio, HTTP, 1000-tool, versions, tasks and memory legs (what
//!                           BENCHMARKS.md shows)
//! load stdio    [options]   stdio: add and create_user, W=64 and W=1, every server
//! load http     [options]   Streamable HTTP: M clients, sessionless (JSON) and sessions (JSON
//!                           and SSE answers), every server with the floor (`floor --http`);
//!                           `--addr ADDR [--pid PID] [--mode sessionless|json|sse]`: a server
//!                           already listening there, `--tool` (default `add`) only
//! load many     [options]   1000 generated tools: start, tools/list, cost per call
//! load versions [options]   MCP 2026-07-28 beside 2025-11-25, stdio and HTTP: add and
//!                           create_user, and confirm_add's round trips (one question each)
//! load tasks    [options]   mcp-tool's tasks: 10 000 created and completed over stdio, in
//!                           memory and in Redis (a redis-server of its own), 2025-11-25 and
//!                           2026-07-28, W=64 and W=1 (`--window W`: that one only)
//! load memory   [options]   resident set: idle (stdio, HTTP), with N idle 2025-11-25 HTTP
//!                           sessions, with N calls in flight (N = 10 000; --n N)
//! load diag     [options]   mcp-tool only: `add` as a sync fn and as an `async fn`
//! load gateway  [options]   `add` direct vs through a gateway (`--mount`, stdio to stdio):
//!                           added latency at W=1, calls/s at W=64
//! load oauth   [options]   OAuth: RS256 JWTs from oidc-provider verified in process (fresh
//!                           and already verified), and HTTP `create_user` with auth off, a
//!                           static token and OAuth in the same run
//! load custom -- CMD ARGS   drive any stdio server (`--tool add|create_user|add_async|
//!                           confirm_add`, `--window W`, `--protocol-version 2025|2026`;
//!                           default `add` at W=64 and W=1 in 2025-11-25), e.g. under perf
//!
//! options: --n N (calls or tasks per run, default 20000 calls, 10000 tasks)   --repeat R (runs
//!          per cell, default 3; every leg but `many`)
//!          --clients M (HTTP clients, default 16) --quick (N=2000, R=1)
//!          --servers a,b,… (from mcp-tool, rmcp-fast, rmcp-doc, floor, or LABEL=PATH for
//!                           another build of bench-server, such as an earlier commit's)
//!          --no-build (do not build the servers first)
//!          --pin (the servers on CPU 0, this driver on CPU 1, with `taskset`)
//! ```
//!
//! The servers are the sibling binaries of this one (the same target directory). Started by
//! `cargo run --release -p mcp-tool-bench --bin load -- all`, it first builds them (`cargo
//! build -p mcp-tool-bench --bins`, same profile and target directory); started directly,
//! build them first with `cargo build --release -p mcp-tool-bench`.
//!
//! Every response is checked: its id is one of ours and answered once, `add` gives the sum as
//! text, `create_user` gives back the email it was sent in `structuredContent` and no error;
//! in 2026-07-28 the result's `resultType` is `complete` (or, for `confirm_add`'s first call,
//! `input_required` with one `elicitation/create` and a `requestState`). Over HTTP the measured
//! calls' answers are checked for their outcome only (the id, a result, no `isError`), the
//! warm-up's in full: the full check costs the driver about what a fast server spends.
//! The server's CPU time is read from `/proc/<pid>/stat` (user + system, every thread) after
//! the warm-up and after the last response; its peak RSS is `VmHWM` from `/proc/<pid>/status`
//! just before its input is closed.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;

use http::{HttpMode, http_run, http_run_at};
use many::many_leg;
use memory::memory_leg;
use process::{ServerCmd, clock_ticks, pin};
use stdio::stdio_run;
use tables::{ratio_rows, table_header, table_header_short, table_row, table_row_short};
use tasks::tasks_leg;
use versions::versions_leg;
use wire::{Tool, Version};

type Error = Box<dyn std::error::Error + Send + Sync>;
type Result<T, E = Error> = std::result::Result<T, E>;

// ---------------------------------------------------------------------------------------------
// What is measured

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

mod gateway;
mod http;
mod many;
mod memory;
mod oauth;
mod process;
mod stdio;
mod tables;
mod tasks;
mod versions;
mod wire;

// ---------------------------------------------------------------------------------------------
// Legs

struct Options {
    n: usize,
    /// Tasks per run (the `tasks` leg).
    task_n: usize,
    repeat: usize,
    clients: usize,
    servers: Vec<String>,
    dir: PathBuf,
    /// `custom`: the tool to call and the one window to use (both windows when `None`).
    tool: Tool,
    window: Option<usize>,
    version: Version,
    /// `http --addr`: a server already listening, its process and the form it answers in.
    addr: Option<SocketAddr>,
    pid: Option<u32>,
    mode: HttpMode,
}

const SERVERS: [&str; 4] = ["mcp-tool", "rmcp-fast", "rmcp-doc", "floor"];

/// A server by label: a sibling binary, or `LABEL=PATH` for any binary that serves the
/// benchmark's tools as `bench-server` does (a build of an earlier commit, say).
fn server_cmd(dir: &Path, label: &str) -> ServerCmd {
    if let Some((label, path)) = label.split_once('=') {
        return ServerCmd {
            label: label.to_owned(),
            program: PathBuf::from(path),
            ..ServerCmd::default()
        };
    }
    let bin = match label {
        "mcp-tool" => "bench-server",
        other => other,
    };
    ServerCmd {
        label: label.to_owned(),
        program: dir.join(bin),
        ..ServerCmd::default()
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
                let run = stdio_run(
                    server,
                    &[],
                    tool,
                    Version::V2025_11_25,
                    opts.n,
                    window,
                    ticks,
                )
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
        "**Ratios** (throughput: mcp-tool ÷ other, in brackets the lowest and highest ratio of two runs of the same repetition; p50 and CPU/call: other ÷ mcp-tool; above 1 = mcp-tool better)\n"
    );
    let _ = writeln!(out, "| scenario | pair | calls/s | p50 | CPU/call |");
    let _ = writeln!(out, "|---|---|---:|---:|---:|");
    for ((tool, window), by_server) in &cells {
        ratio_rows(out, &format!("`{}` W={window}", tool.name()), by_server);
    }
    out.push('\n');
    Ok(())
}

/// The HTTP leg's modes: sessionless (JSON), and sessions both ways, so that each server is
/// compared with another answering in the same form (rmcp's sessions answer only SSE).
const HTTP_MODES: [HttpMode; 3] = [
    HttpMode::Sessionless,
    HttpMode::SessionJson,
    HttpMode::SessionSse,
];

fn http_leg(opts: &Options, ticks: f64, servers: &[ServerCmd], out: &mut String) -> Result<()> {
    let mut cells: BTreeMap<(HttpMode, Tool), BTreeMap<String, Vec<Run>>> = BTreeMap::new();
    for rep in 0..opts.repeat {
        for mode in HTTP_MODES {
            for tool in [Tool::Add, Tool::CreateUser] {
                let serving: Vec<&ServerCmd> =
                    servers.iter().filter(|s| mode.served_by(s)).collect();
                // Rotate the order each repetition, as the stdio leg does.
                for k in 0..serving.len() {
                    let server = serving[(k + rep) % serving.len()];
                    eprint!(
                        "\r\x1b[Khttp run {}/{}: {} {} {} …",
                        rep + 1,
                        opts.repeat,
                        server.label,
                        mode.name(),
                        tool.name()
                    );
                    let run = http_run(
                        server,
                        mode,
                        tool,
                        Version::V2025_11_25,
                        opts.n,
                        opts.clients,
                        ticks,
                    )
                    .map_err(|e| {
                        format!("{} HTTP {} {}: {e}", server.label, mode.name(), tool.name())
                    })?;
                    cells
                        .entry((mode, tool))
                        .or_default()
                        .entry(server.label.clone())
                        .or_default()
                        .push(run);
                }
            }
        }
    }
    eprintln!("\r\x1b[Khttp: done");
    let _ = writeln!(
        out,
        "### Streamable HTTP: N = {} calls, M = {} keep-alive clients over loopback, median of {} runs (calls/s range in brackets)\n",
        opts.n, opts.clients, opts.repeat
    );
    for ((mode, tool), by_server) in &cells {
        let _ = writeln!(out, "**`{}`, {}**\n", tool.name(), mode.name());
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
        "**Ratios** (throughput: mcp-tool ÷ other, in brackets the lowest and highest ratio of two runs of the same repetition; p50 and CPU/call: other ÷ mcp-tool; above 1 = mcp-tool better)\n"
    );
    let _ = writeln!(out, "| scenario | pair | calls/s | p50 | CPU/call |");
    let _ = writeln!(out, "|---|---|---:|---:|---:|");
    for ((mode, tool), by_server) in &cells {
        ratio_rows(
            out,
            &format!("`{}` {}", tool.name(), mode.name()),
            by_server,
        );
    }
    out.push('\n');
    Ok(())
}

/// `http --addr`: `--repeat` runs against a server already listening, one row each and their
/// median (the server's CPU time when `--pid` names its process).
fn http_at_leg(opts: &Options, addr: SocketAddr, ticks: f64, out: &mut String) -> Result<()> {
    let mut runs = Vec::new();
    for rep in 0..opts.repeat {
        eprint!(
            "\r\x1b[Khttp run {}/{} at {addr}: {} …",
            rep + 1,
            opts.repeat,
            opts.tool.name()
        );
        let run = http_run_at(
            addr,
            opts.pid,
            None,
            opts.mode,
            opts.tool,
            opts.version,
            opts.n,
            opts.clients,
            ticks,
        )
        .map_err(|e| format!("{addr} HTTP {} {}: {e}", opts.mode.name(), opts.tool.name()))?;
        runs.push(run);
    }
    eprintln!("\r\x1b[Khttp: done");
    let _ = writeln!(
        out,
        "### Streamable HTTP at {addr}: `{}`, {}, N = {} calls, M = {} keep-alive clients\n",
        opts.tool.name(),
        opts.mode.name(),
        opts.n,
        opts.clients
    );
    table_header_short(out);
    for (k, run) in runs.iter().enumerate() {
        table_row_short(out, &format!("run {}", k + 1), std::slice::from_ref(run));
    }
    table_row_short(out, "median", &runs);
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
    if let Some((start, list, bytes)) = many.rmcp {
        let _ = writeln!(
            out,
            "- rmcp 3.11 with the same 1000 tools (`rmcp-many`, dynamic routes of a stored `ToolRouter`): start **{start:.1} ms**, `tools/list` ({} KiB) **{list:.2} ms**",
            bytes / 1024
        );
    }
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
        ..ServerCmd::default()
    };
    table_header(out, "run");
    let windows = opts.window.map_or(vec![64, 1], |w| vec![w]);
    for window in windows {
        let mut runs = Vec::new();
        for _ in 0..opts.repeat {
            runs.push(stdio_run(
                &server,
                &[],
                opts.tool,
                opts.version,
                opts.n,
                window,
                ticks,
            )?);
        }
        table_row(out, &format!("{} W={window}", opts.tool.name()), &runs);
    }
    Ok(())
}

fn machine(pinned: bool) -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map_or_else(|| "?".to_owned(), |s| s.trim().to_owned());
    // The machine's, not this process's (one CPU when pinned).
    let cores = match cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count()
    {
        0 => thread::available_parallelism().map_or(0, usize::from),
        n => n,
    };
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
    let pinned = if pinned {
        ", the servers pinned to CPU 0 and the driver to CPU 1"
    } else {
        ""
    };
    format!("{cores} cores, {cpu}, {rustc}, load average at start {load}{pinned}")
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
        "usage: load <all|stdio|http|many|versions|tasks|memory|diag|gateway|oauth|custom -- CMD ARGS> [--n N] [--repeat R] [--clients M] [--servers a,b] [--tool T] [--window W] [--protocol-version 2025|2026] [--addr ADDR] [--pid PID] [--mode sessionless|json|sse] [--quick] [--no-build] [--pin]"
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
        task_n: 10_000,
        repeat: 3,
        clients: 16,
        servers: SERVERS.iter().map(|s| (*s).to_owned()).collect(),
        dir,
        tool: Tool::Add,
        window: None,
        version: Version::V2025_11_25,
        addr: None,
        pid: None,
        mode: HttpMode::Sessionless,
    };
    let mut command = Vec::new();
    let mut build = true;
    let mut pinned = false;
    while let Some(a) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .unwrap_or_else(|| panic!("{name} needs a value"))
        };
        match a.as_str() {
            "--n" => {
                opts.n = value("--n").parse()?;
                opts.task_n = opts.n;
            }
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
                    "confirm_add" => Tool::ConfirmAdd,
                    _ => usage(),
                };
            }
            "--protocol-version" => {
                opts.version = match value("--protocol-version").as_str() {
                    "2025" | "2025-11-25" => Version::V2025_11_25,
                    "2026" | "2026-07-28" => Version::V2026_07_28,
                    _ => usage(),
                };
            }
            "--window" => opts.window = Some(value("--window").parse::<usize>()?.max(1)),
            "--no-build" => build = false,
            "--pin" => pinned = true,
            "--addr" => opts.addr = Some(value("--addr").parse()?),
            "--pid" => opts.pid = Some(value("--pid").parse()?),
            "--mode" => {
                opts.mode = match value("--mode").as_str() {
                    "sessionless" => HttpMode::Sessionless,
                    "json" => HttpMode::SessionJson,
                    "sse" => HttpMode::SessionSse,
                    _ => usage(),
                };
            }
            "--quick" => {
                opts.n = 2_000;
                opts.task_n = 2_000;
                opts.repeat = 1;
            }
            "--" => command.extend(args.by_ref()),
            _ => usage(),
        }
    }
    if pinned {
        // Before any thread starts: the runtimes' threads inherit this process's CPU.
        pin(0, 1)?;
    }
    if build && leg != "custom" && opts.addr.is_none() {
        build_siblings(&opts.dir)?;
    }
    let ticks = clock_ticks();
    let servers: Vec<ServerCmd> = opts
        .servers
        .iter()
        .map(|s| server_cmd(&opts.dir, s))
        .collect();
    for s in servers
        .iter()
        .filter(|_| leg != "custom" && opts.addr.is_none())
    {
        if !s.program.exists() {
            return Err(format!(
                "{} not found: build the package first (cargo build --release -p mcp-tool-bench)",
                s.program.display()
            )
            .into());
        }
    }
    let mut out = String::new();
    let _ = writeln!(out, "Machine: {}\n", machine(pinned));
    match leg.as_str() {
        "all" => {
            stdio_leg(&opts, ticks, &servers, &STDIO_SCENARIOS, &mut out)?;
            http_leg(&opts, ticks, &servers, &mut out)?;
            many_section(&opts, ticks, &mut out)?;
            versions_leg(&opts, ticks, &servers, &mut out)?;
            tasks_leg(&opts, ticks, &servers, &mut out)?;
            memory_leg(&opts, ticks, &servers, &mut out)?;
        }
        "memory" => memory_leg(&opts, ticks, &servers, &mut out)?,
        "tasks" => tasks_leg(&opts, ticks, &servers, &mut out)?,
        "versions" => versions_leg(&opts, ticks, &servers, &mut out)?,
        "stdio" => stdio_leg(&opts, ticks, &servers, &STDIO_SCENARIOS, &mut out)?,
        "diag" => {
            let ours = [server_cmd(&opts.dir, "mcp-tool")];
            stdio_leg(&opts, ticks, &ours, &DIAG_SCENARIOS, &mut out)?;
        }
        "http" => match opts.addr {
            Some(addr) => http_at_leg(&opts, addr, ticks, &mut out)?,
            None => http_leg(&opts, ticks, &servers, &mut out)?,
        },
        "many" => many_section(&opts, ticks, &mut out)?,
        "custom" => custom_leg(&opts, ticks, &command, &mut out)?,
        "gateway" => gateway::gateway_leg(&opts, ticks, &mut out)?,
        "oauth" => oauth::oauth_leg(&opts, ticks, &mut out)?,
        _ => usage(),
    }
    print!("{out}");
    Ok(())
}
