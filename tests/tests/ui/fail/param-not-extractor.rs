use mcp_tool::prelude::*;

/// Not `Deserialize`, not `JsonSchema`, not `FromContext`.
struct Point {
    x: f64,
    y: f64,
}

/// The distance of a point from the origin.
#[tool]
fn norm(point: Point) -> f64 {
    point.x.hypot(point.y)
}

fn main() {}
