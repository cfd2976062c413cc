//! Redis as every Redis store of the crate reaches it (feature `redis`): the task store, the
//! event store and the replicas' shared state each hold a [`Redis`].
//!
//! - Its URL is checked when the store is made; the connection is made when first needed, by
//!   the redis crate's connection manager, which makes it again when it is lost (5 s to
//!   connect and to answer each command, 2 retries), and is shared by the store's callers.
//! - Every key is under the store's prefix (`mcp-tool:` unless told otherwise, so that several
//!   deployments can share one Redis), its parts joined by `:`: `mcp-tool:task:{id}`.

use std::fmt;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, ErrorKind, RedisError, RedisResult};
use tokio::sync::OnceCell;

use super::{StoreUrl, StoreUrlError, StoreUrlProblem};

/// The prefix of every key unless the store is given another.
const DEFAULT_PREFIX: &str = "mcp-tool:";

/// How long to wait for a connection, and for each answer.
const TIMEOUT: Duration = Duration::from_secs(5);

/// How many times a command is retried on a connection made again after it was lost.
const RETRIES: usize = 2;

/// The store URL of a Redis (`redis://`, `rediss://`, `redis+unix://`), checked.
pub(super) fn parse(store: &'static str, url: &str) -> Result<StoreUrl, StoreUrlError> {
    Redis::open(store, url).map(|r| StoreUrl::Redis(Box::new(r)))
}

/// One store's Redis: its client, its connection, its key prefix.
pub(crate) struct Redis {
    client: Client,
    prefix: String,
    connection: OnceCell<ConnectionManager>,
}

impl fmt::Debug for Redis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redis")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl Redis {
    /// The Redis at `url` (`redis://host:port/db`, `redis+unix:///path?db=n`; `rediss://` when
    /// the redis crate has TLS) for the `store` (what errors call it): the URL is checked here,
    /// nothing is connected yet.
    pub(crate) fn open(store: &'static str, url: &str) -> Result<Redis, StoreUrlError> {
        let client = Client::open(url).map_err(|e| {
            let problem = if url.trim_start().starts_with("rediss://") && is_about_tls(&e) {
                StoreUrlProblem::NoTls
            } else {
                StoreUrlProblem::Invalid(reason(&e))
            };
            StoreUrlError::new(store, url.trim(), problem)
        })?;
        Ok(Redis {
            client,
            prefix: DEFAULT_PREFIX.to_owned(),
            connection: OnceCell::new(),
        })
    }

    /// Puts the keys under `prefix` instead of `mcp-tool:`.
    pub(crate) fn set_prefix(&mut self, prefix: String) {
        self.prefix = prefix;
    }

    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The key named by `parts`: `["task", id, "asked"]` is `{prefix}task:{id}:asked`.
    pub(crate) fn key(&self, parts: &[&str]) -> String {
        let length = parts.iter().map(|p| p.len() + 1).sum::<usize>();
        let mut key = String::with_capacity(self.prefix.len() + length);
        key.push_str(&self.prefix);
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                key.push(':');
            }
            key.push_str(part);
        }
        key
    }

    /// The client, for connections of another kind (pub/sub).
    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    /// The store's connection: made when first needed, made again when lost.
    pub(crate) async fn connection(&self) -> RedisResult<ConnectionManager> {
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(TIMEOUT))
            .set_response_timeout(Some(TIMEOUT))
            .set_number_of_retries(RETRIES);
        self.connection
            .get_or_try_init(|| ConnectionManager::new_with_config(self.client.clone(), config))
            .await
            .cloned()
    }
}

/// `d` in milliseconds for `PX` and `PEXPIRE`: at least 1 (Redis refuses 0), at most what
/// Redis takes.
pub(crate) fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX).max(1)
}

/// Why the redis crate refused a URL, without the error kind it appends to every message
/// (` - InvalidClientConfig`).
fn reason(e: &RedisError) -> String {
    let text = e.to_string();
    if e.kind() == ErrorKind::InvalidClientConfig {
        text.replacen(" - InvalidClientConfig", "", 1)
    } else {
        text
    }
}

/// Whether the redis crate refused a `rediss://` URL for want of a TLS feature.
fn is_about_tls(e: &RedisError) -> bool {
    e.kind() == ErrorKind::InvalidClientConfig && e.to_string().contains("TLS")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::refused;

    #[test]
    fn redis_urls_are_checked_without_connecting() {
        // Nothing listens on these: the URL is read, no connection is made.
        for url in [
            "redis://127.0.0.1:1",
            "redis://127.0.0.1",
            "redis://localhost:6379/3",
            "redis://:secret@127.0.0.1:6379/0",
            "redis://user:secret@[::1]:6379",
            "redis://127.0.0.1:6379/?protocol=resp3",
            " redis://127.0.0.1:6379 ",
            "redis+unix:///tmp/redis.sock",
            "redis+unix:///tmp/redis.sock?db=2&pass=secret",
        ] {
            assert!(
                matches!(StoreUrl::parse("task store", url), Ok(StoreUrl::Redis(_))),
                "{url}"
            );
        }
    }

    #[test]
    fn bad_redis_urls_say_why() {
        for (url, why) in [
            ("redis://", "not a Redis URL: Missing hostname"),
            (
                "redis://0.0.0.0:6379",
                "not a Redis URL: Cannot connect to a wildcard address (0.0.0.0 or ::)",
            ),
            (
                "redis://127.0.0.1:6379/x",
                "not a Redis URL: Invalid database number",
            ),
            (
                "redis://127.0.0.1:port",
                "not a Redis URL: Redis URL did not parse",
            ),
            (
                "redis+tcp://127.0.0.1",
                "not a Redis URL: Redis URL did not parse",
            ),
            ("redis+unix://", "not a Redis URL: Missing path"),
            (
                "redis+unix:///tmp/r.sock?db=x",
                "not a Redis URL: Invalid database number",
            ),
            (
                "redis://127.0.0.1/?protocol=resp9",
                "not a Redis URL: Invalid protocol version: resp9",
            ),
        ] {
            let e = refused(url);
            assert!(matches!(e.problem(), StoreUrlProblem::Invalid(_)), "{url}");
            assert_eq!(e.to_string(), format!("task store `{url}`: {why}"));
        }
    }

    #[test]
    fn rediss_needs_tls_in_the_redis_crate() {
        let e = refused("rediss://example.com:6380");
        assert_eq!(e.problem(), &StoreUrlProblem::NoTls);
        assert_eq!(
            e.to_string(),
            "task store `rediss://example.com:6380`: this server was built without TLS to Redis \
             (`rediss://`): use `redis://` (through a TLS tunnel where the network needs one)"
        );
    }

    #[test]
    fn keys_are_prefixed_parts() {
        let mut redis = Redis::open("task store", "redis://127.0.0.1:1").unwrap();
        assert_eq!(redis.key(&["task", "t1"]), "mcp-tool:task:t1");
        assert_eq!(
            redis.key(&["task", "t1", "asked"]),
            "mcp-tool:task:t1:asked"
        );
        assert_eq!(redis.key(&["replicas"]), "mcp-tool:replicas");
        redis.set_prefix("blue/".into());
        assert_eq!(redis.key(&["sse", "ab", "events"]), "blue/sse:ab:events");
        assert_eq!(redis.prefix(), "blue/");
    }

    #[test]
    fn expiries_are_whole_positive_milliseconds() {
        assert_eq!(millis(Duration::ZERO), 1);
        assert_eq!(millis(Duration::from_micros(1500)), 1);
        assert_eq!(millis(Duration::from_secs(300)), 300_000);
        assert_eq!(millis(Duration::MAX), i64::MAX);
    }
}
