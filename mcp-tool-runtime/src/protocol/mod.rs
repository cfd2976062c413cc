//! The wire: JSON-RPC 2.0 framing, the MCP versions this server speaks, protocol errors, and
//! the typed wire model every message we send is serialized from.
//!
//! Layer: only `sync` and `store` sit below it, and it imports neither; `tool`, `server` and
//! `transport` build on it. Everything version-specific (version negotiation, which fields a
//! version knows) is decided here from [`ProtocolVersion`], so a later version is a change
//! here rather than in any tool.

mod content;
mod error;
pub(crate) mod inbound;
pub(crate) mod jsonrpc;
pub(crate) mod lines;
pub(crate) mod meta;
#[cfg(any(feature = "client", feature = "oauth"))]
pub(crate) mod oauth;
pub(crate) mod request;
mod version;
pub(crate) mod walk;
pub(crate) mod wire;

pub use content::{
    Audience, Content, ContentAnnotations, EmbeddedResource, MediaContent, ResourceBody,
    ResourceContents, ResourceLink, Role, TextContent, base64_encode,
};
pub use error::{RpcError, code};
pub use meta::LogLevel;
pub use version::ProtocolVersion;
pub use wire::{CacheHints, CacheScope, Icon, Root};
