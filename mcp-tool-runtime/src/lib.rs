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
//!
//! # Where new code goes
//!
//! - A new MCP method: its handler is a plain function in `server::core::methods` (one file
//!   per method family), routed by the one table of `server::core::dispatch`; its wire shapes
//!   are in `protocol::wire`. What a tool reaches while it runs goes in `tool` (the context,
//!   an extractor), never in a transport.
//! - Something the server offers (a kind of resource, a catalog rule): `server::offerings`.
//!   Code around every request or call: a `Middleware` in `server::middleware`.
//! - A transport's own concern (HTTP headers, streams, who may connect): `transport`; the
//!   gateway's: `gateway`. The command line and its environment variables: `cli`.
//! - A feature adds whole modules (and, where it must, methods of a type in its own module:
//!   the gateway's builder methods, the transports' entry points), not `#[cfg]` lines inside
//!   function bodies.
//! - A helper every layer needs (a lock that survives a panicking holder) is written once, in
//!   `sync`; an error type derives `thiserror::Error` and says what failed in its text.
//! - What may import what: a module imports its own layer and those listed before it above;
//!   two children of a folder do not import each other (a unit split in two files is listed
//!   in the `layers` test with the reason). A file stays under 700 lines, or says in its `//!`
//!   why it is long. The `layers` test checks all three.
//! - Module convention: a folder's own file is its `mod.rs`.
//! - A type's inherent methods are in its own file, or in the few stated here: `Server`'s in
//!   `server` (its `mod.rs`), with `run` in `cli` and the mounts in `gateway`; `ServerHandle`'s
//!   in `server::core::handle`, with the in-process `call` beside the `tools/call` pipeline
//!   (`server::core::methods::tools`) and the transports' `serve_stdio`, `serve_http` and
//!   `into_router`. A method one layer adds for its own use is a crate-private trait there.

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
