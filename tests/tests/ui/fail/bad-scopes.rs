use mcp_tool::prelude::*;

/// A scope with a space.
#[tool(scopes = ["users read"])]
fn spaced() {}

/// Listed twice.
#[tool(scopes = ["users:read", "users:read"])]
fn twice() {}

/// Empty list.
#[tool(scopes = [])]
fn empty() {}

/// Not a list.
#[tool(scopes = "users:read")]
fn not_list() {}

/// An empty scope.
#[tool(scopes = [""])]
fn blank() {}

/// Not a string.
#[tool(scopes = [users])]
fn ident() {}

fn main() {}
