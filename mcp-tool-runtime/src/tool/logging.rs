//! `tracing` inside a tool reaches the client: while a call runs, its request is in scope
//! (a task-local for async tools, a thread-local for synchronous ones on the blocking pool),
//! and [`ClientLogLayer`] turns each event into a `notifications/message` for that call's
//! session, at the level the client asked for.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::future::Future;

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::Context;

use crate::protocol::LogLevel;
use crate::tool::context::Ctx;

tokio::task_local! {
    static CALL: Ctx;
}

thread_local! {
    static BLOCKING_CALL: RefCell<Option<Ctx>> = const { RefCell::new(None) };
}

/// Runs a call's future with its context in scope.
pub(crate) fn scope<F: Future>(ctx: Ctx, future: F) -> impl Future<Output = F::Output> {
    CALL.scope(ctx, future)
}

/// Runs `f` (one poll of a call) with the call's context in scope.
pub(crate) fn in_scope<R>(ctx: &Ctx, f: impl FnOnce() -> R) -> R {
    CALL.sync_scope(ctx.clone(), f)
}

/// The context of the call running here, if any.
pub(crate) fn current() -> Option<Ctx> {
    CALL.try_with(Ctx::clone)
        .ok()
        .or_else(|| BLOCKING_CALL.with(|c| c.borrow().clone()))
}

/// Runs a synchronous tool body with its context in scope on this thread.
pub(crate) fn in_blocking<R>(ctx: Option<Ctx>, body: impl FnOnce() -> R) -> R {
    struct Reset(Option<Ctx>);
    impl Drop for Reset {
        fn drop(&mut self) {
            let previous = self.0.take();
            BLOCKING_CALL.with(|c| *c.borrow_mut() = previous);
        }
    }
    let previous = BLOCKING_CALL.with(|c| c.replace(ctx));
    let _reset = Reset(previous);
    body()
}

/// A `tracing` layer that sends the events emitted inside a tool call to the client that made
/// the call, as `notifications/message` (logger name: the event's target). Servers run by
/// `Server::run` install it; add it to your own subscriber with
/// `tracing_subscriber::registry().with(mcp_tool::server::ClientLogLayer)`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientLogLayer;

impl<S: Subscriber> tracing_subscriber::Layer<S> for ClientLogLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        // The framework's own diagnostics are for the server's operator, not the client.
        if meta.target().starts_with("mcp_tool") {
            return;
        }
        let Some(ctx) = current() else { return };
        let level = match *meta.level() {
            Level::ERROR => LogLevel::Error,
            Level::WARN => LogLevel::Warning,
            Level::INFO => LogLevel::Info,
            Level::DEBUG | Level::TRACE => LogLevel::Debug,
        };
        let mut fields = Fields::default();
        event.record(&mut fields);
        let data = if fields.other.is_empty() {
            Value::String(fields.message)
        } else {
            let mut m = fields.other;
            m.insert("message".into(), Value::String(fields.message));
            Value::Object(m)
        };
        ctx.logger().named(meta.target()).log(level, data);
    }
}

#[derive(Default)]
struct Fields {
    message: String,
    other: Map<String, Value>,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            self.other
                .insert(field.name().into(), Value::String(format!("{value:?}")));
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            self.other
                .insert(field.name().into(), Value::String(value.into()));
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.other.insert(field.name().into(), Value::from(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.other.insert(field.name().into(), Value::from(value));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.other.insert(field.name().into(), Value::from(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.other.insert(field.name().into(), Value::Bool(value));
    }
}
