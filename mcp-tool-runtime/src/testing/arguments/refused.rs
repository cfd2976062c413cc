//! Arguments a tool's input schema refuses (feature `proptest`): each a value the schema
//! accepts ([`arbitrary_arguments`]) with one of its rules broken, kept only when the schema
//! certainly refuses it.

use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use serde_json::{Number, Value, json};

use super::{arbitrary_arguments, count, number, resolve, types};

/// How deep a value is searched for places to break a rule.
const MAX_DEPTH: usize = 32;

/// Values that `schema` refuses, each a value it accepts with one of its rules broken: a
/// required property left out, an unknown one added where `additionalProperties` is `false`,
/// a value of a type or outside an `enum` that the place does not take, a number past a
/// bound, a string or array of a length past one, a string not of its `format`. Only
/// changes that no other branch of an `anyOf`/`oneOf` accepts are made, so a validator must
/// refuse every value: give them to a tool, and it never runs.
///
/// ```
/// use mcp_tool::testing::refused_arguments;
/// use proptest::prelude::*;
/// use proptest::test_runner::TestRunner;
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 9}},
///     "required": ["n"],
///     "additionalProperties": false
/// });
/// let mut runner = TestRunner::default();
/// for _ in 0..32 {
///     let refused = refused_arguments(&schema).new_tree(&mut runner).unwrap().current();
///     // `n` missing, not an integer from 0 to 9, or another property beside it.
///     let valid = refused.as_object().is_some_and(|o| {
///         o.len() == 1 && o.get("n").and_then(|n| n.as_u64()).is_some_and(|n| n <= 9)
///     });
///     assert!(!valid, "{refused}");
/// }
/// ```
///
/// # Panics
///
/// As [`arbitrary_arguments`]; and when proptest rejects too many cases because no rule of
/// `schema` can be broken (a schema that accepts everything).
pub fn refused_arguments(schema: &Value) -> BoxedStrategy<Value> {
    let root = schema.clone();
    arbitrary_arguments(schema)
        .prop_map(move |value| {
            let mut all = Vec::new();
            mutants(&root, &root, &value, 0, &mut all);
            all.retain(|m| refuses(&root, &root, m, 0));
            all
        })
        .prop_filter("the schema has no rule to break here", |all| {
            !all.is_empty()
        })
        .prop_flat_map(proptest::sample::select)
        .boxed()
}

/// Whether `schema` certainly refuses `value`, by the keywords this module knows (`false` when
/// unsure).
fn refuses(root: &Value, schema: &Value, value: &Value, depth: usize) -> bool {
    if depth > 64 {
        return false;
    }
    let schema = resolve(root, schema);
    let obj = match schema {
        Value::Bool(accepts) => return !accepts,
        Value::Object(obj) => obj,
        _ => return false,
    };
    if let Some(c) = obj.get("const")
        && !same(c, value)
    {
        return true;
    }
    if let Some(values) = obj.get("enum").and_then(Value::as_array)
        && !values.iter().any(|v| same(v, value))
    {
        return true;
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = obj.get(key).and_then(Value::as_array)
            && branches.iter().all(|b| refuses(root, b, value, depth + 1))
        {
            return true;
        }
    }
    if let Some(parts) = obj.get("allOf").and_then(Value::as_array)
        && parts.iter().any(|p| refuses(root, p, value, depth + 1))
    {
        return true;
    }
    if let Some(ts) = types(schema)
        && !ts.iter().any(|t| is_type(value, t))
    {
        return true;
    }
    match value {
        Value::Number(n) => {
            let Some(f) = n.as_f64() else { return false };
            let below = |k: &str| number(schema, k).is_some_and(|m| f < m);
            let above = |k: &str| number(schema, k).is_some_and(|m| f > m);
            below("minimum")
                || above("maximum")
                || number(schema, "exclusiveMinimum").is_some_and(|m| f <= m)
                || number(schema, "exclusiveMaximum").is_some_and(|m| f >= m)
        }
        Value::String(s) => {
            let chars = s.chars().count();
            count(schema, "minLength").is_some_and(|m| chars < m)
                || count(schema, "maxLength").is_some_and(|m| chars > m)
                || schema
                    .get("format")
                    .and_then(Value::as_str)
                    .is_some_and(|f| bad_format(f).is_some_and(|bad| bad == s))
        }
        Value::Array(items) => {
            count(schema, "minItems").is_some_and(|m| items.len() < m)
                || count(schema, "maxItems").is_some_and(|m| items.len() > m)
                || items.iter().enumerate().any(|(i, item)| {
                    let sub = schema
                        .get("prefixItems")
                        .and_then(|p| p.get(i))
                        .or_else(|| schema.get("items"));
                    sub.is_some_and(|sub| refuses(root, sub, item, depth + 1))
                })
        }
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let required_missing = schema
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .any(|k| !map.contains_key(k))
                });
            let closed = schema.get("additionalProperties") == Some(&Value::Bool(false))
                && !schema
                    .as_object()
                    .is_some_and(|o| o.contains_key("patternProperties"));
            let unknown = closed
                && map
                    .keys()
                    .any(|k| !properties.is_some_and(|p| p.contains_key(k)));
            let bad_property = map
                .iter()
                .any(|(k, v)| match properties.and_then(|p| p.get(k)) {
                    Some(sub) => refuses(root, sub, v, depth + 1),
                    None => schema
                        .get("additionalProperties")
                        .filter(|a| a.is_object())
                        .is_some_and(|a| refuses(root, a, v, depth + 1)),
                });
            required_missing || unknown || bad_property
        }
        _ => false,
    }
}

/// JSON Schema equality: numbers by value (`1` is `1.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64() && x.as_f64().is_some(),
        _ => a == b,
    }
}

fn is_type(value: &Value, t: &str) -> bool {
    match (t, value) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("number", Value::Number(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_)) => true,
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

/// A string that is certainly not of `format`, for the formats this knows.
fn bad_format(format: &str) -> Option<&'static str> {
    Some(match format {
        "email" => "not an email",
        "date-time" => "yesterday at noon",
        "date" => "2021-02-30x",
        "time" => "25:61",
        "uri" | "url" | "iri" => "no scheme here",
        "uuid" => "not-a-uuid",
        "ipv4" => "999.1.1.1",
        "ipv6" => "no:ipv6:here",
        _ => return None,
    })
}

/// Pushes onto `out` copies of `value` (which `schema` accepts) with one rule broken, somewhere
/// in it; the caller keeps those the whole schema certainly refuses.
fn mutants(root: &Value, schema: &Value, value: &Value, depth: usize, out: &mut Vec<Value>) {
    if depth > MAX_DEPTH {
        return;
    }
    let schema = resolve(root, schema);
    let Some(obj) = schema.as_object() else {
        return;
    };
    // The branches of a union (or the parts of an allOf) this value may come from.
    for key in ["anyOf", "oneOf", "allOf"] {
        for branch in obj.get(key).and_then(Value::as_array).into_iter().flatten() {
            if !refuses(root, branch, value, 0) {
                mutants(root, branch, value, depth + 1, out);
            }
        }
    }
    // Values of other types.
    for other in [
        Value::Null,
        Value::Bool(true),
        json!(0),
        json!(0.5),
        json!("x"),
        json!([]),
        json!({}),
    ] {
        if depth > 0 && !is_type(&other, kind(value)) {
            out.push(other);
        }
    }
    if obj.contains_key("enum") || obj.contains_key("const") {
        out.push(json!("\u{1}not one of them"));
    }
    match value {
        Value::Number(_) => {
            let integer = value.is_i64() || value.is_u64();
            let small = |m: f64| m.abs() < 9_007_199_254_740_992.0;
            let step = if integer { 1.0 } else { 0.5 };
            let num = |f: f64| {
                if integer && f.fract() == 0.0 {
                    #[allow(clippy::cast_possible_truncation)]
                    let whole = f as i64;
                    json!(whole)
                } else {
                    Number::from_f64(f).map_or(Value::Null, Value::Number)
                }
            };
            if let Some(m) = number(schema, "minimum").filter(|m| small(*m)) {
                out.push(num(m - step));
            }
            if let Some(m) = number(schema, "maximum").filter(|m| small(*m)) {
                out.push(num(m + step));
            }
            for key in ["exclusiveMinimum", "exclusiveMaximum"] {
                if let Some(m) = number(schema, key).filter(|m| small(*m)) {
                    out.push(num(m));
                }
            }
        }
        Value::String(_) => {
            if let Some(m) = count(schema, "minLength").filter(|m| *m > 0) {
                out.push(Value::String("a".repeat(m - 1)));
            }
            if let Some(m) = count(schema, "maxLength") {
                out.push(Value::String("a".repeat(m + 1)));
            }
            if let Some(bad) = schema
                .get("format")
                .and_then(Value::as_str)
                .and_then(bad_format)
            {
                out.push(Value::String(bad.to_owned()));
            }
        }
        Value::Array(items) => {
            if let Some(m) = count(schema, "minItems").filter(|m| *m > 0)
                && items.len() >= m
            {
                out.push(Value::Array(items[..m - 1].to_vec()));
            }
            if let (Some(m), Some(first)) = (count(schema, "maxItems"), items.first()) {
                out.push(Value::Array(vec![first.clone(); m + 1]));
            }
            for (i, item) in items.iter().enumerate() {
                let sub = schema
                    .get("prefixItems")
                    .and_then(|p| p.get(i))
                    .or_else(|| schema.get("items"));
                if let Some(sub) = sub {
                    let mut inner = Vec::new();
                    mutants(root, sub, item, depth + 1, &mut inner);
                    for m in inner {
                        let mut copy = items.clone();
                        copy[i] = m;
                        out.push(Value::Array(copy));
                    }
                }
            }
        }
        Value::Object(map) => {
            for name in schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                let mut copy = map.clone();
                if copy.remove(name).is_some() {
                    out.push(Value::Object(copy));
                }
            }
            if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
                let mut copy = map.clone();
                copy.insert("\u{1}unknown".into(), json!(1));
                out.push(Value::Object(copy));
            }
            let properties = schema.get("properties").and_then(Value::as_object);
            for (k, v) in map {
                let sub = properties
                    .and_then(|p| p.get(k))
                    .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object()));
                if let Some(sub) = sub {
                    let mut inner = Vec::new();
                    mutants(root, sub, v, depth + 1, &mut inner);
                    for m in inner {
                        let mut copy = map.clone();
                        copy.insert(k.clone(), m);
                        out.push(Value::Object(copy));
                    }
                }
            }
        }
        _ => {}
    }
}

/// The JSON type of `value` (`integer` for whole numbers).
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
