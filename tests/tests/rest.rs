//! The tools served as REST beside the MCP endpoint (`HttpConfig::openapi`): `POST
//! /tools/{name}` answers a tool's structured content (or content) with the status its outcome
//! calls for — 422 naming the fields that break the schema, 404 for an unknown tool or one left
//! out, the tool's error code mapped, 501 for what a REST caller cannot do (answer a question,
//! take a task) — through the same checks as MCP calls: the same 401 and step-up 403
//! challenges, the same rate-limit buckets and middleware. `/openapi.json` lists what is served,
//! with the tools' schemas (their `$defs` as components), scopes and annotations.
//!
//! Every server runs in-process on `127.0.0.1:0`; every wait is bounded by the client's timeout.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_tool::extract::Elicitation;
use mcp_tool::http::{BearerTokens, HttpConfig, OpenApi, ResourceMetadata, status_of_code};
use mcp_tool::middleware::{Call, CallFuture, Middleware, Next, RateLimit};
use mcp_tool::prelude::*;
use mcp_tool_tests::raw_http::{Endpoint, send};
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use serde_json::{Value, json};
use tokio::net::TcpListener;

#[derive(Serialize, JsonSchema)]
struct Total {
    sum: i64,
}

#[derive(Deserialize, Serialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Cm,
    In,
}

#[derive(Deserialize, JsonSchema)]
struct Length {
    /// How long.
    #[schemars(range(min = 0))]
    value: i64,
    unit: Unit,
}

/// Adds two numbers.
#[tool(title = "Add", read_only, idempotent)]
fn rest_add(a: i64, b: i64) -> Json<Total> {
    Json(Total { sum: a + b })
}

/// Measures lengths (its schema holds `$defs`).
#[tool]
fn rest_measure(lengths: Vec<Length>, unit: Unit) -> String {
    let total: i64 = lengths
        .iter()
        .map(|l| match l.unit {
            Unit::Cm => l.value,
            Unit::In => l.value * 254 / 100,
        })
        .sum();
    format!("{total} {}", serde_json::to_value(unit).unwrap_or_default())
}

/// Fails with the code it is given.
#[tool]
fn rest_fail(code: String) -> Result<String, ToolError> {
    match code.as_str() {
        "" => Err(ToolError::msg("failed without a code")),
        code => Err(ToolError::new(code.to_owned(), "it failed").suggestion("try again")),
    }
}

#[derive(Deserialize, JsonSchema)]
struct Confirm {
    confirm: bool,
}

/// Asks the user first.
#[tool]
async fn rest_ask(ctx: Ctx) -> Result<String, ToolError> {
    let answer = ctx.elicit::<Confirm>("Go ahead?").await?;
    Ok(format!(
        "{}",
        matches!(answer, Elicitation::Accept(Confirm { confirm: true }))
    ))
}

/// Runs only as a task.
#[tool(task = "required")]
async fn rest_job() -> String {
    "done".into()
}

/// Writes, for writers only.
#[tool(scopes = ["notes:write"], destructive)]
fn rest_write(text: String) -> String {
    format!("wrote {text}")
}

const TOOLS: [&str; 8] = [
    "rest_add",
    "rest_measure",
    "rest_fail",
    "rest_ask",
    "rest_job",
    "rest_write",
    "rest_hidden",
    "rest_private",
];

/// Left out of REST.
#[tool]
fn rest_hidden() -> String {
    "only over MCP".into()
}

/// Leaves itself out of REST.
#[tool(title = "Private", rest = false)]
fn rest_private() -> String {
    "MCP only, by its own word".into()
}

/// Counts the calls it sees (the middleware of every call, MCP or REST).
struct Count(Arc<AtomicUsize>);

impl Middleware for Count {
    fn call<'a>(&'a self, call: Call<'a>, next: Next<'a>) -> CallFuture<'a> {
        self.0.fetch_add(1, Ordering::SeqCst);
        next.run(call)
    }
}

const WRITER: &str = "writer-token";
const READER: &str = "reader-token";

/// A server of the tools, REST served (`rest_hidden` left out); `server` adds what a test needs.
async fn serve(auth: bool, server: impl FnOnce(Server) -> Server) -> Endpoint {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let mut config = HttpConfig::default().with_openapi(OpenApi::new().exclude("rest_hidden"));
    if auth {
        config.resource_metadata = Some(ResourceMetadata {
            resource: format!("{base}/mcp"),
            authorization_servers: vec!["https://auth.example.com".into()],
            scopes_supported: Vec::new(),
        });
        config = config.with_auth(
            BearerTokens::new()
                .token_with_scopes(WRITER, "will", ["notes:write"])
                .token(READER, "rita"),
        );
    }
    let router = server(Server::new("rest", "1.2.3").only(TOOLS))
        .build()
        .expect("the server builds")
        .into_router(config);
    tokio::spawn(async move {
        axum::serve(listener, router).await.expect("serves");
    });
    Endpoint::new(base)
}

/// A REST answer read whole.
struct Answer {
    status: StatusCode,
    media_type: String,
    challenge: Option<String>,
    retry_after: Option<String>,
    body: Value,
}

async fn rest(endpoint: &Endpoint, token: Option<&str>, tool: &str, body: &str) -> Answer {
    let mut request = endpoint
        .http
        .post(format!("{}/tools/{tool}", endpoint.base))
        .header(CONTENT_TYPE, "application/json")
        .body(body.to_owned());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("the server answers");
    let header = |name| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let (media_type, challenge, retry_after) = (
        header(CONTENT_TYPE),
        header(WWW_AUTHENTICATE),
        header(RETRY_AFTER),
    );
    let status = response.status();
    let text = response.text().await.expect("a body");
    Answer {
        status,
        media_type: media_type.unwrap_or_default(),
        challenge,
        retry_after,
        body: serde_json::from_str(&text).unwrap_or(Value::Null),
    }
}

#[tokio::test]
async fn results_and_refusals_have_their_status() {
    let endpoint = serve(false, |s| s).await;
    // Structured content for a tool with an output schema; content for one without.
    let a = rest(&endpoint, None, "rest_add", r#"{"a": 2, "b": 3}"#).await;
    assert_eq!(
        (a.status, a.body.clone()),
        (StatusCode::OK, json!({"sum": 5}))
    );
    assert_eq!(a.media_type, "application/json");
    let m = rest(
        &endpoint,
        None,
        "rest_measure",
        r#"{"lengths": [{"value": 2, "unit": "cm"}], "unit": "cm"}"#,
    )
    .await;
    assert_eq!(m.status, StatusCode::OK, "{}", m.body);
    assert_eq!(m.body, json!([{"type": "text", "text": "2 \"cm\""}]));
    // Arguments that break the schema: 422, each field named as an MCP call names it.
    let bad = rest(
        &endpoint,
        None,
        "rest_measure",
        r#"{"lengths": [{"value": -1, "unit": "m"}]}"#,
    )
    .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.body);
    assert_eq!(bad.media_type, "application/problem+json");
    let pointers: Vec<&str> = bad.body["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| e["pointer"].as_str().expect("a pointer"))
        .collect();
    assert!(pointers.contains(&"/lengths/0/value"), "{}", bad.body);
    assert!(pointers.contains(&"/lengths/0/unit"), "{}", bad.body);
    assert!(pointers.contains(&"/unit"), "{}", bad.body);
    let mcp = endpoint
        .call_tool(
            None,
            "rest_measure",
            json!({"lengths": [{"value": -1, "unit": "m"}]}),
        )
        .await;
    assert_eq!(
        bad.body["detail"], mcp.body["result"]["content"][0]["text"],
        "the message of the MCP call"
    );
    // A wrong type for one argument names it too.
    let wrong = rest(&endpoint, None, "rest_add", r#"{"a": "two", "b": 3}"#).await;
    assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(wrong.body["errors"][0]["field"], "a", "{}", wrong.body);
    // No body: no arguments (and the required ones are missing).
    let none = rest(&endpoint, None, "rest_add", "").await;
    assert_eq!(
        none.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        none.body
    );
    // A body that is not JSON, or not an object.
    for body in ["{\"a\": 1", "[1, 2]", "7"] {
        let r = rest(&endpoint, None, "rest_add", body).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{body}: {}", r.body);
    }
    // A body smuggling a second member into the call is not one JSON value.
    let smuggled = rest(
        &endpoint,
        None,
        "rest_add",
        r#"{"a":1,"b":2}, "name": "rest_fail""#,
    )
    .await;
    assert_eq!(
        smuggled.status,
        StatusCode::BAD_REQUEST,
        "{}",
        smuggled.body
    );
    let text = endpoint
        .http
        .post(format!("{}/tools/rest_add", endpoint.base))
        .header(CONTENT_TYPE, "text/plain")
        .body("{}")
        .send()
        .await
        .expect("an answer");
    assert_eq!(text.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    // Unknown tools, one left out of REST by the server, one by its own `rest = false` (MCP
    // clients still call both, and list the latter as it is).
    for tool in ["nothing", "rest_hidden", "rest_private"] {
        let r = rest(&endpoint, None, tool, "{}").await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{tool}: {}", r.body);
        assert!(r.body["detail"].as_str().unwrap_or_default().contains(tool));
    }
    let mcp = endpoint.call_tool(None, "rest_hidden", json!({})).await;
    assert_eq!(mcp.body["result"]["content"][0]["text"], "only over MCP");
    let mcp = endpoint.call_tool(None, "rest_private", json!({})).await;
    assert_eq!(
        mcp.body["result"]["content"][0]["text"],
        "MCP only, by its own word"
    );
    let listed = endpoint
        .stateless(None, "tools/list", None, json!({}))
        .await;
    let private = listed.body["result"]["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "rest_private"))
        .unwrap_or_else(|| panic!("rest_private is listed over MCP: {}", listed.body));
    assert_eq!(private["title"], "Private");
    // What a REST caller cannot do: answer a question, take a task.
    for tool in ["rest_ask", "rest_job"] {
        let r = rest(&endpoint, None, tool, "{}").await;
        assert_eq!(r.status, StatusCode::NOT_IMPLEMENTED, "{tool}: {}", r.body);
        assert!(
            r.body["detail"]
                .as_str()
                .unwrap_or_default()
                .contains("over MCP"),
            "{}",
            r.body
        );
    }
}

#[tokio::test]
async fn a_tool_error_answers_the_status_of_its_code() {
    let endpoint = serve(false, |s| s).await;
    for (code, status) in [
        ("NOT_FOUND", 404),
        ("NO_SUCH_ROW", 404),
        ("FORBIDDEN", 403),
        ("PERMISSION_DENIED", 403),
        ("UNAUTHENTICATED", 401),
        ("INVALID_ARGUMENT", 400),
        ("OUT_OF_RANGE", 400),
        ("ALREADY_EXISTS", 409),
        ("RATE_LIMITED", 429),
        ("TIMEOUT", 504),
        ("UNAVAILABLE", 503),
        ("DIVISION_BY_ZERO", 500),
        ("", 500),
    ] {
        let r = rest(
            &endpoint,
            None,
            "rest_fail",
            &json!({"code": code}).to_string(),
        )
        .await;
        assert_eq!(r.status.as_u16(), status, "{code}: {}", r.body);
        assert_eq!(status_of_code(code), status, "{code}");
        assert_eq!(r.body["status"], status);
        if !code.is_empty() {
            assert_eq!(r.body["code"], code);
            assert_eq!(r.body["suggestion"], "try again");
        }
    }
}

#[tokio::test]
async fn rest_calls_pass_the_same_middleware_and_share_the_rate_limit() {
    let seen = Arc::new(AtomicUsize::new(0));
    let counted = seen.clone();
    let endpoint = serve(true, move |s| {
        s.middleware(Count(counted))
            .middleware(RateLimit::parse("3/1m").expect("a rate"))
    })
    .await;
    let first = rest(&endpoint, Some(WRITER), "rest_add", r#"{"a": 1, "b": 1}"#).await;
    assert_eq!(first.status, StatusCode::OK);
    // An MCP call takes the second call of the same caller's bucket.
    let mcp = endpoint
        .call_tool(Some(WRITER), "rest_add", json!({"a": 1, "b": 1}))
        .await;
    assert_eq!(mcp.body["result"]["structuredContent"]["sum"], 2);
    // And a call of a 2025-11-25 session the third.
    let session = endpoint.session(Some(WRITER)).await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "rest_add", "arguments": {"a": 1, "b": 1}}});
    let old = send(
        endpoint
            .in_session(Some(WRITER), &session)
            .body(call.to_string()),
    )
    .await;
    assert_eq!(
        old.body["result"]["structuredContent"]["sum"], 2,
        "{}",
        old.body
    );
    let third = rest(&endpoint, Some(WRITER), "rest_add", r#"{"a": 1, "b": 1}"#).await;
    assert_eq!(
        third.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        third.body
    );
    assert_eq!(third.body["code"], "RATE_LIMITED");
    let wait: u64 = third
        .retry_after
        .expect("Retry-After")
        .parse()
        .expect("seconds");
    assert!((1..=60).contains(&wait), "{wait}");
    assert_eq!(
        seen.load(Ordering::SeqCst),
        4,
        "every call passed the middleware"
    );
}

#[tokio::test]
async fn rest_calls_get_the_challenges_of_mcp_calls() {
    let endpoint = serve(true, |s| s).await;
    // No token, a wrong one: 401 with the same challenge.
    for token in [None, Some("forged")] {
        let r = rest(&endpoint, token, "rest_add", r#"{"a": 1, "b": 1}"#).await;
        let mcp = endpoint
            .call_tool(token, "rest_add", json!({"a": 1, "b": 1}))
            .await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED);
        assert_eq!(r.media_type, "application/problem+json");
        assert_eq!(r.challenge, mcp.challenge, "{token:?}");
        assert!(
            r.challenge
                .as_deref()
                .is_some_and(|c| c.contains("resource_metadata="))
        );
    }
    // A token without the tool's scope: the step-up challenge, as an MCP call gets it.
    let r = rest(&endpoint, Some(READER), "rest_write", r#"{"text": "x"}"#).await;
    let mcp = endpoint
        .call_tool(Some(READER), "rest_write", json!({"text": "x"}))
        .await;
    assert_eq!(
        (r.status, mcp.status),
        (StatusCode::FORBIDDEN, StatusCode::FORBIDDEN)
    );
    assert_eq!(r.challenge, mcp.challenge);
    assert!(
        r.challenge
            .as_deref()
            .is_some_and(|c| c.contains("scope=\"notes:write\""))
    );
    let ok = rest(&endpoint, Some(WRITER), "rest_write", r#"{"text": "x"}"#).await;
    assert_eq!(
        (ok.status, ok.body.clone()),
        (StatusCode::OK, json!([{"type": "text", "text": "wrote x"}]))
    );
    // The document too is for callers the endpoint admits, and lists what they may call.
    let url = format!("{}/openapi.json", endpoint.base);
    let refused = endpoint.http.get(&url).send().await.expect("an answer");
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let document = |token: &'static str| {
        let request = endpoint.http.get(&url).bearer_auth(token);
        async move {
            request
                .send()
                .await
                .expect("an answer")
                .json::<Value>()
                .await
                .expect("JSON")
        }
    };
    let (reader, writer) = (document(READER).await, document(WRITER).await);
    assert!(reader["paths"].get("/tools/rest_write").is_none());
    let write = &writer["paths"]["/tools/rest_write"]["post"];
    assert_eq!(write["security"], json!([{"bearer": ["notes:write"]}]));
    assert_eq!(write["x-mcp-annotations"]["destructiveHint"], true);
    assert!(write["responses"].get("401").is_some() && write["responses"].get("403").is_some());
    let scheme = &writer["components"]["securitySchemes"]["bearer"];
    assert_eq!(
        (&scheme["type"], &scheme["scheme"]),
        (&json!("http"), &json!("bearer"))
    );
    assert_eq!(
        scheme["x-authorization-servers"],
        json!(["https://auth.example.com"])
    );
}

#[tokio::test]
async fn the_document_describes_what_is_served() {
    let endpoint = serve(false, |s| s).await;
    let document: Value = endpoint
        .http
        .get(format!("{}/openapi.json", endpoint.base))
        .send()
        .await
        .expect("an answer")
        .json()
        .await
        .expect("JSON");
    assert_eq!(document["openapi"], "3.1.0");
    assert_eq!(document["info"]["version"], "1.2.3");
    let mut paths: Vec<&str> = document["paths"]
        .as_object()
        .expect("paths")
        .keys()
        .map(String::as_str)
        .collect();
    paths.sort_unstable();
    // Left out: the tool excluded, the one that leaves itself out (`rest = false`), the one
    // that runs only as a task.
    assert_eq!(
        paths,
        [
            "/tools/rest_add",
            "/tools/rest_ask",
            "/tools/rest_fail",
            "/tools/rest_measure",
            "/tools/rest_write"
        ]
    );
    let add = &document["paths"]["/tools/rest_add"]["post"];
    assert_eq!(add["operationId"], "rest_add");
    assert_eq!(add["summary"], "Add");
    assert!(
        add["description"]
            .as_str()
            .expect("a description")
            .contains("Read-only")
    );
    assert_eq!(
        add["x-mcp-annotations"],
        json!({"readOnlyHint": true, "idempotentHint": true})
    );
    assert_eq!(
        add["responses"]["200"]["content"]["application/json"]["schema"]["properties"]["sum"]["type"],
        "integer"
    );
    assert!(
        add.get("security").is_none(),
        "no authentication, no security"
    );
    // `$defs` are components, and the references follow them.
    let measure = &document["paths"]["/tools/rest_measure"]["post"];
    let input = &measure["requestBody"]["content"]["application/json"]["schema"];
    assert!(input.get("$defs").is_none(), "{input}");
    let text = input.to_string();
    assert!(
        text.contains("#/components/schemas/rest_measure."),
        "{text}"
    );
    let schemas = document["components"]["schemas"]
        .as_object()
        .expect("schemas");
    for reference in all_refs(&document) {
        let name = reference
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("a reference elsewhere: {reference}"));
        assert!(schemas.contains_key(name), "{reference}");
    }
    assert_eq!(
        measure["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/Content"
    );
    // What `openapi_document` gives is what the endpoint serves.
    let handle = Server::new("rest", "1.2.3")
        .only(TOOLS)
        .build()
        .expect("builds");
    let config = HttpConfig::default().with_openapi(OpenApi::new().exclude("rest_hidden"));
    assert_eq!(handle.openapi_document(&config), document);
}

/// Every `$ref` of a document (those of `components/responses` included).
fn all_refs(value: &Value) -> Vec<String> {
    match value {
        Value::Object(o) => o
            .iter()
            .flat_map(|(k, v)| match (k.as_str(), v) {
                ("$ref", Value::String(r)) if r.starts_with("#/components/schemas/") => {
                    vec![r.clone()]
                }
                ("$ref", _) => Vec::new(),
                _ => all_refs(v),
            })
            .collect(),
        Value::Array(items) => items.iter().flat_map(all_refs).collect(),
        _ => Vec::new(),
    }
}

#[tokio::test]
async fn without_openapi_there_are_no_rest_routes() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let router = Server::new("rest", "0")
        .only(TOOLS)
        .build()
        .expect("builds")
        .into_router(HttpConfig::default());
    tokio::spawn(async move { axum::serve(listener, router).await.expect("serves") });
    let endpoint = Endpoint::new(base);
    let r = rest(&endpoint, None, "rest_add", r#"{"a": 1, "b": 1}"#).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let doc = endpoint
        .http
        .get(format!("{}/openapi.json", endpoint.base))
        .send()
        .await
        .expect("an answer");
    assert_eq!(doc.status(), StatusCode::NOT_FOUND);
}
