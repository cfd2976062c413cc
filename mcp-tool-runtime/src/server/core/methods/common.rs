//! What the methods of resources and prompts share: a page of a list of offerings, and the run
//! of a resource reader or a prompt handler with the answer it makes.

use serde::Serialize;

use crate::protocol::jsonrpc::Reply;
use crate::protocol::wire::{ListPage, ListParams, Listing};
use crate::protocol::{CacheHints, CacheScope, ProtocolVersion, RpcError, code};
use crate::server::core::request::{Cx, input_required, response};
use crate::server::core::session::Session;
use crate::server::offerings::catalog::page_index;
use crate::server::offerings::invalid;
use crate::server::offerings::resource::HandlerFuture;
use crate::server::state::Binding;
use crate::tool::definition::def::missing_scopes;
use crate::tool::input::{Finish, InputRound, RoundEnd, UntilInput};
use crate::tool::{Ctx, ToolError, logging};

/// One page of a list of offerings, paginated like `tools/list`: of `items`, those whose
/// `scopes` the caller was granted. A list some items of which declare scopes depends on who
/// asks: its cache hints are then private.
pub(super) fn list<'o, T>(
    cx: &Cx<'_>,
    params: Option<ListParams<'_>>,
    items: &'o [T],
    scopes: impl Fn(&T) -> &[String],
    page: impl FnOnce(Vec<&'o T>) -> Listing<'o>,
) {
    let server = cx.server();
    let size = server.catalog().page_size();
    let granted = cx.identity().map(|i| &i.scopes[..]);
    let scoped = granted.is_some() && items.iter().any(|i| !scopes(i).is_empty());
    let visible: Vec<&T> = items
        .iter()
        .filter(|i| !scoped || missing_scopes(scopes(i), granted).is_empty())
        .collect();
    let total = visible.len();
    let pages = total.div_ceil(size).max(1);
    let Some(index) = page_index(params.as_ref().and_then(|p| p.cursor.as_deref()), pages) else {
        return cx.refuse(&invalid("Invalid cursor".into()));
    };
    let start = index * size;
    let end = (start + size).min(total);
    let result = ListPage {
        items: page(visible[start..end].to_vec()),
        next_cursor: (end < total).then(|| (index + 1).to_string()),
    };
    let hints = if scoped {
        CacheHints {
            cache_scope: CacheScope::Private,
            ..server.shared.hints
        }
    } else {
        server.shared.hints
    };
    cx.respond(cx.reply(Ok(result), Some(hints)));
}

/// The refusal of a request for an offering (`what`: "reading `uri`", "getting the prompt
/// `name`") whose caller lacks some of its `scopes`: -32030, naming every scope it needs
/// (over HTTP, the step-up challenge answers first).
pub(crate) fn insufficient_scope(what: &str, scopes: &[String]) -> RpcError {
    RpcError::new(
        code::INSUFFICIENT_SCOPE,
        format!(
            "Insufficient scope: {what} needs the scopes `{}`",
            scopes.join(" ")
        ),
    )
    .with_data(serde_json::json!({ "requiredScopes": scopes }))
}

/// The refusal of `what` when the caller lacks some of the `scopes` it needs. A caller with no
/// identity (stdio, no authenticator) is granted every scope: neither is looked at then.
pub(super) fn check_scopes<'o>(
    cx: &Cx<'_>,
    scopes: impl FnOnce() -> &'o [String],
    what: impl FnOnce() -> String,
) -> Result<(), RpcError> {
    let Some(identity) = cx.identity() else {
        return Ok(());
    };
    let scopes = scopes();
    if missing_scopes(scopes, Some(&identity.scopes)).is_empty() {
        Ok(())
    } else {
        Err(insufficient_scope(&what(), scopes))
    }
}

/// The params of a reader or a handler, which it needs: `None` is refused naming `what`.
pub(super) fn needed<T>(params: Option<T>, what: &str) -> Result<T, RpcError> {
    params.ok_or_else(|| invalid(what.into()))
}

/// Runs a resource reader or a prompt handler (`handler`, made with `ctx`) in a task of its
/// own, listed in flight, and answers the request with what it gives, shaped by `shape`.
pub(super) fn spawn<T, R>(
    cx: &Cx<'_>,
    ctx: Ctx,
    binding: Option<Binding>,
    handler: HandlerFuture<T>,
    shape: impl FnOnce(T) -> (R, Option<CacheHints>) + Send + 'static,
) where
    T: Send + 'static,
    R: Serialize,
{
    let (session, version, id) = (cx.session.clone(), cx.version(), cx.id().to_owned());
    cx.session.spawn_tracked(
        (cx.id(), cx.key()),
        ctx.cancellation().clone(),
        async move {
            let finish = run_handler(&ctx, handler).await;
            handler_response(
                &session,
                &id,
                &ctx,
                version,
                binding.as_ref(),
                finish,
                shape,
            )
        },
    );
}

/// The response to a resource reader or a prompt handler.
fn handler_response<T, R: Serialize>(
    session: &Session,
    id: &str,
    ctx: &Ctx,
    version: ProtocolVersion,
    binding: Option<&Binding>,
    finish: Finish<Result<T, ToolError>>,
    shape: impl FnOnce(T) -> (R, Option<CacheHints>),
) -> Reply {
    let end = ctx.state.input.as_ref().map(InputRound::end);
    match (finish, end) {
        (Finish::NeedsInput, Some(end)) => match binding {
            Some(binding) => input_required(session, id, binding, end),
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
            response(id, version, &session.server.shared.info, Ok(result), hints)
        }
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
