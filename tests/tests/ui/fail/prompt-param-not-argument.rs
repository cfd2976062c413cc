use mcp_tool::prelude::*;

/// Not parsed from text, not a context value.
struct Point {
    x: f64,
}

/// Describe a point.
#[prompt]
fn describe(point: Point) -> String {
    format!("x = {}", point.x)
}

fn main() {}
