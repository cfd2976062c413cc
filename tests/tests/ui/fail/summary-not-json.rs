use mcp_tool::prelude::*;

/// Text is its own summary.
#[tool(summary = "{result}")]
fn text() -> String {
    "hello".into()
}

fn main() {}
