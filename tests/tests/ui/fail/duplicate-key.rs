use mcp_tool::prelude::*;

/// Multiply two numbers.
#[tool(name = "multiply", read_only, name = "times")]
fn multiply(a: f64, b: f64) -> f64 {
    a * b
}

fn main() {}
