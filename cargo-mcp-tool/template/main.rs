//! `{{name}}`: an MCP server. Run it with no arguments and it speaks MCP on stdio (what MCP
//! hosts launch); `--http 127.0.0.1:8080` serves Streamable HTTP; `help` shows the rest.

use mcp_tool::prelude::*;

/// Greet someone by name.
#[tool(read_only, idempotent, open_world = false)]
fn greet(#[arg(description = "Who to greet")] name: String) -> Result<String, ToolError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(ToolError::new("EMPTY_NAME", "the name is empty")
            .suggestion("call `greet` again with the name of the person to greet"));
    }
    Ok(format!("Hello, {name}!"))
}

fn server() -> Server {
    Server::new("{{name}}", env!("CARGO_PKG_VERSION"))
}

fn main() -> mcp_tool::Result<()> {
    server().run()
}

#[cfg(test)]
mod tests;
