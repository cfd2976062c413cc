//! Which of the connection runtimes serves a connection (`--threads N`,
//! [`HttpConfig::with_connection_runtimes`](crate::transport::http::HttpConfig::with_connection_runtimes)).
//!
//! A runtime per CPU pays when the CPUs are the server's: each serves its share of the
//! connections without a hand-off. When other processes keep some of those CPUs busy (a proxy,
//! a database, a load generator on the same small machine), a runtime more than the CPUs left
//! over only takes turns with them: every call then waits for a CPU, and the server spends more
//! CPU a call, not less. So the runtimes in use follow the CPUs left over: every 50 ms the
//! server reads how busy its CPUs were (`/proc/stat`, the CPUs it may run on) and how much of
//! that was its own (`/proc/self/stat`). When the others' share leaves fewer CPUs than runtimes
//! in use, one runtime fewer is used; when it leaves more, one more. A connection moves only
//! between two requests, with nothing of the next one read: a connection on a runtime no longer
//! in use moves to the least loaded one in use, and one on a runtime holding two more
//! connections than another in use moves there. New connections go to the least loaded runtime
//! in use, runtimes as loaded as each other in turn.
//!
//! Where the CPUs' use cannot be read (not Linux, no `/proc`) or is not the server's to judge (a
//! CPU quota below the CPUs it may run on: the others' use is then the host's, not a share of
//! the server's CPUs), every runtime stays in use.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::sync::{Notify, watch};

/// How often the CPUs' use is read while connections are open.
const SAMPLE: Duration = Duration::from_millis(50);

/// The runtimes connections are served on, and how many of them are in use.
pub(crate) struct Placement {
    /// `[0]` the accept loop's own, then the others.
    handles: Vec<Handle>,
    /// The connections on each.
    counts: Vec<AtomicUsize>,
    /// How many runtimes, from the first, are in use.
    in_use: AtomicUsize,
    /// Told when a connection comes to a server that had none.
    opened: Notify,
    /// Where the next new connection's search starts: runtimes as loaded as each other take
    /// new connections in turn.
    turn: AtomicUsize,
}

impl Placement {
    /// The accept loop's runtime and `others`, all in use.
    pub(crate) fn new(others: Vec<Handle>) -> Arc<Placement> {
        let mut handles = vec![Handle::current()];
        handles.extend(others);
        let counts = handles.iter().map(|_| AtomicUsize::new(0)).collect();
        Arc::new(Placement {
            in_use: AtomicUsize::new(handles.len()),
            handles,
            counts,
            opened: Notify::new(),
            turn: AtomicUsize::new(0),
        })
    }

    /// How many runtimes there are.
    pub(crate) fn len(&self) -> usize {
        self.handles.len()
    }

    /// The runtime numbered `at`.
    pub(super) fn handle(&self, at: usize) -> &Handle {
        &self.handles[at]
    }

    /// The runtime a new connection goes to (counted on it): the least loaded in use, those
    /// as loaded as each other in turn.
    pub(super) fn place(&self) -> usize {
        let at = self.least_from(self.turn.fetch_add(1, Ordering::Relaxed));
        self.counts[at].fetch_add(1, Ordering::Relaxed);
        if self.connections() == 1 {
            self.opened.notify_one();
        }
        at
    }

    /// A connection on runtime `at` ended.
    pub(super) fn left(&self, at: usize) {
        self.counts[at].fetch_sub(1, Ordering::Relaxed);
    }

    /// Where a connection on runtime `at`, between two requests, is to move, if anywhere
    /// (counted there already).
    pub(super) fn moving(&self, at: usize) -> Option<usize> {
        if self.handles.len() == 1 {
            return None;
        }
        let least = self.least_from(0);
        let here = self.counts[at].load(Ordering::Relaxed);
        let there = self.counts[least].load(Ordering::Relaxed);
        let go = at >= self.in_use() || there + 1 < here;
        if !go || least == at {
            return None;
        }
        self.counts[at].fetch_sub(1, Ordering::Relaxed);
        self.counts[least].fetch_add(1, Ordering::Relaxed);
        Some(least)
    }

    /// Uses the first `n` runtimes, as [`follow`](Self::follow) would.
    #[cfg(test)]
    pub(super) fn use_only(&self, n: usize) {
        self.in_use.store(n, Ordering::Relaxed);
    }

    /// How many runtimes are in use (at least one).
    fn in_use(&self) -> usize {
        self.in_use
            .load(Ordering::Relaxed)
            .clamp(1, self.handles.len())
    }

    /// The runtime in use holding the fewest connections: of those, the first from the one
    /// numbered `start` (counted round the runtimes in use).
    fn least_from(&self, start: usize) -> usize {
        let in_use = self.in_use();
        (0..in_use)
            .map(|i| (start + i) % in_use)
            .min_by_key(|&i| self.counts[i].load(Ordering::Relaxed))
            .unwrap_or(0)
    }

    fn connections(&self) -> usize {
        self.counts.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    /// Follows the CPUs left over by other processes until the server stops (see the module's
    /// documentation); returns at once where their use cannot be read.
    pub(crate) async fn follow(self: Arc<Self>, mut stop: watch::Receiver<bool>) {
        let Some(cpus) = Cpus::of_process(self.len()) else {
            return;
        };
        let mut last = None;
        // The direction the last sample pointed to: a change takes two in a row.
        let mut leaning = 0_i8;
        loop {
            if self.connections() == 0 {
                // Nothing to place: read again from the next connection on.
                tokio::select! {
                    () = self.opened.notified() => {}
                    _ = stop.wait_for(|s| *s) => return,
                }
                last = cpus.read();
                leaning = 0;
            }
            tokio::select! {
                () = tokio::time::sleep(SAMPLE) => {}
                _ = stop.wait_for(|s| *s) => return,
            }
            let Some(now) = cpus.read() else {
                // No longer readable: every runtime in use again, as where it never was.
                self.in_use.store(self.len(), Ordering::Relaxed);
                return;
            };
            let Some(earlier) = last.replace(now) else {
                continue;
            };
            let others = now.since(&earlier).others(cpus.listed.len());
            let in_use = self.in_use();
            let step = step(self.len(), in_use, others);
            if step != 0 && step == leaning {
                let next = in_use
                    .saturating_add_signed(isize::from(step))
                    .clamp(1, self.len());
                self.in_use.store(next, Ordering::Relaxed);
                tracing::debug!(
                    in_use = next,
                    runtimes = self.len(),
                    others = format_args!("{others:.2}"),
                    "connection runtimes in use changed with the CPUs other processes keep busy"
                );
                leaning = 0;
            } else {
                leaning = step;
            }
        }
    }
}

/// One runtime fewer (-1), one more (1) or as many (0): `runtimes` in all, `in_use` of them in
/// use, `others` CPUs' worth kept busy by other processes. A margin either way keeps the choice
/// from going back and forth on a share near the line.
fn step(runtimes: usize, in_use: usize, others: f64) -> i8 {
    #[allow(clippy::cast_precision_loss)]
    let (runtimes, in_use) = (runtimes as f64, in_use as f64);
    let left_over = runtimes - others;
    if left_over < in_use - 0.6 && in_use > 1.0 {
        -1
    } else if left_over > in_use + 0.6 && in_use < runtimes {
        1
    } else {
        0
    }
}

/// The CPUs the process may run on, read from `/proc`.
struct Cpus {
    /// Their numbers, as `/proc/stat` names them (`cpuN`).
    listed: Vec<usize>,
}

/// The CPUs' use at one moment, in clock ticks.
#[derive(Clone, Copy)]
struct Reading {
    /// Every tick of the CPUs, busy or idle.
    total: u64,
    /// The busy ones.
    busy: u64,
    /// The process's own (user and system).
    own: u64,
}

impl Reading {
    fn since(&self, earlier: &Reading) -> Reading {
        Reading {
            total: self.total.saturating_sub(earlier.total),
            busy: self.busy.saturating_sub(earlier.busy),
            own: self.own.saturating_sub(earlier.own),
        }
    }

    /// How many CPUs' worth (of `cpus`) other processes kept busy over this reading's span.
    fn others(&self, cpus: usize) -> f64 {
        if self.total == 0 || cpus == 0 {
            return 0.0;
        }
        #[allow(clippy::cast_precision_loss)]
        let per_cpu = self.total as f64 / cpus as f64;
        #[allow(clippy::cast_precision_loss)]
        let others = self.busy.saturating_sub(self.own) as f64;
        others / per_cpu
    }
}

impl Cpus {
    /// The CPUs of this process when it may judge their use: Linux's `/proc` readable, and as
    /// many CPUs allowed as `runtimes` (no CPU quota below them).
    fn of_process(runtimes: usize) -> Option<Cpus> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let list = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
        let listed = cpu_list(list.trim())?;
        (listed.len() == runtimes && runtimes > 1).then_some(Cpus { listed })
    }

    /// The CPUs' use and the process's own, now.
    fn read(&self) -> Option<Reading> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let own = std::fs::read_to_string("/proc/self/stat").ok()?;
        reading(&stat, &own, &self.listed)
    }
}

/// The reading of `stat` (`/proc/stat`) for the CPUs `listed`, with the process's own time from
/// `own` (`/proc/self/stat`).
fn reading(stat: &str, own: &str, listed: &[usize]) -> Option<Reading> {
    let (mut total, mut busy) = (0_u64, 0_u64);
    let mut found = 0;
    for line in stat.lines() {
        let Some(rest) = line.strip_prefix("cpu") else {
            continue;
        };
        let Some((number, ticks)) = rest.split_once(' ') else {
            continue;
        };
        let Ok(number) = number.parse::<usize>() else {
            // The line of all CPUs together.
            continue;
        };
        if !listed.contains(&number) {
            continue;
        }
        // user nice system idle iowait irq softirq steal (guest time is in user's already).
        let ticks: Vec<u64> = ticks
            .split_ascii_whitespace()
            .take(8)
            .map(|t| t.parse().ok())
            .collect::<Option<_>>()?;
        if ticks.len() < 5 {
            return None;
        }
        let all: u64 = ticks.iter().sum();
        total += all;
        busy += all - ticks[3] - ticks[4];
        found += 1;
    }
    if found != listed.len() {
        return None;
    }
    // After the command's name (which may hold spaces and parentheses): utime and stime are
    // the 14th and 15th fields, the 12th and 13th after it.
    let fields: Vec<&str> = own.rsplit_once(')')?.1.split_ascii_whitespace().collect();
    let user: u64 = fields.get(11)?.parse().ok()?;
    let system: u64 = fields.get(12)?.parse().ok()?;
    Some(Reading {
        total,
        busy,
        own: user + system,
    })
}

/// A CPU list as the kernel writes one (`0-3,8,10-11`).
fn cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in text.split(',') {
        match part.split_once('-') {
            Some((from, to)) => {
                let (from, to) = (from.parse::<usize>().ok()?, to.parse::<usize>().ok()?);
                if to < from || to - from > 4096 {
                    return None;
                }
                cpus.extend(from..=to);
            }
            None => cpus.push(part.parse().ok()?),
        }
    }
    Some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtimes_in_use_follow_the_cpus_left_over() {
        // Two runtimes, a load generator on a CPU: one runtime; idle again: two.
        assert_eq!(step(2, 2, 0.9), -1);
        assert_eq!(step(2, 2, 0.7), -1);
        assert_eq!(step(2, 1, 0.9), 0);
        assert_eq!(step(2, 1, 0.5), 0);
        assert_eq!(step(2, 1, 0.2), 1);
        assert_eq!(step(2, 2, 0.5), 0);
        // Never fewer than one, never more than there are.
        assert_eq!(step(2, 1, 2.0), 0);
        assert_eq!(step(4, 4, 0.0), 0);
        assert_eq!(step(8, 3, 2.0), 1);
        assert_eq!(step(8, 8, 3.0), -1);
    }

    #[test]
    fn the_cpus_use_is_read_from_proc() {
        let stat = "cpu  10 0 10 80 0 0 0 0 0 0\n\
                    cpu0 60 0 20 100 10 5 5 0 0 0\n\
                    cpu1 1 0 1 500 0 0 0 0 0 0\n\
                    cpu2 30 0 10 60 0 0 0 0 0 0\n\
                    intr 1 2 3\n";
        let own = "4242 (a (b) c) S 1 2 3 4 5 6 7 8 9 10 25 15 0 0 20 0";
        let two = reading(stat, own, &[0, 2]).unwrap();
        assert_eq!(two.total, 200 + 100);
        assert_eq!(two.busy, 90 + 40);
        assert_eq!(two.own, 40);
        // 130 busy ticks of 300 on two CPUs, 40 of them the process's: 0.6 CPUs' worth.
        assert!((two.others(2) - 0.6).abs() < 1e-9);
        assert!(reading(stat, own, &[0, 3]).is_none(), "a CPU not listed");
        assert!(reading(stat, "4242 (x) S 1", &[0]).is_none());
        assert_eq!(cpu_list("0-3,8,10-11"), Some(vec![0, 1, 2, 3, 8, 10, 11]));
        assert_eq!(cpu_list("3-1"), None);
        assert_eq!(cpu_list(""), None);
    }

    #[tokio::test]
    async fn connections_go_to_the_least_loaded_runtime_in_use_and_move_off_one_not_in_use() {
        let other = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let placement = Placement::new(vec![other.handle().clone()]);
        let placed: Vec<usize> = (0..4).map(|_| placement.place()).collect();
        assert_eq!(placed, [0, 1, 0, 1]);
        assert_eq!(placement.moving(0), None, "two and two");
        // One runtime in use: the other's connections move to it, one at a time.
        placement.in_use.store(1, Ordering::Relaxed);
        assert_eq!(placement.place(), 0);
        assert_eq!(placement.moving(0), None);
        assert_eq!(placement.moving(1), Some(0));
        assert_eq!(placement.moving(1), Some(0));
        assert_eq!(placement.connections(), 5);
        assert_eq!(placement.counts[1].load(Ordering::Relaxed), 0);
        // Both again: connections leave the crowded one until they are even.
        placement.in_use.store(2, Ordering::Relaxed);
        let moved = (0..5).filter_map(|_| placement.moving(0)).count();
        assert_eq!(moved, 2);
        assert_eq!(placement.counts[0].load(Ordering::Relaxed), 3);
        placement.left(0);
        assert_eq!(placement.connections(), 4);
        other.shutdown_background();
    }
}
