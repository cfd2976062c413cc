use mcp_tool::prelude::*;

/// Not a function.
#[prompt]
struct Greeting;

fn main() {}
