use mcp_tool::prelude::*;

/// Multiply two numbers.
#[tool]
struct Multiply {
    a: f64,
    b: f64,
}

fn main() {
    let m = Multiply { a: 1.0, b: 2.0 };
    let _ = m.a * m.b;
}
