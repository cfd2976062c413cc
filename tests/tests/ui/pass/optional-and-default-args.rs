use mcp_tool::prelude::*;
use serde_json::json;

/// Search the catalogue.
#[tool(read_only)]
fn search(
    query: String,
    #[arg(description = "Page number, from 1")] page: Option<u32>,
    #[arg(default, rename = "max")] limit: u32,
    #[arg(default = false)] exact: Option<bool>,
) -> String {
    format!("{query} {page:?} {limit} {exact:?}")
}

#[tokio::main]
async fn main() {
    let core = Server::new("t", "1").only(["search"]).build().unwrap();
    let tool = &core.tools()[0].to_json();
    let input = &tool["inputSchema"];
    assert_eq!(input["required"], json!(["query"]));
    assert_eq!(
        input["properties"]["page"]["description"],
        "Page number, from 1"
    );
    assert!(input["properties"].get("max").is_some());
    assert!(input["properties"].get("limit").is_none());

    let result = core.call("search", json!({ "query": "q" })).await.unwrap();
    assert_eq!(result.text_content(), "q None 0 None");
    let result = core
        .call(
            "search",
            json!({ "query": "q", "page": 2, "max": 5, "exact": true }),
        )
        .await
        .unwrap();
    assert_eq!(result.text_content(), "q Some(2) 5 Some(true)");
}
