//! The replicas' shared state in Redis (feature `redis`): change messages on one pub/sub
//! channel, `{prefix}replicas`; each session's record in a key, `{prefix}session:{id}`, that
//! expires when the session has been idle for its time to live. Commands: PUBLISH, SET PX,
//! GETEX PX (Redis 6.2 or later), PEXPIRE, DEL — each touches one key, so a Redis Cluster may
//! hold them (the channel is cluster-wide).

use std::fmt;
use std::time::Duration;

use futures_util::StreamExt as _;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{AsyncCommands, Client};
use tokio::sync::{OnceCell, mpsc};

use super::{ReplicaFuture, ReplicaStore};

/// Replicas meeting in Redis.
pub struct RedisReplicaStore {
    client: Client,
    prefix: String,
    connection: OnceCell<ConnectionManager>,
}

impl fmt::Debug for RedisReplicaStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisReplicaStore")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisReplicaStore {
    /// A store at `url` (`redis://host:port/db`, `rediss://…` for TLS): the URL is checked
    /// here, the connections made when first needed (and remade when lost).
    pub fn open(url: &str) -> Result<Self, String> {
        let client = Client::open(url).map_err(|e| format!("`{url}` is not a Redis URL: {e}"))?;
        Ok(RedisReplicaStore {
            client,
            prefix: "mcp-tool:".into(),
            connection: OnceCell::new(),
        })
    }

    /// Keys and the channel under `prefix` instead of `mcp-tool:` (several deployments in one
    /// Redis).
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    async fn conn(&self) -> Result<ConnectionManager, String> {
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(5)))
            .set_response_timeout(Some(Duration::from_secs(5)))
            .set_number_of_retries(2);
        self.connection
            .get_or_try_init(|| ConnectionManager::new_with_config(self.client.clone(), config))
            .await
            .cloned()
            .map_err(redis_error)
    }

    fn channel(&self) -> String {
        format!("{}replicas", self.prefix)
    }

    fn session_key(&self, id: &str) -> String {
        format!("{}session:{id}", self.prefix)
    }
}

fn redis_error(e: redis::RedisError) -> String {
    format!("Redis: {e}")
}

fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
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
        let client = self.client.clone();
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
            con.pexpire::<_, ()>(
                self.session_key(id),
                i64::try_from(millis(ttl)).unwrap_or(i64::MAX),
            )
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
}
