//! Schemas every client accepts: a tool's schema with its `$defs` inlined where they are
//! referenced, as several hosts refuse `$ref` in a tool's schema. A schema whose definitions
//! refer to themselves (a recursive type) cannot be inlined and is kept as it is.

use serde_json::{Map, Value};

/// The prefix of a reference to one of the schema's own definitions.
const LOCAL: &str = "#/$defs/";

/// The most references one schema may have inlined: definitions that refer to others several
/// times each would otherwise multiply (a chain of 20 such doubles a million times).
const MAX_INLINED: usize = 1_000;

/// Why a schema keeps its references.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kept {
    /// The definition refers to itself, directly or through others.
    Recursive(String),
    /// A reference that does not name one of the schema's own definitions.
    Foreign(String),
    /// Inlined, the schema would repeat its definitions more than [`MAX_INLINED`] times.
    TooLarge,
}

/// `schema` with every `{"$ref": "#/$defs/X"}` replaced by the definition `X` (its other
/// keywords kept beside it) and `$defs` dropped; `Ok(None)` when it has no `$defs` to inline.
pub(crate) fn inline_definitions(schema: &Value) -> Result<Option<Value>, Kept> {
    let Some(defs) = schema.get("$defs").and_then(Value::as_object) else {
        return Ok(None);
    };
    let mut root = schema.clone();
    if let Some(object) = root.as_object_mut() {
        object.remove("$defs");
    }
    let mut walk = Walk {
        defs,
        path: Vec::new(),
        inlined: 0,
    };
    walk.inline(&mut root)?;
    Ok(Some(root))
}

/// The definitions, those being inlined around the current place, and how many references
/// were inlined so far.
struct Walk<'a> {
    defs: &'a Map<String, Value>,
    path: Vec<String>,
    inlined: usize,
}

impl Walk<'_> {
    /// Inlines the references in `value`.
    fn inline(&mut self, value: &mut Value) -> Result<(), Kept> {
        match value {
            Value::Object(object) => {
                if let Some(Value::String(reference)) = object.get("$ref") {
                    let reference = reference.clone();
                    let Some(name) = reference.strip_prefix(LOCAL) else {
                        return Err(Kept::Foreign(reference));
                    };
                    let name = decode_pointer(name);
                    if self.path.contains(&name) {
                        return Err(Kept::Recursive(name));
                    }
                    let Some(definition) = self.defs.get(&name) else {
                        return Err(Kept::Foreign(reference));
                    };
                    self.inlined += 1;
                    if self.inlined > MAX_INLINED {
                        return Err(Kept::TooLarge);
                    }
                    let mut resolved = definition.clone();
                    self.path.push(name);
                    self.inline(&mut resolved)?;
                    self.path.pop();
                    object.remove("$ref");
                    *value = merge(resolved, std::mem::take(object));
                    return Ok(());
                }
                object.values_mut().try_for_each(|child| self.inline(child))
            }
            Value::Array(items) => items.iter_mut().try_for_each(|item| self.inline(item)),
            _ => Ok(()),
        }
    }
}

/// A definition with the keywords written beside its reference: merged when they do not
/// clash (a `description`, a `default`), else both kept whole under `allOf`.
fn merge(definition: Value, beside: Map<String, Value>) -> Value {
    if beside.is_empty() {
        return definition;
    }
    match definition {
        Value::Object(mut merged) if beside.keys().all(|k| !merged.contains_key(k)) => {
            merged.extend(beside);
            Value::Object(merged)
        }
        definition => {
            let mut wrapper = beside;
            wrapper.insert("allOf".into(), Value::Array(vec![definition]));
            Value::Object(wrapper)
        }
    }
}

/// A JSON pointer segment decoded (`~1` is `/`, `~0` is `~`).
fn decode_pointer(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Kept, inline_definitions};

    #[test]
    fn references_are_replaced_by_their_definitions() {
        let schema = json!({
            "type": "object",
            "properties": {
                "role": {"$ref": "#/$defs/Role", "default": "user"},
                "address": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]},
                "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}}
            },
            "$defs": {
                "Role": {"type": "string", "enum": ["user", "admin"]},
                "Address": {"type": "object", "properties": {"city": {"$ref": "#/$defs/Tag"}}},
                "Tag": {"type": "string", "description": "a tag"}
            }
        });
        let inlined = inline_definitions(&schema).unwrap().unwrap();
        assert_eq!(
            inlined,
            json!({
                "type": "object",
                "properties": {
                    "role": {"type": "string", "enum": ["user", "admin"], "default": "user"},
                    "address": {"anyOf": [
                        {"type": "object", "properties": {"city": {"type": "string", "description": "a tag"}}},
                        {"type": "null"}
                    ]},
                    "tags": {"type": "array", "items": {"type": "string", "description": "a tag"}}
                }
            })
        );
        assert!(!inlined.to_string().contains("$ref"));
    }

    #[test]
    fn a_clash_beside_a_reference_keeps_both_under_all_of() {
        let schema = json!({
            "type": "object",
            "properties": {"n": {"$ref": "#/$defs/N", "description": "the count"}},
            "$defs": {"N": {"type": "integer", "description": "a number"}}
        });
        let inlined = inline_definitions(&schema).unwrap().unwrap();
        assert_eq!(
            inlined["properties"]["n"],
            json!({"description": "the count", "allOf": [{"type": "integer", "description": "a number"}]})
        );
    }

    #[test]
    fn recursive_and_foreign_references_are_kept() {
        let recursive = json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "properties": {
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
            }}}
        });
        assert_eq!(
            inline_definitions(&recursive),
            Err(Kept::Recursive("Node".into()))
        );
        let foreign = json!({
            "type": "object",
            "properties": {"x": {"$ref": "https://example.com/x.json"}},
            "$defs": {}
        });
        assert!(matches!(
            inline_definitions(&foreign),
            Err(Kept::Foreign(_))
        ));
        assert_eq!(inline_definitions(&json!({"type": "object"})), Ok(None));
    }

    #[test]
    fn definitions_that_would_multiply_are_kept() {
        // D0 refers to D1 twice, D1 to D2 twice, …: inlined, D0 would hold 2^20 copies of D20.
        let mut defs = serde_json::Map::new();
        for i in 0..20 {
            let next = format!("#/$defs/D{}", i + 1);
            defs.insert(
                format!("D{i}"),
                json!({"type": "object", "properties": {"a": {"$ref": next}, "b": {"$ref": next}}}),
            );
        }
        defs.insert("D20".into(), json!({"type": "string"}));
        let schema = json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/D0"}},
            "$defs": defs
        });
        assert_eq!(inline_definitions(&schema), Err(Kept::TooLarge));
    }
}
