use mcp_tool::prelude::*;

#[derive(Serialize, JsonSchema)]
struct Report {
    count: u32,
}

/// A placeholder never closed.
#[tool(summary = "{count users")]
fn unclosed() -> Json<Report> {
    Json(Report { count: 1 })
}

/// A brace closing nothing.
#[tool(summary = "count} users")]
fn unmatched() -> Json<Report> {
    Json(Report { count: 1 })
}

/// A placeholder naming no field.
#[tool(summary = "{} users")]
fn empty() -> Json<Report> {
    Json(Report { count: 1 })
}

fn main() {}
