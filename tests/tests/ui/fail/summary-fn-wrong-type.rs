use mcp_tool::prelude::*;

#[derive(Serialize, JsonSchema)]
struct Report {
    count: u32,
}

fn describe_number(n: &u32) -> String {
    format!("{n} users")
}

/// The summary function takes another type than the result's.
#[tool(summary = describe_number)]
fn report() -> Json<Report> {
    Json(Report { count: 1 })
}

fn main() {}
