//! One request as the method groups see it: its id, and — for a stateless (2026-07-28)
//! request — what its `_meta` said about the client. A stateless request carries everything
//! it needs; the session it arrived on contributes only its connection and its principal.

use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::protocol::jsonrpc::Reply;
use crate::protocol::wire::{Complete, Implementation, InputRequiredResult, ResultMeta};
use crate::protocol::{CacheHints, Era, LogLevel, ProtocolVersion, RpcError, jsonrpc};
use crate::tool::context::{Answer, Connection, LogPolicy};
use crate::tool::input::{MEMO_PREFIX, RoundEnd};
use crate::tool::{Batch, ClientInfo};

use super::selection::Principal;
use super::session::Session;
use super::state::Binding;

/// What a stateless request's `_meta` said.
#[derive(Debug)]
pub(crate) struct Stateless {
    pub(crate) version: ProtocolVersion,
    pub(crate) client: Arc<ClientInfo>,
    pub(crate) log_level: Option<LogLevel>,
}

/// One request.
#[derive(Clone)]
pub(crate) struct Req<'a> {
    pub(crate) id: &'a RawValue,
    pub(crate) stateless: Option<Arc<Stateless>>,
}

impl Req<'_> {
    pub(crate) fn id(&self) -> &str {
        self.id.get()
    }
}

impl Session {
    /// The era whose shapes answer `req`.
    pub(crate) fn era(&self, req: &Req<'_>) -> Era {
        match &req.stateless {
            Some(s) => Era::of(s.version),
            None => Era::of(self.client().protocol_version),
        }
    }

    /// Who made `req`: its `_meta` (stateless), or the session's `initialize`.
    pub(crate) fn client_of(&self, req: &Req<'_>) -> Arc<ClientInfo> {
        match &req.stateless {
            Some(s) => s.client.clone(),
            None => self.client(),
        }
    }

    /// Which log messages of `req`'s call go to the client.
    pub(crate) fn log_policy(req: &Req<'_>) -> LogPolicy {
        match &req.stateless {
            Some(s) => LogPolicy::Request(s.log_level),
            None => LogPolicy::Session,
        }
    }

    /// The connection a call of `req` reaches the client through: the session, or — for a
    /// stateless request — the session seen as its principal (tool changes go to the
    /// principal's selection).
    pub(crate) fn connection(self: &Arc<Self>, req: &Req<'_>) -> Arc<dyn Connection> {
        match req.stateless {
            Some(_) => Arc::new(StatelessConnection {
                session: self.clone(),
            }),
            None => self.clone(),
        }
    }

    /// The principal's key in a request state's binding.
    pub(crate) fn principal_key(&self) -> String {
        match &self.principal {
            Principal::Local => "local".to_owned(),
            Principal::Subject(s) => format!("subject:{s}"),
            Principal::Anonymous => "anonymous".to_owned(),
        }
    }
}

/// The response to a request: its result in the era's shape (in 2026-07-28 with `resultType`,
/// the server's identity, and cache hints when the result is cacheable), or its error.
pub(crate) fn response<T: Serialize>(
    id: &str,
    era: Era,
    info: &Implementation,
    outcome: Result<T, RpcError>,
    cache: Option<CacheHints>,
) -> Reply {
    match outcome {
        Err(e) => Reply::error(id, &e),
        Ok(result) if era.is_stateless() => Reply::result(jsonrpc::result_response(
            id,
            &Complete {
                result,
                result_type: "complete",
                cache,
                meta: ResultMeta {
                    server_info: info,
                    extra: None,
                },
            },
        )),
        Ok(result) => Reply::result(jsonrpc::result_response(id, &result)),
    }
}

/// The response to a stateless request whose handler waits for input: the input requests and
/// the sealed state of what it learned; or the protocol error the round ended with.
pub(crate) fn input_required(
    session: &Session,
    id: &str,
    binding: &Binding,
    end: RoundEnd,
) -> Reply {
    if let Some(refusal) = end.refusal {
        return Reply::error(id, &refusal);
    }
    let state = session.server.shared.state_key.seal(binding, end.used);
    Reply::result(jsonrpc::result_response(
        id,
        &InputRequiredResult {
            result_type: "input_required",
            input_requests: &end.asked,
            request_state: Some(&state),
            meta: ResultMeta {
                server_info: &session.server.shared.info,
                extra: None,
            },
        },
    ))
}

/// The answers a retry of a stateless request carries: those sealed in its `requestState`
/// (checked against the request it was issued for), then its `inputResponses`.
pub(crate) fn answers(
    session: &Session,
    binding: &Binding,
    retry: crate::protocol::wire::Retry,
) -> Result<Map<String, Value>, RpcError> {
    let mut answers = match &retry.request_state {
        Some(token) => session.server.shared.state_key.open(binding, token)?,
        None => Map::new(),
    };
    // The server's own values come only from the sealed state.
    answers.extend(
        retry
            .input_responses
            .into_iter()
            .filter(|(key, _)| !key.starts_with(MEMO_PREFIX)),
    );
    Ok(answers)
}

/// A session as the connection of a stateless request's call: notifications reach the
/// request's stream; tool changes belong to the request's principal; there is no
/// server-to-client request (input comes by rounds).
struct StatelessConnection {
    session: Arc<Session>,
}

impl Connection for StatelessConnection {
    fn send(&self, related: Option<&Arc<str>>, message: String) {
        self.session.emit(message, related, false);
    }

    fn request<'a>(
        &'a self,
        _related: Option<&'a Arc<str>>,
        method: &'a str,
        _params: String,
    ) -> Answer<'a> {
        Box::pin(async move {
            Err(RpcError::new(
                crate::protocol::code::INTERNAL_ERROR,
                format!("`{method}`: a stateless request makes no requests of the client"),
            ))
        })
    }

    fn logs(&self, _level: LogLevel) -> bool {
        false
    }

    fn change_tools(
        &self,
        _related: Option<&Arc<str>>,
        batch: &Batch,
    ) -> Result<Vec<String>, String> {
        let server = &self.session.server;
        let principal = &self.session.principal;
        let (active, changed) = server.shared.principals.apply(
            principal,
            &server.shared.selection(),
            &server.catalog(),
            batch,
        )?;
        if changed {
            server
                .shared
                .listeners
                .notify(super::change::Change::Tools(Some(principal)));
        }
        if let Principal::Subject(subject) = principal {
            // The subject's next request may reach another replica.
            server
                .shared
                .replicas
                .publish(super::replicas::Event::PrincipalTools {
                    subject: subject.clone(),
                    batch: super::replicas::SelectionWire::from(batch),
                });
        }
        Ok(active)
    }

    fn active_tools(&self) -> Vec<String> {
        let server = &self.session.server;
        let selection = server
            .shared
            .principals
            .get(&self.session.principal)
            .unwrap_or_else(|| server.shared.selection());
        selection.active(&server.catalog())
    }

    fn server(&self) -> &(dyn std::any::Any + Send + Sync) {
        &self.session.server
    }
}
