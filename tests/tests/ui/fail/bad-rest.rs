use mcp_tool::prelude::*;

/// A `rest` that is not a flag.
#[tool(rest = "no")]
fn not_a_flag(n: u32) -> u32 {
    n
}

fn main() {}
