//! `#[prompt]`, `#[resource]` and `#[resource_template]` on free functions and on methods:
//! what each registers (names, arguments, URIs, MIME types, descriptions), read back through
//! the in-process client.

use mcp_tool::prelude::*;
use mcp_tool::prompt::{PromptMessage, PromptResult};
use mcp_tool::testing::Client;
use serde_json::{Value, json};

/// Greet someone.
#[prompt(title = "Greeting")]
fn greet(#[arg(description = "Who")] name: String, times: Option<u8>, _ctx: Ctx) -> String {
    format!("Hello, {name} x{}", times.unwrap_or(1))
}

/// A renamed prompt returning one message.
#[prompt(name = "renamed.prompt", description = "Set by the attribute")]
async fn r#match(#[arg(rename = "q")] query: String) -> PromptMessage {
    PromptMessage::assistant(query)
}

/// The README.
#[resource("docs://readme", mime_type = "text/markdown", title = "Read me")]
fn readme() -> &'static str {
    "# Hello"
}

/// Bytes.
#[resource("docs://bytes")]
async fn bytes() -> Result<Vec<u8>, ToolError> {
    Ok(vec![1, 2, 3])
}

/// A page.
#[resource_template("docs://{section}/{page}", name = "pages")]
fn page(section: String, #[arg(rename = "page")] number: u32) -> Json<Value> {
    Json(json!({ "section": section, "page": number }))
}

/// A service with one of each.
struct Notes {
    notes: Vec<String>,
}

#[tools]
impl Notes {
    /// Summarize the notes.
    #[prompt]
    fn summarize_notes(&self) -> PromptResult {
        vec![PromptMessage::user(self.notes.join("; "))].into()
    }

    /// All notes.
    #[resource("notes://all")]
    async fn all(&self) -> Json<Vec<String>> {
        Json(self.notes.clone())
    }

    /// A note by number.
    #[resource_template("notes://{n}")]
    fn note(self: std::sync::Arc<Self>, n: usize) -> Result<String, String> {
        self.notes.get(n).cloned().ok_or_else(|| format!("no note {n}"))
    }

    /// Needs no instance.
    #[prompt]
    fn static_prompt() -> &'static str {
        "static"
    }
}

fn names(items: &Value, key: &str) -> Vec<String> {
    items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i[key].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let notes = Notes {
        notes: vec!["a".into(), "b".into()],
    };
    let client = Client::start(Server::new("t", "1").service(notes)).await.unwrap();

    let prompts = client.request("prompts/list", json!({})).await.unwrap();
    assert_eq!(
        names(&prompts["prompts"], "name"),
        ["greet", "renamed.prompt", "static_prompt", "summarize_notes"]
    );
    assert_eq!(
        prompts["prompts"][0],
        json!({
            "name": "greet", "title": "Greeting", "description": "Greet someone.",
            "arguments": [
                { "name": "name", "description": "Who", "required": true },
                { "name": "times", "required": false }
            ]
        })
    );
    assert_eq!(prompts["prompts"][1]["description"], "Set by the attribute");
    assert_eq!(prompts["prompts"][1]["arguments"], json!([{ "name": "q", "required": true }]));

    let resources = client.request("resources/list", json!({})).await.unwrap();
    assert_eq!(
        names(&resources["resources"], "uri"),
        ["docs://bytes", "docs://readme", "notes://all"]
    );
    assert_eq!(
        names(&resources["resources"], "mimeType"),
        ["application/octet-stream", "text/markdown", "application/json"]
    );
    assert_eq!(resources["resources"][1]["title"], "Read me");

    let templates = client.request("resources/templates/list", json!({})).await.unwrap();
    assert_eq!(
        names(&templates["resourceTemplates"], "uriTemplate"),
        ["docs://{section}/{page}", "notes://{n}"]
    );
    assert_eq!(
        names(&templates["resourceTemplates"], "name"),
        ["pages", "note"]
    );

    let read = client
        .request("resources/read", json!({ "uri": "docs://guide/3" }))
        .await
        .unwrap();
    assert_eq!(read["contents"][0]["text"], r#"{"page":3,"section":"guide"}"#);
    let read = client
        .request("resources/read", json!({ "uri": "notes://1" }))
        .await
        .unwrap();
    assert_eq!(read["contents"][0]["text"], "b");
    let got = client
        .request("prompts/get", json!({ "name": "renamed.prompt", "arguments": { "q": "x" } }))
        .await
        .unwrap();
    assert_eq!(got["messages"][0]["role"], "assistant");
}
