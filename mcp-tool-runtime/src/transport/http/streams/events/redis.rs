//! An event store in Redis (feature `redis`): every replica pointed at the same Redis sees
//! every stream's events, so a client whose stream broke may resume it on any replica.
//!
//! Layout, under a prefix (`mcp-tool:` by default), both keys expiring together a while after
//! the stream's last event:
//! - `sse:{stream}`: a hash of the stream's `owner`, `floor` (the highest event number
//!   dropped) and `end` (its last event's number, once it ended);
//! - `sse:{stream}:events`: a sorted set of its events (`{n}:{message}`, scored by `n`),
//!   trimmed to the newest ones.
//!
//! The connection is made as every Redis store of the crate makes its own (`store::redis`).

use std::fmt;
use std::time::Duration;

use redis::Script;
use redis::aio::ConnectionManager;

use super::{EventFuture, EventStore, EventStoreError, Replay, StoreUrlError};
use crate::store::redis::{Redis, millis};

const APPEND: &str = r"
if redis.call('HSETNX', KEYS[1], 'owner', ARGV[6]) == 1 then
  redis.call('HSET', KEYS[1], 'floor', tonumber(ARGV[1]) - 1)
end
redis.call('ZADD', KEYS[2], ARGV[1], ARGV[2])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[3])
if over > 0 then
  local gone = redis.call('ZRANGE', KEYS[2], over - 1, over - 1, 'WITHSCORES')
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, over - 1)
  redis.call('HSET', KEYS[1], 'floor', gone[2])
end
if ARGV[5] == '1' then redis.call('HSET', KEYS[1], 'end', ARGV[1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
";

const END: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'end', ARGV[1]) end
return 1
";

/// Resumable streams' events kept in Redis.
pub struct RedisEventStore {
    redis: Redis,
    max_per_stream: usize,
    ttl: Duration,
    append_script: Script,
    end_script: Script,
}

impl fmt::Debug for RedisEventStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisEventStore")
            .field("prefix", &self.redis.prefix())
            .field("max_per_stream", &self.max_per_stream)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl RedisEventStore {
    /// A store at `url` (`redis://host:port/db`, `redis+unix:///path`; `rediss://…` for TLS
    /// when the redis crate is built with it) keeping at most 1024 events per stream, each
    /// stream for 5 minutes after its last event. The URL is checked here, the connection
    /// made when first needed (and remade when lost).
    pub fn open(url: &str) -> Result<Self, StoreUrlError> {
        Redis::open("event store", url).map(RedisEventStore::on)
    }

    /// The store in `redis`, whose URL was checked.
    pub(crate) fn on(redis: Redis) -> Self {
        RedisEventStore {
            redis,
            max_per_stream: 1024,
            ttl: Duration::from_secs(300),
            append_script: Script::new(APPEND),
            end_script: Script::new(END),
        }
    }

    /// Keys under `prefix` instead of `mcp-tool:` (several deployments in one Redis).
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.redis.set_prefix(prefix.into());
        self
    }

    /// The most events kept per stream (at least 1): beyond, its oldest go.
    #[must_use]
    pub fn max_per_stream(mut self, events: usize) -> Self {
        self.max_per_stream = events.max(1);
        self
    }

    /// How long a stream is kept after its last event (at least 1 ms).
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.max(Duration::from_millis(1));
        self
    }

    async fn conn(&self) -> Result<ConnectionManager, EventStoreError> {
        self.redis.connection().await.map_err(backend)
    }

    fn keys(&self, stream: &str) -> (String, String) {
        (
            self.redis.key(&["sse", stream]),
            self.redis.key(&["sse", stream, "events"]),
        )
    }
}

fn backend(e: redis::RedisError) -> EventStoreError {
    EventStoreError(format!("Redis: {e}"))
}

impl EventStore for RedisEventStore {
    fn open<'a>(&'a self, stream: &'a str, owner: &'a str) -> EventFuture<'a, ()> {
        Box::pin(async move {
            let mut con = self.conn().await?;
            let (meta, events) = self.keys(stream);
            redis::pipe()
                .atomic()
                .del(&events)
                .hset_multiple(&meta, &[("owner", owner), ("floor", "0")])
                .pexpire(&meta, millis(self.ttl))
                .ignore()
                .query_async::<()>(&mut con)
                .await
                .map_err(backend)
        })
    }

    fn append<'a>(
        &'a self,
        stream: &'a str,
        owner: &'a str,
        seq: u64,
        data: &'a str,
        last: bool,
    ) -> EventFuture<'a, ()> {
        Box::pin(async move {
            let mut con = self.conn().await?;
            let (meta, events) = self.keys(stream);
            self.append_script
                .key(meta)
                .key(events)
                .arg(seq)
                .arg(format!("{seq}:{data}"))
                .arg(self.max_per_stream)
                .arg(millis(self.ttl))
                .arg(if last { "1" } else { "0" })
                .arg(owner)
                .invoke_async::<i64>(&mut con)
                .await
                .map(drop)
                .map_err(backend)
        })
    }

    fn end<'a>(&'a self, stream: &'a str, seq: u64) -> EventFuture<'a, ()> {
        Box::pin(async move {
            let mut con = self.conn().await?;
            let (meta, _) = self.keys(stream);
            // Only a stream still kept: an expired one stays unknown.
            self.end_script
                .key(meta)
                .arg(seq)
                .invoke_async::<i64>(&mut con)
                .await
                .map_err(backend)?;
            Ok(())
        })
    }

    fn replay<'a>(&'a self, stream: &'a str, after: u64) -> EventFuture<'a, Option<Replay>> {
        Box::pin(async move {
            let mut con = self.conn().await?;
            let (meta, events) = self.keys(stream);
            let (fields, members): (Vec<(String, String)>, Vec<String>) = redis::pipe()
                .hgetall(&meta)
                .cmd("ZRANGEBYSCORE")
                .arg(&events)
                .arg(format!("({after}"))
                .arg("+inf")
                .query_async(&mut con)
                .await
                .map_err(backend)?;
            if fields.is_empty() {
                return Ok(None);
            }
            let mut replay = Replay::default();
            for (k, v) in fields {
                match k.as_str() {
                    "owner" => replay.owner = v,
                    "floor" => replay.floor = v.parse().unwrap_or(0),
                    "end" => replay.end = v.parse().ok(),
                    _ => {}
                }
            }
            for member in members {
                let Some((seq, data)) = member.split_once(':') else {
                    continue;
                };
                if let Ok(seq) = seq.parse() {
                    replay.events.push((seq, data.to_owned()));
                }
            }
            Ok(Some(replay))
        })
    }

    fn shared(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::event_store_from_url;

    #[test]
    fn a_redis_url_names_a_shared_store() {
        assert!(
            event_store_from_url("redis://127.0.0.1:1")
                .unwrap()
                .shared()
        );
    }
}
