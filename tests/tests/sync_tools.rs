//! Where synchronous tools run: on the blocking pool until they have shown they are quick,
//! then on the async worker handling the call; back to the pool for good after a slow call on
//! the worker; always on the pool with `#[tool(blocking)]`.
//!
//! Each test runs on a current-thread runtime, so "on the worker" means "on the test's own
//! thread". Every tool here is used by one test only: its policy lives as long as the process.
//!
//! On a busy machine any call may be preempted for a millisecond or more; on the worker, such a
//! call rightly sends its tool back to the pool. The runtime times the tool's body, a part of
//! what a test times around `call`: so a call the test saw take under 1 ms was quick for the
//! runtime too, and the tests check where calls run only after calls they saw were quick.

use std::sync::Mutex;
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use mcp_tool::prelude::*;
use mcp_tool::server::ServerHandle;
use serde_json::json;

static SEEN: Mutex<Vec<(&'static str, ThreadId)>> = Mutex::new(Vec::new());

fn seen(tool: &'static str) {
    SEEN.lock().unwrap().push((tool, thread::current().id()));
}

/// The threads each call of `tool` ran on, in order.
fn threads_of(tool: &str) -> Vec<ThreadId> {
    SEEN.lock()
        .unwrap()
        .iter()
        .filter(|(t, _)| *t == tool)
        .map(|(_, id)| *id)
        .collect()
}

/// Quick.
#[tool]
fn quick(a: i64) -> i64 {
    seen("quick");
    a + 1
}

/// Quick, but marked as one that may block.
#[tool(blocking)]
fn marked_blocking(a: i64) -> i64 {
    seen("marked_blocking");
    a + 1
}

/// Always takes 300 µs.
#[tool]
fn steady_slow() -> &'static str {
    seen("steady_slow");
    thread::sleep(Duration::from_micros(300));
    "done"
}

/// Quick unless asked to sleep.
#[tool]
fn sometimes_slow(sleep_ms: u64) -> &'static str {
    seen("sometimes_slow");
    thread::sleep(Duration::from_millis(sleep_ms));
    "done"
}

async fn call_n(core: &ServerHandle, tool: &str, args: serde_json::Value, n: usize) {
    for _ in 0..n {
        let result = core.call(tool, args.clone()).await.expect("a known tool");
        assert!(!result.is_error, "{tool}: {}", result.text_content());
    }
}

/// A call on the worker this long sends its tool back to the blocking pool.
const TOO_SLOW: Duration = Duration::from_millis(1);

/// Calls `tool` once; true when the call took less than [`TOO_SLOW`], timed around it.
async fn call_quickly(core: &ServerHandle, tool: &str, args: serde_json::Value) -> bool {
    let started = Instant::now();
    call_n(core, tool, args, 1).await;
    started.elapsed() < TOO_SLOW
}

fn core(tool: &str) -> ServerHandle {
    Server::new("sync", "1.0.0")
        .only([tool])
        .build()
        .expect("the server builds")
}

/// Calls `tool` until a call runs on this (the worker's) thread; returns how many calls that
/// took, and whether that last call was quick (so the tool is still on the worker). (A call
/// preempted on a busy machine can take over 100 µs and restart the count, so this allows for
/// more than the 17 calls an idle machine needs.)
async fn calls_until_inline(
    core: &ServerHandle,
    tool: &'static str,
    args: serde_json::Value,
) -> (usize, bool) {
    let me = thread::current().id();
    for n in 1..=500 {
        let quick = call_quickly(core, tool, args.clone()).await;
        if threads_of(tool).last() == Some(&me) {
            if !quick {
                eprintln!(
                    "{tool}: its first call on the worker took 1 ms or more (a busy machine)"
                );
            }
            return (n, quick);
        }
    }
    panic!("{tool} never ran on the worker in 500 quick calls");
}

#[tokio::test]
async fn a_quick_tool_moves_to_the_worker_after_16_quick_calls() {
    let core = core("quick");
    let (n, mut quick) = calls_until_inline(&core, "quick", json!({ "a": 1 })).await;
    assert!(
        n >= 17,
        "the first 16 calls run on the blocking pool, not {n}"
    );
    // Once on the worker, it stays there while its calls are quick: each call after a quick
    // one runs on the worker. (One that took 1 ms or more may send it back to the pool.)
    let me = thread::current().id();
    let mut checked = 0;
    while quick && checked < 20 {
        quick = call_quickly(&core, "quick", json!({ "a": 1 })).await;
        let threads = threads_of("quick");
        assert_eq!(
            threads.last(),
            Some(&me),
            "a call after quick calls on the worker ran elsewhere: {threads:?} (worker {me:?})"
        );
        checked += 1;
    }
    if checked < 20 {
        eprintln!("quick: a call took 1 ms or more (a busy machine); {checked} calls checked");
    }
}

/// Calls `tool` `n` times and checks that no call ran on the worker.
async fn stays_on_the_pool(tool: &'static str, args: serde_json::Value, n: usize) {
    let core = core(tool);
    call_n(&core, tool, args, n).await;
    let me = thread::current().id();
    let threads = threads_of(tool);
    assert_eq!(threads.len(), n);
    assert!(threads.iter().all(|t| *t != me), "{tool}: {threads:?}");
}

#[tokio::test]
async fn a_blocking_tool_stays_on_the_pool() {
    stays_on_the_pool("marked_blocking", json!({ "a": 1 }), 40).await;
}

#[tokio::test]
async fn a_tool_slower_than_100_us_stays_on_the_pool() {
    stays_on_the_pool("steady_slow", json!({}), 30).await;
}

#[tokio::test]
async fn a_slow_call_on_the_worker_sends_the_tool_back_to_the_pool_for_good() {
    let core = core("sometimes_slow");
    let (n, quick) = calls_until_inline(&core, "sometimes_slow", json!({ "sleep_ms": 0 })).await;
    // On the worker now: this call is slow (5 ms ≥ 1 ms), and runs there (unless the call that
    // got there was itself slow, and already sent the tool back).
    call_n(&core, "sometimes_slow", json!({ "sleep_ms": 5 }), 1).await;
    call_n(&core, "sometimes_slow", json!({ "sleep_ms": 0 }), 30).await;
    let me = thread::current().id();
    let threads = threads_of("sometimes_slow");
    assert_eq!(threads.len(), n + 31);
    if quick {
        assert_eq!(
            threads[n], me,
            "the slow call ran on the worker: {threads:?}"
        );
    }
    assert!(
        threads[n + 1..].iter().all(|t| *t != me),
        "after the slow call, every call runs on the pool again: {threads:?}"
    );
}

#[tokio::test]
async fn a_panic_on_the_worker_is_an_error_result() {
    /// Panics on request.
    #[tool]
    fn panics_on_request(panic: bool) -> &'static str {
        seen("panics_on_request");
        assert!(!panic, "asked to panic");
        "fine"
    }
    let core = core("panics_on_request");
    let (_, quick) =
        calls_until_inline(&core, "panics_on_request", json!({ "panic": false })).await;
    let result = core
        .call("panics_on_request", json!({ "panic": true }))
        .await
        .expect("a known tool");
    assert!(result.is_error);
    assert!(
        result.text_content().contains("asked to panic"),
        "{}",
        result.text_content()
    );
    let me = thread::current().id();
    let threads = threads_of("panics_on_request");
    if quick {
        assert_eq!(
            threads.last(),
            Some(&me),
            "the panicking call ran on the worker: {threads:?} (worker {me:?})"
        );
    }
    // The server goes on: the next calls are answered.
    call_n(&core, "panics_on_request", json!({ "panic": false }), 2).await;
}
