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

use crate::protocol::jsonrpc::{self, Message, Reply};
use crate::protocol::request::{Method, Request};
use crate::protocol::wire::{
    CancelledParams, DiscoverResult, Empty, InitializeParams, InitializeResult, ListenParams,
    SetLevelParams, SubscriptionFilter,
};
use crate::protocol::{LogLevel, ProtocolVersion, RpcError, code};
use crate::tool::{CancellationToken, ClientInfo};

use super::request::{Req, Stateless, response};
use super::session::{InFlight, Session, lock};
use super::tasks;

use super::telemetry::{self, Transport};

/// `-32601` for a method this server does not have (or does not offer: `what`).
pub(crate) fn method_not_found(method: &str, what: Option<&str>) -> RpcError {
    let message = match what {
        Some(what) => format!("Method not found: `{method}` (this server offers no {what})"),
        None => format!("Method not found: `{method}`"),
    };
    RpcError::new(code::METHOD_NOT_FOUND, message)
}

/// Which requests a method serves: those of a session (2025-11-25 and before), those of the
/// stateless revision (2026-07-28), or both.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Serves {
    Sessions,
    Stateless,
    Both,
}

/// The capability a method belongs to: a server that does not declare it does not have the
/// method (-32601, naming what the server does not offer).
#[derive(Clone, Copy, Debug)]
enum Needs {
    Nothing,
    Resources,
    Prompts,
    Completions,
    Tasks,
    Skills,
}

impl Needs {
    /// The capability's name in the -32601 message.
    fn name(self) -> &'static str {
        match self {
            Needs::Nothing => "",
            Needs::Resources => "resources",
            Needs::Prompts => "prompts",
            Needs::Completions => "completions",
            Needs::Tasks => "tasks",
            Needs::Skills => "skills",
        }
    }
}

/// A method's handler: the session, the request as the method groups see it, and the request
/// as it was read (its params for the handler to turn into its own type).
type Handler = fn(&Arc<Session>, &Req<'_>, &Request<'_>);

/// One row of the dispatch table.
struct Route {
    method: Method,
    serves: Serves,
    needs: Needs,
    handle: Handler,
}

/// A row of [`ROUTES`].
const fn route(method: Method, serves: Serves, needs: Needs, handle: Handler) -> Route {
    Route {
        method,
        serves,
        needs,
        handle,
    }
}

/// The dispatch table: every method a client may request, in the order of [`Method`] (so a
/// method's row is found by its index), with the revisions that have it and the capability
/// it needs.
const ROUTES: [Route; 23] = {
    use Method as M;
    use Needs as N;
    use Serves::{Both, Sessions, Stateless};
    [
        route(M::Initialize, Sessions, N::Nothing, |s, r, q| {
            s.answer(r.id(), s.initialize(q.params));
        }),
        route(M::Ping, Sessions, N::Nothing, |s, r, _| {
            s.answer(r.id(), Ok(Empty {}));
        }),
        route(M::SetLevel, Sessions, N::Nothing, |s, r, q| {
            s.answer(r.id(), s.set_level(q.params));
        }),
        route(M::ToolsList, Both, N::Nothing, |s, r, q| {
            s.list_tools(r, q.params);
        }),
        route(M::ToolsCall, Both, N::Nothing, Session::call_tool),
        route(M::ResourcesList, Both, N::Resources, Session::resources),
        route(
            M::ResourceTemplatesList,
            Both,
            N::Resources,
            Session::resources,
        ),
        route(M::ResourcesRead, Both, N::Resources, Session::resources),
        route(
            M::ResourcesSubscribe,
            Sessions,
            N::Resources,
            Session::resources,
        ),
        route(
            M::ResourcesUnsubscribe,
            Sessions,
            N::Resources,
            Session::resources,
        ),
        route(M::DirectoryRead, Both, N::Skills, Session::skills),
        route(M::PromptsList, Both, N::Prompts, Session::prompts),
        route(M::PromptsGet, Both, N::Prompts, Session::prompts),
        route(M::Complete, Both, N::Completions, |s, r, q| {
            s.completion(r, q.params);
        }),
        route(M::TasksGet, Both, N::Tasks, Session::tasks_request),
        route(M::TasksResult, Sessions, N::Tasks, Session::tasks_request),
        route(M::TasksList, Sessions, N::Tasks, Session::tasks_request),
        route(M::TasksCancel, Both, N::Tasks, Session::tasks_request),
        route(M::TasksUpdate, Stateless, N::Tasks, Session::tasks_request),
        route(M::SkillsList, Both, N::Skills, Session::skills),
        route(M::SkillsGet, Both, N::Skills, Session::skills),
        route(M::Discover, Stateless, N::Nothing, |s, r, _| s.discover(r)),
        route(M::Listen, Stateless, N::Nothing, |s, r, q| {
            s.listen(r, q.params)
        }),
    ]
};

/// The row of `method`, if a client may request it.
fn route_of(method: Method) -> Option<&'static Route> {
    ROUTES.get(method as usize).filter(|r| r.method == method)
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

    /// Handles one message parsed already (HTTP: a notification or a response).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn dispatch(self: &Arc<Self>, message: Message<'_>) {
        self.route(message, false, Transport::Http);
    }

    /// Handles one request read already (HTTP reads it once to check its headers);
    /// `stateless` when the transport knows it is of a stateless revision (its
    /// `MCP-Protocol-Version` header says so), whatever its `_meta` says.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn dispatch_request(self: &Arc<Self>, request: &Request<'_>, stateless: bool) {
        self.request(request, stateless, Transport::Http);
    }

    /// Handles one message that came over `transport`.
    fn route(self: &Arc<Self>, message: Message<'_>, stateless: bool, transport: Transport) {
        match message {
            Message::Request { id, method, params } => {
                let request = Request::read(Some(id), method, params);
                self.request(&request, stateless, transport);
            }
            Message::Notification { method, params } => {
                let request = Request::read(None, method, params);
                let span = telemetry::request_span(&request, transport);
                let _entered = span.enter();
                self.notification(&request);
            }
            Message::Response { id, outcome } => self.response(id, outcome),
        }
    }

    /// A request (or, without an id, a notification), in a span of its own (see
    /// [`telemetry`]).
    fn request(self: &Arc<Self>, request: &Request<'_>, stateless: bool, transport: Transport) {
        let span = telemetry::request_span(request, transport);
        let _entered = span.enter();
        let Some(id) = request.id else {
            return self.notification(request);
        };
        if stateless || request.stateless {
            self.stateless_request(id, request);
        } else {
            self.session_request(id, request);
            telemetry::record_version(&span, || self.client().protocol_version);
        }
    }

    /// Whether the server declared the capability a method needs.
    fn declares(&self, needs: Needs) -> bool {
        let shared = &self.server.shared;
        match needs {
            Needs::Nothing => true,
            Needs::Resources => shared.capabilities.resources.is_some(),
            Needs::Prompts => shared.capabilities.prompts.is_some(),
            Needs::Completions => shared.capabilities.completions.is_some(),
            Needs::Tasks => shared.capabilities.tasks.is_some(),
            Needs::Skills => self.server.offerings().has_skills(),
        }
    }

    /// Answers request `id` with an outcome computed at once.
    fn answer<T: Serialize>(&self, id: &str, outcome: Result<T, RpcError>) {
        if let Err(e) = &outcome {
            telemetry::record_error(&Span::current(), e);
        }
        self.respond(id, Reply::of(id, outcome));
    }

    /// Answers request `id` with an error (recorded on the request's span).
    pub(crate) fn refuse(&self, id: &str, e: &RpcError) {
        telemetry::record_error(&Span::current(), e);
        self.respond(id, Reply::error(id, e));
    }

    /// A request of a session (2025-11-25 and before).
    fn session_request(self: &Arc<Self>, id: &RawValue, request: &Request<'_>) {
        let req = Req {
            id,
            stateless: None,
        };
        let id_text = id.get();
        let route = route_of(request.method);
        // A connection's session serves nothing but `initialize` and `ping` before its
        // handshake (a 2026-07-28 request carries its own `_meta` and needs none); a method
        // that does not exist is -32601 either way.
        let known = match request.method {
            Method::Initialize | Method::Ping => false,
            Method::Other => ["tools/", "resources/", "prompts/", "tasks/", "skills/"]
                .iter()
                .any(|group| request.name.starts_with(group)),
            _ => true,
        };
        if self.live() && known && !self.initialized.load(Ordering::Relaxed) {
            let e = RpcError::new(
                code::INVALID_REQUEST,
                format!(
                    "Invalid Request: `{}` before `initialize`: initialize the session first (or send a 2026-07-28 request with its `_meta`)",
                    request.name
                ),
            );
            return self.refuse(id_text, &e);
        }
        match route.filter(|r| r.serves != Serves::Stateless) {
            None => self.refuse(id_text, &method_not_found(&request.name, None)),
            Some(route) if !self.declares(route.needs) => {
                let e = method_not_found(&request.name, Some(route.needs.name()));
                self.refuse(id_text, &e);
            }
            Some(route) => (route.handle)(self, &req, request),
        }
    }

    /// A stateless (2026-07-28) request: its `_meta` says who asks; the methods the revision
    /// removed (`initialize`, `ping`, `logging/setLevel`, `resources/subscribe`…) do not exist
    /// for it.
    fn stateless_request(self: &Arc<Self>, id: &RawValue, request: &Request<'_>) {
        let id_text = id.get();
        let checked = request
            .stateless_meta()
            .and_then(|meta| meta.version().map(|v| (meta, v)));
        let (meta, version) = match checked {
            Ok(checked) => checked,
            Err(e) => return self.refuse(id_text, &e),
        };
        telemetry::record_version(&Span::current(), || version);
        let route = match route_of(request.method) {
            None => return self.refuse(id_text, &method_not_found(&request.name, None)),
            Some(route) if route.serves == Serves::Sessions => {
                let e = RpcError::new(
                    code::METHOD_NOT_FOUND,
                    format!(
                        "Method not found: `{}` does not exist in protocol {version}",
                        request.name
                    ),
                );
                return self.refuse(id_text, &e);
            }
            Some(route) if !self.declares(route.needs) => {
                let e = method_not_found(&request.name, Some(route.needs.name()));
                return self.refuse(id_text, &e);
            }
            Some(route) => route,
        };
        let req = Req {
            id,
            stateless: Some(Arc::new(Stateless {
                version,
                client: self.server.shared.clients.client(version, &meta),
                log_level: meta.log_level,
            })),
        };
        (route.handle)(self, &req, request);
    }

    /// A tasks method; in 2026-07-28 the client must declare the tasks extension (checked
    /// before the task is looked for).
    fn tasks_request(self: &Arc<Self>, req: &Req<'_>, request: &Request<'_>) {
        if req.stateless.is_some() && !Session::declares_tasks(req) {
            let e = tasks::needs_extension(&format!("`{}`", request.name));
            return self.refuse(req.id(), &e);
        }
        self.tasks_method(req, request.method, request.params);
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
        let reply = response(
            req.id(),
            self.era(req),
            &shared.info,
            Ok(result),
            Some(shared.hints),
        );
        self.respond(req.id(), reply);
    }

    /// `subscriptions/listen`: a stream of the changes the client asks for (and the server
    /// has), acknowledged first; it lasts until the client leaves or cancels it.
    fn listen(self: &Arc<Self>, req: &Req<'_>, params: Option<&RawValue>) {
        let requested = match jsonrpc::parse_params::<ListenParams>(params) {
            Ok(p) => p.map(|p| p.notifications).unwrap_or_default(),
            Err(e) => return self.refuse(req.id(), &e),
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
        let key = listeners.open(self.clone(), req.id, filter);
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

    fn notification(&self, request: &Request<'_>) {
        match request.method {
            Method::Initialized => {}
            Method::Cancelled => {
                if let Ok(Some(p)) = jsonrpc::parse_params::<CancelledParams<'_>>(request.params) {
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
            _ => tracing::debug!(method = &*request.name, "ignoring an unknown notification"),
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
        F: Future<Output = Reply> + Send + 'static,
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
            return self.refuse(id, &e);
        }
        if in_flight.contains_key(&key) {
            drop(in_flight);
            let e = RpcError::new(
                code::INVALID_REQUEST,
                "Invalid Request: a request with this id is still running on this connection",
            );
            return self.refuse(id, &e);
        }
        // The request's span (current here) lasts until the response is sent.
        let span = Span::current();
        let task = tokio::spawn(
            async move {
                let response = response.await;
                telemetry::record_response(&Span::current(), &response);
                lock(&session.in_flight).remove(&task_key);
                session.emit_reply(response, &task_key);
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
