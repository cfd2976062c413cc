//! `completion/complete` (the dispatch table refuses it with -32601 when the server declared
//! no completions).

use crate::protocol::wire::{CompleteParams, CompleteResult, Completion};
use crate::server::core::request::Cx;
use crate::server::offerings::invalid;

/// The most completion values one answer carries (the specification's limit).
const MAX_COMPLETIONS: usize = 100;

/// `completion/complete`: at most 100 values, with the real total and whether there are more.
pub(crate) fn complete(cx: &Cx<'_>, params: Option<CompleteParams>) {
    let values = params
        .ok_or_else(|| invalid("`completion/complete` needs params".into()))
        .and_then(|p| {
            let context = p.context.unwrap_or_default().arguments;
            cx.server().offerings().complete(
                &p.reference,
                &p.argument.name,
                &p.argument.value,
                &context,
            )
        });
    let outcome = values.as_ref().map(|all| {
        let shown = &all[..all.len().min(MAX_COMPLETIONS)];
        CompleteResult {
            completion: Completion {
                values: shown,
                total: Some(all.len()),
                has_more: all.len() > shown.len(),
            },
        }
    });
    cx.answer(outcome.map_err(Clone::clone));
}
