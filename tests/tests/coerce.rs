//! Arguments models get wrong, and summaries for the model, through the in-process client in
//! both protocol eras (2025-11-25 sessions, 2026-07-28 stateless requests) and over HTTP:
//! each conversion `coerce` makes (integer, number, boolean, an array or an object sent as
//! text, nested fields), each one it refuses (validation's message names the field), the
//! strict default, the three levels of opt-in, the `_meta` record and the span attribute; and
//! a `Json<T>` result's text replaced by a summary (`Display`, a closure, `#[tool(summary)]`)
//! while its structured content stays, with clients that know no structured content getting
//! the JSON text.

use std::fmt;
use std::sync::{Arc, Mutex};

use mcp_tool::content::{COERCED_META_KEY, Summarized};
use mcp_tool::dynamic::{DynamicTool, ToolProperty};
use mcp_tool::prelude::*;
use mcp_tool::testing::{CallResult, Client};
use mcp_tool_tests::raw_http::{Endpoint, send};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Tools

/// A filter, as a nested object.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Filter {
    limit: u32,
    exact: Option<bool>,
}

/// A number or a text: a schema that allows a string.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
enum Id {
    Number(i64),
    Text(String),
}

/// Double a number (strict unless the server converts).
#[tool]
fn co_strict(n: i64) -> Json<i64> {
    Json(n * 2)
}

/// Echo every argument as the tool got it (converting all of them).
#[tool(coerce)]
fn co_all(
    count: Option<u32>,
    ratio: Option<f64>,
    flag: Option<bool>,
    tags: Option<Vec<String>>,
    filter: Option<Filter>,
    id: Option<Id>,
) -> Json<Value> {
    Json(json!({
        "count": count, "ratio": ratio, "flag": flag, "tags": tags, "filter": filter, "id": id
    }))
}

/// Echo two numbers, converting only the first.
#[tool]
fn co_one(#[arg(coerce)] first: i64, second: Option<i64>) -> Json<Value> {
    Json(json!({ "first": first, "second": second }))
}

/// Double a number, strict whatever the server does.
#[tool(coerce = false)]
fn co_never(n: i64) -> Json<i64> {
    Json(n * 2)
}

/// Who matched a query.
#[derive(Debug, Serialize, JsonSchema)]
struct Report {
    query: String,
    count: u32,
    users: Vec<String>,
}

impl Report {
    fn of(query: &str) -> Report {
        Report {
            query: query.into(),
            count: 2,
            users: vec!["Ada".into(), "Alan".into()],
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} users match `{}`", self.count, self.query)
    }
}

/// Find users, with the full JSON copy as text (the default).
#[tool]
fn co_report(query: String) -> Json<Report> {
    Json(Report::of(&query))
}

/// Find users, summarized by the report's `Display`.
#[tool]
fn co_display(query: String) -> Summarized<Report> {
    Json(Report::of(&query)).summarized()
}

/// Find users, summarized by a closure.
#[tool]
fn co_closure(query: String) -> Summarized<Report> {
    Json(Report::of(&query)).with_summary(|r| format!("found {}", r.users.join(" and ")))
}

/// Find users, summarized by a template.
#[tool(summary = "{count} users for {query}, first {users.0}")]
fn co_template(query: String) -> Json<Report> {
    Json(Report::of(&query))
}

fn headline(report: &Report) -> String {
    format!("{} matched", report.users.len())
}

/// Find users, summarized by a function, on a fallible result.
#[tool(summary = headline)]
async fn co_function(query: String) -> Result<Json<Report>, ToolError> {
    if query.is_empty() {
        return Err(ToolError::new("EMPTY", "give a query"));
    }
    Ok(Json(Report::of(&query)))
}

/// A template naming a field the result does not have.
#[tool(summary = "{cuont} users")]
fn co_bad_template() -> Json<Report> {
    Json(Report::of(""))
}

const COERCING: [&str; 4] = ["co_strict", "co_all", "co_one", "co_never"];
const SUMMARIES: [&str; 5] = [
    "co_report",
    "co_display",
    "co_closure",
    "co_template",
    "co_function",
];

fn coercing() -> Server {
    Server::new("coerce", "0").only(COERCING)
}

fn summaries() -> Server {
    Server::new("summaries", "0").only(SUMMARIES)
}

/// A client of each era: a 2025-11-25 session and 2026-07-28 stateless requests.
async fn clients(server: impl Fn() -> Server) -> Vec<(&'static str, Client)> {
    let session = Client::connect(server()).unwrap();
    session.initialize("2025-11-25").await.unwrap();
    vec![
        ("2025-11-25", session),
        (
            "2026-07-28",
            Client::stateless(server(), json!({})).unwrap(),
        ),
    ]
}

/// The conversions a result lists in its `_meta`, as `argument: from → to`; `None` without
/// the record.
fn conversions(result: &Value) -> Option<Vec<String>> {
    let records = result.get("_meta")?.get(COERCED_META_KEY)?.as_array()?;
    let mut found: Vec<String> = records
        .iter()
        .map(|r| format!("{}: {} → {}", r["argument"], r["from"], r["to"]).replace('"', ""))
        .collect();
    found.sort();
    Some(found)
}

fn ok(era: &str, result: &CallResult) -> Value {
    assert!(!result.is_error(), "{era}: {}", result.0);
    result.structured().cloned().unwrap_or(Value::Null)
}

/// What an echoing tool got (its `Json<Value>` is structured content's `result`).
fn echoed(era: &str, result: &CallResult) -> Value {
    ok(era, result)["result"].clone()
}

// ---------------------------------------------------------------------------------------------
// Coercion

#[tokio::test]
async fn each_unambiguous_conversion_is_made_and_recorded() {
    for (era, client) in clients(coercing).await {
        for (argument, sent, got, to) in [
            ("count", json!("3"), json!(3), "integer"),
            ("ratio", json!("3.5"), json!(3.5), "number"),
            ("ratio", json!("-2"), json!(-2.0), "number"),
            ("flag", json!("true"), json!(true), "boolean"),
            ("flag", json!("false"), json!(false), "boolean"),
            ("tags", json!(r#"["a", "b"]"#), json!(["a", "b"]), "array"),
            (
                "filter",
                json!(r#"{"limit": 5}"#),
                json!({"limit": 5, "exact": null}),
                "object",
            ),
        ] {
            let result = client
                .call("co_all", json!({ argument: sent.clone() }))
                .await
                .unwrap();
            let echoed = echoed(era, &result);
            assert_eq!(echoed[argument], got, "{era}: {argument} = {sent}");
            assert_eq!(
                conversions(&result.0),
                Some(vec![format!("{argument}: string → {to}")]),
                "{era}: {argument} = {sent}"
            );
        }
    }
}

#[tokio::test]
async fn nested_fields_are_converted_and_named_by_their_path() {
    for (era, client) in clients(coercing).await {
        let result = client
            .call(
                "co_all",
                json!({"filter": {"limit": "7", "exact": "true"}, "tags": "[\"x\"]", "count": 1}),
            )
            .await
            .unwrap();
        let echoed = echoed(era, &result);
        assert_eq!(
            echoed["filter"],
            json!({"limit": 7, "exact": true}),
            "{era}"
        );
        assert_eq!(echoed["tags"], json!(["x"]), "{era}");
        assert_eq!(
            conversions(&result.0).unwrap(),
            [
                "filter.exact: string → boolean",
                "filter.limit: string → integer",
                "tags: string → array",
            ],
            "{era}"
        );
    }
}

#[tokio::test]
async fn each_ambiguous_value_is_refused_with_validations_message() {
    for (era, client) in clients(coercing).await {
        for (argument, sent, message) in [
            ("count", json!("3.5"), r#"count: "3.5" is not of type"#),
            ("count", json!(" 3 "), r#"count: " 3 " is not of type"#),
            ("count", json!("03"), r#"count: "03" is not of type"#),
            (
                "count",
                json!("18446744073709551616"),
                r#"count: "18446744073709551616" is not of type"#,
            ),
            ("ratio", json!("1e400"), r#"ratio: "1e400" is not of type"#),
            ("ratio", json!("NaN"), r#"ratio: "NaN" is not of type"#),
            ("flag", json!("yes"), r#"flag: "yes" is not of type"#),
            ("flag", json!("True"), r#"flag: "True" is not of type"#),
            ("tags", json!("a, b"), r#"tags: "a, b" is not of type"#),
            (
                "tags",
                json!(r#"{"a": 1}"#),
                r#"tags: "{\"a\": 1}" is not of type"#,
            ),
            (
                "filter",
                json!("[1]"),
                r#"filter: "[1]" is not of type object"#,
            ),
        ] {
            let result = client
                .call("co_all", json!({ argument: sent.clone() }))
                .await
                .unwrap();
            assert!(
                result.is_error(),
                "{era}: {argument} = {sent}: {}",
                result.0
            );
            assert!(
                result.text().contains(message),
                "{era}: {argument} = {sent}: {message:?} not in {:?}",
                result.text()
            );
            assert_eq!(conversions(&result.0), None, "{era}: {argument} = {sent}");
        }
        // A value the schema allows as a string stays a string: nothing to convert.
        let result = client.call("co_all", json!({"id": "3"})).await.unwrap();
        assert_eq!(echoed(era, &result)["id"], "3", "{era}");
        assert_eq!(conversions(&result.0), None, "{era}");
        // A converted value is validated as any other: in range, or refused naming it.
        let result = client
            .call("co_all", json!({"count": "4294967296"}))
            .await
            .unwrap();
        assert!(result.is_error(), "{era}");
        assert!(
            result
                .text()
                .contains("count: 4294967296 is greater than the maximum of 4294967295"),
            "{era}: {}",
            result.text()
        );
        assert_eq!(
            conversions(&result.0),
            Some(vec!["count: string → integer".to_owned()]),
            "{era}: the conversion was made, and the result says so"
        );
        // `null` is no string: never converted.
        let result = client.call("co_one", json!({"first": null})).await.unwrap();
        assert!(
            result.text().contains("first: null is not of type integer"),
            "{era}"
        );
    }
}

#[tokio::test]
async fn validation_is_strict_by_default_and_well_typed_calls_carry_no_record() {
    for (era, client) in clients(coercing).await {
        let refused = client.call("co_strict", json!({"n": "3"})).await.unwrap();
        assert!(refused.is_error(), "{era}");
        assert!(
            refused.text().contains(r#"n: "3" is not of type integer"#),
            "{era}: {}",
            refused.text()
        );
        assert_eq!(conversions(&refused.0), None, "{era}");
        let fine = client.call("co_all", json!({"count": 3})).await.unwrap();
        assert_eq!(echoed(era, &fine)["count"], 3, "{era}");
        assert_eq!(conversions(&fine.0), None, "{era}: nothing was converted");
    }
}

#[tokio::test]
async fn an_argument_opts_in_alone() {
    for (era, client) in clients(coercing).await {
        let result = client
            .call("co_one", json!({"first": "4", "second": 5}))
            .await
            .unwrap();
        assert_eq!(
            echoed(era, &result),
            json!({"first": 4, "second": 5}),
            "{era}"
        );
        assert_eq!(
            conversions(&result.0),
            Some(vec!["first: string → integer".to_owned()]),
            "{era}"
        );
        let refused = client
            .call("co_one", json!({"first": 4, "second": "5"}))
            .await
            .unwrap();
        assert!(
            refused.text().contains(r#"second: "5" is not of type"#),
            "{era}: {}",
            refused.text()
        );
    }
}

#[tokio::test]
async fn the_servers_switch_converts_for_every_tool_but_those_that_opt_out() {
    for (era, client) in clients(|| coercing().coerce_arguments(true)).await {
        let result = client.call("co_strict", json!({"n": "21"})).await.unwrap();
        assert_eq!(ok(era, &result), json!({"result": 42}), "{era}");
        assert_eq!(
            conversions(&result.0),
            Some(vec!["n: string → integer".to_owned()]),
            "{era}"
        );
        let refused = client.call("co_never", json!({"n": "21"})).await.unwrap();
        assert!(refused.is_error(), "{era}: `coerce = false` stays strict");
        assert_eq!(conversions(&refused.0), None, "{era}");
    }
}

#[tokio::test]
async fn a_dynamic_tool_opts_in() {
    let double = |coerce: bool| {
        DynamicTool::new("co_double", "Double a number.", |args| async move {
            let n = args.arguments["n"].as_i64().unwrap_or_default();
            ToolResult::text((n * 2).to_string())
        })
        .property(ToolProperty::integer("n").required())
        .coerce(coerce)
    };
    let converting = Server::new("dyn", "0")
        .without_registry()
        .dynamic_tool(double(true))
        .build()
        .unwrap();
    let result = converting
        .call("co_double", json!({"n": "8"}))
        .await
        .unwrap();
    assert_eq!(result.text_content(), "16");
    assert!(result.meta.unwrap().contains_key(COERCED_META_KEY));
    let strict = Server::new("dyn", "0")
        .without_registry()
        .coerce_arguments(true)
        .dynamic_tool(double(false))
        .build()
        .unwrap();
    let refused = strict.call("co_double", json!({"n": "8"})).await.unwrap();
    assert!(refused.is_error);
}

/// `coerce` on a context value, which has no schema to convert by.
#[tool]
fn co_on_context(#[arg(coerce)] ctx: Ctx) -> String {
    let _ = ctx;
    String::new()
}

#[tokio::test]
async fn coerce_on_what_is_no_argument_stops_the_start() {
    let error = Server::new("bad", "0")
        .only(["co_on_context"])
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("`coerce` is set on `ctx`, which is no argument of the input schema"),
        "{error}"
    );
}

/// Echo a number, converted: the tool of the span test alone.
#[tool]
fn co_traced(#[arg(coerce)] traced: i64) -> i64 {
    traced
}

/// The values recorded as the span attribute `mcp_tool.arguments.coerced`, by every test of
/// this file: a subscriber set for one thread only would miss spans whose callsite another
/// test's thread registered first, so it is the process's.
#[derive(Clone, Default)]
struct Recorded(Arc<Mutex<Vec<String>>>);

impl Recorded {
    fn global() -> &'static Recorded {
        static RECORDED: std::sync::OnceLock<Recorded> = std::sync::OnceLock::new();
        RECORDED.get_or_init(|| {
            use tracing_subscriber::layer::SubscriberExt as _;
            let recorded = Recorded::default();
            let subscriber = tracing_subscriber::registry().with(recorded.clone());
            tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
            recorded
        })
    }

    /// The recorded values that name `argument`.
    fn naming(&self, argument: &str) -> Vec<Value> {
        let values = self.0.lock().unwrap();
        values
            .iter()
            .map(|v| serde_json::from_str::<Value>(v).unwrap())
            .filter(|v| v[0]["argument"] == argument)
            .collect()
    }
}

impl tracing::field::Visit for Recorded {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "mcp_tool.arguments.coerced" {
            self.0.lock().unwrap().push(value.to_owned());
        }
    }

    fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn fmt::Debug) {}
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Recorded {
    fn on_record(
        &self,
        _: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        values.record(&mut self.clone());
    }
}

#[tokio::test]
async fn each_conversion_is_an_attribute_of_the_calls_span() {
    let recorded = Recorded::global();
    let traced = || Server::new("traced", "0").only(["co_traced"]);
    let mut expected = Vec::new();
    for (era, client) in clients(traced).await {
        client
            .call("co_traced", json!({"traced": 1}))
            .await
            .unwrap();
        assert_eq!(recorded.naming("traced"), expected, "{era}: none made");
        client
            .call("co_traced", json!({"traced": "1"}))
            .await
            .unwrap();
        expected.push(json!([{"argument": "traced", "from": "string", "to": "integer"}]));
        assert_eq!(recorded.naming("traced"), expected, "{era}");
    }
}

// ---------------------------------------------------------------------------------------------
// Summaries

#[tokio::test]
async fn a_summary_replaces_the_json_copy_and_keeps_the_structured_content() {
    let report = json!({"query": "a", "count": 2, "users": ["Ada", "Alan"]});
    for (era, client) in clients(summaries).await {
        for (tool, text) in [
            ("co_report", report.to_string()),
            ("co_display", "2 users match `a`".to_owned()),
            ("co_closure", "found Ada and Alan".to_owned()),
            ("co_template", "2 users for a, first Ada".to_owned()),
            ("co_function", "2 matched".to_owned()),
        ] {
            let result = client.call(tool, json!({"query": "a"})).await.unwrap();
            assert_eq!(ok(era, &result), report, "{era}: {tool}");
            let blocks = result.0["content"].as_array().unwrap();
            assert_eq!(blocks.len(), 1, "{era}: {tool}: one text block");
            // The default's copy is the structured content's own text.
            let shown = if tool == "co_report" {
                serde_json::from_str::<Value>(&result.text())
                    .unwrap()
                    .to_string()
            } else {
                result.text()
            };
            assert_eq!(shown, text, "{era}: {tool}");
        }
        let failed = client
            .call("co_function", json!({"query": ""}))
            .await
            .unwrap();
        assert!(failed.is_error(), "{era}");
        assert_eq!(failed.text(), "[EMPTY] give a query", "{era}");
    }
}

#[tokio::test]
async fn a_summary_leaves_the_output_schema_as_it_is() {
    let client = Client::start(summaries()).await.unwrap();
    let tools = client.list_tools().await.unwrap();
    let schema = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["outputSchema"].clone())
            .unwrap()
    };
    let plain = schema("co_report");
    assert!(plain["properties"]["users"].is_object(), "{plain}");
    for tool in ["co_display", "co_closure", "co_template", "co_function"] {
        assert_eq!(schema(tool), plain, "{tool}");
    }
}

#[tokio::test]
async fn clients_without_structured_content_get_the_json_text() {
    let report = json!({"query": "a", "count": 2, "users": ["Ada", "Alan"]});
    for version in ["2025-03-26", "2024-11-05"] {
        let client = Client::connect(summaries()).unwrap();
        client.initialize(version).await.unwrap();
        for tool in SUMMARIES {
            let result = client.call(tool, json!({"query": "a"})).await.unwrap();
            assert_eq!(result.structured(), None, "{version}: {tool}");
            let text: Value = serde_json::from_str(&result.text())
                .unwrap_or_else(|_| panic!("{version}: {tool}: {}", result.text()));
            assert_eq!(text, report, "{version}: {tool}");
        }
    }
    // 2025-06-18 has structured content: the summary.
    let client = Client::connect(summaries()).unwrap();
    client.initialize("2025-06-18").await.unwrap();
    let result = client
        .call("co_display", json!({"query": "a"}))
        .await
        .unwrap();
    assert_eq!(result.text(), "2 users match `a`");
    assert_eq!(result.structured(), Some(&report));
}

#[tokio::test]
async fn a_template_naming_no_field_stops_the_start() {
    let error = Server::new("bad", "0")
        .only(["co_bad_template"])
        .build()
        .unwrap_err()
        .to_string();
    assert!(error.contains("`{cuont}`"), "{error}");
    assert!(error.contains("(its fields: `"), "{error}");
    assert!(error.contains("`count`"), "{error}");
}

// ---------------------------------------------------------------------------------------------
// Over HTTP

#[tokio::test]
async fn over_http_in_both_eras_conversions_and_summaries_hold() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let handle = Server::new("http", "0")
        .only(["co_one", "co_template"])
        .build()
        .unwrap();
    tokio::spawn(async move {
        handle
            .serve_http(listener, mcp_tool::http::HttpConfig::default())
            .await
    });
    let endpoint = Endpoint::new(base);
    let call = |name: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": name, "arguments": arguments}})
    };
    let session = endpoint.session(None).await;
    let post = |body: Value| send(endpoint.in_session(None, &session).body(body.to_string()));
    let stateful = post(call("co_one", json!({"first": "6"}))).await.body;
    let stateless = endpoint
        .call_tool(None, "co_one", json!({"first": "6"}))
        .await
        .body;
    for (era, body) in [("2025-11-25", &stateful), ("2026-07-28", &stateless)] {
        let result = &body["result"];
        assert_eq!(
            result["structuredContent"]["result"],
            json!({"first": 6, "second": null}),
            "{era}: {body}"
        );
        assert_eq!(
            conversions(result),
            Some(vec!["first: string → integer".to_owned()]),
            "{era}: {body}"
        );
    }
    let stateful = post(call("co_template", json!({"query": "h"}))).await.body;
    let stateless = endpoint
        .call_tool(None, "co_template", json!({"query": "h"}))
        .await
        .body;
    for (era, body) in [("2025-11-25", &stateful), ("2026-07-28", &stateless)] {
        let result = &body["result"];
        assert_eq!(
            result["content"],
            json!([{"type": "text", "text": "2 users for h, first Ada"}]),
            "{era}: {body}"
        );
        assert_eq!(result["structuredContent"]["count"], 2, "{era}: {body}");
        assert_eq!(conversions(result), None, "{era}: {body}");
    }
}
