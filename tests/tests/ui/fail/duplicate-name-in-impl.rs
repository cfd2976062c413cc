use mcp_tool::prelude::*;

struct Calc;

#[tools]
impl Calc {
    /// Add two numbers.
    #[tool]
    fn add(&self, a: f64, b: f64) -> f64 {
        a + b
    }

    /// Add two integers.
    #[tool(name = "add")]
    fn add_integers(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

fn main() {}
