use mcp_tool::prelude::*;

#[tool(name = "get weather", titel = "Weather", read_only = 1, read_only)]
fn weather<T>(city: &str, #[arg(rename = "")] days: u8) -> String {
    format!("{city} {days}")
}

fn main() {}
