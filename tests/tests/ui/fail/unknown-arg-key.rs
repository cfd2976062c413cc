use mcp_tool::prelude::*;

/// Greet someone.
#[tool]
fn greet(#[arg(desc = "Who to greet")] name: String, #[arg(optional)] title: String) -> String {
    format!("hello {title} {name}")
}

fn main() {}
