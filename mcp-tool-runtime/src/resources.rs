//! Resources, resource templates, prompts and argument completion: what a server offers beside
//! its tools, built at run time with builders.
//!
//! ```
//! use mcp_tool::{Prompt, PromptMessage, Resource, ResourceContents, ResourceTemplate, Server};
//!
//! let server = Server::new("docs", "1.0.0")
//!     .resource(Resource::text("docs://readme", "readme", "text/markdown", "# Hello"))
//!     .resource_template(
//!         ResourceTemplate::new("docs://page/{slug}", "page").read(|request| async move {
//!             let slug = request.var("slug").unwrap_or_default().to_owned();
//!             Ok(vec![ResourceContents::text(request.uri(), "text/plain", format!("page {slug}"))])
//!         }),
//!     )
//!     .prompt(
//!         Prompt::new("greet")
//!             .description("Greet someone")
//!             .argument("name", "Who to greet", true)
//!             .get(|request| async move {
//!                 let name = request.argument("name").unwrap_or("you").to_owned();
//!                 Ok(vec![PromptMessage::user(format!("Say hello to {name}"))].into())
//!             }),
//!     );
//! # let _ = server;
//! ```

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::content::{Content, ResourceContents};
use crate::result::ToolError;

/// What a reader or a prompt handler returns.
pub type HandlerFuture<T> = Pin<Box<dyn Future<Output = Result<T, ToolError>> + Send>>;

type Reader = Arc<dyn Fn(ResourceRequest) -> HandlerFuture<Vec<ResourceContents>> + Send + Sync>;
type Completer = Arc<dyn Fn(&str, &Map<String, Value>) -> Vec<String> + Send + Sync>;

/// A request to read a resource.
#[derive(Debug, Clone)]
pub struct ResourceRequest {
    uri: String,
    vars: HashMap<String, String>,
}

impl ResourceRequest {
    /// The URI asked for.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// A variable of the matched URI template (`{id}` in `test://template/{id}/data`).
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }
}

/// Fields common to resources and templates.
#[derive(Clone, Default)]
struct Described {
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
    meta: Option<Map<String, Value>>,
}

impl Described {
    fn write(&self, m: &mut Map<String, Value>) {
        m.insert("name".into(), Value::String(self.name.clone()));
        for (key, value) in [
            ("title", &self.title),
            ("description", &self.description),
            ("mimeType", &self.mime_type),
        ] {
            if let Some(v) = value {
                m.insert(key.into(), Value::String(v.clone()));
            }
        }
        if let Some(meta) = &self.meta {
            m.insert("_meta".into(), Value::Object(meta.clone()));
        }
    }
}

macro_rules! described_setters {
    () => {
        /// A human-readable title.
        #[must_use]
        pub fn title(mut self, title: impl Into<String>) -> Self {
            self.described.title = Some(title.into());
            self
        }

        /// What it is.
        #[must_use]
        pub fn description(mut self, description: impl Into<String>) -> Self {
            self.described.description = Some(description.into());
            self
        }

        /// Its MIME type.
        #[must_use]
        pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
            self.described.mime_type = Some(mime_type.into());
            self
        }

        /// Merges entries into its `_meta`.
        #[must_use]
        pub fn meta(mut self, meta: Map<String, Value>) -> Self {
            self.described
                .meta
                .get_or_insert_with(Map::new)
                .extend(meta);
            self
        }
    };
}

/// A resource with a fixed URI.
#[derive(Clone)]
pub struct Resource {
    uri: String,
    described: Described,
    size: Option<u64>,
    read: Reader,
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Resource({})", self.uri)
    }
}

impl Resource {
    /// A resource whose contents come from `read`.
    pub fn new<F, Fut>(uri: impl Into<String>, name: impl Into<String>, read: F) -> Self
    where
        F: Fn(ResourceRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ToolError>> + Send + 'static,
    {
        Resource {
            uri: uri.into(),
            described: Described {
                name: name.into(),
                ..Described::default()
            },
            size: None,
            read: Arc::new(move |r| Box::pin(read(r))),
        }
    }

    /// A resource with fixed text.
    pub fn text(
        uri: impl Into<String>,
        name: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        let uri = uri.into();
        let mime_type = mime_type.into();
        let contents = ResourceContents::text(uri.clone(), mime_type.clone(), text);
        Self::fixed(uri, name, mime_type, contents)
    }

    /// A resource with fixed bytes (served base64-encoded).
    pub fn blob(
        uri: impl Into<String>,
        name: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: impl AsRef<[u8]>,
    ) -> Self {
        let uri = uri.into();
        let mime_type = mime_type.into();
        let size = bytes.as_ref().len() as u64;
        let contents = ResourceContents::blob(uri.clone(), mime_type.clone(), bytes);
        let mut r = Self::fixed(uri, name, mime_type, contents);
        r.size = Some(size);
        r
    }

    fn fixed(
        uri: String,
        name: impl Into<String>,
        mime_type: String,
        contents: ResourceContents,
    ) -> Self {
        let mut r = Resource::new(uri, name, move |_| {
            let contents = contents.clone();
            async move { Ok(vec![contents]) }
        });
        r.described.mime_type = Some(mime_type);
        r
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    described_setters!();

    pub(crate) fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("uri".into(), Value::String(self.uri.clone()));
        self.described.write(&mut m);
        if let Some(size) = self.size {
            m.insert("size".into(), Value::from(size));
        }
        Value::Object(m)
    }
}

/// A family of resources named by an RFC 6570 URI template (`test://template/{id}/data`).
#[derive(Clone)]
pub struct ResourceTemplate {
    template: String,
    parts: Vec<TemplatePart>,
    described: Described,
    read: Option<Reader>,
    completers: HashMap<String, Completer>,
}

impl fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ResourceTemplate({})", self.template)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum TemplatePart {
    Literal(String),
    Var(String),
}

impl ResourceTemplate {
    /// A template; give it a reader with [`ResourceTemplate::read`].
    pub fn new(template: impl Into<String>, name: impl Into<String>) -> Self {
        let template = template.into();
        let parts = parse_template(&template);
        ResourceTemplate {
            template,
            parts,
            described: Described {
                name: name.into(),
                ..Described::default()
            },
            read: None,
            completers: HashMap::new(),
        }
    }

    /// How to read a URI that matches the template.
    #[must_use]
    pub fn read<F, Fut>(mut self, read: F) -> Self
    where
        F: Fn(ResourceRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ToolError>> + Send + 'static,
    {
        self.read = Some(Arc::new(move |r| Box::pin(read(r))));
        self
    }

    /// Completes values of one of the template's variables (`completion/complete`), given the
    /// value typed so far and the other variables already known.
    #[must_use]
    pub fn complete<F>(mut self, var: impl Into<String>, complete: F) -> Self
    where
        F: Fn(&str, &Map<String, Value>) -> Vec<String> + Send + Sync + 'static,
    {
        self.completers.insert(var.into(), Arc::new(complete));
        self
    }

    described_setters!();

    /// The variables of `uri` if it matches the template.
    fn matches(&self, uri: &str) -> Option<HashMap<String, String>> {
        let mut vars = HashMap::new();
        let mut rest = uri;
        let mut parts = self.parts.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                TemplatePart::Literal(l) => rest = rest.strip_prefix(l.as_str())?,
                TemplatePart::Var(name) => {
                    // A variable runs up to the next literal (or to the end); never across `/`.
                    let end = match parts.peek() {
                        Some(TemplatePart::Literal(next)) => rest.find(next.as_str())?,
                        _ => rest.len(),
                    };
                    let value = &rest[..end];
                    if value.is_empty() || value.contains('/') {
                        return None;
                    }
                    vars.insert(name.clone(), value.to_owned());
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(vars)
    }

    pub(crate) fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("uriTemplate".into(), Value::String(self.template.clone()));
        self.described.write(&mut m);
        Value::Object(m)
    }
}

fn parse_template(template: &str) -> Vec<TemplatePart> {
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        if start > 0 {
            parts.push(TemplatePart::Literal(rest[..start].to_owned()));
        }
        match rest[start..].find('}') {
            Some(len) => {
                parts.push(TemplatePart::Var(rest[start + 1..start + len].to_owned()));
                rest = &rest[start + len + 1..];
            }
            None => {
                parts.push(TemplatePart::Literal(rest[start..].to_owned()));
                rest = "";
            }
        }
    }
    if !rest.is_empty() {
        parts.push(TemplatePart::Literal(rest.to_owned()));
    }
    parts
}

/// Who says a prompt message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said: text, an image, audio, or a resource.
    pub content: Content,
}

impl PromptMessage {
    /// A user message with text.
    pub fn user(text: impl Into<String>) -> Self {
        PromptMessage {
            role: Role::User,
            content: Content::text(text),
        }
    }

    /// An assistant message with text.
    pub fn assistant(text: impl Into<String>) -> Self {
        PromptMessage {
            role: Role::Assistant,
            content: Content::text(text),
        }
    }

    /// A message with any content.
    pub fn new(role: Role, content: Content) -> Self {
        PromptMessage { role, content }
    }

    fn to_json(&self) -> Value {
        let role = match self.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        serde_json::json!({ "role": role, "content": self.content.to_json() })
    }
}

/// What a prompt gives: messages, and optionally a description.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PromptResult {
    /// A description of this rendering of the prompt.
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

impl From<Vec<PromptMessage>> for PromptResult {
    fn from(messages: Vec<PromptMessage>) -> Self {
        PromptResult {
            description: None,
            messages,
        }
    }
}

impl PromptResult {
    pub(crate) fn to_json(&self) -> Value {
        let mut m = Map::new();
        if let Some(d) = &self.description {
            m.insert("description".into(), Value::String(d.clone()));
        }
        m.insert(
            "messages".into(),
            Value::Array(self.messages.iter().map(PromptMessage::to_json).collect()),
        );
        Value::Object(m)
    }
}

/// A request to render a prompt.
#[derive(Debug, Clone)]
pub struct PromptRequest {
    arguments: Map<String, Value>,
}

impl PromptRequest {
    /// An argument's value.
    pub fn argument(&self, name: &str) -> Option<&str> {
        self.arguments.get(name).and_then(Value::as_str)
    }

    /// All arguments.
    pub fn arguments(&self) -> &Map<String, Value> {
        &self.arguments
    }
}

type PromptHandler = Arc<dyn Fn(PromptRequest) -> HandlerFuture<PromptResult> + Send + Sync>;

#[derive(Debug, Clone)]
struct PromptArgument {
    name: String,
    description: Option<String>,
    required: bool,
}

/// A prompt template the client can list and render.
#[derive(Clone)]
pub struct Prompt {
    name: String,
    title: Option<String>,
    description: Option<String>,
    arguments: Vec<PromptArgument>,
    get: Option<PromptHandler>,
    completers: HashMap<String, Completer>,
}

impl fmt::Debug for Prompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Prompt({})", self.name)
    }
}

impl Prompt {
    /// A prompt named `name`; give it a handler with [`Prompt::get`].
    pub fn new(name: impl Into<String>) -> Self {
        Prompt {
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
            get: None,
            completers: HashMap::new(),
        }
    }

    /// A human-readable title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What the prompt is for.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Declares an argument.
    #[must_use]
    pub fn argument(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> Self {
        self.arguments.push(PromptArgument {
            name: name.into(),
            description: Some(description.into()).filter(|d: &String| !d.is_empty()),
            required,
        });
        self
    }

    /// Renders the prompt.
    #[must_use]
    pub fn get<F, Fut>(mut self, get: F) -> Self
    where
        F: Fn(PromptRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<PromptResult, ToolError>> + Send + 'static,
    {
        self.get = Some(Arc::new(move |r| Box::pin(get(r))));
        self
    }

    /// Completes values of one argument (`completion/complete`), given the value typed so far
    /// and the other arguments already known.
    #[must_use]
    pub fn complete<F>(mut self, argument: impl Into<String>, complete: F) -> Self
    where
        F: Fn(&str, &Map<String, Value>) -> Vec<String> + Send + Sync + 'static,
    {
        self.completers.insert(argument.into(), Arc::new(complete));
        self
    }

    pub(crate) fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), Value::String(self.name.clone()));
        if let Some(t) = &self.title {
            m.insert("title".into(), Value::String(t.clone()));
        }
        if let Some(d) = &self.description {
            m.insert("description".into(), Value::String(d.clone()));
        }
        if !self.arguments.is_empty() {
            let args = self
                .arguments
                .iter()
                .map(|a| {
                    let mut am = Map::new();
                    am.insert("name".into(), Value::String(a.name.clone()));
                    if let Some(d) = &a.description {
                        am.insert("description".into(), Value::String(d.clone()));
                    }
                    am.insert("required".into(), Value::Bool(a.required));
                    Value::Object(am)
                })
                .collect();
            m.insert("arguments".into(), Value::Array(args));
        }
        Value::Object(m)
    }
}

/// Why reading a resource or rendering a prompt failed: the JSON-RPC error to answer with.
pub(crate) struct Refused {
    pub(crate) code: i64,
    pub(crate) message: String,
    pub(crate) data: Option<Value>,
}

/// The MCP error code for a resource that does not exist.
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// The resources, templates and prompts of a server.
#[derive(Clone, Default)]
pub(crate) struct Offerings {
    pub(crate) resources: Vec<Resource>,
    pub(crate) templates: Vec<ResourceTemplate>,
    pub(crate) prompts: Vec<Prompt>,
}

impl Offerings {
    pub(crate) fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty()
    }

    pub(crate) fn has_completions(&self) -> bool {
        !self.prompts.is_empty() || !self.templates.is_empty()
    }

    /// The reader for `uri`, with the request to give it.
    pub(crate) fn reader(&self, uri: &str) -> Result<(Reader, ResourceRequest), Refused> {
        if let Some(r) = self.resources.iter().find(|r| r.uri == uri) {
            let request = ResourceRequest {
                uri: uri.to_owned(),
                vars: HashMap::new(),
            };
            return Ok((r.read.clone(), request));
        }
        for t in &self.templates {
            if let (Some(vars), Some(read)) = (t.matches(uri), &t.read) {
                let request = ResourceRequest {
                    uri: uri.to_owned(),
                    vars,
                };
                return Ok((read.clone(), request));
            }
        }
        Err(Refused {
            code: RESOURCE_NOT_FOUND,
            message: format!("Resource not found: `{uri}`"),
            data: Some(serde_json::json!({ "uri": uri })),
        })
    }

    /// The handler of a prompt, with the request to give it; checks required arguments.
    pub(crate) fn prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<(PromptHandler, PromptRequest), Refused> {
        let invalid = |message: String| Refused {
            code: crate::protocol::code::INVALID_PARAMS,
            message,
            data: None,
        };
        let prompt = self
            .prompts
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| invalid(format!("Unknown prompt: `{name}`")))?;
        let missing: Vec<&str> = prompt
            .arguments
            .iter()
            .filter(|a| a.required && !arguments.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(invalid(format!(
                "prompt `{name}` needs the argument(s) {}",
                missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let get = prompt
            .get
            .clone()
            .ok_or_else(|| invalid(format!("prompt `{name}` has no handler")))?;
        Ok((get, PromptRequest { arguments }))
    }

    /// Completion values for an argument of a prompt or a template variable.
    pub(crate) fn complete(
        &self,
        reference: &Value,
        argument: &str,
        value: &str,
        context: &Map<String, Value>,
    ) -> Result<Vec<String>, Refused> {
        let invalid = |message: String| Refused {
            code: crate::protocol::code::INVALID_PARAMS,
            message,
            data: None,
        };
        let completer = match reference.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => {
                let name = reference
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let prompt = self
                    .prompts
                    .iter()
                    .find(|p| p.name == name)
                    .ok_or_else(|| invalid(format!("Unknown prompt: `{name}`")))?;
                prompt.completers.get(argument).cloned()
            }
            Some("ref/resource") => {
                let uri = reference
                    .get("uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let template = self
                    .templates
                    .iter()
                    .find(|t| t.template == uri)
                    .ok_or_else(|| invalid(format!("Unknown resource template: `{uri}`")))?;
                template.completers.get(argument).cloned()
            }
            _ => {
                return Err(invalid(
                    "`ref` must be a `ref/prompt` or a `ref/resource`".into(),
                ));
            }
        };
        let mut values = completer.map(|c| c(value, context)).unwrap_or_default();
        values.truncate(100);
        Ok(values)
    }
}

/// The MIME type of an MCP Apps view.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The resource serving an MCP Apps view (`ui://<server>/<name>`), with its CSP if configured.
pub(crate) fn ui_resource(
    uri: &str,
    name: &str,
    html: &'static str,
    csp: Option<&Value>,
) -> Resource {
    let mut meta = Map::new();
    if let Some(csp) = csp {
        meta.insert("ui".into(), serde_json::json!({ "csp": csp }));
    }
    let contents = ResourceContents::text(uri, APP_MIME_TYPE, html);
    let contents = if meta.is_empty() {
        contents
    } else {
        contents.with_meta(meta.clone())
    };
    let mut r = Resource::new(uri, name, move |_| {
        let contents = contents.clone();
        async move { Ok(vec![contents]) }
    })
    .mime_type(APP_MIME_TYPE)
    .description(format!("The `{name}` view (MCP Apps)"));
    if !meta.is_empty() {
        r = r.meta(meta);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_variables_between_literals() {
        let t = ResourceTemplate::new("test://template/{id}/data", "t");
        assert_eq!(t.matches("test://template/123/data").unwrap()["id"], "123");
        assert!(t.matches("test://template//data").is_none());
        assert!(t.matches("test://template/1/2/data").is_none());
        assert!(t.matches("test://template/123/datum").is_none());
        let t = ResourceTemplate::new("file:///{dir}/{name}", "t");
        let vars = t.matches("file:///a/b.txt").unwrap();
        assert_eq!(
            (vars["dir"].as_str(), vars["name"].as_str()),
            ("a", "b.txt")
        );
        let t = ResourceTemplate::new("users://{id}", "t");
        assert_eq!(t.matches("users://42").unwrap()["id"], "42");
    }
}
