use mcp_tool::prelude::*;

#[tool(descripton = "Multiply two numbers.")]
fn multiply(a: f64, b: f64) -> f64 {
    a * b
}

fn main() {}
