use mcp_tool::prelude::*;

/// Icons must be an array.
#[tool(icons = r#"{"src": "https://example.com/a.png"}"#)]
fn not_array() {}

/// Every icon needs a `src`.
#[tool(icons = r#"[{"src": "https://example.com/a.png"}, {"mimeType": "image/png"}]"#)]
fn no_src() {}

fn main() {}
