use mcp_tool::prelude::*;

/// Greet someone.
#[tool]
fn greet(name: impl Into<String>) -> String {
    format!("hello {}", name.into())
}

fn main() {}
