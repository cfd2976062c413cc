//! # mcp-tool
//!
//! Write MCP (Model Context Protocol) servers by annotating ordinary Rust functions and methods
//! with `#[tool]`. The framework derives each tool's JSON Schema from its parameters, registers
//! it, validates every call against the schema it advertises, dispatches the call, and speaks
//! the protocol over stdio and Streamable HTTP.
//!
//! ```no_run
//! use mcp_tool::prelude::*;
//!
//! /// Multiply two numbers.
//! #[tool(read_only)]
//! fn multiply(a: f64, b: f64) -> f64 {
//!     a * b
//! }
//!
//! fn main() -> mcp_tool::Result<()> {
//!     Server::new("calc", env!("CARGO_PKG_VERSION")).run()
//! }
//! ```
//!
//! ## The guide
//!
//! The [`guide`] has a chapter for each part, each example compiled and run as a test:
//! [tools](guide::tools), [schemas and validation](guide::validation),
//! [prompts and resources](guide::prompts_resources), [the two versions of MCP](guide::versions),
//! [serving over stdio and HTTP](guide::serving), [middleware](guide::middleware),
//! [OAuth](guide::oauth), [tasks](guide::tasks), [the gateway](guide::gateway),
//! [OpenAPI](guide::openapi), [the client](guide::client), [replicas](guide::replicas),
//! [observability](guide::observability), [testing](guide::testing),
//! [the command line and environment](guide::cli) and [limits](guide::limits).
//!
//! ## Where things are
//!
//! The crate root and the [`prelude`] hold what a tool author uses daily. The rest mirrors the
//! runtime's layers, each item in one module only (what the root has, no module repeats):
//!
//! | module | what |
//! |---|---|
//! | [`extract`] | the context values a tool takes, and requests to the client |
//! | [`content`] | content blocks and the result conversion traits |
//! | [`resource`](mod@resource), [`prompt`](mod@prompt) | what a server offers beside tools |
//! | [`dynamic`] | tools defined at run time, and tool definitions |
//! | [`middleware`] | layers around every request and every call |
//! | [`server`] | the running server, explicit tool sets, errors; tasks and their stores in [`server::tasks`] |
//! | [`http`] | Streamable HTTP settings and authentication; resumable streams' event stores in [`http::events`] |
//! | [`protocol`] | protocol versions and JSON-RPC errors |
//! | [`env`](mod@env) | the environment variables a server binary reads |
//! | [`testing`] | the in-process client and example checks |
#![doc(test(attr(deny(warnings))))]
// docs.rs (nightly, `--cfg docsrs`): each item gated by a feature says which.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The guide: a chapter for each part of the framework, documentation only.
#[cfg(any(doc, doctest))]
pub mod guide;

// Each item has one path. The handful every server uses are here at the root (and in the
// prelude, a glob-import convenience); every other item is in the one module of its layer, and
// no module repeats what the root has.
pub use mcp_tool_macros::{prompt, resource, resource_template, tool, tools};
pub use mcp_tool_runtime::protocol::Content;
pub use mcp_tool_runtime::server::{Result, Server};
pub use mcp_tool_runtime::tool::{Args, Ctx, Json, ToolError, ToolResult};

/// What most servers need: the macros, the server, the parameter and result types, the
/// context values tools take most often, and the serde/schemars derives.
pub mod prelude {
    pub use crate::extract::{CancellationToken, Logger, Progress, State};
    pub use crate::{
        Args, Content, Ctx, Json, Server, ToolError, ToolResult, prompt, resource,
        resource_template, tool, tools,
    };
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
}

/// A tool's parameters: the context values a tool takes by type, the traits that make a type
/// a parameter, and the requests a tool makes of its client (sampling, elicitation). The two
/// every tool may take, [`Args`] and [`Ctx`], are at the crate root.
pub mod extract {
    pub use mcp_tool_runtime::protocol::LogLevel;
    pub use mcp_tool_runtime::tool::{
        Batch, CancellationToken, ClientInfo, Elicitation, FromContext, FromToolCall, Identity,
        Logger, Meta, Peer, Progress, RequestId, RequestedSchemaError, Requirements,
        SamplingMessage, SamplingRequest, SamplingResult, State, ToolCall, ToolManager,
        UrlElicitation, requested_schema,
    };
}

/// What a tool returns: content blocks (text, images, audio, resource links, embedded
/// resources, annotations, your own block types), structured output with a summary for the
/// model ([`Summarized`](content::Summarized)), the keys of a result's `_meta`, and the
/// conversion every return type goes through. The block itself, [`Content`], and the results
/// ([`ToolResult`], [`ToolError`],
/// [`Json`]) are at the crate root.
pub mod content {
    pub use mcp_tool_runtime::protocol::{
        Audience, ContentAnnotations, EmbeddedResource, MediaContent, ResourceBody,
        ResourceContents, ResourceLink, TextContent, base64_encode,
    };
    pub use mcp_tool_runtime::tool::{
        COERCED_META_KEY, ERROR_META_KEY, IntoContent, IntoToolError, IntoToolResult, Structured,
        Summarized,
    };
}

/// Resources and resource templates a server offers beside its tools.
pub mod resource {
    pub use mcp_tool_runtime::server::offerings::resource::*;
}

/// Prompts a server offers beside its tools.
pub mod prompt {
    pub use mcp_tool_runtime::protocol::Role;
    pub use mcp_tool_runtime::server::offerings::prompt::*;
}

/// Tools defined at run time, the definition every tool has, and why a value does not fit a
/// tool's schemas.
pub mod dynamic {
    pub use mcp_tool_runtime::tool::{
        Annotations, DynamicArgs, DynamicTool, ExampleError, PropertyType, TaskSupport, ToolDef,
        ToolProperty, ValidationError, Violation,
    };
}

/// Middleware around every request and every tool call, registered with
/// [`Server::middleware`]: the [`Middleware`](middleware::Middleware) trait, and the built-in
/// layers — [`RateLimit`](middleware::RateLimit), [`MaskErrors`](middleware::MaskErrors),
/// [`ResultBudget`](middleware::ResultBudget) and [`Audit`](middleware::Audit).
pub mod middleware {
    pub use mcp_tool_runtime::server::middleware::*;
}

/// The running server and what a server is built from: [`ServerHandle`](server::ServerHandle)
/// (serve it, call its tools in-process, change what it offers while it serves), explicit
/// sets of tools and of prompts and resources, the errors that stop a server or refuse a
/// store URL, and the `tracing` layer that sends a call's events to its client. The builder,
/// [`Server`], and its [`Result`] are at the crate root.
pub mod server {
    pub use mcp_tool_runtime::server::{
        Error, Limits, OfferingKind, OfferingRecord, OfferingSet, SKILLS_EXTENSION, ServerHandle,
        StartError, StoreUrlError, StoreUrlProblem,
    };
    pub use mcp_tool_runtime::tool::{ClientLogLayer, ToolRecord, ToolSet};

    /// Tasks: where they are kept ([`TaskStore`](tasks::TaskStore), in memory by default,
    /// in Redis with the `redis` feature) and how they are paced
    /// ([`TaskSettings`](tasks::TaskSettings)).
    pub mod tasks {
        pub use mcp_tool_runtime::server::tasks::*;
    }

    /// What the replicas of one server share ([`ReplicaStore`](replicas::ReplicaStore): in
    /// one process by default, in Redis with the `redis` feature): change messages, session
    /// records, and keys that expire.
    pub mod replicas {
        pub use mcp_tool_runtime::server::replicas::*;
    }
}

/// The gateway: remote MCP servers mounted beside the local tools (feature `client`): the
/// `MCPTool` fields, their rules, and the mount file's shape.
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod gateway {
    pub use mcp_tool_runtime::gateway::*;
}

/// An MCP client: connect to a server over Streamable HTTP or stdio, list and call its tools
/// (feature `client`).
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod client {
    pub use mcp_tool_runtime::client::*;
}

/// The Streamable HTTP transport's settings and authentication (feature `http`, on by
/// default).
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http {
    pub use mcp_tool_runtime::transport::http::*;
}

/// Protocol versions, JSON-RPC errors, and the protocol's small types a server is configured
/// with: cache hints, icons, roots.
pub mod protocol {
    pub use mcp_tool_runtime::protocol::{
        CacheHints, CacheScope, Icon, ProtocolVersion, Root, RpcError, code,
    };
}

/// The environment variables a server binary ([`Server::run`]) reads: each name, what it
/// configures, and the format of its value.
pub mod env {
    pub use mcp_tool_runtime::env::*;
}

/// Testing servers: an in-process client, and the check of every tool's examples.
pub mod testing {
    pub use mcp_tool_runtime::testing::*;
    // Named again so that their docs say which feature they need: the glob above does not.
    #[cfg(feature = "proptest")]
    #[cfg_attr(docsrs, doc(cfg(feature = "proptest")))]
    pub use mcp_tool_runtime::testing::{arbitrary_arguments, refused_arguments};
}

#[doc(hidden)]
pub mod __private {
    //! Not public API. Used by code generated by `mcp-tool-macros`; may change in any release.
    pub use mcp_tool_runtime::__private::*;
}

/// The crate's README (its page on crates.io), compiled with the doc tests so that its
/// example keeps building.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
