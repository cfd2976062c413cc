//! The in-memory event store: bounded per stream (its oldest events go first) and in total
//! bytes (the least recently written streams go first), and every stream expires a while
//! after its last event.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{EventFuture, EventStore, Replay};
use crate::sync::lock;

/// Events kept in this process, for resumes that come back to it. The bounds (see
/// [`MemoryEventStore::new`]) keep its memory in check whatever the clients do.
#[derive(Debug)]
pub struct MemoryEventStore {
    max_per_stream: usize,
    max_bytes: usize,
    ttl: Duration,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    streams: HashMap<String, Stream>,
    bytes: usize,
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

impl Default for MemoryEventStore {
    fn default() -> Self {
        MemoryEventStore::new()
    }
}

impl MemoryEventStore {
    /// A store keeping at most 1024 events per stream and 64 MiB of events in all, each
    /// stream for 5 minutes after its last event.
    pub fn new() -> Self {
        MemoryEventStore {
            max_per_stream: 1024,
            max_bytes: 64 << 20,
            ttl: Duration::from_secs(300),
            state: Mutex::new(State {
                streams: HashMap::new(),
                bytes: 0,
                swept: Instant::now(),
            }),
        }
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

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Drops expired streams (at most once a second: it walks them all).
    fn sweep(&self, state: &mut State) {
        if state.swept.elapsed() < Duration::from_secs(1).min(self.ttl) {
            return;
        }
        state.swept = Instant::now();
        let ttl = self.ttl;
        let mut freed = 0;
        state.streams.retain(|_, s| {
            let keep = s.touched.elapsed() < ttl;
            if !keep {
                freed += s.bytes;
            }
            keep
        });
        state.bytes -= freed;
    }

    fn append_now(&self, stream: &str, owner: &str, seq: u64, data: &str, last: bool) {
        let mut state = self.lock();
        self.sweep(&mut state);
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
            let freed = s.bytes;
            s.events.clear();
            s.bytes = 0;
            state.bytes -= freed;
            return;
        }
        s.events.push_back((seq, data.to_owned()));
        s.bytes += data.len();
        state.bytes += data.len();
        while s.events.len() > self.max_per_stream {
            state.bytes -= s.drop_oldest();
        }
        // Over the total: the streams written least recently lose their events (this one
        // last).
        while state.bytes > self.max_bytes {
            let oldest = state
                .streams
                .iter()
                .filter(|(k, s)| !s.events.is_empty() && k.as_str() != stream)
                .min_by_key(|(_, s)| s.touched)
                .map(|(k, _)| k.clone());
            let key = oldest.unwrap_or_else(|| stream.to_owned());
            let Some(s) = state.streams.get_mut(&key) else {
                break;
            };
            let freed = s.drop_oldest();
            if freed == 0 && s.events.is_empty() && key == stream {
                break;
            }
            state.bytes -= freed;
        }
    }
}

impl EventStore for MemoryEventStore {
    fn open<'a>(&'a self, stream: &'a str, owner: &'a str) -> EventFuture<'a, ()> {
        let mut state = self.lock();
        self.sweep(&mut state);
        state.streams.insert(stream.to_owned(), Stream::new(owner));
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

    fn end<'a>(&'a self, stream: &'a str, seq: u64) -> EventFuture<'a, ()> {
        if let Some(s) = self.lock().streams.get_mut(stream) {
            s.end = Some(seq);
            s.touched = Instant::now();
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn replay<'a>(&'a self, stream: &'a str, after: u64) -> EventFuture<'a, Option<Replay>> {
        let state = self.lock();
        let replay = state
            .streams
            .get(stream)
            .filter(|s| s.touched.elapsed() < self.ttl)
            .map(|s| Replay {
                owner: s.owner.clone(),
                events: s
                    .events
                    .iter()
                    .filter(|(seq, _)| *seq > after)
                    .cloned()
                    .collect(),
                floor: s.floor,
                end: s.end,
            });
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
        assert!(store.lock().bytes <= 2048);
        // Larger than the whole store: sent, never kept.
        now(store.append("new", "o", 3, &"w".repeat(4096), false));
        assert_eq!(now(store.replay("new", 0)).unwrap().floor, 3);
    }

    #[test]
    fn streams_expire() {
        let store = MemoryEventStore::new().ttl(Duration::ZERO);
        now(store.open("a", "o"));
        assert_eq!(now(store.replay("a", 0)), None);
    }
}
