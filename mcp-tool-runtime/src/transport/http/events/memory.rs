//! The in-memory event store: bounded per stream (its oldest events go first) and in total
//! bytes (the least recently written go first), and every stream expires a while after its
//! last event.
//!
//! Most of what a busy endpoint keeps are whole answers: streams whose one event, their
//! response, was sent at once (`sse_responses`). Those are packed into blocks filled in
//! order, so keeping one allocates nothing of its own, and they leave a block at a time,
//! oldest first. Kept in four allocations each, a long run's answers fragmented the heap and
//! slowed every allocation of the server (over 50 000 `create_user` calls answered so, 25.2
//! µs of CPU a call against 18.1 µs with blocks).

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
    answers: Answers,
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

/// The most a block of answers holds, unless one answer is larger (it gets a block of its
/// own); at most 1/64 of the store's bound, so that a block dropped for room is a small part.
const BLOCK: usize = 64 << 10;

/// Whole answers (streams whose only event, number 1, was their last), in blocks filled in
/// the order they were written; the oldest block goes first, whole, when it expires or when
/// the store needs room (a resume of its answers is then told their streams are unknown).
#[derive(Debug, Default)]
struct Answers {
    /// Where each answer is, by stream key: its block's number and its place in the block.
    index: HashMap<u128, (u64, usize)>,
    blocks: VecDeque<Block>,
    /// The number of the front block (blocks are numbered in the order they were started).
    front: u64,
}

#[derive(Debug, Default)]
struct Block {
    /// The answers' owners and messages, one after the other.
    text: String,
    answers: Vec<Answer>,
}

#[derive(Debug)]
struct Answer {
    key: u128,
    written: Instant,
    /// Where its owner starts in the block's text; its message follows it.
    start: usize,
    owner_len: usize,
    /// The message's length, `None` when it was too large to keep.
    data_len: Option<usize>,
}

impl Block {
    fn owner(&self, answer: &Answer) -> &str {
        &self.text[answer.start..answer.start + answer.owner_len]
    }

    fn data(&self, answer: &Answer) -> Option<&str> {
        let from = answer.start + answer.owner_len;
        Some(&self.text[from..from + answer.data_len?])
    }

    /// When its last answer was written.
    fn written(&self) -> Option<Instant> {
        self.answers.last().map(|a| a.written)
    }
}

impl Answers {
    /// Keeps an answer (`data`: `None` when it is too large to keep) in blocks of `block`
    /// bytes; the bytes it takes.
    fn add(&mut self, key: u128, owner: &str, data: Option<&str>, block: usize) -> usize {
        let need = owner.len() + data.map_or(0, str::len);
        let fits = self
            .blocks
            .back()
            .is_some_and(|b| b.text.len() + need <= b.text.capacity());
        if !fits {
            self.blocks.push_back(Block {
                text: String::with_capacity(need.max(block)),
                answers: Vec::new(),
            });
        }
        let number = self.front + self.blocks.len() as u64 - 1;
        let Some(block) = self.blocks.back_mut() else {
            return 0;
        };
        let start = block.text.len();
        block.text.push_str(owner);
        block.text.push_str(data.unwrap_or(""));
        self.index.insert(key, (number, block.answers.len()));
        block.answers.push(Answer {
            key,
            written: Instant::now(),
            start,
            owner_len: owner.len(),
            data_len: data.map(str::len),
        });
        need
    }

    fn get(&self, key: u128) -> Option<(&Block, &Answer)> {
        let (number, at) = *self.index.get(&key)?;
        let block = self
            .blocks
            .get(usize::try_from(number.checked_sub(self.front)?).ok()?)?;
        Some((block, block.answers.get(at)?))
    }

    /// When the oldest block was last written (`but_last`: unless it is the newest).
    fn oldest(&self, but_last: bool) -> Option<Instant> {
        if but_last && self.blocks.len() < 2 {
            return None;
        }
        self.blocks.front()?.written()
    }

    /// Forgets the oldest block; the bytes freed.
    fn drop_oldest(&mut self) -> usize {
        let Some(block) = self.blocks.pop_front() else {
            return 0;
        };
        for (at, answer) in block.answers.iter().enumerate() {
            if self.index.get(&answer.key) == Some(&(self.front, at)) {
                self.index.remove(&answer.key);
            }
        }
        self.front += 1;
        block.text.len()
    }

    /// Forgets the blocks whose last answer was written `ttl` ago or more; the bytes freed.
    fn expire(&mut self, ttl: Duration) -> usize {
        let mut freed = 0;
        while self
            .blocks
            .front()
            .is_some_and(|b| b.written().is_none_or(|w| w.elapsed() >= ttl))
        {
            freed += self.drop_oldest();
        }
        freed
    }
}

/// The number of an answer's stream: its key as the transport makes them, 32 lowercase hex
/// digits (any other stream is kept as a stream).
fn answer_key(stream: &str) -> Option<u128> {
    let ours = stream.len() == 32
        && stream
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    ours.then(|| u128::from_str_radix(stream, 16).ok())?
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
    /// A store keeping at most 1024 events per stream and 64 MiB of events in all, each
    /// stream for 5 minutes after its last event.
    pub fn new() -> Self {
        MemoryEventStore {
            max_per_stream: 1024,
            max_bytes: 64 << 20,
            ttl: Duration::from_secs(300),
            state: Mutex::new(State {
                streams: HashMap::new(),
                answers: Answers::default(),
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

    /// Drops expired streams (at most once a second: it walks the streams that are not
    /// whole answers).
    fn sweep(&self, state: &mut State) {
        if state.swept.elapsed() < Duration::from_secs(1).min(self.ttl) {
            return;
        }
        state.swept = Instant::now();
        let ttl = self.ttl;
        let mut freed = state.answers.expire(ttl);
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
        if seq == 1
            && last
            && !state.streams.contains_key(stream)
            && let Some(key) = answer_key(stream)
        {
            // Too large to keep: a resume from before it is refused rather than served a gap.
            let kept = (data.len() <= self.max_bytes).then_some(data);
            let block = (self.max_bytes / 64).min(BLOCK);
            state.bytes += state.answers.add(key, owner, kept, block);
            self.make_room(state, Adding::Answer);
            return;
        }
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
        self.make_room(state, Adding::Stream(stream));
    }

    /// Over the total: the streams and the blocks of answers written least recently lose
    /// their events (what is being added, last).
    fn make_room(&self, state: &mut State, adding: Adding<'_>) {
        while state.bytes > self.max_bytes {
            let stream = state
                .streams
                .iter()
                .filter(|(k, s)| {
                    !s.events.is_empty() && !matches!(adding, Adding::Stream(a) if a == k.as_str())
                })
                .min_by_key(|(_, s)| s.touched)
                .map(|(k, s)| (k.clone(), s.touched));
            let block = state.answers.oldest(matches!(adding, Adding::Answer));
            let freed = match (stream, block) {
                (Some((key, touched)), block) if block.is_none_or(|written| touched < written) => {
                    state.streams.get_mut(&key).map_or(0, Stream::drop_oldest)
                }
                (_, Some(_)) => state.answers.drop_oldest(),
                // Nothing else left: what is being added.
                (_, None) => match adding {
                    Adding::Answer if !state.answers.blocks.is_empty() => {
                        state.answers.drop_oldest()
                    }
                    Adding::Stream(key) => match state.streams.get_mut(key) {
                        Some(s) if !s.events.is_empty() => s.drop_oldest(),
                        _ => break,
                    },
                    Adding::Answer => break,
                },
            };
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
            None => answer_key(stream)
                .and_then(|key| state.answers.get(key))
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
        assert!(store.lock().bytes <= 2048);
        // Larger than the whole store: sent, never kept.
        now(store.append("new", "o", 3, &"w".repeat(4096), false));
        assert_eq!(now(store.replay("new", 0)).unwrap().floor, 3);
    }

    fn answer(n: u128) -> String {
        format!("{n:032x}")
    }

    #[test]
    fn a_whole_answer_is_kept_for_a_resume() {
        let store = MemoryEventStore::new();
        let key = answer(7);
        now(store.append(&key, "owner", 1, "the answer", true));
        let r = now(store.replay(&key, 0)).unwrap();
        assert_eq!(r.owner, "owner");
        assert_eq!(r.events, [(1, "the answer".into())]);
        assert_eq!((r.floor, r.end), (0, Some(1)));
        let after = now(store.replay(&key, 1)).unwrap();
        assert_eq!((after.events.len(), after.end), (0, Some(1)));
        assert_eq!(now(store.replay(&answer(8), 0)), None);
        // Only the transport's keys are answers; a stream opened first stays a stream.
        now(store.open(&answer(9), "owner"));
        now(store.append(&answer(9), "owner", 1, "a", true));
        assert!(store.lock().streams.contains_key(&answer(9)));
        now(store.append("ab", "owner", 1, "b", true));
        assert!(store.lock().streams.contains_key("ab"));
        assert_eq!(store.lock().answers.index.len(), 1);
    }

    #[test]
    fn the_total_bound_drops_the_oldest_answers_and_streams_first() {
        let store = MemoryEventStore::new().max_bytes(2048);
        now(store.open("old", "o"));
        now(store.append("old", "o", 1, &"x".repeat(600), false));
        for n in 1..=3 {
            now(store.append(&answer(n), "o", 1, &"y".repeat(600), true));
        }
        // The stream was written before the answers: it went first.
        assert_eq!(now(store.replay("old", 0)).unwrap().floor, 1);
        assert_eq!(now(store.replay(&answer(1), 0)).unwrap().events.len(), 1);
        now(store.append(&answer(4), "o", 1, &"z".repeat(600), true));
        // Then the oldest answer, forgotten: a resume of it is refused, not served a gap.
        assert_eq!(now(store.replay(&answer(1), 0)), None);
        assert_eq!(now(store.replay(&answer(2), 0)).unwrap().events.len(), 1);
        assert_eq!(now(store.replay(&answer(4), 0)).unwrap().events.len(), 1);
        assert!(store.lock().bytes <= 2048);
        // Larger than the whole store: sent, never kept.
        now(store.append(&answer(5), "o", 1, &"w".repeat(4096), true));
        let large = now(store.replay(&answer(5), 0)).unwrap();
        assert_eq!((large.floor, large.events.len()), (1, 0));
        assert!(store.lock().bytes <= 2048);
    }

    #[test]
    fn answers_share_blocks_and_leave_with_them() {
        let store = MemoryEventStore::new().ttl(Duration::from_secs(3600));
        for n in 0..1000 {
            now(store.append(&answer(n), "owner", 1, &format!("answer {n}"), true));
        }
        {
            let state = store.lock();
            assert_eq!(state.answers.blocks.len(), 1);
            assert_eq!(state.answers.index.len(), 1000);
        }
        for n in [0, 499, 999] {
            let r = now(store.replay(&answer(n), 0)).unwrap();
            assert_eq!(r.events, [(1, format!("answer {n}"))]);
        }
        let mut state = store.lock();
        let freed = state.answers.expire(Duration::ZERO);
        assert_eq!(freed, state.bytes);
        assert!(state.answers.index.is_empty() && state.answers.blocks.is_empty());
    }

    #[test]
    fn streams_expire() {
        let store = MemoryEventStore::new().ttl(Duration::ZERO);
        now(store.open("a", "o"));
        assert_eq!(now(store.replay("a", 0)), None);
        now(store.append(&answer(1), "o", 1, "a", true));
        assert_eq!(now(store.replay(&answer(1), 0)), None);
        now(store.append(&answer(2), "o", 1, "b", true));
        let state = store.lock();
        assert_eq!(state.answers.index.len(), 1, "the first answer was swept");
        assert_eq!(state.bytes, 2);
    }
}
