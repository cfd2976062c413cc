//! Newline-delimited framing, read with a size limit: the stdio transport reads its client's
//! requests with it, and the client its server's messages. A line longer than the limit is
//! read and dropped as it comes, never kept whole.

use std::io;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

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
