//! What a server offers beside its tools — resources, resource templates, prompts, and the
//! completion of their arguments — and the method groups that serve them: `resources/*`,
//! `prompts/*` and `completion/complete`, each refused with -32601 when the server declared
//! no such capability.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::protocol::wire::{
    CompleteParams, CompleteRef, CompleteResult, Completion, Empty, GetPromptParams, ListChanged,
    ListPage, ListParams, Listing, ReadResourceResult, ResourcesCapability, ServerCapabilities,
    UriParams,
};
use crate::protocol::{ResourceContents, RpcError, code, jsonrpc};

use super::catalog::page_index;
use super::prompt::{Prompt, PromptHandler, PromptRequest};
use super::resource::{APP_MIME_TYPE, Reader, Resource, ResourceRequest, ResourceTemplate};
use super::session::{Session, lock};

/// The most completion values one answer carries (the specification's limit).
const MAX_COMPLETIONS: usize = 100;

/// The resources, templates and prompts of a server.
#[derive(Clone, Default)]
pub(crate) struct Offerings {
    pub(crate) resources: Vec<Resource>,
    pub(crate) templates: Vec<ResourceTemplate>,
    pub(crate) prompts: Vec<Prompt>,
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

    /// What the server declares it can do, from what it offers.
    pub(crate) fn capabilities(&self) -> ServerCapabilities {
        let changes = ListChanged { list_changed: true };
        ServerCapabilities {
            tools: Some(changes),
            logging: Some(Empty {}),
            resources: self.has_resources().then_some(ResourcesCapability {
                subscribe: true,
                list_changed: true,
            }),
            prompts: (!self.prompts.is_empty()).then_some(changes),
            completions: self.has_completions().then_some(Empty {}),
        }
    }

    /// The reader for `uri`, with the request to give it.
    fn reader(&self, uri: &str) -> Result<(Reader, ResourceRequest), RpcError> {
        if let Some(r) = self.resources.iter().find(|r| r.uri() == uri) {
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
        Err(RpcError::new(
            code::RESOURCE_NOT_FOUND,
            format!("Resource not found: `{uri}`"),
        )
        .with_data(UriParams { uri: uri.into() }))
    }

    /// The handler of a prompt, with the request to give it; checks required arguments.
    fn prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<(PromptHandler, PromptRequest), RpcError> {
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
        Ok((get, PromptRequest { arguments }))
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

/// The `_meta.ui` of an MCP Apps view's resource.
#[derive(Serialize)]
struct UiMeta<'a> {
    csp: &'a UiCsp,
}

/// The domains MCP Apps views may reach (`_meta.ui.csp`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UiCsp {
    pub(crate) connect_domains: Vec<String>,
    pub(crate) resource_domains: Vec<String>,
}

/// The resource serving an MCP Apps view (`ui://<server>/<name>`), with its CSP if configured.
pub(crate) fn ui_resource(
    uri: &str,
    name: &str,
    html: &'static str,
    csp: Option<&UiCsp>,
) -> Resource {
    let meta: Option<Map<String, Value>> = csp.and_then(|csp| {
        let ui = serde_json::to_value(UiMeta { csp }).ok()?;
        Some(Map::from_iter([("ui".to_owned(), ui)]))
    });
    let mut contents = ResourceContents::text(uri, APP_MIME_TYPE, html);
    if let Some(meta) = &meta {
        contents = contents.with_meta(meta.clone());
    }
    let mut r = Resource::new(uri, name, move |_| {
        let contents = contents.clone();
        async move { Ok(vec![contents]) }
    })
    .mime_type(APP_MIME_TYPE)
    .description(format!("The `{name}` view (MCP Apps)"));
    if let Some(meta) = meta {
        r = r.meta(meta);
    }
    r
}

impl Session {
    /// The `resources/*` methods.
    pub(crate) fn resources(
        self: &Arc<Self>,
        id: &RawValue,
        method: &str,
        params: Option<&RawValue>,
    ) {
        let id = id.get();
        let declared = self.server.shared.capabilities.resources.is_some();
        if !self.offered(id, declared, method, "resources") {
            return;
        }
        let response = match method {
            "resources/list" => self.list(
                id,
                params,
                |o, range| {
                    Listing::Resources(o.resources[range].iter().map(Resource::wire).collect())
                },
                |o| o.resources.len(),
            ),
            "resources/templates/list" => self.list(
                id,
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
            "resources/read" => return self.read_resource(id, params),
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
        id: &RawValue,
        method: &str,
        params: Option<&RawValue>,
    ) {
        let id = id.get();
        let declared = self.server.shared.capabilities.prompts.is_some();
        if !self.offered(id, declared, method, "prompts") {
            return;
        }
        if method == "prompts/get" {
            return self.get_prompt(id, params);
        }
        let response = self.list(
            id,
            params,
            |o, range| Listing::Prompts(o.prompts[range].iter().map(Prompt::wire).collect()),
            |o| o.prompts.len(),
        );
        self.respond(id, response);
    }

    /// `completion/complete`: at most 100 values, with the real total and whether there are
    /// more.
    pub(crate) fn completion(&self, id: &str, params: Option<&RawValue>) {
        let declared = self.server.shared.capabilities.completions.is_some();
        if !self.offered(id, declared, "completion/complete", "completions") {
            return;
        }
        let outcome = jsonrpc::parse_params::<CompleteParams>(params).and_then(|p| {
            let p = p.ok_or_else(|| invalid("`completion/complete` needs params".into()))?;
            let context = p.context.unwrap_or_default().arguments;
            self.server.offerings().complete(
                &p.reference,
                &p.argument.name,
                &p.argument.value,
                &context,
            )
        });
        let response = match outcome {
            Err(e) => jsonrpc::error_response(id, &e),
            Ok(values) => {
                let shown = &values[..values.len().min(MAX_COMPLETIONS)];
                jsonrpc::result_response(
                    id,
                    &CompleteResult {
                        completion: Completion {
                            values: shown,
                            total: Some(values.len()),
                            has_more: values.len() > shown.len(),
                        },
                    },
                )
            }
        };
        self.respond(id, response);
    }

    /// One page of a list of offerings, paginated like `tools/list`.
    fn list(
        &self,
        id: &str,
        params: Option<&RawValue>,
        page: impl FnOnce(&Offerings, std::ops::Range<usize>) -> Listing<'_>,
        len: impl FnOnce(&Offerings) -> usize,
    ) -> String {
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
        jsonrpc::result_response(
            id,
            &ListPage {
                items: page(&offerings, start..end),
                next_cursor: (end < total).then(|| (index + 1).to_string()),
            },
        )
    }

    fn read_resource(self: &Arc<Self>, id: &str, params: Option<&RawValue>) {
        let outcome = jsonrpc::parse_params::<UriParams<'_>>(params).and_then(|p| {
            let p = p.ok_or_else(|| invalid("`resources/read` needs a `uri`".into()))?;
            self.server.offerings().reader(&p.uri)
        });
        match outcome {
            Err(e) => self.respond(id, jsonrpc::error_response(id, &e)),
            Ok((read, request)) => self.spawn_answer(id, async move {
                let contents = read(request)
                    .await
                    .map_err(|e| RpcError::new(code::INTERNAL_ERROR, e.render()))?;
                Ok(ReadResourceResult { contents })
            }),
        }
    }

    fn get_prompt(self: &Arc<Self>, id: &str, params: Option<&RawValue>) {
        let outcome = jsonrpc::parse_params::<GetPromptParams>(params).and_then(|p| {
            let p = p.ok_or_else(|| invalid("`prompts/get` needs a `name`".into()))?;
            self.server.offerings().prompt(&p.name, p.arguments)
        });
        match outcome {
            Err(e) => self.respond(id, jsonrpc::error_response(id, &e)),
            Ok((get, request)) => self.spawn_answer(id, async move {
                get(request)
                    .await
                    .map_err(|e| RpcError::new(code::INTERNAL_ERROR, e.render()))
            }),
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
