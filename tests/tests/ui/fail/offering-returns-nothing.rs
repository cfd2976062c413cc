use mcp_tool::prelude::*;

/// Greet someone.
#[prompt]
fn greet(name: String) {
    let _ = name;
}

fn main() {}
