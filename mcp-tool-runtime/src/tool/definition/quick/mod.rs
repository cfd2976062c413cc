//! The validator's own rules: the keywords derived schemas use, and the common ones besides,
//! checked straight on the value, so that a call is judged without a general validator's
//! machinery (an evaluation, a location and a table of unevaluated properties set up at every
//! level).
//!
//! A [`Quick`] answers what the full validator (boon, feature `full-schema`) answers, never a
//! guess: each rule is checked by its definition in JSON Schema 2020-12 as boon checks it (the
//! same `type`, number and length comparisons, the same equality for `const`, `enum` and
//! `uniqueItems`, the same integer formats), and [`Quick::explain`] reports a broken rule as
//! boon reports it. The rules are `type`, `const`, `enum`, the number and length bounds,
//! `required`, `properties`, `additionalProperties`, `items`, `prefixItems`, `uniqueItems`,
//! `pattern`, local `$ref` (a JSON pointer or an `$anchor`), `allOf`, `anyOf`, `oneOf`,
//! `not`, `if`/`then`/`else`, schemars' integer formats and the formats of [`formats`].
//! Where boon strays from a format's RFC or from ECMA-262 (a sign in a date's numbers, `.`
//! matching `\r`), the rules keep to the standard, and an item past `prefixItems` is named by
//! its own index.
//!
//! A part of the schema with other keywords (`patternProperties`, `contains`, an
//! internationalized format, a pattern `regex-lite` cannot run) is the full validator's,
//! compiled at that part's location and reached through [`Quick::check`]'s `elsewhere`;
//! without that validator the schema is refused ([`Refusal`]). A schema whose keywords depend
//! on more than the part they sit in (`unevaluated*`, dynamic references, `$id`, another
//! draft) is refused too, or checked by the full validator whole; so is one whose
//! references loop without going into the value. An instance whose walk goes deeper than
//! [`MAX_DEPTH`] parts is [`TooDeep`].

use serde_json::{Map, Number, Value};

use crate::tool::definition::integers;
use formats::Format;
use pattern::Pattern;

pub(crate) use build::Refusal;
#[cfg(feature = "client")]
pub(crate) use build::{ONE_SCHEMA, SCHEMA_LISTS, SCHEMA_MAPS};
pub(crate) use explain::{Failure, Kind, Token};
pub(crate) use raw::{Integer, Member, Members, integer, members_of};

/// How many schema parts one check may enter before it stops ([`TooDeep`]). A schema whose
/// references loop at one value is refused when built, so only a deep value reaches it.
pub(crate) const MAX_DEPTH: u32 = 256;

/// A schema's rules, ready to check values with.
pub(crate) struct Quick {
    parts: Vec<Part>,
    /// Whether no part is the full validator's: the rules decide every instance, and
    /// [`Quick::explain`] words every refusal.
    complete: bool,
}

/// One part of a schema (the root, or a subschema).
enum Part {
    /// `true` or `false`.
    Always(bool),
    /// A part the full validator checks: the number it gave the part.
    Elsewhere(usize),
    /// A part whose every rule is checked here.
    Rules(Box<Rules>),
}

/// A bound of a number (`minimum`, …): compared as a float, shown as the schema wrote it.
struct Bound {
    at: f64,
    shown: Number,
}

/// The rules of one part, each as boon defines it. Parts are referred to by their index.
#[derive(Default)]
struct Rules {
    /// Bits of [`type_bit`]; 0 for no `type`.
    types: u8,
    constant: Option<Value>,
    one_of_values: Option<Vec<Value>>,
    /// An integer format's range (schemars' `int32`, `uint64`, …).
    integer_range: Option<(i128, i128)>,
    /// The integer format's name, for the message.
    integer_format: Option<String>,
    /// A string format asserted here (`email`, `date-time`, `uuid`, …).
    format: Option<Format>,
    pattern: Option<Pattern>,
    minimum: Option<Bound>,
    maximum: Option<Bound>,
    exclusive_minimum: Option<Bound>,
    exclusive_maximum: Option<Bound>,
    multiple_of: Option<Bound>,
    min_length: Option<usize>,
    max_length: Option<usize>,
    required: Vec<String>,
    /// The required properties as bits of their places in `properties`, when each is one
    /// of the (at most 64) properties; `required` is then not searched for.
    required_bits: Option<u64>,
    /// Sorted by name.
    properties: Vec<(String, usize)>,
    additional_properties: Option<usize>,
    min_properties: Option<usize>,
    max_properties: Option<usize>,
    items: Option<usize>,
    /// `prefixItems`: the parts of the first items; `items` checks those after them.
    prefix_items: Vec<usize>,
    unique_items: bool,
    min_items: Option<usize>,
    max_items: Option<usize>,
    reference: Option<usize>,
    all_of: Vec<usize>,
    any_of: Vec<usize>,
    one_of: Vec<usize>,
    not: Option<usize>,
    condition: Option<(usize, Option<usize>, Option<usize>)>,
    /// Whether it has a `$ref` or an applicator.
    linked: bool,
    /// Whether it has `const` or `enum`.
    valued: bool,
}

impl Rules {
    /// The part that checks the property `name` (its own, else `additionalProperties`), if
    /// any; a property of its own is marked in `seen` (by its place, for `required_bits`).
    /// The property after the one found last (`next`) is tried first: members often come
    /// in the order of their names.
    fn part_of(&self, name: &str, seen: &mut u64, next: &mut usize) -> Option<usize> {
        let found = match self.properties.get(*next) {
            Some((p, _)) if p == name => Ok(*next),
            _ => self
                .properties
                .binary_search_by(|(p, _)| p.as_str().cmp(name)),
        };
        match found {
            Ok(at) => {
                *next = at + 1;
                if at < 64 {
                    *seen |= 1 << at;
                }
                Some(self.properties[at].1)
            }
            Err(_) => self.additional_properties,
        }
    }
}

/// The walk entered more than [`MAX_DEPTH`] parts on one path.
#[derive(Debug)]
pub(crate) struct TooDeep;

/// Checks a part that is the full validator's: its number, the value; whether it is valid.
pub(crate) type Elsewhere<'a> = &'a dyn Fn(usize, &Value) -> bool;

impl Quick {
    /// The rules of `schema`. `elsewhere` is given the JSON pointer of each part whose
    /// keywords are not checked here, and answers the number the full validator gave it, or
    /// `None` when there is no full validator (the schema is then refused).
    pub(crate) fn build(
        schema: &Value,
        elsewhere: &mut dyn FnMut(&str) -> Option<usize>,
    ) -> Result<Quick, Refusal> {
        let parts = build::parts(schema, elsewhere)?;
        let complete = !parts.iter().any(|p| matches!(p, Part::Elsewhere(_)));
        Ok(Quick { parts, complete })
    }

    /// The rules with every part the full validator would check taken as valid: they then
    /// decide, and word, every instance themselves.
    #[cfg_attr(feature = "full-schema", allow(dead_code))]
    pub(crate) fn assuming_elsewhere_valid(self) -> Quick {
        Quick {
            parts: self
                .parts
                .into_iter()
                .map(|part| match part {
                    Part::Elsewhere(_) => Part::Always(true),
                    other => other,
                })
                .collect(),
            complete: true,
        }
    }

    /// Whether `instance` is valid (`Some(true)`) or not (`Some(false)`), as boon would say;
    /// `None` when the check went too deep to say.
    pub(crate) fn check(&self, instance: &Value, elsewhere: Elsewhere<'_>) -> Option<bool> {
        Walk {
            parts: &self.parts,
            elsewhere,
        }
        .valid(0, instance, 0)
        .ok()
    }
}

const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
const NUMBER: u8 = 4;
const INTEGER: u8 = 8;
const STRING: u8 = 16;
const ARRAY: u8 = 32;
const OBJECT: u8 = 64;

/// Whether `value` is of one of the types in `types`: an integer is a number with no
/// fraction, `1.0` included.
fn of_type(value: &Value, types: u8) -> bool {
    let bit = match value {
        Value::Null => NULL,
        Value::Bool(_) => BOOLEAN,
        Value::Number(n) => {
            if types & NUMBER != 0 {
                return true;
            }
            return types & INTEGER != 0 && is_integer(n);
        }
        Value::String(_) => STRING,
        Value::Array(_) => ARRAY,
        Value::Object(_) => OBJECT,
    };
    types & bit != 0
}

fn is_integer(n: &Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// JSON Schema's equality: numbers by value (`1` equals `1.0`), objects whatever their order.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(x), Some(y)) = (x.as_u64(), y.as_u64()) {
                x == y
            } else if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
                x == y
            } else {
                x.as_f64() == y.as_f64()
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

struct Walk<'a> {
    parts: &'a [Part],
    elsewhere: Elsewhere<'a>,
}

/// What a walk checks: a [`Value`], or a value's text ([`raw`]).
trait Instance {
    /// Whether the value keeps the part's own rules (its type, values, and the rules of
    /// its kind: numbers, strings, arrays, objects), its applicators left to the walk.
    fn own(&self, walk: &Walk<'_>, rules: &Rules, depth: u32) -> Result<bool, TooDeep>;

    /// Whether the value fits a part the full validator checks.
    fn elsewhere(&self, walk: &Walk<'_>, part: usize) -> Result<bool, TooDeep>;
}

impl Instance for Value {
    /// The checks of objects, arrays, values and applicators are functions of their own, so
    /// that checking a number or a string stays small.
    fn own(&self, walk: &Walk<'_>, rules: &Rules, depth: u32) -> Result<bool, TooDeep> {
        if rules.types != 0 && !of_type(self, rules.types) {
            return Ok(false);
        }
        if rules.valued && !values(rules, self) {
            return Ok(false);
        }
        Ok(match self {
            Value::Number(n) => number_rules(rules, n),
            Value::String(s) => string_rules(rules, s),
            Value::Array(items) => walk.array_rules(rules, items, depth)?,
            Value::Object(map) => walk.object_rules(rules, map, depth)?,
            Value::Null | Value::Bool(_) => true,
        })
    }

    fn elsewhere(&self, walk: &Walk<'_>, part: usize) -> Result<bool, TooDeep> {
        Ok((walk.elsewhere)(part, self))
    }
}

impl Walk<'_> {
    /// Whether `value` satisfies part `index`; `depth` counts the parts entered so far.
    fn valid<I: Instance>(&self, index: usize, value: &I, depth: u32) -> Result<bool, TooDeep> {
        if depth >= MAX_DEPTH {
            return Err(TooDeep);
        }
        match &self.parts[index] {
            Part::Always(b) => Ok(*b),
            Part::Elsewhere(part) => value.elsewhere(self, *part),
            Part::Rules(rules) => self.rules(rules, value, depth + 1),
        }
    }

    /// The rules of a part: the value's own, then its applicators.
    fn rules<I: Instance>(&self, rules: &Rules, value: &I, depth: u32) -> Result<bool, TooDeep> {
        if !value.own(self, rules, depth)? {
            return Ok(false);
        }
        if rules.linked {
            return self.applicators(rules, value, depth);
        }
        Ok(true)
    }

    /// `$ref` and the applicators.
    #[inline(never)]
    fn applicators<I: Instance>(
        &self,
        rules: &Rules,
        value: &I,
        depth: u32,
    ) -> Result<bool, TooDeep> {
        if let Some(target) = rules.reference
            && !self.valid(target, value, depth)?
        {
            return Ok(false);
        }
        if let Some(not) = rules.not
            && self.valid(not, value, depth)?
        {
            return Ok(false);
        }
        for &part in &rules.all_of {
            if !self.valid(part, value, depth)? {
                return Ok(false);
            }
        }
        if !rules.any_of.is_empty() {
            let mut any = false;
            for &part in &rules.any_of {
                if self.valid(part, value, depth)? {
                    any = true;
                    break;
                }
            }
            if !any {
                return Ok(false);
            }
        }
        if !rules.one_of.is_empty() {
            let mut matched = 0;
            for &part in &rules.one_of {
                if self.valid(part, value, depth)? {
                    matched += 1;
                    if matched > 1 {
                        return Ok(false);
                    }
                }
            }
            if matched != 1 {
                return Ok(false);
            }
        }
        if let Some(condition) = rules.condition
            && let Some(branch) = self.branch(condition, value, depth)?
        {
            return self.valid(branch, value, depth);
        }
        Ok(true)
    }

    /// The branch of an `if` (its `then` or its `else`) that applies to `value`, if it has one.
    fn branch<I: Instance>(
        &self,
        (condition, then, otherwise): (usize, Option<usize>, Option<usize>),
        value: &I,
        depth: u32,
    ) -> Result<Option<usize>, TooDeep> {
        Ok(if self.valid(condition, value, depth)? {
            then
        } else {
            otherwise
        })
    }

    #[inline(never)]
    fn array_rules(&self, rules: &Rules, items: &[Value], depth: u32) -> Result<bool, TooDeep> {
        if rules.min_items.is_some_and(|min| items.len() < min)
            || rules.max_items.is_some_and(|max| items.len() > max)
        {
            return Ok(false);
        }
        if rules.unique_items && duplicate(items).is_some() {
            return Ok(false);
        }
        for (&part, item) in rules.prefix_items.iter().zip(items) {
            if !self.valid(part, item, depth)? {
                return Ok(false);
            }
        }
        if let Some(part) = rules.items {
            for item in items.iter().skip(rules.prefix_items.len()) {
                if !self.valid(part, item, depth)? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    #[inline(never)]
    fn object_rules(
        &self,
        rules: &Rules,
        map: &Map<String, Value>,
        depth: u32,
    ) -> Result<bool, TooDeep> {
        if rules.min_properties.is_some_and(|min| map.len() < min)
            || rules.max_properties.is_some_and(|max| map.len() > max)
        {
            return Ok(false);
        }
        if rules.required_bits.is_none() && rules.required.iter().any(|n| !map.contains_key(n)) {
            return Ok(false);
        }
        let (mut seen, mut next) = (0_u64, 0);
        for (name, value) in map {
            let Some(part) = rules.part_of(name, &mut seen, &mut next) else {
                continue;
            };
            if !self.valid(part, value, depth)? {
                return Ok(false);
            }
        }
        Ok(rules.required_bits.is_none_or(|bits| seen & bits == bits))
    }
}

/// `const` and `enum`.
#[inline(never)]
fn values(rules: &Rules, value: &Value) -> bool {
    rules.constant.as_ref().is_none_or(|c| equal(value, c))
        && rules
            .one_of_values
            .as_ref()
            .is_none_or(|values| values.iter().any(|v| equal(value, v)))
}

/// The number keywords, compared as floats as boon compares them, and an integer format's
/// range.
fn number_rules(rules: &Rules, n: &Number) -> bool {
    if rules
        .integer_range
        .is_some_and(|range| !integers::within(n, range))
    {
        return false;
    }
    let Some(f) = n.as_f64() else {
        return true;
    };
    !(rules.minimum.as_ref().is_some_and(|m| f < m.at)
        || rules.maximum.as_ref().is_some_and(|m| f > m.at)
        || rules.exclusive_minimum.as_ref().is_some_and(|m| f <= m.at)
        || rules.exclusive_maximum.as_ref().is_some_and(|m| f >= m.at)
        || rules
            .multiple_of
            .as_ref()
            .is_some_and(|m| (f / m.at).fract() != 0.0))
}

/// Whether the part has no rule for a string's text (its length, a format, a pattern).
fn no_string_rules(rules: &Rules) -> bool {
    rules.min_length.is_none()
        && rules.max_length.is_none()
        && rules.format.is_none()
        && rules.pattern.is_none()
}

/// The length keywords (in characters), the format and the pattern.
fn string_rules(rules: &Rules, s: &str) -> bool {
    if rules.min_length.is_some() || rules.max_length.is_some() {
        let len = s.chars().count();
        if rules.min_length.is_some_and(|min| len < min)
            || rules.max_length.is_some_and(|max| len > max)
        {
            return false;
        }
    }
    rules.format.is_none_or(|f| f.valid(s)) && rules.pattern.as_ref().is_none_or(|p| p.is_match(s))
}

/// The first two equal items (JSON Schema's equality), as the full validator finds them:
/// of up to 20 items, the first pair in order; of more, the first item equal to one before
/// it, found by a hash that agrees with [`equal`].
fn duplicate(items: &[Value]) -> Option<(usize, usize)> {
    if items.len() <= 20 {
        for (i, a) in items.iter().enumerate() {
            if let Some(j) = items[i + 1..].iter().position(|b| equal(a, b)) {
                return Some((i, i + 1 + j));
            }
        }
        return None;
    }
    let mut seen: std::collections::HashMap<u64, Vec<usize>> =
        std::collections::HashMap::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let earlier = seen.entry(hash(item)).or_default();
        if let Some(&j) = earlier.iter().find(|&&j| equal(&items[j], item)) {
            return Some((j, i));
        }
        earlier.push(i);
    }
    None
}

/// A hash of `value` under which [`equal`] values are equal: numbers by their value as a
/// float, objects whatever the order of their members.
fn hash(value: &Value) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    match value {
        Value::Null => 0_u8.hash(&mut hasher),
        Value::Bool(b) => (1_u8, b).hash(&mut hasher),
        Value::Number(n) => {
            // `-0.0` is `0.0`.
            let f = n.as_f64().unwrap_or_default() + 0.0;
            (2_u8, f.to_bits()).hash(&mut hasher);
        }
        Value::String(s) => (3_u8, s).hash(&mut hasher),
        Value::Array(items) => {
            4_u8.hash(&mut hasher);
            for item in items {
                hash(item).hash(&mut hasher);
            }
        }
        Value::Object(map) => {
            let members = map.iter().fold(0_u64, |sum, (k, v)| {
                let mut member = std::hash::DefaultHasher::new();
                (k, hash(v)).hash(&mut member);
                sum.wrapping_add(member.finish())
            });
            (5_u8, members).hash(&mut hasher);
        }
    }
    hasher.finish()
}

mod build;
mod email;
mod explain;
mod formats;
mod pattern;
mod raw;
#[cfg(test)]
mod raw_tests;
