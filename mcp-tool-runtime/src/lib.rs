//! The runtime of mcp-tool: the registry of tools, their schemas and validators, dispatch,
//! results, the MCP protocol and its transports, and an in-process test client.
//!
//! Users depend on the `mcp-tool` facade, which re-exports this crate.

mod cli;
mod content;
mod context;
mod dynamic;
mod extract;
mod http;
mod interact;
mod logging;
mod manager;
pub mod protocol;
mod registry;
mod resources;
mod result;
mod schema;
mod server;
mod stdio;
mod sync_tools;
pub mod testing;

#[doc(hidden)]
pub mod __private;

pub use cli::{Error, Result, TOKENS_ENV};
pub use content::{
    Audience, Content, ContentAnnotations, IntoContent, ResourceBody, ResourceContents,
    ResourceLink, base64_encode,
};
pub use context::{
    CancellationToken, ClientInfo, LogLevel, Logger, Meta, Peer, Progress, RequestContext,
    RequestId, State, ToolManager,
};
pub use dynamic::{DynamicArgs, DynamicTool, PropertyType, ToolProperty};
pub use extract::{Args, Ctx, FromContext, FromToolCall, ToolCall};
pub use http::{
    AuthError, AuthFuture, Authenticator, BearerTokens, HttpConfig, Identity, ResourceMetadata,
};
pub use interact::{Elicitation, SamplingRequest, SamplingResult, requested_schema};
pub use logging::ClientLogLayer;
pub use manager::Batch;
pub use registry::{StartError, ToolRecord, ToolSet};
pub use resources::{
    APP_MIME_TYPE, HandlerFuture, Prompt, PromptMessage, PromptRequest, PromptResult,
    RESOURCE_NOT_FOUND, Resource, ResourceRequest, ResourceTemplate, Role,
};
pub use result::{ERROR_META_KEY, IntoToolError, IntoToolResult, Json, ToolError, ToolResult};
pub use schema::{Annotations, ToolDef};
pub use server::{Server, ServerCore};
pub use stdio::{serve_io, serve_stdio};
