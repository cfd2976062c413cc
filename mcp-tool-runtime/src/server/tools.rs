//! The tools methods: `tools/list` (the catalog's pages, or a page of the session's own
//! selection) and `tools/call`, whose pipeline is [`Session::run_tool`]: validate the
//! arguments, run the tool (catching a panic, within its time limit), shape its result, apply
//! the tool changes it asks for.

use std::sync::Arc;
use std::task::{Context, Poll};

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::protocol::wire::{CallToolParams, ListParams};
use crate::protocol::{Content, Era, RpcError, code, jsonrpc};
use crate::tool::context::{CallState, ProgressState};
use crate::tool::def::format_duration;
use crate::tool::sync::{CatchUnwind, panic_result};
use crate::tool::{Batch, CancellationToken, Ctx, ToolCall, ToolResult, logging};

use super::catalog::{Entry, render_page};
use super::session::Session;

pub(crate) fn unknown_tool(name: &str) -> RpcError {
    RpcError::new(code::INVALID_PARAMS, format!("Unknown tool: `{name}`"))
}

fn invalid_cursor() -> RpcError {
    RpcError::new(code::INVALID_PARAMS, "Invalid cursor")
}

impl Session {
    /// The entry of a tool this session sees.
    pub(crate) fn active_entry(&self, name: &str) -> Option<Arc<Entry>> {
        let catalog = self.server.catalog();
        let entry = catalog.get(name)?;
        self.selector
            .read()
            .is_active(name, entry.def.hidden(), entry.def.always_visible())
            .then(|| entry.clone())
    }

    /// `tools/list`: the catalog's page rendered at start for the default selection, else a
    /// page of the tools this session's selection makes active.
    pub(crate) fn list_tools(&self, id: &str, params: Option<&RawValue>) {
        let response = match jsonrpc::parse_params::<ListParams<'_>>(params) {
            Err(e) => jsonrpc::error_response(id, &e),
            Ok(p) => {
                let cursor = p.as_ref().and_then(|p| p.cursor.as_deref());
                self.tools_page(id, cursor)
            }
        };
        self.respond(id, response);
    }

    fn tools_page(&self, id: &str, cursor: Option<&str>) -> String {
        let era = Era::of(self.client().protocol_version);
        let selection = self.selector.read();
        let catalog = self.server.catalog();
        if selection.is_default() {
            return match catalog.page(cursor, era) {
                Some(page) => jsonrpc::raw_result_response(id, page),
                None => jsonrpc::error_response(id, &invalid_cursor()),
            };
        }
        let tools: Vec<&Entry> = catalog
            .entries()
            .iter()
            .map(|e| &**e)
            .filter(|e| {
                e.def.for_model()
                    && selection.is_active(&e.name, e.def.hidden(), e.def.always_visible())
            })
            .collect();
        match render_page(&tools, catalog.page_size(), cursor, era) {
            Some(page) => jsonrpc::raw_result_response(id, &page),
            None => jsonrpc::error_response(id, &invalid_cursor()),
        }
    }

    /// The context of a call of `entry` made by the request whose id is `id` (JSON text as
    /// received: its canonical key routes the call's messages).
    pub(crate) fn call_context(
        self: &Arc<Self>,
        entry: &Entry,
        id: &str,
        meta: Option<Map<String, Value>>,
    ) -> Ctx {
        let token = meta.as_ref().and_then(|m| m.get("progressToken")).cloned();
        Ctx::new(CallState {
            related: jsonrpc::id_key(id),
            id: serde_json::from_str(id).unwrap_or(Value::Null),
            tool: entry.name.clone(),
            meta,
            client: self.client(),
            identity: self.identity.clone(),
            conn: self.clone(),
            cancel: CancellationToken::default(),
            progress: ProgressState::new(token),
        })
    }

    /// `tools/call`. A call that finishes at once is answered here; one that waits goes on in
    /// a task of its own (listed in flight, so `notifications/cancelled` stops it).
    pub(crate) fn call_tool(self: &Arc<Self>, id: &RawValue, params: Option<&RawValue>) {
        let id_text = id.get();
        let params = match jsonrpc::parse_params::<CallToolParams<'_>>(params) {
            Ok(Some(p)) => p,
            Ok(None) => {
                let e = RpcError::new(code::INVALID_PARAMS, "`tools/call` needs params");
                return self.respond(id_text, jsonrpc::error_response(id_text, &e));
            }
            Err(e) => return self.respond(id_text, jsonrpc::error_response(id_text, &e)),
        };
        let Some(entry) = self.active_entry(&params.name) else {
            let e = unknown_tool(&params.name);
            return self.respond(id_text, jsonrpc::error_response(id_text, &e));
        };
        let arguments = match params.arguments {
            Value::Null => Map::new(),
            Value::Object(m) => m,
            _ => {
                let e = RpcError::new(code::INVALID_PARAMS, "`arguments` must be an object");
                return self.respond(id_text, jsonrpc::error_response(id_text, &e));
            }
        };
        let ctx = self.call_context(&entry, id_text, params.meta);
        let cancel = ctx.cancellation().clone();
        let era = Era::of(ctx.protocol_version());
        let session = self.clone();
        let mut run = Box::pin(async move { session.run_tool(&entry, arguments, ctx).await });
        // Most calls finish without waiting for anything: answer those right here, sparing a
        // task and a hand-off between threads. A call that is not done yet goes on in a task
        // of its own, whose first poll registers the wakers it really needs (the one used
        // here wakes nothing).
        let mut here = Context::from_waker(std::task::Waker::noop());
        if let Poll::Ready(result) = run.as_mut().poll(&mut here) {
            return self.respond(id_text, result.respond(id_text, era));
        }
        let id_owned = id_text.to_owned();
        self.spawn_tracked(
            id_text,
            cancel,
            async move { run.await.respond(&id_owned, era) },
        );
    }

    /// Validates the arguments, runs the tool (catching a panic, within its time limit) and
    /// shapes its result; then applies the tool changes the result asks for.
    pub(crate) async fn run_tool(
        &self,
        entry: &Entry,
        arguments: Map<String, Value>,
        ctx: Ctx,
    ) -> ToolResult {
        let arguments = Value::Object(arguments);
        if let Err(why) = entry.def.validate(&arguments) {
            return ToolResult::error(format!(
                "Invalid arguments for tool `{}`:\n{why}",
                entry.name
            ));
        }
        let Value::Object(arguments) = arguments else {
            unreachable!("built as an object above")
        };
        let call = ToolCall {
            arguments,
            service: entry.service.clone(),
            states: self.server.shared.states.clone(),
            ctx: ctx.clone(),
        };
        let run = logging::scope(ctx.clone(), CatchUnwind(entry.call.invoke(call)));
        let outcome = match entry.def.timeout().or(self.server.shared.timeout) {
            None => run.await,
            Some(limit) => match tokio::time::timeout(limit, run).await {
                Ok(outcome) => outcome,
                Err(_) => {
                    ctx.state.cancel.cancel();
                    return ToolResult::error(format!(
                        "tool `{}` timed out after {}",
                        entry.name,
                        format_duration(limit)
                    ));
                }
            },
        };
        let mut result = match outcome {
            Ok(r) => r,
            Err(panic) => panic_result(Some(panic)),
        };
        shape(entry, &mut result);
        if !result.enable_tools.is_empty() || !result.disable_tools.is_empty() {
            let batch = Batch {
                enable: std::mem::take(&mut result.enable_tools),
                disable: std::mem::take(&mut result.disable_tools),
                ..Batch::default()
            };
            if let Err(e) = self.apply_tools(Some(&ctx.state.related), &batch) {
                tracing::warn!(tool = %entry.name, error = %e, "the result's tool changes were refused");
            }
        }
        ctx.state.progress.settle().await;
        result
    }
}

/// Completes a tool's result as its definition says: a text copy of structured content that
/// came alone, a non-object output wrapped as `{"result": …}`; and, in debug builds (so in
/// tests), structured content checked against the advertised output schema, so a mismatch
/// shows up before a client rejects it.
fn shape(entry: &Entry, result: &mut ToolResult) {
    if result.content.is_empty()
        && let Some(structured) = &result.structured_content
    {
        result
            .content
            .push(Content::text(jsonrpc::json_string(structured)));
    }
    if entry.def.wraps_output()
        && !result.is_error
        && let Some(v) = result.structured_content.take()
    {
        result.structured_content = Some(Value::Object(Map::from_iter([("result".into(), v)])));
    }
    if cfg!(debug_assertions) && !result.is_error && entry.def.output_schema().is_some() {
        let problem = match &result.structured_content {
            None => Some(
                "the tool declares an output schema but returned no structured content".to_owned(),
            ),
            Some(s) => entry.def.validate_output(s).err(),
        };
        if let Some(problem) = problem {
            tracing::error!(tool = %entry.name, %problem, "structured result does not match the output schema");
            *result = ToolResult::error(format!(
                "internal error: the result of `{}` does not match its output schema:\n{problem}",
                entry.name
            ));
        }
    }
}
