use mcp_tool::prelude::*;

struct Docs;

#[tools]
impl Docs {
    /// Not a function.
    #[resource("docs://answer")]
    const ANSWER: u32 = 42;

    /// Summarize.
    #[prompt]
    fn summarize(&self, page: String) -> String {
        page
    }
}

fn main() {}
