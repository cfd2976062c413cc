//! How a schema becomes its quick parts: each part's rules read from its keywords, and the
//! parts the quick path leaves to boon compiled by boon at their location.

use std::collections::HashMap;
use std::fmt::Write as _;

use boon::{Compiler, SchemaIndex, Schemas};
use serde_json::{Map, Value};

use super::{ARRAY, BOOLEAN, INTEGER, NULL, NUMBER, OBJECT, Part, Rules, STRING};
use crate::tool::integers;

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

/// Whether the quick path may check `schema`: none of [`WHOLE_SCHEMA`]'s keywords anywhere
/// (as a keyword or not), and no draft but 2020-12.
pub(super) fn quick_schema(schema: &Value, root: bool) -> bool {
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

/// The parts of `schema` (the root first), or `None` for a schema boon must check whole.
pub(super) fn parts(
    schema: &Value,
    location: &str,
    compiler: &mut Compiler,
    schemas: &mut Schemas,
) -> Option<Vec<Part>> {
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
    Some(builder.parts)
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
                    Some("email") => rules.email = Some(self.boon(pointer)?),
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
        rules.required_bits = required_bits(&rules.required, &rules.properties);
        rules.linked = rules.reference.is_some()
            || rules.not.is_some()
            || rules.condition.is_some()
            || !(rules.all_of.is_empty() && rules.any_of.is_empty() && rules.one_of.is_empty());
        rules.valued = rules.constant.is_some() || rules.one_of_values.is_some();
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
