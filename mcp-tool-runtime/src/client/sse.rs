//! Server-sent events read from a response's bytes as they arrive (the WHATWG event-stream
//! format): lines ended by LF, CR or CRLF, even when a chunk ends between the two; `data`
//! joined by LF; `id` and `retry` kept across reconnections; comments skipped. Bytes are
//! kept until a line is whole, so a character split between two chunks arrives intact. An
//! event larger than the limit is dropped as it comes and reported with its size.

use std::time::Duration;

/// The longest `retry:` of a server that is honoured (ms): a server cannot park the client.
const MAX_RETRY_MS: u64 = 60_000;

/// What one finished event gave.
#[derive(Debug, PartialEq)]
pub(super) enum Event {
    /// Its data.
    Data(String),
    /// It was larger than the limit (at least this many bytes) and was dropped.
    TooLarge(usize),
}

/// The reader of one logical stream: its decoding state, and the last event id and `retry`
/// that survive a reconnection.
pub(super) struct Events {
    limit: usize,
    /// The line being read (bytes, until its end is seen).
    line: Vec<u8>,
    /// How many bytes the current line has had, kept or not.
    line_seen: usize,
    /// The previous chunk ended with CR: a LF that starts the next one belongs to it.
    after_cr: bool,
    /// The data of the event being read.
    data: Vec<u8>,
    has_data: bool,
    /// The event being read went over the limit (it was reported): the rest of it is dropped.
    skipping: bool,
    /// The last event id the server gave (sent back as `Last-Event-ID`).
    pub(super) last_id: Option<String>,
    /// The server's last `retry:` (how long to wait before reconnecting).
    pub(super) retry: Option<Duration>,
}

impl Events {
    pub(super) fn new(limit: usize) -> Self {
        Events {
            limit,
            line: Vec::new(),
            line_seen: 0,
            after_cr: false,
            data: Vec::new(),
            has_data: false,
            skipping: false,
            last_id: None,
            retry: None,
        }
    }

    /// A new connection: what was half read is gone; the id and `retry` stay.
    pub(super) fn reconnected(&mut self) {
        self.line.clear();
        self.line_seen = 0;
        self.after_cr = false;
        self.data.clear();
        self.has_data = false;
        self.skipping = false;
    }

    /// Reads a chunk; `each` gets every event it finishes, and an event's size as soon as it
    /// is over the limit.
    pub(super) fn feed(&mut self, mut bytes: &[u8], each: &mut impl FnMut(Event)) {
        if self.after_cr && bytes.first() == Some(&b'\n') {
            bytes = &bytes[1..];
        }
        self.after_cr = false;
        while let Some(end) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.keep(&bytes[..end], each);
            let cr = bytes[end] == b'\r';
            bytes = &bytes[end + 1..];
            if cr {
                match bytes.first() {
                    Some(b'\n') => bytes = &bytes[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            self.line_ended(each);
        }
        self.keep(bytes, each);
    }

    /// Adds part of a line; the event is reported and dropped once it passes the limit.
    fn keep(&mut self, part: &[u8], each: &mut impl FnMut(Event)) {
        self.line_seen += part.len();
        if self.skipping {
            return;
        }
        let size = self.data.len() + self.line.len() + part.len();
        if size > self.limit {
            self.skipping = true;
            self.line = Vec::new();
            self.data = Vec::new();
            self.has_data = false;
            each(Event::TooLarge(size));
        } else {
            self.line.extend_from_slice(part);
        }
    }

    fn line_ended(&mut self, each: &mut impl FnMut(Event)) {
        if std::mem::take(&mut self.line_seen) == 0 {
            // A blank line ends the event.
            if std::mem::take(&mut self.skipping) {
                self.has_data = false;
            } else {
                self.dispatch(each);
            }
            return;
        }
        if self.skipping {
            return;
        }
        let line = std::mem::take(&mut self.line);
        if line[0] != b':' {
            let (field, value) = match line.iter().position(|&b| b == b':') {
                Some(at) => {
                    let value = &line[at + 1..];
                    (&line[..at], value.strip_prefix(b" ").unwrap_or(value))
                }
                None => (&line[..], &[][..]),
            };
            self.field(field, value);
        }
        // The buffer is reused for the next line unless a long one made it large.
        if line.capacity() <= 64 * 1024 {
            self.line = line;
            self.line.clear();
        }
    }

    fn field(&mut self, field: &[u8], value: &[u8]) {
        match field {
            b"data" => {
                // (The line was within the limit with the data before it, so this is too.)
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"id" if !value.contains(&0) => {
                self.last_id = Some(String::from_utf8_lossy(value).trim().to_owned());
            }
            b"retry" => {
                if let Some(ms) = std::str::from_utf8(value)
                    .ok()
                    .and_then(|v| v.trim().parse::<u64>().ok())
                {
                    self.retry = Some(Duration::from_millis(ms.min(MAX_RETRY_MS)));
                }
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, each: &mut impl FnMut(Event)) {
        if self.has_data && !self.data.is_empty() {
            // (An event of empty data, such as a stream's priming event, carries no message.)
            let data = std::mem::take(&mut self.data);
            each(Event::Data(match String::from_utf8(data) {
                Ok(text) => text,
                Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
            }));
        }
        self.has_data = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(limit: usize, chunks: &[&[u8]]) -> (Vec<Event>, Events) {
        let mut events = Events::new(limit);
        let mut out = Vec::new();
        for chunk in chunks {
            events.feed(chunk, &mut |e| out.push(e));
        }
        (out, events)
    }

    #[test]
    fn a_character_split_between_chunks_arrives_whole() {
        let text = "data: {\"text\":\"zażółć\"}\n\n".as_bytes();
        // Every split point, including inside each two-byte character.
        for at in 0..text.len() {
            let (events, _) = read(1024, &[&text[..at], &text[at..]]);
            assert_eq!(
                events,
                vec![Event::Data("{\"text\":\"zażółć\"}".into())],
                "split at byte {at}"
            );
        }
    }

    #[test]
    fn lines_end_with_lf_cr_or_crlf_even_split_between_chunks() {
        let (events, state) = read(
            1024,
            &[
                b"id: 7\r",
                b"\ndata: a\r",
                b"data: b\r\n\r",
                b"\n: comment\ndata:c\n\n",
            ],
        );
        assert_eq!(
            events,
            vec![Event::Data("a\nb".into()), Event::Data("c".into())]
        );
        assert_eq!(state.last_id.as_deref(), Some("7"));
    }

    #[test]
    fn an_event_over_the_limit_is_dropped_with_its_size_and_the_next_one_read() {
        let big = format!("data: {}\n\n", "x".repeat(100));
        let chunks: Vec<&[u8]> = big
            .as_bytes()
            .chunks(7)
            .chain([&b"data: small\n\n"[..]])
            .collect();
        let (events, state) = read(64, &chunks);
        // Reported as soon as it passed the limit, with what it had then.
        assert!(
            matches!(events[..], [Event::TooLarge(65..=71), Event::Data(ref s)] if s == "small"),
            "{events:?}"
        );
        // Nothing of the large event was kept.
        assert!(state.line.capacity() <= 64 * 1024 && state.data.is_empty());
        // Many data lines that are each short but together too long.
        let many = "data: 0123456789\n".repeat(10) + "\n";
        let (events, _) = read(64, &[many.as_bytes()]);
        assert!(
            matches!(events[..], [Event::TooLarge(n)] if n >= 64),
            "{events:?}"
        );
    }

    #[test]
    fn retry_is_bounded_and_an_event_without_data_is_not_dispatched() {
        let (events, state) = read(
            1024,
            &[b"id: 1\ndata\n\nretry: 99999999\nid: 2\ndata: \n\ndata: x\n\n"],
        );
        // `data` with no colon, or an empty value: no message (a priming event is such).
        assert_eq!(events, vec![Event::Data("x".into())]);
        assert_eq!(state.retry, Some(Duration::from_millis(MAX_RETRY_MS)));
        assert_eq!(state.last_id.as_deref(), Some("2"));
    }
}
