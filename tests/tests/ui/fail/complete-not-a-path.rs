use mcp_tool::prelude::*;

/// Greet someone.
#[prompt]
fn greet(#[arg(complete = "names")] name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {}
