use mcp_tool::prelude::*;

/// Deferred behind search, and always listed: one or the other.
#[tool(always_visible, defer_loading)]
fn both() {}

fn main() {}
