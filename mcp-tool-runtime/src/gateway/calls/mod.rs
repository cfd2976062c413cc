//! How a call of a mounted tool reaches its remote and comes back: relayed with the caller's
//! context (`relay`), in rounds when the remote asks its caller for input (`rounds`), and held
//! open on the replica that made it while a 2025-11-25 remote waits for an answer (`held`).

pub(super) mod held;
pub(super) mod relay;
mod rounds;
