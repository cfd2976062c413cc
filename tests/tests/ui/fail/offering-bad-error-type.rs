use mcp_tool::prelude::*;

/// Neither `ToolError` nor `Display`.
struct Oops;

/// The README.
#[resource("docs://readme")]
fn readme() -> Result<String, Oops> {
    Err(Oops)
}

fn main() {}
