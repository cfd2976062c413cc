//! Routing: each incoming request goes through one table ([`ROUTES`]) to the plain function
//! that handles its method (`crate::server::core::methods`), after the checks the table declares: whether
//! the request's revision has the method, and whether the server declared the capability it
//! needs. Responses to our own requests and notifications (`cancelled`) are handled here too.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::protocol::walk::JsonText;
use tracing::{Instrument as _, Span};

use crate::protocol::inbound::{self, Inbound};
use crate::protocol::jsonrpc::{self, Reply};
use crate::protocol::request::{Method, Request};
use crate::protocol::wire::CancelledParams;
use crate::protocol::{RpcError, code};
use crate::tool::{CancellationToken, Identity};

use crate::server::core::methods;
use crate::server::core::request::Cx;
use crate::server::core::session::{InFlight, Session};
use crate::server::middleware::{Flow, RequestInfo};
use crate::sync::lock;

use crate::server::telemetry::{self, Transport};

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

/// A method's handler: the request as its handler sees it, and the request as it was read
/// (its params for the handler to turn into its own type).
type Handler = fn(&Cx<'_>, &Request<'_>);

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

/// A handler of typed params with a typed answer, given at once: the table reads the params
/// into the handler's type (refusing what does not fit) and sends the answer. For methods of
/// sessions only (2025-11-25 and before), whose answer has one shape in every version that has
/// them.
macro_rules! plain {
    ($handler:path) => {
        |cx, request| {
            let outcome = jsonrpc::parse_params(request.params).and_then(|p| $handler(cx, p));
            cx.respond(Reply::of(cx.id(), outcome));
        }
    };
}

/// A handler of typed params that answers on its own (later, or with a shape of its own).
macro_rules! with {
    ($handler:path) => {
        |cx, request| match jsonrpc::parse_params(request.params) {
            Ok(params) => $handler(cx, params),
            Err(e) => cx.refuse(&e),
        }
    };
}

/// The dispatch table: every method a client may request, in the order of [`Method`] (so a
/// method's row is found by its index), with the revisions that have it, the capability it
/// needs and its handler.
const ROUTES: [Route; 23] = {
    use Method as M;
    use Needs as N;
    use Serves::{Both, Sessions, Stateless};
    use methods::{completion, lifecycle, prompts, resources, skills, subscriptions, tasks, tools};
    [
        route(
            M::Initialize,
            Sessions,
            N::Nothing,
            plain!(lifecycle::initialize),
        ),
        route(M::Ping, Sessions, N::Nothing, plain!(lifecycle::ping)),
        route(
            M::SetLevel,
            Sessions,
            N::Nothing,
            plain!(lifecycle::set_level),
        ),
        route(M::ToolsList, Both, N::Nothing, with!(tools::list)),
        route(M::ToolsCall, Both, N::Nothing, tools::call),
        route(M::ResourcesList, Both, N::Resources, with!(resources::list)),
        route(
            M::ResourceTemplatesList,
            Both,
            N::Resources,
            with!(resources::templates),
        ),
        route(M::ResourcesRead, Both, N::Resources, resources::read),
        route(
            M::ResourcesSubscribe,
            Sessions,
            N::Resources,
            plain!(resources::subscribe),
        ),
        route(
            M::ResourcesUnsubscribe,
            Sessions,
            N::Resources,
            plain!(resources::unsubscribe),
        ),
        route(M::DirectoryRead, Both, N::Skills, skills::directory),
        route(M::PromptsList, Both, N::Prompts, with!(prompts::list)),
        route(M::PromptsGet, Both, N::Prompts, prompts::get),
        route(
            M::Complete,
            Both,
            N::Completions,
            with!(completion::complete),
        ),
        route(M::TasksGet, Both, N::Tasks, tasks::get),
        route(M::TasksResult, Sessions, N::Tasks, tasks::result),
        route(M::TasksList, Sessions, N::Tasks, tasks::list),
        route(M::TasksCancel, Both, N::Tasks, tasks::cancel),
        route(M::TasksUpdate, Stateless, N::Tasks, tasks::update),
        route(M::SkillsList, Both, N::Skills, skills::list),
        route(M::SkillsGet, Both, N::Skills, skills::get),
        route(M::Discover, Stateless, N::Nothing, lifecycle::discover),
        route(
            M::Listen,
            Stateless,
            N::Nothing,
            with!(subscriptions::listen),
        ),
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
        // Read where it lies, not moved out first.
        match inbound::read_line(line) {
            Ok(ref inbound) => self.route(inbound, Transport::Pipe),
            Err(response) => self.send(response),
        }
    }

    /// Handles one message read already (HTTP: a notification or a response).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn dispatch(self: &Arc<Self>, inbound: &Inbound<'_>) {
        self.route(inbound, Transport::Http);
    }

    /// Handles one request read already (HTTP reads it once to check its headers), with the
    /// session's credentials (a session for that request alone); `stateless` when the
    /// transport knows it is of a stateless revision (its `MCP-Protocol-Version` header says
    /// so), whatever its `_meta` says.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn dispatch_request(self: &Arc<Self>, request: &Request<'_>, stateless: bool) {
        self.request(request, stateless, Transport::Http, self.identity.as_ref());
    }

    /// Handles one request of a session that came with credentials of its own (HTTP): the
    /// session is its principal's, and the request is granted what its own token grants.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn dispatch_request_as(
        self: &Arc<Self>,
        request: &Request<'_>,
        identity: Option<&Arc<Identity>>,
    ) {
        self.request(request, false, Transport::Http, identity);
    }

    /// Handles one message that came over `transport`.
    fn route(self: &Arc<Self>, inbound: &Inbound<'_>, transport: Transport) {
        match inbound {
            Inbound::Request(request) => {
                self.request(request, false, transport, self.identity.as_ref());
            }
            Inbound::Response { id, outcome } => self.response(*id, *outcome),
        }
    }

    /// A request (or, without an id, a notification) made with `identity`'s credentials, in
    /// a span of its own (see [`telemetry`]).
    fn request(
        self: &Arc<Self>,
        request: &Request<'_>,
        stateless: bool,
        transport: Transport,
        identity: Option<&Arc<Identity>>,
    ) {
        let span = telemetry::request_span(request, transport);
        let _entered = span.enter();
        let Some(id) = request.id else {
            return self.notification(request);
        };
        if stateless || request.stateless {
            self.stateless_request(id, request, &span, identity);
        } else {
            self.session_request(id, request, identity);
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

    /// Answers request `id` with an error (recorded on the request's span).
    pub(crate) fn refuse(&self, id: &str, e: &RpcError) {
        telemetry::record_error(&Span::current(), e);
        self.respond(id, Reply::error(id, e));
    }

    /// A request of a session (2025-11-25 and before).
    fn session_request(
        self: &Arc<Self>,
        id: JsonText<'_>,
        request: &Request<'_>,
        identity: Option<&Arc<Identity>>,
    ) {
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
            Some(route) => {
                let cx = Cx {
                    session: self,
                    id,
                    key: &request.key,
                    stateless: None,
                    identity,
                };
                if self.server.shared.middleware.is_empty() || self.admitted(&cx, request) {
                    (route.handle)(&cx, request);
                }
            }
        }
    }

    /// A stateless (2026-07-28) request: its `_meta` says who asks; the methods the revision
    /// removed (`initialize`, `ping`, `logging/setLevel`, `resources/subscribe`…) do not exist
    /// for it.
    fn stateless_request(
        self: &Arc<Self>,
        id: JsonText<'_>,
        request: &Request<'_>,
        span: &Span,
        identity: Option<&Arc<Identity>>,
    ) {
        let id_text = id.get();
        let clients = &self.server.shared.clients;
        let text = request.members.meta.map(JsonText::get);
        // A `_meta` the last request came with was checked then.
        let repeated = text.and_then(|t| clients.repeated(t));
        let checked = match repeated {
            Some(stateless) => request.check().map(|()| stateless),
            None => request
                .stateless_meta()
                .and_then(|meta| meta.version().map(|v| (meta, v)))
                .map(|(meta, version)| {
                    let stateless = clients.stateless(version, &meta);
                    if let Some(text) = text {
                        clients.remember(text, &stateless);
                    }
                    stateless
                }),
        };
        let stateless = match checked {
            Ok(stateless) => stateless,
            Err(e) => return self.refuse(id_text, &e),
        };
        let version = stateless.version;
        telemetry::record_version(span, || version);
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
        let cx = Cx {
            session: self,
            id,
            key: &request.key,
            stateless: Some(stateless),
            identity,
        };
        if self.server.shared.middleware.is_empty() || self.admitted(&cx, request) {
            (route.handle)(&cx, request);
        }
    }

    /// Asks the middleware about a request: whether it goes on to its handler (if not, it
    /// was answered).
    fn admitted(&self, cx: &Cx<'_>, request: &Request<'_>) -> bool {
        let principal = self.share_key();
        let info = RequestInfo {
            method: &request.name,
            id: cx.id,
            params: request.params,
            version: cx.version(),
            identity: cx.identity(),
            principal: &principal,
        };
        match self.server.shared.middleware.request(&info) {
            Flow::Continue => true,
            Flow::Refuse(e) => {
                cx.refuse(&e);
                false
            }
            Flow::Answer(result) => {
                cx.answer(Ok(result));
                false
            }
        }
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
    fn response(&self, id: JsonText<'_>, outcome: Result<JsonText<'_>, JsonText<'_>>) {
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
        (id, key): (&str, &Arc<str>),
        cancel: CancellationToken,
        response: F,
    ) where
        F: Future<Output = Reply> + Send + 'static,
    {
        let session = self.clone();
        let key = key.clone();
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
