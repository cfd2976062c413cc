use mcp_tool::prelude::*;

/// Echo a value.
#[tool]
fn echo<T: Clone>(value: T) -> T {
    value
}

/// Echo a value.
#[tool]
fn echo_where(value: String) -> String
where
    String: Clone,
{
    value
}

fn main() {}
