use mcp_tool::prelude::*;

/// Multiply two numbers.
#[tool(name = "")]
fn multiply(a: f64, b: f64) -> f64 {
    a * b
}

fn main() {}
