//! Where a synchronous tool runs.
//!
//! A plain `fn` tool might block (file or network I/O, a lock, a long computation), so it must
//! not run on an async worker blindly; but sending every call to the blocking pool costs two
//! thread hand-offs, far more than a quick tool's own work. So each synchronous tool has a
//! [`SyncPolicy`]: its calls run on the blocking pool until [`PROBATION`] consecutive calls
//! each finished within [`QUICK`] (Tokio's guidance for the time between two `.await`s); from
//! then on they run on the worker that handles the call. A call on the worker that takes
//! [`TOO_SLOW`] or more sends the tool back to the blocking pool for good (with a warning).
//! `#[tool(blocking)]` keeps a tool on the blocking pool from the start.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use std::any::Any;

use crate::tool::logging;
use crate::tool::result::ToolResult;

/// Consecutive quick calls on the blocking pool after which a tool runs on the worker.
const PROBATION: u32 = 16;
/// A call at most this long is quick.
const QUICK: Duration = Duration::from_micros(100);
/// A call on the worker this long sends its tool back to the blocking pool for good.
const TOO_SLOW: Duration = Duration::from_millis(1);
/// The state of a tool that always runs on the blocking pool.
const BLOCKING: u32 = u32::MAX;

/// Where one synchronous tool's calls run. The state is the number of consecutive quick calls
/// seen on the blocking pool (up to 16, which means "on the worker"), or `u32::MAX` for a tool
/// that stays on the blocking pool.
#[derive(Debug)]
pub struct SyncPolicy(AtomicU32);

impl SyncPolicy {
    /// On the blocking pool until the tool has shown it is quick.
    #[must_use]
    pub const fn adaptive() -> Self {
        SyncPolicy(AtomicU32::new(0))
    }

    /// Always on the blocking pool (`#[tool(blocking)]`).
    #[must_use]
    pub const fn blocking() -> Self {
        SyncPolicy(AtomicU32::new(BLOCKING))
    }

    /// Whether the next call runs on the worker.
    pub(crate) fn inline(&self) -> bool {
        self.0.load(Ordering::Relaxed) == PROBATION
    }

    /// Whether the tool runs on the blocking pool for good.
    #[cfg(test)]
    fn is_blocking(&self) -> bool {
        self.0.load(Ordering::Relaxed) == BLOCKING
    }

    /// Counts a call that ran on the blocking pool.
    fn ran_offloaded(&self, took: Duration) {
        let _ = self
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| match n {
                BLOCKING | PROBATION => None,
                n if took <= QUICK => Some(n + 1),
                0 => None,
                _ => Some(0),
            });
    }

    /// Counts a call that ran on the worker; true when it was the one that was too slow.
    fn ran_inline(&self, took: Duration) -> bool {
        took >= TOO_SLOW && self.0.swap(BLOCKING, Ordering::Relaxed) != BLOCKING
    }
}

/// Runs a synchronous tool body where its policy says, timing it.
pub async fn run_sync<F>(policy: &'static SyncPolicy, body: F) -> ToolResult
where
    F: FnOnce() -> ToolResult + Send + 'static,
{
    if policy.inline() {
        let started = Instant::now();
        let result = body();
        let took = started.elapsed();
        if policy.ran_inline(took) {
            let ctx = logging::current();
            tracing::warn!(
                tool = ctx.as_ref().map_or("?", |c| c.tool()),
                ?took,
                "a quick synchronous tool ran long on an async worker: its calls run on the \
                 blocking pool from now on (mark it `#[tool(blocking)]` if it may block)"
            );
        }
        return result;
    }
    let ctx = logging::current();
    let run = move || {
        let started = Instant::now();
        let result = logging::in_blocking(ctx, body);
        policy.ran_offloaded(started.elapsed());
        result
    };
    match tokio::task::spawn_blocking(run).await {
        Ok(result) => result,
        Err(e) => panic_result(e.try_into_panic().ok()),
    }
}

/// The result of a tool that panicked: the model sees `isError`, the server keeps serving.
pub(crate) fn panic_result(panic: Option<Box<dyn Any + Send>>) -> ToolResult {
    let why = panic
        .as_ref()
        .and_then(|p| {
            p.downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| p.downcast_ref::<String>().cloned())
        })
        .unwrap_or_else(|| "the tool panicked".to_owned());
    // A string value (escaped by the formatter): the message may quote a client's input.
    tracing::error!(panic = why.as_str(), "tool panicked");
    ToolResult {
        internal_error: true,
        ..ToolResult::error(format!("internal error: the tool panicked: {why}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_calls_earn_the_worker_and_a_slow_one_loses_it() {
        let p = SyncPolicy::adaptive();
        for _ in 0..PROBATION - 1 {
            p.ran_offloaded(Duration::from_micros(5));
        }
        assert!(!p.inline());
        // A slow call on the pool starts the count again.
        p.ran_offloaded(Duration::from_millis(2));
        assert!(!p.inline());
        for _ in 0..PROBATION {
            p.ran_offloaded(Duration::from_micros(5));
        }
        assert!(p.inline());
        assert!(!p.ran_inline(Duration::from_micros(500)));
        assert!(p.inline());
        assert!(p.ran_inline(Duration::from_millis(3)));
        assert!(p.is_blocking());
        // Reported once.
        assert!(!p.ran_inline(Duration::from_millis(3)));
        p.ran_offloaded(Duration::from_micros(1));
        assert!(p.is_blocking() && !p.inline());
    }

    #[test]
    fn blocking_tools_never_leave_the_pool() {
        let p = SyncPolicy::blocking();
        for _ in 0..100 {
            p.ran_offloaded(Duration::ZERO);
        }
        assert!(p.is_blocking() && !p.inline());
    }
}
