use mcp_tool::prelude::*;

struct Calc;

#[tools(manuel, prefix = "calc")]
impl Calc {
    /// Multiply two numbers.
    #[tool]
    fn multiply(&self, a: f64, b: f64) -> f64 {
        a * b
    }
}

fn main() {}
