//! The server of the chaos run (`deploy/chaos.sh`): every tool answers with the token it was
//! given, so the driver can tell each answer from every other one, and each tool exercises
//! one part of a replica that faults can break.
//!
//! - `echo`: the token, at once.
//! - `job`: the token after `ms` milliseconds; a task when the client takes one (in 2026-07-28
//!   it becomes one once it waits).
//! - `blob`: `kib` KiB ending with the token: over the result budget (`MCP_TOOL_RESULT_BUDGET`)
//!   it is cut, and the whole is kept as `mcp-tool://results/<id>`.
//! - `confirm`: asks the user to confirm (an elicitation), then the token. The replicas mount
//!   this same binary over stdio as `remote`, so `remote__confirm` is a gateway call with an
//!   input round.
//! - `limited`: the token; the run limits this tool alone (`MCP_TOOL_RATE_LIMIT=limited=…`).
//! - `touch`: the token, after telling every listener that `chaos://touched` changed (on every
//!   replica, through the shared state).
//!
//! The command line is every server's (`--http ADDR`, `--mount FILE`, `--task-store …`).

use std::time::Duration;

use mcp_tool::extract::Elicitation;
use mcp_tool::prelude::*;
use mcp_tool::resource::Resource;
use mcp_tool::server::ServerHandle;

/// The resource `touch` changes.
const TOUCHED: &str = "chaos://touched";

/// The token, back.
#[tool(read_only, idempotent, open_world = false)]
fn echo(#[arg(description = "Any text")] token: String) -> String {
    token
}

/// The token, after `ms` milliseconds (a task when the client takes one).
#[tool(read_only, idempotent, open_world = false, task = "optional")]
async fn job(
    #[arg(description = "Any text")] token: String,
    #[arg(description = "Milliseconds to wait, at most 10 000")] ms: u64,
) -> String {
    tokio::time::sleep(Duration::from_millis(ms.min(10_000))).await;
    token
}

/// `kib` KiB of text (at most 64) ending with the token.
#[tool(read_only, idempotent, open_world = false)]
fn blob(
    #[arg(description = "Any text")] token: String,
    #[arg(description = "Size in KiB, at most 64")] kib: usize,
) -> String {
    let size = kib.min(64) * 1024;
    let mut text = ".".repeat(size.saturating_sub(token.len()));
    text.push_str(&token);
    text
}

/// The user's answer to `confirm`.
#[derive(Deserialize, JsonSchema)]
struct Confirm {
    /// Go ahead?
    confirm: bool,
}

/// The token, once the user confirms.
#[tool(read_only, idempotent, open_world = false)]
async fn confirm(
    ctx: Ctx,
    #[arg(description = "Any text")] token: String,
) -> Result<String, ToolError> {
    match ctx.elicit::<Confirm>("Go ahead?").await? {
        Elicitation::Accept(Confirm { confirm: true }) => Ok(token),
        _ => Err(ToolError::new("NOT_CONFIRMED", "the user did not confirm")),
    }
}

/// The token (the run rate-limits this tool).
#[tool(read_only, idempotent, open_world = false)]
fn limited(#[arg(description = "Any text")] token: String) -> String {
    token
}

/// The token, after telling every listener that `chaos://touched` changed.
#[tool(idempotent, open_world = false)]
fn touch(server: ServerHandle, #[arg(description = "Any text")] token: String) -> String {
    server.resource_updated(TOUCHED);
    token
}

fn main() -> mcp_tool::Result<()> {
    Server::new("chaos-server", env!("CARGO_PKG_VERSION"))
        .resource(Resource::text(
            TOUCHED,
            "touched",
            "text/plain",
            "Changed by every call of `touch`.",
        ))
        .run()
}
