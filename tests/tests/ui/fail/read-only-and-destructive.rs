use mcp_tool::prelude::*;

/// Delete a file.
#[tool(destructive, idempotent, read_only = true)]
fn delete(path: String) -> String {
    path
}

fn main() {}
