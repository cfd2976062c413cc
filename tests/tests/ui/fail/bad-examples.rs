use mcp_tool::prelude::*;

/// Example request is not JSON.
#[tool(examples(request = "{nope"))]
fn not_json(a: i64) -> i64 {
    a
}

/// Example response is not an object.
#[tool(examples(response = "[1]"))]
fn not_object(a: i64) -> i64 {
    a
}

/// Unknown part of `examples`.
#[tool(examples(reply = "{}"))]
fn unknown_part(a: i64) -> i64 {
    a
}

/// `examples` without its parts.
#[tool(examples = "{}")]
fn not_a_group(a: i64) -> i64 {
    a
}


/// The same part twice.
#[tool(examples(request = "{}", request = "{}"))]
fn twice(a: i64) -> i64 {
    a
}

fn main() {}
