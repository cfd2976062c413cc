use mcp_tool::prelude::*;

struct Docs;

#[tools]
impl Docs {
    /// Summarize.
    #[prompt]
    #[prompt(title = "Summary")]
    fn summarize(&self, page: String) -> String {
        page
    }
}

fn main() {}
