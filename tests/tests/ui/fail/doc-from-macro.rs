use mcp_tool::prelude::*;

#[doc = concat!("Multiply ", "two numbers.")]
#[tool]
fn multiply(a: f64, b: f64) -> f64 {
    a * b
}

fn main() {}
