//! The resources methods: `resources/list`, `resources/templates/list`, `resources/read`, and a
//! session's `resources/subscribe` / `resources/unsubscribe` (the dispatch table refuses them
//! with -32601 when the server declared no resources).

use std::sync::Arc;

use crate::protocol::request::Request;
use crate::protocol::wire::{Empty, ListParams, Listing, ReadResourceResult, UriParams};
use crate::protocol::{CacheHints, RpcError, code, jsonrpc};
use crate::server::core::request::Cx;
use crate::server::core::session::lock;
use crate::server::offerings::resource::{Resource, ResourceRequest, ResourceTemplate};

use super::common::{self, needed};

/// `resources/list`.
pub(crate) fn list(cx: &Cx<'_>, params: Option<ListParams<'_>>) {
    let offerings = cx.server().offerings();
    common::list(
        cx,
        params,
        &offerings.resources,
        Resource::required_scopes,
        |page| Listing::Resources(page.into_iter().map(Resource::wire).collect()),
    );
}

/// `resources/templates/list`.
pub(crate) fn templates(cx: &Cx<'_>, params: Option<ListParams<'_>>) {
    let offerings = cx.server().offerings();
    common::list(
        cx,
        params,
        &offerings.templates,
        ResourceTemplate::required_scopes,
        |page| Listing::ResourceTemplates(page.into_iter().map(ResourceTemplate::wire).collect()),
    );
}

/// `resources/read`: the reader runs in a task of its own; a stateless request whose reader
/// asks for input ends with the input requests.
pub(crate) fn read(cx: &Cx<'_>, request: &Request<'_>) {
    let params = request.params;
    let found = jsonrpc::parse_params::<UriParams<'_>>(params).and_then(|p| {
        let uri = needed(p, "`resources/read` needs a `uri`")?
            .uri
            .into_owned();
        let offerings = cx.server().offerings();
        common::check_scopes(
            cx,
            || offerings.scopes_of_uri(&uri),
            || format!("reading `{uri}`"),
        )?;
        let (read, vars, hints) = offerings.reader(&uri).map_err(|mut e| {
            // 2026-07-28 names a missing resource with -32602 (and keeps `data.uri`).
            if cx.stateless.is_some() && e.code == code::RESOURCE_NOT_FOUND {
                e.code = code::INVALID_PARAMS;
            }
            e
        })?;
        let round = cx.round_of(params, "resources/read", &uri, &Empty {})?;
        Ok((read, uri, vars, hints, round))
    });
    let (read, uri, vars, hints, round) = match found {
        Ok(found) => found,
        Err(e) => return cx.refuse(&e),
    };
    // An answer that needed input is the client's own: not for anyone to reuse.
    let hints = if round.as_ref().is_some_and(|(r, _)| r.answered()) {
        CacheHints::NONE
    } else {
        hints
    };
    let (round, binding) = round.unzip();
    let ctx = cx.call_context(Arc::from(uri.as_str()), Default::default(), round);
    let request = ResourceRequest {
        uri,
        vars,
        ctx: ctx.clone(),
        states: cx.server().shared.states.clone(),
    };
    // A template defined with `#[resource_template]` refuses a variable it cannot parse
    // before it runs.
    match read(request) {
        Ok(reading) => common::spawn(cx, ctx, binding, reading, move |contents| {
            (ReadResourceResult { contents }, Some(hints))
        }),
        Err(e) => cx.refuse(&e),
    }
}

/// `resources/subscribe` (a session's).
pub(crate) fn subscribe(cx: &Cx<'_>, params: Option<UriParams<'_>>) -> Result<Empty, RpcError> {
    subscription(cx, params, true)
}

/// `resources/unsubscribe` (a session's).
pub(crate) fn unsubscribe(cx: &Cx<'_>, params: Option<UriParams<'_>>) -> Result<Empty, RpcError> {
    subscription(cx, params, false)
}

fn subscription(cx: &Cx<'_>, params: Option<UriParams<'_>>, on: bool) -> Result<Empty, RpcError> {
    let uri = needed(params, "a `uri` is needed")?.uri;
    {
        let mut subscriptions = lock(&cx.session.subscriptions);
        if on {
            subscriptions.insert(uri.into_owned());
        } else {
            subscriptions.remove(&*uri);
        }
    }
    cx.session.persist();
    Ok(Empty {})
}
