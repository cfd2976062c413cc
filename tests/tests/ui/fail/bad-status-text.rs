use mcp_tool::prelude::*;

/// Status text too long.
#[tool(invoking = "Looking up the phase of the moon for the date you gave, please wait a moment")]
fn too_long() {}

/// Empty status text.
#[tool(invoked = "")]
fn empty() {}

fn main() {}
