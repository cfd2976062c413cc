//! `rmcp-doc`: the benchmark's tools written with rmcp exactly as its documentation shows:
//! `#[tool_router]` on the impl, `#[tool_handler]` on `impl ServerHandler` (which calls
//! `Self::tool_router()` for every request, the macro's default), and `serve(stdio())`.
//!
//! ```text
//! rmcp-doc                              MCP on stdio
//! rmcp-doc --http ADDR                  StreamableHttpService with sessions (SSE answers)
//! rmcp-doc --http ADDR --sessionless    StreamableHttpService, sessionless JSON answers
//! ```
//!
//! rmcp checks arguments only by deserializing them: the `email` format and the name's length
//! are advertised in the schema but not checked.

use std::sync::Arc;

use mcp_tool_bench::{UserIds, now_rfc3339};
use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::CallToolResponse;
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::stdio;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_handler, tool_router};

#[path = "../rmcp_model.rs"]
mod model;
use model::{AddRequest, CreateUserRequest, User, WaitRequest, confirm_schema};

#[derive(Debug, Clone, Default)]
struct Bench {
    ids: Arc<UserIds>,
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
        model::confirm_add(input, state, responses, ctx, confirm_schema()).await
    }
}

#[tool_handler]
impl ServerHandler for Bench {}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(at) = args.iter().position(|a| a == "--http") {
        let addr = args.get(at + 1).ok_or("--http needs an address")?;
        let sessionless = args.iter().any(|a| a == "--sessionless");
        let server = Bench::default();
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
        let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
        axum::serve(listener, router).await?;
        return Ok(());
    }
    let service = Bench::default().serve(stdio()).await?;
    service.waiting().await?;
    Ok(())
}
