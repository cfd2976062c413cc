//! What users expect beside the protocol's core: `Option<T>` results, log messages with
//! structured data, URL-mode elicitation, typed roots, and a server's full identity
//! (description, website, icons) with icons on resources and prompts.

use std::time::Duration;

use mcp_tool::extract::{Elicitation, Logger};
use mcp_tool::prelude::*;
use mcp_tool::prompt::{Prompt, PromptMessage, PromptResult};
use mcp_tool::protocol::Icon;
use mcp_tool::resource::Resource;
use mcp_tool::testing::Client;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);

/// A found user.
#[derive(Serialize, JsonSchema)]
struct Found {
    name: String,
}

/// Finds a user, or nothing.
#[tool]
fn find(name: String) -> Option<Json<Found>> {
    (name == "ada").then_some(Json(Found { name }))
}

/// Finds a nickname, or nothing (no output schema).
#[tool]
fn nickname(name: String) -> Option<String> {
    (name == "ada").then(|| "countess".to_owned())
}

/// Logs a message with data.
#[tool]
fn audit(log: Logger) -> &'static str {
    log.log_with(
        mcp_tool::extract::LogLevel::Warning,
        "disk nearly full",
        json!({ "free_mb": 12 }),
    );
    "audited"
}

/// Sends the user to a sign-in page.
#[tool]
async fn sign_in(ctx: Ctx) -> Result<String, ToolError> {
    let asked = ctx
        .elicit_url("Sign in to continue", "https://example.com/sign-in")
        .await?;
    match asked.answer {
        Elicitation::Accept(()) => {
            ctx.elicitation_complete(&asked.elicitation_id);
            Ok(format!("signed in ({})", asked.elicitation_id.len()))
        }
        _ => Ok("not signed in".into()),
    }
}

/// The client's roots, typed: each URI with its name.
#[tool]
async fn roots(ctx: Ctx) -> Result<String, ToolError> {
    let roots: Vec<mcp_tool::protocol::Root> = ctx.roots().await?;
    Ok(roots
        .iter()
        .map(|r| format!("{}={}", r.name.as_deref().unwrap_or("-"), r.uri))
        .collect::<Vec<_>>()
        .join(" "))
}

fn server() -> Server {
    Server::new("gaps", "1.0.0")
        .only(["find", "nickname", "audit", "sign_in", "roots"])
        .description("Tests the small things")
        .website_url("https://example.com")
        .icon(
            Icon::new("https://example.com/icon.png")
                .mime_type("image/png")
                .size("48x48"),
        )
        .resource(
            Resource::text("note://1", "note", "text/plain", "hello")
                .icon(Icon::new("https://example.com/note.svg").theme("dark")),
        )
        .prompt(
            Prompt::new("greet")
                .get(|_| async { Ok(PromptResult::from(vec![PromptMessage::user("hi")])) })
                .icon(Icon::new("https://example.com/greet.png")),
        )
}

#[tokio::test]
async fn an_option_result_is_its_value_or_null() {
    let c = Client::start(server()).await.unwrap();
    let tools = c.list_tools().await.unwrap();
    let find = tools.iter().find(|t| t["name"] == "find").unwrap();
    // `Found` or null, wrapped since it is not an object.
    assert!(
        find["outputSchema"]["properties"]["result"].is_object(),
        "{find}"
    );

    let some = c.call("find", json!({"name": "ada"})).await.unwrap();
    assert_eq!(some.structured(), Some(&json!({"result": {"name": "ada"}})));
    let none = c.call("find", json!({"name": "bob"})).await.unwrap();
    assert!(!none.is_error(), "{none:?}");
    assert_eq!(none.structured(), Some(&json!({"result": null})));
    assert_eq!(none.text(), "null");

    let plain = c.call("nickname", json!({"name": "bob"})).await.unwrap();
    assert_eq!(plain.text(), "null");
    assert!(plain.structured().is_none(), "{plain:?}");
    let plain = c.call("nickname", json!({"name": "ada"})).await.unwrap();
    assert_eq!(plain.text(), "countess");
}

#[tokio::test]
async fn a_log_message_carries_its_data() {
    let c = Client::start(server()).await.unwrap();
    c.call("audit", json!({})).await.unwrap();
    let n = c.wait_for("notifications/message", WAIT).await.unwrap();
    assert_eq!(n["params"]["level"], "warning");
    assert_eq!(
        n["params"]["data"],
        json!({"message": "disk nearly full", "data": {"free_mb": 12}})
    );
}

#[tokio::test]
async fn url_elicitation_sends_the_user_to_a_page_and_says_when_it_is_done() {
    // Without the `url` capability: a clear error.
    let c = Client::connect(server()).unwrap();
    c.initialize_with("2025-11-25", json!({"elicitation": {"form": {}}}))
        .await
        .unwrap();
    let r = c.call("sign_in", json!({})).await.unwrap();
    assert!(
        r.is_error() && r.text().contains("elicitation.url"),
        "{r:?}"
    );

    let c = Client::connect(server()).unwrap();
    c.initialize_with("2025-11-25", json!({"elicitation": {"url": {}}}))
        .await
        .unwrap();
    let (_, answer) = c
        .start_request("tools/call", json!({"name": "sign_in", "arguments": {}}))
        .await;
    let asked = c.wait_for("elicitation/create", WAIT).await.unwrap();
    let params = &asked["params"];
    assert_eq!(params["mode"], "url");
    assert_eq!(params["url"], "https://example.com/sign-in");
    let id = params["elicitationId"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 32);
    c.respond(&asked["id"], json!({"action": "accept"})).await;
    let done = c
        .wait_for("notifications/elicitation/complete", WAIT)
        .await
        .unwrap();
    assert_eq!(done["params"]["elicitationId"], id.as_str());
    let result = tokio::time::timeout(WAIT, answer).await.unwrap().unwrap();
    assert_eq!(result["result"]["content"][0]["text"], "signed in (32)");

    // 2026-07-28: the same question as an input request.
    let m = Client::stateless(server(), json!({"elicitation": {"url": {}}}))
        .unwrap()
        .answering(|method, params| {
            assert_eq!(method, "elicitation/create");
            assert_eq!(params["mode"], "url");
            json!({"action": "decline"})
        });
    assert_eq!(
        m.call("sign_in", json!({})).await.unwrap().text(),
        "not signed in"
    );
}

#[tokio::test]
async fn the_server_shows_its_whole_identity_and_icons() {
    let c = Client::connect(server()).unwrap();
    let init = c.initialize("2025-11-25").await.unwrap();
    let info = &init["serverInfo"];
    assert_eq!(info["websiteUrl"], "https://example.com");
    assert_eq!(info["icons"][0]["src"], "https://example.com/icon.png");
    assert_eq!(info["icons"][0]["mimeType"], "image/png");
    assert_eq!(info["icons"][0]["sizes"], json!(["48x48"]));
    let resources = c.request("resources/list", json!({})).await.unwrap();
    assert_eq!(resources["resources"][0]["icons"][0]["theme"], "dark");
    let prompts = c.request("prompts/list", json!({})).await.unwrap();
    assert_eq!(
        prompts["prompts"][0]["icons"][0]["src"],
        "https://example.com/greet.png"
    );

    let m = Client::stateless(server(), json!({})).unwrap();
    let discover = m.request("server/discover", json!({})).await.unwrap();
    let info: &Value = &discover["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(info["description"], "Tests the small things");
    assert_eq!(info["websiteUrl"], "https://example.com");
}

#[tokio::test]
async fn a_tool_gets_the_clients_roots_typed_in_both_versions() {
    let listed = json!({"roots": [
        {"uri": "file:///home/ada/project", "name": "project"},
        {"uri": "file:///tmp/scratch"}
    ]});
    let expected = "project=file:///home/ada/project -=file:///tmp/scratch";

    // 2025-11-25: a `roots/list` request to the client, answered while the call waits.
    let c = Client::connect(server()).unwrap();
    c.initialize_with("2025-11-25", json!({"roots": {"listChanged": true}}))
        .await
        .unwrap();
    let (_, answer) = c
        .start_request("tools/call", json!({"name": "roots", "arguments": {}}))
        .await;
    let asked = c.wait_for("roots/list", WAIT).await.unwrap();
    c.respond(&asked["id"], listed.clone()).await;
    let result = tokio::time::timeout(WAIT, answer).await.unwrap().unwrap();
    assert_eq!(result["result"]["content"][0]["text"], expected, "{result}");

    // An answer that is not a list of roots is an error naming what was wrong.
    let (_, answer) = c
        .start_request("tools/call", json!({"name": "roots", "arguments": {}}))
        .await;
    let asked = c.wait_for("roots/list", WAIT).await.unwrap();
    c.respond(&asked["id"], json!({"roots": [{"name": "no uri"}]}))
        .await;
    let result = tokio::time::timeout(WAIT, answer).await.unwrap().unwrap();
    assert_eq!(result["result"]["isError"], true, "{result}");
    let text = result["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("roots") && text.contains("uri"), "{text}");

    // A client without the `roots` capability is not asked.
    let c = Client::start(server()).await.unwrap();
    let r = c.call("roots", json!({})).await.unwrap();
    assert!(
        r.is_error() && r.text().contains("`roots` capability"),
        "{r:?}"
    );

    // 2026-07-28: the same question as an input request, the call run again with the answer.
    let listed_2026 = listed.clone();
    let m = Client::stateless(server(), json!({"roots": {}}))
        .unwrap()
        .answering(move |method, _| {
            assert_eq!(method, "roots/list");
            listed_2026.clone()
        });
    assert_eq!(m.call("roots", json!({})).await.unwrap().text(), expected);
}
