//! A server whose tool `stuck` blocks a pool thread for ever (as a read that never returns
//! would), for `tests/exit.rs` and `tests/runtime.rs`: the process must exit all the same once
//! its input closes or it gets SIGTERM, and serve other calls meanwhile, on one thread as on
//! several. `stuck` creates the file named by `STUCK_MARKER` once it runs; `waits` (which creates
//! `WAITS_MARKER`) awaits for ever (an async tool holding only its own call); `quick` answers at once;
//! `thread` names the thread its call ran on.

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

/// Never answers: awaits for ever, as a call to a remote that never answers would.
#[tool]
async fn waits() -> String {
    if let Some(marker) = std::env::var_os("WAITS_MARKER") {
        std::fs::write(marker, b"waiting").expect("the marker is written");
    }
    std::future::pending::<()>().await;
    String::new()
}

/// Answers at once.
#[tool]
fn quick(a: i64) -> i64 {
    a + 1
}

/// Names the thread the call runs on (`main`, or `http-N` for the other threads serving HTTP
/// connections).
#[tool]
async fn thread() -> String {
    std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .to_owned()
}

fn main() -> mcp_tool::Result<()> {
    Server::new("stuck", "0")
        .only(["stuck", "waits", "quick", "thread"])
        // The grace for calls in flight at shutdown is not what is tested: keep it short.
        .limits(Limits::default().shutdown_grace(Duration::from_millis(500)))
        .run()
}
