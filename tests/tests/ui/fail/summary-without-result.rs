use mcp_tool::prelude::*;

/// Nothing to summarize.
#[tool(summary = "done")]
fn returns_nothing() {}

fn main() {}
