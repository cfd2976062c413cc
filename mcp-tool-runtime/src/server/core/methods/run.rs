//! Running one tool call, whoever asked for it (a request, a task, the command line): the
//! server's middleware around it, the conversion of arguments a model sent as the wrong JSON
//! type where the tool or the server allows one (`tool::coerce`; each conversion recorded on
//! the call's span and in the result's `_meta`; off, the arguments are not walked), then
//! validation, the tool within its time limit, and its result shaped for its output schema.

use std::any::Any;
use std::future::{Future, poll_fn};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};
use tracing::Span;

use serde_json::{Map, Value};

use crate::protocol::Content;
use crate::server::core::handle::ServerHandle;
use crate::server::middleware::{CallFuture, CallOutcome};
use crate::server::offerings::catalog::Entry;
use crate::server::telemetry;
use crate::tool::arguments::Arguments;
use crate::tool::blocking::panic_result;
use crate::tool::definition::def::format_duration;
use crate::tool::definition::integers;
use crate::tool::input::{Finish, InputRound};
use crate::tool::{Batch, BoxFuture, Ctx, Structured, ToolCall, ToolResult, logging};

/// Runs a call through the server's middleware (if any), then the tool — through the
/// conversion of its arguments (`coerced`) where the tool or the server allows one: a
/// [`ToolRun`] awaited. The in-process call's way (a request's call polls its [`ToolRun`]
/// itself).
pub(crate) async fn run_tool(
    server: &ServerHandle,
    entry: &Arc<Entry>,
    arguments: Arguments,
    ctx: Ctx,
) -> Finish<ToolResult> {
    let mut run = ToolRun::new(server, entry, arguments, ctx, Span::none());
    poll_fn(|cx| run.poll_run(server, entry, cx)).await
}

/// One tool call, from its arguments to its shaped result: validation, the tool itself
/// (its context in the logging scope, a panic caught, stopped at input its round cannot
/// give, within its time limit), its result shaped and its tool changes applied, then its
/// last progress notification left to settle; all in its span.
///
/// Its layers are one poll function, over state that moves: the tool's own future is the
/// one thing pinned (in its box). So a call that finishes on its first poll — most do —
/// is polled where it was made, and only one that waits is moved into a task. What the
/// call borrows (the server, the entry) is given to each poll by its owner.
pub(crate) struct ToolRun {
    ctx: Ctx,
    span: Span,
    stage: Stage,
}

enum Stage {
    /// The tool runs.
    Tool(Running),
    /// It finished: its result waits for its last progress notification to settle.
    Settle(Box<ToolResult>, Pin<Box<Sleep>>),
    /// Refused before it ran (its arguments are not valid).
    Refused(Box<ToolResult>),
    /// A call with middleware or a conversion of its arguments: a future of its own.
    Wrapped(Pin<Box<dyn Future<Output = Finish<ToolResult>> + Send>>),
    /// It ended.
    Done,
}

/// The tool's own future, within its time limit (the timer made when the tool first waits,
/// for the deadline set when the call started).
struct Running {
    /// `None` once the tool ended (dropped in its logging scope).
    future: Option<BoxFuture>,
    limit: Option<(Instant, Duration)>,
    timer: Option<Pin<Box<Sleep>>>,
}

/// What one poll of the tool came to.
#[allow(clippy::large_enum_variant)] // one per poll, on the stack: boxing the result would cost a call an allocation
enum Polled {
    Pending,
    Finished(Result<ToolResult, Box<dyn Any + Send>>),
    NeedsInput,
    TimedOut(Duration),
}

impl ToolRun {
    /// The call of `entry` with `arguments`, in `span`: through the middleware and the
    /// conversion of its arguments when the server or the tool has them (a future of their
    /// own, so they add nothing to a plain call). Arguments kept as text (checked already)
    /// are for a plain call; given to one with either, they become a map.
    pub(crate) fn new(
        server: &ServerHandle,
        entry: &Arc<Entry>,
        arguments: Arguments,
        ctx: Ctx,
        span: Span,
    ) -> Self {
        let coerce = entry.def.may_coerce(server.shared.coerce_arguments);
        if server.shared.middleware.is_empty() && !coerce {
            return ToolRun::plain(server, entry, arguments, ctx, span);
        }
        let stage = Stage::Wrapped(wrapped(
            server.clone(),
            entry.clone(),
            arguments.into_map(),
            ctx.clone(),
            coerce,
        ));
        ToolRun { ctx, span, stage }
    }

    /// The call without middleware or conversion: the arguments validated (those kept as
    /// text were), and the tool's future made.
    fn plain(
        server: &ServerHandle,
        entry: &Entry,
        arguments: Arguments,
        ctx: Ctx,
        span: Span,
    ) -> Self {
        let stage = span.in_scope(|| {
            let arguments = match arguments.is_text() {
                true => arguments,
                false => match checked(entry, arguments.into_map()) {
                    Ok(arguments) => Arguments::from(arguments),
                    Err(refused) => return Stage::Refused(refused),
                },
            };
            let call = ToolCall {
                arguments,
                service: entry.service.clone(),
                states: server.shared.states.clone(),
                ctx: ctx.clone(),
            };
            let limit = entry.def.timeout().or(server.shared.timeout);
            Stage::Tool(Running {
                future: Some(entry.call.invoke(call)),
                limit: limit.map(|l| (Instant::now() + l, l)),
                timer: None,
            })
        });
        ToolRun { ctx, span, stage }
    }

    /// The call's context.
    pub(crate) fn ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// The call's span.
    pub(crate) fn span(&self) -> &Span {
        &self.span
    }

    /// Polls the call of `entry` on `server` (what it was made with). A stateless call that
    /// waits for input its round cannot give ends early; one that outlives its time limit
    /// is cancelled and ends with an error result.
    pub(crate) fn poll_run(
        &mut self,
        server: &ServerHandle,
        entry: &Entry,
        cx: &mut Context<'_>,
    ) -> Poll<Finish<ToolResult>> {
        let _entered = self.span.enter();
        loop {
            let finish = match &mut self.stage {
                Stage::Tool(running) => {
                    let ctx = &self.ctx;
                    let polled = logging::in_scope(ctx, || running.poll(ctx, cx));
                    match polled {
                        Polled::Pending => return Poll::Pending,
                        Polled::NeedsInput => Finish::NeedsInput,
                        Polled::TimedOut(limit) => Finish::Done(ToolResult::error(format!(
                            "tool `{}` timed out after {}",
                            entry.name,
                            format_duration(limit)
                        ))),
                        Polled::Finished(outcome) => {
                            let result = finished(server, entry, ctx, outcome);
                            match ctx.state.progress.unsettled() {
                                None => Finish::Done(result),
                                Some(wait) => {
                                    let wait = Box::pin(tokio::time::sleep(wait));
                                    self.stage = Stage::Settle(Box::new(result), wait);
                                    continue;
                                }
                            }
                        }
                    }
                }
                Stage::Settle(_, wait) => {
                    if wait.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    match std::mem::replace(&mut self.stage, Stage::Done) {
                        Stage::Settle(result, _) => Finish::Done(*result),
                        _ => Finish::NeedsInput,
                    }
                }
                Stage::Refused(_) => match std::mem::replace(&mut self.stage, Stage::Done) {
                    Stage::Refused(result) => Finish::Done(*result),
                    _ => Finish::NeedsInput,
                },
                Stage::Wrapped(run) => match run.as_mut().poll(cx) {
                    Poll::Ready(finish) => finish,
                    Poll::Pending => return Poll::Pending,
                },
                Stage::Done => return Poll::Pending,
            };
            self.stage = Stage::Done;
            return Poll::Ready(finish);
        }
    }
}

impl Drop for ToolRun {
    /// A call dropped before its end (cancelled, or its request gone) drops the tool's
    /// future in its span and its logging scope, as it ran.
    fn drop(&mut self) {
        match &mut self.stage {
            Stage::Tool(running) if running.future.is_some() => {
                let _entered = self.span.enter();
                logging::in_scope(&self.ctx, || running.future = None);
            }
            Stage::Wrapped(_) => {
                let _entered = self.span.enter();
                self.stage = Stage::Done;
            }
            _ => {}
        }
    }
}

impl Running {
    /// Polls the tool (in its logging scope), catching a panic; when it waits, sees whether
    /// it waits for input its round cannot give, then whether its time is up (then it is
    /// cancelled). The tool's future is dropped here once it ended, still in the scope.
    fn poll(&mut self, ctx: &Ctx, cx: &mut Context<'_>) -> Polled {
        let Some(future) = self.future.as_mut() else {
            return Polled::Pending;
        };
        let polled = match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(Poll::Ready(result)) => Polled::Finished(Ok(result)),
            Err(panic) => Polled::Finished(Err(panic)),
            Ok(Poll::Pending) if ctx.state.input.as_ref().is_some_and(InputRound::blocked) => {
                Polled::NeedsInput
            }
            Ok(Poll::Pending) => match self.limit {
                None => Polled::Pending,
                Some((deadline, limit)) => {
                    let timer = self
                        .timer
                        .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                    match timer.as_mut().poll(cx) {
                        Poll::Pending => Polled::Pending,
                        Poll::Ready(()) => {
                            ctx.state.cancel().cancel();
                            Polled::TimedOut(limit)
                        }
                    }
                }
            },
        };
        if !matches!(polled, Polled::Pending) {
            self.future = None;
        }
        polled
    }
}

/// A call with middleware or a conversion of its arguments.
fn wrapped(
    server: ServerHandle,
    entry: Arc<Entry>,
    arguments: Map<String, Value>,
    ctx: Ctx,
    coerce: bool,
) -> Pin<Box<dyn Future<Output = Finish<ToolResult>> + Send>> {
    Box::pin(async move {
        let (server, entry) = (&server, &*entry);
        let tool = |arguments| -> CallFuture<'_> {
            let ctx = ctx.clone();
            Box::pin(async move {
                CallOutcome(match coerce {
                    true => coerced(server, entry, arguments, ctx, run_map).await,
                    false => run_map(server, entry, arguments, ctx).await,
                })
            })
        };
        let stack = &server.shared.middleware;
        if stack.is_empty() {
            return tool(arguments).await.0;
        }
        stack.call(arguments, &ctx, &tool).await
    })
}

/// The plain call of a map (under middleware or a conversion).
fn run_map<'a>(
    server: &'a ServerHandle,
    entry: &'a Entry,
    arguments: Map<String, Value>,
    ctx: Ctx,
) -> impl Future<Output = Finish<ToolResult>> + 'a {
    let mut run = ToolRun::plain(server, entry, Arguments::from(arguments), ctx, Span::none());
    poll_fn(move |cx| run.poll_run(server, entry, cx))
}

/// The result of a call that ran to its end (or panicked): shaped for its output schema,
/// and with the tool changes it asks for applied.
fn finished(
    server: &ServerHandle,
    entry: &Entry,
    ctx: &Ctx,
    outcome: Result<ToolResult, Box<dyn Any + Send>>,
) -> ToolResult {
    let mut result = match outcome {
        Ok(r) => r,
        Err(panic) => panic_result(Some(panic)),
    };
    shape(entry, &mut result, server.shared.validate_output);
    if !result.enable_tools.is_empty() || !result.disable_tools.is_empty() {
        let batch = Batch {
            enable: std::mem::take(&mut result.enable_tools),
            disable: std::mem::take(&mut result.disable_tools),
            ..Batch::default()
        };
        if let Err(e) = ctx
            .state
            .conn()
            .change_tools(Some(ctx.state.related()), &batch)
        {
            // The result claims what did not happen: the client must hear it failed.
            tracing::warn!(tool = %entry.name, error = %e, "the result's tool changes were refused");
            result = ToolResult::error(format!(
                "`{}` finished, but its change to the tool list was refused: {e}",
                entry.name
            ));
        }
    }
    result
}

/// The arguments validated, and every float with no fraction in them made an integer; or
/// the call's result when they are not valid.
fn checked(
    entry: &Entry,
    arguments: Map<String, Value>,
) -> Result<Map<String, Value>, Box<ToolResult>> {
    let arguments = Value::Object(arguments);
    if let Err(why) = entry.def.validate(&arguments) {
        return Err(Box::new(ToolResult::error(format!(
            "Invalid arguments for tool `{}`:\n{why}",
            entry.name
        ))));
    }
    let Value::Object(mut arguments) = arguments else {
        unreachable!("built as an object above")
    };
    // JSON Schema counts `1.0` as an integer; so does deserialization, then.
    for value in arguments.values_mut() {
        integers::whole_numbers(value);
    }
    Ok(arguments)
}

/// Completes a tool's result as its definition says: a text copy of structured content that
/// came alone, a non-object output wrapped as `{"result": …}`; and, with `validate` (debug
/// builds, and release builds with `Server::validate_output`), structured content checked
/// against the advertised output schema, so a mismatch is an error result naming the field
/// before a client rejects it.
fn shape(entry: &Entry, result: &mut ToolResult, validate: bool) {
    // `None` of an `Option<T>` result: structured `null` only for a tool with an output schema.
    if result
        .structured_content
        .as_ref()
        .is_some_and(Structured::is_null)
        && entry.def.output_schema().is_none()
    {
        result.structured_content = None;
    }
    if result.content.is_empty()
        && let Some(structured) = &result.structured_content
    {
        result.content.push(Content::text(structured.get()));
    }
    if entry.def.wraps_output()
        && !result.is_error
        && let Some(s) = &result.structured_content
    {
        result.structured_content = Some(s.wrapped());
    }
    if validate && !result.is_error && entry.def.output_schema().is_some() {
        let problem = match &result.structured_content {
            None => Some(
                "the tool declares an output schema but returned no structured content".to_owned(),
            ),
            Some(s) => entry
                .def
                .validate_output(&s.to_value())
                .err()
                .map(|e| e.to_string()),
        };
        if let Some(problem) = problem {
            tracing::error!(tool = %entry.name, problem = problem.as_str(), "structured result does not match the output schema");
            *result = ToolResult::error(format!(
                "internal error: the result of `{}` does not match its output schema:\n{problem}",
                entry.name
            ));
        }
    }
}

/// Runs `call` (validation, then the tool) on the arguments, converted where allowed.
async fn coerced<'a, F, Fut>(
    server: &'a ServerHandle,
    entry: &'a Entry,
    mut arguments: Map<String, Value>,
    ctx: Ctx,
    call: F,
) -> Finish<ToolResult>
where
    F: FnOnce(&'a ServerHandle, &'a Entry, Map<String, Value>, Ctx) -> Fut,
    Fut: Future<Output = Finish<ToolResult>>,
{
    let coerced = entry
        .def
        .coerce(&mut arguments, server.shared.coerce_arguments);
    if let Some(coerced) = &coerced {
        telemetry::record_coerced(&Span::current(), || coerced.to_json());
    }
    let mut finish = call(server, entry, arguments, ctx).await;
    if let (Some(coerced), Finish::Done(result)) = (&coerced, &mut finish) {
        coerced.record(&mut result.meta);
    }
    finish
}
