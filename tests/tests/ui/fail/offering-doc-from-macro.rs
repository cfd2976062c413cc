use mcp_tool::prelude::*;

#[doc = concat!("Greet ", "someone.")]
#[prompt]
fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {}
