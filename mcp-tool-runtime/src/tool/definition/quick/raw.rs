//! The rules checked on a value's text, as a call's arguments arrive, without building a
//! [`Value`]: so that a plain call's arguments can go straight from their text into the
//! tool's parameter types.
//!
//! The answer is "valid" only when it is certain, and when reading the text's parts on
//! their own gives each parameter what reading the whole as a `Value` would have given it:
//! no key written with an escape or given twice, no number a `Value` holds as a float with
//! no fraction (which the call's pipeline rewrites as an integer), no string whose escapes
//! serde_json refuses, nothing nested deeper than [`DEPTH`]. Anything else, an invalid value
//! included, is "don't know": the call then goes the way of a `Value`, whose validator
//! decides and words its refusal.

use std::borrow::Cow;
use std::ops::Range;

use serde_json::{Number, Value};

use super::{
    ARRAY, BOOLEAN, INTEGER, Instance, NULL, NUMBER, OBJECT, Quick, Rules, STRING, TooDeep, Walk,
    email, is_integer, number_rules, string_rules, values,
};
use crate::protocol::walk::{Items, Object};
use crate::tool::definition::integers;

/// How deep arrays and objects may nest in text read so (serde_json's own limit is 128).
const DEPTH: u32 = 64;

/// How many members an object read so may have (and arguments kept as text: one bit each
/// marks one taken).
pub(crate) const MEMBERS: usize = 64;

/// Where each member of an object's text is: its key's text (no escape) and its value's.
pub(crate) type Members = Vec<(Range<usize>, Range<usize>)>;

impl Quick {
    /// Where the members of `text`, an object's JSON text (a slice of text serde_json has
    /// read), are, when it is certainly valid and plain (see the module's documentation);
    /// `None` when it is not, or when that is not certain. Its members are walked once.
    pub(crate) fn valid_text(&self, text: &str) -> Option<Members> {
        if !self.complete {
            return None;
        }
        let members = list(text).ok()?;
        if members.len() > MEMBERS {
            return None;
        }
        for (at, (key, value)) in members.iter().enumerate() {
            let key = text.get(key.clone())?;
            if members[..at]
                .iter()
                .any(|(k, _)| text.get(k.clone()) == Some(key))
            {
                return None;
            }
            plain(text.get(value.clone())?, 1).ok()?;
        }
        let walk = Walk {
            parts: &self.parts,
            elsewhere: &|_, _| false,
        };
        let object = Listed {
            text,
            members: &members,
        };
        matches!(walk.valid(0, &object, 0), Ok(true)).then_some(members)
    }
}

/// An object's text and its members, found already.
struct Listed<'a> {
    text: &'a str,
    members: &'a Members,
}

impl Instance for Listed<'_> {
    fn own(&self, walk: &Walk<'_>, rules: &Rules, depth: u32) -> Result<bool, TooDeep> {
        if rules.types != 0 && rules.types & OBJECT == 0 {
            return Ok(false);
        }
        if rules.valued {
            let value: Value = serde_json::from_str(self.text).map_err(|_| TooDeep)?;
            if !values(rules, &value) {
                return Ok(false);
            }
        }
        walk.object_text(rules, self, depth)
    }

    fn elsewhere(&self, _: &Walk<'_>, _: usize) -> Result<bool, TooDeep> {
        Err(TooDeep)
    }
}

/// A value's text: exactly its text, with no whitespace around it.
struct Text<'a>(&'a str);

impl Instance for Text<'_> {
    fn own(&self, walk: &Walk<'_>, rules: &Rules, depth: u32) -> Result<bool, TooDeep> {
        let text = self.0;
        let (bit, number) = match text.as_bytes().first() {
            Some(b'n') => (NULL, None),
            Some(b't' | b'f') => (BOOLEAN, None),
            Some(b'"') => (STRING, None),
            Some(b'[') => (ARRAY, None),
            Some(b'{') => (OBJECT, None),
            Some(_) => (NUMBER, Some(number(text)?)),
            None => return Err(TooDeep),
        };
        if rules.types != 0 {
            let fits = match &number {
                Some(n) => {
                    rules.types & NUMBER != 0 || (rules.types & INTEGER != 0 && is_integer(n))
                }
                None => rules.types & bit != 0,
            };
            if !fits {
                return Ok(false);
            }
        }
        if rules.valued {
            let value: Value = serde_json::from_str(text).map_err(|_| TooDeep)?;
            if !values(rules, &value) {
                return Ok(false);
            }
        }
        Ok(match (bit, number) {
            (_, Some(n)) => number_rules(rules, &n),
            (STRING, _) => {
                if rules.min_length.is_none() && rules.max_length.is_none() && !rules.email {
                    true
                } else {
                    let s = string(text)?;
                    string_rules(rules, &s) && (!rules.email || email::valid(&s))
                }
            }
            (ARRAY, _) => walk.array_text(rules, text, depth)?,
            (OBJECT, _) => {
                let members = list(text)?;
                walk.object_text(
                    rules,
                    &Listed {
                        text,
                        members: &members,
                    },
                    depth,
                )?
            }
            _ => true,
        })
    }

    /// A part the full validator checks is not judged on text.
    fn elsewhere(&self, _: &Walk<'_>, _: usize) -> Result<bool, TooDeep> {
        Err(TooDeep)
    }
}

impl Walk<'_> {
    /// The array rules, on an array's text.
    #[inline(never)]
    fn array_text(&self, rules: &Rules, text: &str, depth: u32) -> Result<bool, TooDeep> {
        if rules.min_items.is_some() || rules.max_items.is_some() {
            let len = Items::of(text).ok_or(TooDeep)?.count();
            if rules.min_items.is_some_and(|min| len < min)
                || rules.max_items.is_some_and(|max| len > max)
            {
                return Ok(false);
            }
        }
        if let Some(part) = rules.items {
            let mut items = Items::of(text).ok_or(TooDeep)?;
            for item in items.by_ref() {
                if !self.valid(part, &Text(item), depth)? {
                    return Ok(false);
                }
            }
            if items.broken() {
                return Err(TooDeep);
            }
        }
        Ok(true)
    }

    /// The object rules, on an object's members (their keys have no escape and are
    /// distinct: [`plain`] saw to it).
    #[inline(never)]
    fn object_text(&self, rules: &Rules, object: &Listed<'_>, depth: u32) -> Result<bool, TooDeep> {
        let (text, members) = (object.text, object.members);
        let len = members.len();
        if rules.min_properties.is_some_and(|min| len < min)
            || rules.max_properties.is_some_and(|max| len > max)
        {
            return Ok(false);
        }
        let key = |k: &Range<usize>| text.get(k.clone()).ok_or(TooDeep);
        if rules.required_bits.is_none() {
            for name in &rules.required {
                if !members
                    .iter()
                    .any(|(k, _)| text.get(k.clone()) == Some(name))
                {
                    return Ok(false);
                }
            }
        }
        let mut seen = 0_u64;
        for (k, v) in members {
            let name = key(k)?;
            let Some(part) = rules.part_of(name, &mut seen) else {
                continue;
            };
            if !self.valid(part, &Text(key(v)?), depth)? {
                return Ok(false);
            }
        }
        Ok(rules.required_bits.is_none_or(|bits| seen & bits == bits))
    }
}

/// The members of an object's text, found in one pass over text serde_json has read (so
/// valid JSON: a string ends at its first quote not escaped, a number or a literal at the
/// first byte that cannot be in one, an array or object at its matching bracket, strings
/// skipped); `Err` on a key with an escape, or on text that does not read so.
pub(super) fn list(text: &str) -> Result<Members, TooDeep> {
    let bytes = text.as_bytes();
    let mut members = Members::with_capacity(4);
    let mut at = space(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return Err(TooDeep);
    }
    at = space(bytes, at + 1);
    if bytes.get(at) == Some(&b'}') {
        return Ok(members);
    }
    loop {
        if bytes.get(at) != Some(&b'"') {
            return Err(TooDeep);
        }
        let key = at + 1;
        let close = bytes
            .get(key..)
            .and_then(|rest| rest.iter().position(|&b| b == b'"' || b == b'\\'))
            .ok_or(TooDeep)?
            + key;
        if bytes.get(close) != Some(&b'"') {
            return Err(TooDeep);
        }
        at = space(bytes, close + 1);
        if bytes.get(at) != Some(&b':') {
            return Err(TooDeep);
        }
        let start = space(bytes, at + 1);
        let end = value_end(bytes, start)?;
        members.push((key..close, start..end));
        at = space(bytes, end);
        match bytes.get(at) {
            Some(b',') => at = space(bytes, at + 1),
            Some(b'}') => return Ok(members),
            _ => return Err(TooDeep),
        }
    }
}

/// The first byte at or after `at` that is not JSON whitespace.
fn space(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\r' | b'\t') = bytes.get(at) {
        at += 1;
    }
    at
}

/// The end (exclusive) of the value that starts at `at` in valid JSON text.
fn value_end(bytes: &[u8], at: usize) -> Result<usize, TooDeep> {
    match bytes.get(at) {
        Some(b'"') => Ok(string_end(bytes, at + 1)? + 1),
        Some(b'{' | b'[') => {
            let (mut depth, mut at) = (0_usize, at);
            loop {
                match bytes.get(at) {
                    Some(b'"') => at = string_end(bytes, at + 1)?,
                    Some(b'{' | b'[') => depth += 1,
                    Some(b'}' | b']') => {
                        depth = depth.checked_sub(1).ok_or(TooDeep)?;
                        if depth == 0 {
                            return Ok(at + 1);
                        }
                    }
                    Some(_) => {}
                    None => return Err(TooDeep),
                }
                at += 1;
            }
        }
        Some(_) => {
            let end = bytes[at..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t'))
                .map_or(bytes.len(), |n| at + n);
            match end > at {
                true => Ok(end),
                false => Err(TooDeep),
            }
        }
        None => Err(TooDeep),
    }
}

/// The closing quote of the string whose text starts at `at`, in valid JSON text.
fn string_end(bytes: &[u8], mut at: usize) -> Result<usize, TooDeep> {
    loop {
        let rest = bytes.get(at..).ok_or(TooDeep)?;
        at += rest
            .iter()
            .position(|&b| b == b'"' || b == b'\\')
            .ok_or(TooDeep)?;
        match bytes.get(at) {
            Some(b'"') => return Ok(at),
            _ => at += 2,
        }
    }
}

/// A number's text as serde_json reads it into a `Value`: a plain run of digits (at most
/// 19, which a `u64` holds) is read here, any other by serde_json itself.
fn number(text: &str) -> Result<Number, TooDeep> {
    let bytes = text.as_bytes();
    if !bytes.is_empty() && bytes.len() <= 19 && bytes.iter().all(u8::is_ascii_digit) {
        let n = bytes
            .iter()
            .fold(0_u64, |n, d| n * 10 + u64::from(d - b'0'));
        return Ok(Number::from(n));
    }
    serde_json::from_str(text).map_err(|_| TooDeep)
}

/// A string's text, its escapes undone.
fn string(text: &str) -> Result<Cow<'_, str>, TooDeep> {
    let inner = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .ok_or(TooDeep)?;
    if !inner.as_bytes().contains(&b'\\') {
        return Ok(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(text)
        .map(Cow::Owned)
        .map_err(|_| TooDeep)
}

/// Checks that reading `text`'s parts on their own gives what reading it whole as a `Value`
/// gives, at every depth: `Err` on a key with an escape or given twice, a float with no
/// fraction, a string serde_json refuses, nesting deeper than [`DEPTH`].
fn plain(text: &str, depth: u32) -> Result<(), TooDeep> {
    match text.as_bytes().first() {
        Some(b'{') => {
            if depth >= DEPTH {
                return Err(TooDeep);
            }
            let mut walk = Object::line(text).ok_or(TooDeep)?;
            let mut seen = Keys::default();
            while let Some(key) = walk.key() {
                if key.escaped || !seen.first(key.text)? {
                    return Err(TooDeep);
                }
                plain(walk.value().ok_or(TooDeep)?.get(), depth + 1)?;
            }
            match walk.broken() {
                true => Err(TooDeep),
                false => Ok(()),
            }
        }
        Some(b'[') => {
            if depth >= DEPTH {
                return Err(TooDeep);
            }
            let mut items = Items::of(text).ok_or(TooDeep)?;
            for item in items.by_ref() {
                plain(item, depth + 1)?;
            }
            match items.broken() {
                true => Err(TooDeep),
                false => Ok(()),
            }
        }
        Some(b'"') => string(text).map(drop),
        Some(b'n' | b't' | b'f') => Ok(()),
        Some(_) => {
            let n = number(text)?;
            match n.as_f64().filter(|_| n.is_f64()).and_then(integers::whole) {
                Some(_) => Err(TooDeep),
                None => Ok(()),
            }
        }
        None => Err(TooDeep),
    }
}

/// The keys of one object seen so far: the first eight kept in place (no allocation for
/// the objects calls have), the rest in a list.
#[derive(Default)]
struct Keys<'a> {
    few: [&'a str; 8],
    len: usize,
    more: Vec<&'a str>,
}

impl<'a> Keys<'a> {
    /// Adds `key`: `Ok(false)` if it was seen already, `Err` past [`MEMBERS`] keys.
    fn first(&mut self, key: &'a str) -> Result<bool, TooDeep> {
        let few = &self.few[..self.len.min(8)];
        if few.contains(&key) || self.more.contains(&key) {
            return Ok(false);
        }
        if self.len >= MEMBERS {
            return Err(TooDeep);
        }
        match self.few.get_mut(self.len) {
            Some(slot) => *slot = key,
            None => self.more.push(key),
        }
        self.len += 1;
        Ok(true)
    }
}
