//! Requests a tool makes of the client while it runs: sampling (`sampling/createMessage`) and
//! elicitation (`elicitation/create`, with the requested schema derived from a Rust type and
//! the answer checked against it).

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::context::{ClientInfo, Ctx};
use super::extract::{FromContext, ToolCall};
use super::result::ToolError;
use crate::protocol::wire::ElicitParams;
use crate::protocol::{Content, Role, RpcError, jsonrpc};

/// One message of a sampling request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: Content,
}

/// A `sampling/createMessage` request: messages for the client's model to answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingRequest {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// The most tokens the answer may have.
    pub max_tokens: u32,
    /// A system prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Sampling temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Further parameters (`modelPreferences`, `stopSequences`, …), sent as given.
    #[serde(flatten)]
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
        self.messages.push(SamplingMessage {
            role: Role::User,
            content: Content::text(text),
        });
        self
    }

    /// Adds an assistant message with text content.
    #[must_use]
    pub fn assistant(mut self, text: impl Into<String>) -> Self {
        self.messages.push(SamplingMessage {
            role: Role::Assistant,
            content: Content::text(text),
        });
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
}

/// The client's answer to a sampling request.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingResult {
    /// The answer as the client sent it (`role`, `content`, `model`, `stopReason`).
    pub raw: Value,
}

impl SamplingResult {
    /// Checks the shape of an answer: `role`, `model`, and `content` as a block (or a list of
    /// blocks) with a `type`.
    fn check(raw: Value) -> Result<Self, String> {
        let blocks = match &raw["content"] {
            Value::Array(blocks) => blocks.iter().collect::<Vec<_>>(),
            block @ Value::Object(_) => vec![block],
            Value::Null => return Err("it has no `content`".into()),
            _ => return Err("its `content` is neither a block nor a list of blocks".into()),
        };
        if let Some(bad) = blocks.iter().position(|b| !b["type"].is_string()) {
            return Err(format!("content block {bad} has no `type`"));
        }
        if !raw["role"].is_string() {
            return Err("it has no `role`".into());
        }
        if !raw["model"].is_string() {
            return Err("it has no `model`".into());
        }
        Ok(SamplingResult { raw })
    }

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

/// The client of the current call, for requests the server makes of it: sampling
/// (`sampling/createMessage`) and elicitation (`elicitation/create`).
#[derive(Clone, Debug)]
pub struct Peer {
    ctx: Ctx,
}

impl FromContext for Peer {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(call.ctx().peer())
    }
}

impl Ctx {
    /// The client, for requests the server makes of it (sampling, elicitation).
    pub fn peer(&self) -> Peer {
        Peer { ctx: self.clone() }
    }

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

impl Peer {
    /// The client's declared information and capabilities.
    pub fn client(&self) -> &ClientInfo {
        self.ctx.client()
    }

    /// Sends a request to the client and waits for its answer.
    pub async fn request<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<Value, RpcError> {
        let state = &self.ctx.state;
        state
            .conn
            .request(Some(&state.related), method, jsonrpc::json_string(params))
            .await
    }

    /// Fails with a clear error unless the client declared `capability`.
    fn require(&self, capability: &str, what: &str) -> Result<(), ToolError> {
        if self.client().has_capability(capability) {
            Ok(())
        } else {
            Err(ToolError::new(
                "MISSING_CLIENT_CAPABILITY",
                format!(
                    "the client did not declare the `{capability}` capability, so {what} is not available"
                ),
            ))
        }
    }

    /// Asks the client's model for a message (`sampling/createMessage`). Fails with a clear
    /// error when the client did not declare the `sampling` capability, or answers with
    /// something that is not a sampling result.
    pub async fn sample(&self, request: SamplingRequest) -> Result<SamplingResult, ToolError> {
        self.require("sampling", "sampling")?;
        let raw = self
            .request("sampling/createMessage", &request)
            .await
            .map_err(|e| ToolError::new("SAMPLING_FAILED", e.message))?;
        SamplingResult::check(raw).map_err(|why| {
            ToolError::new(
                "SAMPLING_FAILED",
                format!("the client's answer is not a sampling result: {why}"),
            )
        })
    }

    /// Asks the user for values of type `T` (`elicitation/create`); `T` is a flat struct of
    /// strings, numbers, integers, booleans and enums, with defaults where given. Fails with
    /// a clear error when the client did not declare the `elicitation` capability, or when an
    /// accepted answer does not fit the requested schema (each broken rule named).
    pub async fn elicit<T: DeserializeOwned + JsonSchema>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, ToolError> {
        self.require("elicitation", "elicitation")?;
        let schema = requested_schema::<T>().map_err(|e| ToolError::new("BAD_ELICITATION", e))?;
        let message = message.into();
        let params = ElicitParams {
            mode: "form",
            message: &message,
            requested_schema: &schema,
        };
        let answer = self
            .request("elicitation/create", &params)
            .await
            .map_err(|e| ToolError::new("ELICITATION_FAILED", e.message))?;
        let failed = |why: String| ToolError::new("ELICITATION_FAILED", why);
        match answer["action"].as_str() {
            Some("accept") => {
                let content = answer.get("content").cloned().unwrap_or(json!({}));
                super::def::check_against(&schema, &content).map_err(|why| {
                    failed(format!(
                        "the answer does not fit the requested schema:\n{why}"
                    ))
                })?;
                T::deserialize(content)
                    .map(Elicitation::Accept)
                    .map_err(|e| {
                        failed(format!("the answer does not fit the requested schema: {e}"))
                    })
            }
            Some("decline") => Ok(Elicitation::Decline),
            Some("cancel") => Ok(Elicitation::Cancel),
            other => Err(failed(format!(
                "the client answered with an unknown action {other:?}"
            ))),
        }
    }
}

/// The `requestedSchema` of an elicitation for `T`: a flat object whose properties are
/// primitive (string, number, integer, boolean) or enums, single or multi-select, titled or
/// not (SEP-1034 defaults, SEP-1330 enums).
pub fn requested_schema<T: JsonSchema>() -> Result<Value, String> {
    let mut generator = super::def::generator();
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
