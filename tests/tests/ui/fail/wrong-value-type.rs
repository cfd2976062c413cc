use mcp_tool::prelude::*;

/// Multiply two numbers.
#[tool(name = 5, read_only = "yes", idempotent(true), crate = "not a path")]
fn multiply(a: f64, b: f64) -> f64 {
    a * b
}

fn main() {}
