use mcp_tool::prelude::*;

struct Calc;

#[tools]
impl Calc {
    /// Multiply two numbers (but not a tool: no `#[tool]`).
    fn multiply(&self, a: f64, b: f64) -> f64 {
        a * b
    }
}

fn main() {
    let _ = Calc.multiply(1.0, 2.0);
}
