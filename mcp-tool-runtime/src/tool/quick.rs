//! The quick path of validation: the common rules of a compiled schema checked straight on
//! the value, so that a valid call (nearly every call) is accepted without going through
//! boon's general machinery, which sets up an evaluation, a location and a table of
//! unevaluated properties at every level.
//!
//! A [`Quick`] answers exactly what boon answers, never a guess: each rule it checks is
//! checked by boon's definition (the same `type`, number and length comparisons, the same
//! equality for `const` and `enum`, the same integer formats), and a part of the schema
//! whose rules it does not check (a pattern, `uniqueItems`, a format other than an integer
//! one or `email`) is handed to boon, compiled at that part's location; so is an `email`
//! string that is not an address of the plainest kind, the only kind checked here (boon
//! accepts every one of them). A schema whose keywords
//! depend on more than the part they sit in (`unevaluated*`, dynamic references, `$id`,
//! `$anchor`, another draft) gets no `Quick`: boon checks it whole. So does an instance
//! whose walk goes deeper than [`MAX_DEPTH`] (a reference loop, or a very deep value).
//!
//! The validator uses it as a shortcut only: an instance it accepts is valid; any other goes
//! to boon, for the verdict and the wording of the errors.

use boon::{Compiler, SchemaIndex, Schemas};
use serde_json::{Map, Number, Value};

use super::integers;

/// How many schema parts one check may enter before it gives the instance to boon.
const MAX_DEPTH: u32 = 128;

/// A schema's common rules, ready to check values with.
pub(crate) struct Quick {
    parts: Vec<Part>,
}

/// One part of a schema (the root, or a subschema).
enum Part {
    /// `true` or `false`.
    Always(bool),
    /// A part boon checks: its compiled subschema.
    Boon(SchemaIndex),
    /// A part whose every rule the quick path checks.
    Rules(Box<Rules>),
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
    /// `format: email`: the part as boon compiled it, which decides a string that is not
    /// plainly an address ([`plain_email`]).
    email: Option<SchemaIndex>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    exclusive_minimum: Option<f64>,
    exclusive_maximum: Option<f64>,
    multiple_of: Option<f64>,
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

/// The walk went too deep: boon decides.
struct TooDeep;

impl Quick {
    /// The quick rules of `schema`, compiled by boon at `location` into `schemas` (done
    /// already for the root); `None` for a schema boon must check whole.
    pub(crate) fn build(
        schema: &Value,
        location: &str,
        compiler: &mut Compiler,
        schemas: &mut Schemas,
    ) -> Option<Quick> {
        Some(Quick {
            parts: build::parts(schema, location, compiler, schemas)?,
        })
    }

    /// Whether `instance` is valid (`Some(true)`) or not (`Some(false)`), as boon would say;
    /// `None` when the check went too deep to say.
    pub(crate) fn check(&self, instance: &Value, schemas: &Schemas) -> Option<bool> {
        Walk {
            parts: &self.parts,
            schemas,
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
    schemas: &'a Schemas,
}

impl Walk<'_> {
    /// Whether `value` satisfies part `index`; `depth` counts the parts entered so far.
    fn valid(&self, index: usize, value: &Value, depth: u32) -> Result<bool, TooDeep> {
        if depth >= MAX_DEPTH {
            return Err(TooDeep);
        }
        match &self.parts[index] {
            Part::Always(b) => Ok(*b),
            Part::Boon(schema) => Ok(self.boon(value, *schema)),
            Part::Rules(rules) => self.rules(rules, value, depth + 1),
        }
    }

    /// boon's verdict on a part.
    #[inline(never)]
    fn boon(&self, value: &Value, schema: SchemaIndex) -> bool {
        self.schemas.validate(value, schema).is_ok()
    }

    /// The rules of a part. The checks of objects, arrays, values and applicators are
    /// functions of their own, so that checking a number or a string stays small.
    fn rules(&self, rules: &Rules, value: &Value, depth: u32) -> Result<bool, TooDeep> {
        if rules.types != 0 && !of_type(value, rules.types) {
            return Ok(false);
        }
        if rules.valued && !values(rules, value) {
            return Ok(false);
        }
        let own = match value {
            Value::Number(n) => number_rules(rules, n),
            Value::String(s) => match rules.email {
                Some(part) if !plain_email(s) => return Ok(self.boon(value, part)),
                _ => string_rules(rules, s),
            },
            Value::Array(items) => self.array_rules(rules, items, depth)?,
            Value::Object(map) => self.object_rules(rules, map, depth)?,
            Value::Null | Value::Bool(_) => true,
        };
        if !own {
            return Ok(false);
        }
        if rules.linked {
            return self.applicators(rules, value, depth);
        }
        Ok(true)
    }

    /// `$ref` and the applicators.
    #[inline(never)]
    fn applicators(&self, rules: &Rules, value: &Value, depth: u32) -> Result<bool, TooDeep> {
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
        if let Some((condition, then, otherwise)) = rules.condition {
            let branch = if self.valid(condition, value, depth)? {
                then
            } else {
                otherwise
            };
            if let Some(branch) = branch {
                return self.valid(branch, value, depth);
            }
        }
        Ok(true)
    }

    #[inline(never)]
    fn array_rules(&self, rules: &Rules, items: &[Value], depth: u32) -> Result<bool, TooDeep> {
        if rules.min_items.is_some_and(|min| items.len() < min)
            || rules.max_items.is_some_and(|max| items.len() > max)
        {
            return Ok(false);
        }
        if let Some(part) = rules.items {
            for item in items {
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
        let mut seen = 0_u64;
        for (name, value) in map {
            let part = match rules
                .properties
                .binary_search_by(|(p, _)| p.as_str().cmp(name))
            {
                Ok(at) => {
                    if at < 64 {
                        seen |= 1 << at;
                    }
                    rules.properties[at].1
                }
                Err(_) => match rules.additional_properties {
                    Some(part) => part,
                    None => continue,
                },
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

/// Whether `s` is an email address of the plainest kind, which boon's `email` format
/// accepts: one `@`; before it 1 to 64 letters, digits and `._+-`, with no dot first, last
/// or twice in a row; after it dot-separated labels of 1 to 63 letters, digits and hyphens,
/// neither starting nor ending with a hyphen; 254 bytes in all. Any other string is boon's
/// to judge.
fn plain_email(s: &str) -> bool {
    let bytes = s.as_bytes();
    if bytes.len() > 254 {
        return false;
    }
    // The local part: `last` starts as a dot, so that a dot first counts as a dot twice.
    let mut last = b'.';
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        let class = BYTES[usize::from(b)];
        if class & LOCAL == 0 {
            if b == b'@' {
                break;
            }
            return false;
        }
        if b == b'.' && last == b'.' {
            return false;
        }
        last = b;
        at += 1;
    }
    if at == bytes.len() || at == 0 || at > 64 || last == b'.' {
        return false;
    }
    // The domain, label by label (a second `@` is no label's character).
    let (mut label, mut last) = (0, b'.');
    for &b in &bytes[at + 1..] {
        if BYTES[usize::from(b)] & ALNUM != 0 || (b == b'-' && label != 0) {
            label += 1;
        } else if b == b'.' && label != 0 && last != b'-' {
            label = 0;
        } else {
            return false;
        }
        if label > 63 {
            return false;
        }
        last = b;
    }
    label > 0 && last != b'-'
}

/// [`BYTES`]: a letter or a digit.
const ALNUM: u8 = 1;
/// [`BYTES`]: a byte of a plain local part (a letter, a digit or `._+-`).
const LOCAL: u8 = 2;

/// The classes of the bytes [`plain_email`] tells apart.
const BYTES: [u8; 256] = {
    let mut table = [0; 256];
    let mut b = 0;
    while b < 256 {
        #[allow(clippy::cast_possible_truncation)]
        let byte = b as u8;
        if byte.is_ascii_alphanumeric() {
            table[b] = ALNUM | LOCAL;
        } else if matches!(byte, b'.' | b'_' | b'+' | b'-') {
            table[b] = LOCAL;
        }
        b += 1;
    }
    table
};

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
    !(rules.minimum.is_some_and(|m| f < m)
        || rules.maximum.is_some_and(|m| f > m)
        || rules.exclusive_minimum.is_some_and(|m| f <= m)
        || rules.exclusive_maximum.is_some_and(|m| f >= m)
        || rules.multiple_of.is_some_and(|m| (f / m).fract() != 0.0))
}

/// The length keywords, in characters.
fn string_rules(rules: &Rules, s: &str) -> bool {
    if rules.min_length.is_none() && rules.max_length.is_none() {
        return true;
    }
    let len = s.chars().count();
    !(rules.min_length.is_some_and(|min| len < min)
        || rules.max_length.is_some_and(|max| len > max))
}

mod build;
#[cfg(test)]
mod tests;
