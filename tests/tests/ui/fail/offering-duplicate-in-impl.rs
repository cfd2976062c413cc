use mcp_tool::prelude::*;

struct Docs;

#[tools]
impl Docs {
    /// Summarize.
    #[prompt]
    fn summarize(&self, page: String) -> String {
        page
    }

    /// Summarize, too.
    #[prompt(name = "summarize")]
    fn summary(&self, page: String) -> String {
        page
    }

    /// The README.
    #[resource("docs://readme")]
    fn readme(&self) -> String {
        String::new()
    }

    /// The README again.
    #[resource("docs://readme")]
    fn readme_again(&self) -> String {
        String::new()
    }
}

fn main() {}
