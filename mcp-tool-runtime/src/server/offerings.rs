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

use crate::protocol::jsonrpc::Reply;
use crate::protocol::request::{Method, Request};
use crate::protocol::wire::{
    CompleteParams, CompleteRef, CompleteResult, Completion, Empty, GetPromptParams, ListChanged,
    ListPage, ListParams, Listing, ReadResourceResult, ResourcesCapability, ServerCapabilities,
    UriParams,
};
use crate::protocol::{CacheHints, ResourceContents, RpcError, code, jsonrpc};
use crate::tool::input::{Finish, InputRound, RoundEnd, UntilInput};
use crate::tool::{Ctx, ToolError, logging};

use super::catalog::{Catalog, page_index};
use super::error::StartError;
use super::prompt::{Prompt, PromptHandler, PromptRequest};
use super::request::{Req, input_required, response};
use super::resource::{
    APP_MIME_TYPE, HandlerFuture, Reader, Resource, ResourceRequest, ResourceTemplate,
};
use super::session::{Session, lock};
use super::state::Binding;
use super::views::{UI_EXTENSION, UiCsp, UiResourceMeta};

/// The most completion values one answer carries (the specification's limit).
const MAX_COMPLETIONS: usize = 100;

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
    pub(crate) skills: Option<Arc<super::skills::Skills>>,
}

fn invalid(message: String) -> RpcError {
    RpcError::new(code::INVALID_PARAMS, message)
}

impl Offerings {
    fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty() || self.has_skills()
    }

    /// Whether the server serves skills (`Server::skills`).
    pub(crate) fn has_skills(&self) -> bool {
        #[cfg(feature = "skills")]
        return self.skills.is_some();
        #[cfg(not(feature = "skills"))]
        false
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
        let mut extensions = BTreeMap::new();
        if self.has_views() {
            extensions.insert(UI_EXTENSION, Value::Object(Map::new()));
        }
        #[cfg(feature = "skills")]
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
    fn reader(&self, uri: &str) -> Result<(Reader, HashMap<String, String>, CacheHints), RpcError> {
        if let Some(r) = self.resources.iter().find(|r| r.uri() == uri) {
            return Ok((r.read.clone(), HashMap::new(), r.hints()));
        }
        for t in &self.templates {
            if let (Some(vars), Some(read)) = (t.matches(uri), &t.read) {
                return Ok((read.clone(), vars, t.hints()));
            }
        }
        #[cfg(feature = "skills")]
        if let Some(read) = self.skill_file(uri) {
            let hints = CacheHints::public(super::skills::serve::FILE_TTL);
            return Ok((read, HashMap::new(), hints));
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

impl Session {
    /// The `resources/*` methods.
    pub(crate) fn resources(self: &Arc<Self>, req: &Req<'_>, request: &Request<'_>) {
        let (id, params) = (req.id(), request.params);
        let response = match request.method {
            Method::ResourcesList => self.list(
                req,
                params,
                |o, range| {
                    Listing::Resources(o.resources[range].iter().map(Resource::wire).collect())
                },
                |o| o.resources.len(),
            ),
            Method::ResourceTemplatesList => self.list(
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
            Method::ResourcesRead => return self.read_resource(req, params),
            subscribe => {
                let on = subscribe == Method::ResourcesSubscribe;
                Reply::of(id, self.subscribe(params, on))
            }
        };
        self.respond(id, response);
    }

    /// The `prompts/*` methods.
    pub(crate) fn prompts(self: &Arc<Self>, req: &Req<'_>, request: &Request<'_>) {
        let (id, params) = (req.id(), request.params);
        if request.method == Method::PromptsGet {
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
    ) -> Reply {
        let id = req.id();
        let params = match jsonrpc::parse_params::<ListParams<'_>>(params) {
            Ok(p) => p,
            Err(e) => return Reply::error(id, &e),
        };
        let offerings = self.server.offerings();
        let size = self.server.catalog().page_size();
        let total = len(&offerings);
        let pages = total.div_ceil(size).max(1);
        let Some(index) = page_index(params.as_ref().and_then(|p| p.cursor.as_deref()), pages)
        else {
            return Reply::error(id, &invalid("Invalid cursor".into()));
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
            Err(e) => return self.respond(id, Reply::error(id, &e)),
        };
        // An answer that needed input is the client's own: not for anyone to reuse.
        let hints = if round.as_ref().is_some_and(|(r, _)| r.answered()) {
            CacheHints::NONE
        } else {
            hints
        };
        let (round, binding) = round.unzip();
        let ctx = self.call_context(Arc::from(uri.as_str()), req, (None, None), round);
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
            Err(e) => return self.respond(id, Reply::error(id, &e)),
        };
        let (round, binding) = round.unzip();
        let ctx = self.call_context(Arc::from(name.as_str()), req, (None, None), round);
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
    ) -> Reply {
        let end = ctx.state.input.as_ref().map(InputRound::end);
        match (finish, end) {
            (Finish::NeedsInput, Some(end)) => match binding {
                Some(binding) => input_required(self, id, binding, end),
                None => Reply::error(id, &waits_for_nothing()),
            },
            (Finish::NeedsInput, None) => Reply::error(id, &waits_for_nothing()),
            (
                Finish::Done(Err(_)),
                Some(RoundEnd {
                    refusal: Some(e), ..
                }),
            ) => Reply::error(id, &e),
            (Finish::Done(Err(e)), _) => {
                Reply::error(id, &RpcError::new(code::INTERNAL_ERROR, e.render()))
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
        {
            let mut subscriptions = lock(&self.subscriptions);
            if on {
                subscriptions.insert(p.uri.into_owned());
            } else {
                subscriptions.remove(&*p.uri);
            }
        }
        self.persist();
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

/// How long a view's HTML stays fresh in a client's cache (2026-07-28): it is fixed at build.
const VIEW_TTL: Duration = Duration::from_secs(300);

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
