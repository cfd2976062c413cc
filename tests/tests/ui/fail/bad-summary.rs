use mcp_tool::prelude::*;

#[derive(Serialize, JsonSchema)]
struct Report {
    count: u32,
}

/// A summary that is neither a template nor a function.
#[tool(summary = 5)]
fn a_number() -> Json<Report> {
    Json(Report { count: 1 })
}

/// A summary given no value.
#[tool(summary)]
fn nothing() -> Json<Report> {
    Json(Report { count: 1 })
}

fn main() {}
