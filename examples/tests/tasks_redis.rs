//! Tasks kept in a real Redis (`--task-store redis://…`): two `reports` servers on the same
//! store are replicas — a task started on one is polled, answered, cancelled and fetched on
//! the other, its result outlives a restart, and a task whose server died is reported failed
//! once its lease runs out. Then `RedisTaskStore` itself, against the same kind of server.
//!
//! Each test starts its own `redis-server` (no persistence, a free loopback port), killed when
//! the test ends. Without `redis-server` these tests fail, saying to install it.

#![cfg(all(feature = "redis", feature = "http"))]

mod common;
#[path = "common/redis.rs"]
mod redis_server;
#[path = "common/tasks.rs"]
mod tasks_common;

use std::thread;
use std::time::{Duration, Instant};

use common::TIMEOUT;
use common::stateless::HttpServer;
use redis_server::Redis;
use serde_json::json;
use tasks_common::{
    Client2026, Http, REPORTS, assert_report, assert_task_2025, confirm_2026, create_2026, err,
    get_2026, ok, one_elicitation, poll_2026, task_id, with_tasks,
};

/// The request-state key every replica shares (32 bytes, hex).
const STATE_KEY: &str = "6d63702d746f6f6c2d7461736b732d72656469732d7465737473210123456789";

/// Alice's and Bob's bearer tokens.
const TOKENS: &str = "alice:ta,bob:tb";

/// A `reports` replica on `redis`, with the shared state key, Alice's and Bob's tokens, and
/// `env`.
fn replica(redis: &Redis, env: &[(&str, &str)]) -> HttpServer {
    let url = redis.url();
    let mut all = vec![
        ("MCP_TOOL_STATE_KEY", STATE_KEY),
        ("MCP_TOOL_BEARER_TOKENS", TOKENS),
    ];
    all.extend_from_slice(env);
    HttpServer::start(REPORTS, &["--task-store", &url], &all)
}

fn alice(server: &HttpServer) -> Http<'_> {
    Http::with_token(server, "ta")
}

fn bob(server: &HttpServer) -> Http<'_> {
    Http::with_token(server, "tb")
}

// ---------------------------------------------------------------------------------------------
// Two replicas

#[test]
fn a_task_started_on_one_replica_is_fetched_on_the_other_2026() {
    let redis = Redis::start();
    let (a, b) = (replica(&redis, &[]), replica(&redis, &[]));
    let task = create_2026(
        &mut alice(&a),
        "sales_report",
        json!({ "year": 2024, "pace_ms": 50 }),
    );
    let id = task_id(&task);
    let on_b = poll_2026(&mut alice(&b), &id, &["completed"]);
    assert_report(&on_b["result"]["structuredContent"], 2024);
    let on_a = poll_2026(&mut alice(&a), &id, &["completed"]);
    assert_eq!(on_a["result"], on_b["result"]);
    assert_eq!(on_a["createdAt"], on_b["createdAt"]);
}

#[test]
fn a_task_started_on_one_replica_is_fetched_on_the_other_2025() {
    let redis = Redis::start();
    let (a, b) = (replica(&redis, &[]), replica(&redis, &[]));
    let on_a = a.session_2025(Some("ta"), json!({}));
    let on_b = b.session_2025(Some("ta"), json!({}));
    let reply = a.request_2025(
        Some(&on_a),
        Some("ta"),
        "tools/call",
        json!({
            "name": "sales_report",
            "arguments": { "year": 2024, "pace_ms": 50 },
            "task": { "ttl": 60_000 }
        }),
    );
    let task = reply.result()["task"].clone();
    assert_task_2025(&task);
    let id = task_id(&task);

    // tasks/result on B waits for the task running on A.
    let reply = b.request_2025(
        Some(&on_b),
        Some("ta"),
        "tasks/result",
        json!({ "taskId": id }),
    );
    let result = reply.result();
    assert_report(&result["structuredContent"], 2024);
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], id,
        "{reply:?}"
    );
    let reply = b.request_2025(
        Some(&on_b),
        Some("ta"),
        "tasks/get",
        json!({ "taskId": id }),
    );
    assert_task_2025(reply.result());
    assert_eq!(reply.result()["status"], "completed", "{reply:?}");
    let reply = b.request_2025(Some(&on_b), Some("ta"), "tasks/list", json!({}));
    let listed = reply.result()["tasks"].as_array().expect("tasks").clone();
    assert!(listed.iter().any(|t| t["taskId"] == id), "{reply:?}");
    let reply = b.request_2025(
        Some(&on_b),
        Some("ta"),
        "tasks/cancel",
        json!({ "taskId": id }),
    );
    assert_eq!(reply.error()["code"], -32602, "finished already: {reply:?}");
}

#[test]
fn results_outlive_a_restart() {
    let redis = Redis::start();
    let a = replica(&redis, &[]);
    let task = create_2026(
        &mut alice(&a),
        "sales_report",
        json!({ "year": 2042, "pace_ms": 10 }),
    );
    let id = task_id(&task);
    let before = poll_2026(&mut alice(&a), &id, &["completed"]);
    drop(a);
    let a2 = replica(&redis, &[]);
    let after = poll_2026(&mut alice(&a2), &id, &["completed"]);
    assert_report(&after["result"]["structuredContent"], 2042);
    assert_eq!(after["result"], before["result"]);
    assert_eq!(after["lastUpdatedAt"], before["lastUpdatedAt"]);
}

#[test]
fn a_cancel_on_one_replica_stops_the_task_on_the_other() {
    let redis = Redis::start();
    let (a, b) = (replica(&redis, &[]), replica(&redis, &[]));
    // Twelve months at 250 ms: 3 s.
    let started = Instant::now();
    let task = create_2026(
        &mut alice(&a),
        "sales_report",
        json!({ "year": 2031, "pace_ms": 250 }),
    );
    let id = task_id(&task);
    let response = alice(&b).request("tasks/cancel", with_tasks(json!({ "taskId": id })));
    assert_eq!(ok(&response)["resultType"], "complete", "{response}");
    let on_a = poll_2026(&mut alice(&a), &id, &["cancelled"]);
    assert!(on_a.get("result").is_none(), "{on_a}");

    // Past the time it would have finished: still cancelled, on both.
    let finish = started + Duration::from_millis(3_800);
    thread::sleep(finish.saturating_duration_since(Instant::now()));
    for server in [&a, &b] {
        let response = get_2026(&mut alice(server), &id);
        assert_eq!(ok(&response)["status"], "cancelled", "{response}");
    }
    // A stopped the report: it never counted among the reports built.
    let purge = create_2026(&mut alice(&a), "purge_reports", json!({}));
    let purge_id = task_id(&purge);
    let waiting = poll_2026(&mut alice(&a), &purge_id, &["input_required"]);
    one_elicitation(&waiting, "Purge 0 reports?");
}

#[test]
fn a_task_whose_server_died_is_failed_after_its_lease() {
    let redis = Redis::start();
    let a = replica(&redis, &[("MCP_TOOL_TASK_LEASE", "1s")]);
    let b = replica(&redis, &[]);
    // Twelve months at 2 s: far longer than the test.
    let task = create_2026(
        &mut alice(&a),
        "sales_report",
        json!({ "year": 2033, "pace_ms": 2_000 }),
    );
    let id = task_id(&task);
    let running = poll_2026(&mut alice(&b), &id, &["working"]);
    assert!(running.get("error").is_none(), "{running}");
    let session = b.session_2025(Some("ta"), json!({}));
    drop(a);
    // A 2025-11-25 client waiting on B for the result hears of the failure.
    let reply = b.request_2025(
        Some(&session),
        Some("ta"),
        "tasks/result",
        json!({ "taskId": id }),
    );
    let e = reply.error();
    assert!(
        e["message"].as_str().is_some_and(|m| m.contains("lease")),
        "{reply:?}"
    );
    let failed = poll_2026(&mut alice(&b), &id, &["failed"]);
    let message = failed["error"]["message"].as_str().unwrap_or_default();
    assert!(
        failed["error"]["code"].is_i64() && message.contains("lease"),
        "the error says the lease ran out: {failed}"
    );
    assert!(
        failed["statusMessage"]
            .as_str()
            .is_some_and(|m| m.contains("lease")),
        "{failed}"
    );
}

#[test]
fn an_answer_sent_to_one_replica_reaches_the_task_on_the_other_2026() {
    let redis = Redis::start();
    let (a, b) = (replica(&redis, &[]), replica(&redis, &[]));
    let purge = create_2026(&mut alice(&a), "purge_reports", json!({}));
    let id = task_id(&purge);
    let waiting = poll_2026(&mut alice(&b), &id, &["input_required"]);
    let key = one_elicitation(&waiting, "Purge 0 reports?");
    confirm_2026(&mut alice(&b), &id, &key, true);
    let done = poll_2026(&mut alice(&a), &id, &["completed"]);
    assert_eq!(common::text(&done["result"]), "purged 0 reports", "{done}");
    let on_b = poll_2026(&mut alice(&b), &id, &["completed"]);
    assert_eq!(on_b["result"], done["result"]);
}

#[test]
fn subjects_do_not_see_each_others_tasks_through_redis() {
    let redis = Redis::start();
    let (a, b) = (replica(&redis, &[]), replica(&redis, &[]));
    let task = create_2026(
        &mut alice(&a),
        "sales_report",
        json!({ "year": 2024, "pace_ms": 100 }),
    );
    let id = task_id(&task);

    for server in [&a, &b] {
        let response = get_2026(&mut bob(server), &id);
        assert_eq!(err(&response)["code"], -32602, "{response}");
        let response = bob(server).request("tasks/cancel", with_tasks(json!({ "taskId": id })));
        assert_eq!(err(&response)["code"], -32602, "{response}");
        let response = bob(server).request(
            "tasks/update",
            with_tasks(json!({ "taskId": id, "inputResponses": {} })),
        );
        assert_eq!(err(&response)["code"], -32602, "{response}");
    }
    let bobs = b.session_2025(Some("tb"), json!({}));
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let reply = b.request_2025(Some(&bobs), Some("tb"), method, json!({ "taskId": id }));
        assert_eq!(reply.error()["code"], -32602, "{method}: {reply:?}");
    }
    let reply = b.request_2025(Some(&bobs), Some("tb"), "tasks/list", json!({}));
    assert_eq!(reply.result()["tasks"], json!([]), "{reply:?}");

    // Alice's own task, untouched, on either replica.
    let done = poll_2026(&mut alice(&b), &id, &["completed"]);
    assert_report(&done["result"]["structuredContent"], 2024);
    let alices = b.session_2025(Some("ta"), json!({}));
    let reply = b.request_2025(Some(&alices), Some("ta"), "tasks/list", json!({}));
    let listed = reply.result()["tasks"].as_array().expect("tasks").clone();
    assert_eq!(listed.len(), 1, "{reply:?}");
    assert_eq!(listed[0]["taskId"], id, "{reply:?}");
}

// ---------------------------------------------------------------------------------------------
// RedisTaskStore itself

mod store {
    use std::time::{Duration, Instant};

    use mcp_tool::protocol::RpcError;
    use mcp_tool::server::tasks::redis::RedisTaskStore;
    use mcp_tool::server::tasks::{
        TaskChange, TaskOutcome, TaskQuota, TaskRecord, TaskStatus, TaskStore, TaskStoreError,
    };
    use serde_json::{Map, Value, json};

    use super::{Redis, TIMEOUT};

    fn now_ms() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).expect("ms"))
    }

    fn record(id: &str, owner: &str, created_ms: u64, ttl_ms: u64) -> TaskRecord {
        TaskRecord {
            id: id.into(),
            owner: owner.into(),
            share: owner.into(),
            tool: "sales_report".into(),
            status: TaskStatus::Working,
            status_message: None,
            created_ms,
            updated_ms: created_ms,
            ttl_ms: Some(ttl_ms),
            poll_ms: 500,
            lease_until_ms: created_ms + 30_000,
            asked: Map::new(),
            answers: Map::new(),
            outcome: None,
        }
    }

    /// `n` tasks per client, many in all.
    fn quota(n: usize) -> TaskQuota {
        TaskQuota {
            per_share: n,
            total: 1_000,
        }
    }

    fn store(redis: &Redis) -> RedisTaskStore {
        RedisTaskStore::open(&redis.url()).expect("a Redis URL")
    }

    fn answers(pairs: &[(&str, Value)]) -> TaskChange {
        TaskChange::Answer(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
        )
    }

    #[tokio::test]
    async fn a_record_round_trips() {
        let redis = Redis::start();
        let s = store(&redis);
        let mut t = record("t1", "alice", now_ms(), 60_000);
        t.status_message = Some("starting".into());
        s.create(t.clone(), quota(10)).await.unwrap();
        assert_eq!(s.get("t1").await.unwrap(), Some(t));
        assert_eq!(s.get("nope").await.unwrap(), None);
        assert_eq!(
            s.change("nope", TaskChange::Cancel { message: None })
                .await
                .unwrap(),
            None
        );
    }

    #[tokio::test]
    async fn a_cancel_beats_a_later_finish() {
        let redis = Redis::start();
        let (s, other) = (store(&redis), store(&redis));
        let now = now_ms();
        s.create(record("t1", "alice", now, 60_000), quota(10))
            .await
            .unwrap();
        let cancelled = other
            .change(
                "t1",
                TaskChange::Cancel {
                    message: Some("stop".into()),
                },
            )
            .await
            .unwrap()
            .expect("the task");
        assert_eq!(cancelled.status, TaskStatus::Cancelled);
        let after = s
            .change(
                "t1",
                TaskChange::Finish(TaskOutcome::Result(json!({ "content": [] }))),
            )
            .await
            .unwrap()
            .expect("the task");
        assert_eq!(after.status, TaskStatus::Cancelled);
        assert_eq!(after.outcome, None);
        assert_eq!(after.status_message.as_deref(), Some("stop"));
        s.change(
            "t1",
            TaskChange::Ask {
                key: "k".into(),
                request: json!({ "method": "elicitation/create" }),
            },
        )
        .await
        .unwrap();
        let after = s.get("t1").await.unwrap().expect("the task");
        assert_eq!(after.status, TaskStatus::Cancelled);
        assert!(after.asked.is_empty());
        assert_eq!(after.updated_ms, cancelled.updated_ms);
        // Renewing a finished task's lease is harmless.
        let renewed = s
            .change(
                "t1",
                TaskChange::Renew {
                    until_ms: now + 90_000,
                },
            )
            .await
            .unwrap()
            .expect("the task");
        assert_eq!(renewed.status, TaskStatus::Cancelled);
        assert_eq!(renewed.lease_until_ms, now + 90_000);

        // And the other way round: a finished task cannot be cancelled.
        s.create(record("t2", "alice", now, 60_000), quota(10))
            .await
            .unwrap();
        let error = RpcError::new(-32603, "broke");
        s.change("t2", TaskChange::Finish(TaskOutcome::Error(error.clone())))
            .await
            .unwrap();
        let after = other
            .change("t2", TaskChange::Cancel { message: None })
            .await
            .unwrap()
            .expect("the task");
        assert_eq!(after.status, TaskStatus::Failed);
        assert_eq!(after.outcome, Some(TaskOutcome::Error(error)));
        assert_eq!(after.status_message.as_deref(), Some("broke"));
    }

    #[tokio::test]
    async fn answers_settle_only_outstanding_requests() {
        let redis = Redis::start();
        let s = store(&redis);
        s.create(record("t1", "alice", now_ms(), 60_000), quota(10))
            .await
            .unwrap();
        for key in ["x", "y"] {
            s.change(
                "t1",
                TaskChange::Ask {
                    key: key.into(),
                    request: json!({ "method": "elicitation/create", "params": { "message": key } }),
                },
            )
            .await
            .unwrap();
        }
        let t = s.get("t1").await.unwrap().expect("the task");
        assert_eq!(t.status, TaskStatus::InputRequired);
        assert_eq!(t.asked.len(), 2);
        assert_eq!(t.asked["y"]["params"]["message"], "y");

        let t = s
            .change("t1", answers(&[("x", json!(1)), ("nope", json!(2))]))
            .await
            .unwrap()
            .expect("the task");
        assert_eq!(t.status, TaskStatus::InputRequired, "y is outstanding");
        assert_eq!(t.asked.keys().collect::<Vec<_>>(), ["y"]);
        assert_eq!(t.answers, Map::from_iter([("x".to_owned(), json!(1))]));
        // An answer to what was answered already is ignored too.
        s.change("t1", answers(&[("x", json!(99))])).await.unwrap();

        assert_eq!(s.take_answer("t1", "nope").await.unwrap(), None);
        assert_eq!(s.take_answer("t1", "x").await.unwrap(), Some(json!(1)));
        assert_eq!(s.take_answer("t1", "x").await.unwrap(), None, "taken");

        let t = s
            .change("t1", answers(&[("y", json!({ "action": "accept" }))]))
            .await
            .unwrap()
            .expect("the task");
        assert_eq!(t.status, TaskStatus::Working);
        assert!(t.asked.is_empty());
        assert_eq!(
            s.take_answer("t1", "y").await.unwrap(),
            Some(json!({ "action": "accept" }))
        );
    }

    #[tokio::test]
    async fn tasks_expire_with_their_ttl_and_free_their_owners_place() {
        let redis = Redis::start();
        let s = store(&redis);
        let now = now_ms();
        s.create(record("short", "alice", now, 300), quota(2))
            .await
            .unwrap();
        s.create(record("long", "alice", now, 60_000), quota(2))
            .await
            .unwrap();
        assert_eq!(
            s.create(record("third", "alice", now, 60_000), quota(2))
                .await,
            Err(TaskStoreError::Full { limit: 2 }),
            "Alice holds two live tasks"
        );
        s.create(record("bobs", "bob", now, 60_000), quota(2))
            .await
            .expect("Bob's count is his own");
        assert!(s.get("short").await.unwrap().is_some());

        let deadline = Instant::now() + TIMEOUT;
        while s.get("short").await.unwrap().is_some() {
            assert!(Instant::now() < deadline, "the task outlived its ttl");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(
            s.change("short", TaskChange::Cancel { message: None })
                .await
                .unwrap(),
            None,
            "an expired task is gone"
        );
        let listed = s.list("alice", None, 10).await.unwrap();
        assert_eq!(
            listed.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
            ["long"]
        );
        s.create(record("third", "alice", now_ms(), 60_000), quota(2))
            .await
            .expect("the expired task no longer counts");
    }

    #[tokio::test]
    async fn an_owners_tasks_come_in_pages_oldest_first() {
        let redis = Redis::start();
        let s = store(&redis);
        let now = now_ms();
        for i in 0..5 {
            s.create(
                record(&format!("t{i}"), "alice", now + i, 60_000),
                quota(10),
            )
            .await
            .unwrap();
        }
        s.create(record("b0", "bob", now, 60_000), quota(10))
            .await
            .unwrap();
        let page = |after: Option<&'static str>| {
            let s = &s;
            async move {
                s.list("alice", after, 2)
                    .await
                    .unwrap()
                    .into_iter()
                    .map(|t| t.id)
                    .collect::<Vec<_>>()
            }
        };
        assert_eq!(page(None).await, ["t0", "t1"]);
        assert_eq!(page(Some("t1")).await, ["t2", "t3"]);
        assert_eq!(page(Some("t3")).await, ["t4"]);
        assert_eq!(page(Some("t4")).await, Vec::<String>::new());
        let bobs = s.list("bob", None, 10).await.unwrap();
        assert_eq!(bobs.len(), 1);
        assert_eq!(bobs[0].id, "b0");
        assert!(s.list("carol", None, 10).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn prefixes_keep_deployments_apart() {
        let redis = Redis::start();
        let one = store(&redis);
        let two = store(&redis).prefix("other:");
        one.create(record("t1", "alice", now_ms(), 60_000), quota(1))
            .await
            .unwrap();
        assert_eq!(two.get("t1").await.unwrap(), None);
        assert!(two.list("alice", None, 10).await.unwrap().is_empty());
        two.create(record("t2", "alice", now_ms(), 60_000), quota(1))
            .await
            .expect("the owner bound is per prefix");
    }

    #[tokio::test]
    async fn sessions_of_one_client_share_its_quota_and_an_ended_one_leaves_nothing() {
        let redis = Redis::start();
        let s = store(&redis);
        let of = |id: &str, session: &str, client: &str| {
            let mut task = record(id, session, now_ms(), 60_000);
            task.share = client.into();
            task
        };
        let quota = TaskQuota {
            per_share: 2,
            total: 3,
        };
        s.create(of("a1", "session:1", "client:a"), quota)
            .await
            .unwrap();
        s.create(of("a2", "session:2", "client:a"), quota)
            .await
            .unwrap();
        assert_eq!(
            s.create(of("a3", "session:3", "client:a"), quota).await,
            Err(TaskStoreError::Full { limit: 2 }),
            "one client's sessions hold one share"
        );
        s.create(of("b1", "session:4", "client:b"), quota)
            .await
            .unwrap();
        assert_eq!(
            s.create(of("c1", "session:5", "client:c"), quota).await,
            Err(TaskStoreError::ServerFull { limit: 3 }),
            "the server keeps three"
        );
        assert_eq!(s.get("a1").await.unwrap().unwrap().share, "client:a");

        assert_eq!(s.remove_owner("session:1").await.unwrap(), ["a1"]);
        assert_eq!(s.get("a1").await.unwrap(), None);
        assert!(s.list("session:1", None, 10).await.unwrap().is_empty());
        assert!(s.remove_owner("session:1").await.unwrap().is_empty());
        s.create(of("a3", "session:3", "client:a"), quota)
            .await
            .expect("the ended session's task left its client's share");
        assert_eq!(
            s.create(of("c1", "session:5", "client:c"), quota).await,
            Err(TaskStoreError::ServerFull { limit: 3 }),
        );
        s.remove_owner("session:2").await.unwrap();
        s.create(of("c1", "session:5", "client:c"), quota)
            .await
            .expect("and the server's total");
    }

    #[tokio::test]
    async fn an_owner_that_never_comes_back_leaves_no_keys_behind() {
        let redis = Redis::start();
        let s = store(&redis);
        let now = now_ms();
        for id in ["d1", "d2"] {
            s.create(record(id, "dave", now, 300), quota(10))
                .await
                .unwrap();
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let gone = redis.command(
                "EXISTS mcp-tool:owner:dave mcp-tool:owner-exp:dave mcp-tool:share:dave mcp-tool:task:d1 mcp-tool:task:d2",
            );
            if gone == ":0" {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "keys outlived their tasks: {gone}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
