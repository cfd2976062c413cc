use mcp_tool::prelude::*;

/// Exports every user, slowly.
#[tool(task = "sometimes")]
async fn export_users() -> &'static str {
    "exported"
}

/// Imports users, slowly.
#[tool(task = 2)]
async fn import_users() -> &'static str {
    "imported"
}

fn main() {}
