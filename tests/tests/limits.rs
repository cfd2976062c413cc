//! The bounds a server keeps whatever its client does, over the stdio code path (an in-memory
//! pipe): oversized messages, a client that does not read, a client that never answers, too
//! many calls at once, the handshake's order, and answers owed when the input ends.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_tool::extract::{Elicitation, State};
use mcp_tool::prelude::*;
use mcp_tool::server::Limits;
use mcp_tool::testing::{Client, serve_io};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const WAIT: Duration = Duration::from_secs(10);

/// Counts its calls.
#[tool]
fn tick(count: State<Arc<AtomicUsize>>) -> String {
    let n = count.fetch_add(1, Ordering::SeqCst) + 1;
    // A long answer, so that a few of them fill a small outbound queue.
    format!("{n}:{}", "x".repeat(4096))
}

/// Sleeps a while.
#[tool]
async fn nap(ms: u64) -> &'static str {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    "rested"
}

#[derive(Deserialize, JsonSchema)]
struct Sure {
    /// Really?
    sure: bool,
}

/// Asks the user.
#[tool]
async fn ask(ctx: Ctx) -> Result<String, ToolError> {
    match ctx.elicit::<Sure>("Sure?").await? {
        Elicitation::Accept(Sure { sure }) => Ok(format!("sure: {sure}")),
        _ => Ok("no answer".into()),
    }
}

/// Takes a whole struct of arguments.
#[derive(Deserialize, JsonSchema)]
struct Point {
    x: u8,
    y: u8,
}

/// Adds a point's coordinates.
#[tool]
fn sum_point(Args(p): Args<Point>) -> u16 {
    u16::from(p.x) + u16::from(p.y)
}

fn server(limits: Limits) -> Server {
    Server::new("limits", "0")
        .only(["tick", "nap", "ask", "sum_point"])
        .state(Arc::new(AtomicUsize::new(0)))
        .limits(limits)
}

#[tokio::test]
async fn a_message_over_the_limit_is_refused_and_the_next_served() {
    let c = Client::start(server(Limits::default().max_message(64 * 1024)))
        .await
        .unwrap();
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{{"name":"nap","arguments":{{"ms":0}},"pad":"{}"}}}}"#,
        "y".repeat(200 * 1024)
    );
    c.send_raw(&long).await;
    let refused = c
        .next_message(WAIT)
        .await
        .expect("an answer to the long line");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(refused["id"], Value::Null);
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("65536"),
        "{refused}"
    );
    assert_eq!(
        c.call("nap", json!({ "ms": 0 })).await.unwrap().text(),
        "rested"
    );
}

#[tokio::test]
async fn a_client_that_does_not_read_stops_the_reading_not_the_memory() {
    let count = Arc::new(AtomicUsize::new(0));
    let handle = Server::new("limits", "0")
        .only(["tick"])
        .state(count.clone())
        .limits(Limits::default().outbound_queue(64 * 1024))
        .build()
        .unwrap();
    let (client, server_end) = tokio::io::duplex(16 * 1024);
    let (server_read, server_write) = tokio::io::split(server_end);
    tokio::spawn(serve_io(handle, server_read, server_write));
    let (client_read, mut client_write) = tokio::io::split(client);
    client_write
        .write_all(
            format!(
                "{}\n",
                json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
                    "protocolVersion":"2025-11-25","capabilities":{},
                    "clientInfo":{"name":"t","version":"0"}}})
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    client_write
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .await
        .unwrap();
    // Writes 2,000 calls while reading nothing, from a task of its own (the server stops
    // reading, so this writer blocks too).
    let total = 2000;
    let writer = tokio::spawn(async move {
        for i in 1..=total {
            let line = json!({"jsonrpc":"2.0","id":i,"method":"tools/call",
                "params":{"name":"tick","arguments":{}}});
            if client_write
                .write_all(format!("{line}\n").as_bytes())
                .await
                .is_err()
            {
                return;
            }
        }
        let _ = client_write.flush().await;
        // Keep the input open until the test ends.
        tokio::time::sleep(Duration::from_secs(30)).await;
    });
    // Let the server run until it stalls.
    let mut last = 0;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let now = count.load(Ordering::SeqCst);
        if now == last && now > 0 {
            break;
        }
        last = now;
    }
    let stalled = count.load(Ordering::SeqCst);
    assert!(
        stalled < total / 2,
        "the server ran {stalled} of {total} calls for a client that reads nothing"
    );
    // Reading resumes the server: every call is answered, once.
    let mut lines = BufReader::new(client_read).lines();
    let mut answered = std::collections::BTreeSet::new();
    while answered.len() < total + 1 {
        let line = tokio::time::timeout(WAIT, lines.next_line())
            .await
            .expect("answers keep coming")
            .unwrap()
            .expect("a line");
        let v: Value = serde_json::from_str(&line).unwrap();
        assert!(answered.insert(v["id"].as_i64().unwrap()), "twice: {line}");
    }
    assert_eq!(count.load(Ordering::SeqCst), total);
    writer.abort();
}

#[tokio::test]
async fn a_client_that_never_answers_fails_the_call_after_the_wait() {
    let c = Client::connect(server(
        Limits::default().client_wait(Duration::from_millis(200)),
    ))
    .unwrap();
    c.initialize_with("2025-11-25", json!({ "elicitation": {} }))
        .await
        .unwrap();
    let (_, answer) = c
        .start_request("tools/call", json!({ "name": "ask", "arguments": {} }))
        .await;
    let asked = c.wait_for("elicitation/create", WAIT).await.unwrap();
    assert!(asked["id"].is_number());
    // Never answered.
    let result = tokio::time::timeout(WAIT, answer).await.unwrap().unwrap();
    assert_eq!(result["result"]["isError"], true, "{result}");
    assert!(
        result["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("did not answer"),
        "{result}"
    );
}

#[tokio::test]
async fn calls_beyond_the_in_flight_limit_are_refused() {
    let c = Client::start(server(Limits::default().max_in_flight(2)))
        .await
        .unwrap();
    let (_, first) = c
        .start_request(
            "tools/call",
            json!({"name": "nap", "arguments": {"ms": 2000}}),
        )
        .await;
    let (_, second) = c
        .start_request(
            "tools/call",
            json!({"name": "nap", "arguments": {"ms": 2000}}),
        )
        .await;
    let e = c.call("nap", json!({ "ms": 0 })).await.unwrap_err();
    assert_eq!(e.code, -32603, "{e:?}");
    assert!(e.message.contains("too many calls"), "{e:?}");
    for answer in [first, second] {
        let v = tokio::time::timeout(WAIT, answer).await.unwrap().unwrap();
        assert_eq!(v["result"]["content"][0]["text"], "rested");
    }
    // Room again.
    assert_eq!(
        c.call("nap", json!({"ms": 0})).await.unwrap().text(),
        "rested"
    );
}

#[tokio::test]
async fn the_handshake_comes_first_and_once() {
    let c = Client::connect(server(Limits::default())).unwrap();
    let e = c.request("tools/list", json!({})).await.unwrap_err();
    assert_eq!(e.code, -32600, "{e:?}");
    assert!(e.message.contains("initialize"), "{e:?}");
    // `ping` is fine before it.
    c.request("ping", json!({})).await.unwrap();
    c.initialize("2025-11-25").await.unwrap();
    let e = c.initialize("2024-11-05").await.unwrap_err();
    assert_eq!(e.code, -32600, "{e:?}");
    // The session stays at the version it negotiated.
    assert_eq!(
        c.call("nap", json!({"ms": 0})).await.unwrap().text(),
        "rested"
    );
    // A 2026-07-28 request needs no handshake on a fresh connection.
    let fresh = Client::connect(server(Limits::default())).unwrap();
    let list = fresh
        .request(
            "tools/list",
            json!({"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }}),
        )
        .await
        .unwrap();
    assert!(list["tools"].is_array());
}

#[tokio::test]
async fn whole_argument_structs_refuse_unknown_fields_and_take_whole_floats() {
    let c = Client::start(server(Limits::default())).await.unwrap();
    let bad = c
        .call("sum_point", json!({"x": 1, "y": 2, "isAdmin": true}))
        .await
        .unwrap();
    assert!(bad.is_error() && bad.text().contains("isAdmin"), "{bad:?}");
    let ok = c
        .call("sum_point", json!({"x": 1.0, "y": 2}))
        .await
        .unwrap();
    assert_eq!(ok.text(), "3", "{ok:?}");
    let fraction = c
        .call("sum_point", json!({"x": 1.5, "y": 2}))
        .await
        .unwrap();
    assert!(
        fraction.is_error() && fraction.text().contains('x'),
        "{fraction:?}"
    );
}

#[tokio::test]
async fn a_question_pending_when_the_input_ends_fails_at_once() {
    let handle = Server::new("limits", "0")
        .only(["ask"])
        // Long enough that only an immediate failure answers within the test's wait.
        .limits(Limits::default().shutdown_grace(Duration::from_secs(60)))
        .build()
        .unwrap();
    let (client, server_end) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_end);
    let served = tokio::spawn(serve_io(handle, server_read, server_write));
    let (client_read, mut client_write) = tokio::io::split(client);
    for line in [
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},
            "clientInfo":{"name":"t","version":"0"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{}}}),
    ] {
        client_write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
    let mut lines = BufReader::new(client_read).lines();
    let mut next = async || -> Value {
        let line = tokio::time::timeout(WAIT, lines.next_line())
            .await
            .expect("a message in time")
            .unwrap()
            .expect("a line");
        serde_json::from_str(&line).unwrap()
    };
    assert_eq!(next().await["id"], 0);
    assert_eq!(next().await["method"], "elicitation/create");
    // The client leaves without answering.
    client_write.shutdown().await.unwrap();
    drop(client_write);
    let answer = next().await;
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    tokio::time::timeout(WAIT, served)
        .await
        .expect("the server ends")
        .unwrap()
        .unwrap();
}
