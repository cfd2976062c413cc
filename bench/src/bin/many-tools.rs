//! `many-tools`: an mcp-tool server with 1000 generated tools (`tool_0000` … `tool_0999`, each
//! `(a, b) -> a + b + i`), written by `build.rs`.
//!
//! ```text
//! many-tools                       serve all 1000 tools on stdio
//! many-tools --only tool_0500      serve one of them (the same binary, a catalog of 1)
//! many-tools --measure             time Server::build and an in-process tools/list; print JSON
//! many-tools --search              1000 deferred tools behind `search_tools`: list size,
//!                                  search latency and whether each tool is found; print JSON
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

/// The verbs and things of the deferred catalog: 40 × 25 = 1000 tools such as
/// `archive_invoice`, each described in words of its own.
const VERBS: [(&str, &str); 40] = [
    ("create", "Create a new"),
    ("delete", "Delete an existing"),
    ("update", "Update the fields of a"),
    ("get", "Fetch one"),
    ("list", "List every"),
    ("search", "Search by keyword for a"),
    ("archive", "Archive an old"),
    ("restore", "Restore an archived"),
    ("export", "Export to CSV each"),
    ("import", "Import from a file some"),
    ("approve", "Approve a pending"),
    ("reject", "Reject a pending"),
    ("assign", "Assign to a teammate a"),
    ("share", "Share with other people a"),
    ("lock", "Lock against edits a"),
    ("unlock", "Unlock for editing a"),
    ("merge", "Merge two duplicate records of a"),
    ("split", "Split in two parts a"),
    ("tag", "Add a label to a"),
    ("untag", "Remove a label from a"),
    ("count", "Count how many there are of each"),
    ("summarize", "Write a short summary of a"),
    ("translate", "Translate into another language a"),
    ("validate", "Check for mistakes a"),
    ("schedule", "Schedule for a later date a"),
    ("cancel", "Cancel a scheduled"),
    ("duplicate", "Make a copy of a"),
    ("rename", "Give a new title to a"),
    ("move", "Move into another folder a"),
    ("print", "Send to the printer a"),
    ("sign", "Add a digital signature to a"),
    ("verify", "Verify the signature of a"),
    ("encrypt", "Encrypt with a key a"),
    ("decrypt", "Decrypt with a key a"),
    ("compress", "Shrink the size of a"),
    ("preview", "Render a thumbnail of a"),
    ("publish", "Make public on the website a"),
    ("unpublish", "Take down from the website a"),
    ("remind", "Send a reminder about a"),
    ("audit", "Show the change history of a"),
];
const THINGS: [(&str, &str); 25] = [
    ("invoice", "invoice billed to a customer"),
    ("customer", "customer account of the shop"),
    ("order", "purchase order with its lines"),
    ("product", "product of the catalog with its price"),
    ("ticket", "support ticket opened by a user"),
    ("contract", "signed contract with a supplier"),
    ("employee", "employee record in human resources"),
    ("meeting", "calendar meeting with attendees"),
    ("document", "text document in the drive"),
    ("photo", "photo in the media library"),
    ("playlist", "music playlist of songs"),
    ("recipe", "cooking recipe with ingredients"),
    ("shipment", "parcel shipment with tracking"),
    ("vehicle", "fleet vehicle with its mileage"),
    ("patient", "patient file at the clinic"),
    ("course", "training course with lessons"),
    ("budget", "department budget for the year"),
    ("campaign", "marketing email campaign"),
    ("repository", "source code repository"),
    ("server", "cloud server instance"),
    ("domain", "internet domain name and its DNS"),
    ("warehouse", "warehouse stock location"),
    ("survey", "customer satisfaction survey"),
    ("flight", "airline flight booking"),
    ("room", "hotel room reservation"),
];

/// The 1000 tools of [`VERBS`] × [`THINGS`], deferred or listed.
fn catalog(deferred: bool) -> Server {
    let mut server = Server::new("catalog", env!("CARGO_PKG_VERSION"))
        .without_registry()
        .page_size(2000);
    for (verb, verb_text) in VERBS {
        for (thing, thing_text) in THINGS {
            let tool = mcp_tool::dynamic::DynamicTool::new(
                format!("{verb}_{thing}"),
                format!("{verb_text} {thing_text}."),
                |_| async { "done" },
            )
            .property(mcp_tool::dynamic::ToolProperty::string(format!("{thing}_id")).required());
            server = server.dynamic_tool(if deferred { tool.deferred() } else { tool });
        }
    }
    server
}

async fn list_bytes(client: &Client) -> usize {
    let page = client
        .request("tools/list", serde_json::json!({}))
        .await
        .expect("tools/list answers");
    serde_json::to_string(&page).map_or(0, |s| s.len())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// 1000 deferred tools: `tools/list` bytes with the tools deferred and listed, the search's
/// latency (the first, which builds the index, and then one query per tool), and how often
/// the tool a query describes comes first (a query is the tool's verb and thing in other
/// words: "<verb> <thing>").
async fn measure_search() -> mcp_tool::Result<()> {
    let listed_all = list_bytes(&Client::start(catalog(false)).await?).await;
    let mut times = Vec::new();
    let mut first = Duration::ZERO;
    let mut top1 = 0;
    let mut top5 = 0;
    let mut deferred_bytes = 0;
    for (round, (verb, _)) in VERBS.iter().enumerate() {
        // A fresh client per verb: revealed tools stay out of the next round's list.
        let client = Client::start(catalog(true)).await?;
        if round == 0 {
            deferred_bytes = list_bytes(&client).await;
        }
        for (i, (thing, _)) in THINGS.iter().enumerate() {
            let query = format!("{verb} {thing}");
            let t = Instant::now();
            let r = client
                .call("search_tools", serde_json::json!({ "query": query }))
                .await
                .expect("search_tools answers");
            let took = t.elapsed();
            if round == 0 && i == 0 {
                first = took;
            } else {
                times.push(took);
            }
            let names: Vec<String> = r
                .structured()
                .and_then(|s| s["tools"].as_array().cloned())
                .unwrap_or_default()
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect();
            let want = format!("{verb}_{thing}");
            top1 += usize::from(names.first() == Some(&want));
            top5 += usize::from(names.contains(&want));
        }
    }
    times.sort();
    println!(
        "{}",
        serde_json::json!({
            "tools": VERBS.len() * THINGS.len(),
            "list_bytes_all_listed": listed_all,
            "list_bytes_deferred": deferred_bytes,
            "first_search_us": first.as_micros() as u64,
            "search_p50_us": percentile(&times, 0.5).as_micros() as u64,
            "search_p99_us": percentile(&times, 0.99).as_micros() as u64,
            "queries": times.len() + 1,
            "found_first": top1,
            "found_in_top5": top5,
        })
    );
    Ok(())
}

fn main() -> mcp_tool::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--search") {
        return tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?
            .block_on(measure_search());
    }
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
