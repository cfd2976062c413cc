use mcp_tool::prelude::*;

/// Greet someone.
#[prompt(titel = "Greeting")]
fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {}
