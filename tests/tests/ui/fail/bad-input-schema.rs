use mcp_tool::prelude::*;

/// Not JSON.
#[tool(input_schema = "{ nope }")]
fn not_json() {}

/// Not an object.
#[tool(input_schema = "[1, 2]")]
fn not_object() {}

/// Root is not `type: object`.
#[tool(input_schema = r#"{"type": "string"}"#)]
fn not_object_type() {}

fn main() {}
