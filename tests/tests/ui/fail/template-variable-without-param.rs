use mcp_tool::prelude::*;

/// A user's tab.
#[resource_template("users://{id}/{tab}")]
fn tab(id: u64) -> String {
    id.to_string()
}

fn main() {}
