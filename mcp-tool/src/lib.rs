//! # mcp-tool
//!
//! Write MCP (Model Context Protocol) servers by annotating ordinary Rust functions and methods
//! with `#[tool]`. The framework derives each tool's JSON Schema from its parameters, registers
//! it, validates every call against the schema it advertises, dispatches the call, and speaks
//! the protocol over stdio and Streamable HTTP.
//!
//! This page is the guide; each section's example is compiled and run as a test.
//!
//! - [A first server](#a-first-server)
//! - [Tools on a service](#tools-on-a-service)
//! - [Parameters](#parameters) and [validation](#validation)
//! - [Results and errors](#results-and-errors)
//! - [The call's context](#the-calls-context): progress, logging, cancellation, time limits,
//!   state
//! - [Asking the client](#asking-the-client): elicitation and sampling
//! - [Which tools a session sees](#which-tools-a-session-sees)
//! - [Describing a tool](#describing-a-tool): hints, metadata, examples, MCP Apps views
//! - [Resources, prompts, completion](#resources-prompts-completion): `#[resource]`,
//!   `#[resource_template]`, `#[prompt]`
//! - [Tools defined at run time](#tools-defined-at-run-time)
//! - [Serving](#serving): the command line, stdio, HTTP, your own axum app
//! - [Testing](#testing)
//! - [Where things are](#where-things-are)
//!
//! ## A first server
//!
//! A free function with `#[tool]` is a tool: its name is the function's name, its description
//! the doc comment, its arguments the parameters. [`Server::run`] is the whole `main`: with no
//! arguments the binary speaks MCP on stdio (what hosts such as Claude Desktop launch);
//! `--http` serves Streamable HTTP; `list`, `schema` and `call` try the tools from a shell.
//!
//! ```no_run
//! use mcp_tool::prelude::*;
//!
//! /// Multiply two numbers.
//! #[tool(read_only)]
//! fn multiply(a: f64, b: f64) -> f64 {
//!     a * b
//! }
//!
//! fn main() -> mcp_tool::Result<()> {
//!     Server::new("calc", env!("CARGO_PKG_VERSION")).run()
//! }
//! ```
//!
//! ```text
//! $ calc call multiply '{"a": 6, "b": 7}'
//! { "content": [ { "type": "text", "text": "42" } ] }
//! ```
//!
//! Names are checked at compile time against the specification's rule (1–128 characters of
//! `A-Z a-z 0-9 _ - .`); a tool without a description, an unknown attribute key, a parameter
//! that is not an argument or a context value, a return type that cannot become a result:
//! each is a compile error on the offending token.
//!
//! ## Tools on a service
//!
//! Methods become tools with `#[tool]` on each and [`#[tools]`](tools) on the impl block; the
//! server runs them on the instance given with [`Server::service`]. Tools share the instance
//! and run concurrently, so they take `&self` (or `self: Arc<Self>`).
//!
//! ```
//! use std::sync::Mutex;
//!
//! use mcp_tool::prelude::*;
//!
//! #[derive(Default)]
//! struct Notes {
//!     notes: Mutex<Vec<String>>,
//! }
//!
//! #[tools]
//! impl Notes {
//!     /// Add a note; returns how many there are.
//!     #[tool(idempotent = false)]
//!     fn add_note(&self, text: String) -> usize {
//!         let mut notes = self.notes.lock().unwrap();
//!         notes.push(text);
//!         notes.len()
//!     }
//!
//!     /// Every note, oldest first.
//!     #[tool(read_only)]
//!     fn notes(&self) -> Json<Vec<String>> {
//!         Json(self.notes.lock().unwrap().clone())
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = Server::new("notes", "1.0.0")
//!     .only(["add_note", "notes"])
//!     .service(Notes::default())
//!     .build()
//!     .unwrap();
//! server.call("add_note", serde_json::json!({"text": "buy milk"})).await.unwrap();
//! let all = server.call("notes", serde_json::json!({})).await.unwrap();
//! assert_eq!(all.structured(), Some(serde_json::json!({"result": ["buy milk"]})));
//! # }
//! ```
//!
//! A tool whose service was not given is reported when the server starts, naming the type;
//! so are two tools with one name (with both definitions' places).
//!
//! ## Parameters
//!
//! Each parameter is an extractor, decided by its type:
//! - a `Deserialize + JsonSchema` type is a named argument (required unless `Option<T>` or
//!   `#[arg(default)]`), described by its doc or `#[arg(description = "…")]`, renamed with
//!   `#[arg(rename = "…")]`;
//! - [`Args<T>`] takes all arguments as one struct;
//! - context values — [`Ctx`] and everything in [`extract`] — are injected and add nothing to
//!   the schema. Implement [`FromContext`](extract::FromContext) for values of your own.
//!
//! ```
//! use mcp_tool::prelude::*;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Query {
//!     /// What to look for
//!     text: String,
//!     /// At most this many results (1–50)
//!     #[schemars(range(min = 1, max = 50))]
//!     limit: Option<u8>,
//! }
//!
//! /// Search the catalogue.
//! #[tool(read_only)]
//! fn search_catalogue(Args(q): Args<Query>) -> String {
//!     format!("{} (limit {})", q.text, q.limit.unwrap_or(10))
//! }
//!
//! /// Find a user.
//! #[tool(read_only)]
//! fn find_user(
//!     #[arg(rename = "userId", description = "The user's id")] user_id: String,
//!     #[arg(default)] include_deleted: bool,
//! ) -> String {
//!     format!("{user_id} {include_deleted}")
//! }
//!
//! let server = Server::new("t", "1").only(["search_catalogue", "find_user"]).build().unwrap();
//! let tools = server.tools();
//! assert_eq!(tools[0].input_schema()["required"], serde_json::json!(["userId"]));
//! ```
//!
//! ## Validation
//!
//! Arguments are validated against the same JSON Schema 2020-12 the tool advertises —
//! formats, lengths, ranges, enums, required and unknown arguments — before the tool runs. A
//! bad call is answered with `isError: true` and a text that names each field and the rule it
//! broke, so a model can correct itself; an unknown tool is a JSON-RPC error.
//!
//! ```
//! # use mcp_tool::prelude::*;
//! #[derive(Deserialize, JsonSchema)]
//! struct Signup {
//!     #[schemars(email)]
//!     email: String,
//! }
//!
//! /// Sign up.
//! #[tool]
//! fn sign_up(Args(s): Args<Signup>) -> String {
//!     s.email
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = Server::new("t", "1").only(["sign_up"]).build().unwrap();
//! let r = server.call("sign_up", serde_json::json!({"email": "x"})).await.unwrap();
//! assert!(r.is_error);
//! assert!(r.text_content().contains(r#"email: "x" is not a valid email"#));
//! # }
//! ```
//!
//! Validation is exact whichever validator runs. Its own rules take the keywords derived
//! schemas use: types, number and length bounds, `required`, `properties`,
//! `additionalProperties`, `items`, `enum`, `const`, local `$ref`, the applicators, schemars'
//! integer and float formats and `email`. Everything else in JSON Schema (a `pattern`, other
//! formats such as `uuid` or `date-time`, `uniqueItems`, `$id`, other drafts) is checked by the
//! full validator, the cargo feature `full-schema`, on by default. A build without it is smaller
//! and compiles faster, and refuses at start a tool whose schema needs it, naming the keyword.
//!
//! Models sometimes send `"3"` for an integer or a JSON array as a string. Validation refuses
//! them; opt in to converting what the schema leaves no doubt about — for the whole server
//! ([`Server::coerce_arguments`], `MCP_TOOL_COERCE_ARGUMENTS=1`), a tool (`#[tool(coerce)]`)
//! or one argument (`#[arg(coerce)]`) — and `"3"` becomes `3` where the schema says
//! `integer`, `"true"` becomes `true` for a `boolean`, JSON text an array or an object. Anything
//! ambiguous (`"yes"`, `"3.5"` for an integer, a schema that also allows a string) is refused
//! as before, and what was converted is validated as usual. Each conversion is listed in the
//! result's `_meta` ([`COERCED_META_KEY`](content::COERCED_META_KEY)) and on the call's span.
//!
//! ```
//! # use mcp_tool::prelude::*;
//! /// Repeat a word.
//! #[tool(coerce)]
//! fn repeat(word: String, times: u8) -> String {
//!     word.repeat(times.into())
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = Server::new("t", "1").only(["repeat"]).build().unwrap();
//! let r = server.call("repeat", serde_json::json!({"word": "ab", "times": "2"})).await.unwrap();
//! assert_eq!(r.text_content(), "abab");
//! assert!(r.meta.unwrap().contains_key(mcp_tool::content::COERCED_META_KEY));
//! # }
//! ```
//!
//! ## Results and errors
//!
//! Every return type converts through one trait,
//! [`IntoToolResult`](content::IntoToolResult): text (`String`, `&str`, numbers), `()`,
//! [`Json<T>`] (structured content with a text copy, and `T`'s schema as the tool's
//! `outputSchema`), [`Content`] blocks and `Vec`s of them, a whole [`ToolResult`], and
//! `Result<T, E>` whose error becomes `isError: true`. [`ToolError`] carries a code, a
//! suggestion for recovery and a retryable flag; a panicking tool becomes an `isError` result
//! and the server keeps serving. A [`Summarized`](content::Summarized) result gives the model a
//! short text instead of `Json<T>`'s full JSON copy (`Json(v).summarized()` from `Display`,
//! `Json(v).with_summary(|v| …)`, or `#[tool(summary = "{count} found")]`), with the same
//! structured content and output schema.
//!
//! ```
//! use mcp_tool::prelude::*;
//!
//! /// Divide `a` by `b`.
//! #[tool(read_only)]
//! fn divide(a: f64, b: f64) -> Result<f64, ToolError> {
//!     if b == 0.0 {
//!         return Err(ToolError::new("DIVISION_BY_ZERO", "cannot divide by zero")
//!             .suggestion("call again with a non-zero `b`"));
//!     }
//!     Ok(a / b)
//! }
//!
//! /// A chart and its caption.
//! #[tool(read_only)]
//! fn chart() -> Vec<Content> {
//!     vec![Content::image([0x89, b'P', b'N', b'G'], "image/png"), Content::text("sales")]
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = Server::new("t", "1").only(["divide", "chart"]).build().unwrap();
//! let r = server.call("divide", serde_json::json!({"a": 1, "b": 0})).await.unwrap();
//! assert!(r.is_error);
//! assert_eq!(
//!     r.text_content(),
//!     "[DIVISION_BY_ZERO] cannot divide by zero\nSuggestion: call again with a non-zero `b`"
//! );
//! # }
//! ```
//!
//! ## The call's context
//!
//! [`Ctx`] is the call: its request id and `_meta`, its client and protocol version, and what
//! it can do on its connection. The same abilities come as parameters of their own:
//! [`Progress`](extract::Progress) (`notifications/progress`, with the client's token),
//! [`Logger`](extract::Logger) (`notifications/message` at the eight syslog levels, honouring
//! `logging/setLevel`; `tracing` events inside a call reach the client too),
//! [`CancellationToken`](extract::CancellationToken) (a cancelled call's future is dropped; the
//! token lets cleanup code notice), [`State<T>`](extract::State) (a value given with
//! [`Server::state`], checked at start). `timeout = "30s"` bounds a call.
//!
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//!
//! use mcp_tool::prelude::*;
//!
//! /// Counts every reindex.
//! #[derive(Default)]
//! struct Runs {
//!     count: AtomicU64,
//! }
//!
//! /// Rebuild the index, reporting progress.
//! #[tool(timeout = "2m")]
//! async fn reindex(progress: Progress, log: Logger, runs: State<Runs>) -> String {
//!     for step in 1..=3 {
//!         progress.report(f64::from(step), 3.0, "indexing");
//!     }
//!     log.info("index rebuilt");
//!     format!("run {}", runs.count.fetch_add(1, Ordering::Relaxed) + 1)
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = Server::new("t", "1").only(["reindex"]).state(Runs::default()).build().unwrap();
//! let r = server.call("reindex", serde_json::json!({})).await.unwrap();
//! assert_eq!(r.text_content(), "run 1");
//! # }
//! ```
//!
//! A plain `fn` tool never stalls the async runtime by surprise: it runs on the blocking pool
//! until it has shown it is quick, then on the worker; `#[tool(blocking)]` keeps one that may
//! block (file or network I/O) on the pool.
//!
//! ## Asking the client
//!
//! A tool can ask the user for input ([`Ctx::elicit`], the form derived from a Rust type) or
//! the client's model for a completion ([`Ctx::sample_text`],
//! [`Peer::sample`](extract::Peer::sample)). Without the client's capability the call gets a
//! clear error; an answer that does not fit the requested schema is refused, naming the field.
//! [`Ctx::roots`] asks for the client's roots.
//!
//! The same code serves both protocol versions. In 2025-11-25 each question is a request to
//! the client. In 2026-07-28 the call ends with an `InputRequiredResult`; the client retries it
//! with the answers and the tool runs again from the start, each question answered already
//! returning at once (questions asked together with `tokio::join!` share a round). So code
//! before a tool's last question runs once per round: ask first and act after, as below, or
//! keep what comes before idempotent. The answers travel in a sealed `requestState`
//! (HMAC-SHA256, bound to the tool and its arguments, expiring): set one key on every replica
//! ([`Server::state_key`] or `MCP_TOOL_STATE_KEY`) and a retry may reach any of them.
//!
//! ```
//! use mcp_tool::extract::Elicitation;
//! use mcp_tool::prelude::*;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Confirm {
//!     /// Type the file's name to confirm
//!     name: String,
//! }
//!
//! /// Delete a file after the user confirms.
//! #[tool(destructive)]
//! async fn delete_file(path: String, ctx: Ctx) -> Result<String, ToolError> {
//!     match ctx.elicit::<Confirm>(format!("Delete {path}?")).await? {
//!         Elicitation::Accept(c) if c.name == path => Ok(format!("deleted {path}")),
//!         _ => Ok("kept".into()),
//!     }
//! }
//! # fn main() {}
//! ```
//!
//! ## Which tools a session sees
//!
//! A `hidden` tool is registered but not listed until a session enables it;
//! `always_visible` ones stay listed whatever the session's allow or block list. A tool
//! changes its session's tools with the [`ToolManager`](extract::ToolManager) (or with
//! [`ToolResult::enable_tools`]); [`ServerHandle::change_tools`](server::ServerHandle) changes
//! every session's. Each change that alters a session's list sends it
//! `notifications/tools/list_changed`.
//!
//! 2026-07-28 has no sessions: there the change belongs to who made the request — the client
//! of a stdio connection, or the subject an HTTP authenticator established — and that client's
//! lists carry the `private` cache scope. An anonymous HTTP client cannot change its tools.
//!
//! ```
//! use mcp_tool::prelude::*;
//!
//! /// Log in: reveals the admin tools for this session.
//! #[tool]
//! fn log_in(password: String) -> Result<ToolResult, ToolError> {
//!     if password != "open sesame" {
//!         return Err(ToolError::new("DENIED", "wrong password"));
//!     }
//!     Ok(ToolResult::text("welcome").enable_tools(["purge"]))
//! }
//!
//! /// Delete everything.
//! #[tool(hidden, destructive)]
//! fn purge() -> &'static str {
//!     "purged"
//! }
//! # fn main() {}
//! ```
//!
//! ## Describing a tool
//!
//! | key | what |
//! |---|---|
//! | `name`, `title`, `description` | the tool's identity (`description` defaults to the doc comment) |
//! | `read_only`, `destructive`, `idempotent`, `open_world` | behaviour hints; unset ones are omitted so the spec's defaults apply |
//! | `input_schema`, `output_schema` | hand-written schemas (JSON, checked at compile time) |
//! | `examples(request = …, response = …)` | an example call, checked by [`testing::check_examples`] |
//! | `icons`, `meta` | icons, and entries merged into `_meta` |
//! | `invoking`, `invoked` | status texts while the tool runs and once it ran |
//! | `ui = "name"`, `visibility` | an MCP Apps view (`ui/name.html`, embedded at compile time) and who may call the tool |
//!
//! ```
//! use mcp_tool::prelude::*;
//!
//! /// Today's moon phase.
//! #[tool(
//!     title = "Moon phase",
//!     read_only,
//!     open_world = false,
//!     invoking = "Looking at the sky…",
//!     examples(request = r#"{"day": 3}"#, response = r#"{"result": "waxing"}"#)
//! )]
//! fn moon_phase(day: u32) -> Json<&'static str> {
//!     Json(if day < 15 { "waxing" } else { "waning" })
//! }
//!
//! let server = Server::new("sky", "1").only(["moon_phase"]).build().unwrap();
//! mcp_tool::testing::check_examples(&server).unwrap();
//! ```
//!
//! ## Resources, prompts, completion
//!
//! What a server has beside its tools is written the way tools are:
//! [`#[resource("uri")]`](macro@resource) on a function is a resource with a fixed URI,
//! [`#[resource_template("scheme://{var}")]`](macro@resource_template) a family of resources
//! named by a URI template, [`#[prompt]`](macro@prompt) a prompt. The doc comment is the
//! description and the function's name the name (`name = "…"` sets another); `title`,
//! `icons` and `scopes` are as for tools, and resources take a `mime_type` and `meta`. On
//! methods of a [`#[tools]`](tools) impl block they run on the service instance.
//!
//! - A prompt's parameters are its arguments, which are text: `String` required,
//!   `Option<String>` optional, any other `FromStr` type parsed (a value that does not parse
//!   is refused with a JSON-RPC error naming the argument). It returns text (one user
//!   message), [`PromptMessage`](prompt::PromptMessage)s or a
//!   [`PromptResult`](prompt::PromptResult).
//! - A template's variables are the parameters of the same names, parsed the same way; a
//!   variable without its parameter, or a malformed template, is a compile error. A resource
//!   returns text, bytes (`Vec<u8>`), [`Json<T>`] or
//!   [`ResourceContents`](content::ResourceContents).
//! - Either returns a `Result` of these too: its error fails the request. Other parameters
//!   are context values (`Ctx`, `State<T>`, …), as for tools.
//! - `#[arg(complete = path)]` completes an argument or a variable (`completion/complete`).
//!
//! ```standalone_crate
//! use std::collections::BTreeMap;
//!
//! use mcp_tool::prelude::*;
//! use mcp_tool::prompt::PromptMessage;
//! use mcp_tool::testing::Client;
//! use serde_json::json;
//!
//! /// The project's README.
//! #[resource("docs://readme", mime_type = "text/markdown")]
//! fn readme() -> &'static str {
//!     "# Docs"
//! }
//!
//! struct Docs {
//!     pages: BTreeMap<String, String>,
//! }
//!
//! #[tools]
//! impl Docs {
//!     /// A page of the docs.
//!     #[resource_template("docs://page/{slug}", mime_type = "text/markdown")]
//!     fn page(&self, #[arg(complete = Self::slugs)] slug: String) -> Result<String, ToolError> {
//!         let page = self.pages.get(&slug).cloned();
//!         page.ok_or_else(|| ToolError::new("NOT_FOUND", format!("no page `{slug}`")))
//!     }
//!
//!     /// Summarize a page of the docs.
//!     #[prompt(title = "Summarize a page")]
//!     fn summarize(
//!         &self,
//!         #[arg(description = "The page", complete = Self::slugs)] slug: String,
//!         #[arg(description = "How many words (50 by default)")] words: Option<u32>,
//!     ) -> Vec<PromptMessage> {
//!         let words = words.unwrap_or(50);
//!         vec![PromptMessage::user(format!("Summarize docs://page/{slug} in {words} words."))]
//!     }
//!
//!     /// The pages whose slug starts with what was typed.
//!     fn slugs(&self, typed: &str) -> Vec<String> {
//!         self.pages.keys().filter(|s| s.starts_with(typed)).cloned().collect()
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let pages = BTreeMap::from([("intro".to_owned(), "# Intro".to_owned())]);
//! let client = Client::start(Server::new("docs", "1.0.0").service(Docs { pages })).await.unwrap();
//! let page = client.request("resources/read", json!({"uri": "docs://page/intro"})).await.unwrap();
//! assert_eq!(page["contents"][0]["text"], "# Intro");
//! let get = json!({"name": "summarize", "arguments": {"slug": "intro"}});
//! let prompt = client.request("prompts/get", get).await.unwrap();
//! assert_eq!(prompt["messages"][0]["content"]["text"], "Summarize docs://page/intro in 50 words.");
//! // `words` is a number: a request whose `words` is not is refused, naming it.
//! let get = json!({"name": "summarize", "arguments": {"slug": "intro", "words": "many"}});
//! let refused = client.request("prompts/get", get).await.unwrap_err();
//! assert!(refused.message.contains("`words`"));
//! # }
//! ```
//!
//! What is known only at run time is given with builders: [`Server::resource`],
//! [`Server::resource_template`] and [`Server::prompt`] (see [`resource`](mod@resource) and
//! [`prompt`](mod@prompt)); templates and prompts complete their arguments there too.
//!
//! ```
//! use mcp_tool::Server;
//! use mcp_tool::content::ResourceContents;
//! use mcp_tool::prompt::{Prompt, PromptMessage};
//! use mcp_tool::resource::{Resource, ResourceTemplate};
//!
//! let server = Server::new("docs", "1.0.0")
//!     .resource(Resource::text("docs://readme", "readme", "text/markdown", "# Hello"))
//!     .resource_template(
//!         ResourceTemplate::new("docs://page/{slug}", "page")
//!             .read(|request| async move {
//!                 let slug = request.var("slug").unwrap_or_default().to_owned();
//!                 Ok(vec![ResourceContents::text(request.uri(), "text/plain", slug)])
//!             })
//!             .complete("slug", |typed, _| {
//!                 ["intro", "install"].iter().filter(|s| s.starts_with(typed)).map(|s| s.to_string()).collect()
//!             }),
//!     )
//!     .prompt(
//!         Prompt::new("summarize")
//!             .description("Summarize a page")
//!             .argument("slug", "The page", true)
//!             .get(|request| async move {
//!                 let slug = request.argument("slug").unwrap_or_default().to_owned();
//!                 Ok(vec![PromptMessage::user(format!("Summarize docs://page/{slug}"))].into())
//!             }),
//!     );
//! # let _ = server;
//! ```
//!
//! A folder of [Agent Skills](https://agentskills.io) — each a directory with a `SKILL.md`
//! (YAML frontmatter: `name`, the directory's own, and `description`) and the files it refers
//! to — is served by the skills extension with `Server::skills(folder)` (feature `skills`, not on
//! by default): `skills/list`, `skills/get`, `resources/directory/read`, and each file as the
//! resource `skill://<name>/<path>`, with the digest and size of every file in its skill's
//! manifest. The `files` example serves `examples/skills`.
//!
//! ## Tools defined at run time
//!
//! [`DynamicTool`](dynamic::DynamicTool) defines a tool without the macros — from a property
//! list, a hand-written schema or a schemars type — with the same validation. Add and remove
//! them while serving with [`ServerHandle::add_tool`](server::ServerHandle::add_tool).
//!
//! ```
//! use mcp_tool::dynamic::{DynamicTool, ToolProperty};
//! use mcp_tool::{Server, ToolResult};
//!
//! let greet = DynamicTool::new("greet", "Greet someone.", |args| async move {
//!     ToolResult::text(format!("Hello, {}!", args.get_str("name").unwrap_or("you")))
//! })
//! .property(ToolProperty::string("name").description("Who").required());
//!
//! let server = Server::new("dyn", "1.0.0").without_registry().dynamic_tool(greet).build().unwrap();
//! assert_eq!(server.tools()[0].name(), "greet");
//! ```
//!
//! ## Two protocol versions
//!
//! A server answers MCP 2026-07-28 (stateless: `server/discover`, `_meta` on every request,
//! `resultType`, cache hints, `subscriptions/listen`) and 2025-11-25 and earlier
//! (`initialize` and a session) from the same definitions, on the same connection or
//! endpoint, request by request. Nothing in a tool changes; [`Server::cache_hints`] and
//! [`resource::Resource::cache`] tune how long clients may keep lists and reads, and
//! `#[arg(header = "Region")]` asks clients to mirror an argument into the HTTP header
//! `Mcp-Param-Region`, so that a load balancer can route on it:
//!
//! ```
//! use mcp_tool::prelude::*;
//!
//! /// Runs a query in one region's database.
//! #[tool(read_only)]
//! fn query(#[arg(header = "Region")] region: String, sql: String) -> String {
//!     format!("{region}: {sql}")
//! }
//! # fn main() {}
//! ```
//!
//! ## Serving
//!
//! - [`Server::run`]: the command line — stdio by default, `--http [ADDR]` (with
//!   `--sessionless`, `--sse`), `list`, `schema`, `call`. It reads the environment variables
//!   [`env`](mod@env) lists: `MCP_TOOL_BEARER_TOKENS` requires a bearer token over HTTP, for one.
//! - [`Server::build`] gives the running server, a cheap `Clone`
//!   [`ServerHandle`](server::ServerHandle): `serve_stdio().await`,
//!   `serve_http(listener, config).await`, or `into_router(config)` to mount the endpoint in an
//!   axum application. The HTTP settings ([`http::HttpConfig`]: hosts and origins, body limit,
//!   sessions, sessionless mode, authentication with RFC 9728 metadata) are arguments of those
//!   entry points.
//!
//! ```no_run
//! use mcp_tool::Server;
//! use mcp_tool::http::{BearerTokens, HttpConfig};
//!
//! #[tokio::main]
//! async fn main() -> mcp_tool::Result<()> {
//!     let server = Server::new("users", "1.0.0").build()?;
//!     let config = HttpConfig::default().with_auth(BearerTokens::new().token("s3cret", "alice"));
//!     let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//!     server.serve_http(listener, config).await?;
//!     Ok(())
//! }
//! ```
//!
//! HTTP is the cargo feature `http`, on by default; with `default-features = false` a server
//! speaks stdio only and compiles neither axum nor hyper.
//!
//! ## Middleware
//!
//! [`Server::middleware`] adds a [`Middleware`](middleware::Middleware) around every request
//! and every tool call, in both revisions and on every transport. Its `request` hook lets a
//! request through, refuses it, or answers it; its `call` hook wraps the tool call
//! (`next.run(call)`), so it can change the arguments, answer instead of the tool, change the
//! result, or time it. Layers run in the order added, the first outermost; a server without
//! any pays nothing for them. Four come built in, each also switched on by an environment
//! variable of every server binary: [`RateLimit`](middleware::RateLimit)
//! (`MCP_TOOL_RATE_LIMIT=100/1m`), [`MaskErrors`](middleware::MaskErrors)
//! (`MCP_TOOL_MASK_ERRORS=1`), [`ResultBudget`](middleware::ResultBudget)
//! (`MCP_TOOL_RESULT_BUDGET=64KiB`) and [`Audit`](middleware::Audit) (`MCP_TOOL_AUDIT=1`).
//!
//! ```
//! use mcp_tool::middleware::{Call, CallFuture, MaskErrors, Middleware, Next, RateLimit};
//! use mcp_tool::prelude::*;
//! use mcp_tool::testing::Client;
//!
//! /// Read a file of the service's.
//! #[tool(read_only)]
//! fn read_file(path: String) -> Result<String, std::io::Error> {
//!     std::fs::read_to_string(path)
//! }
//!
//! /// Refuses paths outside `docs/` before the tool runs.
//! struct DocsOnly;
//!
//! impl Middleware for DocsOnly {
//!     fn call<'a>(&'a self, call: Call<'a>, next: Next<'a>) -> CallFuture<'a> {
//!         let path = call.arguments().get("path").and_then(|p| p.as_str()).unwrap_or("");
//!         if call.tool() == "read_file" && !path.starts_with("docs/") {
//!             let refused = ToolError::new("FORBIDDEN", "only files under docs/ can be read");
//!             return Box::pin(async move { refused.into() });
//!         }
//!         next.run(call)
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = Server::new("files", "1")
//!     .only(["read_file"])
//!     .middleware(RateLimit::parse("100/1m").unwrap())
//!     .middleware(DocsOnly)
//!     .middleware(MaskErrors);
//! let client = Client::start(server).await.unwrap();
//! let refused = client.call("read_file", serde_json::json!({"path": "/etc/passwd"})).await.unwrap();
//! assert!(refused.text().starts_with("[FORBIDDEN]"));
//! // The io::Error's text (which names the path) stays in the log; the model reads an id.
//! let masked = client.call("read_file", serde_json::json!({"path": "docs/none"})).await.unwrap();
//! assert!(masked.text().starts_with("Internal error (id "));
//! # }
//! ```
//!
//! ## Testing
//!
//! [`testing::Client`] speaks real JSON-RPC to a server in-process, over the same code path as
//! stdio; [`ServerHandle::call`](server::ServerHandle::call) calls one tool directly.
//!
//! ```
//! use mcp_tool::prelude::*;
//! use mcp_tool::testing::Client;
//!
//! /// Shout it.
//! #[tool]
//! fn shout(text: String) -> String {
//!     text.to_uppercase()
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let client = Client::start(Server::new("t", "1").only(["shout"])).await.unwrap();
//! assert_eq!(client.list_tools().await.unwrap()[0]["name"], "shout");
//! let result = client.call("shout", serde_json::json!({"text": "hi"})).await.unwrap();
//! assert_eq!(result.text(), "HI");
//! # }
//! ```
//!
//! ## Where things are
//!
//! The crate root and the [`prelude`] hold what a tool author uses daily. The rest mirrors the
//! runtime's layers, each item in one module only (what the root has, no module repeats):
//!
//! | module | what |
//! |---|---|
//! | [`extract`] | the context values a tool takes, and requests to the client |
//! | [`content`] | content blocks and the result conversion traits |
//! | [`resource`](mod@resource), [`prompt`](mod@prompt) | what a server offers beside tools |
//! | [`dynamic`] | tools defined at run time, and tool definitions |
//! | [`server`] | the running server, explicit tool sets, errors; tasks and their stores in [`server::tasks`] |
//! | [`http`] | Streamable HTTP settings and authentication; resumable streams' event stores in [`http::events`] |
//! | [`protocol`] | protocol versions and JSON-RPC errors |
//! | [`testing`] | the in-process client and example checks |
#![doc(test(attr(deny(warnings))))]
// docs.rs (nightly, `--cfg docsrs`): each item gated by a feature says which.
#![cfg_attr(docsrs, feature(doc_cfg))]

// Each item has one path. The handful every server uses are here at the root (and in the
// prelude, a glob-import convenience); every other item is in the one module of its layer, and
// no module repeats what the root has.
pub use mcp_tool_macros::{prompt, resource, resource_template, tool, tools};
pub use mcp_tool_runtime::protocol::Content;
pub use mcp_tool_runtime::server::{Result, Server};
pub use mcp_tool_runtime::tool::{Args, Ctx, Json, ToolError, ToolResult};

/// What most servers need: the macros, the server, the parameter and result types, the
/// context values tools take most often, and the serde/schemars derives.
pub mod prelude {
    pub use crate::extract::{CancellationToken, Logger, Progress, State};
    pub use crate::{
        Args, Content, Ctx, Json, Server, ToolError, ToolResult, prompt, resource,
        resource_template, tool, tools,
    };
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
}

/// A tool's parameters: the context values a tool takes by type, the traits that make a type
/// a parameter, and the requests a tool makes of its client (sampling, elicitation). The two
/// every tool may take, [`Args`] and [`Ctx`], are at the crate root.
pub mod extract {
    pub use mcp_tool_runtime::protocol::LogLevel;
    pub use mcp_tool_runtime::tool::{
        Batch, CancellationToken, ClientInfo, Elicitation, FromContext, FromToolCall, Identity,
        Logger, Meta, Peer, Progress, RequestId, RequestedSchemaError, Requirements,
        SamplingMessage, SamplingRequest, SamplingResult, State, ToolCall, ToolManager,
        UrlElicitation, requested_schema,
    };
}

/// What a tool returns: content blocks (text, images, audio, resource links, embedded
/// resources, annotations, your own block types), structured output with a summary for the
/// model ([`Summarized`](content::Summarized)), the keys of a result's `_meta`, and the
/// conversion every return type goes through. The block itself, [`Content`], and the results
/// ([`ToolResult`], [`ToolError`],
/// [`Json`]) are at the crate root.
pub mod content {
    pub use mcp_tool_runtime::protocol::{
        Audience, ContentAnnotations, EmbeddedResource, MediaContent, ResourceBody,
        ResourceContents, ResourceLink, TextContent, base64_encode,
    };
    pub use mcp_tool_runtime::tool::{
        COERCED_META_KEY, ERROR_META_KEY, IntoContent, IntoToolError, IntoToolResult, Structured,
        Summarized,
    };
}

/// Resources and resource templates a server offers beside its tools.
pub mod resource {
    pub use mcp_tool_runtime::server::offerings::resource::*;
}

/// Prompts a server offers beside its tools.
pub mod prompt {
    pub use mcp_tool_runtime::protocol::Role;
    pub use mcp_tool_runtime::server::offerings::prompt::*;
}

/// Tools defined at run time, the definition every tool has, and why a value does not fit a
/// tool's schemas.
pub mod dynamic {
    pub use mcp_tool_runtime::tool::{
        Annotations, DynamicArgs, DynamicTool, ExampleError, PropertyType, TaskSupport, ToolDef,
        ToolProperty, ValidationError, Violation,
    };
}

/// Middleware around every request and every tool call, registered with
/// [`Server::middleware`]: the [`Middleware`](middleware::Middleware) trait, and the built-in
/// layers — [`RateLimit`](middleware::RateLimit), [`MaskErrors`](middleware::MaskErrors),
/// [`ResultBudget`](middleware::ResultBudget) and [`Audit`](middleware::Audit).
pub mod middleware {
    pub use mcp_tool_runtime::server::middleware::*;
}

/// The running server and what a server is built from: [`ServerHandle`](server::ServerHandle)
/// (serve it, call its tools in-process, change what it offers while it serves), explicit
/// sets of tools and of prompts and resources, the errors that stop a server or refuse a
/// store URL, and the `tracing` layer that sends a call's events to its client. The builder,
/// [`Server`], and its [`Result`] are at the crate root.
pub mod server {
    pub use mcp_tool_runtime::server::{
        Error, Limits, OfferingKind, OfferingRecord, OfferingSet, SKILLS_EXTENSION, ServerHandle,
        StartError, StoreUrlError, StoreUrlProblem,
    };
    pub use mcp_tool_runtime::tool::{ClientLogLayer, ToolRecord, ToolSet};

    /// Tasks: where they are kept ([`TaskStore`](tasks::TaskStore), in memory by default,
    /// in Redis with the `redis` feature) and how they are paced
    /// ([`TaskSettings`](tasks::TaskSettings)).
    pub mod tasks {
        pub use mcp_tool_runtime::server::tasks::*;
    }

    /// What the replicas of one server share ([`ReplicaStore`](replicas::ReplicaStore): in
    /// one process by default, in Redis with the `redis` feature): change messages, session
    /// records, and keys that expire.
    pub mod replicas {
        pub use mcp_tool_runtime::server::replicas::*;
    }
}

/// The gateway: remote MCP servers mounted beside the local tools (feature `client`): the
/// `MCPTool` fields, their rules, and the mount file's shape.
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod gateway {
    pub use mcp_tool_runtime::gateway::*;
}

/// An MCP client: connect to a server over Streamable HTTP or stdio, list and call its tools
/// (feature `client`).
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod client {
    pub use mcp_tool_runtime::client::*;
}

/// The Streamable HTTP transport's settings and authentication (feature `http`, on by
/// default).
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http {
    pub use mcp_tool_runtime::transport::http::*;
}

/// Protocol versions, JSON-RPC errors, and the protocol's small types a server is configured
/// with: cache hints, icons, roots.
pub mod protocol {
    pub use mcp_tool_runtime::protocol::{
        CacheHints, CacheScope, Icon, ProtocolVersion, Root, RpcError, code,
    };
}

/// The environment variables a server binary ([`Server::run`]) reads: each name, what it
/// configures, and the format of its value.
pub mod env {
    pub use mcp_tool_runtime::env::*;
}

/// Testing servers: an in-process client, and the check of every tool's examples.
pub mod testing {
    pub use mcp_tool_runtime::testing::*;
    // Named again so that their docs say which feature they need: the glob above does not.
    #[cfg(feature = "proptest")]
    #[cfg_attr(docsrs, doc(cfg(feature = "proptest")))]
    pub use mcp_tool_runtime::testing::{arbitrary_arguments, refused_arguments};
}

#[doc(hidden)]
pub mod __private {
    //! Not public API. Used by code generated by `mcp-tool-macros`; may change in any release.
    pub use mcp_tool_runtime::__private::*;
}

/// The crate's README (its page on crates.io), compiled with the doc tests so that its
/// example keeps building.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
