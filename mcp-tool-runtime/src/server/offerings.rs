//! What a server offers beside its tools — resources, resource templates, prompts, and the
//! completion of their arguments — and the method groups that serve them: `resources/*`,
//! `prompts/*` and `completion/complete`, each refused with -32601 when the server declared
//! no such capability. Also the MCP Apps views (`ui://` resources) and how hosts are asked to
//! show them ([`UiResourceMeta`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::protocol::wire::{
    CompleteParams, CompleteRef, CompleteResult, Completion, Empty, GetPromptParams, ListChanged,
    ListPage, ListParams, Listing, ReadResourceResult, ResourcesCapability, ServerCapabilities,
    UriParams,
};
use crate::protocol::{CacheHints, ResourceContents, RpcError, code, jsonrpc};
use crate::tool::input::{Finish, InputRound, RoundEnd, UntilInput};
use crate::tool::{Ctx, ToolError, logging};

use super::Server;
use super::catalog::{Catalog, page_index};
use super::error::StartError;
use super::prompt::{Prompt, PromptHandler, PromptRequest};
use super::request::{Req, input_required, response};
use super::resource::{
    APP_MIME_TYPE, HandlerFuture, Reader, Resource, ResourceRequest, ResourceTemplate,
};
use super::session::{Session, lock};
use super::state::Binding;

/// The most completion values one answer carries (the specification's limit).
const MAX_COMPLETIONS: usize = 100;

/// The MCP Apps extension's identifier (`capabilities.extensions`).
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// Whether a client's capabilities declare the MCP Apps extension:
/// `capabilities.extensions["io.modelcontextprotocol/ui"]` is an object (in 2025-11-25 from
/// `initialize`, in 2026-07-28 from each request's `_meta` clientCapabilities).
pub(crate) fn declares_ui(capabilities: &Value) -> bool {
    capabilities
        .get("extensions")
        .and_then(|e| e.get(UI_EXTENSION))
        .is_some_and(Value::is_object)
}

/// The resources, templates and prompts of a server.
#[derive(Clone, Default)]
pub(crate) struct Offerings {
    pub(crate) resources: Vec<Resource>,
    pub(crate) templates: Vec<ResourceTemplate>,
    pub(crate) prompts: Vec<Prompt>,
    /// The `_meta.ui` of views, by view name (`Server::ui_meta`).
    pub(crate) views: BTreeMap<String, UiResourceMeta>,
}

fn invalid(message: String) -> RpcError {
    RpcError::new(code::INVALID_PARAMS, message)
}

impl Offerings {
    fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty()
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
    /// the MCP Apps extension (`extensions`, in both eras: SEP-1724's place, where the
    /// extension's hosts and SDKs look).
    pub(crate) fn capabilities(&self) -> ServerCapabilities {
        let changes = ListChanged { list_changed: true };
        ServerCapabilities {
            extensions: self
                .has_views()
                .then(|| BTreeMap::from([(UI_EXTENSION, Empty {})])),
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
    fn reader(&self, uri: &str) -> Result<(Reader, HashMap<String, String>, CacheHints), RpcError> {
        if let Some(r) = self.resources.iter().find(|r| r.uri() == uri) {
            return Ok((r.read.clone(), HashMap::new(), r.hints()));
        }
        for t in &self.templates {
            if let (Some(vars), Some(read)) = (t.matches(uri), &t.read) {
                return Ok((read.clone(), vars, t.hints()));
            }
        }
        Err(RpcError::new(
            code::RESOURCE_NOT_FOUND,
            format!("Resource not found: `{uri}`"),
        )
        .with_data(UriParams { uri: uri.into() }))
    }

    /// The handler of a prompt, with its arguments; checks the required ones.
    fn prompt(
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
    fn complete(
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

/// The domains an MCP Apps view may reach (`_meta.ui.csp`): each list a host turns into CSP
/// directives. A list left out is the host's restrictive default (none); an empty list says
/// so explicitly.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UiCsp {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) connect_domains: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) resource_domains: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) frame_domains: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) base_uri_domains: Option<Vec<String>>,
}

impl UiCsp {
    /// Every domain given, for checking.
    fn domains(&self) -> impl Iterator<Item = &String> {
        [
            &self.connect_domains,
            &self.resource_domains,
            &self.frame_domains,
            &self.base_uri_domains,
        ]
        .into_iter()
        .flatten()
        .flatten()
    }
}

/// The browser features a view asks for (`_meta.ui.permissions`); hosts may grant them
/// through the iframe's `allow` attribute.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct UiPermissions {
    #[serde(skip_serializing_if = "Option::is_none")]
    camera: Option<Empty>,
    #[serde(skip_serializing_if = "Option::is_none")]
    microphone: Option<Empty>,
    #[serde(skip_serializing_if = "Option::is_none")]
    geolocation: Option<Empty>,
    #[serde(skip_serializing_if = "Option::is_none")]
    clipboard_write: Option<Empty>,
}

/// How a host should show an MCP Apps view: the `_meta.ui` of its `ui://` resource, as the
/// extension defines it (`McpUiResourceMeta`), given to [`Server::ui_meta`] for the view of
/// `#[tool(ui = "name")]`. It is served both in `resources/list` (for hosts to review when
/// they connect) and on the contents of `resources/read`.
///
/// ```
/// use mcp_tool::Server;
/// use mcp_tool::resource::UiResourceMeta;
///
/// let server = Server::new("weather", "1.0.0").ui_meta(
///     "forecast",
///     UiResourceMeta::new()
///         .connect_domains(["https://api.example.com"])
///         .resource_domains(["https://cdn.example.com"])
///         .prefers_border(true),
/// );
/// # let _ = server;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiResourceMeta {
    #[serde(skip_serializing_if = "Option::is_none")]
    csp: Option<UiCsp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    permissions: Option<UiPermissions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    domain: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prefers_border: Option<bool>,
}

fn strings<I: IntoIterator<Item = S>, S: Into<String>>(items: I) -> Option<Vec<String>> {
    Some(items.into_iter().map(Into::into).collect())
}

impl UiResourceMeta {
    /// Nothing said: the host's defaults (no external domain, its own origin and border).
    pub fn new() -> Self {
        UiResourceMeta::default()
    }

    fn csp_mut(&mut self) -> &mut UiCsp {
        self.csp.get_or_insert_with(UiCsp::default)
    }

    fn permissions_mut(&mut self) -> &mut UiPermissions {
        self.permissions.get_or_insert_with(UiPermissions::default)
    }

    /// Origins the view may reach with `fetch`, XHR and WebSocket (`csp.connectDomains`, CSP
    /// `connect-src`). An empty list says explicitly that it reaches none.
    #[must_use]
    pub fn connect_domains<I: IntoIterator<Item = S>, S: Into<String>>(mut self, d: I) -> Self {
        self.csp_mut().connect_domains = strings(d);
        self
    }

    /// Origins the view may load scripts, styles, images, fonts and media from
    /// (`csp.resourceDomains`; `https://*.example.com` covers subdomains).
    #[must_use]
    pub fn resource_domains<I: IntoIterator<Item = S>, S: Into<String>>(mut self, d: I) -> Self {
        self.csp_mut().resource_domains = strings(d);
        self
    }

    /// Origins the view may embed in iframes of its own (`csp.frameDomains`, CSP `frame-src`;
    /// none without it).
    #[must_use]
    pub fn frame_domains<I: IntoIterator<Item = S>, S: Into<String>>(mut self, d: I) -> Self {
        self.csp_mut().frame_domains = strings(d);
        self
    }

    /// Base URIs the view's document may set (`csp.baseUriDomains`, CSP `base-uri`; only its
    /// own origin without it).
    #[must_use]
    pub fn base_uri_domains<I: IntoIterator<Item = S>, S: Into<String>>(mut self, d: I) -> Self {
        self.csp_mut().base_uri_domains = strings(d);
        self
    }

    /// Asks for the camera (`permissions.camera`).
    #[must_use]
    pub fn camera(mut self) -> Self {
        self.permissions_mut().camera = Some(Empty {});
        self
    }

    /// Asks for the microphone (`permissions.microphone`).
    #[must_use]
    pub fn microphone(mut self) -> Self {
        self.permissions_mut().microphone = Some(Empty {});
        self
    }

    /// Asks for the user's location (`permissions.geolocation`).
    #[must_use]
    pub fn geolocation(mut self) -> Self {
        self.permissions_mut().geolocation = Some(Empty {});
        self
    }

    /// Asks to write to the clipboard (`permissions.clipboardWrite`).
    #[must_use]
    pub fn clipboard_write(mut self) -> Self {
        self.permissions_mut().clipboard_write = Some(Empty {});
        self
    }

    /// A dedicated origin for the view's sandbox (`domain`), for OAuth callbacks or API
    /// allowlists. Its form is the host's to define: see the host's documentation.
    #[must_use]
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.domain = Some(domain.into());
        self
    }

    /// Whether the host should draw a border and background around the view
    /// (`prefersBorder`; hosts differ when it is left out).
    #[must_use]
    pub fn prefers_border(mut self, prefers: bool) -> Self {
        self.prefers_border = Some(prefers);
        self
    }

    /// What is wrong with the domains given: each must be an origin such as
    /// `https://api.example.com` (no spaces, quotes, `;` or `,`, which would break the CSP
    /// a host builds from it).
    fn problems(&self, view: &str) -> Vec<String> {
        let csp = self.csp.iter().flat_map(UiCsp::domains);
        csp.chain(self.domain.as_ref())
            .filter(|d| {
                d.is_empty()
                    || d.chars()
                        .any(|c| c.is_whitespace() || matches!(c, ';' | ',' | '\'' | '"'))
            })
            .map(|d| {
                format!(
                    "view `{view}`: {d:?} is not a domain a CSP can carry (an origin such as `https://api.example.com`)"
                )
            })
            .collect()
    }
}

impl Server {
    /// How hosts should show the MCP Apps view `name` (of `#[tool(ui = "name")]`): its CSP
    /// domains, the browser permissions it asks for, a dedicated origin and whether it
    /// wants a border, served as its `ui://` resource's `_meta.ui`. A CSP given here
    /// replaces [`Server::ui_csp`] for this view. A name no tool's view has stops the server
    /// from starting, as does a domain no CSP can carry.
    pub fn ui_meta(mut self, name: impl Into<String>, meta: UiResourceMeta) -> Self {
        self.offerings.views.insert(name.into(), meta);
        self
    }
}

impl Offerings {
    /// Adds the `ui://` resource of every view a tool links to (unless one with its URI was
    /// given), with its `_meta.ui`: its own from `Server::ui_meta`, else the server's CSP.
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

impl Session {
    /// The `resources/*` methods.
    pub(crate) fn resources(
        self: &Arc<Self>,
        req: &Req<'_>,
        method: &str,
        params: Option<&RawValue>,
    ) {
        let id = req.id();
        let declared = self.server.shared.capabilities.resources.is_some();
        if !self.offered(id, declared, method, "resources") {
            return;
        }
        let response = match method {
            "resources/list" => self.list(
                req,
                params,
                |o, range| {
                    Listing::Resources(o.resources[range].iter().map(Resource::wire).collect())
                },
                |o| o.resources.len(),
            ),
            "resources/templates/list" => self.list(
                req,
                params,
                |o, range| {
                    Listing::ResourceTemplates(
                        o.templates[range]
                            .iter()
                            .map(ResourceTemplate::wire)
                            .collect(),
                    )
                },
                |o| o.templates.len(),
            ),
            "resources/read" => return self.read_resource(req, params),
            subscribe => {
                let on = subscribe == "resources/subscribe";
                jsonrpc::response(id, self.subscribe(params, on))
            }
        };
        self.respond(id, response);
    }

    /// The `prompts/*` methods.
    pub(crate) fn prompts(
        self: &Arc<Self>,
        req: &Req<'_>,
        method: &str,
        params: Option<&RawValue>,
    ) {
        let id = req.id();
        let declared = self.server.shared.capabilities.prompts.is_some();
        if !self.offered(id, declared, method, "prompts") {
            return;
        }
        if method == "prompts/get" {
            return self.get_prompt(req, params);
        }
        let response = self.list(
            req,
            params,
            |o, range| Listing::Prompts(o.prompts[range].iter().map(Prompt::wire).collect()),
            |o| o.prompts.len(),
        );
        self.respond(id, response);
    }

    /// `completion/complete`: at most 100 values, with the real total and whether there are
    /// more.
    pub(crate) fn completion(&self, req: &Req<'_>, params: Option<&RawValue>) {
        let id = req.id();
        let declared = self.server.shared.capabilities.completions.is_some();
        if !self.offered(id, declared, "completion/complete", "completions") {
            return;
        }
        let values = jsonrpc::parse_params::<CompleteParams>(params).and_then(|p| {
            let p = p.ok_or_else(|| invalid("`completion/complete` needs params".into()))?;
            let context = p.context.unwrap_or_default().arguments;
            self.server.offerings().complete(
                &p.reference,
                &p.argument.name,
                &p.argument.value,
                &context,
            )
        });
        let shown = values
            .as_ref()
            .map_or(&[][..], |v| &v[..v.len().min(MAX_COMPLETIONS)]);
        let outcome = values.as_ref().map(|all| CompleteResult {
            completion: Completion {
                values: shown,
                total: Some(all.len()),
                has_more: all.len() > shown.len(),
            },
        });
        let outcome = outcome.map_err(Clone::clone);
        self.respond(
            id,
            response(id, self.era(req), &self.server.shared.info, outcome, None),
        );
    }

    /// One page of a list of offerings, paginated like `tools/list`.
    fn list(
        &self,
        req: &Req<'_>,
        params: Option<&RawValue>,
        page: impl FnOnce(&Offerings, std::ops::Range<usize>) -> Listing<'_>,
        len: impl FnOnce(&Offerings) -> usize,
    ) -> String {
        let id = req.id();
        let params = match jsonrpc::parse_params::<ListParams<'_>>(params) {
            Ok(p) => p,
            Err(e) => return jsonrpc::error_response(id, &e),
        };
        let offerings = self.server.offerings();
        let size = self.server.catalog().page_size();
        let total = len(&offerings);
        let pages = total.div_ceil(size).max(1);
        let Some(index) = page_index(params.as_ref().and_then(|p| p.cursor.as_deref()), pages)
        else {
            return jsonrpc::error_response(id, &invalid("Invalid cursor".into()));
        };
        let start = index * size;
        let end = (start + size).min(total);
        let result = ListPage {
            items: page(&offerings, start..end),
            next_cursor: (end < total).then(|| (index + 1).to_string()),
        };
        response(
            id,
            self.era(req),
            &self.server.shared.info,
            Ok(result),
            Some(self.server.shared.hints),
        )
    }

    /// `resources/read`: the reader runs in a task of its own; a stateless request whose
    /// reader asks for input ends with the input requests.
    fn read_resource(self: &Arc<Self>, req: &Req<'_>, params: Option<&RawValue>) {
        let id = req.id();
        let found = jsonrpc::parse_params::<UriParams<'_>>(params).and_then(|p| {
            let p = p.ok_or_else(|| invalid("`resources/read` needs a `uri`".into()))?;
            let uri = p.uri.into_owned();
            let (read, vars, hints) = self.server.offerings().reader(&uri).map_err(|mut e| {
                // 2026-07-28 names a missing resource with -32602 (and keeps `data.uri`).
                if req.stateless.is_some() && e.code == code::RESOURCE_NOT_FOUND {
                    e.code = code::INVALID_PARAMS;
                }
                e
            })?;
            let round = self.round_of(req, params, "resources/read", &uri, &Empty {})?;
            Ok((read, uri, vars, hints, round))
        });
        let (read, uri, vars, hints, round) = match found {
            Ok(found) => found,
            Err(e) => return self.respond(id, jsonrpc::error_response(id, &e)),
        };
        // An answer that needed input is the client's own: not for anyone to reuse.
        let hints = if round.as_ref().is_some_and(|(r, _)| r.answered()) {
            CacheHints::NONE
        } else {
            hints
        };
        let (round, binding) = round.unzip();
        let ctx = self.call_context(Arc::from(uri.as_str()), req, None, round);
        let request = ResourceRequest {
            uri,
            vars,
            ctx: ctx.clone(),
        };
        let (session, era, id_owned) = (self.clone(), self.era(req), id.to_owned());
        self.spawn_tracked(id, ctx.cancellation().clone(), async move {
            let finish = run_handler(&ctx, read(request)).await;
            session.handler_response(&id_owned, &ctx, era, binding.as_ref(), finish, |contents| {
                (ReadResourceResult { contents }, Some(hints))
            })
        });
    }

    /// `prompts/get`, like `resources/read`.
    fn get_prompt(self: &Arc<Self>, req: &Req<'_>, params: Option<&RawValue>) {
        let id = req.id();
        let found = jsonrpc::parse_params::<GetPromptParams>(params).and_then(|p| {
            let p = p.ok_or_else(|| invalid("`prompts/get` needs a `name`".into()))?;
            let (get, arguments) = self.server.offerings().prompt(&p.name, p.arguments)?;
            let round = self.round_of(req, params, "prompts/get", &p.name, &arguments)?;
            Ok((get, p.name, arguments, round))
        });
        let (get, name, arguments, round) = match found {
            Ok(found) => found,
            Err(e) => return self.respond(id, jsonrpc::error_response(id, &e)),
        };
        let (round, binding) = round.unzip();
        let ctx = self.call_context(Arc::from(name.as_str()), req, None, round);
        let request = PromptRequest {
            arguments,
            ctx: ctx.clone(),
        };
        let (session, era, id_owned) = (self.clone(), self.era(req), id.to_owned());
        self.spawn_tracked(id, ctx.cancellation().clone(), async move {
            let finish = run_handler(&ctx, get(request)).await;
            session.handler_response(&id_owned, &ctx, era, binding.as_ref(), finish, |result| {
                (result, None)
            })
        });
    }

    /// The response to a resource reader or a prompt handler.
    fn handler_response<T, R: Serialize>(
        &self,
        id: &str,
        ctx: &Ctx,
        era: crate::protocol::Era,
        binding: Option<&Binding>,
        finish: Finish<Result<T, ToolError>>,
        shape: impl FnOnce(T) -> (R, Option<CacheHints>),
    ) -> String {
        let end = ctx.state.input.as_ref().map(InputRound::end);
        match (finish, end) {
            (Finish::NeedsInput, Some(end)) => match binding {
                Some(binding) => input_required(self, id, binding, end),
                None => jsonrpc::error_response(id, &waits_for_nothing()),
            },
            (Finish::NeedsInput, None) => jsonrpc::error_response(id, &waits_for_nothing()),
            (
                Finish::Done(Err(_)),
                Some(RoundEnd {
                    refusal: Some(e), ..
                }),
            ) => jsonrpc::error_response(id, &e),
            (Finish::Done(Err(e)), _) => {
                jsonrpc::error_response(id, &RpcError::new(code::INTERNAL_ERROR, e.render()))
            }
            (Finish::Done(Ok(value)), _) => {
                let (result, hints) = shape(value);
                response(id, era, &self.server.shared.info, Ok(result), hints)
            }
        }
    }

    fn subscribe(&self, params: Option<&RawValue>, on: bool) -> Result<Empty, RpcError> {
        let p = jsonrpc::parse_params::<UriParams<'_>>(params)?
            .ok_or_else(|| invalid("a `uri` is needed".into()))?;
        let mut subscriptions = lock(&self.subscriptions);
        if on {
            subscriptions.insert(p.uri.into_owned());
        } else {
            subscriptions.remove(&*p.uri);
        }
        Ok(Empty {})
    }
}

fn waits_for_nothing() -> RpcError {
    RpcError::new(
        code::INTERNAL_ERROR,
        "the handler waits for input no round can give",
    )
}

/// Runs a resource reader or a prompt handler with its context in scope, ending it early when
/// it waits for input its round cannot give.
async fn run_handler<T>(ctx: &Ctx, handler: HandlerFuture<T>) -> Finish<Result<T, ToolError>> {
    logging::scope(
        ctx.clone(),
        UntilInput::new(handler, ctx.state.input.as_ref()),
    )
    .await
}
