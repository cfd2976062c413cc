//! Helpers shared by the benchmark servers, so that every server does the same work per call.
//!
//! The binaries of this package are the benchmark: `bench-server` (mcp-tool), `rmcp-doc` and
//! `rmcp-fast` (the official SDK), `floor` (a hand-written line loop), `many-tools` (1000
//! generated tools) and `load`, the driver that runs them all and prints the tables. See
//! `BENCHMARKS.md` at the root of the workspace.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The current time as an RFC 3339 timestamp in UTC (second precision).
pub fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Hands out user ids `usr_000001`, `usr_000002`, … (one counter per server process).
#[derive(Debug, Default)]
pub struct UserIds(AtomicU64);

impl UserIds {
    /// The next id.
    pub fn next(&self) -> String {
        let n = self.0.fetch_add(1, Ordering::Relaxed) + 1;
        format!("usr_{n:06x}")
    }
}

/// Whether `s` looks like an email address the way JSON Schema's `email` format is usually
/// checked by hand: one `@`, a non-empty local part, a dotted domain, no spaces.
pub fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.is_empty()
        && !domain.contains('@')
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !s.contains(char::is_whitespace)
}
