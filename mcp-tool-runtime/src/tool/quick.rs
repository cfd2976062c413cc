//! The quick path of validation: the common rules of a compiled schema checked straight on
//! the value, so that a valid call (nearly every call) is accepted without going through
//! boon's general machinery, which sets up an evaluation, a location and a table of
//! unevaluated properties at every level.
//!
//! A [`Quick`] answers exactly what boon answers, never a guess: each rule it checks is
//! checked by boon's definition (the same `type`, number and length comparisons, the same
//! equality for `const` and `enum`, the same integer formats), and a part of the schema
//! whose rules it does not check (a pattern, a format other than an integer one, an unusual
//! applicator) is handed to boon, compiled at that part's location. A schema whose keywords
//! depend on more than the part they sit in (`unevaluated*`, dynamic references, `$id`,
//! `$anchor`, another draft) gets no `Quick`: boon checks it whole. So does an instance
//! whose walk goes deeper than [`MAX_DEPTH`] (a reference loop, or a very deep value).
//!
//! The validator uses it as a shortcut only: an instance it accepts is valid; any other goes
//! to boon, for the verdict and the wording of the errors.

use std::collections::HashMap;
use std::fmt::Write as _;

use boon::{Compiler, SchemaIndex, Schemas};
use serde_json::{Map, Number, Value};

use super::integers;

/// How many schema parts one check may enter before it gives the instance to boon.
const MAX_DEPTH: u32 = 128;

/// Keywords whose meaning reaches beyond the part they sit in: a schema with any of them is
/// boon's alone.
const WHOLE_SCHEMA: &[&str] = &[
    "$id",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$vocabulary",
    "unevaluatedProperties",
    "unevaluatedItems",
];

/// Keywords boon asserts that the quick path leaves to it: a part with any of them is
/// checked by boon.
const LEFT_TO_BOON: &[&str] = &[
    "pattern",
    "patternProperties",
    "propertyNames",
    "dependencies",
    "dependentRequired",
    "dependentSchemas",
    "prefixItems",
    "additionalItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// Formats boon does not assert (schemars writes them for floats): annotations only.
const UNASSERTED_FORMATS: &[&str] = &["double", "float"];

/// The draft every schema is compiled as when it does not name one.
const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

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
    minimum: Option<f64>,
    maximum: Option<f64>,
    exclusive_minimum: Option<f64>,
    exclusive_maximum: Option<f64>,
    multiple_of: Option<f64>,
    min_length: Option<usize>,
    max_length: Option<usize>,
    required: Vec<String>,
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
        if !quick_schema(schema, true) {
            return None;
        }
        let mut builder = Builder {
            root: schema,
            location,
            compiler,
            schemas,
            parts: Vec::new(),
            at: HashMap::new(),
        };
        builder.part("").ok()?;
        Some(Quick {
            parts: builder.parts,
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

/// Whether the quick path may check `schema`: none of [`WHOLE_SCHEMA`]'s keywords anywhere
/// (as a keyword or not), and no draft but 2020-12.
fn quick_schema(schema: &Value, root: bool) -> bool {
    match schema {
        Value::Object(map) => map.iter().all(|(key, value)| {
            if WHOLE_SCHEMA.contains(&key.as_str()) {
                return false;
            }
            if key == "$schema" {
                return root && value.as_str() == Some(DRAFT_2020_12);
            }
            // Values (`const`, `default`, …) are searched too: a property or a value that
            // has one of these names only costs the shortcut.
            quick_schema(value, false)
        }),
        Value::Array(items) => items.iter().all(|v| quick_schema(v, false)),
        _ => true,
    }
}

struct Builder<'a> {
    root: &'a Value,
    location: &'a str,
    compiler: &'a mut Compiler,
    schemas: &'a mut Schemas,
    parts: Vec<Part>,
    /// The part compiled for each JSON pointer.
    at: HashMap<String, usize>,
}

/// A part that cannot be compiled (a reference that does not resolve, a location boon does
/// not compile): the whole schema is boon's.
struct Unbuildable;

impl Builder<'_> {
    /// The part at `pointer` (a JSON pointer into the root), compiled once.
    fn part(&mut self, pointer: &str) -> Result<usize, Unbuildable> {
        if let Some(&index) = self.at.get(pointer) {
            return Ok(index);
        }
        let root = self.root;
        let schema = root.pointer(pointer).ok_or(Unbuildable)?;
        let index = self.parts.len();
        // Reserved first, so that a reference back to this part finds it.
        self.parts.push(Part::Always(true));
        self.at.insert(pointer.to_owned(), index);
        let part = match schema {
            Value::Bool(b) => Part::Always(*b),
            Value::Object(map) => match self.rules(map, pointer)? {
                Some(rules) => Part::Rules(Box::new(rules)),
                None => Part::Boon(self.boon(pointer)?),
            },
            _ => return Err(Unbuildable),
        };
        self.parts[index] = part;
        Ok(index)
    }

    /// boon's compiled subschema at `pointer`.
    fn boon(&mut self, pointer: &str) -> Result<SchemaIndex, Unbuildable> {
        let location = format!("{}#{}", self.location, fragment(pointer));
        self.compiler
            .compile(&location, self.schemas)
            .map_err(|_| Unbuildable)
    }

    /// The rules of the part `map` at `pointer`; `None` when it is boon's to check.
    fn rules(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
    ) -> Result<Option<Rules>, Unbuildable> {
        if map.keys().any(|k| LEFT_TO_BOON.contains(&k.as_str())) {
            return Ok(None);
        }
        let mut rules = Rules::default();
        for (key, value) in map {
            let here = || format!("{pointer}/{}", escape(key));
            match key.as_str() {
                "type" => {
                    let names: Vec<&Value> = match value {
                        Value::Array(names) => names.iter().collect(),
                        one => vec![one],
                    };
                    for name in names {
                        match name.as_str().and_then(type_bit) {
                            Some(bit) => rules.types |= bit,
                            None => return Ok(None),
                        }
                    }
                }
                "const" => rules.constant = Some(value.clone()),
                "enum" => match value {
                    Value::Array(values) => rules.one_of_values = Some(values.clone()),
                    _ => return Ok(None),
                },
                "format" => match value.as_str() {
                    Some(name) if integers::range(name).is_some() => {
                        rules.integer_range = integers::range(name);
                    }
                    Some(name) if UNASSERTED_FORMATS.contains(&name) => {}
                    _ => return Ok(None),
                },
                "minimum" => rules.minimum = Some(float(value)?),
                "maximum" => rules.maximum = Some(float(value)?),
                "exclusiveMinimum" => rules.exclusive_minimum = Some(float(value)?),
                "exclusiveMaximum" => rules.exclusive_maximum = Some(float(value)?),
                "multipleOf" => rules.multiple_of = Some(float(value)?),
                "minLength" => rules.min_length = Some(count(value)?),
                "maxLength" => rules.max_length = Some(count(value)?),
                "minProperties" => rules.min_properties = Some(count(value)?),
                "maxProperties" => rules.max_properties = Some(count(value)?),
                "minItems" => rules.min_items = Some(count(value)?),
                "maxItems" => rules.max_items = Some(count(value)?),
                "required" => match value {
                    Value::Array(names) => {
                        for name in names {
                            let name = name.as_str().ok_or(Unbuildable)?;
                            rules.required.push(name.to_owned());
                        }
                    }
                    _ => return Err(Unbuildable),
                },
                "properties" => {
                    let properties = value.as_object().ok_or(Unbuildable)?;
                    let base = here();
                    for name in properties.keys() {
                        let part = self.part(&format!("{base}/{}", escape(name)))?;
                        rules.properties.push((name.clone(), part));
                    }
                    rules.properties.sort_by(|a, b| a.0.cmp(&b.0));
                }
                "additionalProperties" => rules.additional_properties = Some(self.part(&here())?),
                "items" => match value {
                    Value::Object(_) | Value::Bool(_) => rules.items = Some(self.part(&here())?),
                    _ => return Ok(None),
                },
                "allOf" | "anyOf" | "oneOf" => {
                    let list = value.as_array().ok_or(Unbuildable)?;
                    let base = here();
                    let parts = (0..list.len())
                        .map(|i| self.part(&format!("{base}/{i}")))
                        .collect::<Result<Vec<_>, _>>()?;
                    match key.as_str() {
                        "allOf" => rules.all_of = parts,
                        "anyOf" => rules.any_of = parts,
                        _ => rules.one_of = parts,
                    }
                }
                "not" => rules.not = Some(self.part(&here())?),
                "if" => {
                    let then = match map.get("then") {
                        Some(_) => Some(self.part(&format!("{pointer}/then"))?),
                        None => None,
                    };
                    let otherwise = match map.get("else") {
                        Some(_) => Some(self.part(&format!("{pointer}/else"))?),
                        None => None,
                    };
                    rules.condition = Some((self.part(&here())?, then, otherwise));
                }
                "$ref" => match value.as_str().and_then(local_pointer) {
                    Some(target) => rules.reference = Some(self.part(target)?),
                    None => return Ok(None),
                },
                // Annotations (`title`, `description`, `default`, …), `then`/`else` without
                // `if`, and the definitions references point into.
                _ => {}
            }
        }
        Ok(Some(rules))
    }
}

/// The JSON pointer of a reference within the schema itself (`#` or `#/…`, not
/// percent-encoded).
fn local_pointer(reference: &str) -> Option<&str> {
    let pointer = reference.strip_prefix('#')?;
    (pointer.is_empty() || pointer.starts_with('/') && !pointer.contains('%')).then_some(pointer)
}

/// A property name as a JSON pointer token.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// A JSON pointer as a URI fragment: what is not plainly safe in one, percent-encoded.
fn fragment(pointer: &str) -> String {
    let mut out = String::with_capacity(pointer.len());
    for byte in pointer.bytes() {
        if byte.is_ascii_alphanumeric() || b"/~-._$".contains(&byte) {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

fn float(value: &Value) -> Result<f64, Unbuildable> {
    value.as_f64().ok_or(Unbuildable)
}

fn count(value: &Value) -> Result<usize, Unbuildable> {
    value
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or(Unbuildable)
}

const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
const NUMBER: u8 = 4;
const INTEGER: u8 = 8;
const STRING: u8 = 16;
const ARRAY: u8 = 32;
const OBJECT: u8 = 64;

fn type_bit(name: &str) -> Option<u8> {
    Some(match name {
        "null" => NULL,
        "boolean" => BOOLEAN,
        "number" => NUMBER,
        "integer" => INTEGER,
        "string" => STRING,
        "array" => ARRAY,
        "object" => OBJECT,
        _ => return None,
    })
}

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
        let rules = match &self.parts[index] {
            Part::Always(b) => return Ok(*b),
            Part::Boon(schema) => return Ok(self.schemas.validate(value, *schema).is_ok()),
            Part::Rules(rules) => rules,
        };
        let depth = depth + 1;
        if rules.types != 0 && !of_type(value, rules.types) {
            return Ok(false);
        }
        if rules.constant.as_ref().is_some_and(|c| !equal(value, c)) {
            return Ok(false);
        }
        if let Some(values) = &rules.one_of_values
            && !values.iter().any(|v| equal(value, v))
        {
            return Ok(false);
        }
        if let (Some(range), Value::Number(n)) = (rules.integer_range, value)
            && !integers::within(n, range)
        {
            return Ok(false);
        }
        let own = match value {
            Value::Number(n) => number_rules(rules, n),
            Value::String(s) => string_rules(rules, s),
            Value::Array(items) => self.array_rules(rules, items, depth)?,
            Value::Object(map) => self.object_rules(rules, map, depth)?,
            Value::Null | Value::Bool(_) => true,
        };
        if !own {
            return Ok(false);
        }
        if let Some(target) = rules.reference
            && !self.valid(target, value, depth)?
        {
            return Ok(false);
        }
        self.applicators(rules, value, depth)
    }

    fn applicators(&self, rules: &Rules, value: &Value, depth: u32) -> Result<bool, TooDeep> {
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

    fn object_rules(
        &self,
        rules: &Rules,
        map: &Map<String, Value>,
        depth: u32,
    ) -> Result<bool, TooDeep> {
        if rules.min_properties.is_some_and(|min| map.len() < min)
            || rules.max_properties.is_some_and(|max| map.len() > max)
            || rules.required.iter().any(|name| !map.contains_key(name))
        {
            return Ok(false);
        }
        for (name, value) in map {
            let part = match rules
                .properties
                .binary_search_by(|(p, _)| p.as_str().cmp(name))
            {
                Ok(at) => rules.properties[at].1,
                Err(_) => match rules.additional_properties {
                    Some(part) => part,
                    None => continue,
                },
            };
            if !self.valid(part, value, depth)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The number keywords, compared as floats as boon compares them.
fn number_rules(rules: &Rules, n: &Number) -> bool {
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

#[cfg(test)]
mod tests;
