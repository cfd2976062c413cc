//! Property testing of tools (feature `proptest`): strategies derived from a tool's input
//! schema, giving arguments the schema accepts ([`arbitrary_arguments`]) and arguments it
//! refuses ([`refused_arguments`]).
//!
//! The generator reads the JSON Schema keywords that schemars writes and the validator checks:
//! `type` (one or several), `enum`, `const`, `anyOf`, `oneOf` (its branches taken as
//! disjoint, as schemars writes them), `allOf` (objects merged), `$ref` to `#/$defs/…` or
//! `#/definitions/…`, `properties`, `required`, `additionalProperties`, `minimum`, `maximum`,
//! `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf` (integers), `minLength`, `maxLength`,
//! `pattern`, the formats `email`, `date-time`, `date`, `time`, `uri`, `uuid`, `ipv4`,
//! `ipv6` and `hostname`, `items`, `prefixItems`, `minItems`, `maxItems` and `uniqueItems`.
//! schemars' numeric formats (`int32`, `uint8`, …) bound integers that have no `minimum` or
//! `maximum`; other integers stay within `i64`, numbers are finite.

mod refused;

use std::collections::BTreeSet;

use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use serde_json::{Map, Number, Value};

pub use refused::refused_arguments;

/// How deep a recursive schema is followed before optional parts are left out.
const MAX_DEPTH: usize = 8;

/// Values that `schema` accepts: a strategy for `proptest`, to give a tool arguments that
/// pass its validation. Pass the tool's input schema ([`ToolDef::input_schema`]).
///
/// ```
/// use mcp_tool::prelude::*;
/// use mcp_tool::testing::arbitrary_arguments;
/// use proptest::prelude::*;
/// use proptest::test_runner::TestRunner;
///
/// #[derive(Deserialize, JsonSchema)]
/// #[serde(rename_all = "lowercase")]
/// enum Role {
///     User,
///     Admin,
/// }
///
/// /// Create a user.
/// #[tool]
/// fn create_user(
///     #[arg(description = "An email address")] email: String,
///     role: Option<Role>,
///     age: u8,
/// ) -> String {
///     let _ = (role, age);
///     email
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = Server::new("users", "0").only(["create_user"]).build().unwrap();
/// let schema = server.tools()[0].input_schema().clone();
/// let mut runner = TestRunner::default();
/// for _ in 0..32 {
///     let arguments = arbitrary_arguments(&schema)
///         .new_tree(&mut runner)
///         .unwrap()
///         .current();
///     let result = server.call("create_user", arguments).await.unwrap();
///     assert!(!result.is_error, "{}", result.text_content());
/// }
/// # }
/// ```
///
/// In a `proptest!` test, write `arguments in arbitrary_arguments(&schema)`.
///
/// # Panics
///
/// When a part of `schema` can take no value (`false`, an empty `enum`), or has a `pattern`
/// that `proptest`'s regular expressions cannot generate (look-around, backreferences).
///
/// [`ToolDef::input_schema`]: crate::tool::ToolDef::input_schema
pub fn arbitrary_arguments(schema: &Value) -> BoxedStrategy<Value> {
    generate(schema, schema, 0)
}

/// `schema` with every `$ref` at its top followed (within `root`).
fn resolve<'a>(root: &'a Value, mut schema: &'a Value) -> &'a Value {
    for _ in 0..32 {
        let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
            return schema;
        };
        let Some(pointer) = reference.strip_prefix('#') else {
            panic!("arbitrary_arguments: only local references are followed, not {reference}");
        };
        schema = root
            .pointer(pointer)
            .unwrap_or_else(|| panic!("arbitrary_arguments: {reference} points nowhere"));
    }
    panic!("arbitrary_arguments: a chain of more than 32 references");
}

/// The schema's `type`s, if it names any.
fn types(schema: &Value) -> Option<Vec<&str>> {
    match schema.get("type")? {
        Value::String(t) => Some(vec![t.as_str()]),
        Value::Array(ts) => Some(ts.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

fn number(schema: &Value, key: &str) -> Option<f64> {
    schema.get(key).and_then(Value::as_f64)
}

fn count(schema: &Value, key: &str) -> Option<usize> {
    schema
        .get(key)
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
}

fn generate(root: &Value, schema: &Value, depth: usize) -> BoxedStrategy<Value> {
    let schema = resolve(root, schema);
    let obj = match schema {
        Value::Bool(true) => return any_simple(),
        Value::Bool(false) => panic!("arbitrary_arguments: the schema `false` takes no value"),
        Value::Object(obj) => obj,
        other => panic!("arbitrary_arguments: {other} is not a schema"),
    };
    if let Some(c) = obj.get("const") {
        return Just(c.clone()).boxed();
    }
    if let Some(values) = obj.get("enum").and_then(Value::as_array) {
        assert!(
            !values.is_empty(),
            "arbitrary_arguments: an empty `enum` takes no value"
        );
        return proptest::sample::select(values.clone()).boxed();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = obj.get(key).and_then(Value::as_array) {
            let mut rest = obj.clone();
            rest.remove(key);
            let strategies: Vec<BoxedStrategy<Value>> = branches
                .iter()
                .map(|b| generate(root, &merge(root, &Value::Object(rest.clone()), b), depth))
                .collect();
            return proptest::strategy::Union::new(strategies).boxed();
        }
    }
    if let Some(parts) = obj.get("allOf").and_then(Value::as_array) {
        let mut merged = obj.clone();
        merged.remove("allOf");
        let mut merged = Value::Object(merged);
        for part in parts {
            merged = merge(root, &merged, part);
        }
        return generate(root, &merged, depth);
    }
    let strategies: Vec<BoxedStrategy<Value>> = match types(schema) {
        Some(ts) => ts
            .into_iter()
            .map(|t| of_type(root, schema, t, depth))
            .collect(),
        None if obj.contains_key("properties") || obj.contains_key("required") => {
            vec![of_type(root, schema, "object", depth)]
        }
        None if obj.contains_key("items") || obj.contains_key("prefixItems") => {
            vec![of_type(root, schema, "array", depth)]
        }
        None => return any_simple(),
    };
    proptest::strategy::Union::new(strategies).boxed()
}

/// Two schemas as one (the keywords of both; properties and `required` joined).
fn merge(root: &Value, a: &Value, b: &Value) -> Value {
    let b = resolve(root, b);
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return b.clone();
    };
    let mut out = a.clone();
    for (k, v) in b {
        match (k.as_str(), out.get_mut(k)) {
            ("properties", Some(Value::Object(props))) => {
                if let Some(more) = v.as_object() {
                    props.extend(more.clone());
                }
            }
            ("required", Some(Value::Array(req))) => {
                if let Some(more) = v.as_array() {
                    req.extend(more.iter().cloned());
                }
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

/// Any null, boolean, integer or short string.
fn any_simple() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "[a-z]{0,8}".prop_map(Value::String),
    ]
    .boxed()
}

fn of_type(root: &Value, schema: &Value, t: &str, depth: usize) -> BoxedStrategy<Value> {
    match t {
        "null" => Just(Value::Null).boxed(),
        "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
        "integer" => integer(schema),
        "number" => float(schema),
        "string" => string(schema).prop_map(Value::String).boxed(),
        "array" => array(root, schema, depth),
        "object" => object(root, schema, depth),
        other => panic!("arbitrary_arguments: unknown type {other:?}"),
    }
}

/// The range schemars' numeric `format` implies.
fn format_range(schema: &Value) -> (i128, i128) {
    match schema.get("format").and_then(Value::as_str) {
        Some("int8") => (i8::MIN.into(), i8::MAX.into()),
        Some("int16") => (i16::MIN.into(), i16::MAX.into()),
        Some("int32") => (i32::MIN.into(), i32::MAX.into()),
        Some("uint8") => (0, u8::MAX.into()),
        Some("uint16") => (0, u16::MAX.into()),
        Some("uint32") => (0, u32::MAX.into()),
        Some("uint64" | "uint128" | "uint") => (0, u64::MAX.into()),
        _ => (i64::MIN.into(), i64::MAX.into()),
    }
}

fn integer(schema: &Value) -> BoxedStrategy<Value> {
    let (mut lo, mut hi) = format_range(schema);
    // Bounds beyond what an i128 holds are no bounds here.
    #[allow(clippy::cast_possible_truncation)]
    let bound = |f: f64| (f.abs() < 1e36).then_some(f as i128);
    if let Some(m) = number(schema, "minimum").and_then(|m| bound(m.ceil())) {
        lo = lo.max(m);
    }
    if let Some(m) = number(schema, "exclusiveMinimum").and_then(|m| bound(m.floor())) {
        lo = lo.max(m + 1);
    }
    if let Some(m) = number(schema, "maximum").and_then(|m| bound(m.floor())) {
        hi = hi.min(m);
    }
    if let Some(m) = number(schema, "exclusiveMaximum").and_then(|m| bound(m.ceil())) {
        hi = hi.min(m - 1);
    }
    assert!(
        lo <= hi,
        "arbitrary_arguments: no integer in [{lo}, {hi}]: {schema}"
    );
    let step = schema
        .get("multipleOf")
        .and_then(Value::as_u64)
        .map_or(1, i128::from);
    let as_value = |n: i128| {
        i64::try_from(n)
            .map(Value::from)
            .unwrap_or_else(|_| Value::from(u64::try_from(n).expect("within u64")))
    };
    if step > 1 {
        let first = lo.div_euclid(step) + i128::from(lo.rem_euclid(step) != 0);
        let last = hi.div_euclid(step);
        assert!(
            first <= last,
            "arbitrary_arguments: no multiple of {step} in [{lo}, {hi}]"
        );
        return (first..=last).prop_map(move |k| as_value(k * step)).boxed();
    }
    let edges: Vec<i128> = [lo, hi, 0, 1, -1]
        .into_iter()
        .filter(|n| (lo..=hi).contains(n))
        .collect();
    prop_oneof![
        1 => proptest::sample::select(edges).prop_map(as_value),
        4 => (lo..=hi).prop_map(as_value),
    ]
    .boxed()
}

fn float(schema: &Value) -> BoxedStrategy<Value> {
    const LIMIT: f64 = 1e300;
    let mut lo = number(schema, "minimum").unwrap_or(-LIMIT).max(-LIMIT);
    let mut hi = number(schema, "maximum").unwrap_or(LIMIT).min(LIMIT);
    let exclusive_lo = number(schema, "exclusiveMinimum");
    let exclusive_hi = number(schema, "exclusiveMaximum");
    if let Some(m) = exclusive_lo {
        lo = lo.max(m);
    }
    if let Some(m) = exclusive_hi {
        hi = hi.min(m);
    }
    assert!(lo <= hi, "arbitrary_arguments: no number in [{lo}, {hi}]");
    let inside = move |f: f64| {
        f >= lo
            && f <= hi
            && exclusive_lo.is_none_or(|m| f > m)
            && exclusive_hi.is_none_or(|m| f < m)
    };
    let edges: Vec<f64> = [lo, hi, 0.0, 1.0, -1.5, 0.1]
        .into_iter()
        .filter(|f| inside(*f))
        .collect();
    let any = (lo..=hi).prop_filter("inside the exclusive bounds", move |f| inside(*f));
    let s = if edges.is_empty() {
        any.boxed()
    } else {
        prop_oneof![1 => proptest::sample::select(edges), 4 => any].boxed()
    };
    s.prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number))
        .boxed()
}

/// Strings of a regular expression of this module.
fn regex(r: &str) -> BoxedStrategy<String> {
    proptest::string::string_regex(r)
        .expect("a regular expression proptest generates")
        .boxed()
}

/// A host name's label: letters, digits and inner hyphens.
const LABEL: &str = "[a-z]([a-z0-9-]{0,8}[a-z0-9])?";

/// A strategy for strings of `format`, if it is one this knows.
fn formatted(format: &str) -> Option<BoxedStrategy<String>> {
    let s = match format {
        "email" => regex(&format!(
            "[a-z0-9]{{1,8}}([._+-][a-z0-9]{{1,8}}){{0,2}}@{LABEL}\\.[a-z]{{2,6}}"
        )),
        "date-time" => (date(), time())
            .prop_map(|(d, t)| format!("{d}T{t}"))
            .boxed(),
        "date" => date(),
        "time" => time(),
        "uri" | "url" | "iri" => (
            prop_oneof![Just("https"), Just("http"), Just("urn"), Just("mailto")],
            regex(&format!("{LABEL}(\\.[a-z]{{2,6}})?")),
            "(/[A-Za-z0-9._~-]{0,8}){0,3}",
        )
            .prop_map(|(scheme, host, path)| match scheme {
                "urn" | "mailto" => format!("{scheme}:{host}"),
                _ => format!("{scheme}://{host}{path}"),
            })
            .boxed(),
        "uuid" => "[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}".boxed(),
        "ipv4" => any::<[u8; 4]>()
            .prop_map(|[a, b, c, d]| format!("{a}.{b}.{c}.{d}"))
            .boxed(),
        "ipv6" => any::<[u16; 8]>()
            .prop_map(|parts| {
                let parts: Vec<String> = parts.iter().map(|p| format!("{p:x}")).collect();
                parts.join(":")
            })
            .boxed(),
        "hostname" => regex(&format!("{LABEL}(\\.{LABEL}){{0,3}}")),
        _ => return None,
    };
    Some(s)
}

fn date() -> BoxedStrategy<String> {
    (1i32..=9999, 1u32..=12, 1u32..=28)
        .prop_map(|(y, m, d)| format!("{y:04}-{m:02}-{d:02}"))
        .boxed()
}

fn time() -> BoxedStrategy<String> {
    (
        0u32..24,
        0u32..60,
        0u32..60,
        proptest::option::of(0u32..1000),
        prop_oneof![
            Just("Z".to_owned()),
            (0u32..24, 0u32..60).prop_map(|(h, m)| format!("+{h:02}:{m:02}"))
        ],
    )
        .prop_map(|(h, m, s, frac, zone)| {
            let frac = frac.map(|f| format!(".{f:03}")).unwrap_or_default();
            format!("{h:02}:{m:02}:{s:02}{frac}{zone}")
        })
        .boxed()
}

fn string(schema: &Value) -> BoxedStrategy<String> {
    let min = count(schema, "minLength").unwrap_or(0);
    let max = count(schema, "maxLength").unwrap_or(min.max(16) + 16);
    assert!(
        min <= max,
        "arbitrary_arguments: no string of {min} to {max} characters"
    );
    let fits = move |s: &String| (min..=max).contains(&s.chars().count());
    let format = schema.get("format").and_then(Value::as_str);
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        let regex = pattern.strip_prefix('^').unwrap_or(pattern);
        let regex = regex.strip_suffix('$').unwrap_or(regex);
        let s = proptest::string::string_regex(regex).unwrap_or_else(|e| {
            panic!("arbitrary_arguments: cannot generate strings of the pattern {pattern}: {e}")
        });
        return s.prop_filter("within the length bounds", fits).boxed();
    }
    if let Some(s) = format.and_then(formatted) {
        return s.prop_filter("within the length bounds", fits).boxed();
    }
    proptest::collection::vec(any::<char>(), min..=max)
        .prop_map(|chars| chars.into_iter().collect())
        .boxed()
}

fn array(root: &Value, schema: &Value, depth: usize) -> BoxedStrategy<Value> {
    let prefix: Vec<Value> = schema
        .get("prefixItems")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let items = schema.get("items").cloned();
    let more_allowed = !matches!(items, Some(Value::Bool(false)));
    let min = count(schema, "minItems").unwrap_or(0).max(prefix.len());
    let default_max = if depth >= MAX_DEPTH { min } else { min + 4 };
    let max = count(schema, "maxItems").unwrap_or(default_max).max(min);
    let max = if more_allowed {
        max
    } else {
        max.min(prefix.len())
    };
    let unique = schema.get("uniqueItems") == Some(&Value::Bool(true));
    let heads: Vec<BoxedStrategy<Value>> = prefix
        .iter()
        .map(|p| generate(root, p, depth + 1))
        .collect();
    let item = items.map_or_else(any_simple, |i| generate(root, &i, depth + 1));
    let extra = min.saturating_sub(prefix.len())..=max.saturating_sub(prefix.len());
    let tail = proptest::collection::vec(item, extra);
    let min_total = min;
    (heads, tail)
        .prop_map(move |(mut heads, tail)| {
            heads.extend(tail);
            if unique {
                let mut seen = BTreeSet::new();
                heads.retain(|v| seen.insert(v.to_string()));
            }
            heads
        })
        .prop_filter("enough unique items", move |v| v.len() >= min_total)
        .prop_map(Value::Array)
        .boxed()
}

fn object(root: &Value, schema: &Value, depth: usize) -> BoxedStrategy<Value> {
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: BTreeSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
    for (name, sub) in properties {
        let value = generate(root, sub, depth + 1);
        let name = name.clone();
        if required.contains(name.as_str()) {
            fields.push(value.prop_map(move |v| Some((name.clone(), v))).boxed());
        } else if depth < MAX_DEPTH {
            fields.push(
                proptest::option::of(value)
                    .prop_map(move |v| v.map(|v| (name.clone(), v)))
                    .boxed(),
            );
        }
    }
    for name in required.iter().filter(|r| !properties.contains_key(**r)) {
        let name = (*name).to_owned();
        fields.push(
            any_simple()
                .prop_map(move |v| Some((name.clone(), v)))
                .boxed(),
        );
    }
    let extra = match schema.get("additionalProperties") {
        Some(Value::Object(_)) if depth < MAX_DEPTH => {
            let known: BTreeSet<String> = properties.keys().cloned().collect();
            let value = generate(root, &schema["additionalProperties"], depth + 1);
            let names = proptest::string::string_regex("[a-zA-Z_][a-zA-Z0-9_]{0,8}")
                .expect("a valid regex")
                .prop_filter("not a declared property", move |k| !known.contains(k));
            proptest::collection::vec((names, value), 0..3).boxed()
        }
        _ => Just(Vec::new()).boxed(),
    };
    (fields, extra)
        .prop_map(|(fields, extra)| {
            let mut map = Map::new();
            for (k, v) in extra {
                map.insert(k, v);
            }
            for (k, v) in fields.into_iter().flatten() {
                map.insert(k, v);
            }
            Value::Object(map)
        })
        .boxed()
}
