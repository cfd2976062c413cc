//! Middleware: code of the server's own around every request and every tool call, in both
//! protocol revisions and on every transport — registered on the builder with
//! [`Server::middleware`](crate::server::Server::middleware), run in the order registered
//! (the first is the outermost), and nothing at all when none is.
//!
//! A [`Middleware`] has two hooks, each with a default that lets everything through:
//! - [`Middleware::request`] sees every request a client makes (its method, its params —
//!   typed on demand with [`RequestInfo::params`] —, who makes it and in which revision)
//!   before its handler, and may let it through, refuse it with a JSON-RPC error, or answer
//!   it with a result of its own;
//! - [`Middleware::call`] is around every tool call (local, dynamic and mounted tools; plain
//!   calls, task calls and retried rounds of 2026-07-28): it sees the tool's name, its
//!   arguments (and may change them), the call's [`Ctx`] with the identity and the revision;
//!   it may answer instead of the tool, change the result, or time and log the call.
//!
//! Why a trait of its own rather than tower's `Layer`/`Service`: a request here is answered
//! by its handler on its own time (a tool call that waits goes on in a task; a stateless one
//! may end in an input round), so the one thing a layer can wrap whole is the tool call, and
//! what the request hook needs is a verdict, not a future. Two plain methods say that; a
//! `Service` would have to be polled for readiness and cloned per call for no gain, and its
//! `Response` would be our serialized text. Tower layers still go around the whole HTTP
//! endpoint (`ServerHandle::into_router`).
//!
//! The built-in layers, each also switched on from the environment of every server binary
//! (`mcp_tool::env`): [`RateLimit`] (per principal, and per tool where set), [`MaskErrors`]
//! (internal errors reach the model as a generic message with a correlation id),
//! [`ResultBudget`] (a result over a size is cut, the whole kept readable as a resource), and
//! [`Audit`] (one structured log line per call).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::protocol::walk::JsonText;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::protocol::{ProtocolVersion, RpcError, code};
use crate::server::offerings::resource::ResourceTemplate;
use crate::server::replicas::ReplicaStore;
use crate::tool::input::Finish;
use crate::tool::{Ctx, Identity, IntoToolResult, ToolResult};

mod audit;
mod budget;
mod mask;
mod rate;

pub use audit::Audit;
pub use budget::{BudgetError, RESULTS_URI_PREFIX, ResultBudget};
pub use mask::MaskErrors;
pub use rate::{RETRY_AFTER_META_KEY, Rate, RateError, RateLimit};

/// The future of a tool call as a middleware returns it.
pub type CallFuture<'a> = Pin<Box<dyn Future<Output = CallOutcome> + Send + 'a>>;

/// Code around every request and every tool call (see the [module](self)).
///
/// ```
/// use mcp_tool::middleware::{Call, CallFuture, Middleware, Next};
///
/// /// Counts the calls of each tool.
/// #[derive(Default)]
/// struct Count(std::sync::Mutex<std::collections::HashMap<String, u64>>);
///
/// impl Middleware for Count {
///     fn call<'a>(&'a self, call: Call<'a>, next: Next<'a>) -> CallFuture<'a> {
///         *self.0.lock().unwrap().entry(call.tool().to_owned()).or_default() += 1;
///         next.run(call)
///     }
/// }
///
/// let server = mcp_tool::Server::new("counted", "1.0.0").middleware(Count::default());
/// ```
pub trait Middleware: Send + Sync + 'static {
    /// Every request that reaches a handler, before it does: [`Flow::Continue`] lets it
    /// through (the default), [`Flow::Refuse`] answers it with an error, [`Flow::Answer`]
    /// with a result of the middleware's own (in the revision's shape). Layers after one that
    /// did not continue are not asked. What the protocol refuses first is not seen here: a
    /// method the server does not have (or whose capability it did not declare), one the
    /// request's revision lacks, a session's request before `initialize`, and notifications.
    fn request(&self, request: &RequestInfo<'_>) -> Flow {
        let _ = request;
        Flow::Continue
    }

    /// Around every tool call: `next.run(call)` goes on to the next layer and at last to the
    /// tool (the default does only that). Returning without running `next` answers instead
    /// of the tool; what `next` returns may be changed before it is returned.
    fn call<'a>(&'a self, call: Call<'a>, next: Next<'a>) -> CallFuture<'a> {
        next.run(call)
    }

    /// Resource templates the middleware serves (a [`ResultBudget`]'s kept results), added
    /// to the server's own when it is built. None by default.
    fn resource_templates(&self) -> Vec<ResourceTemplate> {
        Vec::new()
    }

    /// Called as the server is built, when it shares state with other replicas
    /// ([`Server::replica_store`](crate::server::Server::replica_store)): a layer that
    /// counts or keeps across calls does it in `store`, so that every replica counts alike
    /// ([`RateLimit`], [`ResultBudget`]). Nothing by default.
    fn shared_state(&self, store: &Arc<dyn ReplicaStore>) {
        let _ = store;
    }
}

/// What a middleware's [`request`](Middleware::request) hook decides.
#[derive(Debug)]
pub enum Flow {
    /// On to the next layer, then the handler.
    Continue,
    /// Answered with this JSON-RPC error.
    Refuse(RpcError),
    /// Answered with this result (in 2026-07-28 wrapped as every complete result is).
    Answer(Value),
}

/// One request as a middleware sees it.
pub struct RequestInfo<'a> {
    pub(crate) method: &'a str,
    pub(crate) id: JsonText<'a>,
    pub(crate) params: Option<JsonText<'a>>,
    pub(crate) version: ProtocolVersion,
    pub(crate) identity: Option<&'a Identity>,
    pub(crate) principal: &'a str,
}

impl RequestInfo<'_> {
    /// The method (`tools/call`, `resources/read`…).
    pub fn method(&self) -> &str {
        self.method
    }

    /// The request's id, as JSON text.
    pub fn id(&self) -> &str {
        self.id.get()
    }

    /// The params read into `T` (`None` when the request has none); an error names what
    /// does not fit.
    pub fn params<T: DeserializeOwned>(&self) -> Result<Option<T>, RpcError> {
        self.params
            .map(|p| {
                serde_json::from_str(p.get()).map_err(|e| {
                    RpcError::new(code::INVALID_PARAMS, format!("Invalid params: {e}"))
                })
            })
            .transpose()
    }

    /// The params as the client sent them (JSON text).
    pub fn params_text(&self) -> Option<&str> {
        self.params.map(JsonText::get)
    }

    /// The revision of the protocol the request speaks.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.version
    }

    /// Who makes the request, when an authenticator established it (HTTP).
    pub fn identity(&self) -> Option<&Identity> {
        self.identity
    }

    /// Who the client counts as in per-client limits: `subject …` with credentials, else
    /// `address …` (HTTP), `local` over stdio.
    pub fn principal(&self) -> &str {
        self.principal
    }
}

/// One tool call as a middleware sees it.
pub struct Call<'a> {
    pub(crate) arguments: Map<String, Value>,
    pub(crate) ctx: &'a Ctx,
}

impl Call<'_> {
    /// The tool's name.
    pub fn tool(&self) -> &str {
        self.ctx.tool()
    }

    /// The arguments, as the client sent them (validated after the last layer).
    pub fn arguments(&self) -> &Map<String, Value> {
        &self.arguments
    }

    /// The arguments, to change before the call goes on.
    pub fn arguments_mut(&mut self) -> &mut Map<String, Value> {
        &mut self.arguments
    }

    /// The call's context: its id, `_meta`, client, identity and revision.
    pub fn ctx(&self) -> &Ctx {
        self.ctx
    }

    /// Who makes the call, when an authenticator established it (HTTP).
    pub fn identity(&self) -> Option<&Identity> {
        self.ctx.identity()
    }

    /// The revision of the protocol the call speaks.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.ctx.protocol_version()
    }

    /// Who the client counts as in per-client limits: `subject …` with credentials, else
    /// `address …` (HTTP), `local` over stdio or in-process.
    pub fn principal(&self) -> String {
        self.ctx.share_key()
    }
}

/// The rest of the stack below a layer, ending in the tool.
pub struct Next<'a> {
    rest: &'a [Arc<dyn Middleware>],
    tool: &'a (dyn Fn(Map<String, Value>) -> CallFuture<'a> + Send + Sync),
}

impl<'a> Next<'a> {
    /// Runs the call through the layers below, then the tool.
    pub fn run(self, call: Call<'a>) -> CallFuture<'a> {
        match self.rest.split_first() {
            Some((layer, rest)) => layer.call(
                call,
                Next {
                    rest,
                    tool: self.tool,
                },
            ),
            None => (self.tool)(call.arguments),
        }
    }
}

/// How a tool call ended, as a middleware sees it: with a result, or (2026-07-28) waiting
/// for input the client is asked for in an input round (the call comes again with it).
#[derive(Debug)]
pub struct CallOutcome(pub(crate) Finish<ToolResult>);

impl CallOutcome {
    /// The call's result; `None` while it waits for input.
    pub fn result(&self) -> Option<&ToolResult> {
        match &self.0 {
            Finish::Done(result) => Some(result),
            Finish::NeedsInput => None,
        }
    }

    /// The call's result, to change; `None` while it waits for input.
    pub fn result_mut(&mut self) -> Option<&mut ToolResult> {
        match &mut self.0 {
            Finish::Done(result) => Some(result),
            Finish::NeedsInput => None,
        }
    }

    /// Whether the call waits for input (an input round of 2026-07-28).
    pub fn waits_for_input(&self) -> bool {
        matches!(self.0, Finish::NeedsInput)
    }
}

/// Any tool result — a [`ToolResult`], a [`ToolError`](crate::tool::ToolError), text… — as
/// the outcome of a call a middleware answers itself.
impl<T: IntoToolResult> From<T> for CallOutcome {
    fn from(result: T) -> Self {
        CallOutcome(Finish::Done(result.into_tool_result()))
    }
}

/// The server's middleware, in the order registered.
#[derive(Clone, Default)]
pub(crate) struct Stack(Arc<[Arc<dyn Middleware>]>);

impl Stack {
    pub(crate) fn new(layers: Vec<Arc<dyn Middleware>>) -> Self {
        Stack(layers.into())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Asks each layer in turn about a request; the first that does not continue decides.
    pub(crate) fn request(&self, request: &RequestInfo<'_>) -> Flow {
        for layer in self.0.iter() {
            match layer.request(request) {
                Flow::Continue => {}
                decided => return decided,
            }
        }
        Flow::Continue
    }

    /// Runs a call through every layer, then `tool`.
    pub(crate) async fn call<'a>(
        &'a self,
        arguments: Map<String, Value>,
        ctx: &'a Ctx,
        tool: &'a (dyn Fn(Map<String, Value>) -> CallFuture<'a> + Send + Sync),
    ) -> Finish<ToolResult> {
        let next = Next {
            rest: &self.0,
            tool,
        };
        next.run(Call { arguments, ctx }).await.0
    }
}

/// A random id of 16 hex digits (64 bits: the first half of the server's usual id), for what
/// must be told apart and not guessed.
fn random_id() -> String {
    let mut id = crate::server::state::new_id();
    id.truncate(16);
    id
}
