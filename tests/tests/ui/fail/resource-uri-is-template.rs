use mcp_tool::prelude::*;

/// A page.
#[resource("docs://pages/{slug}")]
fn page() -> String {
    "# Page".into()
}

fn main() {}
