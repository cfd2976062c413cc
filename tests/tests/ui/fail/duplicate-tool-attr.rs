use mcp_tool::prelude::*;

struct Calc;

#[tools]
impl Calc {
    /// Multiply two numbers.
    #[tool]
    #[tool(read_only)]
    fn multiply(&self, a: f64, b: f64) -> f64 {
        a * b
    }
}

fn main() {}
