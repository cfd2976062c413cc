use mcp_tool::prelude::*;

/// Multiply two numbers.
#[tool]
fn multiplié(a: f64, b: f64) -> f64 {
    a * b
}

fn main() {}
