use mcp_tool::prelude::*;

/// Greet someone.
#[tool]
fn greet(name: &str, titles: Option<&[String]>) -> String {
    format!("hello {name} {titles:?}")
}

fn main() {}
