use mcp_tool::prelude::*;

/// Greet someone.
#[tool]
fn greet(
    #[arg(rename = "who", description = "Who to greet")]
    #[arg(rename = "person")]
    name: String,
) -> String {
    format!("hello {name}")
}

fn main() {}
