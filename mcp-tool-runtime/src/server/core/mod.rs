//! The server's core: the running server ([`ServerHandle`](handle::ServerHandle)) and its
//! sessions, one request as its handler sees it, the dispatch table and the method handlers,
//! the limits it keeps, the stateless clients it remembers, and `subscriptions/listen`.
//!
//! It builds on the offerings (`super::offerings`), tasks, replicas and middleware; none of
//! them imports it.

pub(crate) mod clients;
pub(crate) mod dispatch;
pub(crate) mod handle;
pub(crate) mod limits;
pub(crate) mod listen;
pub(crate) mod methods;
pub(crate) mod request;
pub(crate) mod session;
