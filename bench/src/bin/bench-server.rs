//! `bench-server`: the benchmark's tools written with mcp-tool the way a user writes them.
//!
//! `add {a, b}` answers the sum as text; `create_user` is seed 001's tool with its full schema
//! (email format, name of 2–100 characters, a role enum defaulting to `user`, optional string
//! metadata) and answers `Json<User>`. Validation is mcp-tool's default (on).
//!
//! ```text
//! bench-server                              MCP on stdio
//! bench-server --http 127.0.0.1:8080        Streamable HTTP with sessions
//! bench-server --stateless --http ADDR      Streamable HTTP, stateless JSON mode
//! ```

use mcp_tool::HttpConfig;
use mcp_tool::prelude::*;

#[path = "../bench_tools.rs"]
mod bench_tools;
use bench_tools::Users;

fn main() -> mcp_tool::Result<()> {
    let mut args: Vec<String> = std::env::args().collect();
    let mut http = HttpConfig::default();
    args.retain(|a| match a.as_str() {
        "--stateless" => {
            http.stateless = true;
            false
        }
        "--session" => {
            http.stateless = false;
            false
        }
        _ => true,
    });
    Server::new("bench-server", env!("CARGO_PKG_VERSION"))
        .service(Users::default())
        .http_config(http)
        .run_with_args(args)
}
