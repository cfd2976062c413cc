use mcp_tool::prelude::*;

/// Links a view that does not exist.
#[tool(ui = "nowhere")]
fn show() {}

/// A view name with a path in it.
#[tool(ui = "../secrets")]
fn sneaky() {}

fn main() {}
