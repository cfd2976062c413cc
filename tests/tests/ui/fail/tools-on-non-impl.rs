use mcp_tool::prelude::*;

/// Multiply two numbers.
#[tools]
fn multiply(a: f64, b: f64) -> f64 {
    a * b
}

fn main() {
    let _ = multiply(1.0, 2.0);
}
