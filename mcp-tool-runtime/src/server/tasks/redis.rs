//! A task store in Redis (feature `redis`): every server pointed at the same Redis sees the
//! same tasks, so a task started on one replica is polled, answered, cancelled and fetched on
//! any, and its result outlives a restart.
//!
//! Layout, under a prefix (`mcp-tool:` by default):
//! - `task:{id}`: a hash of the task's fields (`status`, `outcome` as JSON text, …), expiring
//!   with the task;
//! - `task:{id}:asked` and `task:{id}:answers`: the outstanding input requests and the answers
//!   not yet taken, by key (JSON text values), expiring with the task;
//! - `owner:{owner}` and `owner-exp:{owner}`: sorted sets of an owner's task ids, by creation
//!   and by expiry, which page `tasks/list`;
//! - `share:{share}` and `tasks`: sorted sets of a share's and of every task id by expiry,
//!   which bound how many live tasks a client and the server hold.
//!
//! Every change is one Lua script, so it is atomic: a cancelled task stays cancelled whatever
//! its runner does afterwards. (A Redis Cluster is not supported: the scripts touch keys of
//! several hash slots.) The connection is made as every Redis store of the crate makes its
//! own (`store::redis`).

use std::fmt;

use redis::aio::ConnectionManager;
use redis::{AsyncCommands, Script};
use serde_json::{Map, Value};

use crate::store::StoreUrlError;
use crate::store::redis::Redis;

use super::store::{
    StoreFuture, StoreResult, TaskChange, TaskOutcome, TaskQuota, TaskRecord, TaskStatus,
    TaskStore, TaskStoreError, now_ms,
};

const CREATE: &str = r"
local now = tonumber(ARGV[1])
local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
for _, id in ipairs(expired) do redis.call('ZREM', KEYS[2], id) end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[2]) then return 0 end
if redis.call('ZCARD', KEYS[5]) >= tonumber(ARGV[6]) then return -1 end
redis.call('HSET', KEYS[1], unpack(ARGV, 7))
if ARGV[5] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[5]) end
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3])
local expiry = '+inf'
if ARGV[5] ~= '' then expiry = ARGV[5] end
redis.call('ZADD', KEYS[3], expiry, ARGV[3])
redis.call('ZADD', KEYS[4], expiry, ARGV[3])
redis.call('ZADD', KEYS[5], expiry, ARGV[3])
-- An owner's and a share's sets expire with their last task: a client that never comes back
-- leaves nothing behind.
local function expire_with_last(set, keys)
  local last = redis.call('ZRANGE', set, -1, -1, 'WITHSCORES')[2]
  for _, key in ipairs(keys) do
    if last == 'inf' or last == nil then redis.call('PERSIST', key)
    else redis.call('PEXPIREAT', key, last) end
  end
end
expire_with_last(KEYS[3], {KEYS[2], KEYS[3]})
expire_with_last(KEYS[4], {KEYS[4]})
return 1
";

/// Removes one task of an owner that is gone: `KEYS` are the task's hash, its asked and
/// answers hashes, the owner's two sets, its share's set (read from the task beforehand) and
/// the server's set; `ARGV[1]` the id.
const REMOVE: &str = r"
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
for i = 4, 7 do redis.call('ZREM', KEYS[i], ARGV[1]) end
return 1
";

const CHANGE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local kind = ARGV[1]
if kind == 'renew' then
  local lease = tonumber(redis.call('HGET', KEYS[1], 'lease') or '0')
  if tonumber(ARGV[3]) > lease then redis.call('HSET', KEYS[1], 'lease', ARGV[3]) end
  return 1
end
local status = redis.call('HGET', KEYS[1], 'status')
if status == 'completed' or status == 'failed' or status == 'cancelled' then return 1 end
if kind == 'ask' then
  redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
  redis.call('HSET', KEYS[1], 'status', 'input_required')
elseif kind == 'answer' then
  for i = 3, #ARGV, 2 do
    if redis.call('HDEL', KEYS[2], ARGV[i]) == 1 then
      redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1])
    end
  end
  if redis.call('HLEN', KEYS[2]) == 0 and status == 'input_required' then
    redis.call('HSET', KEYS[1], 'status', 'working')
  end
elseif kind == 'finish' then
  redis.call('HSET', KEYS[1], 'status', ARGV[3], 'outcome', ARGV[4])
  if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'message', ARGV[5]) end
  redis.call('DEL', KEYS[2])
elseif kind == 'cancel' then
  redis.call('HSET', KEYS[1], 'status', 'cancelled')
  if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'message', ARGV[3]) end
  redis.call('DEL', KEYS[2])
end
redis.call('HSET', KEYS[1], 'updated', ARGV[2])
local expire = redis.call('HGET', KEYS[1], 'expire')
if expire and expire ~= '' then
  redis.call('PEXPIREAT', KEYS[2], expire)
  redis.call('PEXPIREAT', KEYS[3], expire)
end
return 1
";

const TAKE: &str = r"
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v then redis.call('HDEL', KEYS[1], ARGV[1]) end
return v
";

/// Tasks kept in Redis.
pub struct RedisTaskStore {
    redis: Redis,
    scripts: [Script; 4],
}

impl fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("prefix", &self.redis.prefix())
            .finish_non_exhaustive()
    }
}

impl RedisTaskStore {
    /// A store at `url` (`redis://host:port/db`, `redis+unix:///path`; `rediss://…` for TLS
    /// when the redis crate is built with it): the URL is checked here, the connection made
    /// when first needed (and remade when lost).
    pub fn open(url: &str) -> Result<Self, StoreUrlError> {
        Redis::open("task store", url).map(RedisTaskStore::on)
    }

    /// The store in `redis`, whose URL was checked.
    pub(crate) fn on(redis: Redis) -> Self {
        RedisTaskStore {
            redis,
            scripts: [
                Script::new(CREATE),
                Script::new(CHANGE),
                Script::new(TAKE),
                Script::new(REMOVE),
            ],
        }
    }

    /// Keys under `prefix` instead of `mcp-tool:` (several deployments in one Redis).
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.redis.set_prefix(prefix.into());
        self
    }

    async fn conn(&self) -> StoreResult<ConnectionManager> {
        self.redis.connection().await.map_err(backend)
    }

    /// The ids of `owner`'s tasks, oldest first.
    async fn owned(&self, con: &mut ConnectionManager, owner: &str) -> StoreResult<Vec<String>> {
        con.zrange(self.redis.key(&["owner", owner]), 0, -1)
            .await
            .map_err(backend)
    }

    async fn fetch(
        &self,
        con: &mut ConnectionManager,
        id: &str,
    ) -> StoreResult<Option<TaskRecord>> {
        let (fields, asked, answers): (Pairs, Pairs, Pairs) = redis::pipe()
            .hgetall(self.redis.key(&["task", id]))
            .hgetall(self.redis.key(&["task", id, "asked"]))
            .hgetall(self.redis.key(&["task", id, "answers"]))
            .query_async(con)
            .await
            .map_err(backend)?;
        if fields.is_empty() {
            return Ok(None);
        }
        decode(id, fields, asked, answers).map(Some)
    }
}

/// A hash's fields and values.
type Pairs = Vec<(String, String)>;

fn backend(e: redis::RedisError) -> TaskStoreError {
    TaskStoreError::Backend(format!("Redis: {e}"))
}

fn json_map(pairs: Pairs) -> Map<String, Value> {
    pairs
        .into_iter()
        .map(|(k, v)| (k, serde_json::from_str(&v).unwrap_or(Value::Null)))
        .collect()
}

/// A record from its hash fields.
fn decode(id: &str, fields: Pairs, asked: Pairs, answers: Pairs) -> StoreResult<TaskRecord> {
    let fields: std::collections::HashMap<String, String> = fields.into_iter().collect();
    let text = |k: &str| fields.get(k).map(String::as_str).unwrap_or_default();
    let number = |k: &str| text(k).parse::<u64>().unwrap_or(0);
    let status = TaskStatus::parse(text("status"))
        .ok_or_else(|| TaskStoreError::Backend(format!("task `{id}` has no valid status")))?;
    let outcome = match text("outcome") {
        "" => None,
        json => Some(
            serde_json::from_str::<TaskOutcome>(json)
                .map_err(|e| TaskStoreError::Backend(format!("task `{id}`: {e}")))?,
        ),
    };
    Ok(TaskRecord {
        id: id.to_owned(),
        owner: text("owner").to_owned(),
        share: match text("share") {
            "" => text("owner").to_owned(),
            share => share.to_owned(),
        },
        tool: text("tool").to_owned(),
        status,
        status_message: Some(text("message").to_owned()).filter(|m| !m.is_empty()),
        created_ms: number("created"),
        updated_ms: number("updated"),
        ttl_ms: text("ttl").parse().ok(),
        poll_ms: number("poll"),
        lease_until_ms: number("lease"),
        asked: json_map(asked),
        answers: json_map(answers),
        outcome,
    })
}

impl TaskStore for RedisTaskStore {
    fn create(&self, task: TaskRecord, quota: TaskQuota) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let mut con = self.conn().await?;
            let expire = task
                .ttl_ms
                .map(|ttl| task.created_ms.saturating_add(ttl).to_string())
                .unwrap_or_default();
            let mut invocation = self.scripts[0].key(self.redis.key(&["task", &task.id]));
            invocation
                .key(self.redis.key(&["owner", &task.owner]))
                .key(self.redis.key(&["owner-exp", &task.owner]))
                .key(self.redis.key(&["share", &task.share]))
                .key(self.redis.key(&["tasks"]))
                .arg(now_ms())
                .arg(quota.per_share)
                .arg(&task.id)
                .arg(task.created_ms)
                .arg(&expire)
                .arg(quota.total);
            let outcome = task
                .outcome
                .as_ref()
                .and_then(|o| serde_json::to_string(o).ok())
                .unwrap_or_default();
            for (field, value) in [
                ("owner", task.owner.clone()),
                ("share", task.share.clone()),
                ("tool", task.tool.clone()),
                ("status", task.status.as_str().to_owned()),
                ("message", task.status_message.clone().unwrap_or_default()),
                ("created", task.created_ms.to_string()),
                ("updated", task.updated_ms.to_string()),
                (
                    "ttl",
                    task.ttl_ms.map(|t| t.to_string()).unwrap_or_default(),
                ),
                ("poll", task.poll_ms.to_string()),
                ("lease", task.lease_until_ms.to_string()),
                ("expire", expire.clone()),
                ("outcome", outcome),
            ] {
                invocation.arg(field).arg(value);
            }
            let created: i64 = invocation.invoke_async(&mut con).await.map_err(backend)?;
            match created {
                0 => Err(TaskStoreError::Full {
                    limit: quota.per_share,
                }),
                -1 => Err(TaskStoreError::ServerFull { limit: quota.total }),
                _ => Ok(()),
            }
        })
    }

    fn remove_owner<'a>(&'a self, owner: &'a str) -> StoreFuture<'a, Vec<String>> {
        Box::pin(async move {
            let mut con = self.conn().await?;
            let ids = self.owned(&mut con, owner).await?;
            for id in &ids {
                let share: Option<String> = con
                    .hget(self.redis.key(&["task", id]), "share")
                    .await
                    .map_err(backend)?;
                let share = share.filter(|s| !s.is_empty());
                self.scripts[3]
                    .key(self.redis.key(&["task", id]))
                    .key(self.redis.key(&["task", id, "asked"]))
                    .key(self.redis.key(&["task", id, "answers"]))
                    .key(self.redis.key(&["owner", owner]))
                    .key(self.redis.key(&["owner-exp", owner]))
                    .key(
                        self.redis
                            .key(&["share", share.as_deref().unwrap_or(owner)]),
                    )
                    .key(self.redis.key(&["tasks"]))
                    .arg(id)
                    .invoke_async::<i64>(&mut con)
                    .await
                    .map_err(backend)?;
            }
            Ok(ids)
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async move {
            let mut con = self.conn().await?;
            self.fetch(&mut con, id).await
        })
    }

    fn change<'a>(
        &'a self,
        id: &'a str,
        change: TaskChange,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async move {
            let mut con = self.conn().await?;
            let mut invocation = self.scripts[1].key(self.redis.key(&["task", id]));
            invocation
                .key(self.redis.key(&["task", id, "asked"]))
                .key(self.redis.key(&["task", id, "answers"]));
            let now = now_ms();
            match &change {
                TaskChange::Renew { until_ms } => {
                    invocation.arg("renew").arg(now).arg(*until_ms);
                }
                TaskChange::Ask { key, request } => {
                    invocation
                        .arg("ask")
                        .arg(now)
                        .arg(key)
                        .arg(request.to_string());
                }
                TaskChange::Answer(answers) => {
                    invocation.arg("answer").arg(now);
                    for (k, v) in answers {
                        invocation.arg(k).arg(v.to_string());
                    }
                }
                TaskChange::Finish(outcome) => {
                    let (status, message) = match outcome {
                        TaskOutcome::Result(_) => ("completed", String::new()),
                        TaskOutcome::Error(e) => ("failed", e.message.clone()),
                    };
                    let json = serde_json::to_string(outcome)
                        .map_err(|e| TaskStoreError::Backend(e.to_string()))?;
                    invocation
                        .arg("finish")
                        .arg(now)
                        .arg(status)
                        .arg(json)
                        .arg(message);
                }
                TaskChange::Cancel { message } => {
                    invocation
                        .arg("cancel")
                        .arg(now)
                        .arg(message.clone().unwrap_or_default());
                }
            }
            let found: i64 = invocation.invoke_async(&mut con).await.map_err(backend)?;
            if found == 0 {
                return Ok(None);
            }
            self.fetch(&mut con, id).await
        })
    }

    fn take_answer<'a>(&'a self, id: &'a str, key: &'a str) -> StoreFuture<'a, Option<Value>> {
        Box::pin(async move {
            let mut con = self.conn().await?;
            let answer: Option<String> = self.scripts[2]
                .key(self.redis.key(&["task", id, "answers"]))
                .arg(key)
                .invoke_async(&mut con)
                .await
                .map_err(backend)?;
            Ok(answer.map(|a| serde_json::from_str(&a).unwrap_or(Value::Null)))
        })
    }

    fn list<'a>(
        &'a self,
        owner: &'a str,
        after: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, Vec<TaskRecord>> {
        Box::pin(async move {
            let mut con = self.conn().await?;
            let ids = self.owned(&mut con, owner).await?;
            let start = match after {
                Some(cursor) => ids
                    .iter()
                    .position(|i| i == cursor)
                    .map_or(ids.len(), |p| p + 1),
                None => 0,
            };
            let mut page = Vec::new();
            for id in ids.iter().skip(start) {
                if page.len() >= limit {
                    break;
                }
                if let Some(task) = self.fetch(&mut con, id).await?
                    && task.owner == owner
                {
                    page.push(task);
                }
            }
            Ok(page)
        })
    }
}
