//! `template-rmcp`: the project `cargo mcp-tool new` writes (its `greet` tool, stdio or
//! `--http ADDR`), written with rmcp as its docs show.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::transport::stdio;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;

/// Whom to greet.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct GreetRequest {
    /// Who to greet
    name: String,
}

#[derive(Debug, Clone, Default)]
struct Template;

#[tool_router]
impl Template {
    /// Greet someone by name.
    #[tool(annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false))]
    fn greet(
        &self,
        Parameters(GreetRequest { name }): Parameters<GreetRequest>,
    ) -> Result<CallToolResult, ErrorData> {
        let name = name.trim();
        if name.is_empty() {
            return Ok(CallToolResult::error(vec![ContentBlock::text(
                "[EMPTY_NAME] the name is empty; call `greet` again with the name of the person to greet",
            )]));
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(format!("Hello, {name}!"))]))
    }
}

#[tool_handler]
impl ServerHandler for Template {}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    if let (Some("--http"), Some(addr)) = (args.next().as_deref(), args.next()) {
        let service = StreamableHttpService::new(
            || Ok(Template),
            LocalSessionManager::default().into(),
            StreamableHttpServerConfig::default(),
        );
        let router = axum::Router::new().nest_service("/mcp", service);
        let listener = tokio::net::TcpListener::bind(addr).await?;
        axum::serve(listener, router).await?;
    } else {
        let service = Template.serve(stdio()).await?;
        service.waiting().await?;
    }
    Ok(())
}
