use mcp_tool::prelude::*;

/// For MCP Apps views only, which search (for the model) never returns.
#[tool(visibility = ["app"], defer_loading)]
fn for_views() {}

fn main() {}
