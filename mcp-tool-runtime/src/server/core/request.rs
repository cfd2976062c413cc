//! One request as its handler sees it ([`Cx`]): the session it came on, its id, and — for a
//! stateless (2026-07-28) request — what its `_meta` said about the client. A stateless
//! request carries everything it needs; the session it arrived on contributes only its
//! connection and its principal. Also the shapes every handler answers with.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock, Weak};

use crate::protocol::walk::JsonText;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::protocol::jsonrpc::Reply;
use crate::protocol::wire::{Complete, Implementation, InputRequiredResult, ResultMeta};
use crate::protocol::{CacheHints, LogLevel, ProtocolVersion, RpcError, jsonrpc};
use crate::tool::context::{Answer, Connection, LogPolicy};
use crate::tool::input::{MEMO_PREFIX, RoundEnd};
use crate::tool::{Batch, ClientInfo, Identity};

use crate::server::core::clients::Stateless;
use crate::server::core::handle::ServerHandle;
use crate::server::core::session::Session;
use crate::server::offerings::selection::Principal;
use crate::server::state::Binding;
use crate::server::telemetry;

/// One request as its handler sees it: the session it came on, its id, and — for a
/// stateless (2026-07-28) request — what its `_meta` said about the client.
pub(crate) struct Cx<'a> {
    pub(crate) session: &'a Arc<Session>,
    pub(crate) id: JsonText<'a>,
    /// The id's key, made when first asked for (see [`Cx::key`]).
    pub(crate) key: &'a OnceLock<Arc<str>>,
    pub(crate) stateless: Option<Arc<Stateless>>,
    /// The credentials the request came with: what it is granted (its scopes) and who makes
    /// it. A request of an HTTP session brings its own (the same principal's token may
    /// have been stepped up, or be an older, narrower one); any other request has the
    /// session's ([`Session::identity`]).
    pub(crate) identity: Option<&'a Arc<Identity>>,
}

impl Cx<'_> {
    /// The request's id, as JSON text.
    pub(crate) fn id(&self) -> &str {
        self.id.get()
    }

    /// The id's key ([`jsonrpc::id_key`]), made once for all who ask: the call's context,
    /// the table of requests in flight, the response's route.
    pub(crate) fn key(&self) -> &Arc<str> {
        self.key.get_or_init(|| jsonrpc::id_key(self.id()))
    }

    /// Who makes the request, and the scopes it is granted, when an authenticator
    /// established them (HTTP).
    pub(crate) fn identity(&self) -> Option<&Identity> {
        self.identity.map(|i| &**i)
    }

    /// The running server.
    pub(crate) fn server(&self) -> &ServerHandle {
        &self.session.server
    }

    /// The version whose shapes answer the request.
    pub(crate) fn version(&self) -> ProtocolVersion {
        match &self.stateless {
            Some(s) => s.version,
            None => self.session.client().protocol_version,
        }
    }

    /// Who made the request: its `_meta` (stateless), or the session's `initialize`.
    pub(crate) fn client(&self) -> Arc<ClientInfo> {
        match &self.stateless {
            Some(s) => s.client.clone(),
            None => self.session.client(),
        }
    }

    /// Which log messages of the request's call go to the client.
    pub(crate) fn log_policy(&self) -> LogPolicy {
        match &self.stateless {
            Some(s) => LogPolicy::Request(s.log_level),
            None => LogPolicy::Session,
        }
    }

    /// The connection a call of the request reaches the client through: the session, or —
    /// for a stateless request — the session seen as its principal (tool changes go to the
    /// principal's selection).
    pub(crate) fn connection(&self) -> Arc<dyn Connection> {
        match self.stateless {
            Some(_) => self
                .session
                .as_principal
                .get_or_init(|| {
                    Arc::new(StatelessConnection {
                        session: Arc::downgrade(self.session),
                        server: self.session.server.clone(),
                    })
                })
                .clone(),
            None => self.session.clone(),
        }
    }

    /// The response to the request with `outcome` in the version's shape (with `cache` hints in
    /// 2026-07-28).
    pub(crate) fn reply<T: Serialize>(
        &self,
        outcome: Result<T, RpcError>,
        cache: Option<CacheHints>,
    ) -> Reply {
        let info = &self.server().shared.info;
        response(self.id(), self.version(), info, outcome, cache)
    }

    /// Answers the request with `outcome` in the version's shape.
    pub(crate) fn answer<T: Serialize>(&self, outcome: Result<T, RpcError>) {
        self.respond(self.reply(outcome, None));
    }

    /// Sends the request's response (an error is recorded on the request's span).
    pub(crate) fn respond(&self, reply: Reply) {
        if let Some(e) = &reply.error {
            telemetry::record_error(&tracing::Span::current(), e);
        }
        self.session.respond_as(|| self.key().clone(), reply);
    }

    /// Answers the request with an error.
    pub(crate) fn refuse(&self, e: &RpcError) {
        self.session.refuse(self.id(), e);
    }
}

impl Session {
    /// The principal's key in a request state's binding.
    pub(crate) fn principal_key(&self) -> Cow<'static, str> {
        match &self.principal {
            Principal::Local => Cow::Borrowed("local"),
            Principal::Subject(s) => Cow::Owned(format!("subject:{s}")),
            Principal::Anonymous => Cow::Borrowed("anonymous"),
        }
    }
}

/// The response to a request: its result in the version's shape (in 2026-07-28 with `resultType`,
/// the server's identity, and cache hints when the result is cacheable), or its error.
pub(crate) fn response<T: Serialize>(
    id: &str,
    version: ProtocolVersion,
    info: &Implementation,
    outcome: Result<T, RpcError>,
    cache: Option<CacheHints>,
) -> Reply {
    match outcome {
        Err(e) => Reply::error(id, &e),
        Ok(result) if version.is_stateless() => Reply::result(jsonrpc::result_response(
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
    // The server's own values come only from the sealed state, and an answer sealed there
    // stays the one the tool gets: the client carries the state, it cannot change it.
    for (key, answer) in retry.input_responses {
        if key.starts_with(MEMO_PREFIX) {
            continue;
        }
        if answers.contains_key(&key) {
            tracing::debug!(
                key = key.as_str(),
                "an inputResponses entry names an answer sealed in the request state: the sealed one stands"
            );
            continue;
        }
        answers.insert(key, answer);
    }
    Ok(answers)
}

/// A session as the connection of a stateless request's calls: notifications reach the
/// request's stream; tool changes belong to the request's principal; there is no
/// server-to-client request (input comes by rounds). The session keeps it, so it holds the
/// session weakly: a call's context kept past its session reaches nothing.
struct StatelessConnection {
    session: Weak<Session>,
    server: ServerHandle,
}

impl Connection for StatelessConnection {
    fn send(&self, related: Option<&Arc<str>>, message: String) {
        if let Some(session) = self.session.upgrade() {
            session.emit(message, related, false);
        }
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
        let session = self
            .session
            .upgrade()
            .ok_or("the request this call belongs to has ended")?;
        let server = &self.server;
        let principal = &session.principal;
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
                .notify(crate::server::offerings::change::Change::Tools(Some(
                    principal,
                )));
        }
        if let Principal::Subject(subject) = principal {
            // The subject's next request may reach another replica, or one started later:
            // its whole selection is stored before the others are told of the change.
            let replicas = &server.shared.replicas;
            if let Some(selection) = server.shared.principals.get(principal)
                && let Ok(value) = serde_json::to_string(
                    &crate::server::replicas::SelectionWire::from(&selection.to_batch()),
                )
            {
                replicas.put_in_order(
                    crate::server::offerings::selection::selection_key(subject),
                    value,
                    crate::server::offerings::selection::SELECTION_TTL,
                );
            }
            replicas.publish(crate::server::replicas::Event::PrincipalTools {
                subject: subject.clone(),
                batch: crate::server::replicas::SelectionWire::from(batch),
            });
        }
        Ok(active)
    }

    fn active_tools(&self) -> Vec<String> {
        let server = &self.server;
        let selection = self
            .session
            .upgrade()
            .and_then(|session| server.shared.principals.get(&session.principal))
            .unwrap_or_else(|| server.shared.selection());
        selection.active(&server.catalog())
    }

    fn server(&self) -> &ServerHandle {
        &self.server
    }

    fn share_key(&self) -> String {
        self.session
            .upgrade()
            .map(|session| session.share_key())
            .unwrap_or_default()
    }
}
