//! `rmcp-fast`: the benchmark's tools with rmcp in its fastest form: the `ToolRouter` is built
//! once and stored (shared through an `Arc`, so the per-session or per-request clone that
//! `StreamableHttpService` makes is a reference count), `#[tool_handler(router = ...)]` uses
//! the stored router, and stdio goes through `stdio_pipes()`, rmcp's non-blocking pipe
//! transport (no hand-off to Tokio's blocking pool per read and write). Over HTTP, accepted
//! connections get `TCP_NODELAY`.
//!
//! ```text
//! rmcp-fast                              MCP on stdio
//! rmcp-fast --http ADDR                  StreamableHttpService with sessions (SSE answers)
//! rmcp-fast --http ADDR --sessionless    StreamableHttpService, sessionless JSON answers
//! ```

use std::sync::Arc;

use axum::serve::ListenerExt;

use mcp_tool_bench::{UserIds, now_rfc3339};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{CallToolResponse, ElicitationSchema};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::stdio_pipes;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_handler, tool_router};

#[path = "../rmcp_model.rs"]
mod model;
use model::{AddRequest, CreateUserRequest, User, WaitRequest};

#[derive(Clone)]
struct Bench {
    ids: Arc<UserIds>,
    tool_router: Arc<ToolRouter<Bench>>,
    confirm_schema: Arc<ElicitationSchema>,
}

impl Bench {
    fn new() -> Self {
        Bench {
            ids: Arc::default(),
            tool_router: Arc::new(Self::tool_router()),
            confirm_schema: Arc::new(model::confirm_schema()),
        }
    }
}

#[tool_router]
impl Bench {
    #[tool(
        description = "Add two integers.",
        annotations(read_only_hint = true, idempotent_hint = true)
    )]
    fn add(&self, Parameters(AddRequest { a, b }): Parameters<AddRequest>) -> String {
        (a + b).to_string()
    }

    #[tool(
        description = "Wait `ms` milliseconds, then answer them.",
        annotations(read_only_hint = true, idempotent_hint = true)
    )]
    async fn wait(&self, Parameters(input): Parameters<WaitRequest>) -> String {
        model::wait(input).await
    }

    #[tool(
        description = "Create a new user account with the provided details. Returns the created user object with generated ID.",
        annotations(
            title = "Create User Account",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn create_user(&self, Parameters(input): Parameters<CreateUserRequest>) -> Json<User> {
        Json(User {
            id: self.ids.next(),
            email: input.email,
            name: input.name,
            role: input.role.as_str().to_owned(),
            created_at: now_rfc3339(),
        })
    }

    #[tool(
        description = "Add two integers once the user confirms.",
        annotations(read_only_hint = true, idempotent_hint = true)
    )]
    async fn confirm_add(
        &self,
        Parameters(input): Parameters<AddRequest>,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        model::confirm_add(
            input,
            state,
            responses,
            ctx,
            ElicitationSchema::clone(&self.confirm_schema),
        )
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Bench {}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let server = Bench::new();
    if let Some(at) = args.iter().position(|a| a == "--http") {
        let addr = args.get(at + 1).ok_or("--http needs an address")?;
        let sessionless = args.iter().any(|a| a == "--sessionless");
        let router = if sessionless {
            let config = StreamableHttpServerConfig::default()
                .with_legacy_session_mode(false)
                .with_json_response(true);
            let service = StreamableHttpService::new(
                move || Ok(server.clone()),
                NeverSessionManager::default().into(),
                config,
            );
            axum::Router::new().nest_service("/mcp", service)
        } else {
            let service = StreamableHttpService::new(
                move || Ok(server.clone()),
                LocalSessionManager::default().into(),
                StreamableHttpServerConfig::default(),
            );
            axum::Router::new().nest_service("/mcp", service)
        };
        // TCP_NODELAY: a session-mode answer is an SSE stream written in several pieces, which
        // Nagle's algorithm would hold back until the client's delayed ACK (~40 ms).
        let listener = tokio::net::TcpListener::bind(addr.as_str())
            .await?
            .tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
        axum::serve(listener, router).await?;
        return Ok(());
    }
    let service = server.serve(stdio_pipes()).await?;
    service.waiting().await?;
    Ok(())
}
