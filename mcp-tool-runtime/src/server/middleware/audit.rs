//! [`Audit`]: one structured log line per tool call.

use std::time::Instant;

use super::{Call, CallFuture, Middleware, Next};

/// One `info` event per tool call (target `mcp_tool::audit`): the tool
/// (`gen_ai.tool.name`), who called it (`enduser.id`: the subject, else the address, else
/// `local`), the revision (`mcp.protocol.version`), how long it took (`duration_ms`) and how
/// it ended (`outcome`: `ok`, `error` for an `isError` result — with `error.type`, the
/// `ToolError`'s code when it has one —, or `input_required`), the field names those of the
/// OpenTelemetry attributes of the call's span. Arguments and results are not logged: they
/// may hold what a log must not. `MCP_TOOL_AUDIT=1` switches it on for a server binary.
///
/// What comes from outside (the subject a token names, the tool name) is recorded as a string
/// value, which the log's formatter quotes and escapes (`fmt` writes a line break as `\n`,
/// JSON as a JSON string): no value can end a line and forge the next.
#[derive(Clone, Copy, Debug, Default)]
pub struct Audit;

impl Middleware for Audit {
    fn call<'a>(&'a self, call: Call<'a>, next: Next<'a>) -> CallFuture<'a> {
        Box::pin(async move {
            let ctx = call.ctx;
            let principal = ctx.share_key();
            let started = Instant::now();
            let outcome = next.run(call).await;
            let duration_ms = started.elapsed().as_secs_f64() * 1000.0;
            let (ended, error_type) = match outcome.result() {
                None => ("input_required", None),
                Some(r) if r.is_error => ("error", Some(error_type(r))),
                Some(_) => ("ok", None),
            };
            tracing::event!(
                target: "mcp_tool::audit",
                tracing::Level::INFO,
                gen_ai.tool.name = ctx.tool(),
                enduser.id = principal.as_str(),
                mcp.protocol.version = ctx.protocol_version().as_str(),
                duration_ms,
                outcome = ended,
                error.type = error_type.as_deref(),
                "tool call"
            );
            outcome
        })
    }
}

/// The error's type: the `ToolError`'s code, else `tool_error` (the span's value).
fn error_type(result: &crate::tool::ToolResult) -> String {
    result
        .meta
        .as_ref()
        .and_then(|m| m.get(crate::tool::ERROR_META_KEY))
        .and_then(|d| d.get("code"))
        .and_then(|c| c.as_str())
        .unwrap_or("tool_error")
        .to_owned()
}
