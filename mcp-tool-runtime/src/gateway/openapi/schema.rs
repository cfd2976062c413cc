//! An OpenAPI document's schemas as the JSON Schema (2020-12) of a tool: `$ref`s followed
//! within the document only and gathered under the tool schema's own `$defs` (so a cycle is a
//! `$ref` to a definition, never an endless copy), OpenAPI 3.0's dialect (`nullable`, boolean
//! `exclusiveMinimum`/`exclusiveMaximum`, `example`) written as 2020-12 says it, and the
//! keywords only OpenAPI reads (`discriminator`, `xml`, `externalDocs`) left out.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::tool::definition::quick::{ONE_SCHEMA as ONE, SCHEMA_LISTS as LIST, SCHEMA_MAPS as MAP};

/// How deep a schema may nest (objects within objects, through `$ref`s too).
const MAX_DEPTH: usize = 64;

/// How many definitions one tool's schemas may gather.
const MAX_DEFS: usize = 512;

/// Keywords of OpenAPI's Schema Object that JSON Schema does not have: left out.
const OPENAPI_ONLY: &[&str] = &["discriminator", "xml", "externalDocs"];

/// Keywords refused: they change how references resolve, which a tool schema cut out of its
/// document cannot keep.
const REFUSED: &[&str] = &["$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$id"];

/// Converts the schemas of one document, gathering the definitions their `$ref`s need.
pub(crate) struct Converter<'a> {
    doc: &'a Value,
    /// OpenAPI 3.0 (its own schema dialect) rather than 3.1 (JSON Schema 2020-12).
    v30: bool,
    /// Each `$ref` followed: its definition's name.
    names: BTreeMap<String, String>,
    /// The definitions gathered, by name.
    defs: Map<String, Value>,
}

impl<'a> Converter<'a> {
    pub(crate) fn new(doc: &'a Value) -> Self {
        let v30 = doc["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3.0"));
        Converter {
            doc,
            v30,
            names: BTreeMap::new(),
            defs: Map::new(),
        }
    }

    /// The definitions gathered so far, taken (for one tool schema's `$defs`).
    pub(crate) fn take_defs(&mut self) -> Map<String, Value> {
        self.names.clear();
        std::mem::take(&mut self.defs)
    }

    /// `schema` as JSON Schema 2020-12; an error names the keyword refused and where.
    pub(crate) fn convert(&mut self, schema: &Value) -> Result<Value, String> {
        self.walk(schema, 0)
    }

    /// `schema` with a `$ref` at its top followed (a chain of them too), then converted: the
    /// schema a parameter or body holds, seen as itself rather than as a reference.
    pub(crate) fn convert_inline(&mut self, schema: &Value) -> Result<Value, String> {
        let target = self.deref(schema)?;
        self.walk(target, 0)
    }

    /// Follows `$ref`s at the top of `value` (a parameter, a body, a response or a schema),
    /// within the document; the object they end at.
    pub(crate) fn deref<'v>(&self, mut value: &'v Value) -> Result<&'v Value, String>
    where
        'a: 'v,
    {
        for _ in 0..MAX_DEPTH {
            match value.get("$ref").and_then(Value::as_str) {
                Some(reference) => value = resolve(self.doc, reference)?,
                None => return Ok(value),
            }
        }
        Err(format!("`$ref`s chained more than {MAX_DEPTH} deep"))
    }

    fn walk(&mut self, schema: &Value, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(format!("a schema nested more than {MAX_DEPTH} deep"));
        }
        let object = match schema {
            Value::Bool(_) => return Ok(schema.clone()),
            Value::Object(object) => object,
            _ => return Err("a schema that is neither an object nor a boolean".into()),
        };
        for keyword in REFUSED {
            if object.contains_key(*keyword) {
                return Err(format!("the keyword `{keyword}` is not supported"));
            }
        }
        if let Some(reference) = object.get("$ref") {
            let reference = reference
                .as_str()
                .ok_or_else(|| "a `$ref` that is not a string".to_owned())?;
            let pointer = self.definition(reference, depth)?;
            // OpenAPI 3.0 ignores a `$ref`'s siblings; 3.1 (2020-12) applies them beside it.
            if self.v30 || object.len() == 1 {
                return Ok(json!({ "$ref": pointer }));
            }
            let mut rest = object.clone();
            rest.remove("$ref");
            let mut converted = self.walk(&Value::Object(rest), depth + 1)?;
            if let Some(m) = converted.as_object_mut() {
                m.insert("$ref".into(), Value::String(pointer));
            }
            return Ok(converted);
        }
        let mut out = Map::new();
        for (key, value) in object {
            let key = key.as_str();
            if OPENAPI_ONLY.contains(&key) || key.starts_with("x-") {
                continue;
            }
            let converted = if ONE.contains(&key) && (value.is_object() || value.is_boolean()) {
                self.walk(value, depth + 1)?
            } else if LIST.contains(&key) || (key == "items" && value.is_array()) {
                let items = value
                    .as_array()
                    .ok_or_else(|| format!("`{key}` is not a list of schemas"))?;
                let mut list = Vec::with_capacity(items.len());
                for item in items {
                    list.push(self.walk(item, depth + 1)?);
                }
                Value::Array(list)
            } else if MAP.contains(&key) {
                let entries = value
                    .as_object()
                    .ok_or_else(|| format!("`{key}` does not map names to schemas"))?;
                let mut map = Map::new();
                for (name, item) in entries {
                    map.insert(name.clone(), self.walk(item, depth + 1)?);
                }
                Value::Object(map)
            } else if key == "$defs" || key == "definitions" {
                // Local definitions are reached through the `$ref`s that use them.
                continue;
            } else {
                value.clone()
            };
            out.insert(key.to_owned(), converted);
        }
        if self.v30 {
            dialect_30(&mut out)?;
        } else if out.get("type").and_then(Value::as_str) == Some("file") {
            return Err("the type `file` (of Swagger 2.0) is not supported".into());
        }
        Ok(Value::Object(out))
    }

    /// The `$defs` pointer standing for the document's `reference`, its target converted once.
    fn definition(&mut self, reference: &str, depth: usize) -> Result<String, String> {
        if let Some(name) = self.names.get(reference) {
            return Ok(format!("#/$defs/{name}"));
        }
        let target = resolve(self.doc, reference)?;
        if self.names.len() >= MAX_DEFS {
            return Err(format!(
                "more than {MAX_DEFS} schemas referenced by one operation"
            ));
        }
        let base = def_name(reference);
        let mut name = base.clone();
        let mut n = 2;
        while self.names.values().any(|v| *v == name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        // Named before its target is converted: a cycle comes back to this name.
        self.names.insert(reference.to_owned(), name.clone());
        let converted = self.walk(target, depth + 1)?;
        self.defs.insert(name.clone(), converted);
        Ok(format!("#/$defs/{name}"))
    }
}

/// OpenAPI 3.0's own keywords in 2020-12's words: `nullable` adds `null` to the types (and
/// to an `enum`), a boolean `exclusiveMinimum` makes `minimum` exclusive, `example` becomes
/// `examples`.
fn dialect_30(out: &mut Map<String, Value>) -> Result<(), String> {
    for (flag, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        match out.get(flag) {
            Some(Value::Bool(true)) => {
                let limit = out
                    .remove(bound)
                    .ok_or_else(|| format!("`{flag}: true` without `{bound}`"))?;
                out.insert(flag.into(), limit);
            }
            Some(Value::Bool(false)) => {
                out.remove(flag);
            }
            _ => {}
        }
    }
    if let Some(example) = out.remove("example") {
        out.entry("examples").or_insert_with(|| json!([example]));
    }
    if out.get("type").and_then(Value::as_str) == Some("file") {
        return Err("the type `file` (of Swagger 2.0) is not supported".into());
    }
    if out.remove("nullable") == Some(Value::Bool(true)) {
        match out.get("type").cloned() {
            Some(Value::String(t)) => {
                out.insert("type".into(), json!([t, "null"]));
                if let Some(Value::Array(values)) = out.get_mut("enum")
                    && !values.contains(&Value::Null)
                {
                    values.push(Value::Null);
                }
            }
            // No type of its own (an `allOf`, a `$ref`…): it or null.
            _ => {
                let inner = std::mem::take(out);
                out.insert(
                    "anyOf".into(),
                    json!([Value::Object(inner), {"type": "null"}]),
                );
            }
        }
    }
    Ok(())
}

/// The document's value at `reference`, a fragment-only JSON pointer (`#/components/…`); any
/// other reference (another file, a URL) is refused: nothing is fetched.
pub(crate) fn resolve<'v>(doc: &'v Value, reference: &str) -> Result<&'v Value, String> {
    let Some(fragment) = reference.strip_prefix('#') else {
        return Err(format!(
            "`$ref` `{}` leaves the document: only references within it (`#/…`) are followed, none is fetched",
            crate::tool::definition::validate::short_text(reference)
        ));
    };
    let pointer = percent_decode(fragment)
        .ok_or_else(|| format!("`$ref` `{fragment}` is not a valid URI fragment"))?;
    if !pointer.is_empty() && !pointer.starts_with('/') {
        return Err(format!(
            "`$ref` `#{pointer}` is not a JSON pointer (anchors are not followed)"
        ));
    }
    doc.pointer(&pointer)
        .ok_or_else(|| format!("`$ref` `#{pointer}` points to nothing in the document"))
}

/// A definition's name for `reference`: the last segment of its pointer, in the characters a
/// `$defs` key keeps plainly.
fn def_name(reference: &str) -> String {
    let last = reference.rsplit('/').next().unwrap_or_default();
    let last = percent_decode(last).unwrap_or_default();
    let last = last.replace("~1", "/").replace("~0", "~");
    let name: String = last
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() { "def".into() } else { name }
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(version: &str, schemas: Value) -> Value {
        json!({"openapi": version, "components": {"schemas": schemas}})
    }

    #[test]
    fn openapi_30_nullable_and_exclusive_bounds_become_2020_12() {
        let d = doc("3.0.3", json!({}));
        let mut c = Converter::new(&d);
        let s = c
            .convert(&json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "nullable": true, "example": "Rex"},
                    "kind": {"type": "string", "enum": ["a", "b"], "nullable": true},
                    "age": {"type": "integer", "minimum": 0, "exclusiveMinimum": true,
                            "maximum": 9, "exclusiveMaximum": false},
                    "tag": {"allOf": [{"type": "string"}], "nullable": true}
                },
                "discriminator": {"propertyName": "kind"},
                "xml": {"name": "pet"}
            }))
            .unwrap();
        assert_eq!(
            s,
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": ["string", "null"], "examples": ["Rex"]},
                    "kind": {"type": ["string", "null"], "enum": ["a", "b", null]},
                    "age": {"type": "integer", "exclusiveMinimum": 0, "maximum": 9},
                    "tag": {"anyOf": [{"allOf": [{"type": "string"}]}, {"type": "null"}]}
                }
            })
        );
        assert!(c.take_defs().is_empty());
    }

    #[test]
    fn openapi_31_type_arrays_and_ref_siblings_are_kept() {
        let d = doc(
            "3.1.0",
            json!({"Color": {"type": "string", "enum": ["red", "blue"]}}),
        );
        let mut c = Converter::new(&d);
        let s = c
            .convert(&json!({
                "type": "object",
                "properties": {
                    "n": {"type": ["integer", "null"]},
                    "c": {"$ref": "#/components/schemas/Color", "description": "which"},
                    "o": {"anyOf": [{"type": "string"}, {"type": "null"}]}
                }
            }))
            .unwrap();
        assert_eq!(s["properties"]["n"], json!({"type": ["integer", "null"]}));
        assert_eq!(
            s["properties"]["c"],
            json!({"$ref": "#/$defs/Color", "description": "which"})
        );
        assert_eq!(
            c.take_defs(),
            json!({"Color": {"type": "string", "enum": ["red", "blue"]}})
                .as_object()
                .unwrap()
                .clone()
        );
    }

    #[test]
    fn a_ref_cycle_becomes_one_definition_that_refers_to_itself() {
        let d = doc(
            "3.0.0",
            json!({
                "Node": {"type": "object", "properties": {
                    "next": {"$ref": "#/components/schemas/Node"},
                    "kids": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}
                }}
            }),
        );
        let mut c = Converter::new(&d);
        let s = c
            .convert_inline(&json!({"$ref": "#/components/schemas/Node"}))
            .unwrap();
        assert_eq!(s["properties"]["next"], json!({"$ref": "#/$defs/Node"}));
        let defs = c.take_defs();
        assert_eq!(defs.len(), 1);
        assert_eq!(
            defs["Node"]["properties"]["kids"]["items"]["$ref"],
            "#/$defs/Node"
        );
    }

    #[test]
    fn references_outside_the_document_or_to_nothing_are_refused() {
        let d = doc("3.1.0", json!({}));
        let mut c = Converter::new(&d);
        let e = c
            .convert(&json!({"$ref": "https://example.com/pet.json#/Pet"}))
            .unwrap_err();
        assert!(e.contains("leaves the document"), "{e}");
        let e = c
            .convert(&json!({"$ref": "#/components/schemas/Nope"}))
            .unwrap_err();
        assert!(e.contains("points to nothing"), "{e}");
        let e = c
            .convert(&json!({"type": "object", "$dynamicRef": "#meta"}))
            .unwrap_err();
        assert!(e.contains("`$dynamicRef`"), "{e}");
        // Percent-encoded and escaped pointers are followed.
        let d = doc("3.1.0", json!({"a/b c": {"type": "string"}}));
        let mut c = Converter::new(&d);
        let s = c
            .convert(&json!({"$ref": "#/components/schemas/a~1b%20c"}))
            .unwrap();
        assert_eq!(s, json!({"$ref": "#/$defs/a_b_c"}));
    }

    #[test]
    fn two_references_of_one_name_get_two_definitions() {
        let d = json!({"openapi": "3.1.0",
            "components": {"schemas": {"Item": {"type": "string"}}},
            "other": {"Item": {"type": "integer"}}});
        let mut c = Converter::new(&d);
        let s = c
            .convert(&json!({"anyOf": [
                {"$ref": "#/components/schemas/Item"}, {"$ref": "#/other/Item"}]}))
            .unwrap();
        assert_eq!(
            s,
            json!({"anyOf": [{"$ref": "#/$defs/Item"}, {"$ref": "#/$defs/Item_2"}]})
        );
        let defs = c.take_defs();
        assert_eq!(defs["Item_2"], json!({"type": "integer"}));
    }

    #[test]
    fn a_schema_too_deep_is_refused() {
        let mut deep = json!({"type": "string"});
        for _ in 0..(MAX_DEPTH + 2) {
            deep = json!({"type": "array", "items": deep});
        }
        let d = doc("3.1.0", json!({}));
        let e = Converter::new(&d).convert(&deep).unwrap_err();
        assert!(e.contains("nested more than"), "{e}");
    }
}
