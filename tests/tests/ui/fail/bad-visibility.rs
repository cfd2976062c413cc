use mcp_tool::prelude::*;

/// Unknown audience.
#[tool(visibility = ["model", "user"])]
fn unknown() {}

/// Listed twice.
#[tool(visibility = ["app", "app"])]
fn twice() {}

/// Empty.
#[tool(visibility = [])]
fn empty() {}

/// Not a list.
#[tool(visibility = "model")]
fn not_list() {}

fn main() {}
