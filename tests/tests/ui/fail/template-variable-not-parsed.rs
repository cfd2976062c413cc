use mcp_tool::prelude::*;

/// Not parsed from text.
struct UserId(u64);

/// A user's profile.
#[resource_template("users://{id}/profile")]
fn profile(id: UserId) -> String {
    id.0.to_string()
}

fn main() {}
