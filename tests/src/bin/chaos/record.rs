//! What the clients saw: every operation with its start time and outcome, the changes raised
//! and heard, the rate-limited calls admitted.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Instant;

/// At most this many operations are kept (a full run makes a few hundred thousand); past it,
/// they are counted only.
const MAX_OPS: usize = 4_000_000;

/// How an operation ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Answered, and the answer checked out.
    Ok,
    /// Refused as it should be (a call over the rate limit): neither success nor error.
    Refused,
    /// A failure the client saw and can retry: the kind (an HTTP status, a JSON-RPC error, a
    /// tool's error code, a connection that broke, a timeout).
    Error(String),
    /// Acknowledged, then never obtainable: a task that never finished or vanished, a kept
    /// result no replica can read.
    Lost(String),
    /// An answer given twice or to the wrong call: another call's token, one task id for two
    /// calls, a task that answers two ways.
    Doubled(String),
}

/// One operation: its class (which client), when it started and ended (seconds since the run
/// began), how it ended.
#[derive(Debug, Clone)]
pub(crate) struct Op {
    pub(crate) class: &'static str,
    pub(crate) at: f64,
    /// When the client learned the outcome.
    pub(crate) end: f64,
    pub(crate) outcome: Outcome,
}

#[derive(Default)]
struct Kept {
    ops: Vec<Op>,
    dropped: u64,
    /// When a change was raised (a `touch` answered).
    touches: Vec<f64>,
    /// When a listen stream heard one.
    heard: Vec<f64>,
    /// When a rate-limited call was admitted.
    admitted: Vec<f64>,
}

/// The run's record.
pub(crate) struct Record {
    t0: Instant,
    kept: Mutex<Kept>,
    task_ids: Mutex<HashSet<String>>,
}

impl Record {
    pub(crate) fn new() -> Record {
        Record {
            t0: Instant::now(),
            kept: Mutex::new(Kept::default()),
            task_ids: Mutex::new(HashSet::new()),
        }
    }

    /// Seconds since the run began.
    pub(crate) fn now(&self) -> f64 {
        self.t0.elapsed().as_secs_f64()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn op(&self, class: &'static str, at: f64, outcome: Outcome) {
        let end = self.now();
        let mut kept = self.lock();
        if kept.ops.len() < MAX_OPS {
            kept.ops.push(Op {
                class,
                at,
                end,
                outcome,
            });
        } else {
            kept.dropped += 1;
        }
    }

    pub(crate) fn touched(&self, at: f64) {
        let mut kept = self.lock();
        if kept.touches.len() < MAX_OPS {
            kept.touches.push(at);
        }
    }

    pub(crate) fn heard(&self, at: f64) {
        let mut kept = self.lock();
        if kept.heard.len() < MAX_OPS {
            kept.heard.push(at);
        }
    }

    pub(crate) fn admitted(&self, at: f64) {
        let mut kept = self.lock();
        if kept.admitted.len() < MAX_OPS {
            kept.admitted.push(at);
        }
    }

    /// Whether `id` is a task id not seen before (and remembers it).
    pub(crate) fn new_task(&self, id: &str) -> bool {
        self.task_ids
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id.to_owned())
    }

    /// Whether class `class` has had a successful operation.
    pub(crate) fn succeeded(&self, class: &str) -> bool {
        self.lock()
            .ops
            .iter()
            .any(|o| o.class == class && o.outcome == Outcome::Ok)
    }

    /// Everything recorded: the operations (and how many were not kept), the changes raised,
    /// heard, and the admitted rate-limited calls.
    pub(crate) fn take(&self) -> (Vec<Op>, u64, Vec<f64>, Vec<f64>, Vec<f64>) {
        let mut kept = self.lock();
        let kept = std::mem::take(&mut *kept);
        (
            kept.ops,
            kept.dropped,
            kept.touches,
            kept.heard,
            kept.admitted,
        )
    }
}
