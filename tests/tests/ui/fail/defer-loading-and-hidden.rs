use mcp_tool::prelude::*;

/// Hidden until a tool manager enables it, and deferred until a search finds it.
#[tool(hidden, defer_loading)]
fn both() {}

/// The same, spelled with `default_visible`.
#[tool(defer_loading, default_visible = false)]
fn both_again() {}

fn main() {}
