//! The fixtures of the tasks extension's scenarios (2026-07-28, `io.modelcontextprotocol/tasks`),
//! which run as tasks in 2025-11-25 too.

use std::time::Duration;

use mcp_tool::extract::Elicitation;
use mcp_tool::prelude::*;
use mcp_tool::protocol::{RpcError, code};

/// Greets someone (never a task)
#[tool(read_only)]
pub(crate) fn greet(#[arg(description = "Who to greet")] name: String) -> String {
    format!("Hello, {name}!")
}

/// Computes slowly: waits `seconds`, then reports `label` (a task when the client takes one)
#[tool(read_only, task = "optional")]
pub(crate) async fn slow_compute(
    #[arg(description = "How long to compute, in seconds")] seconds: f64,
    #[arg(description = "A label for the result")] label: String,
) -> String {
    let seconds = seconds.clamp(0.0, 3600.0);
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    format!("Computed {label} in {seconds} s")
}

/// A job that ends with a tool error after about a second (only as a task)
#[tool(task = "required")]
pub(crate) async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::new(
        "JOB_FAILED",
        "the job failed, as it always does",
    ))
}

/// A job that ends with a JSON-RPC error (only as a task)
#[tool(task = "required")]
pub(crate) async fn protocol_error_job() -> ToolResult {
    tokio::time::sleep(Duration::from_millis(100)).await;
    ToolResult::rpc_error(RpcError::new(
        code::INTERNAL_ERROR,
        "the job hit a protocol error, as it always does",
    ))
}

/// Whether to go ahead.
#[derive(Serialize, Deserialize, JsonSchema)]
pub(crate) struct Confirm {
    /// Go ahead?
    confirm: bool,
}

/// Deletes a file once the user confirms, asking while it runs as a task
#[tool(destructive, task = "required")]
pub(crate) async fn confirm_delete(
    #[arg(description = "The file to delete")] filename: String,
    ctx: Ctx,
) -> Result<String, ToolError> {
    // Looking the file up first: the question comes once the call is a task.
    tokio::time::sleep(Duration::from_millis(50)).await;
    match ctx.elicit::<Confirm>(format!("Delete {filename}?")).await? {
        Elicitation::Accept(Confirm { confirm: true }) => Ok(format!("Deleted {filename}")),
        _ => Ok(format!("Kept {filename}")),
    }
}

/// A name and a confirmation.
#[derive(Serialize, Deserialize, JsonSchema)]
pub(crate) struct Named {
    /// A name
    #[serde(default)]
    name: Option<String>,
    /// Go ahead?
    #[serde(default)]
    confirm: Option<bool>,
}

/// Asks two questions at once while it runs as a task
#[tool(task = "required")]
pub(crate) async fn multi_input(ctx: Ctx) -> Result<String, ToolError> {
    tokio::task::yield_now().await;
    let (first, second) = tokio::join!(
        ctx.elicit::<Named>("First question"),
        ctx.elicit::<Named>("Second question"),
    );
    let name = |e: Elicitation<Named>| match e {
        Elicitation::Accept(n) => n.name.unwrap_or_else(|| "?".into()),
        _ => "-".into(),
    };
    Ok(format!("Answers: {}, {}", name(first?), name(second?)))
}

/// A name.
#[derive(Serialize, Deserialize, JsonSchema)]
pub(crate) struct UserName {
    /// Your name
    name: String,
}

/// Asks the user's name first (an input-required round), then works as a task
#[tool(task = "required")]
pub(crate) async fn test_tool_with_task(ctx: Ctx) -> Result<String, ToolError> {
    let name = match ctx
        .input("user_name")
        .elicit::<UserName>("What is your name?")
        .await?
    {
        Elicitation::Accept(UserName { name }) => name,
        _ => "stranger".into(),
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(format!("Task done for {name}"))
}
