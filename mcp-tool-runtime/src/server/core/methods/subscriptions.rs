//! `subscriptions/listen` (2026-07-28): one stream of the changes a client asks for.

use crate::protocol::wire::{ListenParams, SubscriptionFilter};
use crate::server::core::request::Cx;

/// `subscriptions/listen`: a stream of the changes the client asks for (and the server has),
/// acknowledged first; it lasts until the client leaves or cancels it.
pub(crate) fn listen(cx: &Cx<'_>, params: Option<ListenParams>) {
    let requested = params.map(|p| p.notifications).unwrap_or_default();
    let shared = &cx.server().shared;
    let caps = &shared.capabilities;
    let filter = SubscriptionFilter {
        tools_list_changed: requested.tools_list_changed,
        prompts_list_changed: requested.prompts_list_changed && caps.prompts.is_some(),
        resources_list_changed: requested.resources_list_changed && caps.resources.is_some(),
        resource_subscriptions: if caps.resources.is_some() {
            requested.resource_subscriptions
        } else {
            Vec::new()
        },
    };
    let session = cx.session;
    let opened = shared.listeners.open(
        session.clone(),
        session.share_key(),
        cx.id,
        filter,
        &shared.limits,
    );
    let key = match opened {
        Ok(key) => key,
        Err(e) => return cx.refuse(&e),
    };
    if session.live() {
        // A connection's stream (stdio): it ends with the connection, or when the client
        // cancels the listen request.
        return;
    }
    // A stream of its own (HTTP): it ends when the client drops it.
    let session = session.clone();
    tokio::spawn(async move {
        session.out_gone().await;
        session.server.shared.listeners.remove(key);
    });
}
