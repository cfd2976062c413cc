//! What a tool author touches: the call and its context ([`Ctx`]), the extractors that are a
//! tool's parameters, the results a tool returns and the one trait they convert through, tool
//! definitions (static through the macros' records, dynamic through [`DynamicTool`]), and where
//! a synchronous tool runs.
//!
//! Layer: imports `protocol` only. It knows no session and no transport: a call reaches its
//! connection through the `Connection` trait, which the server's
//! session implements, and the server hands it the states it was given.

pub(crate) mod arguments;
pub(crate) mod blocking;
pub(crate) mod call_meta;
pub(crate) mod context;
pub(crate) mod context_id;
pub(crate) mod definition;
pub(crate) mod dynamic;
pub(crate) mod extract;
pub(crate) mod input;
pub(crate) mod interact;
pub(crate) mod logging;
pub(crate) mod record;
pub(crate) mod result;

pub use context::{
    Batch, CancellationToken, ClientInfo, Ctx, Identity, Logger, Progress, ToolManager,
};
pub use definition::builder::{DefBuilder, ParamSpec};
pub use definition::coerce::{COERCED_META_KEY, Coercion};
pub use definition::def::{Annotations, ExampleError, TaskSupport, ToolDef};
pub use definition::headers::ParamHeader;
pub use definition::validate::{ValidationError, Violation};
pub use dynamic::{DynamicArgs, DynamicTool, PropertyType, ToolProperty};
pub use extract::{
    Args, FromContext, FromToolCall, Meta, Rejection, RequestId, Requirements, State, ToolCall,
};
pub use interact::{
    Elicitation, Input, Peer, RequestedSchemaError, SamplingMessage, SamplingRequest,
    SamplingResult, UrlElicitation, requested_schema,
};
pub use logging::ClientLogLayer;
pub use record::{BoxFuture, ServiceType, ToolRecord, ToolSet};
pub use result::structured::Structured;
pub use result::{
    ERROR_META_KEY, IntoContent, IntoToolError, IntoToolResult, Json, Summarized, ToolError,
    ToolResult,
};
