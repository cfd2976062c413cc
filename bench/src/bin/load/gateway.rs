//! The `gateway` leg: `add` called directly on `bench-server` over stdio, and through a
//! gateway — a second `bench-server` with `--mount` naming the first as `remote` (stdio to
//! stdio, protocol 2025-11-25 on both hops) — at W=1 (the latency a gateway adds per call)
//! and W=64 (what it sustains). The CPU and RSS columns are the gateway process's alone.

use std::fmt::Write as _;

use super::process::ServerCmd;
use super::stdio::stdio_run;
use super::tables::{summarize, table_header, table_row};
use super::wire::{Tool, Version};
use super::{Options, Result, Run, server_cmd};

pub(crate) fn gateway_leg(opts: &Options, ticks: f64, out: &mut String) -> Result<()> {
    let direct = server_cmd(&opts.dir, "mcp-tool");
    let mounts =
        std::env::temp_dir().join(format!("mcp-tool-bench-mounts-{}.json", std::process::id()));
    let program = direct.program.to_string_lossy().into_owned();
    std::fs::write(
        &mounts,
        serde_json::json!([{ "type": "mcp", "server_label": "remote", "command": [program] }])
            .to_string(),
    )?;
    let gateway = ServerCmd {
        label: "gateway".into(),
        program: direct.program.clone(),
        args: vec!["--mount".into(), mounts.to_string_lossy().into_owned()],
        ..ServerCmd::default()
    };
    let _ = writeln!(
        out,
        "\n### Gateway: `add` direct vs through a gateway (stdio → stdio), 2025-11-25\n"
    );
    table_header(out, "path");
    let mut summary = String::new();
    for window in [1, 64] {
        let (mut mine, mut via) = (Vec::new(), Vec::new());
        // Alternated, so drift on a shared machine falls on both.
        for _ in 0..opts.repeat {
            mine.push(stdio_run(
                &direct,
                &[],
                Tool::Add,
                Version::V2025_11_25,
                opts.n,
                window,
                ticks,
            )?);
            via.push(stdio_run(
                &gateway,
                &[],
                Tool::MountedAdd,
                Version::V2025_11_25,
                opts.n,
                window,
                ticks,
            )?);
        }
        table_row(out, &format!("direct W={window}"), &mine);
        table_row(out, &format!("gateway W={window}"), &via);
        let (m, _, _): (Run, f64, f64) = summarize(&mine);
        let (g, _, _) = summarize(&via);
        let _ = writeln!(
            summary,
            "- W={window}: the gateway adds {:.0} µs at p50 ({:.0} → {:.0}) and {:.0} µs at p99; \
             calls/s through it ÷ direct = {:.2}",
            g.p50_us - m.p50_us,
            m.p50_us,
            g.p50_us,
            g.p99_us - m.p99_us,
            g.calls_per_s / m.calls_per_s
        );
    }
    let _ = std::fs::remove_file(&mounts);
    let _ = writeln!(out, "\n{summary}");
    Ok(())
}
