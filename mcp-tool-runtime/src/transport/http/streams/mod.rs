//! The streams of the endpoint: answers as SSE streams (`sse`), the resumable streams of
//! 2025-11-25 sessions (`resume`), and where their events are kept until a client that lost
//! its stream asks for them again ([`events`], public: the event stores).

pub mod events;
pub(crate) mod resume;
pub(crate) mod sse;
