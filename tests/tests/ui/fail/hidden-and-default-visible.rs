use mcp_tool::prelude::*;

/// Says hidden twice.
#[tool(hidden, default_visible = false)]
fn twice() {}

fn main() {}
