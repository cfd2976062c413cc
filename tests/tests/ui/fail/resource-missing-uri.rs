use mcp_tool::prelude::*;

/// The README.
#[resource(mime_type = "text/markdown")]
fn readme() -> String {
    "# Hello".into()
}

struct Docs;

#[tools]
impl Docs {
    /// The changelog.
    #[resource]
    fn changelog(&self) -> String {
        "# Changes".into()
    }
}

fn main() {}
