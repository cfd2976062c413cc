//! [`RateLimit`]: tool calls per principal (and per principal and tool where set), as token
//! buckets; a call over the limit is a retryable error that says when to retry.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::server::replicas::{Admission, Limit, ReplicaStore};
use crate::sync::lock;
use crate::tool::{IntoToolResult, ToolError, ToolResult};

use super::{Call, CallFuture, CallOutcome, Middleware, Next};

/// The `_meta` key of a refused call's result that holds how long to wait, in milliseconds.
pub const RETRY_AFTER_META_KEY: &str = "dev.mcp-tool/retryAfterMs";

/// The most principals whose buckets are kept (each has one bucket, and one per tool with a
/// limit of its own). Past it, the principals whose buckets have all refilled (which hold
/// nothing a fresh one would not) are dropped, and if none has, the one that called longest
/// ago: memory stays bounded whatever the number of clients.
const MAX_PRINCIPALS: usize = 100_000;

/// A number of calls per period: `100/1m` is a burst of 100 calls, refilled at 100 a minute.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    calls: u32,
    per: Duration,
}

impl Rate {
    /// `calls` per `per` (both more than zero, else `None`).
    pub fn new(calls: u32, per: Duration) -> Option<Rate> {
        (calls > 0 && !per.is_zero()).then_some(Rate { calls, per })
    }

    /// Reads `100/1m`, `5/1s`, `1000/1h` (a count, `/`, a duration such as `30s`).
    pub fn parse(text: &str) -> Result<Rate, RateError> {
        let bad = || RateError(text.to_owned());
        let (calls, per) = text.trim().split_once('/').ok_or_else(bad)?;
        let calls = calls.trim().parse::<u32>().map_err(|_| bad())?;
        let per = crate::server::tasks::parse_duration(per.trim()).ok_or_else(bad)?;
        Rate::new(calls, per).ok_or_else(bad)
    }

    /// Tokens refilled per second.
    fn refill(self) -> f64 {
        f64::from(self.calls) / self.per.as_secs_f64()
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.per.as_secs();
        if self.per.subsec_nanos() == 0 && secs.is_multiple_of(3600) {
            write!(f, "{} per {}h", self.calls, secs / 3600)
        } else if self.per.subsec_nanos() == 0 && secs.is_multiple_of(60) {
            write!(f, "{} per {}m", self.calls, secs / 60)
        } else {
            write!(f, "{} per {:?}", self.calls, self.per)
        }
    }
}

/// A rate that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a rate such as `100/1m` (calls, `/`, a duration), optionally followed by `,tool=5/1s` per tool"
)]
pub struct RateError(String);

/// A bucket: the tokens left when a token was last taken, and when it is full again.
struct Bucket {
    tokens: f64,
    at: Instant,
    full_at: Instant,
}

impl Bucket {
    /// The bucket once a token is taken from the `tokens` it has at `now`.
    fn after_taking(tokens: f64, rate: Rate, now: Instant) -> Bucket {
        let tokens = tokens - 1.0;
        let refill = (f64::from(rate.calls) - tokens) / rate.refill();
        Bucket {
            tokens,
            at: now,
            full_at: now.checked_add(seconds(refill)).unwrap_or(now + FAR),
        }
    }
}

/// A principal's buckets: the general one, and one per tool with a limit of its own.
#[derive(Default)]
struct Held {
    every: Option<Bucket>,
    tools: HashMap<String, Bucket>,
}

impl Held {
    /// When every bucket is full again.
    fn full_at(&self) -> Instant {
        let buckets = self.every.iter().chain(self.tools.values());
        buckets
            .map(|b| b.full_at)
            .max()
            .unwrap_or_else(Instant::now)
    }

    /// When a token was last taken.
    fn last_taken(&self) -> Option<Instant> {
        let buckets = self.every.iter().chain(self.tools.values());
        buckets.map(|b| b.at).max()
    }
}

/// Tool calls per principal: a burst of at most `calls`, refilled at `calls` per period; a
/// tool may have a limit of its own besides (`.tool(name, rate)`), counted per principal too.
/// A call over either limit is not run: its result is an error with the code `RATE_LIMITED`,
/// marked retryable, saying how long to wait (and `_meta["dev.mcp-tool/retryAfterMs"]`).
///
/// The principal is the caller's subject when an authenticator established one, else the
/// address it comes from (HTTP), else `local` (stdio): behind a proxy, give clients
/// credentials, or every client counts as the proxy's one address. `MCP_TOOL_RATE_LIMIT=100/1m`
/// (and `,tool=5/1s` per tool) switches it on for a server binary.
///
/// Replicas sharing state ([`Server::replica_store`](crate::server::Server::replica_store),
/// `MCP_TOOL_SHARED_STATE`) count in the store, one atomic step per call (GCRA on the
/// store's clock: a Redis script), so a limit of L admits L in all whichever replicas the
/// calls reach. The slack: none in the algorithm (it is the same token bucket, counted in one
/// place); waits are counted in microseconds. While the store does not answer (5 s at most
/// per call), each replica counts in its own buckets, so N replicas admit up to N × L for
/// that time. Without shared state the buckets are this process's.
///
/// ```
/// use std::time::Duration;
/// use mcp_tool::middleware::{Rate, RateLimit};
///
/// let limit = RateLimit::new(Rate::new(100, Duration::from_secs(60)).unwrap())
///     .tool("search", Rate::parse("5/1s").unwrap());
/// let server = mcp_tool::Server::new("limited", "1.0.0").middleware(limit);
/// ```
pub struct RateLimit {
    every: Option<Rate>,
    tools: HashMap<String, Rate>,
    buckets: Mutex<HashMap<String, Held>>,
    /// The replicas' store, when they share one: the limits are counted there.
    shared: OnceLock<Arc<dyn ReplicaStore>>,
}

impl RateLimit {
    /// At most `rate` tool calls per principal.
    pub fn new(rate: Rate) -> Self {
        RateLimit {
            every: Some(rate),
            tools: HashMap::new(),
            buckets: Mutex::new(HashMap::new()),
            shared: OnceLock::new(),
        }
    }

    /// No limit on calls in general: only on the tools given with [`RateLimit::tool`].
    pub fn tools_only() -> Self {
        RateLimit {
            every: None,
            tools: HashMap::new(),
            buckets: Mutex::new(HashMap::new()),
            shared: OnceLock::new(),
        }
    }

    /// At most `rate` calls of the tool `name` per principal, besides the general limit.
    #[must_use]
    pub fn tool(mut self, name: impl Into<String>, rate: Rate) -> Self {
        self.tools.insert(name.into(), rate);
        self
    }

    /// Reads `100/1m` (every tool), `100/1m,search=5/1s` (and `search` on its own), or
    /// `search=5/1s` (that tool only): the form of `MCP_TOOL_RATE_LIMIT`.
    pub fn parse(text: &str) -> Result<Self, RateError> {
        let mut limit = RateLimit::tools_only();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part.split_once('=') {
                Some((tool, rate)) if !tool.trim().is_empty() => {
                    limit = limit.tool(tool.trim(), Rate::parse(rate)?);
                }
                Some(_) => return Err(RateError(part.to_owned())),
                None if limit.every.is_none() => limit.every = Some(Rate::parse(part)?),
                None => return Err(RateError(text.to_owned())),
            }
        }
        if limit.every.is_none() && limit.tools.is_empty() {
            return Err(RateError(text.to_owned()));
        }
        Ok(limit)
    }

    /// Takes a token from each bucket the call counts against, or none if one is empty:
    /// then how long until it has one, and the rate it keeps. Nothing is allocated for a
    /// principal seen before.
    fn take(&self, principal: &str, tool: &str, now: Instant) -> Result<(), (Duration, Rate)> {
        let tool_rate = self.tools.get(tool).copied();
        let mut held = lock(&self.buckets);
        // First look, then take: a call refused by one limit costs nothing of the other.
        let known = held.get(principal);
        let tokens = |bucket: Option<&Bucket>, rate: Rate| {
            bucket.map_or(f64::from(rate.calls), |b| filled(b, rate, now))
        };
        let every = self
            .every
            .map(|rate| (tokens(known.and_then(|h| h.every.as_ref()), rate), rate));
        let own = tool_rate.map(|rate| (tokens(known.and_then(|h| h.tools.get(tool)), rate), rate));
        let wait = [every, own]
            .into_iter()
            .flatten()
            .filter(|(tokens, _)| *tokens < 1.0)
            .map(|(tokens, rate)| (seconds((1.0 - tokens) / rate.refill()), rate))
            .max_by_key(|(wait, _)| *wait);
        if let Some(wait) = wait {
            return Err(wait);
        }
        if !held.contains_key(principal) {
            if held.len() >= MAX_PRINCIPALS {
                make_room(&mut held, now);
            }
            held.insert(principal.to_owned(), Held::default());
        }
        let Some(entry) = held.get_mut(principal) else {
            return Ok(());
        };
        if let Some((left, rate)) = every {
            entry.every = Some(Bucket::after_taking(left, rate, now));
        }
        if let Some((left, rate)) = own {
            match entry.tools.get_mut(tool) {
                Some(bucket) => *bucket = Bucket::after_taking(left, rate, now),
                None => {
                    entry
                        .tools
                        .insert(tool.to_owned(), Bucket::after_taking(left, rate, now));
                }
            }
        }
        Ok(())
    }
}

/// A number of seconds as a duration, whatever the rate made of it (a rate of one call in
/// centuries gives waits no `Instant` can be moved by: they are capped).
fn seconds(secs: f64) -> Duration {
    Duration::try_from_secs_f64(secs.max(0.0)).map_or(FAR, |d| d.min(FAR))
}

/// The longest wait or refill counted: a year.
const FAR: Duration = Duration::from_secs(365 * 24 * 3600);

/// The tokens a bucket has at `now`.
fn filled(bucket: &Bucket, rate: Rate, now: Instant) -> f64 {
    let elapsed = now.saturating_duration_since(bucket.at).as_secs_f64();
    (bucket.tokens + elapsed * rate.refill()).min(f64::from(rate.calls))
}

/// Drops the principals whose buckets are all full again (they hold nothing a fresh one
/// would not); if none is, the eighth that took a token longest ago — so that a flood of new
/// principals costs one scan per eighth of the bound, not one per principal.
fn make_room(held: &mut HashMap<String, Held>, now: Instant) {
    let before = held.len();
    held.retain(|_, h| h.full_at() > now);
    if held.len() < before {
        return;
    }
    let mut ages: Vec<(Option<Instant>, &String)> =
        held.iter().map(|(k, h)| (h.last_taken(), k)).collect();
    let cut = (ages.len() / 8).max(1);
    ages.select_nth_unstable(cut - 1);
    let oldest: Vec<String> = ages[..cut].iter().map(|(_, k)| (*k).clone()).collect();
    for key in oldest {
        held.remove(&key);
    }
}

impl RateLimit {
    /// The limits a call of `tool` by `principal` counts against, with their rates, as the
    /// store keeps them: `{principal}` and `{principal}:tool:{tool}` (one Redis Cluster slot).
    fn limits(&self, principal: &str, tool: &str) -> Vec<(Limit, Rate)> {
        let every = self.every.map(|rate| (format!("{{{principal}}}"), rate));
        let own = self
            .tools
            .get(tool)
            .map(|rate| (format!("{{{principal}}}:tool:{tool}"), *rate));
        every
            .into_iter()
            .chain(own)
            .map(|(key, rate)| {
                let limit = Limit {
                    key,
                    calls: rate.calls,
                    per: rate.per,
                };
                (limit, rate)
            })
            .collect()
    }

    /// Takes from the shared limits; from this process's buckets while the store fails.
    async fn take_shared(
        &self,
        store: &Arc<dyn ReplicaStore>,
        principal: &str,
        tool: &str,
    ) -> Result<(), (Duration, Rate)> {
        let limits = self.limits(principal, tool);
        let (keys, rates): (Vec<Limit>, Vec<Rate>) = limits.into_iter().unzip();
        match tokio::time::timeout(STORE_WAIT, store.admit(&keys)).await {
            Ok(Ok(Admission::Admitted)) => Ok(()),
            Ok(Ok(Admission::Refused { which, wait })) => match rates.get(which) {
                Some(rate) => Err((wait.min(FAR), *rate)),
                None => Ok(()),
            },
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "rate limits counted by this replica alone");
                self.take(principal, tool, Instant::now())
            }
            Err(_) => {
                tracing::warn!(
                    "the shared state did not answer within 5 s: rate limits counted by this replica alone"
                );
                self.take(principal, tool, Instant::now())
            }
        }
    }
}

/// How long a call waits for the store to count it.
const STORE_WAIT: Duration = Duration::from_secs(5);

impl Middleware for RateLimit {
    // Tool calls only: other requests cost the server little, and a client that lists or
    // reads must not lose the calls it came for.
    fn call<'a>(&'a self, call: Call<'a>, next: Next<'a>) -> CallFuture<'a> {
        if let Some(store) = self.shared.get() {
            return Box::pin(async move {
                match self
                    .take_shared(store, &call.principal(), call.tool())
                    .await
                {
                    Ok(()) => next.run(call).await,
                    Err((wait, rate)) => CallOutcome::from(refused(call.tool(), wait, rate)),
                }
            });
        }
        match self.take(&call.principal(), call.tool(), Instant::now()) {
            Ok(()) => next.run(call),
            Err((wait, rate)) => {
                let result = refused(call.tool(), wait, rate);
                Box::pin(std::future::ready(CallOutcome::from(result)))
            }
        }
    }

    fn shared_state(&self, store: &Arc<dyn ReplicaStore>) {
        let _ = self.shared.set(store.clone());
    }
}

/// The result of a call over the limit.
fn refused(tool: &str, wait: Duration, rate: Rate) -> ToolResult {
    // Whole milliseconds, rounded up: retrying at once after them succeeds.
    let millis = u64::try_from(wait.as_micros().div_ceil(1000)).unwrap_or(u64::MAX);
    let mut result = IntoToolResult::into_tool_result(
        ToolError::new(
            "RATE_LIMITED",
            format!("too many calls: this client may call `{tool}` at most {rate}"),
        )
        .suggestion(format!(
            "wait {:.1} s, then call again",
            millis as f64 / 1000.0
        ))
        .retryable(true),
    );
    result
        .meta
        .get_or_insert_with(Map::new)
        .insert(RETRY_AFTER_META_KEY.to_owned(), Value::from(millis));
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_limits_are_read_or_refused_by_name() {
        assert_eq!(
            Rate::parse("100/1m").unwrap(),
            Rate::new(100, Duration::from_secs(60)).unwrap()
        );
        for bad in ["100", "0/1m", "5/0s", "x/1m", "5/soon", ""] {
            assert!(Rate::parse(bad).is_err(), "{bad}");
        }
        let limit = RateLimit::parse("100/1m, search=5/1s").unwrap();
        assert_eq!(limit.every, Rate::new(100, Duration::from_secs(60)));
        assert_eq!(
            limit.tools["search"],
            Rate::new(5, Duration::from_secs(1)).unwrap()
        );
        let only = RateLimit::parse("search=5/1s").unwrap();
        assert!(only.every.is_none());
        for bad in ["", "1/1s,2/1s", "=5/1s", "search=5"] {
            let error = RateLimit::parse(bad).err().map(|e| e.to_string());
            assert!(error.is_some(), "{bad}");
        }
    }

    #[test]
    fn a_burst_is_refused_past_its_size_and_let_through_once_refilled() {
        let limit = RateLimit::new(Rate::new(3, Duration::from_secs(3)).unwrap());
        let t0 = Instant::now();
        for _ in 0..3 {
            limit.take("alice", "add", t0).unwrap();
        }
        let (wait, _) = limit.take("alice", "add", t0).unwrap_err();
        assert!(
            wait > Duration::from_millis(900) && wait <= Duration::from_secs(1),
            "{wait:?}"
        );
        // Another principal has a bucket of its own.
        limit.take("bob", "add", t0).unwrap();
        // One token back after a second.
        limit.take("alice", "add", t0 + wait).unwrap();
        assert!(limit.take("alice", "add", t0 + wait).is_err());
    }

    #[test]
    fn a_tools_own_limit_counts_besides_the_general_one_and_a_refusal_takes_nothing() {
        let limit = RateLimit::new(Rate::new(10, Duration::from_secs(10)).unwrap())
            .tool("search", Rate::new(1, Duration::from_secs(10)).unwrap());
        let t0 = Instant::now();
        limit.take("alice", "search", t0).unwrap();
        let (wait, rate) = limit.take("alice", "search", t0).unwrap_err();
        assert_eq!(rate.calls, 1);
        assert!(wait > Duration::from_secs(9), "{wait:?}");
        // The refused search took nothing of the general bucket: 9 more calls of others.
        for _ in 0..9 {
            limit.take("alice", "add", t0).unwrap();
        }
        assert!(limit.take("alice", "add", t0).is_err());
    }

    #[test]
    fn buckets_stay_bounded_whatever_the_number_of_principals() {
        let limit = RateLimit::new(Rate::new(1, Duration::from_secs(60)).unwrap());
        let t0 = Instant::now();
        for i in 0..MAX_PRINCIPALS + 10 {
            limit.take(&format!("address {i}"), "add", t0).unwrap();
        }
        assert!(lock(&limit.buckets).len() <= MAX_PRINCIPALS);
    }

    #[test]
    fn a_rate_of_one_call_in_ages_waits_at_most_a_year_and_never_panics() {
        let limit = RateLimit::new(Rate::new(1, Duration::from_secs(u64::MAX / 2)).unwrap());
        let t0 = Instant::now();
        limit.take("alice", "add", t0).unwrap();
        let (wait, _) = limit.take("alice", "add", t0).unwrap_err();
        assert_eq!(wait, FAR);
    }

    #[test]
    fn the_refusal_says_when_to_retry() {
        let result = refused(
            "add",
            Duration::from_micros(1_200_001),
            Rate::parse("2/1s").unwrap(),
        );
        assert!(result.is_error);
        assert_eq!(result.meta.as_ref().unwrap()[RETRY_AFTER_META_KEY], 1201);
        let text = serde_json::to_string(&result.content).unwrap();
        assert!(
            text.contains("RATE_LIMITED") && text.contains("wait 1.2 s"),
            "{text}"
        );
        assert!(text.contains("at most 2 per 1s"), "{text}");
    }

    #[tokio::test]
    async fn replicas_sharing_a_store_count_one_limit() {
        let store: Arc<dyn ReplicaStore> =
            Arc::new(crate::server::replicas::MemoryReplicaStore::default());
        let replicas: Vec<RateLimit> = (0..3)
            .map(|_| {
                let limit = RateLimit::parse("5/1m,search=2/1m").unwrap();
                limit.shared_state(&store);
                limit
            })
            .collect();
        let mut admitted = 0;
        for i in 0..15 {
            let limit = &replicas[i % 3];
            let store = limit.shared.get().unwrap();
            admitted += usize::from(limit.take_shared(store, "alice", "add").await.is_ok());
        }
        assert_eq!(admitted, 5);
        // Bob has his own; a tool's own limit refuses with its rate.
        let store = replicas[0].shared.get().unwrap();
        for limit in &replicas[..2] {
            limit.take_shared(store, "bob", "search").await.unwrap();
        }
        let (wait, rate) = replicas[2]
            .take_shared(store, "bob", "search")
            .await
            .unwrap_err();
        assert_eq!(rate, Rate::parse("2/1m").unwrap());
        assert!(wait > Duration::from_secs(29), "{wait:?}");
        // Nothing was counted in any process's own buckets.
        assert!(replicas.iter().all(|r| lock(&r.buckets).is_empty()));
    }
}
