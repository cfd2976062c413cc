use mcp_tool::prelude::*;

/// Not JSON.
#[tool(output_schema = "{\"type\": ")]
fn not_json() {}

/// Not an object.
#[tool(output_schema = "true")]
fn not_object() {}

fn main() {}
