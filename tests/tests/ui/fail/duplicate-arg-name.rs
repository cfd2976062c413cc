use mcp_tool::prelude::*;

/// Greet someone.
#[tool]
fn greet(first: String, #[arg(rename = "first")] last: String) -> String {
    format!("hello {first} {last}")
}

fn main() {}
