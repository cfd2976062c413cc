//! `conformance`: the server the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`) tests, written with mcp-tool.
//!
//! It offers every tool, resource and prompt the suite's server scenarios call, with the
//! reference server's names, texts and fixtures: content of every kind, logging, progress,
//! sampling, elicitation (SEP-1034 defaults, SEP-1330 enums), a hand-written JSON Schema
//! 2020-12 input schema, static and templated resources, subscriptions, prompts with
//! arguments, embedded resources and images, and argument completion; and for 2026-07-28 the
//! fixtures of its stateless scenarios: input requests in every form (elicitation, sampling,
//! roots; several at once; several rounds; a prompt that asks), a tool that needs a capability,
//! tools that make the lists change for listening clients.
//!
//! It serves MCP on stdio by default and over Streamable HTTP with `--http [ADDR]`; see
//! `conformance/run.sh` for the four legs the suite runs against it.

use std::time::Duration;

use mcp_tool::content::{MediaContent, ResourceBody, ResourceContents};
use mcp_tool::extract::{Elicitation, Logger, Meta, Progress, SamplingRequest};
use mcp_tool::prelude::*;
use mcp_tool::prompt::{Prompt, PromptMessage, PromptResult, Role};
use mcp_tool::resource::{Resource, ResourceTemplate};
use mcp_tool::server::ServerHandle;
use serde_json::Value;

/// A 1×1 red PNG, base64-encoded (the reference server's fixture).
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// A minimal WAV file, base64-encoded (the reference server's fixture).
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// The pause between the notifications of the logging and progress tools.
const STEP: Duration = Duration::from_millis(50);

/// A media block of data base64-encoded already.
fn media(data: &str, mime_type: &str) -> MediaContent {
    MediaContent {
        data: data.to_owned(),
        mime_type: mime_type.to_owned(),
        ..MediaContent::default()
    }
}

fn png() -> Content {
    Content::Image(media(PNG, "image/png"))
}

/// A value as JSON text.
fn json_text(value: &impl Serialize) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| format!("<{e}>"))
}

// ===== Tools: content =====================================================================

/// Describes this server (first in `tools/list`, which is sorted by name: the header scenarios
/// call the first tool with no arguments, so it must be one that needs none)
#[tool(read_only, idempotent)]
fn about_this_server() -> &'static str {
    "The fixture of the MCP conformance suite's server scenarios, 2025-11-25 and 2026-07-28"
}

/// Tests simple text content response
#[tool(read_only)]
fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Tests image content response
#[tool(read_only)]
fn test_image_content() -> Content {
    png()
}

/// Tests audio content response
#[tool(read_only)]
fn test_audio_content() -> Content {
    Content::Audio(media(WAV, "audio/wav"))
}

/// Tests embedded resource content response
#[tool(read_only)]
fn test_embedded_resource() -> Content {
    Content::resource(ResourceContents::text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    ))
}

/// Tests response with multiple content types (text, image, resource)
#[tool(read_only)]
fn test_multiple_content_types() -> Vec<Content> {
    vec![
        Content::text("Multiple content types test:"),
        png(),
        Content::resource(ResourceContents::text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        )),
    ]
}

/// Tests error response handling
#[tool(read_only)]
fn test_error_handling() -> ToolResult {
    ToolResult::error("This tool intentionally returns an error for testing")
}

// ===== Tools: notifications during a call =================================================

/// Tests tool that emits log messages during execution
#[tool(read_only)]
async fn test_tool_with_logging(log: Logger) -> &'static str {
    log.info("Tool execution started");
    tokio::time::sleep(STEP).await;
    log.info("Tool processing data");
    tokio::time::sleep(STEP).await;
    log.info("Tool execution completed");
    "Tool with logging executed successfully"
}

/// Tests tool that reports progress notifications
#[tool(read_only)]
async fn test_tool_with_progress(progress: Progress, Meta(meta): Meta) -> String {
    for (i, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(STEP).await;
        }
        progress.report(done, 100.0, &format!("Completed step {done} of 100"));
    }
    // The token as the reference server gives it back: `String(progressToken)`.
    match meta.get("progressToken") {
        Some(Value::String(token)) => token.clone(),
        Some(token) => token.to_string(),
        None => "0".to_owned(),
    }
}

/// Tests SSE stream disconnection and client reconnection (SEP-1699): the server lets the
/// request's stream go at once (polling), and the result, after a short pause, reaches the
/// client when it resumes the stream with `Last-Event-ID`.
#[tool(read_only)]
async fn test_reconnection(ctx: Ctx) -> &'static str {
    ctx.close_stream();
    tokio::time::sleep(Duration::from_millis(100)).await;
    "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."
}

/// Tests that a request without a log level gets no log messages (2026-07-28)
#[tool(read_only)]
async fn test_logging_tool(log: Logger) -> &'static str {
    log.info("Logging tool started");
    log.warning("Logging tool warning");
    "Logging tool executed"
}

/// Echoes a value that the client also sends in the `Mcp-Param-Value` header (2026-07-28
/// custom headers, `x-mcp-header`)
#[tool(read_only)]
fn test_custom_header(#[arg(header = "Value", description = "The value")] value: String) -> String {
    value
}

// ===== Tools: changes, 2026-07-28 =========================================================

/// Tells listening clients that the tool list changed
#[tool]
fn test_trigger_tool_change(server: ServerHandle) -> &'static str {
    server.notify_tools_changed();
    "Tool list change notified"
}

/// Tells listening clients that the prompt list changed
#[tool]
fn test_trigger_prompt_change(server: ServerHandle) -> &'static str {
    server.notify_prompts_changed();
    "Prompt list change notified"
}

// ===== Tools: input from the client, 2026-07-28 (and requests of it, 2025-11-25) ===========

/// Needs sampling: without the client's `sampling` capability the request fails with -32021
#[tool(read_only)]
async fn test_missing_capability(ctx: Ctx) -> Result<String, ToolError> {
    let answer = ctx.sample_text("Say hello", 10).await?;
    Ok(format!("sampled: {answer}"))
}

/// A name.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Name {
    name: String,
}

/// Asks the user for input while streaming: a stateless request answers with an input request
/// (never a request of its own on the stream)
#[tool(read_only)]
async fn test_streaming_elicitation(ctx: Ctx) -> Result<String, ToolError> {
    let answer = ctx.elicit::<Name>("What is your name?").await?;
    Ok(report("Streaming elicitation", &answer))
}

/// Asks the user's name (input request `user_name`)
#[tool(read_only)]
async fn test_input_required_result_elicitation(ctx: Ctx) -> Result<String, ToolError> {
    match ctx
        .input("user_name")
        .elicit::<Name>("What is your name?")
        .await?
    {
        Elicitation::Accept(Name { name }) => Ok(format!("Hello, {name}!")),
        _ => Ok("Hello, stranger!".into()),
    }
}

/// Asks the client's model a question (input request `capital_question`)
#[tool(read_only)]
async fn test_input_required_result_sampling(ctx: Ctx) -> Result<String, ToolError> {
    let answer = ctx
        .input("capital_question")
        .sample(SamplingRequest::new(100).user("What is the capital of France?"))
        .await?;
    Ok(format!("The model said: {}", answer.text()))
}

/// Asks the client for its roots (input request `client_roots`)
#[tool(read_only)]
async fn test_input_required_result_list_roots(ctx: Ctx) -> Result<String, ToolError> {
    let roots = ctx.input("client_roots").roots().await?;
    let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
    Ok(format!("Roots: {}", uris.join(", ")))
}

/// A confirmation.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Confirm {
    ok: bool,
}

/// Asks for a confirmation, carrying its state in `requestState`
#[tool(read_only)]
async fn test_input_required_result_request_state(ctx: Ctx) -> Result<String, ToolError> {
    match ctx.input("confirm").elicit::<Confirm>("Confirm?").await? {
        Elicitation::Accept(Confirm { ok: true }) => Ok("state-ok: requestState validated".into()),
        _ => Ok("not confirmed".into()),
    }
}

/// Like `test_input_required_result_request_state`: a tampered `requestState` is refused
#[tool(read_only)]
async fn test_input_required_result_tampered_state(ctx: Ctx) -> Result<String, ToolError> {
    match ctx.input("confirm").elicit::<Confirm>("Confirm?").await? {
        Elicitation::Accept(Confirm { ok: true }) => Ok("state-ok".into()),
        _ => Ok("not confirmed".into()),
    }
}

/// Asks for three inputs at once: the user's name, a greeting from the model, the roots
#[tool(read_only)]
async fn test_input_required_result_multiple_inputs(ctx: Ctx) -> Result<String, ToolError> {
    let (name, greeting, roots) = tokio::join!(
        ctx.input("user_name").elicit::<Name>("What is your name?"),
        ctx.input("greeting")
            .sample(SamplingRequest::new(50).user("Generate a greeting")),
        ctx.input("client_roots").roots(),
    );
    let name = match name? {
        Elicitation::Accept(Name { name }) => name,
        _ => "stranger".into(),
    };
    Ok(format!(
        "{} {name} ({} roots)",
        greeting?.text(),
        roots?.len()
    ))
}

/// A colour.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Color {
    color: String,
}

/// Asks two questions, one round each
#[tool(read_only)]
async fn test_input_required_result_multi_round(ctx: Ctx) -> Result<String, ToolError> {
    let Elicitation::Accept(Name { name }) = ctx
        .input("step1")
        .elicit::<Name>("Step 1: What is your name?")
        .await?
    else {
        return Ok("no name".into());
    };
    let Elicitation::Accept(Color { color }) = ctx
        .input("step2")
        .elicit::<Color>("Step 2: What is your favorite color?")
        .await?
    else {
        return Ok(format!("{name} has no favourite colour"));
    };
    Ok(format!("{name} likes {color}"))
}

/// Asks only for what the client declared it can give
#[tool(read_only)]
async fn test_input_required_result_capabilities(ctx: Ctx) -> Result<String, ToolError> {
    let client = ctx.client();
    let mut asked = Vec::new();
    let elicitation = async {
        if client.has_capability("elicitation") {
            ctx.input("user_name")
                .elicit::<Name>("What is your name?")
                .await?;
            return Ok::<_, ToolError>(Some("elicitation"));
        }
        Ok(None)
    };
    let sampling = async {
        if client.has_capability("sampling") {
            ctx.input("greeting")
                .sample(SamplingRequest::new(50).user("Generate a greeting"))
                .await?;
            return Ok::<_, ToolError>(Some("sampling"));
        }
        Ok(None)
    };
    let roots = async {
        if client.has_capability("roots") {
            ctx.input("client_roots").roots().await?;
            return Ok::<_, ToolError>(Some("roots"));
        }
        Ok(None)
    };
    let (e, s, r) = tokio::join!(elicitation, sampling, roots);
    asked.extend([e?, s?, r?].into_iter().flatten());
    Ok(format!("Asked for: {}", asked.join(", ")))
}

// ===== Tools: requests of the client ======================================================

/// Tests server-initiated sampling (LLM completion request)
#[tool(read_only)]
async fn test_sampling(
    #[arg(description = "The prompt to send to the LLM")] prompt: String,
    ctx: Ctx,
) -> Result<String, ToolError> {
    let answer = ctx.sample_text(prompt, 100).await?;
    Ok(format!("LLM response: {answer}"))
}

/// The user's information.
#[derive(Serialize, Deserialize, JsonSchema)]
struct UserInfo {
    /// Your user name
    username: String,
    /// Your email address
    #[schemars(email)]
    email: String,
}

/// What the user answered, as the reference server reports it.
fn report<T: Serialize>(prefix: &str, answer: &Elicitation<T>) -> String {
    let (action, content) = match answer {
        Elicitation::Accept(content) => ("accept", json_text(content)),
        Elicitation::Decline => ("decline", "{}".to_owned()),
        Elicitation::Cancel => ("cancel", "{}".to_owned()),
    };
    format!("{prefix}: action={action}, content={content}")
}

/// Tests server-initiated elicitation (user input request)
#[tool(read_only)]
async fn test_elicitation(
    #[arg(description = "The message to show the user")] message: String,
    ctx: Ctx,
) -> Result<String, ToolError> {
    let answer = ctx.elicit::<UserInfo>(message).await?;
    Ok(report("User response", &answer))
}

/// A user's status.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Status {
    Active,
    Inactive,
    Pending,
}

/// A form whose every field has a default (SEP-1034).
#[derive(Serialize, Deserialize, JsonSchema)]
struct WithDefaults {
    /// User name
    #[serde(default = "default_name")]
    name: String,
    /// User age
    #[serde(default = "default_age")]
    age: i64,
    /// User score
    #[serde(default = "default_score")]
    score: f64,
    /// User status
    #[serde(default = "default_status")]
    status: Status,
    /// Verification status
    #[serde(default = "default_verified")]
    verified: bool,
}

fn default_name() -> String {
    "John Doe".to_owned()
}

fn default_age() -> i64 {
    30
}

fn default_score() -> f64 {
    95.5
}

fn default_status() -> Status {
    Status::Active
}

fn default_verified() -> bool {
    true
}

/// Tests elicitation with default values per SEP-1034
#[tool(read_only)]
async fn test_elicitation_sep1034_defaults(ctx: Ctx) -> Result<String, ToolError> {
    let answer = ctx
        .elicit::<WithDefaults>("Please review and update the form fields with defaults")
        .await?;
    Ok(report("Elicitation completed", &answer))
}

/// An option without titles.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Untitled {
    Option1,
    Option2,
    Option3,
}

/// An option with titles (`oneOf` of `const` and `title`).
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum TitledOption {
    #[schemars(title = "First Option")]
    Value1,
    #[schemars(title = "Second Option")]
    Value2,
    #[schemars(title = "Third Option")]
    Value3,
}

/// An option with titles in the legacy `enumNames` form.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(extend("enumNames" = ["Option One", "Option Two", "Option Three"]))]
enum Legacy {
    Opt1,
    Opt2,
    Opt3,
}

/// A choice with titles, for multi-select.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum TitledChoice {
    #[schemars(title = "First Choice")]
    Value1,
    #[schemars(title = "Second Choice")]
    Value2,
    #[schemars(title = "Third Choice")]
    Value3,
}

/// A form with every kind of enum (SEP-1330).
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Enums {
    /// Select one option
    untitled_single: Option<Untitled>,
    /// Select one option with titles
    titled_single: Option<TitledOption>,
    /// Select one option (legacy)
    legacy_enum: Option<Legacy>,
    /// Select multiple options
    #[schemars(length(min = 1, max = 3))]
    untitled_multi: Option<Vec<Untitled>>,
    /// Select multiple options with titles
    #[schemars(length(min = 1, max = 3))]
    titled_multi: Option<Vec<TitledChoice>>,
}

/// Tests elicitation with enum schema improvements per SEP-1330
#[tool(read_only)]
async fn test_elicitation_sep1330_enums(ctx: Ctx) -> Result<String, ToolError> {
    let answer = ctx
        .elicit::<Enums>("Please select options from the enum fields")
        .await?;
    Ok(report("Elicitation completed", &answer))
}

// ===== Tools: a hand-written JSON Schema 2020-12 ==========================================

/// Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613, SEP-2106)
#[tool(
    read_only,
    input_schema = r##"{
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "city": {"type": "string"}
                }
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    }"##
)]
fn json_schema_2020_12_tool(Args(args): Args<Value>) -> String {
    format!("JSON Schema 2020-12 tool called with: {}", json_text(&args))
}

// ===== Resources ===========================================================================

fn resources(server: Server) -> Server {
    let binary = ResourceContents {
        uri: "test://static-binary".to_owned(),
        mime_type: Some("image/png".to_owned()),
        body: ResourceBody::Blob(PNG.to_owned()),
        meta: None,
    };
    server
        .resource(
            Resource::text(
                "test://static-text",
                "static-text",
                "text/plain",
                "This is the content of the static text resource.",
            )
            .title("Static Text Resource")
            .description("A static text resource for testing"),
        )
        .resource(
            Resource::new("test://static-binary", "static-binary", move |_| {
                let contents = binary.clone();
                async move { Ok(vec![contents]) }
            })
            .title("Static Binary Resource")
            .description("A static binary resource (image) for testing")
            .mime_type("image/png"),
        )
        .resource(
            Resource::text(
                "test://watched-resource",
                "watched-resource",
                "text/plain",
                "Watched resource content",
            )
            .title("Watched Resource")
            .description("A resource clients may subscribe to for updates"),
        )
        .resource_template(
            ResourceTemplate::new("test://template/{id}/data", "template")
                .title("Resource Template")
                .description("A resource template with parameter substitution")
                .mime_type("application/json")
                .read(|request| async move {
                    let id = request.var("id").unwrap_or_default();
                    let text = format!(
                        r#"{{"id":{},"templateTest":true,"data":{}}}"#,
                        json_text(&id),
                        json_text(&format!("Data for ID: {id}"))
                    );
                    Ok(vec![ResourceContents::text(
                        request.uri(),
                        "application/json",
                        text,
                    )])
                })
                .complete("id", |typed, _| {
                    complete_from(&["123", "456", "789"], typed)
                }),
        )
}

// ===== Prompts =============================================================================

/// The candidates that start with what was typed.
fn complete_from(candidates: &[&str], typed: &str) -> Vec<String> {
    candidates
        .iter()
        .filter(|c| c.starts_with(typed))
        .map(|c| (*c).to_owned())
        .collect()
}

/// The context a prompt asks for.
#[derive(Serialize, Deserialize, JsonSchema)]
struct PromptContext {
    context: String,
}

fn prompts(server: Server) -> Server {
    server
        .prompt(
            Prompt::new("test_simple_prompt")
                .title("Simple Test Prompt")
                .description("A simple prompt without arguments")
                .get(|_| async {
                    Ok(vec![PromptMessage::user("This is a simple prompt for testing.")].into())
                }),
        )
        .prompt(
            Prompt::new("test_prompt_with_arguments")
                .title("Prompt With Arguments")
                .description("A prompt with required arguments")
                .argument("arg1", "First test argument", true)
                .argument("arg2", "Second test argument", true)
                .complete("arg1", |typed, _| {
                    complete_from(&["testValue1", "testValue2", "other"], typed)
                })
                .complete("arg2", |typed, _| {
                    complete_from(&["testValue1", "testValue2", "other"], typed)
                })
                .get(|request| async move {
                    let arg1 = request.argument("arg1").unwrap_or_default();
                    let arg2 = request.argument("arg2").unwrap_or_default();
                    Ok(vec![PromptMessage::user(format!(
                        "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"
                    ))]
                    .into())
                }),
        )
        .prompt(
            Prompt::new("test_prompt_with_embedded_resource")
                .title("Prompt With Embedded Resource")
                .description("A prompt that includes an embedded resource")
                .argument("resourceUri", "URI of the resource to embed", true)
                .get(|request| async move {
                    let uri = request.argument("resourceUri").unwrap_or_default();
                    let resource = ResourceContents::text(
                        uri,
                        "text/plain",
                        "Embedded resource content for testing.",
                    );
                    Ok(PromptResult::from(vec![
                        PromptMessage::new(Role::User, Content::resource(resource)),
                        PromptMessage::user("Please process the embedded resource above."),
                    ]))
                }),
        )
        .prompt(
            Prompt::new("test_input_required_result_prompt")
                .title("Prompt That Asks For Context")
                .description("A prompt that asks the user for context before it renders")
                .get(|request| async move {
                    let answer = request
                        .ctx()
                        .input("user_context")
                        .elicit::<PromptContext>("What context should the prompt use?")
                        .await?;
                    let context = match answer {
                        Elicitation::Accept(PromptContext { context }) => context,
                        _ => "no context".to_owned(),
                    };
                    Ok(vec![PromptMessage::user(format!("Use this context: {context}"))].into())
                }),
        )
        .prompt(
            Prompt::new("test_prompt_with_image")
                .title("Prompt With Image")
                .description("A prompt that includes image content")
                .get(|_| async {
                    Ok(PromptResult::from(vec![
                        PromptMessage::new(Role::User, png()),
                        PromptMessage::user("Please analyze the image above."),
                    ]))
                }),
        )
}

#[path = "conformance/tasks.rs"]
mod tasks;

fn main() -> mcp_tool::Result<()> {
    // `conformance/run.sh` serves it with `--http ADDR --sse` (every request answered with an
    // SSE stream, as the reference server does: `server-sse-multiple-streams` checks that such
    // streams work) and with plain `--http` (JSON answers).
    let server = Server::new("mcp-conformance-test-server", env!("CARGO_PKG_VERSION"))
        .title("MCP conformance test server")
        .instructions(
            "Implements every tool, resource and prompt of the MCP conformance suite's server scenarios.",
        );
    prompts(resources(server)).run()
}
