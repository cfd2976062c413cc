//! `subscriptions/listen` (2026-07-28): the streams on which a client hears of changes — the
//! tool, prompt and resource lists, and the resources it names. A stream is acknowledged
//! first (with what the server agreed to send), every notification on it is tagged with the
//! subscription's id (the listen request's id), and it carries only what the client asked for.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::value::RawValue;

use crate::protocol::walk::JsonText;

use crate::protocol::wire::{
    Acknowledged, Empty, ListenResult, ListenResultMeta, SubscriptionFilter, SubscriptionMeta,
    Tagged, UriParams,
};
use crate::protocol::{RpcError, code, jsonrpc};

use crate::server::core::limits::Limits;
use crate::server::offerings::selection::Principal;
use crate::sync::lock;

pub(crate) use crate::server::offerings::change::Change;

/// The connection a listen stream was opened on: its session, seen by what a stream needs.
pub(crate) trait Audience: Send + Sync {
    /// Who is on the other end (a change of one principal's tools goes to its streams).
    fn principal(&self) -> &Principal;
    /// Sends `text`, as part of request `related` (its response when `is_response`).
    fn emit(&self, text: String, related: Option<&Arc<str>>, is_response: bool);
    /// Whether the client has left.
    fn out_closed(&self) -> bool;
}

/// Whether `listener` was opened on `audience` (the same object).
fn same(listener: &Arc<dyn Audience>, audience: &dyn Audience) -> bool {
    std::ptr::addr_eq(Arc::as_ptr(listener), audience as *const dyn Audience)
}

struct Listener {
    session: Arc<dyn Audience>,
    /// The client it counts for ([`Session::share_key`](crate::server::core::session::Session::share_key)).
    client: Arc<str>,
    /// The listen request's canonical id: its stream.
    related: Arc<str>,
    /// The listen request's id as the client wrote it: the subscription id.
    subscription_id: Box<RawValue>,
    filter: SubscriptionFilter,
}

impl Listener {
    fn wants(&self, change: Change<'_>) -> bool {
        match change {
            Change::Tools(principal) => {
                self.filter.tools_list_changed
                    && principal.is_none_or(|p| p == self.session.principal())
            }
            Change::Prompts => self.filter.prompts_list_changed,
            Change::Resources => self.filter.resources_list_changed,
            Change::Updated(uri) => self.filter.resource_subscriptions.iter().any(|u| u == uri),
        }
    }

    fn send<P: Serialize>(&self, method: &str, params: P) {
        let tagged = Tagged {
            params,
            meta: SubscriptionMeta {
                subscription_id: &self.subscription_id,
            },
        };
        self.session.emit(
            jsonrpc::notification(method, &tagged),
            Some(&self.related),
            false,
        );
    }
}

/// The open listen streams of a server.
#[derive(Default)]
pub(crate) struct Listeners {
    next: AtomicU64,
    live: Mutex<HashMap<u64, Listener>>,
}

impl Listeners {
    /// Opens a stream for `session`'s request `id` (for `client`): acknowledges `filter` and
    /// keeps the stream until the client leaves. Returns its key; refused when the server or
    /// the client holds as many streams as `limits` allow (each holds a connection open).
    pub(crate) fn open(
        &self,
        session: Arc<dyn Audience>,
        client: String,
        id: JsonText<'_>,
        filter: SubscriptionFilter,
        limits: &Limits,
    ) -> Result<u64, RpcError> {
        {
            let mut live = lock(&self.live);
            live.retain(|_, l| !l.session.out_closed());
            if live.len() >= limits.max_listen_streams {
                drop(live);
                tracing::warn!(
                    max = limits.max_listen_streams,
                    "a listen stream was refused: the server holds its most"
                );
                return Err(RpcError::new(
                    code::INTERNAL_ERROR,
                    format!(
                        "the server holds {} listen streams, the most it keeps: try again later",
                        limits.max_listen_streams
                    ),
                ));
            }
            let held = live.values().filter(|l| *l.client == *client).count();
            if held >= limits.max_listen_per_client {
                return Err(RpcError::new(
                    code::INTERNAL_ERROR,
                    format!(
                        "this client holds {} listen streams, the most one client may: close one first",
                        limits.max_listen_per_client
                    ),
                ));
            }
        }
        // The id is checked JSON text already: kept as it was sent.
        let subscription_id = RawValue::from_string(id.get().to_owned())
            .map_err(|e| RpcError::new(code::INTERNAL_ERROR, e.to_string()))?;
        let listener = Listener {
            session,
            client: client.into(),
            related: jsonrpc::id_key(id.get()),
            subscription_id,
            filter,
        };
        listener.send(
            "notifications/subscriptions/acknowledged",
            Acknowledged {
                notifications: &listener.filter,
            },
        );
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        lock(&self.live).insert(key, listener);
        Ok(key)
    }

    pub(crate) fn remove(&self, key: u64) {
        lock(&self.live).remove(&key);
    }

    /// Ends the stream of `session`'s request `related` (the client cancelled it).
    pub(crate) fn cancel(&self, session: &dyn Audience, related: &str) -> bool {
        let mut live = lock(&self.live);
        let before = live.len();
        live.retain(|_, l| !(same(&l.session, session) && &*l.related == related));
        live.len() != before
    }

    /// Ends every stream of `session` (its connection is closing).
    pub(crate) fn drop_session(&self, session: &dyn Audience) {
        lock(&self.live).retain(|_, l| !same(&l.session, session));
    }

    /// Tells every stream that asked for it about `change`, dropping streams whose client
    /// left.
    pub(crate) fn notify(&self, change: Change<'_>) {
        let mut live = lock(&self.live);
        live.retain(|_, l| !l.session.out_closed());
        for listener in live.values().filter(|l| l.wants(change)) {
            match change {
                Change::Tools(_) => listener.send("notifications/tools/list_changed", Empty {}),
                Change::Prompts => listener.send("notifications/prompts/list_changed", Empty {}),
                Change::Resources => {
                    listener.send("notifications/resources/list_changed", Empty {});
                }
                Change::Updated(uri) => listener.send(
                    "notifications/resources/updated",
                    UriParams { uri: uri.into() },
                ),
            }
        }
    }

    /// Ends every stream with its final result (the server is shutting down).
    pub(crate) fn close_all(&self, server_info: &crate::protocol::wire::Implementation) {
        for (_, listener) in lock(&self.live).drain() {
            let result = ListenResult {
                result_type: "complete",
                meta: ListenResultMeta {
                    subscription_id: &listener.subscription_id,
                    server_info,
                },
            };
            let id = listener.subscription_id.get();
            listener.session.emit(
                jsonrpc::result_response(id, &result),
                Some(&listener.related),
                true,
            );
        }
    }
}
