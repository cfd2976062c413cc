//! How a schema becomes its parts: each part's rules read from its keywords, and a part
//! whose keywords are not checked here handed to the full validator, or refused.

use std::collections::HashMap;
use std::fmt;

use serde_json::{Map, Value};

use super::formats::{Format, Known};
use super::pattern::Pattern;
use super::{ARRAY, BOOLEAN, Bound, INTEGER, NULL, NUMBER, OBJECT, Part, Rules, STRING};
use crate::tool::definition::integers;

/// Keywords whose meaning reaches beyond the part they sit in: a schema with any of them is
/// the full validator's alone.
const WHOLE_SCHEMA: &[&str] = &[
    "$id",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$vocabulary",
    "unevaluatedProperties",
    "unevaluatedItems",
];

/// Keywords the full validator asserts that are not checked here: a part with any of them is
/// the full validator's.
const ELSEWHERE: &[&str] = &[
    "patternProperties",
    "propertyNames",
    "dependencies",
    "dependentRequired",
    "dependentSchemas",
    "additionalItems",
    "contains",
    "minContains",
    "maxContains",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// The draft every schema is compiled as when it does not name one.
const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// Why a schema has no rules here: the full validator must check it, or, without one, the
/// schema is refused with this reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A keyword (or a format) not checked here, at a JSON pointer into the schema.
    Unchecked { keyword: String, at: String },
    /// A keyword whose value is not valid JSON Schema there.
    Invalid { keyword: String, at: String },
    /// References or applicators that come back to the part at `at` without going into the
    /// value: checking any value would never end.
    Loop { at: String },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Unchecked { keyword, at } => write!(
                f,
                "{keyword} at #{at} is checked only by the full JSON Schema validator \
                 (mcp-tool's feature `full-schema`)"
            ),
            Refusal::Invalid { keyword, at } if keyword.is_empty() => {
                write!(f, "the schema at #{at} is not valid JSON Schema")
            }
            Refusal::Invalid { keyword, at } => {
                write!(
                    f,
                    "the value of `{keyword}` at #{at} is not valid JSON Schema"
                )
            }
            Refusal::Loop { at } => write!(
                f,
                "the references at #{at} lead back to it without going into the value"
            ),
        }
    }
}

/// Whether `schema` may have rules here: none of [`WHOLE_SCHEMA`]'s keywords anywhere (as a
/// keyword or not), and no draft but 2020-12; the first that is not, refused.
pub(super) fn whole_schema(schema: &Value, root: bool, at: &str) -> Result<(), Refusal> {
    match schema {
        Value::Object(map) => map.iter().try_for_each(|(key, value)| {
            let here = || format!("{at}/{}", escape(key));
            if WHOLE_SCHEMA.contains(&key.as_str()) {
                return Err(Refusal::Unchecked {
                    keyword: format!("`{key}`"),
                    at: here(),
                });
            }
            if key == "$schema" && !(root && value.as_str() == Some(DRAFT_2020_12)) {
                return Err(Refusal::Unchecked {
                    keyword: format!("`$schema` {value}"),
                    at: here(),
                });
            }
            // Values (`const`, `default`, …) are searched too: a property or a value that
            // has one of these names only costs the rules.
            whole_schema(value, false, &here())
        }),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| whole_schema(v, false, &format!("{at}/{i}"))),
        _ => Ok(()),
    }
}

/// The parts of `schema` (the root first); `elsewhere` numbers the parts the full
/// validator checks (see [`Quick::build`](super::Quick::build)).
pub(super) fn parts(
    schema: &Value,
    elsewhere: &mut dyn FnMut(&str) -> Option<usize>,
) -> Result<Vec<Part>, Refusal> {
    whole_schema(schema, true, "")?;
    let mut anchors = HashMap::new();
    collect_anchors(schema, "", &mut anchors)?;
    let mut builder = Builder {
        root: schema,
        elsewhere,
        parts: Vec::new(),
        at: HashMap::new(),
        anchors,
    };
    builder.part("")?;
    let parts = builder.parts;
    if let Some(index) = looping(&parts) {
        let at = builder
            .at
            .into_iter()
            .find_map(|(pointer, i)| (i == index).then_some(pointer))
            .unwrap_or_default();
        return Err(Refusal::Loop { at });
    }
    Ok(parts)
}

struct Builder<'a> {
    root: &'a Value,
    elsewhere: &'a mut dyn FnMut(&str) -> Option<usize>,
    parts: Vec<Part>,
    /// The part built for each JSON pointer.
    at: HashMap<String, usize>,
    /// The pointer of each `$anchor`'s part, by the anchor's name.
    anchors: HashMap<String, String>,
}

impl Builder<'_> {
    /// The part at `pointer` (a JSON pointer into the root), built once.
    fn part(&mut self, pointer: &str) -> Result<usize, Refusal> {
        if let Some(&index) = self.at.get(pointer) {
            return Ok(index);
        }
        let root = self.root;
        let schema = root.pointer(pointer).ok_or_else(|| not_a_schema(pointer))?;
        let index = self.parts.len();
        // Reserved first, so that a reference back to this part finds it.
        self.parts.push(Part::Always(true));
        self.at.insert(pointer.to_owned(), index);
        let part = match schema {
            Value::Bool(b) => Part::Always(*b),
            Value::Object(map) => match self.rules(map, pointer)? {
                Ok(rules) => Part::Rules(Box::new(rules)),
                Err(keyword) => match (self.elsewhere)(pointer) {
                    Some(number) => Part::Elsewhere(number),
                    None => {
                        return Err(Refusal::Unchecked {
                            keyword,
                            at: pointer.to_owned(),
                        });
                    }
                },
            },
            _ => return Err(not_a_schema(pointer)),
        };
        self.parts[index] = part;
        Ok(index)
    }

    /// The parts of the list of `len` subschemas at `pointer`.
    fn parts_of(&mut self, pointer: &str, len: usize) -> Result<Vec<usize>, Refusal> {
        (0..len)
            .map(|i| self.part(&format!("{pointer}/{i}")))
            .collect()
    }

    /// The rules of the part `map` at `pointer`; `Ok(Err(keyword))` when the part has a
    /// keyword not checked here (named as the refusal names it).
    fn rules(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
    ) -> Result<Result<Rules, String>, Refusal> {
        if let Some(key) = map.keys().find(|k| ELSEWHERE.contains(&k.as_str())) {
            return Ok(Err(format!("`{key}`")));
        }
        let mut rules = Rules::default();
        for (key, value) in map {
            let here = || format!("{pointer}/{}", escape(key));
            let invalid = || Refusal::Invalid {
                keyword: key.clone(),
                at: pointer.to_owned(),
            };
            match key.as_str() {
                "type" => {
                    let names: Vec<&Value> = match value {
                        Value::Array(names) => names.iter().collect(),
                        one => vec![one],
                    };
                    for name in names {
                        // Each type once, and at least one.
                        match name.as_str().and_then(type_bit) {
                            Some(bit) if rules.types & bit == 0 => rules.types |= bit,
                            _ => return Err(invalid()),
                        }
                    }
                    if rules.types == 0 {
                        return Err(invalid());
                    }
                }
                "const" => rules.constant = Some(value.clone()),
                "enum" => match value {
                    Value::Array(values) => rules.one_of_values = Some(values.clone()),
                    _ => return Err(invalid()),
                },
                "format" => match value.as_str() {
                    Some(name) if integers::range(name).is_some() => {
                        rules.integer_range = integers::range(name);
                        rules.integer_format = Some(name.to_owned());
                    }
                    Some(name) => match Format::of(name) {
                        Known::Asserted(format) => rules.format = Some(format),
                        Known::Elsewhere => return Ok(Err(format!("`format: {name}`"))),
                        Known::Annotation => {}
                    },
                    None => return Err(invalid()),
                },
                "pattern" => {
                    let source = value.as_str().ok_or_else(invalid)?;
                    match Pattern::compile(source) {
                        Ok(pattern) => rules.pattern = Some(pattern),
                        Err(why) => return Ok(Err(format!("`pattern` {value} ({why})"))),
                    }
                }
                "uniqueItems" => rules.unique_items = value.as_bool().ok_or_else(invalid)?,
                "prefixItems" => {
                    let list = value
                        .as_array()
                        .filter(|list| !list.is_empty())
                        .ok_or_else(invalid)?;
                    rules.prefix_items = self.parts_of(&here(), list.len())?;
                }
                "minimum" => rules.minimum = Some(bound(value).ok_or_else(invalid)?),
                "maximum" => rules.maximum = Some(bound(value).ok_or_else(invalid)?),
                "exclusiveMinimum" => {
                    rules.exclusive_minimum = Some(bound(value).ok_or_else(invalid)?);
                }
                "exclusiveMaximum" => {
                    rules.exclusive_maximum = Some(bound(value).ok_or_else(invalid)?);
                }
                "multipleOf" => {
                    let divisor = bound(value).filter(|b| b.at > 0.0).ok_or_else(invalid)?;
                    rules.multiple_of = Some(divisor);
                }
                "minLength" => rules.min_length = Some(count(value).ok_or_else(invalid)?),
                "maxLength" => rules.max_length = Some(count(value).ok_or_else(invalid)?),
                "minProperties" => rules.min_properties = Some(count(value).ok_or_else(invalid)?),
                "maxProperties" => rules.max_properties = Some(count(value).ok_or_else(invalid)?),
                "minItems" => rules.min_items = Some(count(value).ok_or_else(invalid)?),
                "maxItems" => rules.max_items = Some(count(value).ok_or_else(invalid)?),
                "required" => {
                    let names = value.as_array().ok_or_else(invalid)?;
                    for name in names {
                        // Each name once.
                        let name = name
                            .as_str()
                            .filter(|name| !rules.required.iter().any(|r| r == name))
                            .ok_or_else(invalid)?;
                        rules.required.push(name.to_owned());
                    }
                }
                "properties" => {
                    let properties = value.as_object().ok_or_else(invalid)?;
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
                    _ => return Err(invalid()),
                },
                "allOf" | "anyOf" | "oneOf" => {
                    let list = value
                        .as_array()
                        .filter(|list| !list.is_empty())
                        .ok_or_else(invalid)?;
                    let parts = self.parts_of(&here(), list.len())?;
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
                "$ref"
                    if value
                        .as_str()
                        .and_then(|r| r.strip_prefix('#'))
                        .is_some_and(anchor_name) =>
                {
                    let name = &value.as_str().unwrap_or_default()[1..];
                    let target = self.anchors.get(name).cloned().ok_or_else(invalid)?;
                    rules.reference = Some(self.part(&target)?);
                }
                "$ref" => match value.as_str().map(|r| (r, local_pointer(r))) {
                    // A fragment with a character no URI holds is no URI reference.
                    Some((reference, _))
                        if reference.starts_with('#') && !fragment_characters(reference) =>
                    {
                        return Err(invalid());
                    }
                    // A reference to nothing is refused where it is written.
                    Some((_, Some(target))) if self.root.pointer(target).is_none() => {
                        return Err(invalid());
                    }
                    Some((_, Some(target))) => rules.reference = Some(self.part(target)?),
                    Some((_, None)) => return Ok(Err(format!("`$ref: {value}`"))),
                    None => return Err(invalid()),
                },
                // Subschemas that apply to nothing here are schemas all the same: `then` and
                // `else` without `if`, and the definitions references point into.
                "then" | "else" if !map.contains_key("if") => {
                    self.part(&here())?;
                }
                "$defs" | "definitions" => {
                    let definitions = value.as_object().ok_or_else(invalid)?;
                    let base = here();
                    for name in definitions.keys() {
                        self.part(&format!("{base}/{}", escape(name)))?;
                    }
                }
                // The annotations JSON Schema gives a type.
                "title" | "description" | "$comment" if !value.is_string() => {
                    return Err(invalid());
                }
                "deprecated" | "readOnly" | "writeOnly" if !value.is_boolean() => {
                    return Err(invalid());
                }
                "examples" if !value.is_array() => return Err(invalid()),
                // Other annotations (`default`, …), and words of no vocabulary.
                _ => {}
            }
        }
        rules.required_bits = required_bits(&rules.required, &rules.properties);
        rules.linked = rules.reference.is_some()
            || rules.not.is_some()
            || rules.condition.is_some()
            || !(rules.all_of.is_empty() && rules.any_of.is_empty() && rules.one_of.is_empty());
        rules.valued = rules.constant.is_some() || rules.one_of_values.is_some();
        Ok(Ok(rules))
    }
}

/// A part that comes back to itself at one value (through `$ref`, `allOf`, `anyOf`, `oneOf`,
/// `not`, `if`, `then` or `else`, which apply to the value the part is checking), if any.
fn looping(parts: &[Part]) -> Option<usize> {
    /// 0: not seen; 1: on the current path; 2: done, no loop through it.
    fn visit(parts: &[Part], index: usize, state: &mut [u8]) -> Option<usize> {
        match state[index] {
            1 => return Some(index),
            2 => return None,
            _ => {}
        }
        state[index] = 1;
        if let Part::Rules(rules) = &parts[index] {
            let (condition, then, otherwise) = match rules.condition {
                Some((condition, then, otherwise)) => (Some(condition), then, otherwise),
                None => (None, None, None),
            };
            let same_value = rules
                .reference
                .iter()
                .chain(&rules.not)
                .chain(&rules.all_of)
                .chain(&rules.any_of)
                .chain(&rules.one_of)
                .chain(&condition)
                .chain(&then)
                .chain(&otherwise);
            for &next in same_value {
                if let Some(found) = visit(parts, next, state) {
                    return Some(found);
                }
            }
        }
        state[index] = 2;
        None
    }
    let mut state = vec![0; parts.len()];
    (0..parts.len()).find_map(|index| visit(parts, index, &mut state))
}

/// The keywords whose value is one subschema (JSON Schema 2020-12 and the drafts before it).
pub(crate) const ONE_SCHEMA: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "additionalItems",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];

/// The keywords whose value is a list of subschemas.
pub(crate) const SCHEMA_LISTS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// The keywords whose value maps names to subschemas (the definitions aside).
pub(crate) const SCHEMA_MAPS: &[&str] = &["properties", "patternProperties", "dependentSchemas"];

/// The `$anchor`s of the parts of `schema` (at `pointer`), each name once and a name as JSON
/// Schema 2020-12 writes one.
fn collect_anchors(
    schema: &Value,
    pointer: &str,
    anchors: &mut HashMap<String, String>,
) -> Result<(), Refusal> {
    let Value::Object(map) = schema else {
        return Ok(());
    };
    if let Some(anchor) = map.get("$anchor") {
        let invalid = || Refusal::Invalid {
            keyword: "$anchor".to_owned(),
            at: pointer.to_owned(),
        };
        let name = anchor
            .as_str()
            .filter(|n| anchor_name(n))
            .ok_or_else(invalid)?;
        if anchors
            .insert(name.to_owned(), pointer.to_owned())
            .is_some()
        {
            return Err(invalid());
        }
    }
    for (key, value) in map {
        let here = format!("{pointer}/{}", escape(key));
        if ONE_SCHEMA.contains(&key.as_str()) {
            collect_anchors(value, &here, anchors)?;
        } else if (SCHEMA_MAPS.contains(&key.as_str()) || key == "$defs" || key == "definitions")
            && let Value::Object(schemas) = value
        {
            for (name, schema) in schemas {
                collect_anchors(schema, &format!("{here}/{}", escape(name)), anchors)?;
            }
        } else if SCHEMA_LISTS.contains(&key.as_str())
            && let Value::Array(schemas) = value
        {
            for (i, schema) in schemas.iter().enumerate() {
                collect_anchors(schema, &format!("{here}/{i}"), anchors)?;
            }
        }
    }
    Ok(())
}

/// An anchor's name: a letter or `_`, then letters, digits, `-`, `.` and `_`.
fn anchor_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
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

/// The refusal of a value at `pointer` that is no schema (neither an object nor a boolean):
/// named by its last step (`not`, a property's name, an index), at the part holding it.
fn not_a_schema(pointer: &str) -> Refusal {
    let (at, step) = pointer.rsplit_once('/').unwrap_or_default();
    Refusal::Invalid {
        keyword: step.replace("~1", "/").replace("~0", "~"),
        at: at.to_owned(),
    }
}

/// Whether every character after `#` may stand in a URI's fragment (RFC 3986: unreserved,
/// percent-encoded, sub-delimiters, `:`, `@`, `/`, `?`).
fn fragment_characters(reference: &str) -> bool {
    reference[1..]
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._~%!$&'()*+,;=:@/?".contains(&b))
}

/// A number bound's value: compared as a float, shown as written.
fn bound(value: &Value) -> Option<Bound> {
    let Value::Number(n) = value else {
        return None;
    };
    Some(Bound {
        at: n.as_f64()?,
        shown: n.clone(),
    })
}

fn count(value: &Value) -> Option<usize> {
    value.as_u64().and_then(|n| usize::try_from(n).ok())
}

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

/// The required names as bits of their places among the (sorted) properties, when each is
/// one of at most 64.
fn required_bits(required: &[String], properties: &[(String, usize)]) -> Option<u64> {
    if properties.len() > 64 {
        return None;
    }
    let mut bits = 0_u64;
    for name in required {
        let at = properties
            .binary_search_by(|(p, _)| p.as_str().cmp(name))
            .ok()?;
        bits |= 1 << at;
    }
    Some(bits)
}
