use mcp_tool::prelude::*;

/// A user's profile.
#[resource_template("users://{id}/profile")]
fn profile(id: u64, format: String) -> String {
    format!("{id} as {format}")
}

fn main() {}
