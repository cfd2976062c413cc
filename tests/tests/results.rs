//! What tools return and how they are described, through the in-process client: structured
//! output (wrapping, hand-written output schemas, the debug-build check of every structured
//! result), the text copy of structured content, examples and their checker, `_meta`, icons,
//! MCP Apps visibility, content annotations, and tools defined at run time (property lists,
//! raw schemas, schemars types; added and removed while a client is connected).

use mcp_tool::content::{Audience, ContentAnnotations, ResourceLink};
use mcp_tool::dynamic::{Annotations, DynamicArgs, DynamicTool, PropertyType, ToolProperty};
use mcp_tool::prelude::*;
use mcp_tool::server::ServerHandle;
use mcp_tool::testing::{CallResult, Client, check_examples};
use mcp_tool_tests::RawSession;
use serde_json::{Value, json};

/// JSON-RPC's "invalid params", which an unknown tool gets.
const INVALID_PARAMS: i64 = -32602;

// ---------------------------------------------------------------------------------------------
// Tools

/// Count the words of a text.
#[tool(
    read_only,
    examples(
        request = r#"{"text": "one two three"}"#,
        response = r#"{"result": 3}"#
    )
)]
fn count_words(text: String) -> Json<u32> {
    Json(text.split_whitespace().count() as u32)
}

/// The words of a text, in order.
#[tool]
fn split_words(text: String) -> Json<Vec<String>> {
    Json(text.split_whitespace().map(String::from).collect())
}

/// A word and its length.
#[derive(Serialize, JsonSchema)]
struct Word {
    text: String,
    len: usize,
}

/// The words of a text with their lengths.
#[tool]
fn measure_words(text: String) -> Json<Vec<Word>> {
    Json(
        text.split_whitespace()
            .map(|w| Word {
                text: w.into(),
                len: w.chars().count(),
            })
            .collect(),
    )
}

/// How long a text is.
#[derive(Serialize, JsonSchema)]
struct Stats {
    /// How many words
    words: u32,
    /// How many characters
    chars: u32,
}

/// Word and character counts.
#[tool(examples(
    request = r#"{"text": "hi there"}"#,
    response = r#"{"words": 2, "chars": 8}"#
))]
fn stats(text: String) -> Json<Stats> {
    Json(Stats {
        words: text.split_whitespace().count() as u32,
        chars: text.chars().count() as u32,
    })
}

/// The hand-written output schema of `totals`.
const TOTALS_SCHEMA: &str = r#"{"type": "object", "properties": {"words": {"type": "integer", "minimum": 0, "description": "How many words"}}, "required": ["words"], "additionalProperties": false}"#;

/// The totals of `totals`.
#[derive(Serialize, JsonSchema)]
struct Totals {
    words: u32,
}

/// Totals, described by a hand-written output schema instead of the derived one.
#[tool(
    output_schema = r#"{"type": "object", "properties": {"words": {"type": "integer", "minimum": 0, "description": "How many words"}}, "required": ["words"], "additionalProperties": false}"#
)]
fn totals(text: String) -> Json<Totals> {
    Json(Totals {
        words: text.split_whitespace().count() as u32,
    })
}

/// A count, with a hand-written output schema that is not an object (so it is wrapped).
#[tool(output_schema = r#"{"type": "integer", "minimum": 0}"#)]
fn tally(text: String) -> Json<u32> {
    Json(text.len() as u32)
}

/// Claims an integer `n`, returns a string.
#[tool(
    output_schema = r#"{"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}"#
)]
fn liar() -> Json<Value> {
    Json(json!({ "n": "three" }))
}

/// A number that the schema says is at most 10.
#[derive(Serialize, JsonSchema)]
struct Small {
    #[schemars(range(max = 10))]
    n: u32,
}

/// Returns `n`, which may break its own derived output schema.
#[tool]
fn small(n: u32) -> Result<Json<Small>, ToolError> {
    if n == 0 {
        return Err(ToolError::new("ZERO", "n must not be zero"));
    }
    Ok(Json(Small { n }))
}

/// Declares an output schema and forgets the structured content.
#[tool(output_schema = r#"{"type": "object"}"#)]
fn forgetful() -> String {
    "no structure".into()
}

/// Structured content only.
#[tool]
fn only_structured() -> ToolResult {
    ToolResult {
        structured_content: Some(json!({ "a": 1, "b": [true, null] }).into()),
        ..ToolResult::default()
    }
}

/// Structured content only, described by a non-object schema.
#[tool(output_schema = r#"{"type": "array", "items": {"type": "integer"}}"#)]
fn structured_list() -> ToolResult {
    ToolResult {
        structured_content: Some(json!([1, 2, 3]).into()),
        ..ToolResult::default()
    }
}

/// An example request that breaks the input schema.
#[tool(examples(request = r#"{"txt": "hello"}"#, response = r#"{"result": 5}"#))]
fn letters(text: String) -> Json<u32> {
    Json(text.chars().count() as u32)
}

/// An example response that breaks the output schema.
#[tool(examples(
    request = r#"{"text": "a"}"#,
    response = r#"{"words": "many", "chars": 1}"#
))]
fn wordy(text: String) -> Json<Stats> {
    Json(Stats {
        words: 1,
        chars: text.chars().count() as u32,
    })
}

/// Add on an abacus.
#[tool(
    invoking = "Counting",
    invoked = "Counted",
    meta = r#"{"dev.example/owner": "team-a", "securitySchemes": [{"type": "noauth"}]}"#,
    icons = r#"[{"src": "https://example.com/abacus.png", "mimeType": "image/png", "sizes": ["48x48"]}, {"src": "data:image/svg+xml;base64,PHN2Zy8+", "mimeType": "image/svg+xml", "theme": "dark"}]"#
)]
fn abacus(a: i64, b: i64) -> i64 {
    a + b
}

/// Refresh the view's data: only the app calls it.
#[tool(visibility = ["app"])]
fn refresh_view() -> &'static str {
    "refreshed"
}

/// For the model only: the view may not call it.
#[tool(visibility = ["model"])]
fn model_only() -> &'static str {
    "model"
}

/// For both the model and the view.
#[tool(visibility = ["model", "app"])]
fn for_both() -> &'static str {
    "both"
}

/// Blocks with annotations.
#[tool]
fn annotated() -> Vec<Content> {
    vec![
        Content::text("for you").annotate(ContentAnnotations {
            audience: vec![Audience::User],
            priority: Some(0.9),
            last_modified: None,
        }),
        Content::image([1, 2, 3], "image/png").annotate(ContentAnnotations {
            audience: vec![Audience::Assistant],
            priority: Some(0.1),
            last_modified: Some("2025-06-01T00:00:00Z".into()),
        }),
        Content::ResourceLink(ResourceLink {
            uri: "test://doc".into(),
            name: "doc".into(),
            title: None,
            description: None,
            mime_type: Some("text/plain".into()),
            ..ResourceLink::default()
        })
        .annotate(ContentAnnotations {
            audience: vec![Audience::User, Audience::Assistant],
            priority: Some(2.0),
            last_modified: None,
        }),
        // Annotating again replaces the annotations.
        Content::text("twice")
            .annotate(ContentAnnotations {
                priority: Some(0.5),
                ..ContentAnnotations::default()
            })
            .annotate(ContentAnnotations {
                priority: Some(0.75),
                ..ContentAnnotations::default()
            }),
    ]
}

// ---------------------------------------------------------------------------------------------
// Helpers

async fn client(tools: &[&str]) -> Client {
    Client::start(Server::new("results", "0.1.0").only(tools.iter().copied()))
        .await
        .expect("the server starts")
}

async fn call(c: &Client, tool: &str, arguments: Value) -> CallResult {
    c.call(tool, arguments)
        .await
        .unwrap_or_else(|e| panic!("`{tool}` was refused: {e:?}"))
}

async fn listed(c: &Client, name: &str) -> Value {
    let tools = c.list_tools().await.expect("tools/list");
    tools
        .into_iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("`{name}` is not listed"))
}

fn def(core: &ServerHandle, name: &str) -> Value {
    core.tools()
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no tool `{name}`"))
        .to_json()
}

// ---------------------------------------------------------------------------------------------
// Structured output

#[tokio::test]
async fn a_non_object_result_is_wrapped_with_a_matching_schema() {
    let c = client(&["count_words", "split_words", "measure_words", "stats"]).await;

    let t = listed(&c, "count_words").await;
    let schema = &t["outputSchema"];
    assert_eq!(schema["type"], "object", "{t}");
    assert_eq!(schema["required"], json!(["result"]));
    assert_eq!(
        schema["properties"]["result"]["type"], "integer",
        "{schema}"
    );
    let r = call(&c, "count_words", json!({ "text": "one two three" })).await;
    assert!(!r.is_error(), "{r:?}");
    assert_eq!(r.structured(), Some(&json!({ "result": 3 })));
    // The text copy is the value itself.
    assert_eq!(r.text(), "3");

    let t = listed(&c, "split_words").await;
    assert_eq!(
        t["outputSchema"],
        json!({
            "type": "object",
            "properties": { "result": { "type": "array", "items": { "type": "string" } } },
            "required": ["result"]
        })
    );
    let r = call(&c, "split_words", json!({ "text": "a b" })).await;
    assert_eq!(r.structured(), Some(&json!({ "result": ["a", "b"] })));
    assert_eq!(r.text(), r#"["a","b"]"#);

    // Definitions move up to the wrapper, where the `$ref`s point (what the result is
    // validated against); listed, they are inlined.
    let t = listed(&c, "measure_words").await;
    let schema = &t["outputSchema"];
    let item = &schema["properties"]["result"]["items"];
    assert_eq!(item["type"], "object", "{schema}");
    assert_eq!(item["description"], "A word and its length.", "{schema}");
    assert!(schema.get("$defs").is_none(), "{schema}");
    assert!(schema["properties"]["result"].get("$defs").is_none());
    let r = call(&c, "measure_words", json!({ "text": "hello yo" })).await;
    assert!(!r.is_error(), "the result matches its schema: {r:?}");
    assert_eq!(
        r.structured(),
        Some(&json!({ "result": [{ "text": "hello", "len": 5 }, { "text": "yo", "len": 2 }] }))
    );

    // An object is not wrapped.
    let t = listed(&c, "stats").await;
    assert_eq!(t["outputSchema"]["type"], "object");
    assert!(t["outputSchema"]["properties"].get("result").is_none());
    assert_eq!(
        t["outputSchema"]["properties"]["words"]["description"],
        "How many words"
    );
    let r = call(&c, "stats", json!({ "text": "hi there" })).await;
    assert_eq!(r.structured(), Some(&json!({ "words": 2, "chars": 8 })));
}

#[tokio::test]
async fn clients_before_2025_06_18_get_text_only() {
    let c = Client::connect(Server::new("results", "0.1.0").only(["count_words"])).unwrap();
    c.initialize("2025-03-26").await.unwrap();
    let t = listed(&c, "count_words").await;
    assert!(t.get("outputSchema").is_none(), "{t}");
    let r = call(&c, "count_words", json!({ "text": "a b" })).await;
    assert!(r.structured().is_none(), "{r:?}");
    assert_eq!(r.text(), "2");
}

#[tokio::test]
async fn an_output_schema_attribute_replaces_the_derived_one() {
    let c = client(&["totals", "tally"]).await;
    let t = listed(&c, "totals").await;
    let written: Value = serde_json::from_str(TOTALS_SCHEMA).unwrap();
    assert_eq!(t["outputSchema"], written, "verbatim");
    let r = call(&c, "totals", json!({ "text": "a b c" })).await;
    assert!(!r.is_error(), "{r:?}");
    assert_eq!(r.structured(), Some(&json!({ "words": 3 })));

    // A hand-written schema that is not an object is wrapped like a derived one.
    let t = listed(&c, "tally").await;
    assert_eq!(
        t["outputSchema"],
        json!({
            "type": "object",
            "properties": { "result": { "type": "integer", "minimum": 0 } },
            "required": ["result"]
        })
    );
    let r = call(&c, "tally", json!({ "text": "four" })).await;
    assert_eq!(r.structured(), Some(&json!({ "result": 4 })));
}

#[tokio::test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "structured results are checked in debug builds only"
)]
async fn a_result_that_breaks_its_output_schema_is_an_error_in_debug_builds() {
    let c = client(&["liar", "small", "forgetful"]).await;

    let r = call(&c, "liar", json!({})).await;
    assert!(r.is_error(), "{r:?}");
    let text = r.text();
    assert!(text.contains("`liar`"), "{text}");
    assert!(text.contains("output schema"), "{text}");
    assert!(text.contains("n: "), "names the field: {text}");
    assert!(r.structured().is_none(), "{r:?}");

    // A derived schema with a rule the value breaks.
    let r = call(&c, "small", json!({ "n": 7 })).await;
    assert!(!r.is_error(), "{r:?}");
    let r = call(&c, "small", json!({ "n": 11 })).await;
    assert!(r.is_error(), "{r:?}");
    let text = r.text();
    assert!(text.contains("output schema"), "{text}");
    assert!(text.contains("n: 11"), "{text}");
    // An error result is not checked: the tool's own error comes through.
    let r = call(&c, "small", json!({ "n": 0 })).await;
    assert!(r.is_error());
    assert_eq!(r.text(), "[ZERO] n must not be zero");

    let r = call(&c, "forgetful", json!({})).await;
    assert!(r.is_error(), "{r:?}");
    assert!(
        r.text().contains("declares an output schema"),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn structured_content_alone_gets_a_text_copy() {
    let c = client(&["only_structured", "structured_list"]).await;
    let r = call(&c, "only_structured", json!({})).await;
    assert_eq!(
        r.0,
        json!({
            "content": [{ "type": "text", "text": r#"{"a":1,"b":[true,null]}"# }],
            "structuredContent": { "a": 1, "b": [true, null] }
        })
    );
    let t = listed(&c, "only_structured").await;
    assert!(t.get("outputSchema").is_none(), "{t}");

    // Wrapped for a non-object schema; the text copy is the value.
    let r = call(&c, "structured_list", json!({})).await;
    assert!(!r.is_error(), "{r:?}");
    assert_eq!(r.structured(), Some(&json!({ "result": [1, 2, 3] })));
    assert_eq!(r.text(), "[1,2,3]");
}

// ---------------------------------------------------------------------------------------------
// Examples, metadata, icons

#[tokio::test]
async fn examples_are_published_and_checked() {
    let core = Server::new("results", "0.1.0")
        .only(["count_words", "stats", "abacus"])
        .build()
        .unwrap();
    check_examples(&core).expect("good examples pass");
    assert_eq!(
        def(&core, "count_words")["_meta"]["examples"],
        json!({ "request": { "text": "one two three" }, "response": { "result": 3 } })
    );

    // The examples are what the tools really do.
    let c = client(&["count_words", "stats"]).await;
    for name in ["count_words", "stats"] {
        let examples = &def(&core, name)["_meta"]["examples"];
        let r = call(&c, name, examples["request"].clone()).await;
        assert_eq!(r.structured(), Some(&examples["response"]), "{name}");
    }

    let core = Server::new("results", "0.1.0")
        .only(["count_words", "letters", "wordy"])
        .build()
        .unwrap();
    let error = check_examples(&core).expect_err("bad examples are reported");
    // Each failing tool, and the fields its examples break.
    fn pointers(e: Option<&mcp_tool::dynamic::ValidationError>) -> Vec<&str> {
        e.map(|e| e.violations().iter().map(|v| v.pointer()).collect())
            .unwrap_or_default()
    }
    let failures: Vec<(&str, Vec<&str>, Vec<&str>)> = error
        .failures()
        .iter()
        .map(|f| (f.tool(), pointers(f.request()), pointers(f.response())))
        .collect();
    assert_eq!(
        failures,
        [
            ("letters", vec!["/text", "/txt"], vec![]),
            ("wordy", vec![], vec!["/words"]),
        ]
    );
    let problems = error.to_string();
    assert!(!problems.contains("count_words"), "{problems}");
    assert!(problems.contains("tool `letters`"), "{problems}");
    assert!(
        problems.contains("example request does not fit the input schema"),
        "{problems}"
    );
    assert!(problems.contains("txt"), "{problems}");
    assert!(problems.contains("tool `wordy`"), "{problems}");
    assert!(
        problems.contains("example response does not fit the output schema"),
        "{problems}"
    );
    assert!(problems.contains("words"), "{problems}");
}

#[tokio::test]
async fn meta_is_merged_and_icons_are_listed() {
    let c = client(&["abacus"]).await;
    let t = listed(&c, "abacus").await;
    assert_eq!(
        t["_meta"],
        json!({
            "dev.example/owner": "team-a",
            "securitySchemes": [{ "type": "noauth" }],
            "openai/toolInvocation/invoking": "Counting",
            "openai/toolInvocation/invoked": "Counted"
        })
    );
    assert_eq!(
        t["icons"],
        json!([
            { "src": "https://example.com/abacus.png", "mimeType": "image/png", "sizes": ["48x48"] },
            { "src": "data:image/svg+xml;base64,PHN2Zy8+", "mimeType": "image/svg+xml", "theme": "dark" }
        ])
    );
    assert_eq!(
        call(&c, "abacus", json!({ "a": 2, "b": 3 })).await.text(),
        "5"
    );
}

// ---------------------------------------------------------------------------------------------
// MCP Apps visibility

#[tokio::test]
async fn an_app_only_tool_is_not_listed_but_callable() {
    let names = ["refresh_view", "model_only", "for_both"];
    let c = client(&names).await;
    let tools = c.list_tools().await.unwrap();
    let listed_names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(!listed_names.contains(&"refresh_view"), "{listed_names:?}");
    assert!(listed_names.contains(&"model_only"), "{listed_names:?}");
    assert!(listed_names.contains(&"for_both"), "{listed_names:?}");

    let r = call(&c, "refresh_view", json!({})).await;
    assert!(!r.is_error(), "{r:?}");
    assert_eq!(r.text(), "refreshed");

    let core = Server::new("results", "0.1.0").only(names).build().unwrap();
    assert!(
        core.tools()
            .iter()
            .any(|t| t.name() == "refresh_view" && !t.for_model())
    );
    let app = core
        .tools()
        .into_iter()
        .find(|t| t.name() == "refresh_view")
        .unwrap();
    assert!(!app.for_model());
    assert_eq!(
        app.to_json()["_meta"],
        json!({
            "ui": { "visibility": ["app"] },
            "openai/widgetAccessible": true,
            "openai/visibility": "private"
        })
    );
}

#[tokio::test]
async fn a_model_only_tool_is_not_accessible_to_widgets() {
    let c = client(&["model_only", "for_both"]).await;
    let t = listed(&c, "model_only").await;
    assert_eq!(
        t["_meta"],
        json!({ "ui": { "visibility": ["model"] }, "openai/widgetAccessible": false })
    );
    let t = listed(&c, "for_both").await;
    assert_eq!(
        t["_meta"],
        json!({ "ui": { "visibility": ["model", "app"] }, "openai/widgetAccessible": true })
    );
}

// ---------------------------------------------------------------------------------------------
// Content annotations

#[tokio::test]
async fn content_annotations_serialize() {
    let c = client(&["annotated"]).await;
    let r = call(&c, "annotated", json!({})).await;
    assert_eq!(
        r.0["content"],
        json!([
            {
                "type": "text",
                "text": "for you",
                "annotations": { "audience": ["user"], "priority": 0.9 }
            },
            {
                "type": "image",
                "data": "AQID",
                "mimeType": "image/png",
                "annotations": {
                    "audience": ["assistant"],
                    "priority": 0.1,
                    "lastModified": "2025-06-01T00:00:00Z"
                }
            },
            {
                "type": "resource_link",
                "uri": "test://doc",
                "name": "doc",
                "mimeType": "text/plain",
                // A priority is clamped to 0..=1.
                "annotations": { "audience": ["user", "assistant"], "priority": 1.0 }
            },
            { "type": "text", "text": "twice", "annotations": { "priority": 0.75 } }
        ])
    );
}

// ---------------------------------------------------------------------------------------------
// Dynamic tools

fn echo(description: &str) -> DynamicTool {
    DynamicTool::new("echo", description, |args: DynamicArgs| async move {
        args.get_str("text").unwrap_or_default().to_owned()
    })
    .property(
        ToolProperty::string("text")
            .description("What to echo")
            .required(),
    )
}

#[tokio::test]
async fn a_property_list_makes_the_input_schema() {
    let tool = DynamicTool::new("order", "Place an order.", |args: DynamicArgs| async move {
        format!(
            "{} item(s)",
            args.arguments["items"].as_array().map_or(0, Vec::len)
        )
    })
    .title("Order")
    .annotations(Annotations {
        destructive: Some(false),
        ..Annotations::default()
    })
    .property(
        ToolProperty::string("customer")
            .description("Who orders")
            .required(),
    )
    .property(ToolProperty::string("items").array().required())
    .property(ToolProperty::integer("quantities").array())
    .property(ToolProperty::number("discount").description("A fraction"))
    .property(ToolProperty::boolean("gift"))
    .property(ToolProperty::new("address", PropertyType::Object));
    let c = Client::start(
        Server::new("dyn", "0.1.0")
            .only(["count_words"])
            .dynamic_tool(tool),
    )
    .await
    .unwrap();
    let t = listed(&c, "order").await;
    assert_eq!(
        t,
        json!({
            "name": "order",
            "title": "Order",
            "description": "Place an order.",
            "annotations": { "title": "Order", "destructiveHint": false },
            "inputSchema": {
                "type": "object",
                "properties": {
                    "customer": { "type": "string", "description": "Who orders" },
                    "items": { "type": "array", "items": { "type": "string" } },
                    "quantities": { "type": "array", "items": { "type": "integer" } },
                    "discount": { "type": "number", "description": "A fraction" },
                    "gift": { "type": "boolean" },
                    "address": { "type": "object" }
                },
                "required": ["customer", "items"]
            }
        })
    );

    let r = call(
        &c,
        "order",
        json!({ "customer": "ann", "items": ["tea", "cake"], "quantities": [1, 2], "gift": true }),
    )
    .await;
    assert_eq!(r.text(), "2 item(s)", "{r:?}");
    for (args, field) in [
        (json!({ "items": [] }), "customer"),
        (json!({ "customer": "ann" }), "items"),
        (json!({ "customer": "ann", "items": "tea" }), "items"),
        (
            json!({ "customer": "ann", "items": [], "quantities": [1.5] }),
            "quantities[0]",
        ),
        (
            json!({ "customer": "ann", "items": [], "discount": "10%" }),
            "discount",
        ),
        (
            json!({ "customer": "ann", "items": [], "address": "here" }),
            "address",
        ),
    ] {
        let r = call(&c, "order", args.clone()).await;
        assert!(r.is_error(), "{args}: {r:?}");
        let text = r.text();
        assert!(
            text.lines().any(|l| l.starts_with(&format!("{field}:"))),
            "{args}: {text}"
        );
    }
}

/// The arguments of `resize`, given to a dynamic tool as a schemars type.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Resize {
    /// Width in pixels
    #[schemars(range(min = 1, max = 4096))]
    width: u32,
    /// Height in pixels
    #[schemars(range(min = 1, max = 4096))]
    height: u32,
    /// How to fit the picture
    fit: Option<Fit>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Fit {
    Contain,
    Cover,
}

#[tokio::test]
async fn a_schemars_type_makes_the_input_schema() {
    let tool = DynamicTool::new(
        "resize",
        "Resize a picture.",
        |args: DynamicArgs| async move {
            let r: Resize = args.parse()?;
            Ok::<_, ToolError>(format!("{}x{}", r.width, r.height))
        },
    )
    .input_type::<Resize>();
    let c = Client::start(
        Server::new("dyn", "0.1.0")
            .only(["count_words"])
            .dynamic_tool(tool),
    )
    .await
    .unwrap();
    let schema = listed(&c, "resize").await["inputSchema"].clone();
    assert_eq!(schema["type"], "object", "{schema}");
    assert!(schema.get("$schema").is_none(), "{schema}");
    assert!(schema.get("title").is_none(), "{schema}");
    assert_eq!(schema["required"], json!(["width", "height"]));
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(
        schema["properties"]["width"]["description"],
        "Width in pixels"
    );
    assert_eq!(schema["properties"]["width"]["maximum"], 4096);
    assert!(schema["$defs"]["Fit"].is_object(), "{schema}");

    let r = call(
        &c,
        "resize",
        json!({ "width": 640, "height": 480, "fit": "cover" }),
    )
    .await;
    assert_eq!(r.text(), "640x480", "{r:?}");
    for (args, field) in [
        (json!({ "width": 0, "height": 1 }), "width"),
        (json!({ "width": 1 }), "height"),
        (json!({ "width": 1, "height": 1, "fit": "stretch" }), "fit"),
        (json!({ "width": 1, "height": 1, "depth": 3 }), "depth"),
    ] {
        let r = call(&c, "resize", args.clone()).await;
        assert!(r.is_error(), "{args}: {r:?}");
        assert!(
            r.text()
                .lines()
                .any(|l| l.starts_with(&format!("{field}:"))),
            "{args}: {}",
            r.text()
        );
    }
}

#[tokio::test]
async fn a_raw_schema_and_an_output_schema_are_used_as_given() {
    let input = json!({
        "type": "object",
        "properties": { "n": { "type": "integer", "minimum": 0 } },
        "required": ["n"],
        "additionalProperties": false
    });
    let square = DynamicTool::new(
        "square",
        "Square a number.",
        |args: DynamicArgs| async move {
            let n = args.arguments["n"].as_i64().unwrap_or_default();
            Json(json!(n * n))
        },
    )
    .input_schema(input.clone())
    .output_schema(json!({ "type": "integer" }));
    let broken = DynamicTool::new("broken", "Breaks its output schema.", |_| async {
        Json(json!({ "n": "x" }))
    })
    .output_schema(json!({
        "type": "object",
        "properties": { "n": { "type": "integer" } },
        "required": ["n"]
    }));
    let c = Client::start(
        Server::new("dyn", "0.1.0")
            .only(["count_words"])
            .dynamic_tool(square)
            .dynamic_tool(broken),
    )
    .await
    .unwrap();
    let t = listed(&c, "square").await;
    assert_eq!(t["inputSchema"], input);
    assert_eq!(
        t["outputSchema"],
        json!({
            "type": "object",
            "properties": { "result": { "type": "integer" } },
            "required": ["result"]
        })
    );
    let r = call(&c, "square", json!({ "n": 7 })).await;
    assert_eq!(r.structured(), Some(&json!({ "result": 49 })), "{r:?}");
    let r = call(&c, "square", json!({ "n": -1 })).await;
    assert!(r.text().starts_with("Invalid arguments"), "{r:?}");
    assert!(r.text().contains("n: -1"), "{r:?}");

    let r = call(&c, "broken", json!({})).await;
    assert!(r.is_error(), "{r:?}");
    assert!(r.text().contains("output schema"), "{}", r.text());
}

#[test]
fn bad_dynamic_tools_stop_the_start() {
    let fine = || Server::new("dyn", "0.1.0").only(["count_words"]);

    // A name taken by a `#[tool]`, or by another dynamic tool.
    let clash = DynamicTool::new("count_words", "Clash.", |_| async { "x" });
    let err = fine().dynamic_tool(clash).build().unwrap_err().to_string();
    assert!(err.contains("two tools are named `count_words`"), "{err}");
    let err = fine()
        .dynamic_tool(echo("one"))
        .dynamic_tool(echo("two"))
        .build()
        .unwrap_err()
        .to_string();
    assert!(err.contains("two tools are named `echo`"), "{err}");

    // Names that break the MCP rule.
    for bad in ["has space", "", "slash/name", &"x".repeat(129)] {
        let tool = DynamicTool::new(bad, "Bad name.", |_| async { "x" });
        let err = fine().dynamic_tool(tool).build().unwrap_err().to_string();
        assert!(err.contains("dynamic tool"), "{bad:?}: {err}");
    }

    // A raw schema that is not an object schema, or not a JSON Schema at all.
    let not_object = DynamicTool::new("flat", "Flat.", |_| async { "x" })
        .input_schema(json!({ "type": "string" }));
    let err = fine()
        .dynamic_tool(not_object)
        .build()
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"type\": \"object\""), "{err}");
    let invalid = DynamicTool::new("weird", "Weird.", |_| async { "x" })
        .input_schema(json!({ "type": "object", "properties": { "a": { "type": "nonsense" } } }));
    let err = fine()
        .dynamic_tool(invalid)
        .build()
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a valid JSON Schema"), "{err}");
}

#[tokio::test]
async fn tools_added_and_removed_while_serving_are_announced() {
    let core = Server::new("dyn", "0.1.0")
        .only(["count_words"])
        .build()
        .unwrap();
    let mut a = RawSession::open(&core).await;
    let mut b = RawSession::open(&core).await;
    assert_eq!(a.tool_names().await, ["count_words"]);

    core.add_tool(echo("Echo the text.")).unwrap();
    a.expect_list_changed().await;
    b.expect_list_changed().await;
    assert_eq!(a.tool_names().await, ["count_words", "echo"]);
    let r = a.call("echo", json!({ "text": "hi" })).await;
    assert_eq!(
        r["result"]["content"],
        json!([{ "type": "text", "text": "hi" }])
    );
    let r = b.call("echo", json!({})).await;
    assert_eq!(r["result"]["isError"], true, "validated: {r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("text: required"),
        "{r}"
    );

    // A dynamic tool of the same name is replaced.
    core.add_tool(echo("Echo, again.")).unwrap();
    a.expect_list_changed().await;
    b.expect_list_changed().await;
    let r = a.request("tools/list", json!({})).await;
    let tools = r["result"]["tools"].as_array().unwrap();
    let echo_def = tools.iter().find(|t| t["name"] == "echo").unwrap();
    assert_eq!(echo_def["description"], "Echo, again.");
    assert_eq!(tools.len(), 2);

    // A `#[tool]` cannot be replaced, and a bad name is refused: nothing changes.
    let clash = DynamicTool::new("count_words", "Clash.", |_| async { "x" });
    let err = core.add_tool(clash).unwrap_err().to_string();
    assert!(err.contains("count_words"), "{err}");
    assert!(err.contains("#[tool]"), "{err}");
    let err = core
        .add_tool(DynamicTool::new("bad name", "Bad.", |_| async { "x" }))
        .unwrap_err()
        .to_string();
    assert!(err.contains("bad name"), "{err}");
    a.expect_nothing_pending().await;
    assert_eq!(
        call_text(&mut a, "count_words", json!({ "text": "a b" })).await,
        "2"
    );

    assert!(core.remove_tool("echo"));
    a.expect_list_changed().await;
    b.expect_list_changed().await;
    assert_eq!(a.tool_names().await, ["count_words"]);
    let r = a.call("echo", json!({ "text": "hi" })).await;
    assert_eq!(r["error"]["code"], INVALID_PARAMS, "{r}");
    assert!(
        r["error"]["message"].as_str().unwrap().contains("echo"),
        "{r}"
    );
    // Removing what is not there changes nothing and tells no one.
    assert!(!core.remove_tool("echo"));
    a.expect_nothing_pending().await;
    b.expect_nothing_pending().await;
}

async fn call_text(s: &mut RawSession, name: &str, arguments: Value) -> String {
    let r = s.call(name, arguments).await;
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_owned()
}

/// Sets `_meta` keys that the attributes also set.
#[tool(
    meta = r#"{"ui": {"domain": "example.com"}, "openai/toolInvocation/invoking": "from meta"}"#,
    visibility = ["model"],
    invoking = "from the attribute"
)]
fn meta_overlap() -> &'static str {
    "ok"
}

/// An error described only by structured content.
#[tool]
fn structured_error() -> ToolResult {
    ToolResult {
        structured_content: Some(json!({ "code": 7 }).into()),
        is_error: true,
        ..ToolResult::default()
    }
}

/// Blocks that 2024-11-05 clients do not know.
#[tool]
fn newer_blocks() -> Vec<Content> {
    vec![
        Content::audio([0u8, 1, 2], "audio/wav"),
        Content::resource_link("media://a", "a"),
        Content::text("plain"),
    ]
}

#[tokio::test]
async fn attribute_keys_win_over_meta_and_ui_objects_merge() {
    let c = client(&["meta_overlap"]).await;
    let tools = c.list_tools().await.unwrap();
    let meta = &tools[0]["_meta"];
    assert_eq!(meta["openai/toolInvocation/invoking"], "from the attribute");
    assert_eq!(meta["ui"]["domain"], "example.com");
    assert_eq!(meta["ui"]["visibility"], json!(["model"]));
}

#[tokio::test]
async fn an_error_with_structured_content_only_gets_text() {
    let c = client(&["structured_error"]).await;
    let r = c.call("structured_error", json!({})).await.unwrap();
    assert!(r.is_error());
    assert_eq!(r.text(), r#"{"code":7}"#);
}

#[tokio::test]
async fn blocks_an_older_version_lacks_are_described_in_text() {
    let c = Client::connect(Server::new("results", "0.1.0").only(["newer_blocks"])).unwrap();
    c.initialize("2024-11-05").await.unwrap();
    let r = c.call("newer_blocks", json!({})).await.unwrap();
    let types: Vec<&str> = r.0["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["text", "text", "text"]);
    assert!(r.text().contains("audio/wav") && r.text().contains("<media://a>"));
    let c = client(&["newer_blocks"]).await;
    let r = c.call("newer_blocks", json!({})).await.unwrap();
    assert_eq!(r.0["content"][0]["type"], "audio");
    assert_eq!(r.0["content"][1]["type"], "resource_link");
}

#[tokio::test]
async fn dynamic_tools_refuse_reserved_meta_and_static_tools_are_not_removed() {
    let mut meta = serde_json::Map::new();
    meta.insert("io.modelcontextprotocol/x".into(), json!(1));
    let tool = DynamicTool::new("probe_dyn", "Probe.", |_args| async { "ok" }).meta(meta);
    let err = Server::new("results", "0.1.0")
        .only(["meta_overlap"])
        .dynamic_tool(tool)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("reserves"), "{err}");
    let core = Server::new("results", "0.1.0")
        .only(["meta_overlap"])
        .build()
        .unwrap();
    assert!(!core.remove_tool("meta_overlap"));
    assert_eq!(core.tools().len(), 1);
}

/// `Server::validate_output` decides in any build: on, a result that breaks its schema is an
/// error naming the field; off, it goes out as the tool made it.
#[tokio::test]
async fn output_validation_is_a_setting_in_every_build() {
    let on = Client::start(Server::new("t", "0").only(["small"]).validate_output(true))
        .await
        .unwrap();
    let r = on.call("small", json!({ "n": 11 })).await.unwrap();
    assert!(r.is_error() && r.text().contains("n: 11"), "{r:?}");

    let off = Client::start(Server::new("t", "0").only(["small"]).validate_output(false))
        .await
        .unwrap();
    let r = off.call("small", json!({ "n": 11 })).await.unwrap();
    assert!(!r.is_error(), "{r:?}");
    assert_eq!(r.structured(), Some(&json!({ "n": 11 })));
}

// ---------------------------------------------------------------------------------------------
// Schemas as listed: `$defs` inlined, unless the server keeps them

/// A role, by name.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Low.
    Low,
    /// High.
    High,
}

/// A node of a tree: a recursive type.
#[derive(Deserialize, JsonSchema)]
pub struct Node {
    /// The node's children.
    pub children: Vec<Node>,
}

/// Takes a level.
#[tool]
fn leveled(level: Level) -> String {
    match level {
        Level::Low => "low".into(),
        Level::High => "high".into(),
    }
}

/// Counts a tree's nodes.
#[tool]
fn count_nodes(tree: Node) -> usize {
    fn count(node: &Node) -> usize {
        1 + node.children.iter().map(count).sum::<usize>()
    }
    count(&tree)
}

#[tokio::test]
async fn schemas_are_listed_inlined_unless_the_server_keeps_references() {
    let listed = |keep: bool| async move {
        let c = Client::connect(
            Server::new("t", "0")
                .only(["leveled", "count_nodes"])
                .keep_schema_refs(keep),
        )
        .unwrap();
        c.initialize("2025-11-25").await.unwrap();
        c.list_tools().await.unwrap()
    };
    let inlined = listed(false).await;
    let leveled = inlined.iter().find(|t| t["name"] == "leveled").unwrap();
    assert_eq!(
        leveled["inputSchema"]["properties"]["level"]["oneOf"][1]["const"], "high",
        "{leveled}"
    );
    assert!(!leveled.to_string().contains("$ref"), "{leveled}");
    // A recursive type keeps its references (the server says so in its log).
    let tree = inlined.iter().find(|t| t["name"] == "count_nodes").unwrap();
    assert!(tree.to_string().contains("$ref"), "{tree}");
    // Kept on request.
    let kept = listed(true).await;
    let leveled = kept.iter().find(|t| t["name"] == "leveled").unwrap();
    assert!(leveled.to_string().contains("#/$defs/Level"), "{leveled}");
    // Validation is the same either way.
    for keep in [false, true] {
        let c = Client::connect(
            Server::new("t", "0")
                .only(["leveled"])
                .keep_schema_refs(keep),
        )
        .unwrap();
        c.initialize("2025-11-25").await.unwrap();
        assert_eq!(
            c.call("leveled", json!({"level": "high"}))
                .await
                .unwrap()
                .text(),
            "high"
        );
        let refused = c.call("leveled", json!({"level": "medium"})).await;
        assert!(
            refused.as_ref().map_or(true, |r| r.is_error()),
            "{refused:?}"
        );
    }
}
