//! Where the events of resumable SSE streams (2025-11-25) are kept until a client that lost
//! its connection comes back for them with `Last-Event-ID`: the [`EventStore`] trait, the
//! in-memory store every endpoint has by default, and a Redis one (feature `redis`) that lets
//! the reconnect land on another replica.
//!
//! A stream is named by a random key; its events are numbered from 1 (0 is the priming
//! event, which carries no message). The SSE id of event `n` of stream `k` is `k.n`, so a
//! `Last-Event-ID` names its stream.

mod answers;
mod memory;
#[cfg(feature = "redis")]
mod redis;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use crate::store::{StoreUrl, StoreUrlError};
pub use memory::MemoryEventStore;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub use redis::RedisEventStore;

/// A store operation's failure (a lost connection, say). The stream goes on without it; only
/// a later resume may find events missing, and says so.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the event store failed: {0}")]
pub struct EventStoreError(pub String);

/// A store operation in progress.
pub type EventFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, EventStoreError>> + Send + 'a>>;

/// What a store holds of one stream, after a given event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Replay {
    /// Who the stream belongs to, as given to [`EventStore::open`].
    pub owner: String,
    /// The events after the one asked for, in order: number and message (JSON text).
    pub events: Vec<(u64, String)>,
    /// The highest event number dropped to keep the store in bounds (0: none): a resume from
    /// before it cannot be served.
    pub floor: u64,
    /// The number of the stream's last event once the stream ended (its response was sent,
    /// or its session closed).
    pub end: Option<u64>,
}

/// Where resumable streams' events are kept. Implement it to keep them elsewhere; each
/// method is atomic on its own. Events are appended in order, each before it is sent.
pub trait EventStore: Send + Sync + 'static {
    /// Records a new stream and its owner (an opaque text the transport checks on resume).
    fn open<'a>(&'a self, stream: &'a str, owner: &'a str) -> EventFuture<'a, ()>;

    /// Appends event `seq` (1, 2, …) of the stream; `last`: the stream ends with it. A store
    /// in bounds drops the stream's oldest events, raising its floor.
    fn append<'a>(
        &'a self,
        stream: &'a str,
        owner: &'a str,
        seq: u64,
        data: &'a str,
        last: bool,
    ) -> EventFuture<'a, ()>;

    /// Keeps a whole answer — a stream whose one event, number 1, is its last, written at
    /// once — and names its stream: 1 to 64 hex digits, unguessable (the SSE ids of its
    /// events are `name.0` and `name.1`; a name of another form is not used). `None` (the
    /// default): the transport names the stream and [appends](EventStore::append) the event
    /// itself. A store that names its answers can find them by name, without an index of
    /// every name it keeps.
    fn keep_answer<'a>(&'a self, owner: &'a str, data: &'a str) -> EventFuture<'a, Option<String>> {
        let _ = (owner, data);
        Box::pin(std::future::ready(Ok(None)))
    }

    /// Marks the stream ended after event `seq` without a new event (a cancelled request, a
    /// closed session).
    fn end<'a>(&'a self, stream: &'a str, seq: u64) -> EventFuture<'a, ()>;

    /// The stream's events after `after`; `None` when the store knows no such stream (never
    /// opened, or expired).
    fn replay<'a>(&'a self, stream: &'a str, after: u64) -> EventFuture<'a, Option<Replay>>;

    /// Whether other processes write to this store (Redis): a stream whose writer is not in
    /// this process may still grow, so a resume here follows it. `false` (memory): such a
    /// stream is over.
    fn shared(&self) -> bool {
        false
    }
}

/// The store `url` names: `memory` (or empty) for a new in-memory store, `redis://…` (feature
/// `redis`; `redis+unix://…` for a socket, `rediss://…` when the redis crate is built with
/// TLS) for a shared one.
pub fn event_store_from_url(url: &str) -> Result<Arc<dyn EventStore>, StoreUrlError> {
    Ok(match StoreUrl::parse("event store", url)? {
        StoreUrl::Memory => Arc::new(MemoryEventStore::new()),
        #[cfg(feature = "redis")]
        StoreUrl::Redis(at) => Arc::new(RedisEventStore::on(*at)),
    })
}

/// The store `url` names (see [`event_store_from_url`]), an in-memory one with the bounds
/// `bounds` gives (see [`MemoryEventStore::with_bounds`]; empty: the defaults). Bounds for a
/// shared store are refused: it keeps its events as its server is configured.
pub fn event_store_with_bounds(url: &str, bounds: &str) -> Result<Arc<dyn EventStore>, String> {
    match StoreUrl::parse("event store", url).map_err(|e| e.to_string())? {
        StoreUrl::Memory => Ok(Arc::new(MemoryEventStore::new().with_bounds(bounds)?)),
        #[cfg(feature = "redis")]
        StoreUrl::Redis(_) if !bounds.trim().is_empty() => {
            Err("event store bounds apply to the in-memory store only".to_owned())
        }
        #[cfg(feature = "redis")]
        StoreUrl::Redis(at) => Ok(Arc::new(RedisEventStore::on(*at))),
    }
}

/// The SSE id of event `seq` of `stream`.
pub(crate) fn event_id(stream: &str, seq: u64) -> String {
    format!("{stream}.{seq}")
}

/// A `Last-Event-ID` as (stream, event number), if it is one of ours.
pub(crate) fn parse_event_id(id: &str) -> Option<(&str, u64)> {
    let (stream, seq) = id.trim().rsplit_once('.')?;
    is_stream_key(stream).then_some(())?;
    Some((stream, seq.parse().ok()?))
}

/// Whether `key` can name a stream: 1 to 64 hex digits.
pub(crate) fn is_stream_key(key: &str) -> bool {
    !key.is_empty() && key.len() <= 64 && key.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Makes stream keys: 16 bytes, hex, as unguessable as random ones — the first half of the
/// SHA-256 of a random secret and a counter — without asking the system for randomness (a
/// system call) for every stream.
pub(crate) struct StreamKeys {
    secret: [u8; 32],
    made: AtomicU64,
}

impl StreamKeys {
    /// `None` without system randomness.
    pub(crate) fn new() -> Option<StreamKeys> {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).ok()?;
        Some(StreamKeys {
            secret,
            made: AtomicU64::new(0),
        })
    }

    /// A new stream key.
    pub(crate) fn make(&self) -> String {
        let n = self.made.fetch_add(1, Ordering::Relaxed);
        let mut hash = Sha256::new();
        hash.update(self.secret);
        hash.update(n.to_le_bytes());
        hex(&hash.finalize()[..16])
    }
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_store_urls() {
        for url in ["memory", "", " memory "] {
            let store = event_store_from_url(url).unwrap();
            assert!(!store.shared(), "{url:?} is this process's memory");
        }
        let e = event_store_from_url("memcached://h").err().unwrap();
        assert_eq!(
            e.to_string(),
            "event store `memcached://h`: expected `memory` or a `redis://host:port` URL"
        );
    }

    #[test]
    fn event_ids_name_their_stream() {
        let keys = StreamKeys::new().unwrap();
        let key = keys.make();
        assert_eq!(key.len(), 32);
        assert_ne!(keys.make(), key);
        assert_ne!(StreamKeys::new().unwrap().make(), key);
        assert_eq!(parse_event_id(&event_id(&key, 7)), Some((key.as_str(), 7)));
        assert_eq!(parse_event_id("ab12.0"), Some(("ab12", 0)));
        assert_eq!(hex(&[0x00, 0x9f, 0xa0, 0xff]), "009fa0ff");
        for bad in ["", "7", ".7", "xyz.7", "ab12.", "ab12.-1", "ab12.x"] {
            assert_eq!(parse_event_id(bad), None, "{bad:?}");
        }
    }
}
