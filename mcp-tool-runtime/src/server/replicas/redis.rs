//! The replicas' shared state in Redis (feature `redis`): change messages on one pub/sub
//! channel, `{prefix}replicas`; each session's record in a key, `{prefix}session:{id}`, that
//! expires when the session has been idle for its time to live. Commands: PUBLISH, SET PX,
//! GETEX PX (Redis 6.2 or later), PEXPIRE, DEL — each touches one key, so a Redis Cluster may
//! hold them (the channel is cluster-wide). The keys other parts of the server keep
//! (`ReplicaStore::put` and the rest) are `{prefix}kv:{key}`: SET PX, SET NX PX, GET, GETDEL
//! (Redis 6.2), DEL. The connection for commands is made as every Redis
//! store of the crate makes its own (`store::redis`); the subscription has its own.

use std::fmt;
use std::time::Duration;

use futures_util::StreamExt as _;
use redis::AsyncCommands;
use redis::aio::ConnectionManager;
use tokio::sync::mpsc;

use super::{ReplicaFuture, ReplicaStore, ReplicaStoreError, StoreUrlError};
use crate::store::redis::{Redis, millis};

/// Replicas meeting in Redis.
pub struct RedisReplicaStore {
    redis: Redis,
}

impl fmt::Debug for RedisReplicaStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisReplicaStore")
            .field("prefix", &self.redis.prefix())
            .finish_non_exhaustive()
    }
}

impl RedisReplicaStore {
    /// A store at `url` (`redis://host:port/db`, `redis+unix:///path`; `rediss://…` for TLS
    /// when the redis crate is built with it): the URL is checked here, the connections made
    /// when first needed (and remade when lost).
    pub fn open(url: &str) -> Result<Self, StoreUrlError> {
        Redis::open(super::STORE, url).map(RedisReplicaStore::on)
    }

    /// The store in `redis`, whose URL was checked.
    pub(crate) fn on(redis: Redis) -> Self {
        RedisReplicaStore { redis }
    }

    /// Keys and the channel under `prefix` instead of `mcp-tool:` (several deployments in one
    /// Redis).
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.redis.set_prefix(prefix.into());
        self
    }

    async fn conn(&self) -> Result<ConnectionManager, ReplicaStoreError> {
        self.redis.connection().await.map_err(redis_error)
    }

    fn channel(&self) -> String {
        self.redis.key(&["replicas"])
    }

    fn session_key(&self, id: &str) -> String {
        self.redis.key(&["session", id])
    }

    fn kv_key(&self, key: &str) -> String {
        self.redis.key(&["kv", key])
    }
}

fn redis_error(e: redis::RedisError) -> ReplicaStoreError {
    ReplicaStoreError(format!("Redis: {e}"))
}

impl ReplicaStore for RedisReplicaStore {
    fn publish<'a>(&'a self, message: &'a str) -> ReplicaFuture<'a, ()> {
        Box::pin(async move {
            let mut con = self.conn().await?;
            con.publish::<_, _, ()>(self.channel(), message)
                .await
                .map_err(redis_error)
        })
    }

    fn subscribe(&self) -> mpsc::UnboundedReceiver<String> {
        let (tx, rx) = mpsc::unbounded_channel();
        let client = self.redis.client().clone();
        let channel = self.channel();
        tokio::spawn(async move {
            let mut pause = Duration::from_millis(50);
            while !tx.is_closed() {
                match client.get_async_pubsub().await {
                    Ok(mut pubsub) => match pubsub.subscribe(&channel).await {
                        Ok(()) => {
                            pause = Duration::from_millis(50);
                            let mut messages = pubsub.on_message();
                            while let Some(message) = messages.next().await {
                                if let Ok(text) = message.get_payload::<String>()
                                    && tx.send(text).is_err()
                                {
                                    return;
                                }
                            }
                            tracing::warn!("the Redis subscription ended; subscribing again");
                        }
                        Err(e) => tracing::warn!(error = %e, "cannot subscribe in Redis"),
                    },
                    Err(e) => tracing::warn!(error = %e, "cannot reach Redis to subscribe"),
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(2));
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
        Box::pin(async move {
            let mut con = self.conn().await?;
            redis::cmd("SET")
                .arg(self.session_key(id))
                .arg(record)
                .arg("PX")
                .arg(millis(ttl))
                .query_async::<()>(&mut con)
                .await
                .map_err(redis_error)
        })
    }

    fn load_session<'a>(&'a self, id: &'a str, ttl: Duration) -> ReplicaFuture<'a, Option<String>> {
        Box::pin(async move {
            let mut con = self.conn().await?;
            redis::cmd("GETEX")
                .arg(self.session_key(id))
                .arg("PX")
                .arg(millis(ttl))
                .query_async::<Option<String>>(&mut con)
                .await
                .map_err(redis_error)
        })
    }

    fn touch_session<'a>(&'a self, id: &'a str, ttl: Duration) -> ReplicaFuture<'a, ()> {
        Box::pin(async move {
            let mut con = self.conn().await?;
            con.pexpire::<_, ()>(self.session_key(id), millis(ttl))
                .await
                .map_err(redis_error)
        })
    }

    fn end_session<'a>(&'a self, id: &'a str) -> ReplicaFuture<'a, ()> {
        Box::pin(async move {
            let mut con = self.conn().await?;
            con.del::<_, ()>(self.session_key(id))
                .await
                .map_err(redis_error)
        })
    }

    fn put<'a>(&'a self, key: &'a str, value: &'a str, ttl: Duration) -> ReplicaFuture<'a, ()> {
        Box::pin(async move {
            let mut con = self.conn().await?;
            redis::cmd("SET")
                .arg(self.kv_key(key))
                .arg(value)
                .arg("PX")
                .arg(millis(ttl))
                .query_async::<()>(&mut con)
                .await
                .map_err(redis_error)
        })
    }

    fn put_new<'a>(
        &'a self,
        key: &'a str,
        value: &'a str,
        ttl: Duration,
    ) -> ReplicaFuture<'a, bool> {
        Box::pin(async move {
            let mut con = self.conn().await?;
            // `OK` when set, nil when the key was there.
            redis::cmd("SET")
                .arg(self.kv_key(key))
                .arg(value)
                .arg("NX")
                .arg("PX")
                .arg(millis(ttl))
                .query_async::<Option<String>>(&mut con)
                .await
                .map(|set| set.is_some())
                .map_err(redis_error)
        })
    }

    fn get<'a>(&'a self, key: &'a str) -> ReplicaFuture<'a, Option<String>> {
        Box::pin(async move {
            let mut con = self.conn().await?;
            con.get::<_, Option<String>>(self.kv_key(key))
                .await
                .map_err(redis_error)
        })
    }

    fn take<'a>(&'a self, key: &'a str) -> ReplicaFuture<'a, Option<String>> {
        Box::pin(async move {
            let mut con = self.conn().await?;
            redis::cmd("GETDEL")
                .arg(self.kv_key(key))
                .query_async::<Option<String>>(&mut con)
                .await
                .map_err(redis_error)
        })
    }

    fn remove<'a>(&'a self, key: &'a str) -> ReplicaFuture<'a, ()> {
        Box::pin(async move {
            let mut con = self.conn().await?;
            con.del::<_, ()>(self.kv_key(key))
                .await
                .map_err(redis_error)
        })
    }
}
