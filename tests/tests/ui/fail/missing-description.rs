use mcp_tool::prelude::*;

#[tool(read_only)]
fn multiply(a: f64, b: f64) -> f64 {
    a * b
}

fn main() {}
