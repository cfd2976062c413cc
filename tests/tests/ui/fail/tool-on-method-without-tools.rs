use mcp_tool::prelude::*;

struct Calc;

impl Calc {
    /// Multiply two numbers.
    #[tool]
    fn multiply(&self, a: f64, b: f64) -> f64 {
        a * b
    }
}

fn main() {
    let _ = Calc.multiply(1.0, 2.0);
}
