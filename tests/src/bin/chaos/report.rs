//! The report: per phase (no fault, then each fault in turn) the errors the clients saw by
//! kind, what was lost or doubled, and how long the clients took to be served fully again.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::load::{KEPT, LISTEN_STREAMS};
use crate::record::{Op, Outcome};

/// How many of each (class, kind).
type Counts = BTreeMap<(String, String), usize>;

/// One phase of the run.
pub(crate) struct Phase {
    pub(crate) name: String,
    /// When it began (the fault injected), seconds since the run began.
    pub(crate) start: f64,
    /// When the fault ended (its heal done); `None` for the baseline.
    pub(crate) healed: Option<f64>,
    /// When the next phase began, or the load stopped.
    pub(crate) end: f64,
}

/// Everything the run recorded, and how to read it.
pub(crate) struct Run {
    pub(crate) phases: Vec<Phase>,
    /// Faults not injected, and why.
    pub(crate) skipped: Vec<(String, String)>,
    pub(crate) ops: Vec<Op>,
    pub(crate) dropped: u64,
    pub(crate) touches: Vec<f64>,
    pub(crate) heard: Vec<f64>,
    pub(crate) admitted: Vec<f64>,
    /// Seconds per window of the recovery measure.
    pub(crate) window: f64,
    pub(crate) rate_limit: u32,
}

/// The verdict: the report's text, and whether anything counted as lost or doubled.
pub(crate) struct Verdict {
    pub(crate) text: String,
    pub(crate) failed: bool,
}

fn inside(at: f64, start: f64, end: f64) -> bool {
    at >= start && at < end
}

/// `kind ×n` for each, most frequent first.
fn counted(map: &Counts) -> String {
    if map.is_empty() {
        return "none".into();
    }
    let mut rows: Vec<_> = map.iter().collect();
    rows.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    rows.iter()
        .map(|((class, kind), n)| format!("{class}: {kind} ×{n}"))
        .collect::<Vec<_>>()
        .join("; ")
}

impl Run {
    /// The operations started in `[start, end)`.
    fn ops_in(&self, start: f64, end: f64) -> impl Iterator<Item = &Op> {
        self.ops.iter().filter(move |o| inside(o.at, start, end))
    }

    /// The operations whose outcome the clients learned in `[start, end)`.
    fn ended_in(&self, start: f64, end: f64) -> impl Iterator<Item = &Op> {
        self.ops.iter().filter(move |o| inside(o.end, start, end))
    }

    /// The errors the clients saw in `[start, end)` by class and kind, and the lost and
    /// doubled.
    fn tally(&self, start: f64, end: f64) -> (Counts, Counts, Counts) {
        let (mut errors, mut lost, mut doubled) =
            (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
        for op in self.ended_in(start, end) {
            let (map, what) = match &op.outcome {
                Outcome::Error(kind) => (&mut errors, kind),
                Outcome::Lost(what) => (&mut lost, what),
                Outcome::Doubled(what) => (&mut doubled, what),
                Outcome::Ok | Outcome::Refused => continue,
            };
            *map.entry((op.class.to_owned(), what.clone())).or_insert(0) += 1;
        }
        (errors, lost, doubled)
    }

    /// Seconds from `healed` to the first window in which at least one operation started and
    /// every one that did succeeded (the classes in `failing` aside: those with errors without
    /// any fault); `None` when no window before `end` is so.
    fn recovery(&self, healed: f64, end: f64, failing: &BTreeSet<&str>) -> Option<f64> {
        let mut from = healed;
        while from + self.window <= end {
            let to = from + self.window;
            let mut started = 0;
            let mut clean = true;
            for op in self.ops_in(from, to).filter(|o| !failing.contains(o.class)) {
                match &op.outcome {
                    Outcome::Ok => started += 1,
                    Outcome::Refused => {}
                    _ => clean = false,
                }
            }
            if clean && started > 0 {
                return Some(from - healed);
            }
            from = to;
        }
        None
    }

    pub(crate) fn verdict(&self) -> Verdict {
        let mut text = String::new();
        let Some(baseline) = self.phases.first() else {
            return Verdict {
                text: "no phase ran".into(),
                failed: true,
            };
        };
        let (base_errors, _, _) = self.tally(baseline.start, baseline.end);
        let failing: BTreeSet<&str> = self
            .ended_in(baseline.start, baseline.end)
            .filter(|o| matches!(o.outcome, Outcome::Error(_)))
            .map(|o| o.class)
            .collect();
        // Kept results a replica holds in its own memory are read NOT_FOUND on the others even
        // without a fault; a killed replica's are then gone: reported, not failing the run.
        let kept_per_replica = failing.contains(KEPT);
        let _ = writeln!(
            text,
            "| fault | injected at, held | errors the clients saw (from the fault to the next one) | lost | doubled | recovered after the fault ended |"
        );
        let _ = writeln!(text, "|---|---|---|---|---|---|");
        let mut failed = false;
        let mut lost_total = 0;
        let mut doubled_total = 0;
        for (i, phase) in self.phases.iter().enumerate() {
            let (errors, lost, doubled) = self.tally(phase.start, phase.end);
            let n_lost: usize = lost.values().sum();
            let n_doubled: usize = doubled.values().sum();
            let gating_lost: usize = lost
                .iter()
                .filter(|((class, _), _)| !(kept_per_replica && class == KEPT))
                .map(|(_, n)| n)
                .sum();
            failed |= gating_lost > 0 || n_doubled > 0;
            lost_total += n_lost;
            doubled_total += n_doubled;
            let (when, recovered) = match phase.healed {
                None => (
                    format!("— ({:.0} s)", phase.end - phase.start),
                    "—".to_owned(),
                ),
                Some(healed) => (
                    format!("{:.1} s, {:.1} s", phase.start, healed - phase.start),
                    match self.recovery(healed, phase.end, &failing) {
                        Some(s) if s < self.window => format!("at once (< {:.1} s)", self.window),
                        Some(s) => format!("{s:.1} s"),
                        None => format!("not within {:.0} s", phase.end - healed),
                    },
                ),
            };
            let name = if i == 0 {
                "none (baseline)".to_owned()
            } else {
                phase.name.clone()
            };
            let _ = writeln!(
                text,
                "| {name} | {when} | {} | {} | {} | {recovered} |",
                counted(&errors),
                if n_lost == 0 {
                    "0".into()
                } else {
                    format!("**{n_lost}**: {}", counted(&lost))
                },
                if n_doubled == 0 {
                    "0".into()
                } else {
                    format!("**{n_doubled}**: {}", counted(&doubled))
                },
            );
        }
        for (name, why) in &self.skipped {
            let _ = writeln!(text, "| {name} | skipped: {why} | | | | |");
        }
        let _ = writeln!(text);
        let _ = writeln!(
            text,
            "| phase | operations (ok / refused by the rate limit / errors) | rate-limited calls admitted a second (limit {}) | changes heard by the listen streams / raised × streams |",
            self.rate_limit
        );
        let _ = writeln!(text, "|---|---|---|---|");
        for (i, phase) in self.phases.iter().enumerate() {
            let (mut ok, mut refused, mut bad) = (0, 0, 0);
            for op in self.ended_in(phase.start, phase.end) {
                match op.outcome {
                    Outcome::Ok => ok += 1,
                    Outcome::Refused => refused += 1,
                    _ => bad += 1,
                }
            }
            let seconds = (phase.end - phase.start).max(0.001);
            let admitted = self
                .admitted
                .iter()
                .filter(|t| inside(**t, phase.start, phase.end))
                .count();
            let raised = self
                .touches
                .iter()
                .filter(|t| inside(**t, phase.start, phase.end))
                .count();
            let heard = self
                .heard
                .iter()
                .filter(|t| inside(**t, phase.start, phase.end))
                .count();
            let name = if i == 0 {
                "none (baseline)"
            } else {
                phase.name.as_str()
            };
            let _ = writeln!(
                text,
                "| {name} | {ok} / {refused} / {bad} | {:.1} | {heard} / {} |",
                admitted as f64 / seconds,
                raised * LISTEN_STREAMS
            );
        }
        let _ = writeln!(text);
        if !failing.is_empty() {
            let _ = writeln!(
                text,
                "Without any fault the clients already see errors ({}): the recovery measure sets these clients aside ({}).",
                counted(&base_errors),
                failing.iter().copied().collect::<Vec<_>>().join(", ")
            );
        }
        if kept_per_replica {
            let _ = writeln!(
                text,
                "Kept results are read NOT_FOUND on replicas other than their own without any fault: this build keeps them per replica, so those a killed replica held count as lost above but do not fail the run."
            );
        }
        if self.dropped > 0 {
            let _ = writeln!(
                text,
                "{} operations past the record's bound were not kept.",
                self.dropped
            );
        }
        let _ = writeln!(
            text,
            "Lost: {lost_total}, doubled: {doubled_total}{}.",
            if failed { " — FAILED" } else { "" }
        );
        Verdict { text, failed }
    }
}
