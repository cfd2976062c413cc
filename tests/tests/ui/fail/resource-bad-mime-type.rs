use mcp_tool::prelude::*;

/// The README.
#[resource("docs://readme", mime_type = "markdown")]
fn readme() -> String {
    "# Hello".into()
}

fn main() {}
