//! The methods of what a server offers beside its tools: `resources/*`, `prompts/*` and
//! `completion/complete` (the dispatch table refuses them with -32601 when the server
//! declared no such capability).

use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;

use crate::protocol::jsonrpc::Reply;
use crate::protocol::request::{Method, Request};
use crate::protocol::wire::{
    CompleteParams, CompleteResult, Completion, Empty, GetPromptParams, ListPage, ListParams,
    Listing, ReadResourceResult, UriParams,
};
use crate::protocol::{CacheHints, RpcError, code, jsonrpc};
use crate::server::catalog::page_index;
use crate::server::offerings::{Offerings, invalid};
use crate::server::prompt::{Prompt, PromptRequest};
use crate::server::request::{Req, input_required, response};
use crate::server::resource::{HandlerFuture, Resource, ResourceRequest, ResourceTemplate};
use crate::server::session::{Session, lock};
use crate::server::state::Binding;
use crate::tool::input::{Finish, InputRound, RoundEnd, UntilInput};
use crate::tool::{Ctx, ToolError, logging};

/// The most completion values one answer carries (the specification's limit).
const MAX_COMPLETIONS: usize = 100;

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
