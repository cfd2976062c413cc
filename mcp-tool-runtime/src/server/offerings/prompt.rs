//! Prompts: templates of messages a client can list and render, built with a builder and
//! given to `Server::prompt`.
//!
//! ```
//! use mcp_tool::Server;
//! use mcp_tool::prompt::{Prompt, PromptMessage};
//!
//! let server = Server::new("docs", "1.0.0").prompt(
//!     Prompt::new("greet")
//!         .description("Greet someone")
//!         .argument("name", "Who to greet", true)
//!         .get(|request| async move {
//!             let name = request.argument("name").unwrap_or("you").to_owned();
//!             Ok(vec![PromptMessage::user(format!("Say hello to {name}"))].into())
//!         }),
//! );
//! # let _ = server;
//! ```

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::protocol::wire::{self, Icon, PromptArgument};
use crate::protocol::{Content, Role, RpcError};

use crate::tool::extract::TypeMap;
use crate::tool::{Ctx, ToolError};

use crate::server::offerings::resource::{Completer, HandlerFuture, IntoHandlerError};

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
}

/// What a prompt gives: messages, and optionally a description (`GetPromptResult`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PromptResult {
    /// A description of this rendering of the prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
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

/// A request to render a prompt.
#[derive(Debug, Clone)]
pub struct PromptRequest {
    pub(crate) arguments: Map<String, Value>,
    pub(crate) ctx: Ctx,
    /// The values given to the server with `Server::state` (for the context values of
    /// prompts defined with `#[prompt]`).
    pub(crate) states: Arc<TypeMap>,
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

    /// The request's context: its client, progress, logging, input from the client
    /// (elicitation, sampling, roots) as a tool has them.
    pub fn ctx(&self) -> &Ctx {
        &self.ctx
    }
}

/// Renders a prompt: refuses the request at once (bad arguments), or gives the future of
/// its messages.
pub(crate) type PromptHandler =
    Arc<dyn Fn(PromptRequest) -> Result<HandlerFuture<PromptResult>, RpcError> + Send + Sync>;

/// A prompt template the client can list and render.
#[derive(Clone)]
pub struct Prompt {
    pub(crate) name: String,
    title: Option<String>,
    description: Option<String>,
    icons: Vec<Icon>,
    pub(crate) arguments: Vec<PromptArgument>,
    pub(crate) get: Option<PromptHandler>,
    pub(crate) completers: HashMap<String, Completer>,
    pub(crate) scopes: Vec<String>,
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
            icons: Vec::new(),
            arguments: Vec::new(),
            get: None,
            completers: HashMap::new(),
            scopes: Vec::new(),
        }
    }

    /// The OAuth scopes a caller needs to see the prompt listed and to get it, as
    /// `#[tool(scopes = […])]` for tools (each a scope token: visible ASCII without spaces,
    /// `"` or `\\`; `Server::build` refuses others).
    #[must_use]
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// A human-readable title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// An icon for the prompt.
    #[must_use]
    pub fn icon(mut self, icon: Icon) -> Self {
        self.icons.push(icon);
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
        self.get = Some(Arc::new(move |r| Ok(Box::pin(get(r)))));
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

    /// The prompt's entry in `prompts/list`.
    pub(crate) fn wire(&self) -> wire::Prompt<'_> {
        wire::Prompt {
            name: &self.name,
            title: self.title.as_deref(),
            description: self.description.as_deref(),
            arguments: &self.arguments,
            icons: &self.icons,
        }
    }
}

/// What a `#[prompt]` function may return: text (one user message), a [`PromptMessage`],
/// messages, a whole [`PromptResult`], or a `Result` of one of these whose error fails the
/// `prompts/get` request (a JSON-RPC error with the error's text).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a prompt",
    label = "not convertible into a prompt's messages",
    note = "return text (`String`, one user message), `PromptMessage`, `Vec<PromptMessage>`, \
            `PromptResult`, or `Result<T, E>` of these"
)]
pub trait IntoPromptResult {
    /// Converts the value into the prompt's messages, or the error that fails the request.
    fn into_prompt_result(self) -> Result<PromptResult, ToolError>;
}

impl IntoPromptResult for PromptResult {
    fn into_prompt_result(self) -> Result<PromptResult, ToolError> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<PromptResult, ToolError> {
        Ok(self.into())
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<PromptResult, ToolError> {
        Ok(vec![self].into())
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<PromptResult, ToolError> {
        PromptMessage::user(self).into_prompt_result()
    }
}

impl IntoPromptResult for &'static str {
    fn into_prompt_result(self) -> Result<PromptResult, ToolError> {
        PromptMessage::user(self).into_prompt_result()
    }
}

impl<T: IntoPromptResult, E: IntoHandlerError> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<PromptResult, ToolError> {
        self.map_err(IntoHandlerError::into_handler_error)?
            .into_prompt_result()
    }
}
