use mcp_tool::prelude::*;

/// A pair of users.
#[resource_template("pairs://{id}/{id}")]
fn pair(id: String) -> String {
    id
}

fn main() {}
