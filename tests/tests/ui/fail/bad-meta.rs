use mcp_tool::prelude::*;

/// Uses a reserved prefix.
#[tool(meta = r#"{"io.modelcontextprotocol/ui": {}}"#)]
fn reserved() {}

/// Uses another reserved prefix.
#[tool(meta = r#"{"dev.mcp/thing": 1}"#)]
fn reserved_mcp() {}

/// Not an object.
#[tool(meta = "[]")]
fn not_object() {}

fn main() {}
