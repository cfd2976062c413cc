//! `calc`: seed 003's `multiply`, and `divide`, whose division by zero is a `ToolError` with a
//! code, a message and a suggestion.

use mcp_tool::prelude::*;

/// Multiply two numbers.
#[tool(read_only, idempotent, open_world = false)]
fn multiply(
    #[arg(description = "First factor")] a: f64,
    #[arg(description = "Second factor")] b: f64,
) -> f64 {
    a * b
}

/// Divide `a` by `b`.
#[tool(read_only, idempotent, open_world = false)]
fn divide(
    #[arg(description = "Dividend")] a: f64,
    #[arg(description = "Divisor (must not be zero)")] b: f64,
) -> Result<f64, ToolError> {
    if b == 0.0 {
        return Err(ToolError::new("DIVISION_BY_ZERO", "cannot divide by zero")
            .suggestion("call `divide` again with a non-zero divisor `b`"));
    }
    Ok(a / b)
}

fn main() -> mcp_tool::Result<()> {
    Server::new("calc", env!("CARGO_PKG_VERSION")).run()
}
