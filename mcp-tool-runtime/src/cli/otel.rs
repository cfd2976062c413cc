//! OpenTelemetry export (feature `otel`): when the environment names an OTLP endpoint
//! (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), `Server::run` sends
//! the spans of every request and tool call there over OTLP/HTTP (protobuf) through the
//! OpenTelemetry SDK's batch processor, and flushes them when the server stops.
//!
//! The standard variables configure it: the endpoint, `OTEL_EXPORTER_OTLP_HEADERS`,
//! `…_TIMEOUT` and `…_COMPRESSION` (read by the exporter), `OTEL_SERVICE_NAME` and
//! `OTEL_RESOURCE_ATTRIBUTES` (the service's name defaults to the server's), `OTEL_TRACES_SAMPLER`
//! (and `…_ARG`), `OTEL_BSP_*` (the batches); `OTEL_SDK_DISABLED=true` or
//! `OTEL_TRACES_EXPORTER=none` turn it off.

use std::io::{self, Write as _};
use std::sync::OnceLock;

use opentelemetry::InstrumentationScope;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use tracing::level_filters::LevelFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::registry::LookupSpan;

/// The tracer `Server::run` installed, for the subscriber it sets up.
static TRACER: OnceLock<SdkTracer> = OnceLock::new();

/// The installed exporter, to flush and stop when the server stops.
pub(super) struct Telemetry {
    provider: SdkTracerProvider,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// Whether the environment asks for traces to be exported.
fn wanted() -> bool {
    let off = var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
        || var("OTEL_TRACES_EXPORTER").is_some_and(|v| v.eq_ignore_ascii_case("none"));
    !off && (var("OTEL_EXPORTER_OTLP_ENDPOINT").is_some()
        || var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some())
}

/// Starts exporting if the environment asks for it; `service` names the service unless
/// `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` does. Call it outside any async runtime
/// (the exporter's HTTP client is a blocking one, on the SDK's own thread).
pub(super) fn install(service: &str) -> Option<Telemetry> {
    if !wanted() {
        return None;
    }
    let protocol =
        var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"));
    if let Some(protocol) = protocol.filter(|p| p != "http/protobuf") {
        let _ = writeln!(
            io::stderr(),
            "warning: OTLP protocol `{protocol}` asked for; this server exports http/protobuf only"
        );
    }
    tls_provider();
    let exporter = match opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .build()
    {
        Ok(exporter) => exporter,
        Err(e) => {
            let _ = writeln!(
                io::stderr(),
                "warning: no OpenTelemetry export: the OTLP exporter cannot start: {e}"
            );
            return None;
        }
    };
    let named = var("OTEL_SERVICE_NAME").is_some()
        || var("OTEL_RESOURCE_ATTRIBUTES").is_some_and(|attrs| {
            attrs
                .split(',')
                .any(|kv| kv.trim_start().starts_with("service.name="))
        });
    let mut resource = Resource::builder();
    if !named {
        resource = resource.with_service_name(service.to_owned());
    }
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource.build())
        .build();
    let scope = InstrumentationScope::builder("mcp-tool")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build();
    let _ = TRACER.set(provider.tracer_with_scope(scope));
    Some(Telemetry { provider })
}

/// With the MCP client built in (feature `client`), reqwest's TLS is rustls without a default
/// crypto provider: the exporter's client needs one installed first, as the MCP client's does
/// (the same one; whichever comes first installs it).
#[cfg(feature = "client")]
fn tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Without the MCP client no rustls lacking a provider is built in: nothing to install.
#[cfg(not(feature = "client"))]
fn tls_provider() {}

impl Telemetry {
    /// Exports what is left and stops the exporter. Call it outside any async runtime.
    pub(super) fn shutdown(self) {
        if let Err(e) = self.provider.shutdown() {
            let _ = writeln!(
                io::stderr(),
                "warning: OpenTelemetry spans may be lost: {e}"
            );
        }
    }
}

/// The layer that turns `tracing` spans into OpenTelemetry spans for the installed exporter:
/// spans and events at `info` and above (the requests' and tool calls' spans, the tools' own),
/// except those of the exporter's own stack.
pub(super) fn layer<S>() -> Option<impl Layer<S>>
where
    S: tracing::Subscriber + for<'span> LookupSpan<'span>,
{
    let tracer = TRACER.get()?.clone();
    let filter = Targets::new()
        .with_default(LevelFilter::INFO)
        .with_target("opentelemetry", LevelFilter::OFF)
        .with_target("reqwest", LevelFilter::OFF)
        .with_target("hyper", LevelFilter::OFF);
    Some(
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            // The spans' attributes are the conventions' alone.
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_tracked_inactivity(false)
            .with_filter(filter),
    )
}
