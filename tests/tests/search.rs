//! Tool search for deferred tools (`#[tool(defer_loading)]`, `DynamicTool::deferred`): left
//! out of `tools/list`, unknown to `tools/call` until found; the built-in `search_tools`
//! ranks them (BM25 over name, title, description and parameter names), answers with their
//! definitions, and reveals them to the client that searched — in a 2025-11-25 session with
//! `notifications/tools/list_changed`, in 2026-07-28 for the request's principal — after
//! which they are listed. A deferred tool is callable by name all along. Always-visible tools
//! are never collapsed, and a server without deferred tools has no search tool.

use std::time::Duration;

use mcp_tool::dynamic::DynamicTool;
use mcp_tool::prelude::*;
use mcp_tool::testing::Client;
use serde_json::{Value, json};

/// Look up the weather forecast for a city.
#[tool(defer_loading, read_only)]
fn get_forecast(#[arg(description = "City name")] city: String) -> String {
    format!("sunny in {city}")
}

/// Convert an amount of money from one currency to another.
#[tool(defer_loading)]
fn convert_currency(amount: f64, from: String, to: String) -> String {
    format!("{amount} {from} in {to}")
}

/// Send an email message to a recipient.
#[tool(defer_loading, title = "Send mail")]
fn send_email(recipient: String, subject: String) -> String {
    format!("sent {subject} to {recipient}")
}

/// Delete a user account by its id.
#[tool(defer_loading, destructive)]
fn delete_user(user_id: u64) -> String {
    format!("deleted {user_id}")
}

/// Add two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Always listed.
#[tool(always_visible)]
fn status() -> &'static str {
    "ok"
}

const TOOLS: [&str; 6] = [
    "get_forecast",
    "convert_currency",
    "send_email",
    "delete_user",
    "add",
    "status",
];

fn server() -> Server {
    Server::new("search", "0").only(TOOLS).dynamic_tool(
        DynamicTool::new(
            "translate_text",
            "Translate a text into another language",
            |_| async { "translated" },
        )
        .deferred(),
    )
}

async fn listed(c: &Client) -> Vec<String> {
    c.list_tools()
        .await
        .expect("tools/list")
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn search(c: &Client, query: &str, limit: Option<u64>) -> (Vec<String>, Value) {
    let mut args = json!({ "query": query });
    if let Some(limit) = limit {
        args["limit"] = json!(limit);
    }
    let r = c.call("search_tools", args).await.expect("search_tools");
    assert!(!r.is_error(), "{}", r.text());
    let structured = r.structured().expect("structured results").clone();
    let names = structured["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    (names, structured)
}

/// What both protocol versions share: collapsed at first, ranked, revealed, callable.
async fn search_reveals(c: &Client) {
    assert_eq!(listed(c).await, ["add", "search_tools", "status"]);
    // Not listed, but callable by name: deferring saves the list, it guards nothing.
    let r = c
        .call(
            "convert_currency",
            json!({ "amount": 2, "from": "EUR", "to": "NOK" }),
        )
        .await
        .expect("a deferred tool is callable by name");
    assert_eq!(r.text(), "2 EUR in NOK");
    assert_eq!(listed(c).await, ["add", "search_tools", "status"]);

    // A query about the weather finds the forecast first, with its whole definition.
    let (names, found) = search(c, "weather forecast for a city", None).await;
    assert_eq!(names.first().map(String::as_str), Some("get_forecast"));
    let def = &found["tools"][0];
    assert_eq!(def["inputSchema"]["properties"]["city"]["type"], "string");
    assert_eq!(def["annotations"]["readOnlyHint"], true);
    // Only deferred tools are searched: the listed `add` never comes back.
    let (names, _) = search(c, "add two numbers", None).await;
    assert!(!names.contains(&"add".to_owned()), "{names:?}");

    assert_eq!(
        listed(c).await,
        ["add", "get_forecast", "search_tools", "status"]
    );
    let r = c
        .call("get_forecast", json!({ "city": "Oslo" }))
        .await
        .expect("found, then callable");
    assert_eq!(r.text(), "sunny in Oslo");

    // Parameter names count (`recipient`), plurals match (`emails`), camel case splits.
    let (names, _) = search(c, "recipient", Some(1)).await;
    assert_eq!(names, ["send_email"]);
    let (names, _) = search(c, "emails", Some(1)).await;
    assert_eq!(names, ["send_email"]);
    let (names, _) = search(c, "translateText", Some(1)).await;
    assert_eq!(names, ["translate_text"]);
    // A limit is a limit; nothing shared, nothing found.
    let (names, _) = search(c, "a the to of user currency text", Some(2)).await;
    assert_eq!(names.len(), 2, "{names:?}");
    let (names, _) = search(c, "zebra", None).await;
    assert!(names.is_empty(), "{names:?}");

    // Bad input names the field.
    let r = c
        .call("search_tools", json!({ "query": "" }))
        .await
        .expect("a result");
    assert!(r.is_error() && r.text().contains("query"), "{}", r.text());
    let r = c
        .call("search_tools", json!({ "query": "x", "limit": 500 }))
        .await
        .expect("a result");
    assert!(r.is_error() && r.text().contains("limit"), "{}", r.text());
}

#[tokio::test]
async fn a_2025_session_finds_and_is_told() {
    let c = Client::connect(server()).unwrap();
    c.initialize("2025-11-25").await.unwrap();
    search_reveals(&c).await;
    // Revealing changed the session's list: the client heard of it.
    assert!(
        c.wait_for("notifications/tools/list_changed", Duration::from_secs(5))
            .await
            .is_some()
    );
}

#[tokio::test]
async fn a_2026_principal_finds_and_lists() {
    let c = Client::stateless(server(), json!({})).unwrap();
    search_reveals(&c).await;
    // The principal's list is private and stale at once: a client caches nothing stale.
    let page = c.request("tools/list", json!({})).await.unwrap();
    assert_eq!(page["cacheScope"], "private", "{page}");
    assert_eq!(page["ttlMs"], 0, "{page}");
}

#[tokio::test]
async fn a_session_finds_for_itself_only() {
    let server = server().build().unwrap();
    let first = Client::connect_to(server.clone());
    let second = Client::connect_to(server);
    for c in [&first, &second] {
        c.initialize("2025-11-25").await.unwrap();
    }
    let (names, _) = search(&first, "delete user account", Some(1)).await;
    assert_eq!(names, ["delete_user"]);
    assert!(listed(&first).await.contains(&"delete_user".to_owned()));
    assert!(!listed(&second).await.contains(&"delete_user".to_owned()));
}

#[tokio::test]
async fn no_deferred_tool_no_search() {
    let c = Client::connect(Server::new("plain", "0").only(["add", "status"])).unwrap();
    c.initialize("2025-11-25").await.unwrap();
    assert_eq!(listed(&c).await, ["add", "status"]);
}

/// Takes the search tool's name.
#[tool(name = "search_tools")]
fn my_search() -> &'static str {
    "mine"
}

#[test]
fn a_tool_of_the_search_tool_name_is_refused_when_tools_are_deferred() {
    let Err(e) = Server::new("clash", "0")
        .only(["get_forecast", "search_tools"])
        .build()
    else {
        panic!("refused: the deferred tool could not be found");
    };
    let text = e.to_string();
    assert!(
        text.contains("`search_tools`") && text.contains("defer_loading"),
        "{text}"
    );
    // Without deferred tools the name is free.
    assert!(
        Server::new("free", "0")
            .only(["search_tools"])
            .build()
            .is_ok()
    );
}
