use mcp_tool::prelude::*;

fn names(typed: String) -> Vec<String> {
    vec![typed]
}

/// Greet someone.
#[prompt]
fn greet(#[arg(complete = names)] name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {}
