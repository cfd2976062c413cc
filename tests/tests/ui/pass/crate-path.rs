// The facade under another name: `crate = …` says where generated code finds it.
use mcp_tool as framework;
use mcp_tool::prelude::*;

/// Multiply two numbers.
#[tool(crate = framework)]
fn multiply(a: f64, b: f64) -> f64 {
    a * b
}

/// Multiply two numbers, path given as a string.
#[tool(crate = "::mcp_tool")]
fn times(a: f64, b: f64) -> f64 {
    a * b
}

struct Calc;

#[tools(crate = framework)]
impl Calc {
    /// Add two numbers.
    #[framework::tool]
    fn add(&self, a: f64, b: f64) -> f64 {
        a + b
    }
}

fn main() {
    let _ = Server::new("t", "1")
        .only(["multiply", "times", "add"])
        .service(Calc)
        .build()
        .unwrap();
}
