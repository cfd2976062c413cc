//! Requests a tool makes of the client while it runs: sampling (`sampling/createMessage`) and
//! elicitation (`elicitation/create`, with the requested schema derived from a Rust type).

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::context::{Peer, RequestContext};
use crate::result::ToolError;

/// A `sampling/createMessage` request: messages for the client's model to answer.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingRequest {
    /// The conversation so far: `{role, content}` messages.
    pub messages: Vec<Value>,
    /// The most tokens the answer may have.
    pub max_tokens: u32,
    /// A system prompt.
    pub system_prompt: Option<String>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Further parameters (`modelPreferences`, `stopSequences`, …), sent as given.
    pub extra: Map<String, Value>,
}

impl SamplingRequest {
    /// A request of at most `max_tokens` tokens with no messages yet.
    pub fn new(max_tokens: u32) -> Self {
        SamplingRequest {
            messages: Vec::new(),
            max_tokens,
            system_prompt: None,
            temperature: None,
            extra: Map::new(),
        }
    }

    /// Adds a user message with text content.
    #[must_use]
    pub fn user(mut self, text: impl Into<String>) -> Self {
        self.messages.push(json!({
            "role": "user",
            "content": { "type": "text", "text": text.into() }
        }));
        self
    }

    /// Adds an assistant message with text content.
    #[must_use]
    pub fn assistant(mut self, text: impl Into<String>) -> Self {
        self.messages.push(json!({
            "role": "assistant",
            "content": { "type": "text", "text": text.into() }
        }));
        self
    }

    /// Sets the system prompt.
    #[must_use]
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Sets the temperature.
    #[must_use]
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    fn to_params(&self) -> Value {
        let mut m = self.extra.clone();
        m.insert("messages".into(), Value::Array(self.messages.clone()));
        m.insert("maxTokens".into(), Value::from(self.max_tokens));
        if let Some(s) = &self.system_prompt {
            m.insert("systemPrompt".into(), Value::String(s.clone()));
        }
        if let Some(t) = self.temperature {
            m.insert("temperature".into(), Value::from(t));
        }
        Value::Object(m)
    }
}

/// The client's answer to a sampling request.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingResult {
    /// The answer as the client sent it (`role`, `content`, `model`, `stopReason`).
    pub raw: Value,
}

impl SamplingResult {
    /// The text of the answer's content (text blocks joined), empty if it has none.
    pub fn text(&self) -> String {
        match &self.raw["content"] {
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            block => block["text"].as_str().unwrap_or_default().to_owned(),
        }
    }

    /// The model that answered.
    pub fn model(&self) -> Option<&str> {
        self.raw["model"].as_str()
    }

    /// Why the model stopped.
    pub fn stop_reason(&self) -> Option<&str> {
        self.raw["stopReason"].as_str()
    }
}

/// The user's answer to an elicitation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicitation<T> {
    /// The user filled in the form.
    Accept(T),
    /// The user refused.
    Decline,
    /// The user dismissed the request.
    Cancel,
}

impl Peer {
    /// Asks the client's model for a message (`sampling/createMessage`). Fails with a clear
    /// error when the client did not declare the `sampling` capability.
    pub async fn sample(&self, request: SamplingRequest) -> Result<SamplingResult, ToolError> {
        self.require("sampling", "sampling")?;
        let raw = self
            .request("sampling/createMessage", request.to_params())
            .await
            .map_err(|e| ToolError::new("SAMPLING_FAILED", e.message))?;
        Ok(SamplingResult { raw })
    }

    /// Asks the user for values of type `T` (`elicitation/create`); `T` is a flat struct of
    /// strings, numbers, integers, booleans and enums, with defaults where given. Fails with
    /// a clear error when the client did not declare the `elicitation` capability.
    pub async fn elicit<T: DeserializeOwned + JsonSchema>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, ToolError> {
        self.require("elicitation", "elicitation")?;
        let schema = requested_schema::<T>().map_err(|e| ToolError::new("BAD_ELICITATION", e))?;
        let answer = self
            .request(
                "elicitation/create",
                json!({ "mode": "form", "message": message.into(), "requestedSchema": schema }),
            )
            .await
            .map_err(|e| ToolError::new("ELICITATION_FAILED", e.message))?;
        match answer["action"].as_str() {
            Some("accept") => {
                let content = answer.get("content").cloned().unwrap_or(json!({}));
                T::deserialize(content)
                    .map(Elicitation::Accept)
                    .map_err(|e| {
                        ToolError::new(
                            "ELICITATION_FAILED",
                            format!("the answer does not fit the requested schema: {e}"),
                        )
                    })
            }
            Some("decline") => Ok(Elicitation::Decline),
            Some("cancel") => Ok(Elicitation::Cancel),
            other => Err(ToolError::new(
                "ELICITATION_FAILED",
                format!("the client answered with an unknown action {other:?}"),
            )),
        }
    }
}

impl RequestContext {
    /// Asks the client's model for an answer to `prompt` (see [`Peer::sample`]).
    pub async fn sample_text(
        &self,
        prompt: impl Into<String>,
        max_tokens: u32,
    ) -> Result<String, ToolError> {
        let result = self
            .peer()
            .sample(SamplingRequest::new(max_tokens).user(prompt))
            .await?;
        Ok(result.text())
    }

    /// Asks the user for values of type `T` (see [`Peer::elicit`]).
    pub async fn elicit<T: DeserializeOwned + JsonSchema>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, ToolError> {
        self.peer().elicit(message).await
    }
}

/// The `requestedSchema` of an elicitation for `T`: a flat object whose properties are
/// primitive (string, number, integer, boolean) or enums, single or multi-select, titled or
/// not (SEP-1034 defaults, SEP-1330 enums).
pub fn requested_schema<T: JsonSchema>() -> Result<Value, String> {
    let mut generator = crate::schema::generator();
    let root = generator.root_schema_for::<T>().to_value();
    let defs = root
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return Err(format!(
            "`{}` cannot be elicited: it must be a struct with named fields",
            std::any::type_name::<T>()
        ));
    }
    let mut properties = Map::new();
    for (name, prop) in root
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        properties.insert(name.clone(), primitive(name, prop, &defs)?);
    }
    let required = root.get("required").cloned().unwrap_or(json!([]));
    Ok(json!({ "type": "object", "properties": properties, "required": required }))
}

/// One property as an elicitation primitive.
fn primitive(name: &str, prop: &Value, defs: &Map<String, Value>) -> Result<Value, String> {
    let mut prop = inline(prop, defs);
    let m = prop.as_object_mut().ok_or_else(|| bad(name))?;
    // `Option<T>` is written as `type: [T, "null"]`: optional, so just `T`.
    if let Some(Value::Array(types)) = m.get("type") {
        let types: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if types.len() == 1 {
            m.insert("type".into(), types[0].clone());
        }
    }
    if let Some(Value::Array(any)) = m.get("anyOf").cloned() {
        // schemars writes `Option<Enum>` as `anyOf: [Enum, null]`.
        let branches: Vec<&Value> = any
            .iter()
            .filter(|b| b.get("type") != Some(&json!("null")))
            .collect();
        if branches.len() == 1 {
            m.remove("anyOf");
            let inner = inline(branches[0], defs);
            for (k, v) in inner.as_object().into_iter().flatten() {
                m.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    if let Some(branches) = titled_constants(m.get("oneOf")) {
        m.insert("type".into(), json!("string"));
        m.insert("oneOf".into(), Value::Array(branches));
        m.remove("enum");
    }
    // The formats of elicitation are email, uri, date and date-time, on strings; schemars's
    // numeric formats (`int64`, `double`, `uint8`, …) are no part of a requested schema.
    let spec_format = matches!(
        (
            m.get("type").and_then(Value::as_str),
            m.get("format").and_then(Value::as_str)
        ),
        (Some("string"), Some("email" | "uri" | "date" | "date-time"))
    );
    if !spec_format {
        m.remove("format");
    }
    match m.get("type").and_then(Value::as_str) {
        Some("string" | "number" | "integer" | "boolean") => Ok(prop),
        Some("array") => {
            let items = inline(m.get("items").ok_or_else(|| bad(name))?, defs);
            let items = if let Some(branches) =
                titled_constants(items.get("oneOf").or(items.get("anyOf")))
            {
                json!({ "anyOf": branches })
            } else if items.get("enum").is_some() {
                json!({ "type": "string", "enum": items["enum"] })
            } else {
                return Err(bad(name));
            };
            m.insert("items".into(), items);
            Ok(prop)
        }
        _ => Err(bad(name)),
    }
}

/// `oneOf: [{const, title|description}]` as `[{const, title}]`.
fn titled_constants(branches: Option<&Value>) -> Option<Vec<Value>> {
    branches?
        .as_array()?
        .iter()
        .map(|b| {
            let constant = b.get("const")?.clone();
            let title = b
                .get("title")
                .or_else(|| b.get("description"))
                .cloned()
                .unwrap_or_else(|| constant.clone());
            Some(json!({ "const": constant, "title": title }))
        })
        .collect()
}

/// Replaces a `$ref` by its definition, keeping the referring schema's own keywords.
fn inline(schema: &Value, defs: &Map<String, Value>) -> Value {
    let Some(r) = schema.get("$ref").and_then(Value::as_str) else {
        return schema.clone();
    };
    let Some(def) = r.rsplit('/').next().and_then(|n| defs.get(n)) else {
        return schema.clone();
    };
    let mut merged = def.clone();
    if let (Some(m), Some(own)) = (merged.as_object_mut(), schema.as_object()) {
        for (k, v) in own {
            if k != "$ref" {
                m.insert(k.clone(), v.clone());
            }
        }
    }
    merged
}

fn bad(name: &str) -> String {
    format!(
        "property `{name}` cannot be elicited: only strings, numbers, integers, booleans and enums (or lists of enum values) can"
    )
}
