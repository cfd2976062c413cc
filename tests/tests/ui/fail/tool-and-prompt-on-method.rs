use mcp_tool::prelude::*;

struct Docs;

#[tools]
impl Docs {
    /// Summarize.
    #[tool]
    #[prompt]
    fn summarize(&self, page: String) -> String {
        page
    }
}

fn main() {}
