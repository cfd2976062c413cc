//! Resources, resource templates, prompts and completion, in-process: listing, reading,
//! rendering, completing, subscriptions and their notifications, and the errors bad input
//! gets (unknown URI -32002, unknown prompt and missing prompt argument -32602). Also the
//! fixes made for the conformance suite: elicitation schemas without schemars's numeric
//! formats, and the HTTP option to answer every request with an SSE stream.

use std::time::Duration;

use mcp_tool::content::ResourceContents;
use mcp_tool::http::HttpConfig;
use mcp_tool::prelude::*;
use mcp_tool::prompt::{Prompt, PromptMessage, PromptResult, Role};
use mcp_tool::protocol::code::RESOURCE_NOT_FOUND;
use mcp_tool::resource::{Resource, ResourceTemplate};
use mcp_tool::testing::Client;
use mcp_tool_tests::RawSession;
use serde_json::{Value, json};

/// The longest any single wait may take.
const WAIT: Duration = Duration::from_secs(5);

const INVALID_PARAMS: i64 = -32602;

/// A server with two resources, a template (with completion) and three prompts.
fn server() -> Server {
    Server::new("resources", "0.1.0")
        .without_registry()
        .resource(
            Resource::text("test://static-text", "static-text", "text/plain", "hello")
                .title("Static Text")
                .description("Some text"),
        )
        .resource(Resource::blob(
            "test://static-binary",
            "static-binary",
            "application/octet-stream",
            [0_u8, 1, 2, 255],
        ))
        .resource_template(
            ResourceTemplate::new("test://template/{id}/data", "template")
                .description("Data by id")
                .mime_type("application/json")
                .read(|request| async move {
                    let id = request.var("id").unwrap_or_default().to_owned();
                    Ok(vec![ResourceContents::text(
                        request.uri(),
                        "application/json",
                        json!({ "id": id }).to_string(),
                    )])
                })
                .complete("id", |typed, _| {
                    ["123", "124", "999"]
                        .into_iter()
                        .filter(|v| v.starts_with(typed))
                        .map(str::to_owned)
                        .collect()
                }),
        )
        .prompt(
            Prompt::new("simple")
                .description("A prompt without arguments")
                .get(|_| async { Ok(vec![PromptMessage::user("just text")].into()) }),
        )
        .prompt(
            Prompt::new("with_args")
                .title("With arguments")
                .description("A prompt with arguments")
                .argument("arg1", "First", true)
                .argument("arg2", "Second", false)
                .complete("arg1", |typed, context| {
                    let mut values: Vec<String> = ["alpha", "alpine", "beta"]
                        .into_iter()
                        .filter(|v| v.starts_with(typed))
                        .map(str::to_owned)
                        .collect();
                    if let Some(other) = context.get("arg2").and_then(Value::as_str) {
                        values.push(format!("{typed}+{other}"));
                    }
                    values
                })
                .get(|request| async move {
                    let arg1 = request.argument("arg1").unwrap_or_default();
                    let arg2 = request.argument("arg2").unwrap_or("none");
                    Ok(vec![PromptMessage::user(format!("arg1={arg1} arg2={arg2}"))].into())
                }),
        )
        .prompt(
            Prompt::new("rich")
                .description("A prompt with an embedded resource and an image")
                .argument("uri", "What to embed", true)
                .get(|request| async move {
                    let uri = request.argument("uri").unwrap_or_default();
                    Ok(PromptResult {
                        description: Some("rich content".into()),
                        messages: vec![
                            PromptMessage::new(
                                Role::User,
                                Content::resource(ResourceContents::text(
                                    uri,
                                    "text/plain",
                                    "embedded",
                                )),
                            ),
                            PromptMessage::new(
                                Role::Assistant,
                                Content::image([1_u8], "image/png"),
                            ),
                        ],
                    })
                }),
        )
}

async fn client() -> Client {
    Client::start(server()).await.expect("the server starts")
}

#[tokio::test]
async fn capabilities_name_resources_prompts_and_completions() {
    let client = Client::connect(server()).expect("the server starts");
    let init = client.initialize("2025-11-25").await.unwrap();
    let caps = &init["capabilities"];
    assert_eq!(
        caps["resources"],
        json!({ "subscribe": true, "listChanged": true })
    );
    assert_eq!(caps["prompts"], json!({ "listChanged": true }));
    assert_eq!(caps["completions"], json!({}));
}

#[tokio::test]
async fn resources_and_templates_are_listed() {
    let client = client().await;
    let list = client.request("resources/list", json!({})).await.unwrap();
    assert_eq!(
        list["resources"][0],
        json!({
            "uri": "test://static-text", "name": "static-text", "title": "Static Text",
            "description": "Some text", "mimeType": "text/plain"
        })
    );
    assert_eq!(
        list["resources"][1],
        json!({
            "uri": "test://static-binary", "name": "static-binary",
            "mimeType": "application/octet-stream", "size": 4
        })
    );
    // Templates are not resources.
    assert_eq!(list["resources"].as_array().unwrap().len(), 2);
    let templates = client
        .request("resources/templates/list", json!({}))
        .await
        .unwrap();
    assert_eq!(
        templates["resourceTemplates"],
        json!([{
            "uriTemplate": "test://template/{id}/data", "name": "template",
            "description": "Data by id", "mimeType": "application/json"
        }])
    );
}

#[tokio::test]
async fn text_binary_and_templated_resources_are_read() {
    let client = client().await;
    let text = client
        .request("resources/read", json!({ "uri": "test://static-text" }))
        .await
        .unwrap();
    assert_eq!(
        text,
        json!({ "contents": [{ "uri": "test://static-text", "mimeType": "text/plain", "text": "hello" }] })
    );
    let blob = client
        .request("resources/read", json!({ "uri": "test://static-binary" }))
        .await
        .unwrap();
    assert_eq!(blob["contents"][0]["blob"], "AAEC/w==");
    assert!(blob["contents"][0].get("text").is_none());
    let templated = client
        .request(
            "resources/read",
            json!({ "uri": "test://template/123/data" }),
        )
        .await
        .unwrap();
    assert_eq!(
        templated["contents"][0],
        json!({ "uri": "test://template/123/data", "mimeType": "application/json", "text": r#"{"id":"123"}"# })
    );
}

#[tokio::test]
async fn unknown_uris_are_resource_not_found() {
    let client = client().await;
    for uri in [
        "test://nope",
        "test://template//data",
        "test://template/1/2/data",
        "test://template/1/datum",
    ] {
        let e = client
            .request("resources/read", json!({ "uri": uri }))
            .await
            .expect_err(uri);
        assert_eq!(e.code, RESOURCE_NOT_FOUND, "{uri}: {e:?}");
        assert_eq!(RESOURCE_NOT_FOUND, -32002);
        assert_eq!(e.data, Some(json!({ "uri": uri })));
    }
    let e = client
        .request("resources/read", json!({}))
        .await
        .unwrap_err();
    assert_eq!(e.code, INVALID_PARAMS);
}

#[tokio::test]
async fn prompts_are_listed_with_their_arguments() {
    let client = client().await;
    let list = client.request("prompts/list", json!({})).await.unwrap();
    let prompts = list["prompts"].as_array().unwrap();
    assert_eq!(prompts.len(), 3);
    assert_eq!(
        prompts[0],
        json!({ "name": "simple", "description": "A prompt without arguments" })
    );
    assert_eq!(
        prompts[1],
        json!({
            "name": "with_args", "title": "With arguments", "description": "A prompt with arguments",
            "arguments": [
                { "name": "arg1", "description": "First", "required": true },
                { "name": "arg2", "description": "Second", "required": false }
            ]
        })
    );
}

#[tokio::test]
async fn prompts_are_rendered() {
    let client = client().await;
    let simple = client
        .request("prompts/get", json!({ "name": "simple" }))
        .await
        .unwrap();
    assert_eq!(
        simple,
        json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": "just text" } }] })
    );
    let with_args = client
        .request(
            "prompts/get",
            json!({ "name": "with_args", "arguments": { "arg1": "a", "arg2": "b" } }),
        )
        .await
        .unwrap();
    assert_eq!(with_args["messages"][0]["content"]["text"], "arg1=a arg2=b");
    // An optional argument may be left out.
    let optional = client
        .request(
            "prompts/get",
            json!({ "name": "with_args", "arguments": { "arg1": "a" } }),
        )
        .await
        .unwrap();
    assert_eq!(
        optional["messages"][0]["content"]["text"],
        "arg1=a arg2=none"
    );
    let rich = client
        .request(
            "prompts/get",
            json!({ "name": "rich", "arguments": { "uri": "test://x" } }),
        )
        .await
        .unwrap();
    assert_eq!(rich["description"], "rich content");
    assert_eq!(
        rich["messages"][0],
        json!({ "role": "user", "content": { "type": "resource", "resource": {
            "uri": "test://x", "mimeType": "text/plain", "text": "embedded" } } })
    );
    assert_eq!(
        rich["messages"][1],
        json!({ "role": "assistant", "content": { "type": "image", "data": "AQ==", "mimeType": "image/png" } })
    );
}

#[tokio::test]
async fn bad_prompt_requests_are_invalid_params() {
    let client = client().await;
    let e = client
        .request("prompts/get", json!({ "name": "nope" }))
        .await
        .unwrap_err();
    assert_eq!(e.code, INVALID_PARAMS, "{e:?}");
    assert!(e.message.contains("nope"), "{e:?}");
    // A required argument is missing: with no arguments at all, and with only the other one.
    for arguments in [None, Some(json!({ "arg2": "b" }))] {
        let mut params = json!({ "name": "with_args" });
        if let Some(a) = arguments {
            params["arguments"] = a;
        }
        let e = client.request("prompts/get", params).await.unwrap_err();
        assert_eq!(e.code, INVALID_PARAMS, "{e:?}");
        assert!(e.message.contains("arg1"), "{e:?}");
    }
    let e = client.request("prompts/get", json!({})).await.unwrap_err();
    assert_eq!(e.code, INVALID_PARAMS, "{e:?}");
}

#[tokio::test]
async fn prompt_arguments_and_template_variables_are_completed() {
    let client = client().await;
    let complete = |reference: Value, name: &str, value: &str, context: Option<Value>| {
        let mut params = json!({ "ref": reference, "argument": { "name": name, "value": value } });
        if let Some(c) = context {
            params["context"] = json!({ "arguments": c });
        }
        client.request("completion/complete", params)
    };
    let prompt = json!({ "type": "ref/prompt", "name": "with_args" });
    let r = complete(prompt.clone(), "arg1", "al", None).await.unwrap();
    assert_eq!(
        r,
        json!({ "completion": { "values": ["alpha", "alpine"], "total": 2, "hasMore": false } })
    );
    // The other arguments already given reach the completer.
    let r = complete(prompt.clone(), "arg1", "b", Some(json!({ "arg2": "x" })))
        .await
        .unwrap();
    assert_eq!(r["completion"]["values"], json!(["beta", "b+x"]));
    // An argument without a completer: no values, not an error.
    let r = complete(prompt, "arg2", "", None).await.unwrap();
    assert_eq!(r["completion"]["values"], json!([]));
    let template = json!({ "type": "ref/resource", "uri": "test://template/{id}/data" });
    let r = complete(template, "id", "12", None).await.unwrap();
    assert_eq!(r["completion"]["values"], json!(["123", "124"]));

    for bad in [
        json!({ "type": "ref/prompt", "name": "nope" }),
        json!({ "type": "ref/resource", "uri": "test://unknown/{x}" }),
        json!({ "type": "ref/tool", "name": "x" }),
    ] {
        let e = complete(bad.clone(), "arg1", "", None).await.unwrap_err();
        assert_eq!(e.code, INVALID_PARAMS, "{bad}: {e:?}");
    }
}

#[tokio::test]
async fn subscribers_and_only_they_hear_of_updates() {
    let core = server().build().unwrap();
    let mut subscriber = RawSession::open(&core).await;
    let mut other = RawSession::open(&core).await;

    let uri = "test://static-text";
    let r = subscriber
        .request("resources/subscribe", json!({ "uri": uri }))
        .await;
    assert_eq!(r["result"], json!({}), "{r}");
    // Subscribing to a URI of a template works too.
    let r = other
        .request(
            "resources/subscribe",
            json!({ "uri": "test://template/1/data" }),
        )
        .await;
    assert_eq!(r["result"], json!({}), "{r}");

    core.resource_updated(uri);
    assert_eq!(
        subscriber.next().await,
        json!({ "jsonrpc": "2.0", "method": "notifications/resources/updated", "params": { "uri": uri } })
    );
    // The other session hears nothing: the next thing it gets is the answer to a ping.
    let pong = other.request("ping", json!({})).await;
    assert_eq!(pong["result"], json!({}));

    let r = subscriber
        .request("resources/unsubscribe", json!({ "uri": uri }))
        .await;
    assert_eq!(r["result"], json!({}), "{r}");
    core.resource_updated(uri);
    let pong = subscriber.request("ping", json!({})).await;
    assert_eq!(pong["result"], json!({}));

    let r = subscriber.request("resources/subscribe", json!({})).await;
    assert_eq!(r["error"]["code"], INVALID_PARAMS, "{r}");
}

#[tokio::test]
async fn resources_added_while_serving_are_announced_and_readable() {
    let core = server().build().unwrap();
    let mut session = RawSession::open(&core).await;
    core.add_resource(Resource::text("test://new", "new", "text/plain", "fresh"));
    assert_eq!(
        session.next().await["method"],
        "notifications/resources/list_changed"
    );
    let r = session
        .request("resources/read", json!({ "uri": "test://new" }))
        .await;
    assert_eq!(r["result"]["contents"][0]["text"], "fresh", "{r}");
    core.remove_resource("test://new");
    assert_eq!(
        session.next().await["method"],
        "notifications/resources/list_changed"
    );
    let r = session
        .request("resources/read", json!({ "uri": "test://new" }))
        .await;
    assert_eq!(r["error"]["code"], RESOURCE_NOT_FOUND, "{r}");
}

/// A form with numbers of several Rust types.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Numbers {
    small: u8,
    big: i64,
    ratio: f64,
    #[serde(default = "half")]
    share: f32,
    #[schemars(email)]
    email: String,
    #[schemars(url)]
    site: Option<String>,
}

fn half() -> f32 {
    0.5
}

#[test]
fn elicitation_schemas_keep_only_the_formats_of_the_spec() {
    let schema = mcp_tool::extract::requested_schema::<Numbers>().unwrap();
    let p = &schema["properties"];
    // schemars's `uint8`, `int64`, `double`, `float` are no elicitation formats; the range of
    // an integer type stays, as bounds (an answer beyond it could not be read).
    assert_eq!(
        p["small"],
        json!({ "type": "integer", "minimum": 0, "maximum": 255 })
    );
    assert_eq!(
        p["big"],
        json!({ "type": "integer", "minimum": i64::MIN, "maximum": i64::MAX })
    );
    assert_eq!(p["ratio"], json!({ "type": "number" }));
    assert_eq!(p["share"], json!({ "type": "number", "default": 0.5 }));
    assert_eq!(p["email"], json!({ "type": "string", "format": "email" }));
    assert_eq!(p["site"], json!({ "type": "string", "format": "uri" }));
    assert_eq!(
        schema["required"],
        json!(["small", "big", "ratio", "email"])
    );
}

/// POSTs `initialize` to a router serving `config`; returns the content type and the body.
async fn initialize_over_http(config: HttpConfig) -> (String, String) {
    let router = server().build().unwrap().into_router(config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let serve = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    let response = tokio::time::timeout(
        WAIT,
        mcp_tool_tests::http_client()
            .post(format!("http://127.0.0.1:{port}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(
                json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": { "name": "t", "version": "0" } } })
                .to_string(),
            )
            .send(),
    )
    .await
    .expect("answered within the timeout")
    .unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers().contains_key("mcp-session-id"));
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    let body = tokio::time::timeout(WAIT, response.text())
        .await
        .expect("the body ends within the timeout")
        .unwrap();
    serve.abort();
    (content_type, body)
}

#[tokio::test]
async fn http_answers_with_sse_when_configured_to() {
    let (content_type, body) = initialize_over_http(HttpConfig::default()).await;
    assert_eq!(content_type, "application/json");
    let result: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(result["id"], 1);

    let mut config = HttpConfig::default();
    config.sse_responses = true;
    let (content_type, body) = initialize_over_http(config).await;
    assert_eq!(content_type, "text/event-stream");
    let data: Vec<&str> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .collect();
    assert_eq!(data.len(), 1, "{body}");
    let result: Value = serde_json::from_str(data[0]).unwrap();
    assert_eq!(result["id"], 1, "{body}");
    assert_eq!(result["result"]["protocolVersion"], "2025-11-25");
}
