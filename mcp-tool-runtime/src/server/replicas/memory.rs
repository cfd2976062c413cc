//! The store of replicas in one process: servers built with clones of the same
//! [`MemoryReplicaStore`] share through it.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{broadcast, mpsc};

use super::{ReplicaFuture, ReplicaStore, ReplicaStoreError};
use crate::sync::lock;

/// Replicas in one process: servers built with clones of the same store share through it.
///
/// Its keys ([`ReplicaStore::put`]) are bounded: at most [`MemoryReplicaStore::MAX_KEYS`]
/// (or what [`MemoryReplicaStore::with_max_keys`] says) live at once, expired ones purged
/// as new ones come; a new key beyond that is refused with an error (a key already held may
/// always be replaced).
#[derive(Clone)]
pub struct MemoryReplicaStore {
    inner: Arc<MemoryInner>,
}

struct MemoryInner {
    channel: broadcast::Sender<String>,
    sessions: Mutex<HashMap<String, (String, Instant)>>,
    keys: Mutex<Keys>,
}

/// The keys of a memory store, each with the instant it expires.
struct Keys {
    map: HashMap<String, (String, Instant)>,
    max: usize,
    /// When expired keys are next purged (also whenever the map is full).
    next_purge: Instant,
}

/// How often a memory store purges its expired keys when it is not full.
const PURGE_EVERY: Duration = Duration::from_secs(1);

impl Keys {
    /// The live value of `key`.
    fn live(&self, key: &str, now: Instant) -> Option<&String> {
        self.map
            .get(key)
            .filter(|(_, until)| *until > now)
            .map(|(value, _)| value)
    }

    fn insert(
        &mut self,
        key: &str,
        value: &str,
        ttl: Duration,
        now: Instant,
    ) -> Result<(), ReplicaStoreError> {
        if now >= self.next_purge || (self.map.len() >= self.max && !self.map.contains_key(key)) {
            self.map.retain(|_, (_, until)| *until > now);
            self.next_purge = now + PURGE_EVERY;
        }
        if self.map.len() >= self.max && !self.map.contains_key(key) {
            return Err(ReplicaStoreError(format!(
                "the memory store holds its most keys ({})",
                self.max
            )));
        }
        let until = now.checked_add(ttl).unwrap_or(now + FOREVER);
        self.map.insert(key.to_owned(), (value.to_owned(), until));
        Ok(())
    }
}

/// What a time to live too long for the clock means: long enough.
const FOREVER: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

impl Default for MemoryReplicaStore {
    fn default() -> Self {
        MemoryReplicaStore::with_max_keys(MemoryReplicaStore::MAX_KEYS)
    }
}

impl MemoryReplicaStore {
    /// How many keys a memory store holds at most unless told otherwise.
    pub const MAX_KEYS: usize = 100_000;

    /// A store holding at most `max` keys at once.
    pub fn with_max_keys(max: usize) -> Self {
        MemoryReplicaStore {
            inner: Arc::new(MemoryInner {
                channel: broadcast::channel(1024).0,
                sessions: Mutex::new(HashMap::new()),
                keys: Mutex::new(Keys {
                    map: HashMap::new(),
                    max,
                    next_purge: Instant::now() + PURGE_EVERY,
                }),
            }),
        }
    }
}

impl fmt::Debug for MemoryReplicaStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryReplicaStore").finish_non_exhaustive()
    }
}

impl ReplicaStore for MemoryReplicaStore {
    fn publish<'a>(&'a self, message: &'a str) -> ReplicaFuture<'a, ()> {
        // No subscriber is no error: nobody to tell.
        let _ = self.inner.channel.send(message.to_owned());
        Box::pin(async { Ok(()) })
    }

    fn subscribe(&self) -> mpsc::UnboundedReceiver<String> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut from = self.inner.channel.subscribe();
        tokio::spawn(async move {
            loop {
                match from.recv().await {
                    Ok(message) => {
                        if tx.send(message).is_err() {
                            return;
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!(missed = n, "a replica fell behind its change messages");
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        });
        rx
    }

    fn save_session<'a>(
        &'a self,
        id: &'a str,
        record: &'a str,
        ttl: Duration,
    ) -> ReplicaFuture<'a, ()> {
        let mut sessions = lock(&self.inner.sessions);
        let now = Instant::now();
        sessions.retain(|_, (_, until)| *until > now);
        sessions.insert(id.to_owned(), (record.to_owned(), now + ttl));
        Box::pin(async { Ok(()) })
    }

    fn load_session<'a>(&'a self, id: &'a str, ttl: Duration) -> ReplicaFuture<'a, Option<String>> {
        let found = lock(&self.inner.sessions)
            .get_mut(id)
            .filter(|(_, until)| *until > Instant::now())
            .map(|(record, until)| {
                *until = Instant::now() + ttl;
                record.clone()
            });
        Box::pin(async move { Ok(found) })
    }

    fn touch_session<'a>(&'a self, id: &'a str, ttl: Duration) -> ReplicaFuture<'a, ()> {
        if let Some((_, until)) = lock(&self.inner.sessions).get_mut(id) {
            *until = Instant::now() + ttl;
        }
        Box::pin(async { Ok(()) })
    }

    fn end_session<'a>(&'a self, id: &'a str) -> ReplicaFuture<'a, ()> {
        lock(&self.inner.sessions).remove(id);
        Box::pin(async { Ok(()) })
    }

    fn put<'a>(&'a self, key: &'a str, value: &'a str, ttl: Duration) -> ReplicaFuture<'a, ()> {
        let done = lock(&self.inner.keys).insert(key, value, ttl, Instant::now());
        Box::pin(async move { done })
    }

    fn put_new<'a>(
        &'a self,
        key: &'a str,
        value: &'a str,
        ttl: Duration,
    ) -> ReplicaFuture<'a, bool> {
        let now = Instant::now();
        let mut keys = lock(&self.inner.keys);
        let done = if keys.live(key, now).is_some() {
            Ok(false)
        } else {
            keys.insert(key, value, ttl, now).map(|()| true)
        };
        Box::pin(async move { done })
    }

    fn get<'a>(&'a self, key: &'a str) -> ReplicaFuture<'a, Option<String>> {
        let found = lock(&self.inner.keys).live(key, Instant::now()).cloned();
        Box::pin(async move { Ok(found) })
    }

    fn take<'a>(&'a self, key: &'a str) -> ReplicaFuture<'a, Option<String>> {
        let now = Instant::now();
        let found = lock(&self.inner.keys)
            .map
            .remove(key)
            .filter(|(_, until)| *until > now)
            .map(|(value, _)| value);
        Box::pin(async move { Ok(found) })
    }

    fn remove<'a>(&'a self, key: &'a str) -> ReplicaFuture<'a, ()> {
        lock(&self.inner.keys).map.remove(key);
        Box::pin(async { Ok(()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_sessions_expire_and_renew() {
        let store = MemoryReplicaStore::default();
        store
            .save_session("s", "{}", Duration::from_millis(50))
            .await
            .unwrap();
        assert_eq!(
            store
                .load_session("s", Duration::from_secs(60))
                .await
                .unwrap()
                .as_deref(),
            Some("{}")
        );
        store.end_session("s").await.unwrap();
        assert_eq!(store.load_session("s", Duration::ZERO).await.unwrap(), None);
        store.save_session("t", "{}", Duration::ZERO).await.unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert_eq!(store.load_session("t", Duration::ZERO).await.unwrap(), None);
    }

    #[tokio::test]
    async fn memory_keys_expire_and_are_taken_once() {
        let store = MemoryReplicaStore::default();
        let long = Duration::from_secs(60);
        store.put("a", "1", long).await.unwrap();
        assert_eq!(store.get("a").await.unwrap().as_deref(), Some("1"));
        store.put("a", "2", long).await.unwrap();
        assert_eq!(store.get("a").await.unwrap().as_deref(), Some("2"));
        assert!(!store.put_new("a", "3", long).await.unwrap());
        assert_eq!(store.get("a").await.unwrap().as_deref(), Some("2"));
        assert_eq!(store.take("a").await.unwrap().as_deref(), Some("2"));
        assert_eq!(store.take("a").await.unwrap(), None);
        assert!(store.put_new("a", "4", long).await.unwrap());
        store.remove("a").await.unwrap();
        assert_eq!(store.get("a").await.unwrap(), None);
        // An expired key is gone for every reader, and is new again.
        store.put("b", "1", Duration::from_millis(1)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert_eq!(store.get("b").await.unwrap(), None);
        assert_eq!(store.take("b").await.unwrap(), None);
        store.put("c", "1", Duration::from_millis(1)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert!(store.put_new("c", "2", long).await.unwrap());
        assert_eq!(store.get("c").await.unwrap().as_deref(), Some("2"));
        // A time to live beyond the clock is long, not a panic.
        store.put("d", "1", Duration::MAX).await.unwrap();
        assert_eq!(store.get("d").await.unwrap().as_deref(), Some("1"));
    }

    #[tokio::test]
    async fn memory_keys_are_bounded_and_expired_ones_make_room() {
        let store = MemoryReplicaStore::with_max_keys(3);
        let long = Duration::from_secs(60);
        for key in ["a", "b"] {
            store.put(key, "x", long).await.unwrap();
        }
        store.put("c", "x", Duration::from_millis(1)).await.unwrap();
        // Full: a new key is refused, a held one replaced.
        let e = store.put("d", "x", long).await.unwrap_err();
        assert!(e.to_string().contains("most keys (3)"), "{e}");
        store.put("a", "y", long).await.unwrap();
        // Once `c` expires, it is purged to make room.
        tokio::time::sleep(Duration::from_millis(5)).await;
        store.put("d", "x", long).await.unwrap();
        assert!(store.put_new("e", "x", long).await.is_err());
        assert_eq!(lock(&store.inner.keys).map.len(), 3);
    }

    #[tokio::test]
    async fn one_taker_of_many_gets_a_key() {
        let store = MemoryReplicaStore::default();
        store.put("k", "v", Duration::from_secs(60)).await.unwrap();
        let takers = (0..8).map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.take("k").await.unwrap() })
        });
        let mut got = 0;
        for taker in takers {
            got += usize::from(taker.await.unwrap().is_some());
        }
        assert_eq!(got, 1);
    }
}
