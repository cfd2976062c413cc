use mcp_tool::prelude::*;

/// Hidden and always visible.
#[tool(hidden, always_visible)]
fn both() {}

/// The same, spelled with `default_visible`.
#[tool(always_visible, default_visible = false)]
fn both_again() {}

fn main() {}
