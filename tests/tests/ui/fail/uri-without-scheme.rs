use mcp_tool::prelude::*;

/// The README.
#[resource("readme.md")]
fn readme() -> String {
    "# Hello".into()
}

/// A page.
#[resource_template("pages/{slug}")]
fn page(slug: String) -> String {
    slug
}

fn main() {}
