use mcp_tool::prelude::*;

/// Never closed.
#[resource_template("users://{id/profile")]
fn unclosed(id: String) -> String {
    id
}

/// Closed, never opened.
#[resource_template("users://id}/profile")]
fn stray(id: String) -> String {
    id
}

/// An empty variable.
#[resource_template("users://{}/profile")]
fn empty(id: String) -> String {
    id
}

/// An RFC 6570 operator.
#[resource_template("files://{+path}")]
fn operator(path: String) -> String {
    path
}

/// An RFC 6570 modifier.
#[resource_template("files://{path*}")]
fn modifier(path: String) -> String {
    path
}

/// A space in a name.
#[resource_template("users://{user id}")]
fn space(id: String) -> String {
    id
}

/// Two variables with nothing between them.
#[resource_template("dates://{year}{month}")]
fn adjacent(year: String, month: String) -> String {
    year + &month
}

fn main() {}
