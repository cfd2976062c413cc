use std::time::Duration;

use mcp_tool::prelude::*;
use serde_json::json;

/// Wait, then greet someone.
#[tool]
async fn greet(name: String, ctx: Ctx) -> String {
    tokio::time::sleep(Duration::from_millis(1)).await;
    let _ = ctx.id();
    format!("hello {name}")
}

/// A tool returning nothing, with no parameters.
#[tool]
async fn noop() {}

/// A tool whose return type is opaque (it gets no output schema).
#[tool]
fn opaque() -> impl mcp_tool::content::IntoToolResult {
    "opaque"
}

/// Structured output.
#[tool]
async fn point() -> Json<Point> {
    Json(Point { x: 1, y: 2 })
}

/// A point.
#[derive(Serialize, JsonSchema)]
struct Point {
    x: i32,
    y: i32,
}

#[tokio::main]
async fn main() {
    let core = Server::new("t", "1")
        .only(["greet", "noop", "opaque", "point"])
        .build()
        .unwrap();
    let tools: Vec<_> = core.tools().iter().map(|t| t.to_json()).collect();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["greet", "noop", "opaque", "point"]);
    // `ctx` is injected, not an argument.
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["name"]));
    assert!(tools[0]["inputSchema"]["properties"].get("ctx").is_none());
    assert!(tools[2].get("outputSchema").is_none());
    assert_eq!(tools[3]["outputSchema"]["required"], json!(["x", "y"]));

    let result = core.call("greet", json!({ "name": "Ada" })).await.unwrap();
    assert_eq!(result.text_content(), "hello Ada");
    let result = core.call("noop", json!({})).await.unwrap();
    assert!(!result.is_error);
    let result = core.call("opaque", json!({})).await.unwrap();
    assert_eq!(result.text_content(), "opaque");
    let result = core.call("point", json!({})).await.unwrap();
    assert_eq!(result.structured(), Some(json!({ "x": 1, "y": 2 })));
}
