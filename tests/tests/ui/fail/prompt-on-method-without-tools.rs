use mcp_tool::prelude::*;

struct Docs;

impl Docs {
    /// Summarize.
    #[prompt]
    fn summarize(&self, page: String) -> String {
        page
    }
}

fn main() {}
