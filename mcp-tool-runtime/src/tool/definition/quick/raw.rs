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
    is_integer, no_string_rules, number_rules, string_rules, values,
};
use crate::protocol::walk::Items;
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
    /// The value's start, and its end with [`UNESCAPED`] added when the value is a string
    /// with no escape (found so when it was listed).
    value: (u32, u32),
}

/// A [`Member`]'s value is a string with no escape: a bit of its end's place (a text read so
/// is shorter).
const UNESCAPED: u32 = 1 << 31;

impl Member {
    /// The key's text, out of the object's `text`.
    #[inline]
    pub(crate) fn key<'a>(&self, text: &'a [u8]) -> Option<&'a [u8]> {
        text.get(self.key.0 as usize..self.key.1 as usize)
    }

    /// The value's text, out of the object's `text`.
    #[inline]
    pub(crate) fn value<'a>(&self, text: &'a [u8]) -> Option<&'a [u8]> {
        text.get(self.value.0 as usize..(self.value.1 & !UNESCAPED) as usize)
    }

    /// Whether the value is a string with no escape.
    #[inline]
    pub(super) fn unescaped(&self) -> bool {
        self.value.1 & UNESCAPED != 0
    }

    #[inline]
    pub(crate) fn key_str<'a>(&self, text: &'a str) -> Option<&'a str> {
        text.get(self.key.0 as usize..self.key.1 as usize)
    }

    #[inline]
    pub(crate) fn value_str<'a>(&self, text: &'a str) -> Option<&'a str> {
        text.get(self.value.0 as usize..(self.value.1 & !UNESCAPED) as usize)
    }
}

/// Where each member of an object's text is, in their order: up to [`FEW`] kept in place (no
/// allocation for the objects calls have), all of them in a list past that.
#[derive(Clone, Debug, Default)]
pub(crate) struct Members {
    few: [Member; FEW],
    len: usize,
    more: Vec<Member>,
    /// The members of the first member whose value is an object, and that member's place,
    /// when they were listed with the object's ([`Quick::valid_text`]): in places of the
    /// same text, so that the object is walked once, and read member by member.
    inner: Option<(usize, Box<Members>)>,
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
        self.inner = None;
    }

    /// The members of the value of the member at place `at`, an object, when they were
    /// listed with these (in places of the same text).
    pub(crate) fn inner(&self, at: usize) -> Option<&Members> {
        match &self.inner {
            Some((place, members)) if *place == at => Some(members),
            _ => None,
        }
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

/// The members of an object's valid JSON text, in their order, into `members`: `false` when
/// a key has an escape (or the text is not an object's).
pub(crate) fn members_of(text: &[u8], members: &mut Members) -> bool {
    list(text, members).is_ok()
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
        let bytes = text.as_bytes();
        list_at(bytes, space(bytes, 0), members, true).ok()?;
        if members.len() > MEMBERS {
            return None;
        }
        let listed = members.as_slice();
        distinct(bytes, listed).ok()?;
        for (at, member) in listed.iter().enumerate() {
            if member.unescaped() {
                continue;
            }
            match members.inner(at) {
                Some(inner) => plain_members(text, inner, 1).ok()?,
                None => plain(member.value_str(text)?, 1).ok()?,
            }
        }
        let walk = Walk {
            parts: &self.parts,
            elsewhere: &|_, _| false,
        };
        let object = Listed { text, members };
        matches!(walk.valid(0, &object, 0), Ok(true)).then_some(())
    }
}

/// An object's text and its members, found already (in places of that text).
#[derive(Clone, Copy)]
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

/// A value's text: exactly its text, with no whitespace around it; `unescaped` when it is
/// known to be a string with no escape, `inner` when it is an object whose members were
/// found already.
struct Text<'a> {
    text: &'a str,
    unescaped: bool,
    inner: Option<Listed<'a>>,
}

impl<'a> Text<'a> {
    /// A value's text, not looked into yet.
    fn of(text: &'a str) -> Text<'a> {
        Text {
            text,
            unescaped: false,
            inner: None,
        }
    }

    /// The string the text is, its escapes undone (the text between its quotes when it has
    /// none).
    fn string(&self) -> Result<Cow<'a, str>, TooDeep> {
        match self.unescaped {
            true => self
                .text
                .get(1..self.text.len().saturating_sub(1))
                .map(Cow::Borrowed)
                .ok_or(TooDeep),
            false => string(self.text),
        }
    }
}

impl Instance for Text<'_> {
    fn own(&self, walk: &Walk<'_>, rules: &Rules, depth: u32) -> Result<bool, TooDeep> {
        let text = self.text;
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
        if rules.valued && !text_values(rules, self, bit, number.as_ref())? {
            return Ok(false);
        }
        Ok(match (bit, number) {
            (_, Some(n)) => number_rules(rules, &n),
            (STRING, _) => no_string_rules(rules) || string_rules(rules, &self.string()?),
            (ARRAY, _) => walk.array_text(rules, text, depth)?,
            (OBJECT, _) => match &self.inner {
                Some(listed) => walk.object_text(rules, listed, depth)?,
                None => {
                    let mut members = Members::default();
                    list(text.as_bytes(), &mut members)?;
                    walk.object_text(
                        rules,
                        &Listed {
                            text,
                            members: &members,
                        },
                        depth,
                    )?
                }
            },
            _ => true,
        })
    }

    /// A part the full validator checks is not judged on text.
    fn elsewhere(&self, _: &Walk<'_>, _: usize) -> Result<bool, TooDeep> {
        Err(TooDeep)
    }
}

/// `const` and `enum` on a value's text (of type `bit`; `number` if it is one): a string,
/// a number or a literal is compared as the value it is, without building one; an array or
/// an object is read as a `Value`.
#[inline(never)]
fn text_values(
    rules: &Rules,
    text: &Text<'_>,
    bit: u8,
    number: Option<&Number>,
) -> Result<bool, TooDeep> {
    let value = match (bit, number) {
        (STRING, _) => {
            let s = text.string()?;
            let is = |v: &Value| v.as_str() == Some(&*s);
            return Ok(rules.constant.as_ref().is_none_or(is)
                && rules
                    .one_of_values
                    .as_ref()
                    .is_none_or(|vs| vs.iter().any(is)));
        }
        (_, Some(n)) => Value::Number(n.clone()),
        (NULL, _) => Value::Null,
        (BOOLEAN, _) => Value::Bool(text.text == "true"),
        _ => serde_json::from_str(text.text).map_err(|_| TooDeep)?,
    };
    Ok(values(rules, &value))
}

impl Walk<'_> {
    /// The array rules, on an array's text.
    #[inline(never)]
    fn array_text(&self, rules: &Rules, text: &str, depth: u32) -> Result<bool, TooDeep> {
        if rules.unique_items || !rules.prefix_items.is_empty() {
            // Judged on the value.
            return Err(TooDeep);
        }
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
                if !self.valid(part, &Text::of(item), depth)? {
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
        for (at, member) in members.iter().enumerate() {
            let name = member.key_str(text).ok_or(TooDeep)?;
            let Some(part) = rules.part_of(name, &mut seen, &mut next) else {
                continue;
            };
            let value = Text {
                text: member.value_str(text).ok_or(TooDeep)?,
                unescaped: member.unescaped(),
                inner: members.inner(at).map(|members| Listed { text, members }),
            };
            if !self.valid(part, &value, depth)? {
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
pub(super) fn list(bytes: &[u8], members: &mut Members) -> Result<(), TooDeep> {
    list_at(bytes, space(bytes, 0), members, false).map(drop)
}

/// [`list`] of the object at `at` in `bytes`, its members' places those of `bytes`; with
/// `inner`, the members of the first member whose value is an object too
/// ([`Members::inner`]). The end of the object.
fn list_at(
    bytes: &[u8],
    mut at: usize,
    members: &mut Members,
    inner: bool,
) -> Result<usize, TooDeep> {
    members.clear();
    if bytes.len() >= UNESCAPED as usize {
        return Err(TooDeep);
    }
    if bytes.get(at) != Some(&b'{') {
        return Err(TooDeep);
    }
    at = space(bytes, at + 1);
    if bytes.get(at) == Some(&b'}') {
        return Ok(at + 1);
    }
    loop {
        if bytes.get(at) != Some(&b'"') {
            return Err(TooDeep);
        }
        let key = at + 1;
        // Keys are short: looked through a byte at a time.
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
        let (end, unescaped) = match bytes.get(start) {
            Some(b'"') => {
                let (close, escaped) = string_close(bytes, start + 1)?;
                (close + 1, !escaped)
            }
            Some(b'{') if inner && members.inner.is_none() => {
                let mut listed = Box::<Members>::default();
                let end = list_at(bytes, start, &mut listed, false)?;
                members.inner = Some((members.len(), listed));
                (end, false)
            }
            _ => (value_end(bytes, start)?, false),
        };
        // Within `text`, shorter than `UNESCAPED`.
        let place = |at: usize| at as u32;
        let flag = if unescaped { UNESCAPED } else { 0 };
        members.push(Member {
            key: (place(key), place(close)),
            value: (place(start), place(end) | flag),
        });
        at = space(bytes, end);
        match bytes.get(at) {
            Some(b',') => at = space(bytes, at + 1),
            Some(b'}') => return Ok(at + 1),
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
fn string_end(bytes: &[u8], at: usize) -> Result<usize, TooDeep> {
    string_close(bytes, at).map(|(close, _)| close)
}

/// The closing quote of the string whose text starts at `at`, in valid JSON text, and
/// whether the string has an escape.
fn string_close(bytes: &[u8], mut at: usize) -> Result<(usize, bool), TooDeep> {
    let mut escaped = false;
    loop {
        at = quote_or_backslash(bytes, at).ok_or(TooDeep)?;
        match bytes.get(at) {
            Some(b'"') => return Ok((at, escaped)),
            _ => (at, escaped) = (at + 2, true),
        }
    }
}

/// The place of the first `"` or `\` at or after `at`: eight bytes at a time, each word
/// tested for either byte at once (a byte equal to it is a zero in the word xor its byte
/// repeated; the lowest zero byte is found exactly).
pub(super) fn quote_or_backslash(bytes: &[u8], at: usize) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const QUOTES: u64 = u64::from_ne_bytes([b'"'; 8]);
    const BACKSLASHES: u64 = u64::from_ne_bytes([b'\\'; 8]);
    let zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGHS;
    let rest = bytes.get(at..)?;
    let mut words = rest.chunks_exact(8);
    let mut done = at;
    for word in words.by_ref() {
        let w = u64::from_le_bytes(word.try_into().ok()?);
        let found = zero(w ^ QUOTES) | zero(w ^ BACKSLASHES);
        if found != 0 {
            return Some(done + (found.trailing_zeros() / 8) as usize);
        }
        done += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&b| b == b'"' || b == b'\\')
        .map(|n| done + n)
}

/// Whether the keys of `listed` (members of `bytes`) are distinct: `Err` on one given twice.
fn distinct(bytes: &[u8], listed: &[Member]) -> Result<(), TooDeep> {
    for (at, member) in listed.iter().enumerate() {
        let key = member.key(bytes);
        if listed[..at].iter().any(|other| other.key(bytes) == key) {
            return Err(TooDeep);
        }
    }
    Ok(())
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

/// [`plain`] of an object (at `depth`) whose `members` (in places of `text`) are found: its
/// keys distinct and at most [`MEMBERS`], its values plain.
fn plain_members(text: &str, members: &Members, depth: u32) -> Result<(), TooDeep> {
    if members.len() > MEMBERS {
        return Err(TooDeep);
    }
    distinct(text.as_bytes(), members.as_slice())?;
    for member in members.iter().filter(|m| !m.unescaped()) {
        plain(member.value_str(text).ok_or(TooDeep)?, depth + 1)?;
    }
    Ok(())
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
            let mut members = Members::default();
            list(text.as_bytes(), &mut members)?;
            plain_members(text, &members, depth)
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
