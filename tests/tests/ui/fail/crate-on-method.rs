use mcp_tool::prelude::*;

struct Calc;

#[tools]
impl Calc {
    /// Multiply two numbers.
    #[tool(crate = ::mcp_tool)]
    fn multiply(&self, a: f64, b: f64) -> f64 {
        a * b
    }
}

fn main() {}
