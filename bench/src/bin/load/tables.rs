//! Medians of repeats and the markdown tables.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::Run;

pub(crate) fn median_f(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

// ---------------------------------------------------------------------------------------------
// Tables

/// The runs of one cell (server × scenario), summarized by their median.
pub(crate) fn summarize(runs: &[Run]) -> (Run, f64, f64) {
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

pub(crate) fn thousands(x: f64) -> String {
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

pub(crate) fn table_header(out: &mut String, first: &str) {
    table_header_per(out, first, "call", "calls");
}

/// A table header whose unit of work is `unit` (`call`, `round trip`; plural `units`).
pub(crate) fn table_header_per(out: &mut String, first: &str, unit: &str, units: &str) {
    let _ = writeln!(
        out,
        "| {first} | {units}/s (min–max) | p50 µs | p99 µs | server CPU µs/{unit} | peak RSS MiB | start ms |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
}

pub(crate) fn table_row(out: &mut String, label: &str, runs: &[Run]) {
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

/// The header of a table of runs against a server the driver did not start (no RSS, no
/// start time).
pub(crate) fn table_header_short(out: &mut String) {
    let _ = writeln!(
        out,
        "| run | calls/s | p50 µs | p99 µs | server CPU µs/call |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|");
}

/// A row of such a table: the median of `runs` (the CPU column `–` when unknown).
pub(crate) fn table_row_short(out: &mut String, label: &str, runs: &[Run]) {
    let (m, _, _) = summarize(runs);
    let cpu = if m.cpu_us.is_nan() {
        "–".to_owned()
    } else {
        format!("{:.1}", m.cpu_us)
    };
    let _ = writeln!(
        out,
        "| {label} | {} | {:.0} | {:.0} | {cpu} |",
        thousands(m.calls_per_s),
        m.p50_us,
        m.p99_us
    );
}

/// The noise of a throughput ratio: the lowest and highest ratio of the runs of the same
/// repetition (run `i` of one against run `i` of the other), when there are several.
fn paired_spread(mine: &[Run], theirs: &[Run]) -> String {
    if mine.len() < 2 || mine.len() != theirs.len() {
        return String::new();
    }
    let ratios = mine
        .iter()
        .zip(theirs)
        .map(|(a, b)| a.calls_per_s / b.calls_per_s);
    let (lo, hi) = ratios.fold((f64::MAX, 0.0_f64), |(lo, hi), r| (lo.min(r), hi.max(r)));
    format!(" ({lo:.2}–{hi:.2})")
}

/// Ratios of mcp-tool against each other server: throughput (mcp-tool ÷ other), p50 latency
/// and CPU per call (other ÷ mcp-tool). Above 1 means mcp-tool is better.
pub(crate) fn ratio_rows(out: &mut String, scenario: &str, cells: &BTreeMap<String, Vec<Run>>) {
    ratio_rows_of(out, scenario, cells, "mcp-tool", cells.keys());
}

/// Ratios of the cell labelled `ours` against each of `others` (as [`ratio_rows`]).
pub(crate) fn ratio_rows_of<'a>(
    out: &mut String,
    scenario: &str,
    cells: &BTreeMap<String, Vec<Run>>,
    ours: &str,
    others: impl IntoIterator<Item = &'a String>,
) {
    let Some(mine) = cells.get(ours).map(|r| summarize(r).0) else {
        return;
    };
    for label in others {
        let Some(runs) = cells.get(label).filter(|_| label != ours) else {
            continue;
        };
        let theirs = summarize(runs).0;
        let _ = writeln!(
            out,
            "| {scenario} | {ours} vs {label} | {:.2}×{} | {:.2}× | {:.2}× |",
            mine.calls_per_s / theirs.calls_per_s,
            paired_spread(&cells[ours], runs),
            theirs.p50_us / mine.p50_us,
            theirs.cpu_us / mine.cpu_us
        );
    }
}
