use mcp_tool::prelude::*;

/// Multiply two numbers.
#[tool(retries = 3)]
fn multiply(a: f64, b: f64) -> f64 {
    a * b
}

fn main() {}
