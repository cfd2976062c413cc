//! Helpers shared by the benchmark servers, so that every server does the same work per call.
//!
//! The binaries of this package are the benchmark: `bench-server` (mcp-tool), `rmcp-doc` and
//! `rmcp-fast` (the official SDK), `floor` (a hand-written line loop), `many-tools` (1000
//! generated tools) and `load`, the driver that runs them all and prints the tables. See
//! `BENCHMARKS.md` at the root of the workspace.

use std::sync::atomic::{AtomicU64, Ordering};

/// The timestamp every server writes into a new user: the examples' own helper.
pub use mcp_tool_examples::now_rfc3339;

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
