//! `rmcp-tasks`: `quick_job` as a task with rmcp 3.11, for the driver's `tasks` leg (stdio,
//! MCP 2026-07-28 only: rmcp 3.11 has no 2025-11-25 tasks, neither `task` on `tools/call` nor
//! `tasks/result`).
//!
//! rmcp 3.11 offers the 2026-07-28 tasks extension through its `TaskManager` (in memory, in
//! this process), which a server wires by hand as rmcp's own tests do: `call_tool` spawns the
//! task when the client declared the extension and answers `CreateTaskResult`; `get_task`,
//! `update_task` and `cancel_task` hand the requests to the manager; `get_info` declares the
//! tasks capability. `quick_job {n}` yields to the runtime once and answers `2 n`, as
//! `bench-server`'s does.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CreateTaskResult, GetTaskParams, GetTaskResult, ServerCapabilities, ServerConfig,
    UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskManager, TaskOptions};
use rmcp::transport::stdio_pipes;
use rmcp::{ErrorData, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;

/// The job's input.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct JobRequest {
    /// The number to double
    n: i64,
}

#[derive(Clone)]
struct Jobs {
    tool_router: std::sync::Arc<ToolRouter<Jobs>>,
    tasks: TaskManager,
}

async fn job(n: i64) -> CallToolResult {
    tokio::task::yield_now().await;
    CallToolResult::success(vec![ContentBlock::text((2 * n).to_string())])
}

#[tool_router]
impl Jobs {
    #[tool(
        description = "Double a number, as a job that may run as a task.",
        annotations(read_only_hint = true, idempotent_hint = true)
    )]
    async fn quick_job(
        &self,
        Parameters(JobRequest { n }): Parameters<JobRequest>,
    ) -> CallToolResult {
        job(n).await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Jobs {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let declared = context
            .client_capabilities()
            .is_some_and(|caps| caps.supports_tasks());
        if request.name == "quick_job" && declared {
            let JobRequest { n } = serde_json::from_value(serde_json::Value::Object(
                request.arguments.unwrap_or_default(),
            ))
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
            let task = self.tasks.spawn(TaskOptions::new(), move |_| {
                Box::pin(async move { Ok(job(n).await) })
            });
            return Ok(CallToolResponse::Task(CreateTaskResult::new(task)));
        }
        let tcc = ToolCallContext::new(self, request, context);
        self.tool_router.call(tcc).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel_task(&request.task_id)
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build(),
        )
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Jobs {
        tool_router: std::sync::Arc::new(Jobs::tool_router()),
        tasks: TaskManager::new(),
    };
    let service = server.serve(stdio_pipes()).await?;
    service.waiting().await?;
    Ok(())
}
