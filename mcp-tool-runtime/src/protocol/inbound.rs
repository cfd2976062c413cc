//! An incoming line, read once ([`read_line`]): its envelope, its params and their `_meta`
//! walked in one pass ([`super::walk`]), each byte once, the walk checking the text as serde
//! would, into a [`Request`] (or a response to a request of ours). A line the walk is unsure
//! of (a key written with an escape, a member given twice, text that is not JSON or not
//! UTF-8) is read by serde ([`jsonrpc::parse`]), as it always was: the two read any line
//! alike, and only serde words the errors.

use std::borrow::Cow;

use super::jsonrpc::{self, Envelope, Message};
use super::meta::MetaFields;
use super::request::{Members, Request};
use super::walk::{JsonText, Object, Seen};

/// An incoming line, read once: a request or a notification (a [`Request`] without an id),
/// or a response to a request of ours.
#[allow(clippy::large_enum_variant)] // one per line, on the stack, moved only by reference
pub(crate) enum Inbound<'a> {
    Request(Request<'a>),
    Response {
        id: JsonText<'a>,
        outcome: Result<JsonText<'a>, JsonText<'a>>,
    },
}

impl<'a> From<Message<'a>> for Inbound<'a> {
    /// Reads a message's request, its params walked.
    fn from(message: Message<'a>) -> Self {
        match message {
            Message::Request { id, method, params } => {
                Inbound::Request(Request::read(Some(id), method, params))
            }
            Message::Notification { method, params } => {
                Inbound::Request(Request::read(None, method, params))
            }
            Message::Response { id, outcome } => Inbound::Response { id, outcome },
        }
    }
}

/// Reads one incoming line, or gives the error response to send back: walked in one pass
/// when the walk can read it, else parsed by serde ([`jsonrpc::parse`]) and its params read
/// then. Both read any line alike; only serde words the errors.
pub(crate) fn read_line(line: &[u8]) -> Result<Inbound<'_>, String> {
    match walk_line(line) {
        Some(walked) => walked.inbound(),
        None => jsonrpc::parse(line).map(Inbound::from),
    }
}

/// What a walk of a line found: its envelope, and the members of its params and the fields
/// of their `_meta` when the walk could read those.
struct Walked<'a> {
    envelope: Envelope<'a>,
    members: Option<Members<'a>>,
    fields: Option<MetaFields<'a>>,
}

impl<'a> Walked<'a> {
    /// The message the line holds, read (or the error response to send back). Inlined, so
    /// that the message is built in [`read_line`]'s result, not built and then copied there.
    #[inline(always)]
    fn inbound(self) -> Result<Inbound<'a>, String> {
        let Walked {
            envelope,
            members,
            fields,
        } = self;
        Ok(match envelope.message()? {
            Message::Request { id, method, params } => Inbound::Request(Request::read_walked(
                Some(id),
                method,
                params,
                members,
                fields,
            )),
            Message::Notification { method, params } => {
                Inbound::Request(Request::read_walked(None, method, params, members, fields))
            }
            Message::Response { id, outcome } => Inbound::Response { id, outcome },
        })
    }
}

/// The envelope's keys, found by comparing them (numbered so in [`walk_line`]).
const ENVELOPE: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];

/// [`read_line`] by a walk: `None` when the walk leaves the line to serde (text that is not
/// UTF-8 or not JSON, a key written with an escape, a member given twice, a text field that is
/// no plain string).
fn walk_line(line: &[u8]) -> Option<Walked<'_>> {
    let mut walk = Object::line(std::str::from_utf8(line).ok()?)?;
    let mut envelope = Envelope::default();
    let mut members = None;
    let mut fields = None;
    let mut seen = Seen::default();
    while let Some(key) = walk.key_of(&ENVELOPE) {
        let Some(n) = key.known else {
            if key.escaped {
                return None;
            }
            // Skipped by the next key.
            continue;
        };
        seen.first(n)?;
        match n {
            0 => envelope.jsonrpc = plain_or(&mut walk, "2.0")?,
            1 => envelope.id = Some(walk.value()?),
            2 => envelope.method = plain_or(&mut walk, "tools/call")?,
            3 => {
                let value = match walk.nested() {
                    Some(mut inner) => {
                        let mut walked = Members::default();
                        fields = Members::walk_object(&mut inner, &mut walked)?;
                        members = Some(walked);
                        walk.after(&inner)?
                    }
                    None => walk.value()?,
                };
                envelope.params = Some(value);
            }
            4 => envelope.result = Some(walk.value()?),
            _ => envelope.error = Some(walk.value()?),
        }
    }
    if !walk.ended() {
        return None;
    }
    Some(Walked {
        envelope,
        members,
        fields,
    })
}

/// The value the walk is at, read as serde reads an `Option<Cow<str>>` when that is plain
/// ([`JsonText::plain_text`]): the string `common` found by comparing it, any other value
/// scanned. `None` when the walk broke or serde is to read the value. Inlined, so that
/// `common` is compared as a constant.
#[inline(always)]
fn plain_or<'a>(walk: &mut Object<'a>, common: &'static str) -> Option<Option<Cow<'a, str>>> {
    match walk.value_string(common) {
        Some(found) => found.map(|_| Some(Cow::Borrowed(common))),
        None => walk.value()?.plain_text(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a reading of a line gave, written out whole.
    fn described(read: Result<Inbound<'_>, String>) -> String {
        match read {
            Ok(Inbound::Request(r)) => format!("{r:?}"),
            Ok(Inbound::Response { id, outcome }) => format!("response {id:?} {outcome:?}"),
            Err(response) => format!("refused {response}"),
        }
    }

    /// The walk reads `line` as serde (and the params' walk after it) reads it, or leaves it
    /// to serde; returns whether the walk read it.
    fn read_alike(line: &[u8]) -> bool {
        let serde = described(jsonrpc::parse(line).map(Inbound::from));
        match walk_line(line) {
            Some(walked) => {
                let walked = walked.inbound();
                assert_eq!(
                    described(walked),
                    serde,
                    "{}",
                    String::from_utf8_lossy(line)
                );
                true
            }
            None => false,
        }
    }

    const LINES: [&str; 12] = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#,
        r#"{"jsonrpc":"2.0","id":"x-1","method":"tools/call","params":{"name":"create_user","arguments":{"email":"jane.doe@example.com","name":"Jane Doe","tags":["a","\u00e9\n"],"age":-1.5e+3,"ok":true,"no":false,"none":null}}}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"0"},"progressToken":"p"}}}"#,
        r#" { "jsonrpc" : "2.0" , "method" : "notifications/initialized" } "#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"late"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"ok"}]}}"#,
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"url":{}}},"clientInfo":{"name":"c","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"file:///a%20b","x":[[],{},[{}],0,0.5,1E9]}}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":9,"method":"tasks/get","params":{"taskId":"t\"1","_meta":{"io.modelcontextprotocol/logLevel":"info"}}}"#,
        r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"a","task":{"ttl":5},"inputResponses":{"k":{"action":"accept"}},"requestState":"s"}}"#,
    ];

    #[test]
    fn the_walk_reads_common_lines_itself_and_as_serde_does() {
        for line in LINES {
            assert!(read_alike(line.as_bytes()), "the walk left {line} to serde");
        }
        for line in [
            // Shapes the envelope refuses, worded as serde's path words them.
            r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{}}"#,
            r#"{"jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":null,"method":null,"id":null}"#,
            // Keys and values near the ones found by comparing them.
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/callx","params":{"taskIdx":1,"tas":2,"task":3,"name":"tools/call"}}"#,
            r#"{"jsonrpc" :"2.0" ,"id":1,"method" : "tools/call" ,"jsonrpcx":1,"i":2,"":3,"params":{"argument":{},"arguments":[], "_met":1,"":{}}}"#,
            r#"{"jsonrpc":"2.0 ","id":1,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.","id":1,"method":"tools/cal"}"#,
            r#"{"jsonrpc":"2.0","id":"1","method":"tools/call","params":{"name":"tools/call","taskId":"t","inputResponses":{},"requestState":"s","uri":"u"}}"#,
        ] {
            assert!(read_alike(line.as_bytes()), "the walk left {line} to serde");
        }
        for line in [
            // Left to serde: what it refuses, and what only it reads.
            &br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":01}}"#[..],
            br#"{"jsonrpc":"2.0","id":1,"method":"m"} x"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"m","method":"n"}"#,
            br#"{"jsonrpc":"2\u002e0","method":"m"}"#,
            br#"{"jsonrpc":"2.0","method":"m","params":{"a":"\x"}}"#,
            br#"{"jsonrpc":"2.0","method":"m","params":{"a":"\u12g4"}}"#,
            b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"a\":\"\x01\"}}",
            b"{\"jsonrpc\":\"2.0\",\"method\":\"caf\xe9\"}",
            br#"{"jsonrpc":"2.0","method":"m","params":{"a":[1,]}}"#,
            br#"{"jsonrpc":"2.0","method":"m","params":{"a":-}}"#,
            br#"{"jsonrpc":"2.0","method":"m","params":{"a":1.}}"#,
            br#"{"jsonrpc":"2.0","method":"m","params":{"a":1e}}"#,
            br#"{"jsonrpc":"2.0","method":"m","params":{"a":tru}}"#,
            br#"[{"jsonrpc":"2.0","method":"m"}]"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\u0061me":"a"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"a"}}"#,
            br#"{"jsonrpc":"2.0","jsonrpc":"2.0","method":"m"}"#,
            br#"{"json\u0072pc":"2.0","method":"m"}"#,
            br#"{"jsonrpc":"2.0"x,"method":"m"}"#,
            br#"{"jsonrpc":"2.0\n","id":1,"method":"tools/call\n"}"#,
            br#"{"jsonrpc":"2.0","method":"tools/call"1}"#,
            br#"{"jsonrpc":"2.0","method":"tools/call","params":{"task":1,"task":2}}"#,
        ] {
            assert!(!read_alike(line), "{}", String::from_utf8_lossy(line));
        }
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{}1{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert!(!read_alike(deep.as_bytes()));
    }

    /// A byte that is not UTF-8, or the start of a character cut short, anywhere in a line:
    /// the walk leaves it to serde.
    #[test]
    fn lines_that_are_not_utf8_are_left_to_serde() {
        for line in &LINES[..3] {
            for at in 0..=line.len() {
                for bad in [&b"\xff"[..], b"\xc3", b"\xe2\x82", b"\xc3\xa9\x80"] {
                    let mut bytes = line.as_bytes().to_vec();
                    bytes.splice(at..at, bad.iter().copied());
                    assert!(!read_alike(&bytes), "{}", String::from_utf8_lossy(&bytes));
                }
            }
        }
    }

    /// Lines a byte or a few away from the common ones: the walk must never take text serde
    /// refuses, nor read any line otherwise than serde does.
    #[test]
    fn the_walk_reads_mangled_lines_as_serde_does() {
        const BYTES: &[u8] = b"{}[]\":,\\ \t\n0123456789-+.eEuatrfnl\x01\x1f\x7f\xc3\xa9\xff/";
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut walked = 0;
        for round in 0..60_000 {
            let mut line = LINES[round % LINES.len()].as_bytes().to_vec();
            for _ in 0..1 + next(3) {
                let at = next(line.len() + 1);
                let byte = BYTES[next(BYTES.len())];
                match next(4) {
                    0 if at < line.len() => line[at] = byte,
                    1 if at < line.len() => {
                        line.remove(at);
                    }
                    2 => line.insert(at, byte),
                    _ => {
                        let end = (at + next(8)).min(line.len());
                        let copy = line[at.min(end)..end].to_vec();
                        line.splice(at.min(end)..at.min(end), copy);
                    }
                }
            }
            walked += usize::from(read_alike(&line));
        }
        // Most mangled lines are still read by the walk (the test is not all left to serde).
        assert!(walked > 10_000, "the walk read {walked}");
    }
}
