use mcp_tool::prelude::*;

struct Docs;

#[tools]
impl Docs {
    /// Summarize.
    #[prompt(crate = ::mcp_tool)]
    fn summarize(&self, page: String) -> String {
        page
    }
}

fn main() {}
