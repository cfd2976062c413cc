use mcp_tool::prelude::*;

/// The README.
#[resource("docs://readme")]
fn readme(#[arg(rename = "c")] ctx: Ctx) -> String {
    format!("{:?}", ctx.id())
}

fn main() {}
