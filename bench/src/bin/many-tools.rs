//! `many-tools`: an mcp-tool server with 1000 generated tools (`tool_0000` … `tool_0999`, each
//! `(a, b) -> a + b + i`), written by `build.rs`.
//!
//! ```text
//! many-tools                       serve all 1000 tools on stdio
//! many-tools --only tool_0500      serve one of them (the same binary, a catalog of 1)
//! many-tools --measure             time Server::build and an in-process tools/list; print JSON
//! ```

use std::time::{Duration, Instant};

use mcp_tool::prelude::*;
use mcp_tool::testing::Client;

include!(concat!(env!("OUT_DIR"), "/many_tools.rs"));

fn server() -> Server {
    Server::new("many-tools", env!("CARGO_PKG_VERSION"))
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Times `Server::build` (first and median of 20) and `tools/list` through the in-process
/// client (first and median of 50), and prints them as one JSON object.
async fn measure() -> mcp_tool::Result<()> {
    let t = Instant::now();
    let core = server().build()?;
    let first_build = t.elapsed();
    let tools = core.tools().len();
    drop(core);
    let builds: Vec<Duration> = (0..20)
        .map(|_| {
            let t = Instant::now();
            let core = server().build().expect("the tools are valid");
            let took = t.elapsed();
            drop(core);
            took
        })
        .collect();
    let client = Client::start(server()).await?;
    let mut lists = Vec::new();
    let mut listed = 0;
    for _ in 0..51 {
        let t = Instant::now();
        let page = client
            .request("tools/list", serde_json::json!({}))
            .await
            .expect("tools/list answers");
        lists.push(t.elapsed());
        listed = page["tools"].as_array().map_or(0, Vec::len);
    }
    let first_list = lists.remove(0);
    // The same tool with a catalog of 1 and of 1000, interleaved in rounds so that neither
    // gets a warmer runtime or blocking pool.
    let single_core = server().only(["tool_0500"]).build()?;
    let all_core = server().build()?;
    let (mut call_1, mut call_1000) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..10 {
        for (core, total) in [(&single_core, &mut call_1), (&all_core, &mut call_1000)] {
            let t = Instant::now();
            for _ in 0..200 {
                let r = core
                    .call("tool_0500", serde_json::json!({"a": 1, "b": 2}))
                    .await
                    .expect("the tool exists");
                assert!(!r.is_error);
            }
            *total += t.elapsed();
        }
    }
    let (call_1, call_1000) = (call_1 / 2000, call_1000 / 2000);
    println!(
        "{}",
        serde_json::json!({
            "tools": tools,
            "listed": listed,
            "first_build_us": first_build.as_micros() as u64,
            "build_us": median(builds).as_micros() as u64,
            "first_list_us": first_list.as_micros() as u64,
            "list_us": median(lists).as_micros() as u64,
            "call_1_tool_ns": call_1.as_nanos() as u64,
            "call_1000_tools_ns": call_1000.as_nanos() as u64,
        })
    );
    Ok(())
}

fn main() -> mcp_tool::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--measure") {
        return tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?
            .block_on(measure());
    }
    if args.get(1).map(String::as_str) == Some("--only") {
        let names: Vec<String> = args[2..].to_vec();
        return server().only(names).run_with_args(args.into_iter().take(1));
    }
    server().run()
}
