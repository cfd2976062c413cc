use mcp_tool::prelude::*;
use serde_json::json;

/// Multiply two numbers.
///
/// Both may be negative.
#[tool(read_only, idempotent = true, open_world = false)]
fn multiply(#[arg(description = "The first factor")] a: f64, b: f64) -> f64 {
    a * b
}

/// Not a tool's description: `description` wins.
#[tool(
    name = "math.divide",
    title = "Divide",
    description = "Divide `a` by `b`."
)]
fn divide(a: f64, b: f64) -> Result<f64, String> {
    if b == 0.0 {
        Err("division by zero".into())
    } else {
        Ok(a / b)
    }
}

#[tokio::main]
async fn main() {
    let core = Server::new("calc", "1.0.0")
        .only(["multiply", "math.divide"])
        .build()
        .unwrap();
    let tools: Vec<_> = core.tools().iter().map(|t| t.to_json()).collect();
    assert_eq!(tools.len(), 2);
    let divide = &tools[0];
    assert_eq!(divide["name"], "math.divide");
    assert_eq!(divide["title"], "Divide");
    assert_eq!(divide["description"], "Divide `a` by `b`.");
    let multiply = &tools[1];
    assert_eq!(multiply["name"], "multiply");
    assert_eq!(
        multiply["description"],
        "Multiply two numbers.\n\nBoth may be negative."
    );
    assert_eq!(
        multiply["annotations"],
        json!({ "readOnlyHint": true, "idempotentHint": true, "openWorldHint": false })
    );
    let input = &multiply["inputSchema"];
    assert_eq!(input["properties"]["a"]["description"], "The first factor");
    assert_eq!(input["required"], json!(["a", "b"]));
    assert_eq!(input["additionalProperties"], false);

    let result = core
        .call("multiply", json!({ "a": 6, "b": 7 }))
        .await
        .unwrap();
    assert_eq!(result.text_content(), "42");
    let result = core
        .call("math.divide", json!({ "a": 1, "b": 0 }))
        .await
        .unwrap();
    assert!(result.is_error);
    assert_eq!(result.text_content(), "division by zero");
}
