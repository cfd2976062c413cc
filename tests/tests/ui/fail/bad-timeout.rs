use mcp_tool::prelude::*;

/// A time limit without a unit.
#[tool(timeout = "30")]
fn no_unit() {}

/// A zero time limit.
#[tool(timeout = "0s")]
fn zero() {}

/// A time limit that is not a string.
#[tool(timeout = 30)]
fn not_a_string() {}

fn main() {}
