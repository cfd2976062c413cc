use mcp_tool::prelude::*;

/// All users.
#[resource_template("users://all")]
fn all() -> String {
    String::new()
}

fn main() {}
