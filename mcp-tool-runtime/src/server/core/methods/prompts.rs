//! The prompts methods: `prompts/list` and `prompts/get` (the dispatch table refuses them with
//! -32601 when the server declared no prompts).

use std::sync::Arc;

use crate::protocol::jsonrpc;
use crate::protocol::request::Request;
use crate::protocol::wire::{GetPromptParams, ListParams, Listing};
use crate::server::core::request::Cx;
use crate::server::offerings::prompt::{Prompt, PromptRequest};

use super::common::{self, needed};

/// `prompts/list`.
pub(crate) fn list(cx: &Cx<'_>, params: Option<ListParams<'_>>) {
    let offerings = cx.server().offerings();
    common::list(
        cx,
        params,
        &offerings.prompts,
        |p| &p.scopes,
        |page| Listing::Prompts(page.into_iter().map(Prompt::wire).collect()),
    );
}

/// `prompts/get`, like `resources/read`: the handler runs in a task of its own.
pub(crate) fn get(cx: &Cx<'_>, request: &Request<'_>) {
    let params = request.params;
    let found = jsonrpc::parse_params::<GetPromptParams>(params).and_then(|p| {
        let p = needed(p, "`prompts/get` needs a `name`")?;
        let offerings = cx.server().offerings();
        common::check_scopes(
            cx,
            || offerings.scopes_of_prompt(&p.name),
            || format!("getting the prompt `{}`", p.name),
        )?;
        let (get, arguments) = offerings.prompt(&p.name, p.arguments)?;
        let round = cx.round_of(params, "prompts/get", &p.name, &arguments)?;
        Ok((get, p.name, arguments, round))
    });
    let (get, name, arguments, round) = match found {
        Ok(found) => found,
        Err(e) => return cx.refuse(&e),
    };
    let (round, binding) = round.unzip();
    let ctx = cx.call_context(Arc::from(name.as_str()), Default::default(), round);
    let request = PromptRequest {
        arguments,
        ctx: ctx.clone(),
        states: cx.server().shared.states.clone(),
    };
    // A prompt defined with `#[prompt]` refuses arguments it cannot take before it runs.
    match get(request) {
        Ok(rendering) => common::spawn(cx, ctx, binding, rendering, |result| (result, None)),
        Err(e) => cx.refuse(&e),
    }
}
