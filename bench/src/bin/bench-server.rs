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

use mcp_tool::prelude::*;

#[path = "../bench_tools.rs"]
mod bench_tools;
use bench_tools::Users;

fn main() -> mcp_tool::Result<()> {
    // `--stateless` and `--http` are the command line every server has.
    Server::new("bench-server", env!("CARGO_PKG_VERSION"))
        .service(Users::default())
        .run()
}
