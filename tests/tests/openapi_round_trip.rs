//! The round trip: the `users` example's REST API (`users --http --openapi`), mounted back by
//! its `/openapi.json` as an OpenAPI mount (`calc --mount`), gives tools equivalent to the
//! example's MCP tools — the same names, schemas, hints and results (an error's code and
//! suggestion too), in both protocol eras.
//!
//! Two `users` servers start fresh, one called directly over MCP and one through the mount,
//! and see the same calls in the same order (so their generated ids agree). What the OpenAPI
//! mapping changes by design is normalized before comparing, and nothing else:
//!
//! - a mounted tool's name has the mount's label before it (`users__get_user`), and so does
//!   the tool named in an invalid-argument message;
//! - its description starts with the operation's summary (the tool's title) and, for a
//!   read-only tool, ends with the sentence the document adds for REST callers;
//! - its input and output schemas keep their definitions under `$defs` (renamed after the
//!   document's components, `create_user.Role`), where `tools/list` of the example inlines
//!   them: both are inlined, by the same rule, before comparing;
//! - an error result's text starts with the service's status (`the `users` service answered
//!   HTTP 404 Not Found: `) and its `_meta` holds that status; the rest of the text and the
//!   tool error's fields (code, message, suggestion, retryable) are the example's own;
//! - a JSON result's text is the structured content written with its keys in another order;
//!   `createdAt` (the clock) is compared as present only;
//! - `_meta` entries of the protocol (`io.modelcontextprotocol/…`, the answering server's
//!   identity) name the server that answered.

use std::time::Duration;

use mcp_tool::client::{Connect, McpClient, VersionChoice};
use mcp_tool_tests::{ExampleHttp, TempDir};
use serde_json::{Map, Value, json};

/// The calls made both ways, in order: results, a tool error with a code, a missing and an
/// invalid argument, a text result, a tool error of another code, and a read after a write.
fn calls() -> Vec<(&'static str, Value)> {
    vec![
        (
            "create_user",
            json!({"email": "ada@example.com", "name": "Ada", "role": "admin", "metadata": {"team": "math"}}),
        ),
        ("get_user", json!({"userId": "usr_000001"})),
        ("get_user", json!({"userId": "nobody"})),
        ("get_user", json!({})),
        ("create_user", json!({"email": "not an email", "name": "A"})),
        ("delete_user", json!({"userId": "nobody"})),
        (
            "send_email",
            json!({"to": "ada@example.com", "subject": "hi", "body": "hello"}),
        ),
        ("seed_users", json!({"count": 30})),
        ("seed_users", json!({"count": 1})),
        ("get_user", json!({"userId": "usr_000002"})),
        ("delete_user", json!({"userId": "usr_000001"})),
    ]
}

/// The example's tools as `tools/list` gives them, by name.
async fn tools(client: &McpClient, prefix: &str) -> Map<String, Value> {
    let listed = client.list_tools().await.expect("tools/list");
    listed
        .into_iter()
        .filter_map(|t| {
            let name = t["name"].as_str()?.strip_prefix(prefix)?.to_owned();
            Some((name, t))
        })
        .collect()
}

/// `schema` with each `$ref` to its own `$defs` replaced by the definition, as `tools/list`
/// inlines a derived schema's: the keywords beside the reference merged into it when none
/// clashes, else kept beside an `allOf` of it.
fn inline(schema: &Value) -> Value {
    fn walk(value: &Value, defs: &Map<String, Value>) -> Value {
        match value {
            Value::Object(object) => {
                let mut out: Map<String, Value> = object
                    .iter()
                    .filter(|(k, _)| *k != "$ref" && *k != "$defs")
                    .map(|(k, v)| (k.clone(), walk(v, defs)))
                    .collect();
                let Some(reference) = object.get("$ref").and_then(Value::as_str) else {
                    return Value::Object(out);
                };
                let name = reference
                    .strip_prefix("#/$defs/")
                    .unwrap_or_else(|| panic!("a reference outside the schema: {reference}"));
                let Value::Object(definition) = walk(&defs[name], defs) else {
                    panic!("definition {name} is no object");
                };
                if out.keys().all(|k| !definition.contains_key(k)) {
                    out.extend(definition);
                } else {
                    out.insert("allOf".into(), json!([definition]));
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.iter().map(|i| walk(i, defs)).collect()),
            other => other.clone(),
        }
    }
    let defs = schema["$defs"].as_object().cloned().unwrap_or_default();
    walk(schema, &defs)
}

/// A mounted tool as the example would list it (see the file's header).
fn unmounted(mut tool: Value, original: &Value) -> Value {
    let name = original["name"].as_str().expect("a name");
    assert_eq!(tool["name"], format!("users__{name}"));
    tool["name"] = json!(name);
    let title = original["title"]
        .as_str()
        .expect("every users tool has a title");
    let mut description = format!("{title}\n\n{}", original["description"].as_str().unwrap());
    if original["annotations"]["readOnlyHint"] == json!(true) {
        description.push_str("\n\nRead-only: the tool changes nothing.");
    }
    assert_eq!(tool["description"], json!(description), "{name}");
    tool["description"] = original["description"].clone();
    for schema in ["inputSchema", "outputSchema"] {
        if tool.get(schema).is_some() {
            tool[schema] = inline(&tool[schema]);
        }
    }
    tool
}

/// What a call's outcome says, as both ways must say it: the result's content (a JSON text
/// parsed), structured content and tool error fields, the clock's `createdAt` masked; or the
/// protocol error's message.
fn outcome(answer: Result<Value, String>) -> Value {
    let mut result = match answer {
        Ok(result) => result,
        Err(message) => return json!({"protocolError": message}),
    };
    if let Some(structured) = result.get_mut("structuredContent") {
        mask_clock(structured);
    }
    for block in result["content"].as_array_mut().into_iter().flatten() {
        if let Some(parsed) = block["text"]
            .as_str()
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .filter(Value::is_object)
        {
            block["text"] = parsed;
            mask_clock(&mut block["text"]);
        }
    }
    if let Some(meta) = result.get_mut("_meta").and_then(Value::as_object_mut) {
        meta.retain(|k, _| !k.starts_with("io.modelcontextprotocol/"));
        if meta.is_empty() {
            result.as_object_mut().unwrap().remove("_meta");
        }
    }
    result
}

fn mask_clock(value: &mut Value) {
    if let Some(at) = value.get_mut("createdAt") {
        assert!(at.as_str().is_some_and(|t| t.ends_with('Z')), "{at}");
        *at = json!("<time>");
    }
}

/// A mounted call's outcome as the example's would read: the error's status prefix taken
/// off the text (its status checked against the tool error's code), its `_meta` status
/// dropped, the label taken out of an invalid-argument message.
fn unmounted_outcome(mut outcome: Value, name: &str) -> Value {
    if let Some(text) = outcome["protocolError"].as_str() {
        outcome["protocolError"] = json!(text.replace(&format!("users__{name}"), name));
        return outcome;
    }
    let Some(text) = outcome["content"][0]["text"].as_str().map(str::to_owned) else {
        return outcome;
    };
    let text = text.replace(&format!("`users__{name}`"), &format!("`{name}`"));
    let text = match outcome
        .get_mut("_meta")
        .and_then(Value::as_object_mut)
        .and_then(|m| m.remove("io.github.mcp-tool/http"))
    {
        Some(http) => {
            let status = http["status"].as_u64().expect("a status");
            let code = outcome["_meta"]["dev.mcp-tool/error"]["code"]
                .as_str()
                .expect("the tool error's code came back");
            assert_eq!(u64::from(mcp_tool::http::status_of_code(code)), status);
            let prefix = format!("the `users` service answered HTTP {status} ");
            let rest = text
                .strip_prefix(&prefix)
                .unwrap_or_else(|| panic!("{text}"));
            rest.split_once(": ")
                .map(|(_, original)| original.to_owned())
                .unwrap_or_default()
        }
        None => text,
    };
    outcome["content"][0]["text"] = json!(text);
    if outcome
        .get("_meta")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
    {
        outcome.as_object_mut().unwrap().remove("_meta");
    }
    outcome
}

async fn connect(url: &str, version: VersionChoice) -> McpClient {
    McpClient::connect(
        Connect::http(url)
            .protocol_version(version)
            .timeout(Duration::from_secs(30)),
    )
    .await
    .expect("connect")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_rest_api_mounted_back_gives_the_users_tools() {
    let direct = ExampleHttp::start("users", &["--openapi"], &[]);
    let served = ExampleHttp::start("users", &["--openapi"], &[]);
    let dir = TempDir::new("openapi-round-trip");
    let mounts = dir.path().join("mounts.json");
    let spec = format!("http://{}/openapi.json", served.addr);
    std::fs::write(
        &mounts,
        json!([{"type": "openapi", "server_label": "users", "spec": spec}]).to_string(),
    )
    .expect("write the mount file");
    let gateway = ExampleHttp::start("calc", &["--mount", mounts.to_str().unwrap()], &[]);

    for version in [VersionChoice::V2026_07_28, VersionChoice::V2025_11_25] {
        let (mcp, mounted) = (
            connect(&direct.url, version).await,
            connect(&gateway.url, version).await,
        );
        let originals = tools(&mcp, "").await;
        let copies = tools(&mounted, "users__").await;
        assert_eq!(
            originals.keys().collect::<Vec<_>>(),
            copies.keys().collect::<Vec<_>>(),
            "the same tools"
        );
        for (name, original) in &originals {
            let copy = unmounted(copies[name].clone(), original);
            let mut original = original.clone();
            for schema in ["inputSchema", "outputSchema"] {
                if original.get(schema).is_some() {
                    original[schema] = inline(&original[schema]);
                }
            }
            assert_eq!(copy, original, "{name}: {version:?}");
        }
        for (name, arguments) in calls() {
            let want = outcome(
                mcp.call(name, arguments.clone())
                    .await
                    .map_err(|e| e.to_string()),
            );
            let got = outcome(
                mounted
                    .call(&format!("users__{name}"), arguments.clone())
                    .await
                    .map_err(|e| e.to_string()),
            );
            assert_eq!(
                unmounted_outcome(got, name),
                want,
                "{name} {arguments}: {version:?}"
            );
        }
        mcp.close().await;
        mounted.close().await;
    }
}
