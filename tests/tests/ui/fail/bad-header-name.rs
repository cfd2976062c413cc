use mcp_tool::prelude::*;

/// Runs a query in a region.
#[tool]
fn query(#[arg(header = "Data Region")] region: String, sql: String) -> String {
    format!("{region}: {sql}")
}

fn main() {}
