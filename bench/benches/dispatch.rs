//! In-process dispatch cost per call, without processes or pipes:
//!
//! - `core_call/*`: `ServerCore::call` (validation, the tool, the result; no JSON-RPC text);
//!   `add` is a sync fn (mcp-tool runs it on the blocking pool), `add_async` the same tool as
//!   an `async fn`, `create_user_invalid` a call that fails validation;
//! - `client_call/*`: `mcp_tool::testing::Client::call`, the whole JSON-RPC path (parse,
//!   route, validate, run, render, write a line) over an in-memory pipe, one call at a time;
//! - `tools_list`: a `tools/list` request through the client (two tools).
//!
//! Run with `cargo bench -p mcp-tool-bench --bench dispatch`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_tool::Server;
use mcp_tool::testing::Client;
use serde_json::json;

#[path = "../src/bench_tools.rs"]
mod bench_tools;
use bench_tools::Users;

fn server() -> Server {
    Server::new("dispatch", "0").service(Users::default())
}

fn dispatch(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let core = server().build().expect("the tools are valid");
    let add = json!({ "a": 2, "b": 3 });
    let user = json!({
        "email": "jane.doe@example.com",
        "name": "Jane Doe",
        "role": "admin",
        "metadata": { "team": "bench" }
    });
    let bad_user = json!({ "email": "not-an-email", "name": "J" });

    c.bench_function("core_call/add", |b| {
        b.iter(|| {
            let r = rt.block_on(core.call("add", black_box(add.clone())));
            assert!(!r.expect("add exists").is_error);
        });
    });
    c.bench_function("core_call/add_async", |b| {
        b.iter(|| {
            let r = rt.block_on(core.call("add_async", black_box(add.clone())));
            assert!(!r.expect("add_async exists").is_error);
        });
    });
    c.bench_function("core_call/create_user", |b| {
        b.iter(|| {
            let r = rt.block_on(core.call("create_user", black_box(user.clone())));
            assert!(!r.expect("create_user exists").is_error);
        });
    });
    c.bench_function("core_call/create_user_invalid", |b| {
        b.iter(|| {
            let r = rt.block_on(core.call("create_user", black_box(bad_user.clone())));
            assert!(r.expect("create_user exists").is_error);
        });
    });

    let client = rt
        .block_on(Client::start(server()))
        .expect("the server starts");
    c.bench_function("client_call/add", |b| {
        b.iter(|| {
            let r = rt.block_on(client.call("add", black_box(add.clone())));
            assert_eq!(r.expect("add answers").text(), "5");
        });
    });
    c.bench_function("client_call/create_user", |b| {
        b.iter(|| {
            let r = rt.block_on(client.call("create_user", black_box(user.clone())));
            assert!(!r.expect("create_user answers").is_error());
        });
    });
    c.bench_function("tools_list", |b| {
        b.iter(|| {
            let r = rt.block_on(client.request("tools/list", json!({})));
            assert!(r.expect("tools/list answers")["tools"].is_array());
        });
    });
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
