//! Resources and resource templates: what a server offers to read beside its tools, built
//! with builders and given to `Server::resource` and `Server::resource_template`.
//!
//! ```
//! use mcp_tool::Server;
//! use mcp_tool::content::ResourceContents;
//! use mcp_tool::resource::{Resource, ResourceTemplate};
//!
//! let server = Server::new("docs", "1.0.0")
//!     .resource(Resource::text("docs://readme", "readme", "text/markdown", "# Hello"))
//!     .resource_template(
//!         ResourceTemplate::new("docs://page/{slug}", "page").read(|request| async move {
//!             let slug = request.var("slug").unwrap_or_default().to_owned();
//!             Ok(vec![ResourceContents::text(request.uri(), "text/plain", format!("page {slug}"))])
//!         }),
//!     );
//! # let _ = server;
//! ```

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use std::time::Duration;

use crate::protocol::wire::{self, Icon};
use crate::protocol::{CacheHints, ResourceContents, RpcError};
use crate::tool::extract::TypeMap;
use crate::tool::{Ctx, Json, ToolError};

/// How long fixed contents stay fresh.
const FIXED_TTL: Duration = Duration::from_secs(300);

/// The MIME type of an MCP Apps view.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

pub use crate::server::offerings::views::{UI_EXTENSION, UiResourceMeta};

/// What a reader or a prompt handler returns.
pub type HandlerFuture<T> = Pin<Box<dyn Future<Output = Result<T, ToolError>> + Send>>;

/// Reads a resource: refuses the request at once (a template variable that does not parse),
/// or gives the future of its contents.
pub(crate) type Reader = Arc<
    dyn Fn(ResourceRequest) -> Result<HandlerFuture<Vec<ResourceContents>>, RpcError> + Send + Sync,
>;
pub(crate) type Completer = Arc<dyn Fn(&str, &Map<String, Value>) -> Vec<String> + Send + Sync>;

/// A request to read a resource.
#[derive(Debug, Clone)]
pub struct ResourceRequest {
    pub(crate) uri: String,
    pub(crate) vars: HashMap<String, String>,
    pub(crate) ctx: Ctx,
    /// The values given to the server with `Server::state` (for the context values of
    /// resources defined with `#[resource]` and `#[resource_template]`).
    pub(crate) states: Arc<TypeMap>,
}

impl ResourceRequest {
    /// The URI asked for.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// A variable of the matched URI template (`{id}` in `test://template/{id}/data`), as the
    /// URI writes it: one segment (never a `/`), its `%XX` escapes not decoded. (The
    /// parameters of a `#[resource_template]` function are decoded, and a `%2F` among them
    /// refused.)
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// The request's context: its client, progress, logging, input from the client
    /// (elicitation, sampling, roots) as a tool has them.
    pub fn ctx(&self) -> &Ctx {
        &self.ctx
    }
}

/// Fields common to resources and templates.
#[derive(Clone, Default)]
struct Described {
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
    icons: Vec<Icon>,
    meta: Option<Map<String, Value>>,
    scopes: Vec<String>,
}

impl Described {
    fn wire(&self) -> wire::Described<'_> {
        wire::Described {
            name: &self.name,
            title: self.title.as_deref(),
            description: self.description.as_deref(),
            mime_type: self.mime_type.as_deref(),
            icons: &self.icons,
            meta: self.meta.as_ref(),
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

        /// An icon for it.
        #[must_use]
        pub fn icon(mut self, icon: Icon) -> Self {
            self.described.icons.push(icon);
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

        /// The OAuth scopes a caller needs to see it listed and to read it, as
        /// `#[tool(scopes = […])]` for tools (each a scope token: visible ASCII without
        /// spaces, `"` or `\\`; `Server::build` refuses others).
        #[must_use]
        pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
            self.described
                .scopes
                .extend(scopes.into_iter().map(Into::into));
            self
        }

        /// The OAuth scopes a caller needs to see and read it.
        pub(crate) fn required_scopes(&self) -> &[String] {
            &self.described.scopes
        }
    };
}

/// A resource with a fixed URI.
#[derive(Clone)]
pub struct Resource {
    uri: String,
    described: Described,
    pub(crate) size: Option<u64>,
    pub(crate) read: Reader,
    cache: Option<CacheHints>,
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
        Self::with_reader(
            uri.into(),
            name.into(),
            Arc::new(move |r| Ok(Box::pin(read(r)))),
        )
    }

    /// A resource read by `read`.
    pub(crate) fn with_reader(uri: String, name: String, read: Reader) -> Self {
        Resource {
            uri,
            described: Described {
                name,
                ..Described::default()
            },
            size: None,
            read,
            cache: None,
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
        // Fixed contents are the same for everyone and change only when the resource is
        // replaced (which `resources/list_changed` tells).
        r.cache = Some(CacheHints::public(FIXED_TTL));
        r
    }

    /// How long, and for whom, a client may keep what `resources/read` gives (2026-07-28).
    /// Default: public and 5 minutes for fixed text or bytes; not to be kept (private, 0) for
    /// contents a reader computes.
    #[must_use]
    pub fn cache(mut self, hints: CacheHints) -> Self {
        self.cache = Some(hints);
        self
    }

    pub(crate) fn hints(&self) -> CacheHints {
        self.cache.unwrap_or(CacheHints::NONE)
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    described_setters!();

    /// The resource's entry in `resources/list`.
    pub(crate) fn wire(&self) -> wire::Resource<'_> {
        wire::Resource {
            uri: &self.uri,
            described: self.described.wire(),
            size: self.size,
        }
    }
}

/// A family of resources named by an RFC 6570 URI template (`test://template/{id}/data`).
#[derive(Clone)]
pub struct ResourceTemplate {
    pub(crate) template: String,
    parts: Vec<TemplatePart>,
    described: Described,
    pub(crate) read: Option<Reader>,
    pub(crate) completers: HashMap<String, Completer>,
    cache: Option<CacheHints>,
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
            cache: None,
        }
    }

    /// How long, and for whom, a client may keep what reading a URI of the template gives
    /// (2026-07-28; default: not to be kept).
    #[must_use]
    pub fn cache(mut self, hints: CacheHints) -> Self {
        self.cache = Some(hints);
        self
    }

    pub(crate) fn hints(&self) -> CacheHints {
        self.cache.unwrap_or(CacheHints::NONE)
    }

    /// How to read a URI that matches the template.
    #[must_use]
    pub fn read<F, Fut>(mut self, read: F) -> Self
    where
        F: Fn(ResourceRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ToolError>> + Send + 'static,
    {
        self.read = Some(Arc::new(move |r| Ok(Box::pin(read(r)))));
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
    pub(crate) fn matches(&self, uri: &str) -> Option<HashMap<String, String>> {
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

    /// The template's entry in `resources/templates/list`.
    pub(crate) fn wire(&self) -> wire::ResourceTemplate<'_> {
        wire::ResourceTemplate {
            uri_template: &self.template,
            described: self.described.wire(),
        }
    }
}

/// The error half of a `Result` returned by a `#[prompt]` or `#[resource]` function: it fails
/// the request with a JSON-RPC error carrying its text, as a builder's handler failing with a
/// [`ToolError`] does. Implemented for [`ToolError`] and every `Display` type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the error type of a prompt or a resource",
    note = "use `ToolError`, or any type that implements `std::fmt::Display`"
)]
pub trait IntoHandlerError {
    /// Converts the error.
    fn into_handler_error(self) -> ToolError;
}

impl IntoHandlerError for ToolError {
    fn into_handler_error(self) -> ToolError {
        self
    }
}

#[diagnostic::do_not_recommend]
impl<E: fmt::Display> IntoHandlerError for E {
    fn into_handler_error(self) -> ToolError {
        ToolError::msg(self.to_string())
    }
}

/// What a `#[resource]` or `#[resource_template]` function may return: text (`String`),
/// bytes (`Vec<u8>`, served base64-encoded as a blob), [`Json<T>`] (its JSON text), one or
/// more [`ResourceContents`], or a `Result` of one of these whose error fails the read (a
/// JSON-RPC error with the error's text).
///
/// Text, bytes and JSON carry the URI that was read and the MIME type the attribute gives
/// (`mime_type = "…"`), else their own: `text/plain`, `application/octet-stream`,
/// `application/json`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a resource",
    label = "not convertible into a resource's contents",
    note = "return text (`String`), bytes (`Vec<u8>`), `Json<T>`, `ResourceContents`, \
            `Vec<ResourceContents>`, or `Result<T, E>` of these"
)]
pub trait IntoResourceContents {
    /// The MIME type of the contents when the attribute gives none (listed with the resource).
    const MIME_TYPE: Option<&'static str> = None;

    /// Converts the value into the contents of the resource `uri`, of type `mime_type` (the
    /// attribute's) when given; or the error that fails the read.
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ToolError>;
}

impl IntoResourceContents for String {
    const MIME_TYPE: Option<&'static str> = Some("text/plain");

    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ToolError> {
        let mime_type = mime_type.or(Self::MIME_TYPE).unwrap_or_default();
        Ok(vec![ResourceContents::text(uri, mime_type, self)])
    }
}

impl IntoResourceContents for &'static str {
    const MIME_TYPE: Option<&'static str> = Some("text/plain");

    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ToolError> {
        self.to_owned().into_contents(uri, mime_type)
    }
}

impl IntoResourceContents for Vec<u8> {
    const MIME_TYPE: Option<&'static str> = Some("application/octet-stream");

    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ToolError> {
        let mime_type = mime_type.or(Self::MIME_TYPE).unwrap_or_default();
        Ok(vec![ResourceContents::blob(uri, mime_type, self)])
    }
}

impl<T: Serialize> IntoResourceContents for Json<T> {
    const MIME_TYPE: Option<&'static str> = Some("application/json");

    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ToolError> {
        let text = serde_json::to_string(&self.0)
            .map_err(|e| ToolError::msg(format!("failed to serialize `{uri}`: {e}")))?;
        // Its text, typed JSON unless the attribute says otherwise.
        text.into_contents(uri, mime_type.or(Self::MIME_TYPE))
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<ResourceContents>, ToolError> {
        Ok(vec![self])
    }
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<ResourceContents>, ToolError> {
        Ok(self)
    }
}

impl<T: IntoResourceContents, E: IntoHandlerError> IntoResourceContents for Result<T, E> {
    const MIME_TYPE: Option<&'static str> = T::MIME_TYPE;

    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ToolError> {
        self.map_err(IntoHandlerError::into_handler_error)?
            .into_contents(uri, mime_type)
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
