use mcp_tool::prelude::*;

/// Greet someone.
#[prompt]
fn greet(name: &str) -> String {
    format!("Hello, {name}!")
}

fn main() {}
