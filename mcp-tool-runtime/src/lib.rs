//! The runtime of mcp-tool, read bottom-up in layers, each importing only the ones below it:
//!
//! - `sync`: the lock that survives a panicking holder;
//! - `store`: the URLs naming where state is kept (`memory`, `redis://…`), and Redis as every
//!   store reaches it;
//! - [`protocol`]: JSON-RPC framing, the MCP versions, errors, the typed wire model;
//! - `tool`: what a tool author touches — the call's context, extractors, results, content,
//!   definitions, dynamic tools;
//! - `client` (feature `client`): an MCP client over Streamable HTTP or stdio, which the
//!   gateway mounts remote servers with;
//! - `server`: the builder and its error, grouped by purpose: `core` (the running server, its
//!   sessions, one request, the dispatch table and the method handlers, the limits),
//!   `offerings` (tools' catalog and search, the selection a tool manager changes, prompts,
//!   resources, views, skills), `tasks`, `replicas`, `middleware`, `telemetry`, and the sealed
//!   request `state`;
//! - `gateway` (feature `client`): remote MCP servers mounted into a running server; it builds
//!   on the server, which knows it only through two traits of its own;
//! - `transport`: stdio and Streamable HTTP.
//!
//! The command line and the test client sit above them. Inside each layer, the children of a
//! folder (its files and subfolders) import one way too: no loop among them, except a pair
//! listed with the reason the two are one unit (the running server and its sessions). A test
//! (`layers`) enforces all of it, and the same for the macros crate. Users depend on the
//! `mcp-tool` facade, which re-exports this crate's public surface in modules that mirror the
//! layers.

// docs.rs (nightly, `--cfg docsrs`): each item gated by a feature says which.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod cli;
pub use cli::env;
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod client;
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod gateway;
pub mod protocol;
pub mod server;
mod store;
mod sync;
pub mod testing;
pub mod tool;
pub mod transport;

#[doc(hidden)]
pub mod __private;

#[cfg(test)]
mod layers;
