//! The log of a server binary: `tracing` output on stderr (stdout carries the protocol), to
//! the clients of tool calls, and (feature `otel`) to OpenTelemetry.

use std::io;

use super::{env, otel};
use crate::tool::ClientLogLayer;

/// A layer filter that takes events and never spans, decided once per callsite.
struct EventsOnly;

impl<S> tracing_subscriber::layer::Filter<S> for EventsOnly {
    fn enabled(
        &self,
        meta: &tracing::Metadata<'_>,
        _: &tracing_subscriber::layer::Context<'_, S>,
    ) -> bool {
        meta.is_event()
    }

    fn callsite_enabled(
        &self,
        meta: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        if meta.is_span() {
            tracing::subscriber::Interest::never()
        } else {
            tracing::subscriber::Interest::always()
        }
    }
}

/// Sends `tracing` output to stderr (stdout carries the protocol), filtered by `RUST_LOG`
/// (default `warn`), events inside tool calls to their clients too, and (feature `otel`, when
/// exporting) spans to OpenTelemetry. Does nothing if the application installed a subscriber
/// already.
pub(super) fn init_tracing() {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;

    // `RUST_LOG` as a list of `target=level` directives with an optional default level
    // (`debug`, `warn,mcp_tool=debug`); without it, or unreadable, warnings and errors.
    let filter = std::env::var("RUST_LOG")
        .ok()
        .and_then(|directives| {
            directives
                .parse::<tracing_subscriber::filter::Targets>()
                .ok()
        })
        .unwrap_or_else(|| {
            tracing_subscriber::filter::Targets::new().with_default(tracing::Level::WARN)
        });
    // The audit's lines are `info` events: asked for with `MCP_TOOL_AUDIT`, they are shown
    // whatever the default level, unless `RUST_LOG` names their target itself.
    let audit = "mcp_tool::audit";
    let names_audit = std::env::var("RUST_LOG").is_ok_and(|d| d.contains(audit));
    let filter = if std::env::var(env::AUDIT).is_ok_and(|v| v == "1" || v == "true") && !names_audit
    {
        filter.with_target(audit, tracing::Level::INFO)
    } else {
        filter
    };
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(io::stderr)
        .with_ansi(false)
        .with_filter(filter);
    // The client-log layer reads events only: were it to take spans too, every request's span
    // would be built for nobody (see server/telemetry.rs).
    let client = ClientLogLayer.with_filter(EventsOnly);
    let registry = tracing_subscriber::registry().with(stderr).with(client);
    // Only when exporting: an absent layer (`Option::None`) would say every span is wanted,
    // and each request's span would be built for nobody (2 µs a call, BENCHMARKS.md).
    if let Some(otel) = otel::layer() {
        let _ = registry.with(otel).try_init();
        return;
    }
    let _ = registry.try_init();
}
