//! Running one tool call, whoever asked for it (a request, a task, the command line): the
//! server's middleware around it, the conversion of arguments a model sent as the wrong JSON
//! type where the tool or the server allows one (`tool::coerce`; each conversion recorded on
//! the call's span and in the result's `_meta`; off, the arguments are not walked), then
//! validation, the tool within its time limit, and its result shaped for its output schema.

use std::future::Future;
use std::pin::{Pin, pin};
use std::task::{Context, Poll};

use serde_json::{Map, Value};

use crate::protocol::Content;
use crate::server::core::handle::ServerHandle;
use crate::server::middleware::{CallFuture, CallOutcome};
use crate::server::offerings::catalog::Entry;
use crate::server::telemetry;
use crate::tool::arguments::Arguments;
use crate::tool::blocking::{CatchUnwind, panic_result};
use crate::tool::definition::def::format_duration;
use crate::tool::definition::integers;
use crate::tool::input::{Finish, UntilInput};
use crate::tool::{Batch, Ctx, Structured, ToolCall, ToolResult, logging};

/// Runs a call through the server's middleware (if any), then [`run_entry`] — through the
/// conversion of its arguments (`coerced`) where the tool or the server allows one. A call
/// with neither pays one check for each: the other path is a boxed future of its own, so it
/// adds nothing to the size of this one. Arguments kept as text (checked already) are for
/// a call with neither; given to one with either, they become a map.
pub(crate) async fn run_tool(
    server: &ServerHandle,
    entry: &Entry,
    arguments: Arguments,
    ctx: Ctx,
) -> Finish<ToolResult> {
    let coerce = entry.def.may_coerce(server.shared.coerce_arguments);
    if server.shared.middleware.is_empty() && !coerce {
        return run_entry(server, entry, arguments, ctx).await;
    }
    wrapped(server, entry, arguments.into_map(), ctx, coerce).await
}

/// [`run_tool`] with middleware or coercion.
fn wrapped<'a>(
    server: &'a ServerHandle,
    entry: &'a Entry,
    arguments: Map<String, Value>,
    ctx: Ctx,
    coerce: bool,
) -> Pin<Box<dyn Future<Output = Finish<ToolResult>> + Send + 'a>> {
    Box::pin(async move {
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

/// [`run_entry`] of a map.
fn run_map<'a>(
    server: &'a ServerHandle,
    entry: &'a Entry,
    arguments: Map<String, Value>,
    ctx: Ctx,
) -> impl Future<Output = Finish<ToolResult>> + 'a {
    run_entry(server, entry, Arguments::from(arguments), ctx)
}

/// Validates the arguments (those kept as text were), runs the tool (catching a panic,
/// within its time limit) and shapes its result; then applies the tool changes the result
/// asks for. A stateless call that waits for input its round cannot give ends early.
async fn run_entry(
    server: &ServerHandle,
    entry: &Entry,
    arguments: Arguments,
    ctx: Ctx,
) -> Finish<ToolResult> {
    let arguments = match arguments.is_text() {
        true => arguments,
        false => match checked(entry, arguments.into_map()) {
            Ok(arguments) => Arguments::from(arguments),
            Err(refused) => return Finish::Done(*refused),
        },
    };
    let call = ToolCall {
        arguments,
        service: entry.service.clone(),
        states: server.shared.states.clone(),
        ctx: ctx.clone(),
    };
    let limit = entry.def.timeout().or(server.shared.timeout);
    let run = pin!(logging::scope(
        ctx.clone(),
        UntilInput::new(
            CatchUnwind(entry.call.invoke(call)),
            ctx.state.input.as_ref(),
        ),
    ));
    // In a block, so that what it leaves behind is not kept through the await below.
    let result = {
        let Some(finish) = (Limited {
            run,
            timer: limit.map(|l| Box::pin(tokio::time::sleep(l))),
        })
        .await
        else {
            ctx.state.cancel().cancel();
            return Finish::Done(ToolResult::error(format!(
                "tool `{}` timed out after {}",
                entry.name,
                format_duration(limit.unwrap_or_default())
            )));
        };
        match finish {
            Finish::NeedsInput => return Finish::NeedsInput,
            Finish::Done(outcome) => finished(server, entry, &ctx, outcome),
        }
    };
    ctx.state.progress.settle().await;
    Finish::Done(result)
}

/// The result of a call that ran to its end (or panicked): shaped for its output schema,
/// and with the tool changes it asks for applied.
fn finished(
    server: &ServerHandle,
    entry: &Entry,
    ctx: &Ctx,
    outcome: Result<ToolResult, Box<dyn std::any::Any + Send>>,
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
            .change_tools(Some(&ctx.state.related), &batch)
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

/// A call's future within its time limit, if it has one: `None` when the limit passed first.
/// The timer is allocated only for a call that has a limit, and the call's future is held
/// once (an `if`/`else` between awaiting it and awaiting a `Timeout` of it holds it twice).
struct Limited<F> {
    run: F,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<F: Future + Unpin> Future for Limited<F> {
    type Output = Option<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Poll::Ready(output) = Pin::new(&mut self.run).poll(cx) {
            return Poll::Ready(Some(output));
        }
        match self.timer.as_mut().map(|t| t.as_mut().poll(cx)) {
            Some(Poll::Ready(())) => Poll::Ready(None),
            _ => Poll::Pending,
        }
    }
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
        telemetry::record_coerced(&tracing::Span::current(), || coerced.to_json());
    }
    let mut finish = call(server, entry, arguments, ctx).await;
    if let (Some(coerced), Finish::Done(result)) = (&coerced, &mut finish) {
        coerced.record(&mut result.meta);
    }
    finish
}
