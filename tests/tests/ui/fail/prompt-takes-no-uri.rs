use mcp_tool::prelude::*;

/// Greet someone.
#[prompt("prompts://greet")]
fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {}
