use mcp_tool::prelude::*;

/// A tool's `coerce` that is not a flag.
#[tool(coerce = "yes")]
fn tool_level(n: u32) -> u32 {
    n
}

/// An argument's `coerce` that is not a flag.
#[tool]
fn argument_level(#[arg(coerce(1))] n: u32) -> u32 {
    n
}

fn main() {}
