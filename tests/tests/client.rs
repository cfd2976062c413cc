//! `mcp_tool::client` against servers that misbehave: a message larger than the client reads
//! (as JSON, and as an SSE event that never ends), a tool list that pages for ever, a
//! character split between two chunks of a stream, and more questions at once than the client
//! answers. Each fails the requests it
//! concerns with an error that says why, and nothing is kept without a bound.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use mcp_tool::client::{ClientFuture, ClientHandler, Connect, McpClient, VersionChoice};
use mcp_tool::protocol::RpcError;
use mcp_tool_tests::{User, example_bin};
use serde_json::{Value, json};

/// More than the client reads of one message (64 MiB).
const HUGE: usize = (64 << 20) + 1024;

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// An SSE answer sent in the given chunks, a pause between each (so each is read alone).
fn stream(chunks: Vec<Vec<u8>>) -> Response {
    let body = futures_util::stream::unfold(chunks.into_iter(), |mut chunks| async move {
        let chunk = chunks.next()?;
        tokio::time::sleep(Duration::from_millis(20)).await;
        Some((Ok::<_, std::io::Error>(chunk), chunks))
    });
    (
        [(header::CONTENT_TYPE, "text/event-stream")],
        Body::from_stream(body),
    )
        .into_response()
}

/// A 2025-11-25 server over Streamable HTTP whose `tools/list` pages for ever, and whose
/// `tools/call` answers by the tool's name:
/// `huge_json` a JSON body over the client's limit, `huge_event` an SSE event over it (its
/// data line never ends), `split` an SSE answer whose text has characters cut between chunks.
async fn odd_server() -> String {
    let handle = |body: String| async move {
        let message: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        let id = message["id"].clone();
        if id.is_null() {
            return StatusCode::ACCEPTED.into_response();
        }
        let answer = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
        match (
            message["method"].as_str().unwrap_or_default(),
            message["params"]["name"].as_str().unwrap_or_default(),
        ) {
            ("initialize", _) => (
                [(header::CONTENT_TYPE, "application/json")],
                answer(json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "odd", "version": "1.0.0"}
                }))
                .to_string(),
            )
                .into_response(),
            ("tools/list", _) => {
                // A thousand tools a page, and always a next page.
                let page = message["params"]["cursor"]
                    .as_str()
                    .and_then(|c| c.parse::<u64>().ok())
                    .unwrap_or(0);
                let tools: Vec<Value> = (0..1000)
                    .map(|i| json!({"name": format!("t{page}_{i}"), "inputSchema": {"type": "object"}}))
                    .collect();
                (
                    [(header::CONTENT_TYPE, "application/json")],
                    answer(json!({"tools": tools, "nextCursor": (page + 1).to_string()}))
                        .to_string(),
                )
                    .into_response()
            }
            ("tools/call", "huge_json") => {
                let result = json!({"content": [{"type": "text", "text": "x".repeat(HUGE)}]});
                (
                    [(header::CONTENT_TYPE, "application/json")],
                    answer(result).to_string(),
                )
                    .into_response()
            }
            ("tools/call", "huge_event") => {
                let mut chunks = vec![b"data: {\"jsonrpc\":\"2.0\",\"text\":\"".to_vec()];
                chunks.extend((0..HUGE / (1 << 20) + 1).map(|_| vec![b'x'; 1 << 20]));
                stream(chunks)
            }
            ("tools/call", "split") => {
                let event = format!(
                    "id: 1\ndata: {}\n\n",
                    answer(json!({"content": [{"type": "text", "text": "zażółć gęślą jaźń"}]}))
                );
                // Three bytes a chunk: most of its two-byte characters are cut in half.
                let chunks = event.as_bytes().chunks(3).map(<[u8]>::to_vec).collect();
                stream(chunks)
            }
            _ => StatusCode::NOT_FOUND.into_response(),
        }
    };
    mcp_tool_tests::serve_mcp(handle).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_much_from_a_server_is_cut_off_named_and_split_characters_arrive_whole() {
    let url = odd_server().await;
    let client =
        McpClient::connect(Connect::http(&url).protocol_version(VersionChoice::V2025_11_25))
            .await
            .expect("connect");
    for tool in ["huge_json", "huge_event"] {
        let refused = client.call(tool, json!({})).await;
        let said = match &refused {
            Err(e) => e.to_string(),
            Ok(v) => panic!("{tool}: answered {}", &v.to_string()[..200]),
        };
        assert!(
            said.contains("over the limit of 67108864"),
            "{tool}: {said}"
        );
    }
    // A list that never ends is cut off, named.
    let listed = client.list_tools().await;
    assert!(
        matches!(&listed, Err(e) if e.to_string().contains("more than 100000 tools")),
        "{:?}",
        listed.map(|t| t.len())
    );
    // The connection is still good for the next call.
    let split = client.call("split", json!({})).await.expect("split");
    assert_eq!(text(&split), "zażółć gęślą jaźń");
    client.close().await;
}
/// A user who holds every question until told to answer, counting them.
struct Held {
    user: User,
    asked: AtomicUsize,
    answer: tokio::sync::watch::Receiver<bool>,
}

impl ClientHandler for Held {
    fn capabilities(&self) -> Value {
        self.user.capabilities()
    }

    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> ClientFuture<'a, Result<Value, RpcError>> {
        Box::pin(async move {
            self.asked.fetch_add(1, Ordering::SeqCst);
            let mut answer = self.answer.clone();
            let _ = answer.wait_for(|go| *go).await;
            self.user.request(method, params).await
        })
    }
}

/// A server that asks more questions at once than the client answers (256) has the rest
/// refused at once, named, instead of the client holding a task for each without a bound;
/// those it holds are answered when the user answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_answers_at_most_256_of_the_servers_questions_at_once() {
    let (answer, answering) = tokio::sync::watch::channel(false);
    let held = Arc::new(Held {
        user: User::default(),
        asked: AtomicUsize::new(0),
        answer: answering,
    });
    let client = Arc::new(
        McpClient::connect_with(
            Connect::stdio(example_bin("conformance"), Vec::<String>::new())
                .protocol_version(VersionChoice::V2025_11_25),
            held.clone(),
        )
        .await
        .expect("start the conformance example"),
    );
    let calls: Vec<_> = (0..300)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { client.call("test_streaming_elicitation", json!({})).await })
        })
        .collect();
    // The 44 beyond the bound end without an answer from the user.
    let asked = || held.asked.load(Ordering::SeqCst);
    let finished =
        |calls: &[tokio::task::JoinHandle<_>]| calls.iter().filter(|c| c.is_finished()).count();
    let deadline = Instant::now() + Duration::from_secs(60);
    while (finished(&calls) < 44 || asked() < 256) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // And no more: the others wait for the user.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!((finished(&calls), asked()), (44, 256));
    let mut refused = 0;
    let mut still = Vec::new();
    for call in calls {
        if call.is_finished() {
            let outcome = call.await.expect("the call's task");
            let said = match &outcome {
                Ok(result) => text(result),
                Err(e) => e.to_string(),
            };
            assert!(
                said.contains("already answering 256 requests"),
                "{outcome:?}"
            );
            refused += 1;
        } else {
            still.push(call);
        }
    }
    assert_eq!(refused, 44);
    assert_eq!(held.asked.load(Ordering::SeqCst), 256);
    answer.send_replace(true);
    for call in still {
        let answered = call.await.expect("the call's task").expect("answered");
        assert!(text(&answered).contains("Ada"), "{answered}");
    }
    client.close().await;
}

/// Every example's `tools/list`, in both versions, is free of `$ref` (several hosts refuse a
/// tool whose schema has one): the definitions schemars derives are inlined as listed, and
/// no example writes a schema with references by hand but the suite's fixture.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_examples_tools_are_listed_without_references() {
    let root = mcp_tool_tests::TempDir::new("listed-schemas");
    let files = ["--root", root.arg(), "--password", "pw"];
    let examples: [(&str, &[&str]); 7] = [
        ("users", &[]),
        ("calc", &[]),
        ("files", &files),
        ("moon", &[]),
        ("media", &[]),
        ("reports", &[]),
        ("conformance", &[]),
    ];
    for (example, args) in examples {
        for version in [VersionChoice::V2025_11_25, VersionChoice::V2026_07_28] {
            let client = McpClient::connect(
                Connect::stdio(example_bin(example), args.iter().copied())
                    .protocol_version(version),
            )
            .await
            .unwrap_or_else(|e| panic!("start the {example} example: {e}"));
            let tools = client.list_tools().await.expect("tools/list");
            assert!(!tools.is_empty(), "{example}");
            // The suite's fixture writes this schema by hand to check that `$defs` and
            // `$anchor` are preserved (SEP-1613, SEP-2106): hand-written schemas are listed
            // verbatim.
            for tool in tools
                .iter()
                .filter(|t| t["name"] != "json_schema_2020_12_tool")
            {
                let text = tool.to_string();
                assert!(
                    !text.contains("\"$ref\"") && !text.contains("\"$defs\""),
                    "{example} {version:?}: {text}"
                );
            }
            client.close().await;
        }
    }
}

/// A server on another origin that answers `initialize` (so a client that follows a redirect
/// there would connect), and records every request's `X-Api-Key` and body.
type Received = Arc<std::sync::Mutex<Vec<(Option<String>, String)>>>;

fn recording(received: Received) -> axum::routing::MethodRouter {
    axum::routing::post(move |headers: axum::http::HeaderMap, body: String| {
        let received = received.clone();
        async move {
            let key = headers
                .get("x-api-key")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            received.lock().unwrap().push((key, body.clone()));
            let message: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            if message["id"].is_null() {
                return StatusCode::ACCEPTED.into_response();
            }
            let result = match message["method"].as_str() {
                Some("initialize") => json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "elsewhere", "version": "1.0.0"}
                }),
                _ => json!({"tools": []}),
            };
            (
                [(header::CONTENT_TYPE, "application/json")],
                json!({"jsonrpc": "2.0", "id": message["id"], "result": result}).to_string(),
            )
                .into_response()
        }
    })
    .get(|| async { StatusCode::METHOD_NOT_ALLOWED })
    .delete(|| async { StatusCode::OK })
}

/// A redirect of the client's requests to another origin (another loopback port) is not
/// followed: the other origin receives neither the configured header nor the message, and the
/// error names where the redirect led. A redirect within the origin is followed. Before, the
/// client followed any redirect, and a 307 carried the header and the body along.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_another_origin_is_not_followed_with_the_headers_and_body() {
    mcp_tool_tests::install_crypto_provider();
    let serve = |app: axum::Router| async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        base
    };
    let elsewhere: Received = Arc::default();
    let other = serve(axum::Router::new().route("/mcp", recording(elsewhere.clone()))).await;
    let here: Received = Arc::default();
    let to = |location: String| {
        axum::routing::any(move || {
            let location = location.clone();
            async move {
                (
                    StatusCode::TEMPORARY_REDIRECT,
                    [(header::LOCATION, location)],
                )
            }
        })
    };
    let ours = serve(
        axum::Router::new()
            .route("/away", to(format!("{other}/mcp")))
            .route("/moved", to("/mcp".into()))
            .route("/mcp", recording(here.clone())),
    )
    .await;
    let connect = |path: &str| {
        McpClient::connect(
            Connect::http(format!("{ours}{path}"))
                .protocol_version(VersionChoice::V2025_11_25)
                .header("X-Api-Key", "the-api-key")
                .timeout(Duration::from_secs(10)),
        )
    };
    let refused = connect("/away").await;
    let Err(e) = refused else {
        panic!("a client connected through a redirect to another origin");
    };
    let said = e.to_string();
    assert!(
        said.contains("another origin") && said.contains(&other) && said.contains("307"),
        "{said}"
    );
    assert!(!said.contains("the-api-key"), "{said}");
    assert!(
        elsewhere.lock().unwrap().is_empty(),
        "the other origin received {:?}",
        elsewhere.lock().unwrap()
    );
    // Within the origin, the redirect is followed, header and all.
    let client = connect("/moved").await.expect("connects through /moved");
    client.close().await;
    let here = here.lock().unwrap();
    assert!(!here.is_empty());
    assert!(
        here.iter()
            .all(|(key, _)| key.as_deref() == Some("the-api-key")),
        "{here:?}"
    );
}
