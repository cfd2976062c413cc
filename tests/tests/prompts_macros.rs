//! Prompts, resources and resource templates defined with `#[prompt]`, `#[resource]` and
//! `#[resource_template]`, on free functions and on the methods of a `#[tools]` impl block,
//! served in both protocol eras (2025-11-25 after `initialize`, 2026-07-28 stateless):
//! `prompts/list`, `prompts/get`, `resources/list`, `resources/templates/list`,
//! `resources/read` and `completion/complete`; the JSON-RPC errors bad input gets (an unknown
//! or missing argument, one that does not parse, a URI that does not match, a variable that
//! does not parse), each naming what is wrong; and what a server refuses to start with.

use std::sync::atomic::{AtomicU32, Ordering};

use mcp_tool::content::ResourceContents;
use mcp_tool::extract::State;
use mcp_tool::prelude::*;
use mcp_tool::prompt::{Prompt, PromptMessage, PromptResult, Role};
use mcp_tool::protocol::RpcError;
use mcp_tool::protocol::code::{INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND};
use mcp_tool::resource::ResourceTemplate;
use mcp_tool::testing::Client;
use serde_json::{Map, Value, json};

// ---------------------------------------------------------------------------------------------
// Free functions
// ---------------------------------------------------------------------------------------------

fn names(typed: &str) -> Vec<String> {
    ["ada", "alan", "grace"]
        .into_iter()
        .filter(|n| n.starts_with(typed))
        .map(str::to_owned)
        .collect()
}

/// Greet someone.
#[prompt(
    title = "Greeting",
    icons = r#"[{"src": "https://example.com/wave.png"}]"#
)]
fn greet(
    #[arg(description = "Who to greet", complete = names)] name: String,
    #[arg(description = "How many times (1 by default)")] times: Option<u32>,
) -> String {
    vec![format!("Hello, {name}!"); times.unwrap_or(1) as usize].join(" ")
}

/// The languages known to `review`, given what was typed and the other arguments.
fn languages(typed: &str, known: &Map<String, Value>) -> Vec<String> {
    let mut found: Vec<String> = ["rust", "ruby", "python"]
        .into_iter()
        .filter(|l| l.starts_with(typed))
        .map(str::to_owned)
        .collect();
    if let Some(code) = known.get("code").and_then(Value::as_str) {
        found.push(format!("{typed} for {code}"));
    }
    found
}

/// Review code, asking the client's name.
#[prompt(name = "code.review")]
async fn review(
    code: String,
    #[arg(rename = "lang", complete = languages)] language: Option<String>,
    ctx: Ctx,
) -> Result<PromptResult, ToolError> {
    if code.is_empty() {
        return Err(ToolError::new("EMPTY", "there is no code to review"));
    }
    let client = ctx.client().info["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    Ok(PromptResult {
        description: Some(format!("review for {client}")),
        messages: vec![
            PromptMessage::user(format!(
                "Review this {}:\n{code}",
                language.as_deref().unwrap_or("code")
            )),
            PromptMessage::new(Role::Assistant, Content::text("Looking.")),
        ],
    })
}

/// A prompt without arguments.
#[prompt]
fn hello() -> &'static str {
    "hello"
}

/// Today's message.
#[resource("test://motd")]
fn motd() -> String {
    "Be kind.".into()
}

/// A tiny image.
#[resource("test://logo", mime_type = "image/png", title = "Logo")]
fn logo() -> Vec<u8> {
    vec![0x89, b'P', b'N', b'G']
}

/// The configuration.
#[derive(Serialize)]
struct Config {
    verbose: bool,
}

/// The configuration, as JSON.
#[resource("test://config", meta = r#"{"example.com/source": "built-in"}"#)]
async fn config() -> Json<Config> {
    Json(Config { verbose: true })
}

/// An item by number.
#[resource_template("test://items/{id}", name = "items")]
fn item(#[arg(complete = item_ids)] id: u32, ctx: Ctx) -> Result<String, ToolError> {
    if id == 0 {
        return Err(ToolError::new("NOT_FOUND", "there is no item 0"));
    }
    let client = ctx.client().info["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    Ok(format!("item {id} for {client}"))
}

fn item_ids(typed: &str) -> Vec<String> {
    (1..=12)
        .map(|i| i.to_string())
        .filter(|i| i.starts_with(typed))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Methods of a service
// ---------------------------------------------------------------------------------------------

/// How many reads the library served (a state, as tools take them).
#[derive(Default)]
struct Reads(AtomicU32);

/// A library: shelves of books.
struct Library {
    shelves: Vec<(&'static str, Vec<&'static str>)>,
}

impl Library {
    fn new() -> Library {
        Library {
            shelves: vec![
                ("fiction", vec!["dune", "emma"]),
                ("science", vec!["cosmos"]),
            ],
        }
    }
}

#[tools]
impl Library {
    /// How many shelves there are.
    #[tool(read_only)]
    fn shelf_count(&self) -> usize {
        self.shelves.len()
    }

    /// Recommend a book from a shelf.
    #[prompt]
    async fn recommend(
        &self,
        #[arg(description = "The shelf", complete = Self::shelf_names)] shelf: String,
    ) -> Result<Vec<PromptMessage>, String> {
        let (_, books) = self
            .shelves
            .iter()
            .find(|(name, _)| *name == shelf)
            .ok_or_else(|| format!("no shelf `{shelf}`"))?;
        Ok(vec![PromptMessage::user(format!(
            "Recommend one of: {}",
            books.join(", ")
        ))])
    }

    /// A book on a shelf.
    #[resource_template("library://{shelf}/{book}", mime_type = "text/markdown")]
    fn book(
        &self,
        #[arg(complete = Self::shelf_names)] shelf: String,
        #[arg(complete = Self::books)] book: String,
        reads: State<Reads>,
    ) -> Result<String, ToolError> {
        let found = self
            .shelves
            .iter()
            .any(|(s, books)| *s == shelf && books.contains(&book.as_str()));
        if !found {
            return Err(ToolError::new("NOT_FOUND", format!("no {shelf}/{book}")));
        }
        let n = reads.0.0.fetch_add(1, Ordering::Relaxed) + 1;
        Ok(format!("# {book}\n\nread {n}"))
    }

    /// The shelves, as JSON.
    #[resource("library://shelves")]
    fn shelves(&self) -> Json<Vec<&'static str>> {
        Json(self.shelves.iter().map(|(s, _)| *s).collect())
    }

    fn shelf_names(&self, typed: &str) -> Vec<String> {
        self.shelves
            .iter()
            .map(|(s, _)| s.to_string())
            .filter(|s| s.starts_with(typed))
            .collect()
    }

    fn books(&self, typed: &str, known: &Map<String, Value>) -> Vec<String> {
        let shelf = known.get("shelf").and_then(Value::as_str);
        self.shelves
            .iter()
            .filter(|(s, _)| shelf.is_none_or(|wanted| wanted == *s))
            .flat_map(|(_, books)| books.iter().map(|b| b.to_string()))
            .filter(|b| b.starts_with(typed))
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn server() -> Server {
    Server::new("macros", "0.1.0")
        .service(Library::new())
        .state(Reads::default())
}

/// A client of each era: 2025-11-25 after `initialize`, and 2026-07-28 stateless.
async fn clients() -> [(&'static str, Client); 2] {
    let session = Client::start(server()).await.expect("the server starts");
    let stateless = Client::stateless(server(), json!({})).expect("the server starts");
    [("2025-11-25", session), ("2026-07-28", stateless)]
}

/// The listing under `key`, without the 2026-07-28 result's own fields.
async fn list(client: &Client, method: &str, key: &str) -> Vec<Value> {
    let page = client.request(method, json!({})).await.unwrap();
    page[key].as_array().cloned().unwrap_or_default()
}

fn by<'v>(items: &'v [Value], field: &str, value: &str) -> &'v Value {
    items
        .iter()
        .find(|i| i[field] == value)
        .unwrap_or_else(|| panic!("no item with {field} `{value}` in {items:?}"))
}

async fn get(client: &Client, name: &str, arguments: Value) -> Result<Value, RpcError> {
    client
        .request(
            "prompts/get",
            json!({ "name": name, "arguments": arguments }),
        )
        .await
}

async fn read(client: &Client, uri: &str) -> Result<Value, RpcError> {
    client
        .request("resources/read", json!({ "uri": uri }))
        .await
}

async fn complete(
    client: &Client,
    reference: Value,
    name: &str,
    value: &str,
    known: Value,
) -> Vec<String> {
    let params = json!({
        "ref": reference,
        "argument": { "name": name, "value": value },
        "context": { "arguments": known }
    });
    let r = client.request("completion/complete", params).await.unwrap();
    serde_json::from_value(r["completion"]["values"].clone()).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Listing
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn prompts_are_listed_with_their_arguments() {
    for (era, client) in clients().await {
        let prompts = list(&client, "prompts/list", "prompts").await;
        let names: Vec<&str> = prompts.iter().filter_map(|p| p["name"].as_str()).collect();
        // Registered prompts are listed by name.
        assert_eq!(
            names,
            ["code.review", "greet", "hello", "recommend"],
            "{era}"
        );
        assert_eq!(
            by(&prompts, "name", "greet"),
            &json!({
                "name": "greet",
                "title": "Greeting",
                "description": "Greet someone.",
                "icons": [{ "src": "https://example.com/wave.png" }],
                "arguments": [
                    { "name": "name", "description": "Who to greet", "required": true },
                    { "name": "times", "description": "How many times (1 by default)", "required": false }
                ]
            }),
            "{era}"
        );
        // A context value is no argument; a renamed one has its new name.
        assert_eq!(
            by(&prompts, "name", "code.review")["arguments"],
            json!([
                { "name": "code", "required": true },
                { "name": "lang", "required": false }
            ]),
            "{era}"
        );
        assert_eq!(
            by(&prompts, "name", "hello"),
            &json!({ "name": "hello", "description": "A prompt without arguments." }),
            "{era}"
        );
        assert_eq!(
            by(&prompts, "name", "recommend")["arguments"],
            json!([{ "name": "shelf", "description": "The shelf", "required": true }]),
            "{era}"
        );
    }
}

#[tokio::test]
async fn resources_and_templates_are_listed() {
    for (era, client) in clients().await {
        let resources = list(&client, "resources/list", "resources").await;
        let uris: Vec<&str> = resources.iter().filter_map(|r| r["uri"].as_str()).collect();
        assert_eq!(
            uris,
            [
                "library://shelves",
                "test://config",
                "test://logo",
                "test://motd"
            ],
            "{era}"
        );
        // The MIME type is the attribute's, else the return type's.
        assert_eq!(
            by(&resources, "uri", "test://motd"),
            &json!({ "uri": "test://motd", "name": "motd", "description": "Today's message.", "mimeType": "text/plain" }),
            "{era}"
        );
        assert_eq!(
            by(&resources, "uri", "test://logo"),
            &json!({ "uri": "test://logo", "name": "logo", "title": "Logo", "description": "A tiny image.", "mimeType": "image/png" }),
            "{era}"
        );
        assert_eq!(
            by(&resources, "uri", "test://config"),
            &json!({
                "uri": "test://config", "name": "config", "description": "The configuration, as JSON.",
                "mimeType": "application/json", "_meta": { "example.com/source": "built-in" }
            }),
            "{era}"
        );
        assert_eq!(
            by(&resources, "uri", "library://shelves")["mimeType"],
            "application/json",
            "{era}"
        );
        let templates = list(&client, "resources/templates/list", "resourceTemplates").await;
        assert_eq!(
            templates,
            [
                json!({ "uriTemplate": "library://{shelf}/{book}", "name": "book", "description": "A book on a shelf.", "mimeType": "text/markdown" }),
                json!({ "uriTemplate": "test://items/{id}", "name": "items", "description": "An item by number.", "mimeType": "text/plain" }),
            ],
            "{era}"
        );
    }
}

#[tokio::test]
async fn capabilities_name_prompts_resources_and_completions() {
    let client = Client::connect(server()).unwrap();
    let init = client.initialize("2025-11-25").await.unwrap();
    let caps = &init["capabilities"];
    assert_eq!(caps["prompts"], json!({ "listChanged": true }));
    assert_eq!(caps["resources"]["subscribe"], true);
    assert_eq!(caps["completions"], json!({}));
    assert!(caps["tools"].is_object());
}

// ---------------------------------------------------------------------------------------------
// Getting prompts
// ---------------------------------------------------------------------------------------------

fn texts(result: &Value) -> Vec<&str> {
    result["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"]["text"].as_str())
        .collect()
}

#[tokio::test]
async fn prompts_are_rendered_from_their_arguments() {
    for (era, client) in clients().await {
        let r = get(&client, "greet", json!({ "name": "ada", "times": "2" }))
            .await
            .unwrap();
        assert_eq!(
            r["messages"],
            json!([{ "role": "user", "content": { "type": "text", "text": "Hello, ada! Hello, ada!" } }]),
            "{era}"
        );
        // An optional argument may be left out, or be null.
        for arguments in [
            json!({ "name": "alan" }),
            json!({ "name": "alan", "times": null }),
        ] {
            let r = get(&client, "greet", arguments).await.unwrap();
            assert_eq!(texts(&r), ["Hello, alan!"], "{era}");
        }
        // A context value: the client's name, from the request.
        let r = get(
            &client,
            "code.review",
            json!({ "code": "fn main() {}", "lang": "rust" }),
        )
        .await
        .unwrap();
        assert_eq!(r["description"], "review for mcp-tool-testing", "{era}");
        assert_eq!(
            texts(&r),
            ["Review this rust:\nfn main() {}", "Looking."],
            "{era}"
        );
        assert_eq!(r["messages"][1]["role"], "assistant", "{era}");
        let r = client
            .request("prompts/get", json!({ "name": "hello" }))
            .await
            .unwrap();
        assert_eq!(texts(&r), ["hello"], "{era}");
        // A method, on the service instance.
        let r = get(&client, "recommend", json!({ "shelf": "fiction" }))
            .await
            .unwrap();
        assert_eq!(texts(&r), ["Recommend one of: dune, emma"], "{era}");
    }
}

#[tokio::test]
async fn bad_prompt_arguments_are_invalid_params_naming_them() {
    for (era, client) in clients().await {
        for (name, arguments, named) in [
            // Unknown.
            ("greet", json!({ "name": "ada", "nmae": "x" }), "`nmae`"),
            ("hello", json!({ "x": "1" }), "`x`"),
            // Missing.
            ("greet", json!({ "times": "2" }), "`name`"),
            // Not text.
            ("greet", json!({ "name": 7 }), "`name`"),
            ("greet", json!({ "name": "ada", "times": 2 }), "`times`"),
            // Does not parse.
            (
                "greet",
                json!({ "name": "ada", "times": "twice" }),
                "`times`",
            ),
            ("greet", json!({ "name": "ada", "times": "-1" }), "`times`"),
        ] {
            let e = get(&client, name, arguments.clone()).await.unwrap_err();
            assert_eq!(e.code, INVALID_PARAMS, "{era} {name} {arguments}: {e:?}");
            assert!(e.message.contains(named), "{era} {name} {arguments}: {e:?}");
        }
        let e = get(&client, "greet", json!({ "name": "ada", "x": "1" }))
            .await
            .unwrap_err();
        assert_eq!(
            e.message, "prompt `greet` has no argument `x`: its arguments are `name`, `times`",
            "{era}"
        );
        let e = get(&client, "greet", json!({ "name": "ada", "times": "twice" }))
            .await
            .unwrap_err();
        assert_eq!(
            e.message, "prompt argument `times`: invalid digit found in string",
            "{era}"
        );
        // What the client sent is quoted cut short, however long it is.
        let long = "x".repeat(100_000);
        for arguments in [
            json!({ "name": "ada", &long: "1" }),
            json!({ "name": [&long] }),
        ] {
            let e = get(&client, "greet", arguments).await.unwrap_err();
            assert!(e.message.len() < 300, "{era}: {} bytes", e.message.len());
            assert!(e.message.contains("..."), "{era}: {}", e.message);
        }
    }
}

#[tokio::test]
async fn a_failing_prompt_is_a_json_rpc_error_with_its_text() {
    for (era, client) in clients().await {
        let e = get(&client, "code.review", json!({ "code": "" }))
            .await
            .unwrap_err();
        assert_eq!(e.code, INTERNAL_ERROR, "{era}: {e:?}");
        assert_eq!(e.message, "[EMPTY] there is no code to review", "{era}");
        // A `Display` error (here a `String`) is its text.
        let e = get(&client, "recommend", json!({ "shelf": "poetry" }))
            .await
            .unwrap_err();
        assert_eq!(e.code, INTERNAL_ERROR, "{era}: {e:?}");
        assert_eq!(e.message, "no shelf `poetry`", "{era}");
    }
}

// ---------------------------------------------------------------------------------------------
// Reading resources
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn resources_are_read_as_their_return_types_say() {
    for (era, client) in clients().await {
        let r = read(&client, "test://motd").await.unwrap();
        assert_eq!(
            r["contents"],
            json!([{ "uri": "test://motd", "mimeType": "text/plain", "text": "Be kind." }]),
            "{era}"
        );
        let r = read(&client, "test://logo").await.unwrap();
        assert_eq!(
            r["contents"],
            json!([{ "uri": "test://logo", "mimeType": "image/png", "blob": "iVBORw==" }]),
            "{era}"
        );
        let r = read(&client, "test://config").await.unwrap();
        assert_eq!(
            r["contents"],
            json!([{ "uri": "test://config", "mimeType": "application/json", "text": r#"{"verbose":true}"# }]),
            "{era}"
        );
        let r = read(&client, "library://shelves").await.unwrap();
        assert_eq!(
            r["contents"][0]["text"], r#"["fiction","science"]"#,
            "{era}"
        );
    }
}

#[tokio::test]
async fn templates_read_their_variables() {
    for (era, client) in clients().await {
        let r = read(&client, "test://items/7").await.unwrap();
        assert_eq!(
            r["contents"],
            json!([{ "uri": "test://items/7", "mimeType": "text/plain", "text": "item 7 for mcp-tool-testing" }]),
            "{era}"
        );
        // Variables are percent-decoded before they are parsed.
        let r = read(&client, "test://items/%37").await.unwrap();
        assert_eq!(
            r["contents"][0]["text"], "item 7 for mcp-tool-testing",
            "{era}"
        );
        // A method with two variables and a state.
        let r = read(&client, "library://science/cosmos").await.unwrap();
        let contents = &r["contents"][0];
        assert_eq!(contents["mimeType"], "text/markdown", "{era}");
        assert!(
            contents["text"]
                .as_str()
                .unwrap()
                .starts_with("# cosmos\n\nread "),
            "{era}: {r}"
        );
        // The function's error fails the read.
        let e = read(&client, "library://science/dune").await.unwrap_err();
        assert_eq!(e.code, INTERNAL_ERROR, "{era}: {e:?}");
        assert_eq!(e.message, "[NOT_FOUND] no science/dune", "{era}");
    }
}

#[tokio::test]
async fn bad_uris_are_refused_naming_what_is_wrong() {
    for (era, client) in clients().await {
        // A variable that does not parse: -32602 naming it.
        for uri in [
            "test://items/seven",
            "test://items/-1",
            "test://items/99999999999",
            "test://items/%zz",
        ] {
            let e = read(&client, uri).await.unwrap_err();
            assert_eq!(e.code, INVALID_PARAMS, "{era} {uri}: {e:?}");
            assert!(e.message.starts_with("`id` in "), "{era} {uri}: {e:?}");
            assert_eq!(e.data, Some(json!({ "uri": uri })), "{era}");
        }
        // An escaped `/` does not let a variable cross a segment: -32602 naming it.
        for (uri, var) in [
            ("library://science/..%2Ffiction", "book"),
            ("library://science%2F..%2Ffiction/dune", "shelf"),
            ("library://science/cos%2fmos", "book"),
        ] {
            let e = read(&client, uri).await.unwrap_err();
            assert_eq!(e.code, INVALID_PARAMS, "{era} {uri}: {e:?}");
            assert!(
                e.message.starts_with(&format!("`{var}` in "))
                    && e.message.contains("`%2F` decodes to `/`"),
                "{era} {uri}: {e:?}"
            );
            assert_eq!(e.data, Some(json!({ "uri": uri })), "{era}");
        }
        // No resource and no template: not found (2026-07-28 says it with -32602).
        let not_found = if era == "2026-07-28" {
            INVALID_PARAMS
        } else {
            RESOURCE_NOT_FOUND
        };
        for uri in [
            "test://items/",
            "test://items/1/2",
            "test://nothing",
            "library://fiction",
        ] {
            let e = read(&client, uri).await.unwrap_err();
            assert_eq!(e.code, not_found, "{era} {uri}: {e:?}");
            assert_eq!(e.data, Some(json!({ "uri": uri })), "{era}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Completion
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn arguments_and_variables_are_completed() {
    for (era, client) in clients().await {
        let greet = json!({ "type": "ref/prompt", "name": "greet" });
        assert_eq!(
            complete(&client, greet.clone(), "name", "a", json!({})).await,
            ["ada", "alan"],
            "{era}"
        );
        // An argument without a completion function: nothing, not an error.
        assert!(
            complete(&client, greet, "times", "", json!({}))
                .await
                .is_empty(),
            "{era}"
        );
        // A renamed argument, completed with the other arguments known.
        let review = json!({ "type": "ref/prompt", "name": "code.review" });
        assert_eq!(
            complete(&client, review, "lang", "r", json!({ "code": "x" })).await,
            ["rust", "ruby", "r for x"],
            "{era}"
        );
        // A method's completion, on the service instance.
        let recommend = json!({ "type": "ref/prompt", "name": "recommend" });
        assert_eq!(
            complete(&client, recommend, "shelf", "sc", json!({})).await,
            ["science"],
            "{era}"
        );
        let items = json!({ "type": "ref/resource", "uri": "test://items/{id}" });
        assert_eq!(
            complete(&client, items, "id", "1", json!({})).await,
            ["1", "10", "11", "12"],
            "{era}"
        );
        let book = json!({ "type": "ref/resource", "uri": "library://{shelf}/{book}" });
        assert_eq!(
            complete(
                &client,
                book.clone(),
                "book",
                "",
                json!({ "shelf": "fiction" })
            )
            .await,
            ["dune", "emma"],
            "{era}"
        );
        assert_eq!(
            complete(&client, book.clone(), "book", "", json!({})).await,
            ["dune", "emma", "cosmos"],
            "{era}"
        );
        assert_eq!(
            complete(&client, book, "shelf", "f", json!({})).await,
            ["fiction"],
            "{era}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Starting a server
// ---------------------------------------------------------------------------------------------

#[test]
fn a_missing_service_or_state_fails_the_start_naming_it() {
    let e = Server::new("macros", "0").build().unwrap_err().to_string();
    for expected in [
        "tool `shelf_count` (tests/tests/prompts_macros.rs:",
        "prompt `recommend` (tests/tests/prompts_macros.rs:",
        "resource template `library://{shelf}/{book}` (tests/tests/prompts_macros.rs:",
        "resource `library://shelves` (tests/tests/prompts_macros.rs:",
        "is defined on `prompts_macros::Library`, but no instance was given to the server",
    ] {
        assert!(e.contains(expected), "{expected}\nnot in:\n{e}");
    }
    let e = Server::new("macros", "0")
        .service(Library::new())
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("resource template `library://{shelf}/{book}`")
            && e.contains("takes `State<prompts_macros::Reads>`"),
        "{e}"
    );
}

#[test]
fn a_name_given_twice_fails_the_start() {
    let e = server()
        .prompt(Prompt::new("greet").get(|_| async { Ok(PromptResult::default()) }))
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("prompt `greet` (tests/tests/prompts_macros.rs:")
            && e.contains("is also given with the `Server` builder"),
        "{e}"
    );
}

#[tokio::test]
async fn an_explicit_set_without_the_registry() {
    let server = Server::new("library", "0")
        .without_registry()
        .service(Library::new())
        .state(Reads::default())
        .tools(Library::mcp_tools())
        .offerings(Library::mcp_offerings());
    let client = Client::start(server).await.unwrap();
    let prompts = list(&client, "prompts/list", "prompts").await;
    assert_eq!(prompts.len(), 1);
    assert_eq!(prompts[0]["name"], "recommend");
    let resources = list(&client, "resources/list", "resources").await;
    assert_eq!(resources.len(), 1);
    assert_eq!(resources[0]["uri"], "library://shelves");
    let r = read(&client, "library://fiction/emma").await.unwrap();
    assert!(
        r["contents"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("# emma")
    );
    // Given explicitly and registered too: one definition, listed once.
    let both = server_with_set_and_registry();
    let client = Client::start(both).await.unwrap();
    let prompts = list(&client, "prompts/list", "prompts").await;
    assert_eq!(prompts.len(), 4);
}

fn server_with_set_and_registry() -> Server {
    server().offerings(Library::mcp_offerings())
}

#[tokio::test]
async fn builders_and_macros_serve_side_by_side() {
    let server = server().resource_template(ResourceTemplate::new("built://{x}", "built").read(
        |request| async move {
            Ok(vec![ResourceContents::text(
                request.uri(),
                "text/plain",
                "built",
            )])
        },
    ));
    let client = Client::start(server).await.unwrap();
    let templates = list(&client, "resources/templates/list", "resourceTemplates").await;
    assert_eq!(templates.len(), 3);
    // What the builders give comes first.
    assert_eq!(templates[0]["uriTemplate"], "built://{x}");
    let r = read(&client, "built://anything").await.unwrap();
    assert_eq!(r["contents"][0]["text"], "built");
}
