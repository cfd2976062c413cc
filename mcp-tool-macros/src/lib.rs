//! Procedural macros of [`mcp-tool`](https://docs.rs/mcp-tool): `#[tool]` and `#[tools]`, and
//! `#[prompt]`, `#[resource]` and `#[resource_template]`.
//!
//! This crate is an implementation detail: depend on `mcp-tool`, which re-exports the macros
//! (`mcp_tool::tool`, `mcp_tool::tools`, `mcp_tool::prompt`, …), and whose hidden `__private`
//! module is the only thing the generated code refers to.
//!
//! Each macro runs the same pipeline: parse the user's item with `syn`, read the macros' own
//! attributes into a model (`attr`, `ast`), check the rules that relate its parts (`check`),
//! and then either generate code (`expand`) or, if anything was reported, emit the item as it
//! was followed by every error (`fallback`).
#![doc(test(attr(deny(warnings))))]

mod ast;
mod attr;
mod check;
mod ctxt;
mod doc;
mod entry;
mod expand;
mod fallback;
mod strip;
#[cfg(test)]
mod tests;

use proc_macro::TokenStream;

use crate::attr::offering::Kind;
use crate::entry::{offering_attr, tool_attr, tools_attr};

/// Turns a function into an MCP tool and registers it with every server of the program.
///
/// The function's parameters are the tool's arguments, named after the parameters and described
/// by the input schema their types derive (`serde::Deserialize` + `schemars::JsonSchema`); an
/// `Option<T>` argument is optional. A parameter can instead be injected from the call's
/// context (`Ctx`, or any `FromContext` type), or take all arguments as one struct (`Args<T>`).
/// The return value becomes the tool's result through `IntoToolResult`: text, `Json<T>`
/// (structured output, with an output schema), `ToolResult`, or a `Result` of these.
///
/// ```
/// use mcp_tool::prelude::*;
///
/// /// Multiply two numbers.
/// #[tool(read_only, idempotent)]
/// fn multiply(#[arg(description = "The first factor")] a: f64, b: f64) -> f64 {
///     a * b
/// }
/// # fn main() {}
/// ```
///
/// The function may be `async` or not; an `async` tool's future must be `Send`. A synchronous
/// tool never stalls the async runtime by surprise: its calls run on the blocking thread pool
/// until 16 calls in a row have each finished within 100 µs; from then on they run on the
/// async worker that handles the call, which saves two thread hand-offs per call. A call on
/// the worker that takes 1 ms or more sends the tool back to the blocking pool for good (with a
/// warning on stderr). Mark a tool that may block (I/O, locks) `blocking` to keep it on the
/// blocking pool from the start.
///
/// A method can be a tool too: put `#[tool]` on it and [`#[tools]`](macro@tools) on its impl
/// block.
///
/// # Keys
///
/// | key | value | meaning |
/// |---|---|---|
/// | `name` | `"…"` | The tool's name: 1 to 128 characters among `A-Z a-z 0-9 _ - .`. Default: the function's name. |
/// | `title` | `"…"` | A human-readable title. |
/// | `description` | `"…"` | What the tool does, for the model. Default: the doc comment, which a tool needs if it has no `description`. |
/// | `read_only` | flag | The tool does not modify its environment. |
/// | `destructive` | flag | The tool may perform destructive updates (not with `read_only`). |
/// | `idempotent` | flag | Calling it again with the same arguments has no further effect. |
/// | `open_world` | flag | The tool interacts with an open world of external entities. |
/// | `hidden` | flag | Registered but not listed until enabled (`ToolManager`); `default_visible = false` says the same. |
/// | `always_visible` | flag | Listed whatever the session's allow or block list. |
/// | `defer_loading` | flag | Not in `tools/list` until the built-in `search_tools` finds it for a client (then listed to it and callable). |
/// | `timeout` | `"30s"` | A time limit (`ms`, `s`, `m`, `h`): a call that exceeds it is stopped and answered with `isError`. |
/// | `blocking` | flag | A synchronous tool that may block: always run on the blocking thread pool. |
/// | `input_schema` | `"{…}"` | A hand-written input schema (JSON, checked at compile time), published verbatim. |
/// | `output_schema` | `"{…}"` | A hand-written output schema, replacing the derived one. |
/// | `invoking` / `invoked` | `"…"` | Status texts while the tool runs and once it ran (at most 64 characters). |
/// | `examples` | `examples(request = "{…}", response = "{…}")` | An example call, published in `_meta` and checked by `testing::check_examples`. |
/// | `icons` | `"[…]"` | Icons: a JSON array of `{src, mimeType?, sizes?, theme?}`. |
/// | `meta` | `"{…}"` | Entries merged into the tool's `_meta` (reserved MCP prefixes refused). |
/// | `ui` | `"name"` | An MCP Apps view: the crate's `ui/name.html`, embedded at compile time. |
/// | `visibility` | `["model", "app"]` | Who may call the tool; `["app"]` hides it from the model. |
/// | `scopes` | `["users:write"]` | OAuth scopes a caller needs: without them it does not see the tool, and a call is refused with the HTTP 403 step-up challenge. |
/// | `coerce` | flag | Convert arguments sent as the wrong JSON type where the schema leaves no doubt (`"3"` for an integer, `"true"` for a boolean, JSON text for an array or object), before validation; `coerce = false` keeps the tool strict when the server converts (`Server::coerce_arguments`). |
/// | `rest` | flag | `rest = false` leaves the tool out of the REST API (`POST /tools/{name}` answers 404) and its OpenAPI document when the server serves one (`--openapi`); MCP clients call it as before. |
/// | `summary` | `"{field} …"`, path or closure | The text for the model in place of the JSON copy of a `Json<T>` result: a template of the result's fields (`{count}`, `{user.name}`, `{{` for a brace; checked at start), or a `fn(&T) -> String`. |
/// | `crate` | path | The path of the `mcp-tool` crate, if not `::mcp_tool`. |
///
/// A flag is written alone (`read_only`, meaning `true`) or as `read_only = true` or
/// `read_only = false`; an unset hint is left out of the tool's annotations.
///
/// ```
/// use mcp_tool::prelude::*;
///
/// /// Find users; a model may send `limit` as `"10"`.
/// #[tool(read_only, coerce, summary = |names: &Vec<String>| format!("{} found", names.len()))]
/// fn find_users(limit: u32) -> Json<Vec<String>> {
///     Json(["Ada", "Alan"].iter().take(limit as usize).map(|n| n.to_string()).collect())
/// }
/// # fn main() {}
/// ```
///
/// # Parameters: `#[arg(...)]`
///
/// | key | value | meaning |
/// |---|---|---|
/// | `description` | `"…"` | The argument's description in the input schema. |
/// | `rename` | `"…"` | The argument's name, if not the parameter's. |
/// | `default` | flag | A missing argument takes `Default::default()` instead of being required. |
/// | `coerce` | flag | Convert this argument when sent as the wrong JSON type (as the tool's `coerce`); `coerce = false` never does. |
///
/// ```
/// use mcp_tool::prelude::*;
///
/// /// Search the catalogue.
/// #[tool(name = "catalogue.search", read_only)]
/// async fn search(
///     #[arg(description = "What to look for")] query: String,
///     #[arg(rename = "max", default)] limit: u32,
///     page: Option<u32>,
/// ) -> Result<Json<Vec<String>>, ToolError> {
///     let _ = (limit, page);
///     Ok(Json(vec![query]))
/// }
/// # fn main() {}
/// ```
///
/// Parameters are owned values (`String`, not `&str`) of concrete types: a tool cannot be
/// generic, `unsafe` or `extern`.
///
/// ```compile_fail
/// use mcp_tool::prelude::*;
///
/// /// Greet someone.
/// #[tool]
/// fn greet(name: &str) -> String { // error: take `String` instead of `&str`
///     format!("Hello, {name}!")
/// }
/// # fn main() {}
/// ```
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    tool_attr(args.into(), item.into()).into()
}

/// Makes the `#[tool]` methods of an inherent impl block MCP tools, and registers them.
///
/// A tool method takes `&self` or `self: Arc<Self>`: the server holds one instance of the type
/// (its *service*) and runs calls concurrently, so mutable state goes behind a `Mutex`. An
/// associated function without `self` is a tool that needs no service. Methods without
/// `#[tool]` are left alone.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// use mcp_tool::prelude::*;
///
/// #[derive(Default)]
/// pub struct Counter {
///     count: AtomicU64,
/// }
///
/// #[tools]
/// impl Counter {
///     /// Add to the counter and return its new value.
///     #[tool(name = "counter.add")]
///     fn add(&self, #[arg(description = "How much to add")] n: u64) -> u64 {
///         self.count.fetch_add(n, Ordering::Relaxed) + n
///     }
///
///     /// The counter's value.
///     #[tool(read_only)]
///     async fn get(&self) -> u64 {
///         self.count.load(Ordering::Relaxed)
///     }
///
///     /// Whether a number is even (needs no counter).
///     #[tool(read_only)]
///     fn is_even(n: u64) -> bool {
///         n % 2 == 0
///     }
/// }
/// # fn main() {}
/// ```
///
/// Besides registering the tools, `#[tools]` adds `pub fn mcp_tools() -> ToolSet` to the impl
/// block, for giving them to a server explicitly (`Server::tools`).
///
/// # Keys
///
/// | key | value | meaning |
/// |---|---|---|
/// | `manual` | flag | Do not register the tools automatically: only `mcp_tools()` gives them. Needed for a generic impl, whose each instantiation is registered with `Server::tools(Type::<…>::mcp_tools())`. |
/// | `crate` | path | The path of the `mcp-tool` crate, if not `::mcp_tool`. |
///
/// Each method's `#[tool(...)]` takes the keys `#[tool]` takes on a function, except `crate`.
///
/// Methods may also be prompts, resources and resource templates: [`#[prompt]`](macro@prompt),
/// [`#[resource]`](macro@resource) and [`#[resource_template]`](macro@resource_template) on a
/// method make it one, run on the same service instance. An impl block that has any also gets
/// `pub fn mcp_offerings() -> OfferingSet`, for `Server::offerings`.
#[proc_macro_attribute]
pub fn tools(args: TokenStream, item: TokenStream) -> TokenStream {
    tools_attr(args.into(), item.into()).into()
}

/// Turns a function into an MCP prompt (`prompts/list`, `prompts/get`) and registers it with
/// every server of the program, as `#[tool]` does a tool.
///
/// The prompt's name is the function's (or `name = "…"`), its description the doc comment.
/// Each parameter is an argument, named after the parameter (MCP prompt arguments are text):
/// a `String` is required, an `Option<String>` optional, and any other type that implements
/// `FromStr` (or an `Option` of one) is parsed, a value that does not parse refused with a
/// JSON-RPC error naming the argument. A parameter can instead be a context value (`Ctx`,
/// `State<T>`, any `FromContext` type), which is no argument. The function returns text (one
/// user message), a `PromptMessage`, a `Vec<PromptMessage>`, a `PromptResult`, or a `Result`
/// of one of these whose error fails the request.
///
/// ```
/// use mcp_tool::prelude::*;
///
/// fn languages(typed: &str) -> Vec<String> {
///     ["rust", "python"].iter().filter(|l| l.starts_with(typed)).map(|l| l.to_string()).collect()
/// }
///
/// /// Review a piece of code.
/// #[prompt(title = "Code review")]
/// fn review(
///     #[arg(description = "The code to review")] code: String,
///     #[arg(description = "Its language", complete = languages)] language: Option<String>,
///     #[arg(description = "At most this many remarks")] max: Option<u8>,
/// ) -> String {
///     let language = language.unwrap_or_else(|| "any language".into());
///     format!("Review this {language} code in at most {} remarks:\n{code}", max.unwrap_or(5))
/// }
/// # fn main() {}
/// ```
///
/// A request with an argument the prompt does not declare, or without a required one, is
/// refused (-32602) before the function runs. A plain `fn` runs on the async worker that
/// serves the request: make one that blocks (file or network I/O) `async`, and move the
/// blocking part to `tokio::task::spawn_blocking`. The same goes for resources.
///
/// # Keys
///
/// | key | value | meaning |
/// |---|---|---|
/// | `name` | `"…"` | The prompt's name. Default: the function's name. |
/// | `title` | `"…"` | A human-readable title. |
/// | `description` | `"…"` | What the prompt is for. Default: the doc comment. |
/// | `icons` | `"[…]"` | Icons: a JSON array of `{src, mimeType?, sizes?, theme?}`. |
/// | `scopes` | `["…"]` | OAuth scopes a caller needs to see and get the prompt. |
/// | `crate` | path | The path of the `mcp-tool` crate, if not `::mcp_tool`. |
///
/// # Parameters: `#[arg(...)]`
///
/// | key | value | meaning |
/// |---|---|---|
/// | `description` | `"…"` | The argument's description. |
/// | `rename` | `"…"` | The argument's name, if not the parameter's. |
/// | `complete` | path | A function completing the argument (`completion/complete`): `fn(&str) -> Vec<String>` (the value typed so far), or `fn(&str, &Map<String, Value>) -> Vec<String>` (and the arguments already given); a method of a `#[tools]` impl block may take `&self` first. |
///
/// On a method of a [`#[tools]`](macro@tools) impl block the prompt runs on the service
/// instance, as a tool method does.
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    offering_attr(Kind::Prompt, args.into(), item.into()).into()
}

/// Turns a function into an MCP resource with a fixed URI (`resources/list`,
/// `resources/read`) and registers it with every server of the program.
///
/// The URI comes first; the resource's name is the function's (or `name = "…"`), its
/// description the doc comment. The function returns the contents: text (`String`), bytes
/// (`Vec<u8>`, a blob), `Json<T>` (its JSON text), `ResourceContents` or a `Vec` of them, or a
/// `Result` of one of these whose error fails the read. Its parameters, if any, are context
/// values (`Ctx`, `State<T>`, …).
///
/// ```
/// use mcp_tool::prelude::*;
///
/// /// The project's README.
/// #[resource("docs://readme", mime_type = "text/markdown")]
/// fn readme() -> String {
///     "# Hello".into()
/// }
/// # fn main() {}
/// ```
///
/// # Keys
///
/// | key | value | meaning |
/// |---|---|---|
/// | (first) | `"scheme://…"` | The resource's URI. |
/// | `name` | `"…"` | The resource's name. Default: the function's name. |
/// | `title` | `"…"` | A human-readable title. |
/// | `description` | `"…"` | What it is. Default: the doc comment. |
/// | `mime_type` | `"type/subtype"` | Its MIME type. Default: the return type's (`text/plain` for text, `application/octet-stream` for bytes, `application/json` for `Json<T>`). |
/// | `icons` | `"[…]"` | Icons: a JSON array of `{src, mimeType?, sizes?, theme?}`. |
/// | `meta` | `"{…}"` | Entries merged into its `_meta`. |
/// | `scopes` | `["…"]` | OAuth scopes a caller needs to see and read it. |
/// | `crate` | path | The path of the `mcp-tool` crate, if not `::mcp_tool`. |
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    offering_attr(Kind::Resource, args.into(), item.into()).into()
}

/// Turns a function into an MCP resource template (`resources/templates/list`, and
/// `resources/read` of every URI that matches it) and registers it with every server of the
/// program.
///
/// The URI template comes first: literal text and `{variable}`s (a literal between any two),
/// each variable a parameter of the same name (or one with `#[arg(rename = "…")]`). A
/// variable's type implements `FromStr`: its text, percent-decoded, is parsed, and a value
/// that does not parse is refused with a JSON-RPC error naming the variable. Other parameters are context values. A variable
/// without its parameter, a parameter given `#[arg]` that is no variable, and a malformed
/// template are compile errors. The return types and keys are `#[resource]`'s.
///
/// ```
/// use mcp_tool::prelude::*;
///
/// fn ids(typed: &str) -> Vec<String> {
///     ["1", "2", "42"].iter().filter(|i| i.starts_with(typed)).map(|i| i.to_string()).collect()
/// }
///
/// /// A user's profile.
/// #[resource_template("users://{id}/profile", mime_type = "application/json")]
/// fn profile(#[arg(complete = ids)] id: u64) -> Json<serde_json::Value> {
///     Json(serde_json::json!({ "id": id }))
/// }
/// # fn main() {}
/// ```
///
/// Each variable needs its parameter:
///
/// ```compile_fail
/// use mcp_tool::prelude::*;
///
/// /// A tab of a user's profile.
/// #[resource_template("users://{id}/{tab}")] // error: `tab` has no parameter
/// fn tab(id: u64) -> String {
///     id.to_string()
/// }
/// # fn main() {}
/// ```
///
/// # Parameters: `#[arg(...)]`
///
/// | key | value | meaning |
/// |---|---|---|
/// | `rename` | `"…"` | The variable the parameter takes, if not the one of its name. |
/// | `complete` | path | A function completing the variable, as for a prompt argument. |
#[proc_macro_attribute]
pub fn resource_template(args: TokenStream, item: TokenStream) -> TokenStream {
    offering_attr(Kind::Template, args.into(), item.into()).into()
}
