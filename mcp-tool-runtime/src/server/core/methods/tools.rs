//! The tools methods: `tools/list` (the catalog's pages, or a page of the session's own
//! selection) and `tools/call`, whose pipeline is [`run_tool`]: validate the
//! arguments, run the tool (catching a panic, within its time limit), shape its result, apply
//! the tool changes it asks for.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use serde_json::{Map, Value};

use crate::protocol::jsonrpc::Reply;
use crate::protocol::request::{Method, Request};
use crate::protocol::walk::JsonText;
use crate::protocol::wire::{ListParams, Retry, TaskParams};
use crate::protocol::{ProtocolVersion, RpcError, code, jsonrpc};
use crate::tool::arguments::Arguments;
use crate::tool::call_meta::CallMeta;
use crate::tool::context::{CallState, ProgressState, RelatedId};
use crate::tool::definition::def::{TaskSupport, missing_scopes, user_key};
use crate::tool::input::{Finish, InputRound};
use crate::tool::{Ctx, Identity, ToolResult};

use super::common::insufficient_scope as insufficient;
use super::run::{ToolRun, run_tool};
use super::task_run::{self, Run};
use super::tasks as tasks_methods;
use crate::server::core::handle::ServerHandle;
use crate::server::core::request::{Cx, answers, input_required};
use crate::server::core::session::{Opening, Session};
use crate::server::offerings::catalog::{Entry, render_page};
use crate::server::offerings::selection::Principal;
use crate::server::offerings::views::declares_ui;
use crate::server::state::Binding;
use crate::server::tasks::{self, TaskMode, TaskRecord, TaskStatus, store};
use crate::server::telemetry;

pub(crate) fn unknown_tool(name: &str) -> RpcError {
    RpcError::new(code::INVALID_PARAMS, format!("Unknown tool: `{name}`"))
}

/// The refusal of a call whose caller lacks a scope the tool needs: the error names every
/// scope the call needs (`data.requiredScopes`), as the HTTP challenge does.
pub(crate) fn insufficient_scope(entry: &Entry) -> RpcError {
    insufficient(&format!("calling `{}`", entry.name), entry.def.scopes())
}

fn invalid_cursor() -> RpcError {
    RpcError::new(code::INVALID_PARAMS, "Invalid cursor")
}

/// The entry of a tool the request's client may call: the session's selection, or for a
/// stateless request its principal's (or the server's). A deferred tool is callable before a
/// search lists it (deferring saves the list, it guards nothing: what may be called at all is
/// the selection's and `allowed_tools`' business).
pub(crate) fn active_entry(cx: &Cx<'_>, name: &str) -> Option<Arc<Entry>> {
    let (session, shared) = (cx.session, &cx.server().shared);
    let catalog = cx.server().catalog();
    let entry = catalog.get(name)?;
    let (hidden, always) = (entry.def.hidden(), entry.def.always_visible());
    let active = match &cx.stateless {
        None => session.selector.read().is_active(name, hidden, always),
        Some(_) => shared
            .principals
            .is_active(&session.principal, name, hidden, always)
            .unwrap_or_else(|| shared.is_active(name, hidden, always)),
    };
    active.then(|| entry.clone())
}

/// `tools/list`: the catalog's page rendered at start for the default selection, else a page
/// of the tools this session's (or this principal's) selection makes active.
pub(crate) fn list(cx: &Cx<'_>, params: Option<ListParams<'_>>) {
    let cursor = params.as_ref().and_then(|p| p.cursor.as_deref());
    cx.respond(tools_page(cx, cursor));
}

fn tools_page(cx: &Cx<'_>, cursor: Option<&str>) -> Reply {
    let (id, version) = (cx.id(), cx.version());
    let (session, shared) = (cx.session, &cx.server().shared);
    let catalog = cx.server().catalog();
    let principal_own = match &cx.stateless {
        Some(_) => shared.principals.get(&session.principal),
        None => None,
    };
    let is_own = principal_own.is_some();
    let selection = match (&cx.stateless, principal_own) {
        // Stateless: the principal's selection, if it has one.
        (Some(_), Some(own)) => own,
        (Some(_), None) => shared.selection(),
        (None, _) => session.selector.read().clone(),
    };
    // A caller without every scope the catalog's tools declare sees only the tools it may call.
    let granted = cx.identity().map(|i| &i.scopes[..]);
    let scoped = catalog.has_scopes() && granted.is_some();
    // Tools of one user (a gateway's) are listed to that user only.
    let user = catalog.has_personal().then(|| {
        user_key(
            cx.identity().map(|i| i.subject.as_str()),
            cx.session.principal == Principal::Local,
        )
    });
    let is_default = !is_own && selection.is_default() && !scoped && user.is_none();
    // App-only tools are listed to clients that declared MCP Apps (their hosts keep them from
    // the model), not to others, who would offer them to it.
    let apps = declares_ui(&cx.client().capabilities);
    if is_default {
        return match catalog.page(cursor, version, apps) {
            Some(page) => Reply::result(jsonrpc::raw_result_response(id, page)),
            None => Reply::error(id, &invalid_cursor()),
        };
    }
    let tools: Vec<&Entry> = catalog
        .entries()
        .iter()
        .map(|e| &**e)
        .filter(|e| {
            e.def.listed_for(apps)
                && selection.is_active(&e.name, e.def.starts_hidden(), e.def.always_visible())
                && e.def.missing_scopes(granted).is_empty()
                && user
                    .as_ref()
                    .is_none_or(|key| e.def.shown_to(key.as_deref()))
        })
        .collect();
    match render_page(&tools, cursor, version, &catalog) {
        Some(page) => Reply::result(jsonrpc::raw_result_response(id, &page)),
        None => Reply::error(id, &invalid_cursor()),
    }
}

impl Cx<'_> {
    /// The context of a call of the tool, prompt or resource `name`, made by this request,
    /// with the request's `_meta` and its progress token (`meta`, as text) and — for a
    /// stateless request — the answers it came with.
    pub(crate) fn call_context(
        &self,
        name: Arc<str>,
        (meta, token): (CallMeta, Option<Value>),
        input: Option<InputRound>,
    ) -> Ctx {
        Ctx::new(CallState {
            // The key when the request has it already, else the id as sent, when short.
            related: match self.key.get() {
                Some(key) => RelatedId::key(key.clone()),
                None => {
                    RelatedId::sent(self.id()).unwrap_or_else(|| RelatedId::key(self.key().clone()))
                }
            },
            id: std::sync::OnceLock::new(),
            tool: name,
            meta,
            client: self.client(),
            identity: self.identity.cloned(),
            conn: self.connection(),
            cancel: std::sync::OnceLock::new(),
            progress: ProgressState::new(token),
            log: self.log_policy(),
            input,
            task: std::sync::OnceLock::new(),
        })
    }

    /// The input round of a stateless request (the answers its retry carries), and what a
    /// request state is bound to; `None` for a request of a session.
    pub(crate) fn round_of(
        &self,
        params: Option<JsonText<'_>>,
        method: &'static str,
        name: &str,
        arguments: &impl serde::Serialize,
    ) -> Result<Option<(InputRound, Binding)>, RpcError> {
        if self.stateless.is_none() {
            return Ok(None);
        }
        let binding = Binding::new(method, name, arguments, &self.session.principal_key());
        let retry = jsonrpc::parse_params::<Retry>(params)?.unwrap_or_default();
        let answers = answers(self.session, &binding, retry)?;
        Ok(Some((InputRound::new(answers), binding)))
    }
}

/// `tools/call`. A call that finishes at once is answered here; one that waits goes on in
/// a task of its own (listed in flight, so `notifications/cancelled` stops it).
pub(crate) fn call(cx: &Cx<'_>, request: &Request<'_>) {
    let id_text = cx.id();
    let fail = |e: RpcError| cx.refuse(&e);
    let raw = request.params;
    if raw.is_none() {
        return fail(RpcError::new(
            code::INVALID_PARAMS,
            "`tools/call` needs params",
        ));
    }
    // Read with the request: the name, the arguments' text, `_meta` and the task.
    let members = &request.members;
    let name = match request.check().and_then(|()| request.name_member()) {
        Ok(Some(name)) => name,
        Ok(None) => {
            return fail(RpcError::new(
                code::INVALID_PARAMS,
                "Invalid params: missing field `name`",
            ));
        }
        Err(e) => return fail(e),
    };
    let Some(entry) = active_entry(cx, &name) else {
        return fail(
            match cx
                .server()
                .shared
                .mounts
                .as_ref()
                .and_then(|m| m.refused(&name))
            {
                Some(why) => RpcError::new(
                    code::INVALID_PARAMS,
                    format!("`{name}` cannot be called: {why}"),
                ),
                None => unknown_tool(&name),
            },
        );
    };
    if !entry
        .def
        .missing_scopes(cx.identity().map(|i| &i.scopes[..]))
        .is_empty()
    {
        return fail(insufficient_scope(&entry));
    }
    // A plain call (no task, no middleware, no conversion, a first round) whose arguments
    // are valid on their face keeps them as text, each parameter read from its own; any
    // other, and any whose text the validator is not sure of, has them read into a map, to
    // be validated (and a refusal worded) as a value.
    let retry = members.input_responses.is_some() || members.request_state.is_some();
    let plain = members.task.is_none()
        && !retry
        && cx.server().shared.middleware.is_empty()
        && !entry.def.may_coerce(cx.server().shared.coerce_arguments);
    let arguments = match members.arguments {
        None => Arguments::default(),
        Some(a) if a.get().starts_with('{') => {
            let text = (plain && entry.def.reads_text())
                .then(|| Arguments::text(a.get(), |m| entry.def.valid_text(a.get(), m)))
                .flatten();
            match text {
                Some(arguments) => arguments,
                None => match serde_json::from_str::<Map<String, Value>>(a.get()) {
                    Ok(arguments) => Arguments::from(arguments),
                    Err(e) => {
                        let e = RpcError::new(code::INVALID_PARAMS, format!("Invalid params: {e}"));
                        return fail(e);
                    }
                },
            }
        }
        Some(_) => {
            return fail(RpcError::new(
                code::INVALID_PARAMS,
                "`arguments` must be an object",
            ));
        }
    };
    let task = match members
        .task
        .map(|t| serde_json::from_str::<TaskParams>(t.get()))
    {
        None => None,
        Some(Ok(task)) => Some(task),
        Some(Err(e)) => {
            let e = RpcError::new(code::INVALID_PARAMS, format!("Invalid params: `task`: {e}"));
            return fail(e);
        }
    };
    let mode = match tasks::mode(
        &entry.name,
        entry.def.task_support(),
        task.as_ref().map(|t| t.ttl),
        // What the client declared matters only to a tool that may run as a task.
        entry.def.task_support() != TaskSupport::Forbidden && tasks_methods::declares_tasks(cx),
        cx.stateless.is_some(),
    ) {
        Ok(mode) => mode,
        Err(e) => return fail(e),
    };
    // A stateless call's first round (no retry: it carries neither answers nor a request
    // state) has its binding read from its params only if the round ends asking for input
    // (see `first_round_binding`): from the request's own text when it is answered here, from
    // a copy made when it goes on in a task.
    let first = cx.stateless.is_some() && !retry;
    let (round, binding) = match (first, cx.stateless.is_some()) {
        (true, _) => (Some(InputRound::first()), None),
        (false, false) => (None, None),
        (false, true) => match cx.round_of(raw, "tools/call", &entry.name, arguments.map()) {
            Ok(Some((round, binding))) => (Some(round), Some(binding)),
            Ok(None) => (None, None),
            Err(e) => return fail(e),
        },
    };
    let first_params = raw.filter(|_| first).map(JsonText::get);
    let meta = CallMeta::new(members.meta, request.meta.progress_token);
    let ctx = cx.call_context(entry.name.clone(), meta, round);
    let version = cx.version();
    if mode != TaskMode::Plain {
        let bound = (binding, first_params);
        return call_as_task(cx, entry, arguments.into_map(), ctx, mode, bound);
    }
    // Most calls finish without waiting for anything: answer those right here, polled where
    // they were made, sparing a task, a box and a hand-off between threads. A call that is
    // not done yet is moved into a task of its own, whose first poll registers the wakers it
    // really needs (the one used here wakes nothing).
    let mut run = ToolRun::new(
        cx.server(),
        &entry,
        arguments,
        ctx,
        telemetry::tool_span(&entry.name),
    );
    let mut here = Context::from_waker(std::task::Waker::noop());
    if let Poll::Ready(finish) = run.poll_run(cx.server(), &entry, &mut here) {
        // The request's span is the current one here.
        if telemetry::record_finish(run.span(), &finish) {
            telemetry::record_tool_error(&tracing::Span::current());
        }
        let bound = Bound::of(binding.as_ref(), first_params);
        let response = call_response(cx.session, id_text, run.ctx(), version, bound, finish);
        return cx.respond(response);
    }
    // The id as sent, for the response: the key's text when that is the same (no escape to
    // undo), which is kept already, else a copy of its own.
    let id: Arc<str> = match cx.key() {
        key if **key == *id_text => key.clone(),
        _ => id_text.into(),
    };
    let cancel = run.ctx().cancellation().clone();
    let going = Going {
        run,
        session: cx.session.clone(),
        entry,
        id,
        version,
        binding,
        first_params: first_params.map(Box::from),
        request: tracing::Span::current(),
    };
    cx.session.spawn_tracked((id_text, cx.key()), cancel, going);
}

/// A call that did not finish at once, going on in a task: it owns what its run borrows,
/// and answers the request when the run ends.
struct Going {
    run: ToolRun,
    session: Arc<Session>,
    entry: Arc<Entry>,
    id: Arc<str>,
    version: ProtocolVersion,
    binding: Option<Binding>,
    /// A first round's params (see `first_round_binding`).
    first_params: Option<Box<str>>,
    /// The request's span (the task's poll is not in it).
    request: tracing::Span,
}

impl Future for Going {
    type Output = Reply;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Reply> {
        let this = self.get_mut();
        let finish = ready!(this.run.poll_run(&this.session.server, &this.entry, cx));
        if telemetry::record_finish(this.run.span(), &finish) {
            telemetry::record_tool_error(&this.request);
        }
        Poll::Ready(call_response(
            &this.session,
            &this.id,
            this.run.ctx(),
            this.version,
            Bound::of(this.binding.as_ref(), this.first_params.as_deref()),
            finish,
        ))
    }
}

/// A task's call: it owns what its run borrows. How it ended is recorded on the call's span
/// only (the task's answer is not the request's).
struct TaskCall {
    run: ToolRun,
    server: ServerHandle,
    entry: Arc<Entry>,
}

impl Future for TaskCall {
    type Output = Finish<ToolResult>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let finish = ready!(this.run.poll_run(&this.server, &this.entry, cx));
        telemetry::record_finish(this.run.span(), &finish);
        Poll::Ready(finish)
    }
}

/// A call that runs as a task: at once (2025-11-25), or once it waits (2026-07-28: until
/// then it is a plain request, whose questions go back to the client as rounds).
fn call_as_task(
    cx: &Cx<'_>,
    entry: Arc<Entry>,
    arguments: Map<String, Value>,
    ctx: Ctx,
    mode: TaskMode,
    (binding, first_params): (Option<Binding>, Option<&str>),
) {
    let (id, version) = (cx.id(), cx.version());
    let tasks = &cx.server().shared.tasks;
    let now = store::now_ms();
    let ttl = match mode {
        TaskMode::Now { ttl } => ttl,
        _ => None,
    };
    let record = TaskRecord {
        id: tasks::new_id(),
        owner: tasks_methods::task_owner(cx),
        share: tasks_methods::task_share(cx),
        tool: entry.name.to_string(),
        status: TaskStatus::Working,
        status_message: None,
        created_ms: now,
        updated_ms: now,
        ttl_ms: Some(tasks.ttl_for(ttl)),
        poll_ms: u64::try_from(tasks.settings.poll_interval.as_millis()).unwrap_or(1000),
        lease_until_ms: now
            .saturating_add(u64::try_from(tasks.settings.lease.as_millis()).unwrap_or(30_000)),
        asked: Map::new(),
        answers: Map::new(),
        outcome: None,
    };
    // The task's call outlives the request: its span is the request's child all the same.
    let server = cx.server().clone();
    let run = ToolRun::new(
        &server,
        &entry,
        Arguments::from(arguments),
        ctx.clone(),
        telemetry::tool_span(&entry.name),
    );
    let mut run: Run = Box::pin(TaskCall { run, server, entry });
    if let TaskMode::Detach { required } = mode {
        // Until the tool waits on something, this is a plain request.
        let mut here = Context::from_waker(std::task::Waker::noop());
        if let Poll::Ready(finish) = run.as_mut().poll(&mut here) {
            let needs_input = matches!(finish, Finish::NeedsInput);
            if needs_input || !required {
                let bound = Bound::of(binding.as_ref(), first_params);
                let response = call_response(cx.session, id, &ctx, version, bound, finish);
                telemetry::record_response(&tracing::Span::current(), &response);
                return cx.respond(response);
            }
            // A tool that runs only as a task is one, even when it was quick.
            run = Box::pin(std::future::ready(finish));
        }
    }
    task_run::start(cx.session, id, version, record, &ctx, run);
}

/// What a stateless call's request state is bound to, should its round end asking for input.
enum Bound<'a> {
    /// A retry's binding, made when it came.
    Retry(&'a Binding),
    /// A first round's: made from its params (`first_round_binding`) only if it asks.
    First(&'a str),
    /// A call of a session.
    Session,
}

impl<'a> Bound<'a> {
    fn of(binding: Option<&'a Binding>, first_params: Option<&'a str>) -> Self {
        match (binding, first_params) {
            (Some(binding), _) => Bound::Retry(binding),
            (None, Some(params)) => Bound::First(params),
            (None, None) => Bound::Session,
        }
    }
}

/// The response to a call: its result in the version's shape, the input it needs, or the
/// protocol error its round ended with.
fn call_response(
    session: &Session,
    id: &str,
    ctx: &Ctx,
    version: ProtocolVersion,
    bound: Bound<'_>,
    finish: Finish<ToolResult>,
) -> Reply {
    let round = ctx.state.input.as_ref();
    // The result is read where it lies, not moved out (a large move), and dropped with
    // `finish`.
    let result = match (&finish, round, bound) {
        (Finish::NeedsInput, Some(round), Bound::Retry(binding)) => {
            return input_required(session, id, binding, round.end());
        }
        (Finish::NeedsInput, Some(round), Bound::First(params)) => {
            let binding = first_round_binding(session, ctx, params);
            return input_required(session, id, &binding, round.end());
        }
        (Finish::NeedsInput, _, _) => {
            return Reply::error(
                id,
                &RpcError::new(
                    code::INTERNAL_ERROR,
                    "the tool waits for input no round can give",
                ),
            );
        }
        (Finish::Done(result), _, _) => result,
    };
    // A round that finished is asked for its refusal only (its other parts are for a round
    // that asks).
    if result.is_error
        && let Some(e) = round.and_then(InputRound::refusal)
    {
        return Reply::error(id, &e);
    }
    match &result.protocol_error {
        Some(e) => Reply::error(id, e),
        None => Reply::result(result.respond(id, version, &session.server.shared.info)),
    }
}

/// What the request state of a call's first round is bound to, made when the round ends
/// asking for input: from the request's `params`, which give the arguments the tool was
/// called with (digesting the arguments of every call cost as much as the rest of a plain
/// call).
fn first_round_binding(session: &Session, ctx: &Ctx, params: &str) -> Binding {
    #[derive(serde::Deserialize)]
    struct ArgumentsOf {
        #[serde(default)]
        arguments: Option<Map<String, Value>>,
    }
    let arguments = serde_json::from_str::<ArgumentsOf>(params)
        .ok()
        .and_then(|a| a.arguments)
        .unwrap_or_default();
    Binding::new(
        "tools/call",
        &ctx.state.tool,
        &arguments,
        &session.principal_key(),
    )
}

/// The scope check of the tools, prompts and resources methods, which the HTTP transport
/// makes before it dispatches a request (a method the methods add to the running server).
pub(crate) trait ScopeCheck {
    /// The refusal of a request whose caller (`identity`) lacks a scope it needs: the JSON-RPC
    /// error and every scope the request needs (what a step-up challenge asks for). `None`
    /// when nothing is missing, or the request names no tool, prompt or resource that
    /// declares scopes.
    fn lacks_scopes(
        &self,
        request: &Request<'_>,
        identity: Option<&Identity>,
    ) -> Option<(RpcError, Vec<String>)>;
}

impl ScopeCheck for ServerHandle {
    fn lacks_scopes(
        &self,
        request: &Request<'_>,
        identity: Option<&Identity>,
    ) -> Option<(RpcError, Vec<String>)> {
        let granted = identity.map(|i| &i.scopes[..])?;
        let offered = |what: &dyn Fn() -> String, scopes: &[String]| {
            (!missing_scopes(scopes, Some(granted)).is_empty())
                .then(|| (insufficient(&what(), scopes), scopes.to_vec()))
        };
        match request.method {
            Method::ToolsCall => {}
            Method::PromptsGet => {
                let offerings = self.offerings();
                if !offerings.has_scopes() {
                    return None;
                }
                let name = request.name_member().ok().flatten()?;
                let what = || format!("getting the prompt `{name}`");
                return offered(&what, offerings.scopes_of_prompt(&name));
            }
            Method::ResourcesRead => {
                let offerings = self.offerings();
                if !offerings.has_scopes() {
                    return None;
                }
                let uri = request.uri_member().ok().flatten()?;
                let what = || format!("reading `{uri}`");
                return offered(&what, offerings.scopes_of_uri(&uri));
            }
            _ => return None,
        }
        let catalog = self.catalog();
        if !catalog.has_scopes() {
            return None;
        }
        let name = request.name_member().ok().flatten()?;
        let entry = catalog.get(&name)?;
        if entry
            .def
            .missing_scopes(identity.map(|i| &i.scopes[..]))
            .is_empty()
        {
            return None;
        }
        Some((insufficient_scope(entry), entry.def.scopes().to_vec()))
    }
}

/// The in-process call, here beside the `tools/call` pipeline it runs (the running server's
/// other methods are in `core::handle`, and the transports' entry points in `transport`).
impl ServerHandle {
    /// Calls a tool in-process, validating the arguments as `tools/call` does. `Err` is the
    /// JSON-RPC error a client would get (unknown tool). Notifications the tool sends are
    /// dropped and requests it makes of the client fail: there is no client.
    pub async fn call(&self, name: &str, arguments: Value) -> Result<ToolResult, RpcError> {
        let (tx, _) = tokio::sync::mpsc::unbounded_channel();
        let session = Session::open(
            self,
            tx,
            Opening {
                one_shot: Some(ProtocolVersion::LATEST),
                ..Opening::default()
            },
        );
        let arguments = match arguments {
            Value::Null => Map::new(),
            Value::Object(m) => m,
            _ => {
                return Err(RpcError::new(
                    code::INVALID_PARAMS,
                    "`arguments` must be an object",
                ));
            }
        };
        let key = std::sync::OnceLock::new();
        let cx = Cx {
            session: &session,
            id: JsonText::ZERO,
            key: &key,
            stateless: None,
            identity: session.identity.as_ref(),
        };
        let entry = active_entry(&cx, name).ok_or_else(|| unknown_tool(name))?;
        let ctx = cx.call_context(entry.name.clone(), Default::default(), None);
        match run_tool(self, &entry, Arguments::from(arguments), ctx).await {
            Finish::Done(result) => Ok(result),
            Finish::NeedsInput => Err(RpcError::new(
                code::INTERNAL_ERROR,
                "the tool asks the client for input, and an in-process call has no client",
            )),
        }
    }
}
