//! Routing: each incoming message goes to the function of its method group — lifecycle
//! (`initialize`, `ping`), logging, tools, resources, prompts, completion — and each group
//! checks the capability it belongs to explicitly. Responses to our own requests and
//! notifications (`cancelled`) are handled here too.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde::Serialize;
use serde_json::value::RawValue;
use tracing::{Instrument as _, Span};

use crate::protocol::jsonrpc::{self, Message};
use crate::protocol::meta::RequestMeta;
use crate::protocol::wire::{
    CancelledParams, DiscoverResult, Empty, InitializeParams, InitializeResult, ListenParams,
    SetLevelParams, SubscriptionFilter,
};
use crate::protocol::{LogLevel, ProtocolVersion, RpcError, code};
use crate::tool::{CancellationToken, ClientInfo};

use super::request::{Req, Stateless, response};
use super::session::{InFlight, Session, lock};
use super::tasks;

pub(crate) mod telemetry;

use telemetry::Transport;

/// `-32601` for a method this server does not have (or does not offer: `what`).
pub(crate) fn method_not_found(method: &str, what: Option<&str>) -> RpcError {
    let message = match what {
        Some(what) => format!("Method not found: `{method}` (this server offers no {what})"),
        None => format!("Method not found: `{method}`"),
    };
    RpcError::new(code::METHOD_NOT_FOUND, message)
}

impl Session {
    /// Handles one incoming line. Everything but a tool call that must wait is answered in
    /// order, before the next line is read.
    pub(crate) fn handle_line(self: &Arc<Self>, line: &[u8]) {
        match jsonrpc::parse(line) {
            Ok(message) => self.route(message, false, Transport::Pipe),
            Err(response) => self.send(response),
        }
    }

    /// Handles one message parsed already (the HTTP transport reads its id first).
    pub(crate) fn dispatch(self: &Arc<Self>, message: Message<'_>) {
        self.dispatch_as(message, false);
    }

    /// Handles one message; `stateless` when the transport knows the request is of a
    /// stateless revision (HTTP: its `MCP-Protocol-Version` header says so), whatever its
    /// `_meta` says.
    pub(crate) fn dispatch_as(self: &Arc<Self>, message: Message<'_>, stateless: bool) {
        self.route(message, stateless, Transport::Http);
    }

    /// Handles one message that came over `transport`, a request or a notification in a span
    /// of its own (see [`telemetry`]).
    fn route(self: &Arc<Self>, message: Message<'_>, stateless: bool, transport: Transport) {
        match message {
            Message::Request { id, method, params } => {
                let span = telemetry::request_span(&method, Some(id), params, transport);
                let _entered = span.enter();
                if stateless || RequestMeta::is_stateless(&method, params) {
                    self.stateless_request(id, &method, params);
                } else {
                    self.request(id, &method, params);
                    telemetry::record_version(&span, || self.client().protocol_version);
                }
            }
            Message::Notification { method, params } => {
                let span = telemetry::request_span(&method, None, params, transport);
                let _entered = span.enter();
                self.notification(&method, params);
            }
            Message::Response { id, outcome } => self.response(id, outcome),
        }
    }

    /// Whether the server declared the capability (`what`) a method belongs to: the methods of
    /// an undeclared capability do not exist for the client, and are answered -32601 here.
    pub(crate) fn offered(&self, id: &str, declared: bool, method: &str, what: &str) -> bool {
        if !declared {
            let e = method_not_found(method, Some(what));
            telemetry::record_error(&Span::current(), &e);
            self.respond(id, jsonrpc::error_response(id, &e));
        }
        declared
    }

    /// Answers request `id` with an outcome computed at once.
    fn answer<T: Serialize>(&self, id: &str, outcome: Result<T, RpcError>) {
        if let Err(e) = &outcome {
            telemetry::record_error(&Span::current(), e);
        }
        self.respond(id, jsonrpc::response(id, outcome));
    }

    fn request(self: &Arc<Self>, id: &RawValue, method: &str, params: Option<&RawValue>) {
        let req = Req {
            id,
            stateless: None,
        };
        let id_text = id.get();
        // A connection's session serves nothing but `initialize` and `ping` before its
        // handshake (a 2026-07-28 request carries its own `_meta` and needs none); a method
        // that does not exist is -32601 either way.
        let known = matches!(method, "logging/setLevel" | "completion/complete")
            || ["tools/", "resources/", "prompts/", "tasks/", "skills/"]
                .iter()
                .any(|group| method.starts_with(group));
        if self.live() && known && !self.initialized.load(Ordering::Relaxed) {
            let e = RpcError::new(
                code::INVALID_REQUEST,
                format!(
                    "Invalid Request: `{method}` before `initialize`: initialize the session first (or send a 2026-07-28 request with its `_meta`)"
                ),
            );
            return self.answer::<Empty>(id_text, Err(e));
        }
        match method {
            "initialize" => self.answer(id_text, self.initialize(params)),
            "ping" => self.answer(id_text, Ok(Empty {})),
            "logging/setLevel" => self.answer(id_text, self.set_level(params)),
            "tools/list" => self.list_tools(&req, params),
            "tools/call" => self.call_tool(&req, params),
            "resources/list"
            | "resources/templates/list"
            | "resources/read"
            | "resources/subscribe"
            | "resources/unsubscribe" => self.resources(&req, method, params),
            "prompts/list" | "prompts/get" => self.prompts(&req, method, params),
            "completion/complete" => self.completion(&req, params),
            "skills/list" | "skills/get" | "resources/directory/read" => {
                self.skills(&req, method, params);
            }
            "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel" => {
                if self.offered(id_text, self.has_tasks(), method, "tasks") {
                    self.tasks_method(&req, method, params);
                }
            }
            _ => self.answer::<Empty>(id_text, Err(method_not_found(method, None))),
        }
    }

    /// Whether some tool runs as a task (the server then offers the tasks methods).
    fn has_tasks(&self) -> bool {
        self.server.shared.capabilities.tasks.is_some()
    }

    /// A stateless (2026-07-28) request: its `_meta` says who asks; the methods the revision
    /// removed (`initialize`, `ping`, `logging/setLevel`, `resources/subscribe`…) do not exist
    /// for it.
    fn stateless_request(self: &Arc<Self>, id: &RawValue, method: &str, params: Option<&RawValue>) {
        let id_text = id.get();
        let checked = RequestMeta::parse(params).and_then(|meta| meta.version().map(|v| (meta, v)));
        let (meta, version) = match checked {
            Ok(checked) => checked,
            Err(e) => return self.answer::<Empty>(id_text, Err(e)),
        };
        telemetry::record_version(&Span::current(), || version);
        let req = Req {
            id,
            stateless: Some(Arc::new(Stateless {
                version,
                client: self.server.shared.clients.client(version, &meta),
                log_level: meta.log_level,
            })),
        };
        match method {
            "server/discover" => self.discover(&req),
            "subscriptions/listen" => self.listen(&req, params),
            "tools/list" => self.list_tools(&req, params),
            "tools/call" => self.call_tool(&req, params),
            "resources/list" | "resources/templates/list" | "resources/read" => {
                self.resources(&req, method, params);
            }
            "prompts/list" | "prompts/get" => self.prompts(&req, method, params),
            "completion/complete" => self.completion(&req, params),
            "skills/list" | "skills/get" | "resources/directory/read" => {
                self.skills(&req, method, params);
            }
            "tasks/get" | "tasks/update" | "tasks/cancel" if self.has_tasks() => {
                // The extension is checked before the task is looked for.
                if Session::declares_tasks(&req) {
                    self.tasks_method(&req, method, params);
                } else {
                    let e = tasks::needs_extension(&format!("`{method}`"));
                    self.answer::<Empty>(id_text, Err(e));
                }
            }
            "initialize"
            | "ping"
            | "logging/setLevel"
            | "resources/subscribe"
            | "resources/unsubscribe" => self.answer::<Empty>(
                id_text,
                Err(RpcError::new(
                    code::METHOD_NOT_FOUND,
                    format!("Method not found: `{method}` does not exist in protocol {version}"),
                )),
            ),
            _ => self.answer::<Empty>(id_text, Err(method_not_found(method, None))),
        }
    }

    /// `server/discover`: the versions this server speaks, what it offers, its instructions.
    fn discover(&self, req: &Req<'_>) {
        let shared = &self.server.shared;
        // 2026-07-28 has no `tasks` capability: tasks are an extension there.
        let mut capabilities = shared.capabilities.clone();
        if capabilities.tasks.take().is_some() {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(tasks::TASKS_EXTENSION, serde_json::json!({}));
        }
        let result = DiscoverResult {
            supported_versions: ProtocolVersion::SUPPORTED
                .map(ProtocolVersion::as_str)
                .to_vec(),
            capabilities: &capabilities,
            instructions: shared.instructions.as_deref(),
        };
        let text = response(
            req.id(),
            self.era(req),
            &shared.info,
            Ok(result),
            Some(shared.hints),
        );
        self.respond(req.id(), text);
    }

    /// `subscriptions/listen`: a stream of the changes the client asks for (and the server
    /// has), acknowledged first; it lasts until the client leaves or cancels it.
    fn listen(self: &Arc<Self>, req: &Req<'_>, params: Option<&RawValue>) {
        let requested = match jsonrpc::parse_params::<ListenParams>(params) {
            Ok(p) => p.map(|p| p.notifications).unwrap_or_default(),
            Err(e) => return self.answer::<Empty>(req.id(), Err(e)),
        };
        let caps = &self.server.shared.capabilities;
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
        let listeners = &self.server.shared.listeners;
        let key = listeners.open(self, req.id, filter);
        if self.live() {
            // A connection's stream (stdio): it ends with the connection, or when the client
            // cancels the listen request.
            return;
        }
        // A stream of its own (HTTP): it ends when the client drops it.
        let session = self.clone();
        tokio::spawn(async move {
            session.out_gone().await;
            session.server.shared.listeners.remove(key);
        });
    }
    /// `initialize`: negotiates the version and records the client.
    fn initialize(&self, params: Option<&RawValue>) -> Result<InitializeResult<'_>, RpcError> {
        if self.initialized.load(Ordering::Relaxed) {
            return Err(RpcError::new(
                code::INVALID_REQUEST,
                "Invalid Request: the session is initialized already; open a new one to negotiate again",
            ));
        }
        let params = jsonrpc::parse_params::<InitializeParams<'_>>(params)?
            .ok_or_else(|| RpcError::new(code::INVALID_PARAMS, "`initialize` needs params"))?;
        let version = ProtocolVersion::negotiate(&params.protocol_version);
        self.set_client(ClientInfo {
            protocol_version: version,
            info: params.client_info,
            capabilities: params.capabilities,
        });
        self.initialized.store(true, Ordering::Relaxed);
        let shared = &self.server.shared;
        Ok(InitializeResult {
            protocol_version: version.as_str(),
            capabilities: &shared.capabilities,
            server_info: &shared.info,
            instructions: shared.instructions.as_deref(),
        })
    }

    /// `logging/setLevel`.
    fn set_level(&self, params: Option<&RawValue>) -> Result<Empty, RpcError> {
        let params = jsonrpc::parse_params::<SetLevelParams<'_>>(params)?.ok_or_else(|| {
            RpcError::new(code::INVALID_PARAMS, "`logging/setLevel` needs params")
        })?;
        let level = LogLevel::parse(&params.level).ok_or_else(|| {
            RpcError::new(
                code::INVALID_PARAMS,
                format!("unknown log level `{}`", params.level),
            )
        })?;
        self.log_level.store(level as u8, Ordering::Relaxed);
        self.persist();
        Ok(Empty {})
    }

    fn notification(&self, method: &str, params: Option<&RawValue>) {
        match method {
            "notifications/initialized" => {}
            "notifications/cancelled" => {
                if let Ok(Some(p)) = jsonrpc::parse_params::<CancelledParams<'_>>(params) {
                    let key = jsonrpc::id_key(p.request_id.get());
                    // A listen stream ends without a response.
                    self.server.shared.listeners.cancel(self, &key);
                    if let Some(call) = lock(&self.in_flight).remove(&key) {
                        // The token tells cooperative code; dropping the future is the
                        // cancellation itself. No response is sent: only the end of the
                        // request, for transports that hold a stream open for it.
                        call.cancel.cancel();
                        call.abort.abort();
                        self.emit(String::new(), Some(&key), true);
                    }
                }
            }
            other => tracing::debug!(method = other, "ignoring an unknown notification"),
        }
    }

    /// A response to a request we made of the client.
    fn response(&self, id: &RawValue, outcome: Result<&RawValue, &RawValue>) {
        let answer = match outcome {
            Ok(result) => serde_json::from_str(result.get())
                .map_err(|e| RpcError::new(code::PARSE_ERROR, e.to_string())),
            Err(error) => Err(
                serde_json::from_str::<serde_json::Value>(error.get()).map_or_else(
                    |e| RpcError::new(code::PARSE_ERROR, e.to_string()),
                    |v| RpcError::from_json(&v),
                ),
            ),
        };
        let ours = id
            .get()
            .parse::<u64>()
            .is_ok_and(|n| self.answered(n, answer));
        if !ours {
            tracing::debug!(id = id.get(), "ignoring a response to no request of ours");
        }
    }

    /// Answers a request from a task of its own, listed in the in-flight table (so that
    /// `notifications/cancelled` stops it) until its response is ready.
    pub(crate) fn spawn_tracked<F>(
        self: &Arc<Self>,
        id: &str,
        cancel: CancellationToken,
        response: F,
    ) where
        F: Future<Output = String> + Send + 'static,
    {
        let session = self.clone();
        let key = jsonrpc::id_key(id);
        let task_key = key.clone();
        // The in-flight table is locked while spawning, so the task cannot remove its entry
        // before it is inserted.
        let mut in_flight = lock(&self.in_flight);
        let max = self.server.shared.limits.max_in_flight;
        if in_flight.len() >= max {
            drop(in_flight);
            let e = RpcError::new(
                code::INTERNAL_ERROR,
                format!(
                    "too many calls running on this connection ({max}): wait for some to finish"
                ),
            );
            tracing::warn!(max, "a connection reached its limit of calls in flight");
            telemetry::record_error(&Span::current(), &e);
            return self.respond(id, jsonrpc::error_response(id, &e));
        }
        if in_flight.contains_key(&key) {
            drop(in_flight);
            let e = RpcError::new(
                code::INVALID_REQUEST,
                "Invalid Request: a request with this id is still running on this connection",
            );
            telemetry::record_error(&Span::current(), &e);
            return self.respond(id, jsonrpc::error_response(id, &e));
        }
        // The request's span (current here) lasts until the response is sent.
        let span = Span::current();
        let traced = (!span.is_disabled()).then(|| id.to_owned());
        let task = tokio::spawn(
            async move {
                let response = response.await;
                if let Some(id) = &traced {
                    telemetry::record_response(&Span::current(), id, &response);
                }
                lock(&session.in_flight).remove(&task_key);
                session.emit(response, Some(&task_key), true);
            }
            .instrument(span),
        );
        in_flight.insert(
            key,
            InFlight {
                abort: task.abort_handle(),
                cancel,
            },
        );
    }
}
