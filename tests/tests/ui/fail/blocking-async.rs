use mcp_tool::prelude::*;

/// An async tool cannot be `blocking`: it runs on the async runtime.
#[tool(blocking)]
async fn fetch() -> String {
    String::new()
}

fn main() {}
