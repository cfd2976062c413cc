//! Newline-delimited framing, read with a size limit: the stdio transport reads its client's
//! requests with it, and the client its server's messages. A line longer than the limit is
//! read and dropped as it comes, never kept whole.

use std::io;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::Notify;

use crate::sync::lock;

/// What reading one line gave.
pub(crate) enum Line {
    /// A whole line (its newline removed or not) is in the buffer.
    Complete,
    /// The line was longer than the limit: it was skipped (its length in bytes).
    TooLong(usize),
    /// The input ended.
    End,
}

/// What [`read_line`] does with a line longer than its limit.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overlong {
    /// Reads the rest of it and drops it, then reports it: the next line is read as usual (a
    /// server skips a client's message).
    Skip,
    /// Reports it as soon as it passes the limit, the rest unread (a client ends the
    /// connection, and a line that never ends does not keep it waiting).
    Stop,
}

/// Takes a whole line that `reader` holds in its buffer already into `line` (cleared first),
/// as [`read_line`] would, without waiting for anything; `false` when the buffer holds no
/// whole line, or one longer than `limit` (then [`read_line`] reads it).
pub(crate) fn buffered_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    line: &mut Vec<u8>,
    limit: usize,
) -> bool {
    let buffered = reader.buffer();
    let Some(end) = memchr::memchr(b'\n', buffered) else {
        return false;
    };
    if end >= limit.saturating_add(1) {
        return false;
    }
    line.clear();
    // A huge (but allowed) line before does not keep its buffer for ever.
    if line.capacity() > 1 << 20 {
        line.shrink_to(4096);
    }
    line.extend_from_slice(&buffered[..=end]);
    reader.consume(end + 1);
    true
}

/// Reads one line into `line` (cleared first), keeping at most `limit` bytes; a longer line
/// is dropped as it comes, and handled as `overlong` says.
pub(crate) async fn read_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    line: &mut Vec<u8>,
    limit: usize,
    overlong: Overlong,
) -> io::Result<Line> {
    line.clear();
    // A huge (but allowed) line before does not keep its buffer for ever.
    if line.capacity() > 1 << 20 {
        line.shrink_to(4096);
    }
    let mut seen = 0_usize;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(match seen {
                0 => Line::End,
                n if n > limit => Line::TooLong(n),
                _ => Line::Complete,
            });
        }
        let (chunk, done) = match memchr::memchr(b'\n', available) {
            Some(i) => (&available[..=i], true),
            None => (available, false),
        };
        let used = chunk.len();
        if seen.saturating_add(used) <= limit.saturating_add(1) {
            line.extend_from_slice(chunk);
        } else if !line.is_empty() {
            // Over the limit: what was kept goes.
            line.clear();
            line.shrink_to(4096);
        }
        seen = seen.saturating_add(used);
        reader.consume(used);
        if overlong == Overlong::Stop && seen > limit.saturating_add(1) {
            return Ok(Line::TooLong(seen));
        }
        if done {
            return Ok(if seen > limit.saturating_add(1) {
                Line::TooLong(seen)
            } else {
                Line::Complete
            });
        }
    }
}

/// The lines a connection's writer has yet to write (stdio): every message is appended to
/// one buffer, in the order sent, and the writer takes the whole buffer at once, so a message
/// costs a copy into the buffer, not a trip through a channel and a write of its own. Its
/// bytes are counted until written, so the reader can stop while the writer is behind.
#[derive(Default)]
pub(crate) struct Outbox {
    queue: Mutex<Queue>,
    /// Wakes the writer: lines came into an empty buffer, or no more will come.
    ready: Notify,
    /// No more lines are taken: the writer is gone, or stopping.
    refused: AtomicBool,
    /// Wakes who waits for the writer to be gone.
    gone: Notify,
    /// Bytes queued or being written.
    bytes: AtomicUsize,
    /// Wakes a reader waiting for the bytes to drop.
    drained: Notify,
}

#[derive(Default)]
struct Queue {
    lines: Vec<u8>,
    /// The sender is gone: once the buffer is written, the writer ends.
    ended: bool,
}

impl Outbox {
    /// Queues `text` as a line (an empty text is no line); dropped when the writer takes no
    /// more.
    pub(crate) fn push(&self, text: &str) {
        if text.is_empty() || self.refused.load(Ordering::Acquire) {
            return;
        }
        let was_empty = {
            let mut queue = lock(&self.queue);
            let was_empty = queue.lines.is_empty();
            queue.lines.reserve(text.len() + 1);
            queue.lines.extend_from_slice(text.as_bytes());
            queue.lines.push(b'\n');
            // Counted before the writer can take them.
            self.bytes.fetch_add(text.len() + 1, Ordering::AcqRel);
            was_empty
        };
        // A writer that has the buffer's earlier lines comes back for these.
        if was_empty {
            self.ready.notify_one();
        }
    }

    /// No more lines will be sent: the writer ends once it has written what is queued.
    pub(crate) fn end(&self) {
        lock(&self.queue).ended = true;
        self.ready.notify_one();
    }

    /// Takes no more lines (what is queued is still written).
    pub(crate) fn refuse(&self) {
        self.refused.store(true, Ordering::Release);
        self.gone.notify_waiters();
        self.ready.notify_one();
    }

    /// Whether lines are no longer taken (the writer is gone, or stopping).
    pub(crate) fn is_refused(&self) -> bool {
        self.refused.load(Ordering::Acquire)
    }

    /// Completes when lines are no longer taken.
    pub(crate) async fn refused(&self) {
        loop {
            let gone = self.gone.notified();
            tokio::pin!(gone);
            gone.as_mut().enable();
            if self.is_refused() {
                return;
            }
            gone.await;
        }
    }

    /// Waits for lines and swaps them with `batch` (empty): `false` once the sender is gone
    /// (or lines are refused) and every line was taken.
    pub(crate) async fn take(&self, batch: &mut Vec<u8>) -> bool {
        loop {
            let ready = self.ready.notified();
            tokio::pin!(ready);
            ready.as_mut().enable();
            {
                let mut queue = lock(&self.queue);
                if !queue.lines.is_empty() {
                    std::mem::swap(&mut queue.lines, batch);
                    return true;
                }
                if queue.ended || self.is_refused() {
                    return false;
                }
            }
            ready.await;
        }
    }

    /// Counts `bytes` written. The waiters are woken when the queue drops to `low` or
    /// below: a reader waits only while more than `high` (at least `low`) are queued, so a
    /// write that leaves the queue at `low` or below and found it above is the one that
    /// wakes it.
    pub(crate) fn written(&self, bytes: usize, low: usize) {
        let before = self.bytes.fetch_sub(bytes, Ordering::AcqRel);
        if before > low && before.saturating_sub(bytes) <= low {
            self.drained.notify_waiters();
        }
    }

    /// Whether at most `high` bytes are queued or being written now.
    pub(crate) fn at_most(&self, high: usize) -> bool {
        self.bytes.load(Ordering::Acquire) <= high
    }

    /// Waits until at most `high` bytes are queued or being written.
    pub(crate) async fn below(&self, high: usize) {
        // Nearly always so: then no waiter is set up (a lock of the waiters' list, twice).
        if self.at_most(high) {
            return;
        }
        loop {
            let drained = self.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            if self.at_most(high) {
                return;
            }
            drained.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], limit: usize, overlong: Overlong) -> Vec<String> {
        let mut reader = BufReader::with_capacity(16, input);
        let mut line = Vec::new();
        let mut out = Vec::new();
        loop {
            match read_line(&mut reader, &mut line, limit, overlong)
                .await
                .unwrap()
            {
                Line::End => return out,
                Line::TooLong(n) => {
                    out.push(format!("too long: {n}"));
                    if overlong == Overlong::Stop {
                        return out;
                    }
                }
                Line::Complete => out.push(String::from_utf8_lossy(line.trim_ascii()).into()),
            }
        }
    }

    #[tokio::test]
    async fn a_buffered_line_is_taken_as_read_line_reads_it() {
        let input = format!("a\nbb\n\n{}\nccc\n{}\nd\ne", "x".repeat(11), "y".repeat(30));
        for capacity in [4, 16, 64] {
            let mut reader = BufReader::with_capacity(capacity, input.as_bytes());
            let mut line = Vec::new();
            let mut out = Vec::new();
            let mut quick = 0;
            loop {
                let read = if buffered_line(&mut reader, &mut line, 10) {
                    quick += 1;
                    Line::Complete
                } else {
                    read_line(&mut reader, &mut line, 10, Overlong::Skip)
                        .await
                        .unwrap()
                };
                match read {
                    Line::End => break,
                    Line::TooLong(n) => out.push(format!("too long: {n}")),
                    Line::Complete => out.push(String::from_utf8_lossy(&line).into_owned()),
                }
            }
            let mut reader = BufReader::with_capacity(capacity, input.as_bytes());
            let mut expected = Vec::new();
            loop {
                match read_line(&mut reader, &mut line, 10, Overlong::Skip)
                    .await
                    .unwrap()
                {
                    Line::End => break,
                    Line::TooLong(n) => expected.push(format!("too long: {n}")),
                    Line::Complete => expected.push(String::from_utf8_lossy(&line).into_owned()),
                }
            }
            assert_eq!(out, expected, "capacity {capacity}");
            assert!(
                capacity < 64 || quick > 3,
                "{quick} lines taken from the buffer"
            );
        }
    }

    #[tokio::test]
    async fn an_outbox_gives_its_lines_in_order_a_batch_at_a_time() {
        let outbox = Outbox::default();
        outbox.push("{\"id\":1}");
        // An empty message (a cancelled request's end) is no line.
        outbox.push("");
        outbox.push("{\"id\":2}");
        assert!(!outbox.at_most(17) && outbox.at_most(18));
        let mut batch = Vec::new();
        assert!(outbox.take(&mut batch).await);
        assert_eq!(batch, b"{\"id\":1}\n{\"id\":2}\n");
        // Counted until written.
        assert!(!outbox.at_most(17));
        outbox.written(batch.len(), 0);
        assert!(outbox.at_most(0));
        batch.clear();
        // A line sent while the writer waits wakes it; after the end, what is queued is
        // still taken, then nothing.
        let wait = async {
            let mut batch = Vec::new();
            assert!(outbox.take(&mut batch).await);
            batch
        };
        let send = async {
            tokio::task::yield_now().await;
            outbox.push("3");
            outbox.push("4");
            outbox.end();
        };
        let (got, ()) = tokio::join!(wait, send);
        assert_eq!(got, b"3\n4\n");
        assert!(!outbox.take(&mut batch).await);
        assert!(batch.is_empty());
    }

    #[tokio::test]
    async fn a_refusing_outbox_drops_new_lines_and_writes_the_queued() {
        let outbox = Outbox::default();
        outbox.push("a");
        assert!(!outbox.is_refused());
        outbox.refuse();
        outbox.refused().await;
        assert!(outbox.is_refused());
        outbox.push("b");
        let mut batch = Vec::new();
        assert!(outbox.take(&mut batch).await);
        assert_eq!(batch, b"a\n");
        batch.clear();
        // Refused, the writer ends without the sender's end.
        assert!(!outbox.take(&mut batch).await);
        // Only what was queued is counted.
        assert!(!outbox.at_most(1) && outbox.at_most(2));
    }

    #[tokio::test]
    async fn a_long_line_is_skipped_or_stops_the_reading_at_the_limit() {
        let input = format!("short\n{}\nnext\n", "x".repeat(100));
        assert_eq!(
            lines(input.as_bytes(), 10, Overlong::Skip).await,
            ["short", "too long: 101", "next"]
        );
        // Stop reports while the line is still coming: with no end at all, too.
        let endless = format!("short\n{}", "x".repeat(1000));
        let got = lines(endless.as_bytes(), 10, Overlong::Stop).await;
        assert_eq!(got[0], "short");
        assert!(
            got[1].starts_with("too long: ") && got.len() == 2,
            "{got:?}"
        );
        let n: usize = got[1]["too long: ".len()..].parse().unwrap();
        assert!((11..=16 + 10).contains(&n), "{n}");
    }
}
