//! The wire: JSON-RPC 2.0 framing, the MCP revisions this server speaks, protocol errors, and
//! the typed wire model every message we send is serialized from.
//!
//! Layer: only `sync` and `store` sit below it, and it imports neither; `tool`, `server` and
//! `transport` build on it. Everything revision-specific (version negotiation, which fields a
//! revision knows) is decided here from [`ProtocolVersion`], so a later revision is a change
//! here rather than in any tool.

mod content;
mod error;
pub(crate) mod jsonrpc;
pub(crate) mod lines;
pub(crate) mod meta;
pub(crate) mod request;
mod version;
pub(crate) mod wire;

pub use content::{
    Audience, Content, ContentAnnotations, EmbeddedResource, MediaContent, ResourceBody,
    ResourceContents, ResourceLink, Role, TextContent, base64_encode,
};
pub use error::{RpcError, code};
pub use meta::LogLevel;
pub use version::ProtocolVersion;
pub use wire::{CacheHints, CacheScope, Icon, Root};

pub(crate) use version::Era;
