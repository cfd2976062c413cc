//! The replicas' shared state in a real Redis (`RedisReplicaStore`): keys that expire, kept
//! under the store's prefix, taken by at most one caller. Each test starts its own
//! `redis-server` (no persistence, a free loopback port), killed when the test ends.

#![cfg(feature = "redis")]

mod common;
#[path = "common/redis.rs"]
mod redis_server;

use std::sync::Arc;
use std::time::Duration;

use mcp_tool::server::replicas::ReplicaStore;
use mcp_tool::server::replicas::redis::RedisReplicaStore;
use redis_server::Redis;

fn store(redis: &Redis) -> RedisReplicaStore {
    RedisReplicaStore::open(&redis.url()).expect("a Redis URL")
}

#[tokio::test]
async fn keys_expire_and_are_taken_once() {
    let redis = Redis::start();
    let store = store(&redis);
    let long = Duration::from_secs(60);
    store.put("a", "1", long).await.unwrap();
    assert_eq!(store.get("a").await.unwrap().as_deref(), Some("1"));
    // Under the prefix, with the time to live given.
    assert_eq!(redis.command("GET mcp-tool:kv:a"), "$1\r\n1");
    let ttl: i64 = redis
        .command("PTTL mcp-tool:kv:a")
        .trim_start_matches(':')
        .parse()
        .unwrap();
    assert!((59_000..=60_000).contains(&ttl), "{ttl}");
    store.put("a", "2", long).await.unwrap();
    assert!(!store.put_new("a", "3", long).await.unwrap());
    assert_eq!(store.get("a").await.unwrap().as_deref(), Some("2"));
    assert_eq!(store.take("a").await.unwrap().as_deref(), Some("2"));
    assert_eq!(store.take("a").await.unwrap(), None);
    assert!(store.put_new("a", "4", long).await.unwrap());
    store.remove("a").await.unwrap();
    assert_eq!(store.get("a").await.unwrap(), None);
    store
        .put("b", "1", Duration::from_millis(20))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert_eq!(store.get("b").await.unwrap(), None);
    assert!(store.put_new("b", "2", long).await.unwrap());
    // Another prefix is another deployment.
    let other = RedisReplicaStore::open(&redis.url())
        .unwrap()
        .prefix("other:");
    assert_eq!(other.get("b").await.unwrap(), None);
    other.put("b", "3", long).await.unwrap();
    assert_eq!(store.get("b").await.unwrap().as_deref(), Some("2"));
}

#[tokio::test]
async fn of_many_replicas_taking_a_key_one_gets_it() {
    let redis = Redis::start();
    store(&redis)
        .put("k", "v", Duration::from_secs(60))
        .await
        .unwrap();
    let takers = (0..8).map(|_| {
        let store = Arc::new(store(&redis));
        tokio::spawn(async move { store.take("k").await.unwrap() })
    });
    let mut got = 0;
    for taker in takers {
        got += usize::from(taker.await.unwrap().is_some());
    }
    assert_eq!(got, 1);
}
