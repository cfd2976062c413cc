//! What a tool gives back: content blocks, structured output, errors, and the one conversion
//! trait, [`IntoToolResult`], that every return type goes through.
//!
//! [`ToolResult`] is MCP's `CallToolResult` itself: serializing it writes the wire form. A
//! version without structured content gets a view of it (`respond`). Structured content is
//! JSON text ([`Structured`]), serialized once: a `Json<T>` is written as it is, both as
//! `structuredContent` and as its text copy; a [`Summarized`] one has a summary for the model
//! in place of the copy (`summary`).

mod copy;
pub(crate) mod structured;

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::protocol::{Content, RpcError};
use crate::tool::result::structured::Structured;

/// The full result of one tool call: MCP's `CallToolResult`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// Unstructured content blocks.
    pub content: Vec<Content>,
    /// Structured content, described by the tool's output schema (`Some(json!({…}).into())`
    /// from a `Value`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Structured>,
    /// Whether the call failed in a way the model should see.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// The result's `_meta`.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Tools to enable for this session once the call is over (not sent to the client).
    #[serde(skip)]
    pub enable_tools: Vec<String>,
    /// Tools to disable for this session once the call is over (not sent to the client).
    #[serde(skip)]
    pub disable_tools: Vec<String>,
    /// A JSON-RPC error to answer the call with instead of this result (a task then ends
    /// `failed`). Rarely right: a tool's failures are `isError` results the model can read;
    /// this is for a request the protocol itself refuses.
    #[serde(skip)]
    pub protocol_error: Option<RpcError>,
    /// Whether `is_error` comes from no message written for the model: a panic, or a
    /// `Result`'s error that is no [`ToolError`] (an `io::Error`, an `anyhow::Error`…, or one
    /// `?` turned into a `ToolError`). The text is then whatever that error displays, which
    /// may say more than a model should read: [`MaskErrors`](crate::server::middleware::MaskErrors)
    /// replaces it (not sent to the client).
    #[serde(skip)]
    pub internal_error: bool,
    /// Whether `content` is a summary of `structured_content` written for the model (a
    /// [`Summarized`] result) rather than its JSON copy: a client of a protocol version
    /// without structured content (before 2025-06-18) gets the JSON text of
    /// `structured_content` in its place, so it still gets the data (not sent to the client).
    #[serde(skip)]
    pub summarized: bool,
}

impl ToolResult {
    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolResult {
            content: vec![Content::text(text)],
            ..Self::default()
        }
    }

    /// A failed result (`isError: true`) with one text block.
    pub fn error(text: impl Into<String>) -> Self {
        ToolResult {
            content: vec![Content::text(text)],
            is_error: true,
            ..Self::default()
        }
    }

    /// Answers the call with a JSON-RPC error instead of a result (see
    /// [`ToolResult::protocol_error`](ToolResult#structfield.protocol_error)).
    pub fn rpc_error(error: RpcError) -> Self {
        ToolResult {
            is_error: true,
            content: vec![Content::text(error.message.clone())],
            protocol_error: Some(error),
            ..Self::default()
        }
    }

    /// Enables these tools for the session once the call is over (as after a successful
    /// login).
    #[must_use]
    pub fn enable_tools<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.enable_tools.extend(names.into_iter().map(Into::into));
        self
    }

    /// Disables these tools for the session once the call is over.
    #[must_use]
    pub fn disable_tools<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.disable_tools.extend(names.into_iter().map(Into::into));
        self
    }

    /// The concatenated text of all text blocks.
    pub fn text_content(&self) -> String {
        let mut out = String::new();
        for c in &self.content {
            if let Some(t) = c.as_text() {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(t);
            }
        }
        out
    }

    /// The structured content as a `Value` (parsed from its text).
    pub fn structured(&self) -> Option<Value> {
        self.structured_content.as_ref().map(Structured::to_value)
    }

    /// The JSON form of this result (`CallToolResult`).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// A block type of the user's own: anything that can say what its block is.
/// `Content::from_block(video)` turns it into a [`Content`].
///
/// ```
/// use mcp_tool::Content;
/// use mcp_tool::content::IntoContent;
/// use serde_json::json;
///
/// struct Video { url: String }
///
/// impl IntoContent for Video {
///     fn into_content(self) -> Content {
///         Content::Raw(json!({ "type": "resource_link", "uri": self.url, "name": "video", "mimeType": "video/mp4" }))
///     }
/// }
///
/// let block = Content::from_block(Video { url: "https://example.com/v.mp4".into() });
/// assert_eq!(block.to_json()["mimeType"], "video/mp4");
/// ```
pub trait IntoContent {
    /// The block.
    fn into_content(self) -> Content;
}

impl IntoContent for Content {
    fn into_content(self) -> Content {
        self
    }
}

impl Content {
    /// A block of a user-defined type.
    pub fn from_block(block: impl IntoContent) -> Self {
        block.into_content()
    }
}

/// Converts a tool's return value into a [`ToolResult`].
///
/// Implemented for text (`String`, `&str`, `Cow<str>`), numbers, `bool`, `()`, [`Json<T>`],
/// [`Content`], `Vec<Content>`, [`ToolResult`], [`ToolError`] and `Result<T, E>` of these (the
/// error becomes `isError: true`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "not convertible into a tool result",
    note = "return text (`String`), `Json<T>`, content blocks, `ToolResult`, or `Result<T, E>` of these"
)]
pub trait IntoToolResult {
    /// Performs the conversion.
    fn into_tool_result(self) -> ToolResult;

    /// The output schema this type gives the tool, if any (`Json<T>` gives `T`'s).
    fn output_schema(generator: &mut SchemaGenerator) -> Option<Schema> {
        let _ = generator;
        None
    }
}

impl IntoToolResult for ToolResult {
    fn into_tool_result(self) -> ToolResult {
        self
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::default()
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::text(self)
    }
}

impl IntoToolResult for &str {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::text(self)
    }
}

impl IntoToolResult for Cow<'_, str> {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::text(self.into_owned())
    }
}

impl IntoToolResult for Content {
    fn into_tool_result(self) -> ToolResult {
        ToolResult {
            content: vec![self],
            ..ToolResult::default()
        }
    }
}

impl IntoToolResult for Vec<Content> {
    fn into_tool_result(self) -> ToolResult {
        ToolResult {
            content: self,
            ..ToolResult::default()
        }
    }
}

/// `Some(t)` is `t`'s result; `None` is `null` — the structured content `{"result": null}`
/// when `T` gives an output schema (which becomes `T`'s schema or `null`), else the text
/// `null`.
impl<T: IntoToolResult> IntoToolResult for Option<T> {
    fn into_tool_result(self) -> ToolResult {
        match self {
            Some(t) => t.into_tool_result(),
            None => ToolResult {
                content: vec![Content::text("null")],
                // Kept only when the tool has an output schema (the dispatcher decides).
                structured_content: Some(Structured::null()),
                ..ToolResult::default()
            },
        }
    }

    fn output_schema(generator: &mut SchemaGenerator) -> Option<Schema> {
        let inner = T::output_schema(generator)?;
        let mut nullable = Map::new();
        nullable.insert(
            "anyOf".into(),
            Value::Array(vec![
                inner.to_value(),
                serde_json::json!({ "type": "null" }),
            ]),
        );
        Schema::try_from(Value::Object(nullable)).ok()
    }
}

macro_rules! display_results {
    ($($t:ty),*) => {$(
        impl IntoToolResult for $t {
            fn into_tool_result(self) -> ToolResult {
                ToolResult::text(self.to_string())
            }
        }
    )*};
}
display_results!(
    bool, char, i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64
);

/// Structured output: `T` becomes `structuredContent` (with a JSON text copy) and `T`'s JSON
/// Schema becomes the tool's `outputSchema`.
///
/// A `T` whose JSON form is not an object is wrapped as `{"result": …}`, with a matching schema,
/// since `structuredContent` must be an object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T: Serialize + JsonSchema> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> ToolResult {
        // Serialized once: the text copy is the structured content's own text, written
        // escaped beside it for the response. Wrapping a non-object value as
        // `{"result": …}` is decided once per tool from its output schema, by the
        // dispatcher; here the value is given as it is.
        match Structured::with_copy(&self.0) {
            Ok((structured, json)) => ToolResult {
                content: vec![Content::text(json)],
                structured_content: Some(structured),
                ..ToolResult::default()
            },
            Err(e) => ToolResult::error(format!("failed to serialize the result: {e}")),
        }
    }

    fn output_schema(generator: &mut SchemaGenerator) -> Option<Schema> {
        let schema = generator.subschema_for::<T>();
        Some(crate::tool::definition::def::resolve_ref(generator, schema))
    }
}

/// A failure the model should see: `isError: true` with a message, and optionally a machine
/// readable code, a suggestion for recovery, and whether retrying may succeed.
///
/// `?` converts any `std::error::Error` into a `ToolError` with the error's message.
#[derive(Clone, PartialEq, Eq)]
pub struct ToolError(Box<ErrorFields>);

#[derive(Clone, PartialEq, Eq)]
struct ErrorFields {
    code: Option<Cow<'static, str>>,
    message: Cow<'static, str>,
    suggestion: Option<Cow<'static, str>>,
    retryable: bool,
    enable_tools: Vec<String>,
    disable_tools: Vec<String>,
    /// Made by `?` from another error type (`From`), not written by the author.
    internal: bool,
}

impl ToolError {
    /// An error with a machine-readable code (such as `NOT_FOUND`) and a message.
    pub fn new(code: impl Into<Cow<'static, str>>, message: impl Into<Cow<'static, str>>) -> Self {
        ToolError(Box::new(ErrorFields {
            code: Some(code.into()),
            message: message.into(),
            suggestion: None,
            retryable: false,
            enable_tools: Vec::new(),
            disable_tools: Vec::new(),
            internal: false,
        }))
    }

    /// An error with only a message.
    pub fn msg(message: impl Into<Cow<'static, str>>) -> Self {
        ToolError(Box::new(ErrorFields {
            code: None,
            message: message.into(),
            suggestion: None,
            retryable: false,
            enable_tools: Vec::new(),
            disable_tools: Vec::new(),
            internal: false,
        }))
    }

    /// Adds a suggestion telling the model how to recover.
    #[must_use]
    pub fn suggestion(mut self, suggestion: impl Into<Cow<'static, str>>) -> Self {
        self.0.suggestion = Some(suggestion.into());
        self
    }

    /// Marks the error as one where retrying may succeed.
    #[must_use]
    pub fn retryable(mut self, retryable: bool) -> Self {
        self.0.retryable = retryable;
        self
    }

    /// Enables these tools for the session once the call is over.
    #[must_use]
    pub fn enable_tools<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.0
            .enable_tools
            .extend(names.into_iter().map(Into::into));
        self
    }

    /// Disables these tools for the session once the call is over (for example after too
    /// many failed attempts).
    #[must_use]
    pub fn disable_tools<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.0
            .disable_tools
            .extend(names.into_iter().map(Into::into));
        self
    }

    /// The machine-readable code.
    pub fn code(&self) -> Option<&str> {
        self.0.code.as_deref()
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The recovery suggestion.
    pub fn suggestion_text(&self) -> Option<&str> {
        self.0.suggestion.as_deref()
    }

    /// Whether retrying may succeed.
    pub fn is_retryable(&self) -> bool {
        self.0.retryable
    }

    /// The text the model sees: `[CODE] message` and the suggestion on its own line.
    pub fn render(&self) -> String {
        let mut text = String::new();
        if let Some(code) = &self.0.code {
            text.push('[');
            text.push_str(code);
            text.push_str("] ");
        }
        text.push_str(&self.0.message);
        if let Some(s) = &self.0.suggestion {
            text.push_str("\nSuggestion: ");
            text.push_str(s);
        }
        if self.0.retryable {
            text.push_str("\n(retryable)");
        }
        text
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

impl<E: std::error::Error> From<E> for ToolError {
    fn from(e: E) -> Self {
        let mut error = ToolError::msg(e.to_string());
        error.0.internal = true;
        error
    }
}

impl IntoToolResult for ToolError {
    fn into_tool_result(self) -> ToolResult {
        let mut result = ToolResult::error(self.render());
        result.internal_error = self.0.internal;
        let detail = ErrorDetail {
            code: self.0.code.as_deref(),
            message: &self.0.message,
            suggestion: self.0.suggestion.as_deref(),
            retryable: self.0.retryable,
        };
        if let Ok(detail) = serde_json::to_value(detail) {
            result.meta = Some(Map::from_iter([(ERROR_META_KEY.to_owned(), detail)]));
        }
        result.enable_tools = self.0.enable_tools;
        result.disable_tools = self.0.disable_tools;
        result
    }
}

/// A [`ToolError`]'s fields, as they travel in the result's `_meta`.
#[derive(Serialize)]
struct ErrorDetail<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'a str>,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    suggestion: Option<&'a str>,
    retryable: bool,
}

/// The `_meta` key under which a [`ToolError`]'s fields travel beside its text.
pub const ERROR_META_KEY: &str = "dev.mcp-tool/error";

/// The error half of a `Result` returned by a tool.
///
/// Implemented for [`ToolError`] and for every type that implements `Display` (so `String`,
/// `&str`, `std::io::Error` and error enums all work).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the error type of a tool",
    note = "use `ToolError`, or any type that implements `std::fmt::Display`"
)]
pub trait IntoToolError {
    /// Converts the error into the `isError` result the model sees.
    fn into_tool_error(self) -> ToolResult;
}

impl IntoToolError for ToolError {
    fn into_tool_error(self) -> ToolResult {
        self.into_tool_result()
    }
}

impl<E: fmt::Display> IntoToolError for E {
    fn into_tool_error(self) -> ToolResult {
        ToolResult {
            internal_error: true,
            ..ToolResult::error(self.to_string())
        }
    }
}

impl<T: IntoToolResult, E: IntoToolError> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> ToolResult {
        match self {
            Ok(v) => v.into_tool_result(),
            Err(e) => e.into_tool_error(),
        }
    }

    fn output_schema(generator: &mut SchemaGenerator) -> Option<Schema> {
        T::output_schema(generator)
    }
}

mod respond;
pub(crate) mod summary;

pub use summary::Summarized;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_serialize_as_call_tool_results() {
        let mut meta = Map::new();
        meta.insert("k".into(), json!([1, "two"]));
        let result = ToolResult {
            content: vec![Content::text("a")],
            structured_content: Some(json!({ "id": 1 }).into()),
            meta: Some(meta),
            enable_tools: vec!["not sent".into()],
            ..ToolResult::default()
        };
        assert_eq!(
            result.to_json(),
            json!({"content": [{"type": "text", "text": "a"}], "structuredContent": {"id": 1}, "_meta": {"k": [1, "two"]}})
        );
        assert_eq!(
            ToolResult::error("bad").to_json(),
            json!({"content": [{"type": "text", "text": "bad"}], "isError": true})
        );
        assert_eq!(ToolResult::default().to_json(), json!({"content": []}));
    }
}
