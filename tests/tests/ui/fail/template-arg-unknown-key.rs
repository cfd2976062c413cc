use mcp_tool::prelude::*;

/// A user's profile.
#[resource_template("users://{id}/profile")]
fn profile(#[arg(description = "The user")] id: u64) -> String {
    id.to_string()
}

fn main() {}
