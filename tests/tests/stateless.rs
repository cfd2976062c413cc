//! MCP 2026-07-28 through the in-process client (the same code path as stdio): discovery,
//! per-request `_meta`, the errors of the version, input-required rounds and what they ask of
//! tool authors, progress and logging without a session, tool selections of a principal, and
//! `subscriptions/listen`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use mcp_tool::extract::{Elicitation, Logger, Progress, State};
use mcp_tool::prelude::*;
use mcp_tool::server::ServerHandle;
use mcp_tool::testing::Client;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);

/// Counts what a tool did before and after its question.
#[derive(Default)]
struct Counter {
    before: AtomicU32,
    after: AtomicU32,
}

#[derive(Deserialize, JsonSchema)]
struct Confirm {
    /// Go ahead?
    confirm: bool,
}

/// Does something, asks, then does something else.
#[tool]
async fn ask_then_act(ctx: Ctx, counter: State<Arc<Counter>>) -> Result<String, ToolError> {
    counter.before.fetch_add(1, Ordering::SeqCst);
    let answer = ctx.elicit::<Confirm>("Go ahead?").await?;
    counter.after.fetch_add(1, Ordering::SeqCst);
    Ok(match answer {
        Elicitation::Accept(Confirm { confirm: true }) => "done".into(),
        _ => "not done".into(),
    })
}

/// Waits for something else first (so it goes on past its first poll), then asks.
#[tool]
async fn wait_then_ask(ctx: Ctx, note: String) -> Result<String, ToolError> {
    tokio::task::yield_now().await;
    Ok(match ctx.elicit::<Confirm>("Go ahead?").await? {
        Elicitation::Accept(Confirm { confirm: true }) => format!("done: {note}"),
        _ => "not done".into(),
    })
}

/// Asks the user and the model at once.
#[tool]
async fn ask_both(ctx: Ctx) -> Result<String, ToolError> {
    let (form, text) = tokio::join!(
        ctx.elicit::<Confirm>("Sure?"),
        ctx.sample_text("Say hi", 10)
    );
    let sure = matches!(form?, Elicitation::Accept(Confirm { confirm: true }));
    Ok(format!("{sure} {}", text?))
}

/// Asks twice, one question after the other.
#[tool]
async fn ask_twice(ctx: Ctx) -> Result<String, ToolError> {
    let first = ctx.elicit::<Confirm>("First?").await?;
    let second = ctx.elicit::<Confirm>("Second?").await?;
    let yes =
        |e: &Elicitation<Confirm>| matches!(e, Elicitation::Accept(Confirm { confirm: true }));
    Ok(format!("{} {}", yes(&first), yes(&second)))
}

/// Lists the client's roots.
#[tool]
async fn show_roots(ctx: Ctx) -> Result<String, ToolError> {
    let roots = ctx.roots().await?;
    Ok(roots
        .iter()
        .map(|r| r.uri.as_str())
        .collect::<Vec<_>>()
        .join(","))
}

/// Reports progress three times.
#[tool]
async fn three_steps(progress: Progress) -> &'static str {
    for i in 1..=3 {
        progress.report(f64::from(i), 3.0, &format!("step {i}"));
    }
    "stepped"
}

/// Logs at two levels.
#[tool]
fn two_logs(log: Logger) -> &'static str {
    log.debug("a detail");
    log.warning("a warning");
    "logged"
}

/// Reveals `vault`.
#[tool]
fn unlock() -> ToolResult {
    ToolResult::text("unlocked").enable_tools(["vault"])
}

/// What `unlock` reveals.
#[tool(hidden)]
fn vault() -> &'static str {
    "gold"
}

/// Tells listeners that the tool list changed.
#[tool]
fn touch_tools(server: ServerHandle) -> &'static str {
    server.notify_tools_changed();
    "touched"
}

/// A user with a validated email.
#[derive(Deserialize, JsonSchema)]
struct NewUser {
    #[schemars(email)]
    email: String,
}

/// A created user.
#[derive(Serialize, JsonSchema)]
struct Made {
    email: String,
}

/// Creates a user.
#[tool]
fn make_user(Args(user): Args<NewUser>) -> Json<Made> {
    Json(Made { email: user.email })
}

const TOOLS: [&str; 11] = [
    "ask_then_act",
    "wait_then_ask",
    "ask_both",
    "ask_twice",
    "show_roots",
    "three_steps",
    "two_logs",
    "unlock",
    "vault",
    "touch_tools",
    "make_user",
];

fn server() -> Server {
    Server::new("stateless", "1.2.3")
        .only(TOOLS)
        .state(Arc::new(Counter::default()))
}

fn all_capabilities() -> Value {
    json!({ "elicitation": {}, "sampling": {}, "roots": {} })
}

fn stateless() -> Client {
    Client::stateless(server(), all_capabilities()).unwrap()
}

/// The key of the first input a round's result asks for.
fn first_input_key(result: &Value) -> String {
    let requests = result["inputRequests"].as_object().expect("input requests");
    requests.keys().next().expect("an input request").clone()
}

fn accept(confirm: bool) -> Value {
    json!({ "action": "accept", "content": { "confirm": confirm } })
}

fn meta(extra: Value) -> Value {
    let mut m = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": all_capabilities(),
    });
    m.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    m
}

#[tokio::test]
async fn discover_comes_first_and_describes_the_server() {
    let c = stateless();
    let d = c.request("server/discover", json!({})).await.unwrap();
    let versions: Vec<&str> = d["supportedVersions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(&versions[..2], ["2026-07-28", "2025-11-25"]);
    assert_eq!(d["resultType"], "complete");
    assert!(d["capabilities"]["tools"].is_object(), "{d}");
    assert_eq!(
        d["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "stateless"
    );
    assert_eq!(
        d["_meta"]["io.modelcontextprotocol/serverInfo"]["version"],
        "1.2.3"
    );
    assert!(d["ttlMs"].as_u64().is_some(), "{d}");
}

#[tokio::test]
async fn lists_and_calls_carry_the_version_fields() {
    let c = stateless();
    let list = c.request("tools/list", json!({})).await.unwrap();
    assert_eq!(list["resultType"], "complete");
    // A hidden tool means the list can differ per client: private.
    assert_eq!(list["cacheScope"], "private", "{list}");
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(!names.contains(&"vault"), "{names:?}");

    let made = c
        .call("make_user", json!({ "email": "a@example.com" }))
        .await
        .unwrap();
    assert_eq!(made.0["resultType"], "complete");
    assert_eq!(made.structured().unwrap()["email"], "a@example.com");
    let bad = c.call("make_user", json!({ "email": "x" })).await.unwrap();
    assert!(bad.is_error() && bad.text().contains("email"), "{bad:?}");
}

#[tokio::test]
async fn the_version_errors_have_their_codes_and_data() {
    let c = stateless();
    // An unsupported version: -32022 naming what is supported.
    let e = c
        .request(
            "tools/list",
            json!({ "_meta": { "io.modelcontextprotocol/protocolVersion": "2099-01-01" } }),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, -32022, "{e:?}");
    let data = e.data.clone().unwrap_or_default();
    assert!(data.to_string().contains("2026-07-28"), "{data}");

    // Methods the version removed: -32601.
    for method in ["ping", "logging/setLevel", "resources/subscribe"] {
        let e = c.request(method, json!({})).await.unwrap_err();
        assert_eq!(e.code, -32601, "{method}: {e:?}");
    }

    // A question the client cannot answer: -32021 naming the capability.
    let bare = Client::stateless(server(), json!({})).unwrap();
    let e = bare.call("ask_then_act", json!({})).await.unwrap_err();
    assert_eq!(e.code, -32021, "{e:?}");
    assert!(
        e.data.unwrap_or_default()["requiredCapabilities"]["elicitation"].is_object(),
        "the data names the capability"
    );
}

#[tokio::test]
async fn code_before_the_last_question_runs_once_per_round() {
    let c = stateless();
    let first = c.call("ask_then_act", json!({})).await.unwrap().0;
    assert_eq!(first["resultType"], "input_required", "{first}");
    let requests = first["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1, "{first}");
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Go ahead?");
    assert_eq!(
        request["params"]["requestedSchema"]["properties"]["confirm"]["type"],
        "boolean"
    );
    let state = first["requestState"].as_str().unwrap();

    let done = c
        .request(
            "tools/call",
            json!({
                "name": "ask_then_act",
                "arguments": {},
                "inputResponses": { key.as_str(): accept(true) },
                "requestState": state,
            }),
        )
        .await
        .unwrap();
    assert_eq!(done["resultType"], "complete");
    assert_eq!(done["content"][0]["text"], "done");
}

#[tokio::test]
async fn side_effects_before_and_after_a_question_are_counted_per_round() {
    let counter = Arc::new(Counter::default());
    let server = Server::new("stateless", "1.2.3")
        .only(TOOLS)
        .state(counter.clone());
    let c = Client::stateless(server, all_capabilities())
        .unwrap()
        .answering(|_, _| accept(true));
    assert_eq!(
        c.call("ask_then_act", json!({})).await.unwrap().text(),
        "done"
    );
    assert_eq!(counter.before.load(Ordering::SeqCst), 2, "once per round");
    assert_eq!(counter.after.load(Ordering::SeqCst), 1, "once");
}

#[tokio::test]
async fn questions_asked_together_share_a_round_and_sequential_ones_take_one_each() {
    let c = stateless();
    let both = c.call("ask_both", json!({})).await.unwrap().0;
    let methods: Vec<&str> = both["inputRequests"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(|r| r["method"].as_str())
        .collect();
    assert_eq!(methods.len(), 2, "{both}");
    assert!(methods.contains(&"elicitation/create") && methods.contains(&"sampling/createMessage"));

    let rounds = Arc::new(AtomicU32::new(0));
    let seen = rounds.clone();
    let c = stateless().answering(move |method, _| {
        seen.fetch_add(1, Ordering::SeqCst);
        match method {
            "sampling/createMessage" => json!({
                "role": "assistant",
                "content": { "type": "text", "text": "hi" },
                "model": "test-model"
            }),
            _ => accept(true),
        }
    });
    assert_eq!(
        c.call("ask_both", json!({})).await.unwrap().text(),
        "true hi"
    );
    assert_eq!(
        rounds.swap(0, Ordering::SeqCst),
        2,
        "two answers, one round"
    );
    assert_eq!(
        c.call("ask_twice", json!({})).await.unwrap().text(),
        "true true"
    );
    assert_eq!(rounds.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn roots_are_asked_for_like_any_input() {
    let c = stateless().answering(|method, _| {
        assert_eq!(method, "roots/list");
        json!({ "roots": [{ "uri": "file:///a" }, { "uri": "file:///b", "name": "b" }] })
    });
    let r = c.call("show_roots", json!({})).await.unwrap();
    assert_eq!(r.text(), "file:///a,file:///b");
}

#[tokio::test]
async fn a_state_opens_only_for_its_own_request_unchanged() {
    let c = stateless();
    let first = c.call("ask_then_act", json!({})).await.unwrap().0;
    let key = first_input_key(&first);
    let state = first["requestState"].as_str().unwrap().to_owned();
    let retry = |name: &str, arguments: Value, state: &str| {
        json!({
            "name": name,
            "arguments": arguments,
            "inputResponses": { key.as_str(): accept(true) },
            "requestState": state,
        })
    };
    // Changed by a byte.
    let mut tampered = state.clone().into_bytes();
    let i = tampered.len() / 3;
    tampered[i] = if tampered[i] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    for (label, params) in [
        ("tampered", retry("ask_then_act", json!({}), &tampered)),
        ("another tool", retry("ask_twice", json!({}), &state)),
        (
            "other arguments",
            retry("ask_then_act", json!({ "x": 1 }), &state),
        ),
        ("not a state", retry("ask_then_act", json!({}), "garbage")),
    ] {
        let e = c.request("tools/call", params).await.unwrap_err();
        assert_eq!(e.code, -32602, "{label}: {e:?}");
    }
    // Another server (another key) refuses it too.
    let other = Client::stateless(
        Server::new("stateless", "1.2.3")
            .only(TOOLS)
            .state(Arc::new(Counter::default()))
            .state_key([9_u8; 32]),
        all_capabilities(),
    )
    .unwrap();
    let e = other
        .request("tools/call", retry("ask_then_act", json!({}), &state))
        .await
        .unwrap_err();
    assert_eq!(e.code, -32602, "{e:?}");
}

/// A first round that waited before it asked (so it went on past the request's own text) is
/// bound to its arguments all the same: its retry with them goes on, one with others is refused.
#[tokio::test]
async fn a_round_that_waited_before_asking_is_bound_to_its_arguments() {
    let c = stateless();
    let first = c
        .call("wait_then_ask", json!({ "note": "n1" }))
        .await
        .unwrap()
        .0;
    let key = first_input_key(&first);
    let retry = |note: &str| {
        json!({
            "name": "wait_then_ask",
            "arguments": { "note": note },
            "inputResponses": { key.as_str(): accept(true) },
            "requestState": first["requestState"],
        })
    };
    let e = c.request("tools/call", retry("n2")).await.unwrap_err();
    assert_eq!(e.code, -32602, "{e:?}");
    let done = c.request("tools/call", retry("n1")).await.unwrap();
    assert_eq!(done["content"][0]["text"], "done: n1", "{done}");
}

/// An answer sealed in the request state is the one the tool gets: a later round's
/// `inputResponses` naming the same key again (with another answer) does not replace it.
#[tokio::test]
async fn a_sealed_answer_cannot_be_replaced_by_a_later_round() {
    let c = stateless();
    let key_of = |result: &Value| {
        result["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone()
    };
    let first = c.call("ask_twice", json!({})).await.unwrap().0;
    let first_key = key_of(&first);
    // Round two: the first question answered `true`, sealed in the state now.
    let second = c
        .request(
            "tools/call",
            json!({
                "name": "ask_twice",
                "arguments": {},
                "inputResponses": { first_key.as_str(): accept(true) },
                "requestState": first["requestState"],
            }),
        )
        .await
        .unwrap();
    let second_key = key_of(&second);
    assert_ne!(first_key, second_key, "{second}");
    // Round three answers the second question, and tries to change the first to `false`.
    let done = c
        .request(
            "tools/call",
            json!({
                "name": "ask_twice",
                "arguments": {},
                "inputResponses": {
                    first_key.as_str(): accept(false),
                    second_key.as_str(): accept(true),
                },
                "requestState": second["requestState"],
            }),
        )
        .await
        .unwrap();
    assert_eq!(done["content"][0]["text"], "true true", "{done}");
}

/// A stateless client of a server with these request-state keys (a replica, or a process
/// restarted).
fn replica(keys: &[[u8; 32]]) -> Client {
    Client::stateless(
        Server::new("stateless", "1.2.3")
            .only(TOOLS)
            .state(Arc::new(Counter::default()))
            .state_keys(keys),
        all_capabilities(),
    )
    .unwrap()
}

/// The first round of `ask_then_act` on `c`, and the retry that answers its question.
async fn first_round_and_retry(c: &Client) -> Value {
    let first = c.call("ask_then_act", json!({})).await.unwrap().0;
    let key_name = first_input_key(&first);
    json!({
        "name": "ask_then_act",
        "arguments": {},
        "inputResponses": { key_name.as_str(): accept(true) },
        "requestState": first["requestState"],
    })
}

#[tokio::test]
async fn a_state_survives_a_restart_with_the_same_key() {
    let key = [3_u8; 32];
    let retry = first_round_and_retry(&replica(&[key])).await;
    // A new process with the same key (another replica, or this one restarted).
    let done = replica(&[key]).request("tools/call", retry).await.unwrap();
    assert_eq!(done["content"][0]["text"], "done", "{done}");
}

/// Keys rotate without failing rounds in flight: a round sealed by a replica with the old key
/// goes on at one that took the new key and keeps the old (`state_keys([new, old])`), and a
/// replica that dropped the old key refuses it.
#[tokio::test]
async fn a_round_sealed_with_the_old_key_goes_on_after_a_rotation() {
    let (old, new) = ([3_u8; 32], [4_u8; 32]);
    let retry = first_round_and_retry(&replica(&[old])).await;
    let done = replica(&[new, old])
        .request("tools/call", retry.clone())
        .await
        .unwrap();
    assert_eq!(done["content"][0]["text"], "done", "{done}");
    let e = replica(&[new])
        .request("tools/call", retry)
        .await
        .unwrap_err();
    assert_eq!(e.code, -32602, "{e:?}");
}

#[tokio::test]
async fn an_expired_state_is_refused() {
    let c = Client::stateless(
        Server::new("stateless", "1.2.3")
            .only(TOOLS)
            .state(Arc::new(Counter::default()))
            .request_state_ttl(Duration::from_millis(1)),
        all_capabilities(),
    )
    .unwrap();
    let first = c.call("ask_then_act", json!({})).await.unwrap().0;
    let key = first_input_key(&first);
    tokio::time::sleep(Duration::from_millis(20)).await;
    let e = c
        .request(
            "tools/call",
            json!({
                "name": "ask_then_act",
                "arguments": {},
                "inputResponses": { key.as_str(): accept(true) },
                "requestState": first["requestState"],
            }),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, -32602, "{e:?}");
    assert!(e.message.contains("expired"), "{e:?}");
}

#[tokio::test]
async fn progress_and_logs_follow_the_request_meta() {
    let c = stateless();
    let done = c
        .request(
            "tools/call",
            json!({
                "name": "three_steps",
                "arguments": {},
                "_meta": meta(json!({ "progressToken": "p1" })),
            }),
        )
        .await
        .unwrap();
    assert_eq!(done["content"][0]["text"], "stepped");
    for i in 1..=3 {
        let n = c.wait_for("notifications/progress", WAIT).await.unwrap();
        assert_eq!(n["params"]["progressToken"], "p1");
        assert_eq!(n["params"]["progress"], i);
    }

    // No log level: no log messages.
    c.call("two_logs", json!({})).await.unwrap();
    assert!(
        c.wait_for("notifications/message", Duration::from_millis(200))
            .await
            .is_none()
    );
    // `warning`: only the warning.
    c.request(
        "tools/call",
        json!({
            "name": "two_logs",
            "arguments": {},
            "_meta": meta(json!({ "io.modelcontextprotocol/logLevel": "warning" })),
        }),
    )
    .await
    .unwrap();
    let n = c.wait_for("notifications/message", WAIT).await.unwrap();
    assert_eq!(n["params"]["level"], "warning");
    assert_eq!(n["params"]["data"], "a warning");
    assert!(
        c.wait_for("notifications/message", Duration::from_millis(200))
            .await
            .is_none()
    );
}

#[tokio::test]
async fn the_one_client_of_a_connection_keeps_its_tool_selection() {
    let c = stateless();
    let names = |list: &Value| -> Vec<String> {
        list["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str().map(String::from))
            .collect()
    };
    let before = c.request("tools/list", json!({})).await.unwrap();
    assert!(!names(&before).contains(&"vault".to_owned()));
    assert_eq!(c.call("vault", json!({})).await.unwrap_err().code, -32602);
    assert_eq!(
        c.call("unlock", json!({})).await.unwrap().text(),
        "unlocked"
    );
    let after = c.request("tools/list", json!({})).await.unwrap();
    assert!(names(&after).contains(&"vault".to_owned()), "{after}");
    assert_eq!(after["cacheScope"], "private");
    assert_eq!(c.call("vault", json!({})).await.unwrap().text(), "gold");
}

#[tokio::test]
async fn listen_acknowledges_tags_and_ends_on_cancel() {
    let c = stateless();
    let (id, _response) = c
        .start_request(
            "subscriptions/listen",
            json!({
                "_meta": meta(json!({})),
                "notifications": { "toolsListChanged": true, "promptsListChanged": true }
            }),
        )
        .await;
    let ack = c
        .wait_for("notifications/subscriptions/acknowledged", WAIT)
        .await
        .unwrap();
    // The server has no prompts: it agrees to tool changes only.
    assert_eq!(
        ack["params"]["notifications"]["toolsListChanged"], true,
        "{ack}"
    );
    assert_ne!(
        ack["params"]["notifications"]["promptsListChanged"], true,
        "{ack}"
    );

    c.call("touch_tools", json!({})).await.unwrap();
    let n = c
        .wait_for("notifications/tools/list_changed", WAIT)
        .await
        .unwrap();
    assert_eq!(
        n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], id,
        "{n}"
    );

    c.notify(
        "notifications/cancelled",
        json!({ "requestId": id, "_meta": meta(json!({})) }),
    )
    .await;
    // Once cancelled, changes reach it no more.
    c.call("touch_tools", json!({})).await.unwrap();
    assert!(
        c.wait_for(
            "notifications/tools/list_changed",
            Duration::from_millis(300)
        )
        .await
        .is_none()
    );
}
