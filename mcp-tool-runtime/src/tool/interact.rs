//! Requests a tool makes of the client while it runs: sampling (`sampling/createMessage`) and
//! elicitation (`elicitation/create`, with the requested schema derived from a Rust type and
//! the answer checked against it).

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::protocol::wire::{
    ElicitParams, ElicitUrlParams, ElicitationCompleteParams, ListRootsResult,
};
use crate::protocol::{Content, Role, Root, RpcError, code, jsonrpc};
use crate::tool::context::{ClientInfo, Ctx};
use crate::tool::extract::{FromContext, ToolCall};
use crate::tool::input::{InputKind, missing_capability};
use crate::tool::result::ToolError;

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

/// What the user did with a URL elicitation (see [`Ctx::elicit_url`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlElicitation {
    /// The elicitation's id: name it in [`Ctx::elicitation_complete`] once the flow the page
    /// started is over.
    pub elicitation_id: String,
    /// Whether the user agreed to open the page (`Accept(())`), refused, or dismissed it.
    pub answer: Elicitation<()>,
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

/// Input requests under a key of the tool's choosing (see [`Ctx::input`]).
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    ctx: &'a Ctx,
    key: &'a str,
}

impl<'a> Input<'a> {
    /// Asks the user for values of type `T` (see [`Ctx::elicit`]).
    pub async fn elicit<T: DeserializeOwned + JsonSchema>(
        self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, ToolError> {
        elicit(self.ctx, Some(self.key), message.into()).await
    }

    /// Asks the client's model for a message (see [`Peer::sample`]).
    pub async fn sample(self, request: SamplingRequest) -> Result<SamplingResult, ToolError> {
        sample(self.ctx, Some(self.key), &request).await
    }

    /// Asks the client for its roots (see [`Ctx::roots`]).
    pub async fn roots(self) -> Result<Vec<Root>, ToolError> {
        roots(self.ctx, Some(self.key)).await
    }

    /// Passes another server's question on to the client (see [`Ctx::relay`]).
    pub async fn relay(self, method: &str, params: Value) -> Result<Value, ToolError> {
        relay(self.ctx, Some(self.key), method, params).await
    }

    /// Sends the user to `url` (see [`Ctx::elicit_url`]): in 2026-07-28 an answer given under
    /// another key (for another page) is not taken for this one.
    pub async fn elicit_url(
        self,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Result<UrlElicitation, ToolError> {
        elicit_url(self.ctx, Some(self.key), message.into(), url.into()).await
    }
}

impl Ctx {
    /// The client, for requests the server makes of it (sampling, elicitation).
    pub fn peer(&self) -> Peer {
        Peer { ctx: self.clone() }
    }

    /// Input requests named by `key`, for clients that look at the keys (in 2026-07-28 an
    /// input request travels under a key, `elicitation-1` and so on by default; in
    /// 2025-11-25 the key is not sent).
    pub fn input<'a>(&'a self, key: &'a str) -> Input<'a> {
        Input { ctx: self, key }
    }

    /// Asks the client's model for an answer to `prompt` (see [`Peer::sample`]).
    pub async fn sample_text(
        &self,
        prompt: impl Into<String>,
        max_tokens: u32,
    ) -> Result<String, ToolError> {
        let result = sample(self, None, &SamplingRequest::new(max_tokens).user(prompt)).await?;
        Ok(result.text())
    }

    /// Asks the user for values of type `T` (`elicitation/create`); `T` is a flat struct of
    /// strings, numbers, integers, booleans and enums, with defaults where given. Fails with
    /// a clear error when the client did not declare the `elicitation` capability, or when an
    /// accepted answer does not fit the requested schema (each broken rule named).
    ///
    /// In 2026-07-28 the request ends with an input request and the tool runs again from the
    /// start when the client answers (see the `tool` module's docs on input).
    pub async fn elicit<T: DeserializeOwned + JsonSchema>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, ToolError> {
        elicit(self, None, message.into()).await
    }

    /// The client's roots (`roots/list`): the folders or files it exposes to the server.
    pub async fn roots(&self) -> Result<Vec<Root>, ToolError> {
        roots(self, None).await
    }

    /// Passes a question of another MCP server on to this call's client — `elicitation/create`,
    /// `sampling/createMessage` or `roots/list`, with their params as the other server wrote
    /// them — and returns the client's answer. In 2026-07-28 it is an input request of this
    /// call's round, like [`Ctx::elicit`]. A gateway relays its remote servers' questions so.
    ///
    /// A client without the capability the question needs refuses it (an error for the other
    /// server to handle); the call itself goes on.
    pub async fn relay(&self, method: &str, params: Value) -> Result<Value, ToolError> {
        relay(self, None, method, params).await
    }

    /// The input round of this call when its client answers input by rounds (a 2026-07-28
    /// request, not a task): the call then ends each time it waits for an answer, and runs
    /// again from the start with it.
    #[cfg(feature = "client")]
    pub(crate) fn rounds(&self) -> Option<&crate::tool::input::InputRound> {
        self.state
            .input
            .as_ref()
            .filter(|_| self.state.task.get().is_none())
    }

    /// Sends the user to `url` (URL-mode elicitation: a sign-in or a payment the server runs
    /// itself, whose secrets never pass through the client). Needs the client's
    /// `elicitation.url` capability. The answer says whether the user agreed to open it; when
    /// the page's flow is done, tell the client with [`Ctx::elicitation_complete`].
    pub async fn elicit_url(
        &self,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Result<UrlElicitation, ToolError> {
        elicit_url(self, None, message.into(), url.into()).await
    }

    /// Tells the client that the flow of the URL elicitation `elicitation_id` is over
    /// (`notifications/elicitation/complete`), so it can retry what waited for it.
    pub fn elicitation_complete(&self, elicitation_id: &str) {
        self.state.conn().send(
            Some(self.state.related()),
            jsonrpc::notification(
                "notifications/elicitation/complete",
                &ElicitationCompleteParams { elicitation_id },
            ),
        );
    }

    /// Asks the client for input of `kind`: a request on the session (2025-11-25), or an input
    /// request of this round (2026-07-28). The answer's shape is checked.
    async fn ask(
        &self,
        key: Option<&str>,
        kind: InputKind,
        params: Value,
    ) -> Result<Value, ToolError> {
        let state = &self.state;
        let declared = state.client.has_capability(kind.capability());
        let answer = match (state.task.get(), &state.input) {
            (Some(task), _) => {
                if !declared {
                    return Err(missing_capability(kind.capability()));
                }
                task.ask(
                    Some(state.related()),
                    key,
                    kind.method(),
                    jsonrpc::json_string(&params),
                )
                .await
                .map_err(|e| ToolError::new(failure(kind), e.message))?
            }
            (None, Some(round)) => round.ask(key, kind, params, declared).await?,
            (None, None) => {
                if !declared {
                    return Err(missing_capability(kind.capability()));
                }
                state
                    .conn()
                    .request(
                        Some(state.related()),
                        kind.method(),
                        jsonrpc::json_string(&params),
                    )
                    .await
                    .map_err(|e| ToolError::new(failure(kind), e.message))?
            }
        };
        kind.check(&answer).map_err(|why| {
            ToolError::new(
                failure(kind),
                format!(
                    "the client's answer is not a result of `{}`: {why}",
                    kind.method()
                ),
            )
        })?;
        Ok(answer)
    }
}

/// The error code of a failed input request.
fn failure(kind: InputKind) -> &'static str {
    match kind {
        InputKind::Elicitation => "ELICITATION_FAILED",
        InputKind::Sampling => "SAMPLING_FAILED",
        InputKind::Roots => "ROOTS_FAILED",
    }
}

/// Sends the user to `url` (see [`Ctx::elicit_url`]), under `key` when given.
async fn elicit_url(
    ctx: &Ctx,
    key: Option<&str>,
    message: String,
    url: String,
) -> Result<UrlElicitation, ToolError> {
    let client = ctx.client();
    if client.capabilities["elicitation"].get("url").is_none() {
        return Err(missing_capability("elicitation.url"));
    }
    let elicitation_id = {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes)
            .map_err(|e| ToolError::new("ELICITATION_FAILED", format!("no randomness: {e}")))?;
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    let params = serde_json::to_value(ElicitUrlParams {
        mode: "url",
        message: &message,
        url: &url,
        elicitation_id: &elicitation_id,
    })
    .map_err(|e| ToolError::new("BAD_ELICITATION", e.to_string()))?;
    let answer = ctx.ask(key, InputKind::Elicitation, params).await?;
    let answer = match answer["action"].as_str() {
        Some("accept") => Elicitation::Accept(()),
        Some("decline") => Elicitation::Decline,
        _ => Elicitation::Cancel,
    };
    Ok(UrlElicitation {
        elicitation_id,
        answer,
    })
}

async fn relay(
    ctx: &Ctx,
    key: Option<&str>,
    method: &str,
    params: Value,
) -> Result<Value, ToolError> {
    let kind = match method {
        "elicitation/create" => InputKind::Elicitation,
        "sampling/createMessage" => InputKind::Sampling,
        "roots/list" => InputKind::Roots,
        other => {
            return Err(ToolError::new(
                "UNSUPPORTED_REQUEST",
                format!("`{other}` cannot be passed on to the client"),
            ));
        }
    };
    // Checked here, so that in 2026-07-28 the round is not refused for another server's
    // question.
    if !ctx.client().has_capability(kind.capability()) {
        return Err(missing_capability(kind.capability()));
    }
    ctx.ask(key, kind, params).await
}

async fn sample(
    ctx: &Ctx,
    key: Option<&str>,
    request: &SamplingRequest,
) -> Result<SamplingResult, ToolError> {
    let params = serde_json::to_value(request)
        .map_err(|e| ToolError::new("SAMPLING_FAILED", e.to_string()))?;
    let raw = ctx.ask(key, InputKind::Sampling, params).await?;
    Ok(SamplingResult { raw })
}

async fn roots(ctx: &Ctx, key: Option<&str>) -> Result<Vec<Root>, ToolError> {
    let answer = ctx
        .ask(key, InputKind::Roots, Value::Object(Map::new()))
        .await?;
    ListRootsResult::deserialize(answer)
        .map(|r| r.roots)
        .map_err(|e| ToolError::new("ROOTS_FAILED", format!("the client's roots: {e}")))
}

async fn elicit<T: DeserializeOwned + JsonSchema>(
    ctx: &Ctx,
    key: Option<&str>,
    message: String,
) -> Result<Elicitation<T>, ToolError> {
    let schema =
        requested_schema::<T>().map_err(|e| ToolError::new("BAD_ELICITATION", e.to_string()))?;
    let params = serde_json::to_value(ElicitParams {
        mode: "form",
        message: &message,
        requested_schema: &schema,
    })
    .map_err(|e| ToolError::new("BAD_ELICITATION", e.to_string()))?;
    let answer = ctx.ask(key, InputKind::Elicitation, params).await?;
    let failed = |why: String| ToolError::new("ELICITATION_FAILED", why);
    match answer["action"].as_str() {
        Some("accept") => {
            let content = answer.get("content").cloned().unwrap_or(json!({}));
            crate::tool::definition::def::check_against(&schema, &content).map_err(|why| {
                failed(format!(
                    "the answer does not fit the requested schema:\n{why}"
                ))
            })?;
            T::deserialize(content)
                .map(Elicitation::Accept)
                .map_err(|e| failed(format!("the answer does not fit the requested schema: {e}")))
        }
        Some("decline") => Ok(Elicitation::Decline),
        _ => Ok(Elicitation::Cancel),
    }
}

impl Peer {
    /// The client's declared information and capabilities.
    pub fn client(&self) -> &ClientInfo {
        self.ctx.client()
    }

    /// Sends a request to the client and waits for its answer (2025-11-25 sessions; in
    /// 2026-07-28 a server asks only for elicitation, sampling and roots, through
    /// [`Peer::elicit`], [`Peer::sample`] and [`Ctx::roots`]).
    pub async fn request<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<Value, RpcError> {
        let state = &self.ctx.state;
        if state.input.is_some() {
            return Err(RpcError::new(
                code::INTERNAL_ERROR,
                format!(
                    "`{method}`: in protocol 2026-07-28 a server makes no requests of the client; it asks for input (elicitation, sampling, roots) instead"
                ),
            ));
        }
        state
            .conn()
            .request(Some(state.related()), method, jsonrpc::json_string(params))
            .await
    }

    /// Asks the client's model for a message (`sampling/createMessage`). Fails with a clear
    /// error when the client did not declare the `sampling` capability, or answers with
    /// something that is not a sampling result.
    pub async fn sample(&self, request: SamplingRequest) -> Result<SamplingResult, ToolError> {
        sample(&self.ctx, None, &request).await
    }

    /// Asks the user for values of type `T` (see [`Ctx::elicit`]).
    pub async fn elicit<T: DeserializeOwned + JsonSchema>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, ToolError> {
        elicit(&self.ctx, None, message.into()).await
    }
}

/// The `requestedSchema` of an elicitation for `T`: a flat object whose properties are
/// primitive (string, number, integer, boolean) or enums, single or multi-select, titled or
/// not (SEP-1034 defaults, SEP-1330 enums).
pub fn requested_schema<T: JsonSchema>() -> Result<Value, RequestedSchemaError> {
    let mut generator = crate::tool::definition::def::generator();
    let mut root = generator.root_schema_for::<T>().to_value();
    // An answer the type cannot hold is refused as out of range, not by its deserialization.
    crate::tool::definition::integers::bound_integers(&mut root);
    let defs = root
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return Err(RequestedSchemaError::NotAStruct {
            type_name: std::any::type_name::<T>(),
        });
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
fn primitive(
    name: &str,
    prop: &Value,
    defs: &Map<String, Value>,
) -> Result<Value, RequestedSchemaError> {
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

fn bad(name: &str) -> RequestedSchemaError {
    RequestedSchemaError::Property {
        name: name.to_owned(),
    }
}

/// Why a type cannot be elicited ([`requested_schema`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestedSchemaError {
    /// The type is not a struct with named fields (its schema is not an object).
    #[error("`{type_name}` cannot be elicited: it must be a struct with named fields")]
    NotAStruct {
        /// The type, as `std::any::type_name` writes it.
        type_name: &'static str,
    },
    /// A field is not a primitive an elicitation may ask for.
    #[error(
        "property `{name}` cannot be elicited: only strings, numbers, integers, booleans and enums (or lists of enum values) can"
    )]
    Property {
        /// The field's name in the schema.
        name: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)] // Only its schema is read.
    struct Nested {
        name: String,
        inner: Vec<Vec<String>>,
    }

    #[test]
    fn a_type_that_cannot_be_elicited_is_named_with_its_field() {
        assert_eq!(
            requested_schema::<Nested>(),
            Err(RequestedSchemaError::Property {
                name: "inner".into()
            })
        );
        let e = requested_schema::<u32>().unwrap_err();
        assert_eq!(e, RequestedSchemaError::NotAStruct { type_name: "u32" });
        assert_eq!(
            e.to_string(),
            "`u32` cannot be elicited: it must be a struct with named fields"
        );
    }
}
