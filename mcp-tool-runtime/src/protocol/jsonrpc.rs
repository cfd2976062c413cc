//! JSON-RPC 2.0 framing: reading one message in two stages (the envelope borrowed from the
//! line, `params` kept as raw JSON until a handler parses it into its own type), and writing
//! responses, notifications and requests around a serialized payload.

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::{RpcError, code};
use super::walk::JsonText;

/// One incoming message's envelope, borrowed from the line it was read from (by serde, or by
/// the walk of [`super::inbound::read_line`]); [`Envelope::message`] checks its shape.
#[derive(Deserialize, Default)]
pub(crate) struct Envelope<'a> {
    #[serde(borrow, default, deserialize_with = "text")]
    pub(crate) jsonrpc: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "raw_present")]
    pub(crate) id: Option<JsonText<'a>>,
    #[serde(borrow, default, deserialize_with = "text")]
    pub(crate) method: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "raw_present")]
    pub(crate) params: Option<JsonText<'a>>,
    #[serde(borrow, default, deserialize_with = "raw_present")]
    pub(crate) result: Option<JsonText<'a>>,
    #[serde(borrow, default, deserialize_with = "raw_present")]
    pub(crate) error: Option<JsonText<'a>>,
}

/// Keeps a present field even when it is `null` (so `"id": null` is not taken for a missing id).
fn raw_present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<JsonText<'de>>, D::Error> {
    JsonText::deserialize(d).map(Some)
}

/// A string, or `null` (none), borrowed from the line when it has no escape (serde's own
/// `Option<Cow<str>>` always copies it); refused as serde refuses any other value for it.
fn text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Cow<'de, str>>, D::Error> {
    struct Text;
    impl<'de> serde::de::Visitor<'de> for Text {
        type Value = Option<Cow<'de, str>>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a string")
        }

        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_str(self)
        }

        fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
            Ok(Some(Cow::Borrowed(s)))
        }

        fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
            Ok(Some(Cow::Owned(s.to_owned())))
        }

        fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
            Ok(Some(Cow::Owned(s)))
        }
    }
    d.deserialize_option(Text)
}

/// Reads a line's envelope. Text checked once as UTF-8 is read without checking each string
/// and raw value again (as bytes are); bytes that are not UTF-8 are read as bytes, for
/// serde's error.
fn incoming(line: &[u8]) -> Result<Envelope<'_>, serde_json::Error> {
    match std::str::from_utf8(line) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(line),
    }
}

/// What an incoming line turned out to be.
pub(crate) enum Message<'a> {
    Request {
        id: JsonText<'a>,
        method: Cow<'a, str>,
        params: Option<JsonText<'a>>,
    },
    Notification {
        method: Cow<'a, str>,
        params: Option<JsonText<'a>>,
    },
    Response {
        id: JsonText<'a>,
        outcome: Result<JsonText<'a>, JsonText<'a>>,
    },
}

/// Parses one line into a message, or the error response to send back.
pub(crate) fn parse(line: &[u8]) -> Result<Message<'_>, String> {
    // serde would also read a struct from a JSON array: only an object is a message.
    if line.trim_ascii_start().first() != Some(&b'{') {
        return Err(bad_message(line, None));
    }
    match incoming(line) {
        Ok(envelope) => envelope.message(),
        Err(e) => Err(bad_message(line, Some(&e))),
    }
}

impl<'a> Envelope<'a> {
    /// The message the envelope holds, or the error response to send back: -32600 for one of
    /// the wrong shape. Inlined, so that what its caller knows of the fields already (a
    /// walk that found `"2.0"` by comparing it) is not checked again.
    #[inline(always)]
    pub(crate) fn message(self) -> Result<Message<'a>, String> {
        let invalid = |id: Option<JsonText<'_>>, why: &str| {
            error_response(
                id.filter(|i| valid_id(*i)).map_or("null", JsonText::get),
                &RpcError::new(code::INVALID_REQUEST, format!("Invalid Request: {why}")),
            )
        };
        if self.jsonrpc.as_deref() != Some("2.0") {
            return Err(invalid(self.id, "`jsonrpc` must be \"2.0\""));
        }
        if let Some(id) = self.id
            && !valid_id(id)
        {
            return Err(invalid(None, "`id` must be a string or an integer"));
        }
        if let Some(p) = self.params {
            let first = p.get().as_bytes().first();
            if first != Some(&b'{') {
                return Err(invalid(self.id, "`params` must be an object"));
            }
        }
        match (self.method, self.id) {
            (Some(method), Some(id)) => Ok(Message::Request {
                id,
                method,
                params: self.params,
            }),
            (Some(method), None) => Ok(Message::Notification {
                method,
                params: self.params,
            }),
            (None, Some(id)) => match (self.result, self.error) {
                (Some(r), None) => Ok(Message::Response { id, outcome: Ok(r) }),
                (None, Some(e)) => Ok(Message::Response {
                    id,
                    outcome: Err(e),
                }),
                _ => Err(invalid(
                    Some(id),
                    "a response has exactly one of `result` and `error`",
                )),
            },
            (None, None) => Err(invalid(None, "missing `method`")),
        }
    }
}

/// A response ready to send, with the code of the error it carries, if any: a transport that
/// gives an error a status of its own (HTTP, for 2026-07-28) reads the code here, never the
/// text.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) text: String,
    pub(crate) error: Option<RpcError>,
}

impl Reply {
    /// A result response written already.
    pub(crate) fn result(text: String) -> Reply {
        Reply { text, error: None }
    }

    /// The error response to request `id`.
    pub(crate) fn error(id: &str, error: &RpcError) -> Reply {
        Reply {
            text: error_response(id, error),
            error: Some(error.clone()),
        }
    }

    /// The response to request `id`: its result, or its error.
    pub(crate) fn of<T: Serialize>(id: &str, outcome: Result<T, RpcError>) -> Reply {
        match outcome {
            Ok(result) => Reply::result(result_response(id, &result)),
            Err(e) => Reply::error(id, &e),
        }
    }
}

/// A JSON-RPC id is a string or an integer (MCP forbids `null`).
fn valid_id(id: JsonText<'_>) -> bool {
    let s = id.get();
    s.starts_with('"') || (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit() || b == b'-'))
}

/// The response to a line that is not a valid message: -32700 when it is not JSON at all,
/// -32600 when it is JSON of the wrong shape.
fn bad_message(line: &[u8], e: Option<&serde_json::Error>) -> String {
    match serde_json::from_slice::<Value>(line) {
        Err(e) => error_response(
            "null",
            &RpcError::new(code::PARSE_ERROR, format!("Parse error: {e}")),
        ),
        Ok(v) => {
            let id = v
                .get("id")
                .filter(|i| i.is_string() || i.is_i64() || i.is_u64())
                .map_or_else(|| "null".to_owned(), Value::to_string);
            let why = if v.is_array() {
                "batches are not supported".to_owned()
            } else if let (true, Some(e)) = (v.is_object(), e) {
                e.to_string()
            } else {
                "a message must be a JSON object".to_owned()
            };
            error_response(
                &id,
                &RpcError::new(code::INVALID_REQUEST, format!("Invalid Request: {why}")),
            )
        }
    }
}

/// Parses a request's params into a handler's own type; a missing `params` is `None`.
pub(crate) fn parse_params<'a, T: Deserialize<'a>>(
    params: Option<JsonText<'a>>,
) -> Result<Option<T>, RpcError> {
    match params {
        None => Ok(None),
        Some(p) => serde_json::from_str(p.get())
            .map(Some)
            .map_err(|e| RpcError::new(code::INVALID_PARAMS, format!("Invalid params: {e}"))),
    }
}

/// The response to a request: its result, or its error.
#[cfg(feature = "client")]
pub(crate) fn response<T: Serialize>(id: &str, outcome: Result<T, RpcError>) -> String {
    match outcome {
        Ok(result) => result_response(id, &result),
        Err(error) => error_response(id, &error),
    }
}

/// `{"jsonrpc":"2.0","id":ID,"<member>":` + the payload + `}`, the payload written straight
/// into the frame, whose buffer starts with room for `payload` bytes of it.
fn frame<T: Serialize + ?Sized>(
    id: &str,
    member: &str,
    payload: &T,
    room: usize,
) -> Result<String, serde_json::Error> {
    let mut out = Vec::with_capacity(32 + id.len() + room);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.as_bytes());
    out.push(b',');
    out.push(b'"');
    out.extend_from_slice(member.as_bytes());
    out.extend_from_slice(b"\":");
    serde_json::to_writer(&mut out, payload)?;
    out.push(b'}');
    // serde_json writes UTF-8, and `id` and `member` are text.
    Ok(String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// Serializes a success response with the id as received, writing `result` straight into it.
pub(crate) fn result_response<T: Serialize + ?Sized>(id: &str, result: &T) -> String {
    sized_result_response(id, result, 224)
}

/// [`result_response`] for a result of about `size` bytes: the buffer is allocated once.
pub(crate) fn sized_result_response<T: Serialize + ?Sized>(
    id: &str,
    result: &T,
    size: usize,
) -> String {
    frame(id, "result", result, size).unwrap_or_else(|e| {
        error_response(
            id,
            &RpcError::new(
                code::INTERNAL_ERROR,
                format!("cannot serialize the result: {e}"),
            ),
        )
    })
}

/// Serializes a success response whose result is JSON text already.
pub(crate) fn raw_result_response(id: &str, result: &str) -> String {
    let mut s = String::with_capacity(result.len() + id.len() + 32);
    s.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
    s.push_str(id);
    s.push_str(",\"result\":");
    s.push_str(result);
    s.push('}');
    s
}

/// Appends `s` as a JSON string, escaped as serde_json escapes it: `"` and `\\`, the control
/// characters as `\\b`, `\\t`, `\\n`, `\\f`, `\\r` or `\\u00XX`, nothing else.
///
/// Byte by byte into room made for it first: the text copy of structured content has an
/// escape every few bytes, where copying the runs between them (as serde_json does) costs
/// more than the bytes, and pushing each byte checks the capacity each time. The room is
/// that of two bytes a byte (a quote or backslash escaped), grown at a control character
/// escaped as six (rare) for six bytes each byte after it.
pub(crate) fn push_json_string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    let start = out.len();
    out.resize(start + 2 * bytes.len() + 2, 0);
    out[start] = b'"';
    // Where the next byte goes, and the next byte to write.
    let (mut w, mut i) = (start + 1, 0);
    loop {
        let (read, written) = escape_until_control(&bytes[i..], out, w);
        (i, w) = (i + read, written);
        let Some(&b) = bytes.get(i) else { break };
        // Six bytes, four more than counted: when the room is short, room for six for
        // each byte left (once, so never more than six bytes a byte in all).
        let left = bytes.len() - i;
        if out.len() < w + 2 * left + 5 {
            out.resize(out.len() + 4 * left, 0);
        }
        out[w..w + 4].copy_from_slice(b"\\u00");
        out[w + 4] = HEX[usize::from(b >> 4)];
        out[w + 5] = HEX[usize::from(b & 0xf)];
        w += 6;
        i += 1;
    }
    out[w] = b'"';
    out.truncate(w + 1);
}

/// Escapes `src` into `dst` from `w` on, up to its first control character escaped as
/// `\\u00XX` (for which `dst` may have no room): how many bytes were read, and where the
/// next byte goes. `dst` has room for two bytes a byte of `src` and one more.
///
/// Eight bytes at a time: the eight are written as they are, and the write moves on past
/// those before the first that needs an escape (found in the eight at once), which is
/// then escaped; the bytes written past it are written again. Through a slice, not the
/// vector: a byte stored through the vector could change its length, which would then be
/// read again for each byte.
fn escape_until_control(src: &[u8], dst: &mut [u8], mut w: usize) -> (usize, usize) {
    let mut i = 0;
    while let Some(eight) = src.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        // Room: at least eight bytes are left, two bytes each.
        dst[w..w + 8].copy_from_slice(eight);
        let plain = first_to_escape(u64::from_le_bytes(*eight));
        w += plain;
        i += plain;
        if plain == 8 {
            continue;
        }
        let b = src[i];
        let escape = ESCAPES[usize::from(b)];
        if escape == b'u' {
            return (i, w);
        }
        dst[w] = b'\\';
        dst[w + 1] = escape;
        w += 2;
        i += 1;
    }
    for (j, &b) in src[i..].iter().enumerate() {
        let escape = ESCAPES[usize::from(b)];
        if escape == 0 {
            dst[w] = b;
            w += 1;
        } else if escape == b'u' {
            return (i + j, w);
        } else {
            dst[w] = b'\\';
            dst[w + 1] = escape;
            w += 2;
        }
    }
    (src.len(), w)
}

/// How many of the eight bytes of `x` (the first in its lowest byte) come before the first
/// that JSON escapes (a control character, `"` or `\\`); 8 when none does.
///
/// Each test sets the high bit of the bytes it finds: exactly for the lowest one found (a
/// subtraction borrows only upwards), perhaps also for some above it, so the lowest bit
/// set is the first byte to escape.
fn first_to_escape(x: u64) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let quote = x ^ (ONES * u64::from(b'"'));
    let backslash = x ^ (ONES * u64::from(b'\\'));
    let control = x.wrapping_sub(ONES * 0x20) & !x;
    let quote = quote.wrapping_sub(ONES) & !quote;
    let backslash = backslash.wrapping_sub(ONES) & !backslash;
    ((control | quote | backslash) & HIGH).trailing_zeros() as usize / 8
}

/// For each byte, what follows the backslash of its escape in a JSON string; 0 for a byte
/// written as it is.
const ESCAPES: [u8; 256] = {
    let mut table = [0; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// Serializes an error response with the id as received (`null` when unknown).
pub(crate) fn error_response(id: &str, error: &RpcError) -> String {
    // An error object always serializes (its `data` is a `Value`).
    frame(id, "error", error, 224).unwrap_or_default()
}

/// How many bytes the JSON text of a value takes, counted without writing it.
pub(crate) fn json_len<T: Serialize + ?Sized>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// JSON text of a value, written through serde_json's byte writer (faster than `Display`,
/// which goes through `fmt::Write`).
pub(crate) fn json_string<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(128);
    match serde_json::to_writer(&mut out, value) {
        // serde_json writes UTF-8.
        Ok(()) => String::from_utf8(out).unwrap_or_default(),
        // Only a map with non-string keys fails, which no value here has.
        Err(e) => {
            tracing::error!(error = %e, "cannot serialize a value as JSON");
            "null".to_owned()
        }
    }
}

/// A notification or request of the server's: `{"jsonrpc":"2.0",[id,]method,params}`.
#[derive(Serialize)]
struct ServerMessage<'a, P> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<u64>,
    method: &'a str,
    params: &'a P,
}

/// Serializes a notification.
pub(crate) fn notification<P: Serialize>(method: &str, params: &P) -> String {
    json_string(&ServerMessage {
        jsonrpc: "2.0",
        id: None,
        method,
        params,
    })
}

/// Serializes a request the server makes of the client.
pub(crate) fn request<P: Serialize + ?Sized>(id: u64, method: &str, params: &P) -> String {
    json_string(&ServerMessage {
        jsonrpc: "2.0",
        id: Some(id),
        method,
        params: &params,
    })
}

/// The one canonical form of a request id, by which responses, cancellations and progress are
/// matched: a number as written (so `-0` and integers beyond 64 bits keep their identity), a
/// string as serde_json writes it (so `"caf\u00e9"` and `"café"` are the same id).
pub(crate) fn id_key(raw: &str) -> Arc<str> {
    let raw = raw.trim();
    if raw.starts_with('"')
        && raw.contains('\\')
        && let Ok(s) = serde_json::from_str::<String>(raw)
    {
        return json_string(&s).into();
    }
    raw.into()
}

#[cfg(test)]
mod tests {
    use serde_json::value::RawValue;

    use super::*;

    #[test]
    fn strings_of_every_mix_and_length_are_escaped_as_serde_json_escapes_them() {
        let alphabet = [
            "a",
            "\"",
            "\\",
            "\n",
            "\u{1}",
            "\u{1f}",
            " ",
            "é",
            "\u{7f}",
            "\u{1F600}",
            "z",
        ];
        let mut seed = 7_u64;
        for len in 0..48 {
            for _ in 0..40 {
                let mut s = String::new();
                for _ in 0..len {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    // Mostly plain text, as answers are.
                    let pick = (seed >> 33) as usize % (alphabet.len() * 2);
                    s.push_str(alphabet.get(pick).unwrap_or(&"x"));
                }
                let mut out = Vec::new();
                push_json_string(&mut out, &s);
                assert_eq!(out, serde_json::to_vec(&s).unwrap(), "{s:?}");
            }
        }
        for x in [
            0_u64,
            u64::MAX,
            0x2020_2020_2020_2020,
            0x8080_8080_8080_8022,
        ] {
            let bytes = x.to_le_bytes();
            let first = bytes
                .iter()
                .position(|&b| b < 0x20 || b == b'"' || b == b'\\')
                .unwrap_or(8);
            assert_eq!(first_to_escape(x), first, "{x:#x}");
        }
    }

    #[test]
    fn ids_have_one_key_however_they_are_written() {
        assert_eq!(&*id_key("\"caf\\u00e9\""), "\"café\"");
        assert_eq!(&*id_key("\"café\""), "\"café\"");
        assert_eq!(&*id_key("-0"), "-0");
        assert_eq!(
            &*id_key("123456789012345678901234567890"),
            "123456789012345678901234567890"
        );
        assert_eq!(&*id_key(" 7 "), "7");
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let mut all: String = (0u8..0x80).map(char::from).collect();
        all.push_str("é\u{2028}\u{1F600}\\\"end");
        // Control characters escaped as six bytes, late in the text and all through it.
        let late = format!("{}{}", "\"".repeat(40), "\u{1}".repeat(40));
        let controls = "\u{1f}".repeat(100);
        let json = r#"{"id":"usr_1","email":"a\"b@example.com","n":[1,null]}"#;
        for s in [
            all.as_str(),
            late.as_str(),
            controls.as_str(),
            json,
            "",
            "plain",
            "\"",
            "a\"b\\c\nd",
            "\u{7f}\u{0}x",
        ] {
            // After what the buffer holds already.
            let mut out = b"[1,".to_vec();
            push_json_string(&mut out, s);
            assert_eq!(out[..3], *b"[1,");
            assert_eq!(out[3..], serde_json::to_vec(s).unwrap(), "{s:?}");
        }
    }

    #[test]
    fn a_line_is_read_as_serde_reads_it() {
        // The message as serde's derive reads it, strings copied.
        #[derive(Deserialize, Debug)]
        struct Serde<'a> {
            #[serde(borrow, default)]
            jsonrpc: Option<Cow<'a, str>>,
            #[serde(borrow, default, deserialize_with = "raw")]
            id: Option<&'a RawValue>,
            #[serde(borrow, default)]
            method: Option<Cow<'a, str>>,
            #[serde(borrow, default, deserialize_with = "raw")]
            params: Option<&'a RawValue>,
        }
        fn raw<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
            <&RawValue>::deserialize(d).map(Some)
        }
        for line in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":"\u00e9"}}"#[..],
            br#"{"jsonrpc":"2\u002e0","method":"x\"y"}"#,
            br#"{"jsonrpc":null,"method":null,"id":null}"#,
            br#"{"jsonrpc":2,"method":"m"}"#,
            br#"{"jsonrpc":"2.0","method":["m"]}"#,
            br#"{"jsonrpc":"2.0","method":"m","method":"n"}"#,
            br#"{"jsonrpc":"2.0","method":"m","params":{"a":01}}"#,
            b"{\"jsonrpc\":\"2.0\",\"method\":\"caf\xc3\xa9\"}",
            b"{\"jsonrpc\":\"2.0\",\"method\":\"caf\xe9\"}",
            b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"\xff\":1}}",
            br#"{"jsonrpc":"2.0","method":"m"} x"#,
            br#"{"jsonrpc":"2.0","method":"#,
        ] {
            let ours = incoming(line).map(|m| {
                (
                    m.jsonrpc.map(Cow::into_owned),
                    m.id.map(|i| i.get().to_owned()),
                    m.method.map(Cow::into_owned),
                    m.params.map(|p| p.get().to_owned()),
                )
            });
            let serde = serde_json::from_slice::<Serde<'_>>(line).map(|m| {
                (
                    m.jsonrpc.map(Cow::into_owned),
                    m.id.map(|i| i.get().to_owned()),
                    m.method.map(Cow::into_owned),
                    m.params.map(|p| p.get().to_owned()),
                )
            });
            assert_eq!(
                ours.map_err(|e| e.to_string()),
                serde.map_err(|e| e.to_string()),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn frames_wrap_the_payload() {
        assert_eq!(
            result_response("1", &serde_json::json!({})),
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#
        );
        assert_eq!(
            error_response("\"a\"", &RpcError::new(-1, "m")),
            r#"{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"m"}}"#
        );
        assert_eq!(
            notification("n", &serde_json::json!({"k": 1})),
            r#"{"jsonrpc":"2.0","method":"n","params":{"k":1}}"#
        );
    }
}
