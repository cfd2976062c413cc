use mcp_tool::prelude::*;

struct Docs;

#[tools]
impl Docs {
    /// The changelog.
    #[resource = "docs://changelog"]
    fn changelog(&self) -> String {
        "# Changes".into()
    }
}

fn main() {}
