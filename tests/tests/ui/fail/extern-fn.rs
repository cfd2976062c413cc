use mcp_tool::prelude::*;

/// Multiply two numbers.
#[tool]
extern "C" fn multiply(a: f64, b: f64) -> f64 {
    a * b
}

fn main() {}
