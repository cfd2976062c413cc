//! Property tests (proptest), in-process through `mcp_tool::testing`:
//!
//! - the protocol: whatever JSON value a client sends as a line, and whatever valid request
//!   or notification (any method, params and id), a request is answered exactly once, a
//!   notification never, and every line the server writes is a well-formed JSON-RPC message;
//!   over any sequence of lines (requests valid and not, ids repeated, notifications,
//!   cancellations, lines that are no JSON), each request line is answered once, with its id
//!   (one that was cancelled at most once);
//! - tool arguments: every value `testing::arbitrary_arguments` derives from a tool's input
//!   schema passes validation, deserializes and runs the tool; every value
//!   `testing::refused_arguments` derives is refused before the tool runs. Over the shapes of
//!   the example tools (`users`' `create_user`, `calc`'s `multiply` and `divide`) and richer
//!   ones (enums of every kind, options, nested structs, every number width, formats).

use std::collections::HashMap;
use std::sync::OnceLock;

use mcp_tool::prelude::*;
use mcp_tool::server::ServerHandle;
use mcp_tool::testing::{arbitrary_arguments, refused_arguments};
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{Map, Value, json};
use tokio::io::AsyncReadExt;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

fn config() -> Config {
    Config {
        // 256 unless PROPTEST_CASES says otherwise.
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(256),
        failure_persistence: None,
        ..Config::default()
    }
}

// ---- the protocol ----

/// Echo a text.
#[tool]
async fn prop_echo(text: String) -> String {
    text
}

/// Add two integers.
#[tool]
fn prop_add(a: i64, b: i64) -> Result<i64, ToolError> {
    a.checked_add(b).ok_or_else(|| ToolError::msg("overflow"))
}

fn protocol_server() -> ServerHandle {
    static SERVER: OnceLock<ServerHandle> = OnceLock::new();
    SERVER
        .get_or_init(|| {
            Server::new("props", "0")
                .only(["prop_echo", "prop_add"])
                .build()
                .expect("builds")
        })
        .clone()
}

const INIT_ID: &str = "__init__";

/// What the server wrote for a session that initializes and then sends `line`: every line
/// parsed (a line that is not JSON fails the property).
fn exchange(line: &str) -> Result<Vec<Value>, TestCaseError> {
    let init = format!(
        r#"{{"jsonrpc":"2.0","id":"{INIT_ID}","method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"p","version":"0"}}}}}}
{{"jsonrpc":"2.0","method":"notifications/initialized"}}
{line}
"#
    );
    serve_lines(protocol_server(), init)
}

/// What `server` wrote for the input `lines`, every line parsed and checked well-formed.
fn serve_lines(server: ServerHandle, lines: String) -> Result<Vec<Value>, TestCaseError> {
    let init = lines;
    let output = runtime().block_on(async move {
        let (mut client, server_end) = tokio::io::duplex(1 << 16);
        let serve = mcp_tool::testing::serve_io(server, init.as_bytes(), server_end);
        let read = async move {
            let mut out = String::new();
            client.read_to_string(&mut out).await.expect("UTF-8 output");
            out
        };
        let (served, out) = tokio::join!(serve, read);
        served.expect("serve_io ends well");
        out
    });
    let mut messages = Vec::new();
    for out in output.lines() {
        let message: Value = serde_json::from_str(out)
            .map_err(|e| TestCaseError::fail(format!("not JSON ({e}): {out}")))?;
        well_formed(&message).map_err(|why| TestCaseError::fail(format!("{why}: {out}")))?;
        messages.push(message);
    }
    Ok(messages)
}

/// Whether `m` is one well-formed JSON-RPC 2.0 message.
fn well_formed(m: &Value) -> Result<(), String> {
    let obj = m.as_object().ok_or("not an object")?;
    if obj.get("jsonrpc") != Some(&json!("2.0")) {
        return Err("no jsonrpc 2.0".into());
    }
    if let Some(method) = obj.get("method") {
        return if method.is_string() {
            Ok(())
        } else {
            Err("a method that is no string".into())
        };
    }
    let id = obj.get("id").ok_or("a response without id")?;
    if !(id.is_string() || id.is_i64() || id.is_u64() || id.is_null()) {
        return Err("an id that is no string, integer or null".into());
    }
    match (obj.get("result"), obj.get("error")) {
        (Some(_), None) => Ok(()),
        (None, Some(e)) if e["code"].is_i64() && e["message"].is_string() => Ok(()),
        _ => Err("not exactly one of result and error (with code and message)".into()),
    }
}

/// The responses among `messages`, the handshake's left out.
fn responses(messages: &[Value]) -> Vec<&Value> {
    messages
        .iter()
        .filter(|m| m.get("method").is_none() && m["id"] != INIT_ID)
        .collect()
}

/// Any JSON value, often with the members of JSON-RPC messages.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e300f64..1e300).prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
        Just(json!("2.0")),
        Just(json!("tools/call")),
        Just(json!("ping")),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        let key = prop_oneof![
            Just("jsonrpc".to_owned()),
            Just("id".to_owned()),
            Just("method".to_owned()),
            Just("params".to_owned()),
            Just("result".to_owned()),
            Just("error".to_owned()),
            Just("name".to_owned()),
            Just("arguments".to_owned()),
            "[a-z_]{1,6}",
        ];
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((key, inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// A method: one the server knows, or any string.
fn any_method() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::sample::select(vec![
            "ping",
            "initialize",
            "tools/list",
            "tools/call",
            "resources/list",
            "resources/read",
            "resources/templates/list",
            "resources/subscribe",
            "prompts/list",
            "prompts/get",
            "completion/complete",
            "logging/setLevel",
            "tasks/list",
            "tasks/get",
            "tasks/result",
            "tasks/cancel",
            "server/discover",
            "notifications/cancelled",
            "notifications/initialized",
            "notifications/progress",
        ])
        .prop_map(str::to_owned),
        ".{0,24}",
    ]
}

/// A JSON-RPC id: a string or an integer (not the handshake's).
fn any_id() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        ".{0,10}".prop_map(Value::String),
    ]
    .prop_filter("not the handshake's id", |id| *id != INIT_ID)
}

/// Params: none, or an object (any members, or those of a tool call).
fn any_params() -> impl Strategy<Value = Option<Value>> {
    let call = (
        proptest::sample::select(vec!["prop_echo", "prop_add", "nope"]),
        any_json(),
    )
        .prop_map(|(name, arguments)| json!({"name": name, "arguments": arguments}));
    proptest::option::of(prop_oneof![
        any_json().prop_map(|v| match v {
            Value::Object(m) => Value::Object(m),
            other => json!({ "value": other }),
        }),
        call,
    ])
}

fn message(method: &str, id: Option<&Value>, params: Option<&Value>) -> String {
    let mut m = Map::new();
    m.insert("jsonrpc".into(), json!("2.0"));
    if let Some(id) = id {
        m.insert("id".into(), id.clone());
    }
    m.insert("method".into(), json!(method));
    if let Some(p) = params {
        m.insert("params".into(), p.clone());
    }
    Value::Object(m).to_string()
}

proptest! {
    #![proptest_config(config())]

    /// Any JSON value as a line: every line out is well-formed, and at most one answers it.
    #[test]
    fn any_value_is_answered_at_most_once(value in any_json()) {
        let line = value.to_string();
        let messages = exchange(&line)?;
        let answers = responses(&messages);
        prop_assert!(answers.len() <= 1, "{} answers to {line}: {answers:?}", answers.len());
    }

    /// A request, whatever its method, params and id, is answered exactly once, with its id.
    #[test]
    fn a_request_is_answered_exactly_once(
        method in any_method(),
        id in any_id(),
        params in any_params(),
    ) {
        let line = message(&method, Some(&id), params.as_ref());
        let messages = exchange(&line)?;
        let answers = responses(&messages);
        prop_assert_eq!(answers.len(), 1, "answers to {}: {:?}", line, answers);
        prop_assert_eq!(&answers[0]["id"], &id, "the answer to {} has another id", line);
    }

    /// A notification, whatever its method and params, is never answered.
    #[test]
    fn a_notification_is_never_answered(method in any_method(), params in any_params()) {
        let line = message(&method, None, params.as_ref());
        let messages = exchange(&line)?;
        let answers = responses(&messages);
        prop_assert!(answers.is_empty(), "answers to the notification {line}: {answers:?}");
    }
}

// ---- sequences of lines ----

/// Waits 20 ms (long enough for a later line to cancel it or reuse its id), then echoes.
#[tool]
async fn prop_slow(text: String) -> String {
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    text
}

fn sequence_server() -> ServerHandle {
    static SERVER: OnceLock<ServerHandle> = OnceLock::new();
    SERVER
        .get_or_init(|| {
            Server::new("props-seq", "0")
                .only(["prop_echo", "prop_add", "prop_slow"])
                .build()
                .expect("builds")
        })
        .clone()
}

/// One line a client may send, and what it expects back.
#[derive(Debug, Clone)]
enum Line {
    /// A request: one answer with its id.
    Request(Value, String),
    /// A notification (a cancellation among them): no answer.
    Notification(String),
    /// `notifications/cancelled` naming an id: no answer, and one fewer may come for the id.
    Cancel(Value, String),
    /// No JSON-RPC request at all (not JSON, or no id can be read): at most an answer with a
    /// null id.
    Garbage(String),
}

/// Ids from a small pool, so that they repeat (`1` and `"1"` are different ids).
fn pooled_id() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0i64..4).prop_map(Value::from),
        proptest::sample::select(vec!["1", "a", "b"]).prop_map(Value::from),
    ]
}

fn any_line() -> impl Strategy<Value = Line> {
    let call = (
        proptest::sample::select(vec!["prop_echo", "prop_slow", "prop_add", "nope"]),
        prop_oneof![
            Just(json!({"text": "hi"})),
            Just(json!({"a": 1, "b": 2})),
            any_json()
        ],
    )
        .prop_map(|(name, arguments)| json!({"name": name, "arguments": arguments}));
    let request = (
        pooled_id(),
        prop_oneof![
            3 => call.prop_map(|p| ("tools/call".to_owned(), Some(p))),
            1 => (any_method(), any_params()),
        ],
    )
        .prop_map(|(id, (method, params))| {
            let line = message(&method, Some(&id), params.as_ref());
            Line::Request(id, line)
        });
    // A request the server must refuse, but whose id it can read.
    let invalid = (
        pooled_id(),
        proptest::sample::select(vec![
            r#"{"jsonrpc":"1.0","id":ID,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":ID,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":ID}"#,
        ]),
    )
        .prop_map(|(id, text)| {
            let line = text.replace("ID", &id.to_string());
            Line::Request(id, line)
        });
    let cancel = pooled_id().prop_map(|id| {
        let line = message(
            "notifications/cancelled",
            None,
            Some(&json!({"requestId": id, "reason": "test"})),
        );
        Line::Cancel(id, line)
    });
    let notification = (any_method(), any_params())
        .prop_map(|(method, params)| Line::Notification(message(&method, None, params.as_ref())));
    let garbage = prop_oneof![
        "[^\\n]{0,20}".prop_map(|t| format!("{{{t}")),
        Just("[]".to_owned()),
        Just("null".to_owned()),
        Just("{}".to_owned()),
    ]
    .prop_map(Line::Garbage);
    prop_oneof![
        6 => request,
        2 => invalid,
        2 => cancel,
        2 => notification,
        1 => garbage,
    ]
}

proptest! {
    #![proptest_config(config())]

    /// Any sequence of lines: each request line is answered exactly once with its id (a
    /// cancelled id may go without one answer per cancellation), nothing answers an id no
    /// request had, a notification is never answered, and every line out is well-formed.
    #[test]
    fn every_request_of_a_sequence_is_answered_exactly_once(
        lines in proptest::collection::vec(any_line(), 1..16),
    ) {
        let mut input = format!(
            r#"{{"jsonrpc":"2.0","id":"{INIT_ID}","method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"p","version":"0"}}}}}}
{{"jsonrpc":"2.0","method":"notifications/initialized"}}
"#
        );
        // Per id (its JSON text): requests sent, cancellations sent.
        let mut expected: HashMap<String, (usize, usize)> = HashMap::new();
        let mut garbage = 0;
        for line in &lines {
            let text = match line {
                Line::Request(id, text) => {
                    expected.entry(id.to_string()).or_default().0 += 1;
                    text
                }
                Line::Cancel(id, text) => {
                    expected.entry(id.to_string()).or_default().1 += 1;
                    text
                }
                Line::Notification(text) => text,
                Line::Garbage(text) => {
                    garbage += 1;
                    text
                }
            };
            input.push_str(text);
            input.push('\n');
        }
        let messages = serve_lines(sequence_server(), input)?;
        let mut answered: HashMap<String, usize> = HashMap::new();
        let mut null_ids = 0;
        for answer in responses(&messages) {
            if answer["id"].is_null() {
                null_ids += 1;
            } else {
                *answered.entry(answer["id"].to_string()).or_default() += 1;
            }
        }
        prop_assert!(null_ids <= garbage, "{null_ids} answers with a null id to {garbage} lines that are no request: {lines:?}");
        for (id, count) in &answered {
            let (requests, cancels) = expected.get(id).copied().unwrap_or_default();
            prop_assert!(
                *count <= requests && *count + cancels >= requests,
                "id {id}: {count} answers to {requests} requests and {cancels} cancellations: {lines:?}\n{messages:?}"
            );
        }
        for (id, (requests, cancels)) in &expected {
            let count = answered.get(id).copied().unwrap_or(0);
            prop_assert!(
                count + cancels >= *requests,
                "id {id}: {count} answers to {requests} requests and {cancels} cancellations: {lines:?}\n{messages:?}"
            );
        }
    }
}

// ---- tool arguments ----

/// How often each tool of these tests ran.
fn runs() -> &'static std::sync::Mutex<HashMap<&'static str, usize>> {
    static RUNS: OnceLock<std::sync::Mutex<HashMap<&'static str, usize>>> = OnceLock::new();
    RUNS.get_or_init(Default::default)
}

fn ran(tool: &'static str) {
    *runs()
        .lock()
        .expect("not poisoned")
        .entry(tool)
        .or_default() += 1;
}

fn run_count(tool: &str) -> usize {
    runs()
        .lock()
        .expect("not poisoned")
        .get(tool)
        .copied()
        .unwrap_or(0)
}

/// User role determining access permissions (as in the `users` example).
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Role {
    #[default]
    User,
    Admin,
    Moderator,
}

/// The details of a new account (as in the `users` example).
#[derive(Deserialize, JsonSchema)]
struct CreateUser {
    /// Valid email address for the account
    #[schemars(email)]
    email: String,
    /// Full name of the user
    #[schemars(length(min = 2, max = 100))]
    name: String,
    /// User role determining access permissions
    #[serde(default)]
    role: Role,
    /// Additional key-value pairs for custom attributes
    metadata: Option<HashMap<String, String>>,
}

/// Create a user account (the `users` example's shape).
#[tool(name = "create_user")]
async fn prop_create_user(Args(input): Args<CreateUser>) -> String {
    ran("create_user");
    let _ = (input.role, input.metadata);
    assert!(input.email.contains('@'));
    assert!((2..=100).contains(&input.name.chars().count()));
    input.email
}

/// Multiply two numbers (the `calc` example's shape).
#[tool(name = "multiply")]
fn prop_multiply(
    #[arg(description = "First factor")] a: f64,
    #[arg(description = "Second factor")] b: f64,
) -> f64 {
    ran("multiply");
    a * b
}

/// Divide `a` by `b` (the `calc` example's shape).
#[tool(name = "divide")]
fn prop_divide(a: f64, b: f64) -> Result<f64, ToolError> {
    ran("divide");
    if b == 0.0 {
        return Err(ToolError::new("DIVISION_BY_ZERO", "cannot divide by zero"));
    }
    Ok(a / b)
}

/// A shape, internally tagged.
#[allow(dead_code)] // read through Debug
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Shape {
    Circle { radius: f64 },
    Rect { w: u32, h: u32 },
}

/// An externally tagged enum of every variant kind.
#[allow(dead_code)] // read through Debug
#[derive(Debug, Deserialize, JsonSchema)]
enum Mixed {
    Unit,
    Newtype(i32),
    Pair(u8, String),
    Point { x: i16, y: i16 },
}

/// An untagged enum.
#[allow(dead_code)] // read through Debug
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
enum NumOrText {
    Num(f64),
    Text(String),
}

/// A nested struct that refuses unknown fields.
#[allow(dead_code)] // read through Debug
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Address {
    #[schemars(length(min = 1, max = 40))]
    street: String,
    #[schemars(regex(pattern = r"^[0-9]{4,6}$"))]
    zip: String,
    country: Option<String>,
}

/// Formats, ranges, lengths, nesting and defaults.
#[allow(dead_code)] // read through Debug
#[derive(Debug, Deserialize, JsonSchema)]
struct Person {
    #[schemars(email)]
    email: String,
    #[schemars(length(min = 2, max = 20))]
    name: String,
    #[schemars(range(min = 18, max = 150))]
    age: u8,
    #[schemars(url)]
    homepage: Option<String>,
    #[schemars(extend("format" = "date-time"))]
    born: Option<String>,
    address: Address,
    #[serde(default)]
    #[schemars(length(max = 3))]
    others: Vec<Address>,
    #[serde(default)]
    #[schemars(length(max = 5))]
    tags: Vec<String>,
    meta: Option<HashMap<String, i64>>,
}

/// Register a person.
#[tool]
async fn prop_register(person: Person, #[arg(default)] role: Role) -> String {
    ran("prop_register");
    let _ = role;
    assert!((18..=150).contains(&person.age));
    assert!(person.tags.len() <= 5 && person.others.len() <= 3);
    format!("{person:?}")
}

/// Enums of every kind.
#[tool]
async fn prop_enums(
    mixed: Mixed,
    shape: Shape,
    either: Option<NumOrText>,
    #[arg(default)] roles: Vec<Role>,
) -> String {
    ran("prop_enums");
    format!("{mixed:?} {shape:?} {either:?} {roles:?}")
}

/// Numbers of every width.
#[tool]
#[allow(clippy::too_many_arguments)]
fn prop_widths(
    a: i8,
    b: i16,
    c: i32,
    d: i64,
    e: u8,
    f: u16,
    g: u32,
    h: u64,
    x: f32,
    y: f64,
    z: Option<usize>,
) -> String {
    ran("prop_widths");
    format!("{a} {b} {c} {d} {e} {f} {g} {h} {x} {y} {z:?}")
}

const ARGUMENT_TOOLS: [&str; 6] = [
    "create_user",
    "multiply",
    "divide",
    "prop_register",
    "prop_enums",
    "prop_widths",
];

fn argument_server() -> ServerHandle {
    static SERVER: OnceLock<ServerHandle> = OnceLock::new();
    SERVER
        .get_or_init(|| {
            Server::new("props-args", "0")
                .only(ARGUMENT_TOOLS)
                .build()
                .expect("builds")
        })
        .clone()
}

fn schema_of(tool: &str) -> Value {
    argument_server()
        .tools()
        .iter()
        .find(|t| t.name() == tool)
        .unwrap_or_else(|| panic!("no tool {tool}"))
        .input_schema()
        .clone()
}

/// The argument tests count runs per tool: one at a time.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Every generated value runs the tool.
fn accepted(tool: &'static str) {
    let _serial = serial();
    let schema = schema_of(tool);
    let rt = runtime();
    let server = argument_server();
    proptest!(config(), |(arguments in arbitrary_arguments(&schema))| {
        let before = run_count(tool);
        let result = rt
            .block_on(server.call(tool, arguments.clone()))
            .map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        let text = result.text_content();
        prop_assert!(
            !text.starts_with("Invalid arguments") && run_count(tool) == before + 1,
            "`{}` did not run on {}: {}", tool, arguments, text
        );
    });
}

/// No refused value reaches the tool: validation answers first.
fn refused(tool: &'static str) {
    let _serial = serial();
    let schema = schema_of(tool);
    let rt = runtime();
    let server = argument_server();
    proptest!(config(), |(arguments in refused_arguments(&schema))| {
        let before = run_count(tool);
        let result = rt
            .block_on(server.call(tool, arguments.clone()))
            .map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        let text = result.text_content();
        prop_assert!(result.is_error, "`{}` accepted {}: {}", tool, arguments, text);
        prop_assert!(
            text.starts_with("Invalid arguments"),
            "`{}`: {} was not refused by validation: {}", tool, arguments, text
        );
        prop_assert_eq!(run_count(tool), before, "`{}` ran on {}", tool, arguments);
    });
}

#[test]
fn generated_arguments_run_create_user() {
    accepted("create_user");
}

#[test]
fn generated_arguments_run_calc() {
    accepted("multiply");
    accepted("divide");
}

#[test]
fn generated_arguments_run_rich_tools() {
    accepted("prop_register");
    accepted("prop_enums");
    accepted("prop_widths");
}

#[test]
fn refused_arguments_never_reach_create_user() {
    refused("create_user");
}

#[test]
fn refused_arguments_never_reach_calc() {
    refused("multiply");
    refused("divide");
}

#[test]
fn refused_arguments_never_reach_rich_tools() {
    refused("prop_register");
    refused("prop_enums");
    refused("prop_widths");
}
