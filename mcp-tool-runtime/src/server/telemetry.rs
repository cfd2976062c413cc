//! Every request as a `tracing` span, and every tool call as a child span, named and
//! attributed as OpenTelemetry's semantic conventions for MCP (and for GenAI tool execution)
//! say; `tracing-opentelemetry` turns them into OTel spans (the `otel` feature exports them).
//!
//! - The request: a span of kind `SERVER` named `{mcp.method.name}` or, for a tool or a
//!   prompt, `{mcp.method.name} {target}` (`tools/call multiply`), with `mcp.method.name`,
//!   `jsonrpc.request.id`, `mcp.protocol.version`, `network.transport` (`pipe` on stdio, `tcp`
//!   over HTTP, with `network.protocol.name` `http` and its version), `gen_ai.tool.name` and
//!   `gen_ai.operation.name` `execute_tool` (tools/call), `gen_ai.prompt.name` (prompts/get),
//!   `mcp.resource.uri` (resources/read, subscribe, unsubscribe). A notification gets one too,
//!   without an id.
//! - The tool call: a span of kind `INTERNAL` named `execute_tool {gen_ai.tool.name}`, with
//!   `gen_ai.operation.name` and `gen_ai.tool.name`, around the tool's own work (validation,
//!   the call, shaping its result); the tool's own `tracing` events and spans sit inside it.
//!   When arguments a model sent as the wrong JSON type were converted (`coerce`), it has
//!   `mcp_tool.arguments.coerced`: the conversions as the result's `_meta` lists them, a JSON
//!   array of `{"argument", "from", "to"}` (this crate's own namespace, `mcp_tool`, as no
//!   convention names this).
//! - Errors: a JSON-RPC error sets `error.type` and `rpc.response.status_code` to its code and
//!   the status to `ERROR` with the error's message; a result with `isError` sets `error.type`
//!   to `tool_error` and the status to `ERROR`.
//! - The parent: a request whose `params._meta` carries W3C trace context (`traceparent`,
//!   `tracestate`, and `baggage`, unprefixed, as SEP-414 defines) is a child of that remote
//!   span (with the `otel` feature and its layer installed).
//!
//! A span nobody listens to is `Span::none()`: the attributes are computed (and the params
//! read for them) only when a subscriber wants the span.

use std::borrow::Cow;

use tracing::Span;
use tracing::field::Empty;

use crate::protocol::jsonrpc::Reply;
use crate::protocol::request::{Method, Request};
use crate::protocol::{ProtocolVersion, RpcError};
use crate::tool::ToolResult;
use crate::tool::input::Finish;

/// What carried a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "http"), allow(dead_code))] // stdio alone has no HTTP
pub(crate) enum Transport {
    /// stdio (or an in-memory pipe).
    Pipe,
    /// Streamable HTTP (HTTP/1.1 over TCP).
    Http,
}

/// The span of one request (`id`) or notification (no `id`), not entered yet.
pub(crate) fn request_span(request: &Request<'_>, transport: Transport) -> Span {
    let method: &str = &request.name;
    let span = tracing::info_span!(
        target: "mcp_tool::request",
        "mcp.request",
        otel.name = Empty,
        otel.kind = "server",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = method,
        jsonrpc.request.id = Empty,
        mcp.protocol.version = Empty,
        mcp.session.id = Empty,
        network.transport = Empty,
        network.protocol.name = Empty,
        network.protocol.version = Empty,
        gen_ai.operation.name = Empty,
        gen_ai.tool.name = Empty,
        gen_ai.prompt.name = Empty,
        mcp.resource.uri = Empty,
        error.type = Empty,
        rpc.response.status_code = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    if let Some(id) = request.id {
        // A string id is recorded as its text, a number as its digits.
        let text = id.get();
        match serde_json::from_str::<Cow<'_, str>>(text) {
            Ok(s) => span.record("jsonrpc.request.id", &*s),
            Err(_) => span.record("jsonrpc.request.id", text),
        };
    }
    match transport {
        Transport::Pipe => {
            span.record("network.transport", "pipe");
        }
        Transport::Http => {
            span.record("network.transport", "tcp");
            span.record("network.protocol.name", "http");
            span.record("network.protocol.version", "1.1");
        }
    }
    let name = request.name_member().ok().flatten();
    let target = match request.method {
        Method::ToolsCall => {
            span.record("gen_ai.operation.name", "execute_tool");
            name.as_deref().inspect(|name| {
                span.record("gen_ai.tool.name", *name);
            })
        }
        Method::PromptsGet => name.as_deref().inspect(|name| {
            span.record("gen_ai.prompt.name", *name);
        }),
        Method::ResourcesRead | Method::ResourcesSubscribe | Method::ResourcesUnsubscribe => {
            if let Ok(Some(uri)) = request.uri_member() {
                span.record("mcp.resource.uri", &*uri);
            }
            // A URI is no low-cardinality target: the name is the method alone.
            None
        }
        _ => None,
    };
    match target {
        Some(target) => span.record("otel.name", format!("{method} {target}")),
        None => span.record("otel.name", method),
    };
    otel::remote_parent(&span, &request.meta);
    span
}

/// Records the protocol version a request was served in.
pub(crate) fn record_version(span: &Span, version: impl FnOnce() -> ProtocolVersion) {
    if !span.is_disabled() {
        span.record("mcp.protocol.version", version().as_str());
    }
}

/// Records a JSON-RPC error the request (or the call) ended with.
pub(crate) fn record_error(span: &Span, error: &RpcError) {
    if span.is_disabled() {
        return;
    }
    let code = error.code.to_string();
    span.record("error.type", code.as_str());
    span.record("rpc.response.status_code", code.as_str());
    span.record("otel.status_code", "error");
    span.record("otel.status_description", error.message.as_str());
}

/// Records the error of a response, if it is one.
pub(crate) fn record_response(span: &Span, response: &Reply) {
    if let Some(error) = &response.error {
        record_error(span, error);
    }
}

/// Records a result with `isError`.
pub(crate) fn record_tool_error(span: &Span) {
    if !span.is_disabled() {
        span.record("error.type", "tool_error");
        span.record("otel.status_code", "error");
    }
}

/// The span of one tool call, a child of the current span (the request's).
pub(crate) fn tool_span(name: &str) -> Span {
    let span = tracing::info_span!(
        target: "mcp_tool::request",
        "mcp.execute_tool",
        otel.name = Empty,
        otel.kind = "internal",
        otel.status_code = Empty,
        otel.status_description = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = name,
        error.type = Empty,
        rpc.response.status_code = Empty,
        mcp_tool.arguments.coerced = Empty,
    );
    if !span.is_disabled() {
        span.record("otel.name", format!("execute_tool {name}"));
    }
    span
}

/// Records on a tool call's span the arguments converted before validation (`coerced`, the
/// JSON array of the result's `_meta`).
pub(crate) fn record_coerced(span: &Span, coerced: impl FnOnce() -> serde_json::Value) {
    if !span.is_disabled() {
        span.record("mcp_tool.arguments.coerced", coerced().to_string());
    }
}

/// Records on a tool call's span (`tool`) how it ended; true when it ended as a tool error
/// (`isError`), which the request's span records too ([`record_tool_error`]) when the call
/// answers the request itself (not a task's).
pub(crate) fn record_finish(tool: &Span, finish: &Finish<ToolResult>) -> bool {
    let Finish::Done(result) = finish else {
        return false;
    };
    match &result.protocol_error {
        // The request's span takes it from the response.
        Some(e) => record_error(tool, e),
        None if result.is_error => {
            record_tool_error(tool);
            return true;
        }
        None => {}
    }
    false
}

#[cfg(feature = "otel")]
mod otel {
    //! The parent of a request's span (feature `otel`): the W3C trace context of its `_meta`.

    use tracing::Span;

    use crate::protocol::meta::MetaFields;

    /// Makes the trace context of a request's `_meta` the span's parent (before it is entered).
    pub(super) fn remote_parent(span: &Span, meta: &MetaFields<'_>) {
        use opentelemetry::propagation::TextMapPropagator as _;
        use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;

        if meta.traceparent.is_none() {
            return;
        }
        let cx = TraceContextPropagator::new().extract(meta);
        let cx = BaggagePropagator::new().extract_with_context(&cx, meta);
        // Fails only when no OpenTelemetry layer is installed (nothing to parent then).
        let _ = span.set_parent(cx);
    }

    impl opentelemetry::propagation::Extractor for MetaFields<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            match key {
                "traceparent" => self.traceparent.as_deref(),
                "tracestate" => self.tracestate.as_deref(),
                "baggage" => self.baggage.as_deref(),
                _ => None,
            }
        }

        fn keys(&self) -> Vec<&str> {
            ["traceparent", "tracestate", "baggage"]
                .into_iter()
                .filter(|k| self.get(k).is_some())
                .collect()
        }
    }
}

/// Without OpenTelemetry (the `otel` feature) a request's span has no remote parent: the trace
/// context of its `_meta` is not even read.
#[cfg(not(feature = "otel"))]
mod otel {
    use tracing::Span;

    use crate::protocol::meta::MetaFields;

    pub(super) fn remote_parent(_: &Span, _: &MetaFields<'_>) {}
}
