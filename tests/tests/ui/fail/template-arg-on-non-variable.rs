use mcp_tool::prelude::*;

/// A user's profile.
#[resource_template("users://{user_id}/profile")]
fn profile(#[arg(rename = "userid")] id: u64) -> String {
    id.to_string()
}

fn main() {}
