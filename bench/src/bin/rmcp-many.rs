//! `rmcp-many`: rmcp 3.11 serving the same 1000 tools as `many-tools` (`tool_0000` …
//! `tool_0999`, each `(a, b) -> a + b + i`, arguments `{a, b}` as integers), for the driver's
//! `many` leg. The tools are known at run time here, so they are dynamic routes
//! (`ToolRoute::new_dyn`) of one `ToolRouter` built at start and stored (rmcp's macros would
//! need 1000 methods); stdio through `stdio_pipes()`, as `rmcp-fast`.

use std::sync::Arc;

use rmcp::handler::server::common::schema_for_type;
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, Tool};
use rmcp::transport::stdio_pipes;
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool_handler};
use serde::Deserialize;

/// The two numbers to add.
#[derive(Deserialize, rmcp::schemars::JsonSchema)]
struct AddRequest {
    /// The first number
    a: i64,
    /// The second number
    b: i64,
}

#[derive(Clone)]
struct Many {
    tool_router: Arc<ToolRouter<Many>>,
}

/// The 1000 tools, as `many-tools` has them.
fn router() -> ToolRouter<Many> {
    let schema = schema_for_type::<AddRequest>();
    let mut router = ToolRouter::new();
    for i in 0..1000_i64 {
        let attr = Tool::new(
            format!("tool_{i:04}"),
            format!("Generated tool {i:04}: adds `a`, `b` and {i}."),
            schema.clone(),
        );
        router.add_route(ToolRoute::new_dyn(
            attr,
            move |ctx: ToolCallContext<'_, Many>| {
                let arguments = serde_json::Value::Object(ctx.arguments.unwrap_or_default());
                Box::pin(async move {
                    let AddRequest { a, b } = serde_json::from_value(arguments)
                        .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
                    Ok(CallToolResponse::Complete(CallToolResult::success(vec![
                        ContentBlock::text((a + b + i).to_string()),
                    ])))
                })
            },
        ));
    }
    router
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Many {}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Many {
        tool_router: Arc::new(router()),
    };
    let service = server.serve(stdio_pipes()).await?;
    service.waiting().await?;
    Ok(())
}
