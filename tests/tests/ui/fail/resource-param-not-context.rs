use mcp_tool::prelude::*;

/// The README, in a language.
#[resource("docs://readme")]
fn readme(language: String) -> String {
    language
}

fn main() {}
