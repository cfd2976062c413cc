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

/// Reads one line into `line` (cleared first), keeping at most `limit` bytes: the rest of a
/// longer line is read and dropped.
pub(crate) async fn read_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    line: &mut Vec<u8>,
    limit: usize,
) -> io::Result<Line> {
    line.clear();
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
        let (chunk, done) = match memchr(available) {
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
        if done {
            return Ok(if seen > limit.saturating_add(1) {
                Line::TooLong(seen)
            } else {
                Line::Complete
            });
        }
    }
}

fn memchr(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}
