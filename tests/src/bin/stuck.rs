//! A server whose one tool blocks a pool thread for ever (as a read that never returns
//! would), for `tests/exit.rs`: the process must exit all the same once its input closes or
//! it gets SIGTERM. The tool creates the file named by `STUCK_MARKER` once it runs.

use std::time::Duration;

use mcp_tool::prelude::*;
use mcp_tool::server::Limits;

/// Never returns.
#[tool(blocking)]
fn stuck() -> String {
    if let Some(marker) = std::env::var_os("STUCK_MARKER") {
        std::fs::write(marker, b"running").expect("the marker is written");
    }
    loop {
        std::thread::park();
    }
}

fn main() -> mcp_tool::Result<()> {
    Server::new("stuck", "0")
        .only(["stuck"])
        // The grace for calls in flight at shutdown is not what is tested: keep it short.
        .limits(Limits::default().shutdown_grace(Duration::from_millis(500)))
        .run()
}
