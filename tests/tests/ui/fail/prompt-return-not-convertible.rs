use mcp_tool::prelude::*;

/// Greet someone.
#[prompt]
fn greet(name: String) -> u32 {
    name.len() as u32
}

fn main() {}
