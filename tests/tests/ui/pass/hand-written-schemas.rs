use mcp_tool::prelude::*;
use serde_json::{Value, json};

/// Takes whatever its hand-written 2020-12 schema allows.
#[tool(input_schema = r##"{
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": false
}"##, output_schema = r#"{"type": "object", "properties": {"echo": {}}, "required": ["echo"]}"#)]
fn echo(Args(v): Args<Value>) -> Json<Value> {
    Json(json!({ "echo": v }))
}

#[tokio::main]
async fn main() {
    let core = Server::new("t", "0").only(["echo"]).build().unwrap();
    let tool = core.tools().into_iter().next().unwrap();
    assert_eq!(tool.input_schema()["$defs"]["address"]["properties"]["city"]["type"], "string");
    assert_eq!(tool.input_schema()["additionalProperties"], false);
    assert_eq!(tool.output_schema().unwrap()["required"], json!(["echo"]));
    let r = core.call("echo", json!({ "name": "x" })).await.unwrap();
    assert!(!r.is_error, "{r:?}");
    let r = core.call("echo", json!({ "name": "x", "other": 1 })).await.unwrap();
    assert!(r.is_error);
    let r = core.call("echo", json!({ "address": { "city": 5 } })).await.unwrap();
    assert!(r.is_error);
}
