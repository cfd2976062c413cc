use mcp_tool::prelude::*;

/// A user's profile.
#[resource_template("users://{id}/profile")]
fn profile(id: u64, #[arg(rename = "id")] again: u64) -> String {
    format!("{id} {again}")
}

fn main() {}
