use mcp_tool::prelude::*;

/// Runs a query in a region for a tenant.
#[tool]
fn query(
    #[arg(header = "Region")] region: String,
    #[arg(header = "region")] tenant: String,
) -> String {
    format!("{region}/{tenant}")
}

fn main() {}
