use mcp_tool::prelude::*;

/// Not convertible into a tool result.
struct Point {
    x: f64,
    y: f64,
}

/// The origin.
#[tool]
fn origin() -> Point {
    Point { x: 0.0, y: 0.0 }
}

fn main() {
    let p = origin();
    let _ = p.x + p.y;
}
