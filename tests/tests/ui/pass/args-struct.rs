use mcp_tool::prelude::*;
use serde_json::json;

/// What to search for.
#[derive(Deserialize, JsonSchema)]
struct Search {
    /// What to look for
    query: String,
    /// How many results to return
    limit: Option<u32>,
}

/// Search the catalogue.
#[tool(read_only)]
async fn search(Args(s): Args<Search>, ctx: Ctx) -> String {
    let _ = ctx;
    format!("{} (limit {})", s.query, s.limit.unwrap_or(10))
}

#[tokio::main]
async fn main() {
    let core = Server::new("t", "1").only(["search"]).build().unwrap();
    let input = &core.tools()[0].to_json()["inputSchema"];
    assert_eq!(input["required"], json!(["query"]));
    assert_eq!(
        input["properties"]["query"]["description"],
        "What to look for"
    );
    let result = core
        .call("search", json!({ "query": "rust" }))
        .await
        .unwrap();
    assert_eq!(result.text_content(), "rust (limit 10)");
}
