use mcp_tool::prelude::*;

struct Calc;

#[tools]
impl Calc {
    /// Pi.
    #[tool]
    const PI: f64 = 3.14;

    /// Multiply two numbers.
    #[tool]
    fn multiply(&self, a: f64, b: f64) -> f64 {
        a * b * Self::PI
    }
}

fn main() {}
