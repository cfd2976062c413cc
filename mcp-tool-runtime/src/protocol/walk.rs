//! Walking JSON text: an object's members, each key and value as text, found in one pass
//! that checks the text as it goes, as serde_json checks a value it skips (a control
//! character or an unknown escape in a string, a number off JSON's grammar, a missing comma
//! or colon). An incoming line is read so: its envelope, its params and their `_meta`, each
//! byte once.
//!
//! A walk accepts only valid JSON, never panics, and reports text it could not read
//! ([`Object::broken`]), so the caller can read it the checking way instead, for serde's
//! verdict and wording (a walk may also give up on valid text it does not read itself:
//! nesting deeper than `DEPTH`).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

/// A JSON value's text, checked already (by serde, as a `RawValue`, or by a walk).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct JsonText<'a>(&'a str);

impl JsonText<'static> {
    /// `0`: the id of a request made in process.
    pub(crate) const ZERO: JsonText<'static> = JsonText("0");
}

impl<'a> JsonText<'a> {
    /// The value's text.
    pub(crate) fn get(self) -> &'a str {
        self.0
    }

    /// The value, `None` when it is `null` (as serde reads an `Option`).
    pub(crate) fn present(self) -> Option<JsonText<'a>> {
        (self.0 != "null").then_some(self)
    }

    /// The part of the text at `range` (a value within this one, found by an earlier read of
    /// the same text).
    pub(crate) fn part(self, range: std::ops::Range<usize>) -> Option<JsonText<'a>> {
        self.0.get(range).map(JsonText)
    }

    /// The value as serde reads an `Option<Cow<str>>` when that is plain: `null` is none, a
    /// string with no escape is its text. `None` for any other value (serde unescapes it, or
    /// refuses it).
    pub(crate) fn plain_text(self) -> Option<Option<Cow<'a, str>>> {
        match self.present() {
            None => Some(None),
            Some(v) => {
                let inner = v.0.strip_prefix('"')?.strip_suffix('"')?;
                (!inner.contains('\\')).then_some(Some(Cow::Borrowed(inner)))
            }
        }
    }
}

/// Which of (up to eight) members of an object were seen, so that one given twice is found
/// (serde's derive refuses it, naming it).
#[derive(Default)]
pub(crate) struct Seen(u8);

impl Seen {
    /// Marks member `n` (0 to 7) seen; `None` if it was already.
    pub(crate) fn first(&mut self, n: u8) -> Option<()> {
        let bit = 1 << n;
        let first = self.0 & bit == 0;
        self.0 |= bit;
        first.then_some(())
    }
}

impl<'a> From<&'a RawValue> for JsonText<'a> {
    fn from(raw: &'a RawValue) -> Self {
        JsonText(raw.get())
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for JsonText<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'de RawValue>::deserialize(d).map(JsonText::from)
    }
}

/// A member's key.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Key<'a> {
    /// The key's text between its quotes, as written (escapes and all).
    pub(crate) text: &'a str,
    /// Whether the key has an escape (its text is then not the key itself).
    pub(crate) escaped: bool,
    /// Which of the keys [`Object::key_of`] knew it is, by their order.
    pub(crate) known: Option<u8>,
}

/// An object's members, walked in the order written: [`Object::key`] gives a member's key,
/// then [`Object::value`] its value (or [`Object::nested`] walks it, an object itself).
pub(crate) struct Object<'a> {
    text: &'a str,
    /// Where the walk is: before a key, before a value, or past the closing brace.
    at: usize,
    state: State,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Key,
    Value,
    Done,
    Broken,
}

impl<'a> Object<'a> {
    /// The members of `value`, if it is an object.
    pub(crate) fn of(value: JsonText<'a>) -> Option<Object<'a>> {
        Object::at(value.get(), 0)
    }

    /// The members of the object that is the whole of `text` (a line: whitespace may stand
    /// around it); [`Object::ended`] tells, once the walk is done, that nothing follows it.
    pub(crate) fn line(text: &'a str) -> Option<Object<'a>> {
        Object::at(text, 0)
    }

    /// Whether the walk read the whole object and nothing but whitespace follows it.
    pub(crate) fn ended(&self) -> bool {
        self.state == State::Done && skip_space(self.text.as_bytes(), self.at) == self.text.len()
    }

    /// The members of the object at `at` in `text`.
    fn at(text: &'a str, at: usize) -> Option<Object<'a>> {
        let bytes = text.as_bytes();
        let at = skip_space(bytes, at);
        if bytes.get(at) != Some(&b'{') {
            return None;
        }
        let first = skip_space(bytes, at + 1);
        let empty = bytes.get(first) == Some(&b'}');
        Some(Object {
            text,
            at: if empty { first + 1 } else { first },
            state: if empty { State::Done } else { State::Key },
        })
    }

    /// Whether the text did not read as JSON (what the walk gave is not to be trusted).
    pub(crate) fn broken(&self) -> bool {
        self.state == State::Broken
    }

    fn fail<T>(&mut self) -> Option<T> {
        self.state = State::Broken;
        None
    }

    /// The next member's key (its value comes next); `None` past the last member. A value
    /// not taken is skipped first. (Only the tests walk keys with no known ones.)
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn key(&mut self) -> Option<Key<'a>> {
        self.key_of(&[])
    }

    /// [`Object::key`], trying the `known` keys first: a key that is one of them is found by
    /// comparing it, not by scanning it (none may be empty or hold a quote, a backslash or a
    /// control character), and its text is the known one. A key found so is plain: any
    /// other is scanned, and is none of them unless written with an escape. The stateless
    /// revision's `_meta` keys are forty bytes long. Inlined, so that the known keys' bytes
    /// and lengths are constants where they are.
    #[inline(always)]
    pub(crate) fn key_of(&mut self, known: &[&'static str]) -> Option<Key<'a>> {
        if self.state == State::Value {
            self.value()?;
        }
        if self.state != State::Key {
            return None;
        }
        let bytes = self.text.as_bytes();
        let Some([b'"', rest @ ..]) = bytes.get(self.at..) else {
            return self.fail();
        };
        let start = self.at + 1;
        // The first byte rules most out; the quote after the key's length, all but one.
        let first = rest.first();
        let found = known.iter().position(|k| {
            let k = k.as_bytes();
            k.first() == first && rest.get(k.len()) == Some(&b'"') && rest.get(..k.len()) == Some(k)
        });
        let (text, close, escaped) = match found {
            Some(n) => (known[n], start + known[n].len(), false),
            None => {
                let Some((close, escaped)) = string_end(bytes, start) else {
                    return self.fail();
                };
                let Some(text) = self.text.get(start..close) else {
                    return self.fail();
                };
                (text, close, escaped)
            }
        };
        // The colon mostly follows the key at once.
        let mut at = close + 1;
        if bytes.get(at) != Some(&b':') {
            at = skip_space(bytes, at);
            if bytes.get(at) != Some(&b':') {
                return self.fail();
            }
        }
        self.at = skip_space(bytes, at + 1);
        self.state = State::Value;
        Some(Key {
            text,
            escaped,
            known: found.and_then(|n| u8::try_from(n).ok()),
        })
    }

    /// The value of the member whose key came last. Inlined: an incoming line's walk calls
    /// it for each member.
    #[inline]
    pub(crate) fn value(&mut self) -> Option<JsonText<'a>> {
        if self.state != State::Value {
            return None;
        }
        let start = self.at;
        let Some(end) = value_end(self.text.as_bytes(), start) else {
            return self.fail();
        };
        self.past(start, end)
    }

    /// The value of the member whose key came last, when it is an object: a walk of its
    /// members. Once that walk is done, [`Object::after`] gives the value's text and goes on
    /// past it.
    pub(crate) fn nested(&self) -> Option<Object<'a>> {
        if self.state != State::Value {
            return None;
        }
        Object::at(self.text, self.at)
    }

    /// The text of the value `inner` walked (see [`Object::nested`]), going on past it; if
    /// `inner` stopped before its end, the rest of the value is skipped (if it broke, so
    /// does this walk).
    pub(crate) fn after(&mut self, inner: &Object<'a>) -> Option<JsonText<'a>> {
        if self.state != State::Value {
            return None;
        }
        let start = self.at;
        let end = match inner.state {
            State::Done => inner.at,
            State::Broken => return self.fail(),
            State::Key | State::Value => match value_end(self.text.as_bytes(), start) {
                Some(end) => end,
                None => return self.fail(),
            },
        };
        self.past(start, end)
    }

    /// The value of the member whose key came last, when its text begins with `known`, the
    /// whole text of a JSON value read before: that value is this one (a value ends where its
    /// text says), and the walk goes on past it without reading it again. `None`, the walk
    /// unchanged, when the text there is another; `Some(None)` when what follows the value
    /// does not read (the walk broke).
    pub(crate) fn value_known(&mut self, known: &str) -> Option<Option<JsonText<'a>>> {
        let start = self.at;
        let rest = self.text.as_bytes().get(start..)?;
        if self.state != State::Value || !rest.starts_with(known.as_bytes()) {
            return None;
        }
        Some(self.past(start, start + known.len()))
    }

    /// The value of the member whose key came last, when it is the string `common` (none of
    /// whose bytes is a quote, a backslash or a control character), found by comparing it:
    /// as [`Object::value_known`] for the string's text.
    #[inline(always)]
    pub(crate) fn value_string(&mut self, common: &str) -> Option<Option<JsonText<'a>>> {
        let start = self.at;
        let Some([b'"', rest @ ..]) = self.text.as_bytes().get(start..) else {
            return None;
        };
        let end = common.len();
        if self.state != State::Value
            || rest.get(end) != Some(&b'"')
            || rest.get(..end) != Some(common.as_bytes())
        {
            return None;
        }
        Some(self.past(start, start + end + 2))
    }

    /// The value from `start` to `end`, the walk going on past it.
    fn past(&mut self, start: usize, end: usize) -> Option<JsonText<'a>> {
        let bytes = self.text.as_bytes();
        let Some(value) = self.text.get(start..end) else {
            return self.fail();
        };
        let after = skip_space(bytes, end);
        match bytes.get(after) {
            Some(b',') => {
                self.at = skip_space(bytes, after + 1);
                self.state = State::Key;
            }
            Some(b'}') => {
                self.at = after + 1;
                self.state = State::Done;
            }
            _ => return self.fail(),
        }
        Some(JsonText(value))
    }
}

/// An array's items, walked in the order written, each as its text: for a value read
/// already (a slice of a checked text), so a walk that breaks is only text it gave up on.
pub(crate) struct Items<'a> {
    text: &'a str,
    at: usize,
    done: bool,
    broken: bool,
}

impl<'a> Items<'a> {
    /// The items of `text` (whitespace may stand around it), if it is an array.
    pub(crate) fn of(text: &'a str) -> Option<Items<'a>> {
        let bytes = text.as_bytes();
        let at = skip_space(bytes, 0);
        if bytes.get(at) != Some(&b'[') {
            return None;
        }
        let first = skip_space(bytes, at + 1);
        let empty = bytes.get(first) == Some(&b']');
        Some(Items {
            text,
            at: if empty { first + 1 } else { first },
            done: empty,
            broken: false,
        })
    }

    /// Whether the text did not read as JSON (the items given are not to be trusted).
    pub(crate) fn broken(&self) -> bool {
        self.broken
    }
}

impl<'a> Iterator for Items<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.done {
            return None;
        }
        let bytes = self.text.as_bytes();
        let start = self.at;
        let item = value_end(bytes, start).and_then(|end| {
            let after = skip_space(bytes, end);
            match bytes.get(after) {
                Some(b',') => self.at = skip_space(bytes, after + 1),
                Some(b']') => self.done = true,
                _ => return None,
            }
            self.text.get(start..end)
        });
        if item.is_none() {
            (self.done, self.broken) = (true, true);
        }
        item
    }
}

/// The first byte at or after `at` that is not JSON whitespace.
fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\r' | b'\t') = bytes.get(at) {
        at += 1;
    }
    at
}

/// The closing quote of the string whose text starts at `at`, and whether the string has an
/// escape; `None` when the string is not valid JSON (a control character, an unknown escape,
/// no end), as serde_json refuses it. Eight bytes at a time: a key of the stateless
/// revision's `_meta` has forty.
fn string_end(bytes: &[u8], mut at: usize) -> Option<(usize, bool)> {
    const ONES: u64 = u64::MAX / 255;
    const HIGH: u64 = ONES << 7;
    let mut escaped = false;
    loop {
        // Whole words first: find one holding a quote, a backslash or a control character.
        while let Some(chunk) = bytes.get(at..at + 8) {
            let mut word = [0; 8];
            word.copy_from_slice(chunk);
            let word = u64::from_le_bytes(word);
            let quote = word ^ (ONES * u64::from(b'"'));
            let backslash = word ^ (ONES * u64::from(b'\\'));
            // The lowest flagged byte is exact (a borrow only flags bytes above a true one).
            let found = (quote.wrapping_sub(ONES) & !quote
                | backslash.wrapping_sub(ONES) & !backslash
                | word.wrapping_sub(ONES * 0x20) & !word)
                & HIGH;
            if found != 0 {
                at += (found.trailing_zeros() / 8) as usize;
                break;
            }
            at += 8;
        }
        match *bytes.get(at)? {
            b'"' => return Some((at, escaped)),
            b'\\' => {
                escaped = true;
                at = match *bytes.get(at + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => at + 2,
                    b'u' => {
                        let hex = bytes.get(at + 2..at + 6)?;
                        hex.iter().all(u8::is_ascii_hexdigit).then_some(at + 6)?
                    }
                    _ => return None,
                };
            }
            0..0x20 => return None,
            _ => at += 1,
        }
    }
}

/// The end of the number that starts at `at`, by JSON's grammar:
/// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
fn number_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    let digits = |mut at: usize| {
        let start = at;
        while bytes.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        (at > start).then_some(at)
    };
    if bytes.get(at) == Some(&b'-') {
        at += 1;
    }
    at = match bytes.get(at)? {
        b'0' => at + 1,
        b'1'..=b'9' => digits(at)?,
        _ => return None,
    };
    if bytes.get(at) == Some(&b'.') {
        at = digits(at + 1)?;
    }
    if let Some(b'e' | b'E') = bytes.get(at) {
        at += 1;
        if let Some(b'+' | b'-') = bytes.get(at) {
            at += 1;
        }
        at = digits(at)?;
    }
    Some(at)
}

/// How deep arrays and objects may nest in a skipped value (serde_json's own limit is 128):
/// deeper text is left to serde, for its verdict.
const DEPTH: u32 = 100;

/// The end (exclusive) of the JSON value that starts at `at`, checked as serde_json checks
/// a value it skips; `None` when it is not one.
fn value_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    // One bit per open container, set for an object.
    let mut objects: u128 = 0;
    let mut depth = 0;
    loop {
        // A value starts at `at`.
        at = match *bytes.get(at)? {
            b'"' => string_end(bytes, at + 1)?.0 + 1,
            open @ (b'{' | b'[') => {
                if depth == DEPTH {
                    return None;
                }
                objects = objects << 1 | u128::from(open == b'{');
                depth += 1;
                let first = skip_space(bytes, at + 1);
                match (open, *bytes.get(first)?) {
                    (b'{', b'}') | (b'[', b']') => {
                        objects >>= 1;
                        depth -= 1;
                        first + 1
                    }
                    (b'{', _) => {
                        at = member_value(bytes, first)?;
                        continue;
                    }
                    _ => {
                        at = first;
                        continue;
                    }
                }
            }
            b't' => literal_end(bytes, at, b"true")?,
            b'f' => literal_end(bytes, at, b"false")?,
            b'n' => literal_end(bytes, at, b"null")?,
            _ => number_end(bytes, at)?,
        };
        // A value ended before `at`: close what it ends, or go on to the next one.
        loop {
            if depth == 0 {
                return Some(at);
            }
            let next = skip_space(bytes, at);
            let object = objects & 1 == 1;
            match (*bytes.get(next)?, object) {
                (b',', true) => {
                    at = member_value(bytes, skip_space(bytes, next + 1))?;
                    break;
                }
                (b',', false) => {
                    at = skip_space(bytes, next + 1);
                    break;
                }
                (b'}', true) | (b']', false) => {
                    objects >>= 1;
                    depth -= 1;
                    at = next + 1;
                }
                _ => return None,
            }
        }
    }
}

/// Where the value of the member whose key starts at `at` starts (past the key and its colon).
fn member_value(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let close = string_end(bytes, at + 1)?.0;
    let colon = skip_space(bytes, close + 1);
    (bytes.get(colon) == Some(&b':')).then(|| skip_space(bytes, colon + 1))
}

/// The end of `literal` (`true`, `false`, `null`) at `at`.
fn literal_end(bytes: &[u8], at: usize, literal: &[u8]) -> Option<usize> {
    let end = at + literal.len();
    (bytes.get(at..end)? == literal).then_some(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every member of `text` (an object): its key, whether the key has an escape, its value;
    /// and whether the walk broke. Objects one level down are walked too, and given as
    /// their members.
    fn members(text: &str) -> (Vec<(String, bool, String)>, bool) {
        let mut walk = Object::of(JsonText(text)).expect("an object");
        let mut found = Vec::new();
        while let Some(key) = walk.key() {
            let value = match walk.nested() {
                Some(mut inner) => {
                    let mut n = 0;
                    while inner.key().is_some() {
                        n += 1;
                        if n % 2 == 0 {
                            inner.value();
                        }
                    }
                    walk.after(&inner)
                }
                None => walk.value(),
            };
            let Some(value) = value else { break };
            found.push((key.text.to_owned(), key.escaped, value.get().to_owned()));
        }
        (found, walk.broken())
    }

    #[test]
    fn members_are_found_as_serde_json_finds_them() {
        for text in [
            r#"{}"#,
            r#" { } "#,
            r#"{"a":1}"#,
            r#"{ "a" : "x\"y" , "b\\c" :{"d":[1,{"e":"]}"}],"f":null}, "g": -1.5e3 ,"h":true}"#,
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"0"}},"name":"add","arguments":{"a":2,"b":3}}"#,
            "{\"long key with no escape in it at all\":\"a long value with \\u00e9 an escape\"}",
            "{\"é\":[],\"ü\\n\":[[[]]], \"o\" : { \"p\" : { } , \"q\":[ ] } }",
        ] {
            let expected: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(text).unwrap();
            let (found, broken) = members(text);
            assert!(!broken, "{text}");
            assert_eq!(found.len(), expected.len(), "{text}");
            for (key, escaped, value) in found {
                let key = if escaped {
                    serde_json::from_str::<String>(&format!("\"{key}\"")).unwrap()
                } else {
                    key
                };
                let value: serde_json::Value = serde_json::from_str(&value).unwrap();
                assert_eq!(expected[&key], value, "{text}");
            }
        }
    }

    #[test]
    fn text_that_is_not_json_is_reported_never_a_panic() {
        assert!(Object::of(JsonText("[1]")).is_none());
        assert!(Object::of(JsonText("")).is_none());
        for text in [
            "{",
            "{\"a",
            "{\"a\"",
            "{\"a\":",
            "{\"a\":1",
            "{\"a\":1,",
            "{\"a\" 1}",
            "{1:2}",
            "{\"a\":{",
            "{\"a\":\"\\",
            "{\"a\":]}",
            "{\"a\":1 2}",
            "{\"a\":{\"b\":1 2}}",
            "{\"a\":{\"b\"}}",
            "{\"a\":{}",
            "{\"a\":{} 1}",
        ] {
            let (_, broken) = members(text);
            assert!(broken, "{text}");
        }
    }

    #[test]
    fn known_keys_and_strings_are_found_by_comparing_them_as_a_scan_finds_them() {
        const KNOWN: [&str; 4] = ["task", "taskId", "a", "jsonrpc"];
        let text = r#"{"taskId":"2.0","task" : "2.0x","tas":1,"taskIdx":"2.0" ,"t\u0061sk":2,"a":"2.","jsonrpc":"2.0"}"#;
        let (mut known, mut scanned) = (Object::of(JsonText(text)).unwrap(), members(text).0);
        scanned.reverse();
        while let Some(key) = known.key_of(&KNOWN) {
            let (text, escaped, value) = scanned.pop().expect("as many keys");
            assert_eq!((key.text, key.escaped), (text.as_str(), escaped));
            let plain = !escaped && KNOWN.contains(&key.text);
            assert_eq!(
                key.known.map(|n| KNOWN[usize::from(n)]),
                plain.then_some(key.text)
            );
            let found = match known.value_string("2.0") {
                Some(found) => found.expect("a value").get(),
                None => known.value().expect("a value").get(),
            };
            assert_eq!(found, value);
        }
        assert!(scanned.is_empty() && known.ended());
        for broken in [r#"{"a":"2.0"x}"#, r#"{"a" x:1}"#, r#"{"a"}"#, r#"{"a""#] {
            let mut walk = Object::line(broken).unwrap();
            while walk.key_of(&KNOWN).is_some() {
                if let Some(None) = walk.value_string("2.0") {
                    break;
                }
            }
            assert!(walk.broken(), "{broken}");
        }
    }

    #[test]
    fn items_are_found_as_serde_json_finds_them() {
        for text in [
            "[]",
            " [ ] ",
            "[1]",
            r#"[ 1 , "a,]" , [2, {"b": [3]}], null, -1.5e3 ]"#,
        ] {
            let expected: Vec<serde_json::Value> = serde_json::from_str(text).unwrap();
            let mut items = Items::of(text).expect("an array");
            let found: Vec<serde_json::Value> = items
                .by_ref()
                .map(|item| serde_json::from_str(item).unwrap())
                .collect();
            assert!(!items.broken(), "{text}");
            assert_eq!(found, expected, "{text}");
        }
        assert!(Items::of("{}").is_none());
        for text in ["[", "[1", "[1,", "[1 2]", "[1,]", "[}"] {
            let mut items = Items::of(text).expect("an array's start");
            items.by_ref().for_each(drop);
            assert!(items.broken(), "{text}");
        }
    }
}
