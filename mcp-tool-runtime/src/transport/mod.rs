//! The transports: stdio (newline-delimited JSON-RPC on stdin and stdout) and Streamable HTTP
//! (feature `http`). Each drives the server's sessions through the same narrow interface —
//! open a session with somewhere to put its messages, hand it each incoming message, close
//! it — and adds its entry points to [`ServerHandle`](crate::server::ServerHandle).
//!
//! Layer: imports `protocol`, `tool` and `server`; nothing below imports it.

#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
pub(crate) mod stdio;
