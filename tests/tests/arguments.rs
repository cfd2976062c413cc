//! A call's arguments reach its parameters the same whether they are read from their text
//! (a plain call whose arguments the validator finds valid as written) or from a map (any
//! other): escapes, keys given twice, `1.0` for an integer, `null`, missing and unknown
//! arguments, `Args<T>` and `ToolCall::arguments`, in both protocol eras, through the
//! in-process client (JSON-RPC text over the stdio path).

use std::sync::atomic::{AtomicU64, Ordering};

use mcp_tool::extract::{FromContext, ToolCall};
use mcp_tool::prelude::*;
use mcp_tool::testing::Client;
use serde_json::{Value, json};

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// The arguments no parameter took, as the tool sees them.
struct Rest(String);

impl FromContext for Rest {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(Rest(Value::Object(call.arguments().clone()).to_string()))
    }
}

/// Each argument as it arrived, then the rest.
#[tool]
fn show(
    n: Option<u8>,
    s: Option<String>,
    v: Option<Value>,
    #[arg(default)] d: Option<u32>,
    rest: Rest,
) -> String {
    format!("{n:?} {s:?} {v:?} {d:?} {}", rest.0)
}

#[derive(Deserialize, JsonSchema)]
struct Person {
    name: String,
    age: Option<u32>,
}

/// All arguments as one struct.
#[tool]
fn person(Args(p): Args<Person>) -> String {
    format!("{} {:?}", p.name, p.age)
}

fn server() -> Server {
    Server::new("arguments", "0.1.0")
}

static ID: AtomicU64 = AtomicU64::new(10_000);

/// Calls `name` with `arguments` written as given: the result's text, and whether it is an
/// error (a JSON-RPC error's message for one).
async fn call(client: &Client, stateless: bool, name: &str, arguments: &str) -> (bool, String) {
    let id = ID.fetch_add(1, Ordering::Relaxed);
    let meta = match stateless {
        true => {
            r#","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"0"}}"#
        }
        false => "",
    };
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments}{meta}}}}}"#
    );
    match client.request_raw(&id.to_string(), &line).await {
        Ok(result) => (
            result["isError"] == json!(true),
            result["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        ),
        Err(e) => (true, format!("rpc {}", e.message)),
    }
}

/// The calls, and what each gives, the same in both eras.
const CASES: &[(&str, &str, bool, &str)] = &[
    ("add", r#"{"a":2,"b":3}"#, false, "5"),
    ("add", r#"{ "a" : -2 , "b" : 3 }"#, false, "1"),
    ("add", r#"{"a":2.0,"b":3}"#, false, "5"),
    ("add", r#"{"a":2,"b":3,"a":40}"#, false, "43"),
    ("add", r#"{"\u0061":2,"b":3}"#, false, "5"),
    (
        "add",
        r#"{"a":2,"b":3,"extra":{"k":[1,"x"]}}"#,
        true,
        "Invalid arguments for tool `add`:\nextra: unknown argument (not in the input schema)",
    ),
    (
        "add",
        r#"{"a":"2","b":3}"#,
        true,
        "Invalid arguments for tool `add`:\na: \"2\" is not of type integer",
    ),
    (
        "add",
        r#"{"a":2}"#,
        true,
        "Invalid arguments for tool `add`:\nb: required argument is missing",
    ),
    (
        "add",
        r#"{"a":2,"b":9223372036854775808}"#,
        true,
        "Invalid arguments for tool `add`:\nb: 9223372036854775808 is out of the range of int64, \
         from -9223372036854775808 to 9223372036854775807",
    ),
    ("show", r#"{}"#, false, "None None None None {}"),
    (
        "show",
        r#"{"n":7,"s":"a\n\u00e4","v":{"k":[1.5,null]},"d":null}"#,
        false,
        r#"Some(7) Some("a\nä") Some(Object {"k": Array [Number(1.5), Null]}) None {"d":null}"#,
    ),
    (
        "show",
        r#"{"n":7.0,"v":{"w":1.0},"d":3}"#,
        false,
        r#"Some(7) None Some(Object {"w": Number(1)}) Some(3) {}"#,
    ),
    (
        "show",
        r#"{"n":null,"s":null,"v":null}"#,
        false,
        "None None None None {}",
    ),
    (
        "show",
        r#"{"v":{"k":1,"k":2},"s":"\ud83d\ude00"}"#,
        false,
        r#"None Some("😀") Some(Object {"k": Number(2)}) None {}"#,
    ),
    (
        "person",
        r#"{"name":"Ann","age":30}"#,
        false,
        "Ann Some(30)",
    ),
    (
        "person",
        r#"{"name":"Ann","age":30.0}"#,
        false,
        "Ann Some(30)",
    ),
    ("person", r#"{"name":"Ann"}"#, false, "Ann None"),
    (
        "person",
        r#"{"age":30,"name":"Ann"}"#,
        false,
        "Ann Some(30)",
    ),
    (
        "person",
        r#"{"name":"A\u006en","age":null}"#,
        false,
        "Ann None",
    ),
    (
        "person",
        r#"{"name":"Ann, whose name is written long enough that the arguments' text is over a hundred bytes","age":4294967295}"#,
        false,
        "Ann, whose name is written long enough that the arguments' text is over a hundred bytes Some(4294967295)",
    ),
    (
        "person",
        r#"{"name":"Ann","x":1}"#,
        true,
        "Invalid arguments for tool `person`:\nx: unknown argument (not in the input schema)",
    ),
    (
        "person",
        r#"{"name":7}"#,
        true,
        "Invalid arguments for tool `person`:\nname: 7 is not of type string",
    ),
];

async fn check(client: &Client, stateless: bool) {
    let mut wrong = Vec::new();
    for (tool, arguments, error, text) in CASES {
        let got = call(client, stateless, tool, arguments).await;
        if got != (*error, (*text).to_owned()) {
            wrong.push(format!("{tool} {arguments}: {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // A string serde_json refuses is refused as the map's parse refused it.
    let (error, text) = call(client, stateless, "show", r#"{"s":"\ud800"}"#).await;
    assert!(error && text.starts_with("rpc Invalid params: "), "{text}");
}

#[tokio::test]
async fn arguments_arrive_the_same_in_a_session() {
    let client = Client::start(server()).await.unwrap();
    check(&client, false).await;
}

#[tokio::test]
async fn arguments_arrive_the_same_without_a_session() {
    let client = Client::stateless(server(), json!({})).unwrap();
    check(&client, true).await;
}
