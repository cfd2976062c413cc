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

/// How many members [`Members`] keeps in place (more go to a list).
const FEW: usize = 8;

/// Where one member of an object's text is: its key's text (no escape, no quotes) and its
/// value's, as ranges of bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Member {
    key: (u32, u32),
    value: (u32, u32),
}

impl Member {
    /// The key's text, out of the object's `text`.
    pub(crate) fn key<'a>(&self, text: &'a [u8]) -> Option<&'a [u8]> {
        text.get(self.key.0 as usize..self.key.1 as usize)
    }

    /// The value's text, out of the object's `text`.
    pub(crate) fn value<'a>(&self, text: &'a [u8]) -> Option<&'a [u8]> {
        text.get(self.value.0 as usize..self.value.1 as usize)
    }

    pub(super) fn key_str<'a>(&self, text: &'a str) -> Option<&'a str> {
        text.get(self.key.0 as usize..self.key.1 as usize)
    }

    pub(super) fn value_str<'a>(&self, text: &'a str) -> Option<&'a str> {
        text.get(self.value.0 as usize..self.value.1 as usize)
    }
}

/// Where each member of an object's text is, in their order: up to [`FEW`] kept in place (no
/// allocation for the objects calls have), all of them in a list past that.
#[derive(Clone, Debug, Default)]
pub(crate) struct Members {
    few: [Member; FEW],
    len: usize,
    more: Vec<Member>,
}

impl Members {
    fn push(&mut self, member: Member) {
        if let Some(slot) = self.few.get_mut(self.len) {
            *slot = member;
        } else {
            if self.more.is_empty() {
                self.more.extend_from_slice(&self.few);
            }
            self.more.push(member);
        }
        self.len += 1;
    }

    /// Forgets the members.
    fn clear(&mut self) {
        self.len = 0;
        self.more.clear();
    }

    /// The members, in their order.
    pub(crate) fn as_slice(&self) -> &[Member] {
        match self.few.get(..self.len) {
            Some(few) => few,
            None => &self.more,
        }
    }

    /// How many members there are.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The member at place `at`.
    pub(crate) fn get(&self, at: usize) -> Option<Member> {
        self.as_slice().get(at).copied()
    }

    /// The members, in their order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = Member> + '_ {
        self.as_slice().iter().copied()
    }
}

impl Quick {
    /// Whether `text`, an object's JSON text (a slice of text serde_json has read), is
    /// certainly valid and plain (see the module's documentation): `false` when it is not,
    /// or when that is not certain. Its members are walked once, and put in `members`
    /// (which are left as they are found when the answer is `false`).
    pub(crate) fn valid_text(&self, text: &str, members: &mut Members) -> bool {
        self.check_text(text, members).is_some()
    }

    fn check_text(&self, text: &str, members: &mut Members) -> Option<()> {
        if !self.complete {
            return None;
        }
        list(text, members).ok()?;
        if members.len() > MEMBERS {
            return None;
        }
        let bytes = text.as_bytes();
        let listed = members.as_slice();
        for (at, member) in listed.iter().enumerate() {
            let key = member.key(bytes);
            if listed[..at].iter().any(|other| other.key(bytes) == key) {
                return None;
            }
            plain(member.value_str(text)?, 1).ok()?;
        }
        let walk = Walk {
            parts: &self.parts,
            elsewhere: &|_, _| false,
        };
        let object = Listed { text, members };
        matches!(walk.valid(0, &object, 0), Ok(true)).then_some(())
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
                let mut members = Members::default();
                list(text, &mut members)?;
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
        if rules.required_bits.is_none() {
            for name in &rules.required {
                if !members.iter().any(|m| m.key_str(text) == Some(name)) {
                    return Ok(false);
                }
            }
        }
        let (mut seen, mut next) = (0_u64, 0);
        for member in members.iter() {
            let name = member.key_str(text).ok_or(TooDeep)?;
            let Some(part) = rules.part_of(name, &mut seen, &mut next) else {
                continue;
            };
            let value = member.value_str(text).ok_or(TooDeep)?;
            if !self.valid(part, &Text(value), depth)? {
                return Ok(false);
            }
        }
        Ok(rules.required_bits.is_none_or(|bits| seen & bits == bits))
    }
}

/// The members of an object's text, found in one pass over text serde_json has read (so
/// valid JSON: a string ends at its first quote not escaped, a number or a literal at the
/// first byte that cannot be in one, an array or object at its matching bracket, strings
/// skipped), into `members`; `Err` on a key with an escape, or on text that does not read
/// so.
pub(super) fn list(text: &str, members: &mut Members) -> Result<(), TooDeep> {
    members.clear();
    let bytes = text.as_bytes();
    if u32::try_from(bytes.len()).is_err() {
        return Err(TooDeep);
    }
    let mut at = space(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return Err(TooDeep);
    }
    at = space(bytes, at + 1);
    if bytes.get(at) == Some(&b'}') {
        return Ok(());
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
        // Within `text`, whose length fits a `u32`.
        let place = |at: usize| at as u32;
        members.push(Member {
            key: (place(key), place(close)),
            value: (place(start), place(end)),
        });
        at = space(bytes, end);
        match bytes.get(at) {
            Some(b',') => at = space(bytes, at + 1),
            Some(b'}') => return Ok(()),
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
pub(super) fn number(text: &str) -> Result<Number, TooDeep> {
    match integer(text.as_bytes()) {
        Some(Integer::Unsigned(n)) => Ok(Number::from(n)),
        Some(Integer::Signed(n)) => Ok(Number::from(n)),
        None => serde_json::from_str(text).map_err(|_| TooDeep),
    }
}

/// An integer as serde_json reads it (into a `Value` or a visitor).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Integer {
    Unsigned(u64),
    Signed(i64),
}

/// The integer `text` is, when serde_json reads it as one: `None` for any other text (a
/// fraction, an exponent, `-0` and a negative past `i64`, which serde_json reads as floats,
/// a positive past `u64`, text that is not a number).
pub(crate) fn integer(text: &[u8]) -> Option<Integer> {
    let (negative, digits) = match text.split_first()? {
        (b'-', rest) => (true, rest),
        _ => (false, text),
    };
    if digits.is_empty() || digits.len() > 20 || (digits.len() > 1 && digits[0] == b'0') {
        return None;
    }
    let mut n = 0_u64;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    if !negative {
        return Some(Integer::Unsigned(n));
    }
    // As serde_json does: a negative that wraps to zero or above is a float.
    let negated = (n as i64).wrapping_neg();
    (negated < 0).then_some(Integer::Signed(negated))
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
        // An integer is plain (only a float with no fraction is not).
        Some(_) if integer(text.as_bytes()).is_some() => Ok(()),
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
