//! What a server offers beside its tools — resources, resource templates, prompts, and the
//! completion of their arguments (the method groups that serve them are in
//! `core::methods`: `resources`, `prompts`, `completion`). Also the MCP Apps views (`ui://`
//! resources) and how hosts are asked to show them ([`UiResourceMeta`]).

mod bm25;
pub(crate) mod catalog;
pub(crate) mod change;
pub(crate) mod macro_support;
pub mod prompt;
pub(crate) mod record;
pub mod resource;
pub(crate) mod search;
pub(crate) mod selection;
pub(crate) mod skills;
pub(crate) mod views;

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::protocol::wire::{
    CompleteRef, Empty, ListChanged, ResourcesCapability, ServerCapabilities, UriParams,
};
use crate::protocol::{CacheHints, ResourceContents, RpcError, code};

use crate::server::error::StartError;
use crate::server::offerings::catalog::Catalog;
use crate::server::offerings::prompt::{Prompt, PromptHandler};
use crate::server::offerings::resource::{APP_MIME_TYPE, Reader, Resource, ResourceTemplate};
use crate::server::offerings::views::{UI_EXTENSION, UiCsp, UiResourceMeta};
use crate::tool::definition::builder::check_scope;

/// The resources, templates and prompts of a server.
#[derive(Clone, Default)]
pub(crate) struct Offerings {
    pub(crate) resources: Vec<Resource>,
    pub(crate) templates: Vec<ResourceTemplate>,
    pub(crate) prompts: Vec<Prompt>,
    /// The `_meta.ui` of views, by view name (`Server::ui_meta`).
    pub(crate) views: BTreeMap<String, UiResourceMeta>,
    /// The skills of `Server::skills`.
    #[cfg(feature = "skills")]
    pub(crate) skills: Option<std::sync::Arc<skills::load::Skills>>,
}

pub(crate) fn invalid(message: String) -> RpcError {
    RpcError::new(code::INVALID_PARAMS, message)
}

impl Offerings {
    /// Whether a resource, template or prompt declares OAuth scopes.
    pub(crate) fn has_scopes(&self) -> bool {
        self.resources
            .iter()
            .any(|r| !r.required_scopes().is_empty())
            || self
                .templates
                .iter()
                .any(|t| !t.required_scopes().is_empty())
            || self.prompts.iter().any(|p| !p.scopes.is_empty())
    }

    /// Every scope the resources, templates and prompts declare (for `scopes_supported`).
    pub(crate) fn scopes(&self) -> impl Iterator<Item = &String> {
        let resources = self.resources.iter().flat_map(|r| r.required_scopes());
        let templates = self.templates.iter().flat_map(|t| t.required_scopes());
        let prompts = self.prompts.iter().flat_map(|p| &p.scopes);
        resources.chain(templates).chain(prompts)
    }

    /// The scopes reading `uri` needs: its resource's, else the first matching template's.
    pub(crate) fn scopes_of_uri(&self, uri: &str) -> &[String] {
        if let Some(r) = self.resources.iter().find(|r| r.uri() == uri) {
            return r.required_scopes();
        }
        self.templates
            .iter()
            .find(|t| t.read.is_some() && t.matches(uri).is_some())
            .map_or(&[], |t| t.required_scopes())
    }

    /// The scopes getting the prompt `name` needs.
    pub(crate) fn scopes_of_prompt(&self, name: &str) -> &[String] {
        self.prompts
            .iter()
            .find(|p| p.name == name)
            .map_or(&[], |p| &p.scopes)
    }

    fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty() || self.has_skills()
    }

    fn has_completions(&self) -> bool {
        !self.prompts.is_empty() || !self.templates.is_empty()
    }

    /// Whether the server offers an MCP Apps view (a `ui://` resource, a scheme the extension
    /// reserves).
    fn has_views(&self) -> bool {
        self.resources.iter().any(|r| r.uri().starts_with("ui://"))
    }

    /// What the server declares it can do, from what it offers. A server with views declares
    /// the MCP Apps extension (`extensions`, in both protocol versions: SEP-1724's place, where the
    /// extension's hosts and SDKs look).
    pub(crate) fn capabilities(&self) -> ServerCapabilities {
        let changes = ListChanged { list_changed: true };
        let mut extensions = BTreeMap::new();
        if self.has_views() {
            extensions.insert(UI_EXTENSION, Value::Object(Map::new()));
        }
        extensions.extend(self.skills_settings());
        ServerCapabilities {
            extensions: (!extensions.is_empty()).then_some(extensions),
            tools: Some(changes),
            logging: Some(Empty {}),
            resources: self.has_resources().then_some(ResourcesCapability {
                subscribe: true,
                list_changed: true,
            }),
            prompts: (!self.prompts.is_empty()).then_some(changes),
            completions: self.has_completions().then_some(Empty {}),
            tasks: None,
        }
    }

    /// The reader for `uri`, the template's variables, and how long its contents may be
    /// kept. A URI that names no resource is -32002 (a stateless request gets -32602).
    pub(crate) fn reader(
        &self,
        uri: &str,
    ) -> Result<(Reader, HashMap<String, String>, CacheHints), RpcError> {
        if let Some(r) = self.resources.iter().find(|r| r.uri() == uri) {
            return Ok((r.read.clone(), HashMap::new(), r.hints()));
        }
        for t in &self.templates {
            if let (Some(vars), Some(read)) = (t.matches(uri), &t.read) {
                return Ok((read.clone(), vars, t.hints()));
            }
        }
        if let Some((read, hints)) = self.skill_file(uri) {
            return Ok((read, HashMap::new(), hints));
        }
        Err(RpcError::new(
            code::RESOURCE_NOT_FOUND,
            format!("Resource not found: `{uri}`"),
        )
        .with_data(UriParams { uri: uri.into() }))
    }

    /// The handler of a prompt, with its arguments; checks the required ones.
    pub(crate) fn prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<(PromptHandler, Map<String, Value>), RpcError> {
        let prompt = self
            .prompts
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| invalid(format!("Unknown prompt: `{name}`")))?;
        let missing: Vec<String> = prompt
            .arguments
            .iter()
            .filter(|a| a.required && !arguments.contains_key(&a.name))
            .map(|a| format!("`{}`", a.name))
            .collect();
        if !missing.is_empty() {
            return Err(invalid(format!(
                "prompt `{name}` needs the argument(s) {}",
                missing.join(", ")
            )));
        }
        let get = prompt
            .get
            .clone()
            .ok_or_else(|| invalid(format!("prompt `{name}` has no handler")))?;
        Ok((get, arguments))
    }

    /// Every completion value for an argument of a prompt or a template variable.
    pub(crate) fn complete(
        &self,
        reference: &CompleteRef,
        argument: &str,
        value: &str,
        context: &Map<String, Value>,
    ) -> Result<Vec<String>, RpcError> {
        let completer = match reference {
            CompleteRef::Prompt { name } => {
                let prompt = self
                    .prompts
                    .iter()
                    .find(|p| &p.name == name)
                    .ok_or_else(|| invalid(format!("Unknown prompt: `{name}`")))?;
                prompt.completers.get(argument).cloned()
            }
            CompleteRef::Resource { uri } => {
                let template = self
                    .templates
                    .iter()
                    .find(|t| &t.template == uri)
                    .ok_or_else(|| invalid(format!("Unknown resource template: `{uri}`")))?;
                template.completers.get(argument).cloned()
            }
        };
        Ok(completer.map(|c| c(value, context)).unwrap_or_default())
    }
}

/// How long a view's HTML stays fresh in a client's cache (2026-07-28): it is fixed at build.
const VIEW_TTL: Duration = Duration::from_secs(300);

impl Offerings {
    /// Adds the `ui://` resource of every view a tool links to (unless one with its URI was
    /// given), with its `_meta.ui`: its own from `Server::ui_meta`, else the server's CSP. Also
    /// checks the scopes the offerings declare.
    pub(crate) fn add_views(
        &mut self,
        catalog: &Catalog,
        server_csp: Option<&UiCsp>,
    ) -> Result<(), StartError> {
        let mut problems = Vec::new();
        let mut used = Vec::new();
        for entry in catalog.entries() {
            let Some((uri, name, html)) = entry.def.ui() else {
                continue;
            };
            used.push(name);
            if self.resources.iter().any(|r| r.uri() == uri) {
                continue;
            }
            let mut meta = self.views.get(name).cloned().unwrap_or_default();
            if meta.csp.is_none() {
                meta.csp = server_csp.cloned();
            }
            problems.extend(meta.problems(name));
            self.resources.push(ui_resource(uri, name, html, &meta));
        }
        for name in self.views.keys() {
            if !used.contains(&name.as_str()) {
                problems.push(format!(
                    "`ui_meta` names the view `{name}`, but no tool has `ui = \"{name}\"`"
                ));
            }
        }
        for scope in self.scopes() {
            if let Err(why) = check_scope(scope) {
                problems.push(why);
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(StartError::new(problems))
        }
    }
}

/// The resource serving an MCP Apps view (`ui://<server>/<name>`) with its `_meta.ui`, on
/// the listing and on the contents alike (the extension has hosts prefer the contents').
pub(crate) fn ui_resource(
    uri: &str,
    name: &str,
    html: &'static str,
    ui: &UiResourceMeta,
) -> Resource {
    let meta: Option<Map<String, Value>> = match serde_json::to_value(ui) {
        Ok(Value::Object(m)) if !m.is_empty() => {
            Some(Map::from_iter([("ui".to_owned(), Value::Object(m))]))
        }
        _ => None,
    };
    let mut contents = ResourceContents::text(uri, APP_MIME_TYPE, html);
    if let Some(meta) = &meta {
        contents = contents.with_meta(meta.clone());
    }
    let mut r = Resource::new(uri, name, move |_| {
        let contents = contents.clone();
        async move { Ok(vec![contents]) }
    })
    .mime_type(APP_MIME_TYPE)
    .description(format!("The `{name}` view (MCP Apps)"))
    .cache(CacheHints::public(VIEW_TTL));
    if let Some(meta) = meta {
        r = r.meta(meta);
    }
    r
}

/// Without skills (the `skills` feature) a server serves none.
#[cfg(not(feature = "skills"))]
impl Offerings {
    pub(crate) fn has_skills(&self) -> bool {
        false
    }

    pub(crate) fn add_skills(&mut self, _: &std::path::Path) -> Result<(), Vec<String>> {
        Err(vec![
            "this server was built without skills (the `skills` feature of mcp-tool)".to_owned(),
        ])
    }

    fn skills_settings(&self) -> Option<(&'static str, Value)> {
        None
    }

    fn skill_file(&self, _: &str) -> Option<(Reader, CacheHints)> {
        None
    }
}
