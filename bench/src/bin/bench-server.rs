//! `bench-server`: the benchmark's tools written with mcp-tool the way a user writes them.
//!
//! `add {a, b}` answers the sum as text; `create_user` is seed 001's tool with its full schema
//! (email format, name of 2–100 characters, a role enum defaulting to `user`, optional string
//! metadata) and answers `Json<User>`. Validation is mcp-tool's default (on). `wait {ms}` waits
//! (calls in flight for the `memory` leg). `quick_job {n}`
//! may run as a task; one client may hold a million tasks (the default is 1000), so that the
//! `tasks` leg keeps its 10 000 tasks for their time to live. With `BENCH_SERVER_LIMITS=default`
//! (the soak) every bound is the framework's default instead. `BENCH_SERVER_MIDDLEWARE` adds
//! middleware, to count what it costs: `noop` (one layer that only passes calls on), `rate`,
//! `mask`, `budget`, `audit` (the built-ins, with a limit and a budget no call reaches), or
//! `all` (the four).
//!
//! ```text
//! bench-server                              MCP on stdio
//! bench-server --http 127.0.0.1:8080        Streamable HTTP with sessions
//! bench-server --sessionless --http ADDR    Streamable HTTP, sessionless JSON mode
//! ```

use mcp_tool::middleware::{
    Audit, Call, CallFuture, MaskErrors, Middleware, Next, Rate, RateLimit, ResultBudget,
};
use mcp_tool::prelude::*;
use mcp_tool::server::Limits;
use mcp_tool::server::tasks::TaskSettings;

#[path = "../bench_tools.rs"]
mod bench_tools;
use bench_tools::Users;

/// A layer that passes every call on: the cost of the stack itself.
struct Noop;

impl Middleware for Noop {
    fn call<'a>(&'a self, call: Call<'a>, next: Next<'a>) -> CallFuture<'a> {
        next.run(call)
    }
}

/// The server with the middleware `BENCH_SERVER_MIDDLEWARE` names.
fn with_middleware(server: Server) -> Server {
    let rate = || RateLimit::new(Rate::parse("1000000000/1s").expect("a rate"));
    let budget = || ResultBudget::new(1 << 20);
    match std::env::var("BENCH_SERVER_MIDDLEWARE").as_deref() {
        Ok("noop") => server.middleware(Noop),
        Ok("rate") => server.middleware(rate()),
        Ok("mask") => server.middleware(MaskErrors),
        Ok("budget") => server.middleware(budget()),
        Ok("audit") => server.middleware(Audit),
        Ok("all") => server
            .middleware(Audit)
            .middleware(rate())
            .middleware(MaskErrors)
            .middleware(budget()),
        _ => server,
    }
}

fn main() -> mcp_tool::Result<()> {
    // `--sessionless` and `--http` are the command line every server has.
    let server = with_middleware(
        Server::new("bench-server", env!("CARGO_PKG_VERSION")).service(Users::default()),
    );
    // `BENCH_SERVER_LIMITS=default` (the soak): every bound as a deployed server has it.
    if std::env::var("BENCH_SERVER_LIMITS").is_ok_and(|v| v == "default") {
        return server.run();
    }
    server
        .task_settings(TaskSettings {
            max_per_owner: 1_000_000,
            ..TaskSettings::default()
        })
        // The `memory` leg holds 10 000 sessions, all of one client, and 10 000 calls in
        // flight on one connection: beyond the defaults (10 000, 1 000 a client and 1024), as
        // rmcp has no such bounds.
        .limits(
            Limits::default()
                .max_sessions(1_000_000)
                .max_sessions_per_client(1_000_000)
                .max_in_flight(1_000_000),
        )
        .run()
}
