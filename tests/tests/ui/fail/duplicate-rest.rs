use mcp_tool::prelude::*;

/// `rest` given twice.
#[tool(rest = false, read_only, rest)]
fn twice(n: u32) -> u32 {
    n
}

fn main() {}
