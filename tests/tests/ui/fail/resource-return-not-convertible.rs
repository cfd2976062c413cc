use mcp_tool::prelude::*;

/// The answer.
#[resource("numbers://answer")]
fn answer() -> u32 {
    42
}

fn main() {}
