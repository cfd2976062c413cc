//! What a tool gives back: content blocks, structured output, errors, and the one conversion
//! trait, [`IntoToolResult`], that every return type goes through.
//!
//! The types here are independent of the protocol revision; `protocol` renders them for the
//! revision a session negotiated.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::content::Content;

/// The full result of one tool call: MCP's `CallToolResult`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolResult {
    /// Unstructured content blocks.
    pub content: Vec<Content>,
    /// Structured content, described by the tool's output schema.
    pub structured_content: Option<Value>,
    /// Whether the call failed in a way the model should see.
    pub is_error: bool,
    /// The result's `_meta`.
    pub meta: Option<Map<String, Value>>,
    /// Tools to enable for this session once the call is over (not sent to the client).
    pub enable_tools: Vec<String>,
    /// Tools to disable for this session once the call is over (not sent to the client).
    pub disable_tools: Vec<String>,
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

    /// Enables these tools for the session once the call is over (seed 003's
    /// `enableTools`, as after a successful login).
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

    /// The JSON form of this result (`CallToolResult`).
    pub fn to_json(&self) -> Value {
        let mut m = Map::with_capacity(4);
        m.insert(
            "content".into(),
            Value::Array(self.content.iter().map(Content::to_json).collect()),
        );
        if let Some(s) = &self.structured_content {
            m.insert("structuredContent".into(), s.clone());
        }
        if self.is_error {
            m.insert("isError".into(), Value::Bool(true));
        }
        if let Some(meta) = &self.meta {
            m.insert("_meta".into(), Value::Object(meta.clone()));
        }
        Value::Object(m)
    }
}

/// The same JSON as [`ToolResult::to_json`], written without building it.
impl Serialize for ToolResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let len = 1
            + usize::from(self.structured_content.is_some())
            + usize::from(self.is_error)
            + usize::from(self.meta.is_some());
        let mut m = serializer.serialize_map(Some(len))?;
        m.serialize_entry("content", &self.content)?;
        if let Some(s) = &self.structured_content {
            m.serialize_entry("structuredContent", s)?;
        }
        if self.is_error {
            m.serialize_entry("isError", &true)?;
        }
        if let Some(meta) = &self.meta {
            m.serialize_entry("_meta", meta)?;
        }
        m.end()
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
        // Wrapping a non-object value as `{"result": …}` is decided once per tool from its
        // output schema, by the dispatcher; here the value is given as it is.
        match serde_json::to_value(&self.0) {
            Ok(value) => ToolResult {
                content: vec![Content::Text(crate::protocol::json_string(&value))],
                structured_content: Some(value),
                ..ToolResult::default()
            },
            Err(e) => ToolResult::error(format!("failed to serialize the result: {e}")),
        }
    }

    fn output_schema(generator: &mut SchemaGenerator) -> Option<Schema> {
        let schema = generator.subschema_for::<T>();
        Some(crate::schema::resolve_ref(generator, schema))
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
        ToolError::msg(e.to_string())
    }
}

impl IntoToolResult for ToolError {
    fn into_tool_result(self) -> ToolResult {
        let mut result = ToolResult::error(self.render());
        let mut detail = Map::new();
        if let Some(code) = &self.0.code {
            detail.insert("code".into(), Value::String(code.to_string()));
        }
        detail.insert("message".into(), Value::String(self.0.message.to_string()));
        if let Some(s) = &self.0.suggestion {
            detail.insert("suggestion".into(), Value::String(s.to_string()));
        }
        detail.insert("retryable".into(), Value::Bool(self.0.retryable));
        let mut meta = Map::with_capacity(1);
        meta.insert(ERROR_META_KEY.into(), Value::Object(detail));
        result.meta = Some(meta);
        result.enable_tools = self.0.enable_tools;
        result.disable_tools = self.0.disable_tools;
        result
    }
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
        ToolResult::error(self.to_string())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::{Audience, ContentAnnotations, ResourceContents};
    use serde_json::json;

    /// The serialized form (sent to clients of the current protocol) is exactly `to_json`.
    #[test]
    fn serializing_gives_the_json_form() {
        let mut meta = Map::new();
        meta.insert("k".into(), json!([1, "two"]));
        let results = [
            ToolResult::text("plain \"quoted\" \u{e9}\n"),
            ToolResult::error("bad"),
            ToolResult {
                content: vec![
                    Content::text("a"),
                    Content::image([1u8, 2, 3], "image/png"),
                    Content::audio([4u8], "audio/wav"),
                    Content::resource_link("file:///x", "x"),
                    Content::resource(ResourceContents::text("file:///y", "text/plain", "y")),
                    Content::resource(ResourceContents::blob("file:///z", "a/b", [0u8; 5])),
                    Content::text("n").annotate(ContentAnnotations {
                        audience: vec![Audience::User],
                        priority: Some(0.5),
                        last_modified: None,
                    }),
                    Content::Raw(json!({ "type": "video", "uri": "v" })),
                ],
                structured_content: Some(json!({ "id": 1, "tags": ["x"] })),
                meta: Some(meta),
                enable_tools: vec!["not sent".into()],
                ..ToolResult::default()
            },
            ToolResult::default(),
        ];
        for result in results {
            let written: Value =
                serde_json::from_str(&serde_json::to_string(&result).unwrap()).unwrap();
            assert_eq!(written, result.to_json(), "{result:?}");
        }
    }
}
