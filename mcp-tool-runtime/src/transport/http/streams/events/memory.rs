//! The in-memory event store: bounded per stream (its oldest events go first), in total
//! events and in total bytes (the least recently written go first), and every stream expires
//! a while after its last event.
//!
//! Whole answers, most of what a busy endpoint keeps, are kept apart (see `answers`).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::answers::{Answers, BLOCK, Names};
use super::{EventFuture, EventStore, Replay};
use crate::sync::lock;

/// Events kept in this process, for resumes that come back to it. The bounds (see
/// [`MemoryEventStore::new`]) keep its memory in check whatever the clients do.
#[derive(Debug)]
pub struct MemoryEventStore {
    max_per_stream: usize,
    max_events: usize,
    max_bytes: usize,
    ttl: Duration,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    streams: HashMap<String, Stream>,
    answers: Answers,
    /// `None` without system randomness: answers are then kept as streams.
    names: Option<Names>,
    bytes: usize,
    /// The events kept, whole answers included.
    events: usize,
    swept: Instant,
}

#[derive(Debug)]
struct Stream {
    owner: String,
    events: VecDeque<(u64, String)>,
    floor: u64,
    end: Option<u64>,
    touched: Instant,
    bytes: usize,
}

impl Stream {
    fn new(owner: &str) -> Self {
        Stream {
            owner: owner.to_owned(),
            events: VecDeque::new(),
            floor: 0,
            end: None,
            touched: Instant::now(),
            bytes: 0,
        }
    }

    /// Drops the oldest event, raising the floor; its size.
    fn drop_oldest(&mut self) -> usize {
        match self.events.pop_front() {
            Some((seq, data)) => {
                self.floor = seq;
                self.bytes -= data.len();
                data.len()
            }
            None => 0,
        }
    }
}

/// What the store is adding to when it goes over its total bound: that goes last.
#[derive(Clone, Copy)]
enum Adding<'a> {
    Stream(&'a str),
    Answer,
}

impl Default for MemoryEventStore {
    fn default() -> Self {
        MemoryEventStore::new()
    }
}

impl MemoryEventStore {
    /// A store keeping at most 1024 events per stream, and [`MAX_EVENTS`](Self::MAX_EVENTS)
    /// events and [`MAX_BYTES`](Self::MAX_BYTES) bytes of events in all, each stream for
    /// [`TTL`](Self::TTL) after its last event.
    pub fn new() -> Self {
        MemoryEventStore {
            max_per_stream: 1024,
            max_events: Self::MAX_EVENTS,
            max_bytes: Self::MAX_BYTES,
            ttl: Self::TTL,
            state: Mutex::new(State {
                streams: HashMap::new(),
                answers: Answers::default(),
                names: Names::new(),
                bytes: 0,
                events: 0,
                swept: Instant::now(),
            }),
        }
    }

    /// The most events kept in all by default: 4096. A busy endpoint answering with SSE
    /// keeps every answer for a resume; at a few hundred bytes each this holds them to a
    /// few MiB, however many calls it answers (a resume of an answer dropped for room is told
    /// its stream is unknown).
    pub const MAX_EVENTS: usize = 4096;

    /// The most bytes of events kept in all by default: 16 MiB.
    pub const MAX_BYTES: usize = 16 << 20;

    /// How long a stream is kept after its last event by default: 5 minutes.
    pub const TTL: Duration = Duration::from_secs(300);

    /// The store with the bounds `text` gives, each as `name=value` and separated by commas,
    /// any of them left out keeping its default (the form of `MCP_TOOL_EVENT_STORE_BOUNDS`):
    /// `events=4096` (in all), `bytes=16MiB` (in all: `65536`, `64KiB`, `1MiB`, `1MB`),
    /// `age=5m` (after a stream's last event: `30s`, `500ms`, `2m`), `per_stream=1024`.
    pub fn with_bounds(mut self, text: &str) -> Result<Self, String> {
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad =
                || format!("`{part}`: expected events=N, bytes=SIZE, age=DURATION or per_stream=N");
            let (name, value) = part.split_once('=').ok_or_else(bad)?;
            let (name, value) = (name.trim(), value.trim());
            let count = || {
                value
                    .parse::<usize>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(bad)
            };
            self = match name {
                "events" => self.max_events(count()?),
                "per_stream" => self.max_per_stream(count()?),
                "bytes" => self.max_bytes(
                    crate::server::middleware::ResultBudget::parse(value)
                        .map_err(|_| bad())?
                        .max_bytes(),
                ),
                "age" => self.ttl(crate::server::tasks::parse_duration(value).ok_or_else(bad)?),
                _ => return Err(bad()),
            };
        }
        Ok(self)
    }

    /// The most events kept in all (at least 1), whole answers included: beyond, those
    /// written least recently go.
    #[must_use]
    pub fn max_events(mut self, events: usize) -> Self {
        self.max_events = events.max(1);
        self
    }

    /// The most events kept per stream (at least 1): beyond, its oldest go.
    #[must_use]
    pub fn max_per_stream(mut self, events: usize) -> Self {
        self.max_per_stream = events.max(1);
        self
    }

    /// The most bytes of events kept in all: beyond, the streams written least recently go
    /// (an event larger than this is sent, not kept).
    #[must_use]
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes.max(1024);
        self
    }

    /// How long a stream is kept after its last event.
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Drops expired streams (at most once a second: it walks the streams that are not
    /// whole answers).
    fn sweep(&self, state: &mut State, now: Instant) {
        if now.saturating_duration_since(state.swept) < Duration::from_secs(1).min(self.ttl) {
            return;
        }
        state.swept = now;
        let ttl = self.ttl;
        let (mut freed, mut events) = state.answers.expire(ttl);
        state.streams.retain(|_, s| {
            let keep = s.touched.elapsed() < ttl;
            if !keep {
                freed += s.bytes;
                events += s.events.len();
            }
            keep
        });
        state.bytes -= freed;
        state.events -= events;
    }

    /// Keeps a whole answer and names it (`None` without system randomness).
    fn keep_answer_now(&self, owner: &str, data: &str) -> Option<String> {
        let mut state = self.state();
        let now = Instant::now();
        self.sweep(&mut state, now);
        let state = &mut *state;
        // Too large to keep: a resume from before it is refused rather than served a gap.
        let kept = (data.len() <= self.max_bytes).then_some(data);
        let block = (
            (self.max_bytes / 64).min(BLOCK),
            (self.max_events / 64).max(1),
        );
        let (name, bytes) = state
            .answers
            .add(state.names.as_ref()?, owner, kept, block, now)?;
        state.bytes += bytes;
        state.events += 1;
        self.make_room(state, Adding::Answer);
        Some(name)
    }

    fn append_now(&self, stream: &str, owner: &str, seq: u64, data: &str, last: bool) {
        let mut state = self.state();
        self.sweep(&mut state, Instant::now());
        let state = &mut *state;
        let s = state
            .streams
            .entry(stream.to_owned())
            .or_insert_with(|| Stream::new(owner));
        s.touched = Instant::now();
        if last {
            s.end = Some(seq);
        }
        if data.len() > self.max_bytes {
            // Too large to keep: a resume from before it is refused rather than served a gap.
            s.floor = seq;
            state.bytes -= s.bytes;
            state.events -= s.events.len();
            s.events.clear();
            s.bytes = 0;
            return;
        }
        s.events.push_back((seq, data.to_owned()));
        s.bytes += data.len();
        state.bytes += data.len();
        state.events += 1;
        while s.events.len() > self.max_per_stream {
            state.bytes -= s.drop_oldest();
            state.events -= 1;
        }
        self.make_room(state, Adding::Stream(stream));
    }

    /// Over a total: the streams and the blocks of answers written least recently lose
    /// their events (what is being added, last).
    fn make_room(&self, state: &mut State, adding: Adding<'_>) {
        while state.bytes > self.max_bytes || state.events > self.max_events {
            let stream = state
                .streams
                .iter()
                .filter(|(k, s)| {
                    !s.events.is_empty() && !matches!(adding, Adding::Stream(a) if a == k.as_str())
                })
                .min_by_key(|(_, s)| s.touched)
                .map(|(k, s)| (k.clone(), s.touched));
            let block = state.answers.oldest(matches!(adding, Adding::Answer));
            let one = |s: &mut Stream| (s.drop_oldest(), 1);
            let (freed, events) = match (stream, block) {
                (Some((key, touched)), block) if block.is_none_or(|written| touched < written) => {
                    state.streams.get_mut(&key).map_or((0, 0), one)
                }
                (_, Some(_)) => state.answers.drop_oldest(),
                // Nothing else left: what is being added.
                (_, None) => match adding {
                    Adding::Answer if !state.answers.blocks.is_empty() => {
                        state.answers.drop_oldest()
                    }
                    Adding::Stream(key) => match state.streams.get_mut(key) {
                        Some(s) if !s.events.is_empty() => one(s),
                        _ => break,
                    },
                    Adding::Answer => break,
                },
            };
            state.bytes -= freed;
            state.events -= events;
        }
    }
}

impl EventStore for MemoryEventStore {
    fn open<'a>(&'a self, stream: &'a str, owner: &'a str) -> EventFuture<'a, ()> {
        let mut state = self.state();
        self.sweep(&mut state, Instant::now());
        if let Some(old) = state.streams.insert(stream.to_owned(), Stream::new(owner)) {
            state.bytes -= old.bytes;
            state.events -= old.events.len();
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn append<'a>(
        &'a self,
        stream: &'a str,
        owner: &'a str,
        seq: u64,
        data: &'a str,
        last: bool,
    ) -> EventFuture<'a, ()> {
        self.append_now(stream, owner, seq, data, last);
        Box::pin(std::future::ready(Ok(())))
    }

    fn keep_answer<'a>(&'a self, owner: &'a str, data: &'a str) -> EventFuture<'a, Option<String>> {
        Box::pin(std::future::ready(Ok(self.keep_answer_now(owner, data))))
    }

    fn end<'a>(&'a self, stream: &'a str, seq: u64) -> EventFuture<'a, ()> {
        if let Some(s) = self.state().streams.get_mut(stream) {
            s.end = Some(seq);
            s.touched = Instant::now();
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn replay<'a>(&'a self, stream: &'a str, after: u64) -> EventFuture<'a, Option<Replay>> {
        let state = self.state();
        let fresh = |at: Instant| at.elapsed() < self.ttl;
        let replay = match state.streams.get(stream) {
            Some(s) => fresh(s.touched).then(|| Replay {
                owner: s.owner.clone(),
                events: s
                    .events
                    .iter()
                    .filter(|(seq, _)| *seq > after)
                    .cloned()
                    .collect(),
                floor: s.floor,
                end: s.end,
            }),
            None => state
                .names
                .as_ref()
                .and_then(|names| state.answers.get(names, stream))
                .filter(|(_, answer)| fresh(answer.written))
                .map(|(block, answer)| {
                    let data = block.data(answer);
                    Replay {
                        owner: block.owner(answer).to_owned(),
                        events: data
                            .filter(|_| after < 1)
                            .map(|data| (1, data.to_owned()))
                            .into_iter()
                            .collect(),
                        floor: u64::from(data.is_none()),
                        end: Some(1),
                    }
                }),
        };
        Box::pin(std::future::ready(Ok(replay)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now<T>(f: EventFuture<'_, T>) -> T {
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        let mut f = f;
        match f.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(r) => r.unwrap(),
            std::task::Poll::Pending => panic!("the memory store never waits"),
        }
    }

    #[test]
    fn a_stream_over_its_cap_loses_its_oldest_events() {
        let store = MemoryEventStore::new().max_per_stream(3);
        now(store.open("a", "o"));
        for seq in 1..=5 {
            now(store.append("a", "o", seq, &format!("m{seq}"), seq == 5));
        }
        let r = now(store.replay("a", 0)).unwrap();
        assert_eq!(r.floor, 2);
        assert_eq!(r.end, Some(5));
        let seqs: Vec<u64> = r.events.iter().map(|(s, _)| *s).collect();
        assert_eq!(seqs, [3, 4, 5]);
        assert_eq!(
            now(store.replay("a", 4)).unwrap().events,
            [(5, "m5".into())]
        );
        assert_eq!(now(store.replay("b", 0)), None);
    }

    #[test]
    fn the_total_bound_drops_the_least_recent_streams_first() {
        let store = MemoryEventStore::new().max_bytes(2048);
        now(store.open("old", "o"));
        now(store.open("new", "o"));
        now(store.append("old", "o", 1, &"x".repeat(1000), false));
        now(store.append("new", "o", 1, &"y".repeat(1000), false));
        now(store.append("new", "o", 2, &"z".repeat(1000), false));
        assert_eq!(now(store.replay("old", 0)).unwrap().floor, 1);
        let new = now(store.replay("new", 0)).unwrap();
        assert_eq!((new.floor, new.events.len()), (0, 2));
        assert!(store.state().bytes <= 2048);
        // Larger than the whole store: sent, never kept.
        now(store.append("new", "o", 3, &"w".repeat(4096), false));
        assert_eq!(now(store.replay("new", 0)).unwrap().floor, 3);
    }

    fn keep(store: &MemoryEventStore, owner: &str, data: &str) -> String {
        now(store.keep_answer(owner, data)).expect("the store names its answers")
    }

    #[test]
    fn a_whole_answer_is_kept_for_a_resume_under_the_name_the_store_gave_it() {
        let store = MemoryEventStore::new();
        let key = keep(&store, "owner", "the answer");
        assert_eq!(
            super::super::parse_event_id(&format!("{key}.0")),
            Some((key.as_str(), 0))
        );
        let r = now(store.replay(&key, 0)).unwrap();
        assert_eq!(r.owner, "owner");
        assert_eq!(r.events, [(1, "the answer".into())]);
        assert_eq!((r.floor, r.end), (0, Some(1)));
        let after = now(store.replay(&key, 1)).unwrap();
        assert_eq!((after.events.len(), after.end), (0, Some(1)));
        // Names are not numbers: the next answer's is nothing like this one's.
        let next = keep(&store, "owner", "the next");
        assert_ne!(key[..15], next[..15]);
        assert_eq!(now(store.replay(&next, 0)).unwrap().events[0].1, "the next");
        // A name with a digit changed (in either half), or in capitals, or of another store,
        // names nothing.
        for at in [0, 15, 16, 31] {
            let mut forged = key.clone().into_bytes();
            forged[at] = if forged[at] == b'0' { b'1' } else { b'0' };
            let forged = String::from_utf8(forged).unwrap();
            assert_eq!(now(store.replay(&forged, 0)), None, "{forged}");
        }
        assert_eq!(now(store.replay(&key.to_uppercase(), 0)), None);
        let other = MemoryEventStore::new();
        assert_eq!(now(other.replay(&key, 0)), None);
        for bad in ["", "ab", &"f".repeat(32), &"0".repeat(33), &"g".repeat(32)] {
            assert_eq!(now(store.replay(bad, 0)), None, "{bad:?}");
        }
        // Debug output shows no name, nor the key that makes them.
        let debug = format!("{store:?}");
        for name in [&key, &next] {
            assert!(
                !debug.contains(&name[..16]) && !debug.contains(&name[16..]),
                "{debug}"
            );
        }
        assert!(!debug.contains("Aes") && !debug.contains("key"), "{debug}");
        // An answer the transport names itself is kept as a stream.
        now(store.append("ab", "owner", 1, "b", true));
        assert!(store.state().streams.contains_key("ab"));
        assert_eq!(
            now(store.replay("ab", 0)).unwrap().events,
            [(1, "b".into())]
        );
    }

    #[test]
    fn the_total_bound_drops_the_oldest_answers_and_streams_first() {
        let store = MemoryEventStore::new().max_bytes(2048);
        now(store.open("old", "o"));
        now(store.append("old", "o", 1, &"x".repeat(600), false));
        let kept: Vec<String> = (1..=3)
            .map(|_| keep(&store, "o", &"y".repeat(600)))
            .collect();
        // The stream was written before the answers: it went first.
        assert_eq!(now(store.replay("old", 0)).unwrap().floor, 1);
        assert_eq!(now(store.replay(&kept[0], 0)).unwrap().events.len(), 1);
        let fourth = keep(&store, "o", &"z".repeat(600));
        // Then the oldest answer, forgotten: a resume of it is refused, not served a gap.
        assert_eq!(now(store.replay(&kept[0], 0)), None);
        assert_eq!(now(store.replay(&kept[1], 0)).unwrap().events.len(), 1);
        assert_eq!(now(store.replay(&fourth, 0)).unwrap().events.len(), 1);
        assert!(store.state().bytes <= 2048);
        // Larger than the whole store: sent, never kept.
        let large = keep(&store, "o", &"w".repeat(4096));
        let large = now(store.replay(&large, 0)).unwrap();
        assert_eq!((large.floor, large.events.len()), (1, 0));
        assert!(store.state().bytes <= 2048);
    }

    #[test]
    fn answers_share_blocks_and_leave_with_them() {
        let store = MemoryEventStore::new()
            .max_events(1 << 20)
            .ttl(Duration::from_secs(3600));
        let names: Vec<String> = (0..1000)
            .map(|n| keep(&store, "owner", &format!("answer {n}")))
            .collect();
        assert_eq!(store.state().answers.blocks.len(), 1);
        for n in [0, 499, 999] {
            let r = now(store.replay(&names[n], 0)).unwrap();
            assert_eq!(r.events, [(1, format!("answer {n}"))]);
        }
        // Blocks of 256 bytes: the answers spread over many, each found where it is.
        let small = MemoryEventStore::new()
            .max_bytes(16 << 10)
            .max_events(1 << 20)
            .ttl(Duration::from_secs(3600));
        let names: Vec<String> = (0..1000)
            .map(|n| keep(&small, "owner", &format!("answer {n:>40}")))
            .collect();
        let blocks = small.state().answers.blocks.len();
        assert!(blocks > 10, "{blocks} blocks");
        for (n, name) in names.iter().enumerate().skip(800) {
            let r = now(small.replay(name, 0)).unwrap();
            assert_eq!(r.events, [(1, format!("answer {n:>40}"))]);
        }
        assert_eq!(now(small.replay(&names[0], 0)), None, "dropped for room");
        let mut state = store.state();
        let freed = state.answers.expire(Duration::ZERO);
        assert_eq!(freed, (state.bytes, state.events));
        assert!(state.answers.blocks.is_empty());
    }

    #[test]
    fn the_count_bound_drops_the_oldest_answers_and_events_first() {
        let store = MemoryEventStore::new()
            .max_events(128)
            .ttl(Duration::from_secs(3600));
        let names: Vec<String> = (0..1000)
            .map(|n| keep(&store, "o", &format!("answer {n}")))
            .collect();
        {
            let state = store.state();
            let kept = state.answers.kept();
            assert!((64..=128).contains(&kept), "{kept} answers kept");
            assert_eq!(state.events, kept);
            assert!(state.bytes < 128 * 20, "{} bytes", state.bytes);
        }
        assert_eq!(now(store.replay(&names[0], 0)), None, "dropped for room");
        let last = now(store.replay(&names[999], 0)).unwrap();
        assert_eq!(last.events, [(1, "answer 999".into())]);
        // A stream's events count too: the oldest go, the stream being written last.
        now(store.open("s", "o"));
        for seq in 1..=200 {
            now(store.append("s", "o", seq, "e", false));
        }
        let s = now(store.replay("s", 0)).unwrap();
        assert!(s.floor >= 72 && s.events.len() <= 128, "{}", s.floor);
        assert!(store.state().events <= 128);
        assert_eq!(
            now(store.replay(&names[999], 0)),
            None,
            "older than the stream"
        );
    }

    #[test]
    fn bounds_are_read_from_text() {
        let store = MemoryEventStore::new()
            .with_bounds("events=10, bytes=64KiB,age=2m , per_stream=3")
            .unwrap();
        assert_eq!(
            (
                store.max_events,
                store.max_bytes,
                store.ttl,
                store.max_per_stream
            ),
            (10, 64 << 10, Duration::from_secs(120), 3)
        );
        let defaults = MemoryEventStore::new().with_bounds("").unwrap();
        assert_eq!(
            (defaults.max_events, defaults.max_bytes, defaults.ttl),
            (4096, 16 << 20, Duration::from_secs(300))
        );
        for bad in [
            "events",
            "events=0",
            "events=x",
            "bytes=1GB",
            "age=soon",
            "colour=red",
        ] {
            let e = MemoryEventStore::new().with_bounds(bad).unwrap_err();
            assert!(e.contains(bad) && e.contains("events=N"), "{e}");
        }
        let e = super::super::event_store_with_bounds("memory", "age=x")
            .err()
            .unwrap();
        assert!(e.contains("age=x"), "{e}");
        assert!(super::super::event_store_with_bounds("", "events=5").is_ok());
    }

    #[test]
    fn streams_expire() {
        let store = MemoryEventStore::new().ttl(Duration::ZERO);
        now(store.open("a", "o"));
        assert_eq!(now(store.replay("a", 0)), None);
        let first = keep(&store, "o", "a");
        assert_eq!(now(store.replay(&first, 0)), None);
        keep(&store, "o", "b");
        let state = store.state();
        assert_eq!(state.answers.blocks.len(), 1, "the first answer was swept");
        assert_eq!(state.bytes, 2);
    }
}
