//! Arguments a model got wrong, converted where the tool's input schema leaves no doubt
//! ([`Coercion`]): a string holding an integer, a number, `true`/`false`, or a JSON array or
//! object, where the schema wants that type. Opt-in, at three levels: the server's switch
//! (`Server::coerce_arguments`), a tool's (`#[tool(coerce)]`, `DynamicTool::coerce`) and an
//! argument's (`#[arg(coerce)]`); the most specific one given decides for an argument.
//!
//! The conversion runs before validation, and the converted arguments are validated as any
//! others: a conversion never lets through what the schema refuses. With every level off the
//! arguments are not walked at all.
//!
//! What is converted, and what is left as it is (and so refused by validation, with the usual
//! message naming the field):
//! - `integer`: a string of digits with an optional `-` (`"3"`, `"-12"`) that fits 64 bits;
//!   not `"3.5"`, `"3.0"`, `"1e3"`, `"03"`, `"+3"`, `" 3 "` or `"18446744073709551616"`.
//! - `number`: a JSON number as text (`"3.5"`, `"-2"`, `"1e3"`); not `"1e400"`, `"NaN"`,
//!   `".5"` or text with spaces around it.
//! - `boolean`: exactly `"true"` or `"false"`; not `"yes"`, `"True"` or `"1"`.
//! - `array` / `object`: a string holding JSON text of that type (`"[1, 2]"`, `"{\"a\": 1}"`),
//!   parsed; a string holding anything else is left as it is.
//! - A schema that allows several types (a `type` array, or `anyOf`/`oneOf` with more than one
//!   branch that is not `null`) is ambiguous: nothing is converted, and a string it allows
//!   stays a string. `Option<T>`'s schema (`T` or `null`) is `T`'s. `null`, and every value
//!   that is not a string, is never converted.
//!
//! Nested values are converted too, below an argument that may be: the properties of an
//! object (its `properties`, else a schema `additionalProperties`) and the items of an array
//! (a single `items` schema), following local `$ref`s. Each conversion is named by its path,
//! as validation names fields (`filter.limit`, `ids[0]`).

use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

/// The `_meta` key under which a tool's result lists the arguments converted before
/// validation, each as `{"argument": "count", "from": "string", "to": "integer"}` (the
/// argument's path, as validation names fields). Present exactly when a conversion was made.
pub const COERCED_META_KEY: &str = "dev.mcp-tool/coerced";

/// The most `$ref`s followed for one value (a reference that leads back to itself stops).
const MAX_REFS: usize = 32;

/// Which arguments of a tool may be converted when a model sent the wrong JSON type (see the
/// rules above): set by generated code (`#[tool(coerce)]`, `#[arg(coerce)]`) and by
/// `DynamicTool::coerce` through [`DefBuilder::coercion`](crate::tool::DefBuilder::coercion). What
/// is not set follows the server's switch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coercion {
    /// The tool's own setting, for its arguments without one of their own.
    tool: Option<bool>,
    /// The arguments' own settings, by name.
    arguments: Vec<(String, bool)>,
}

impl Coercion {
    /// Converts every argument of the tool (`on`), or none whatever the server's switch
    /// (`!on`), except those with a setting of their own.
    pub fn arguments(&mut self, on: bool) -> &mut Self {
        self.tool = Some(on);
        self
    }

    /// Converts the argument `name` (`on`), or never (`!on`), whatever the tool's and the
    /// server's settings.
    pub fn argument(&mut self, name: &str, on: bool) -> &mut Self {
        match self.arguments.iter_mut().find(|(n, _)| n == name) {
            Some(setting) => setting.1 = on,
            None => self.arguments.push((name.to_owned(), on)),
        }
        self
    }

    /// Whether some argument may be converted when the server's switch is `server`: when
    /// not, the arguments are not walked.
    pub(crate) fn enabled(&self, server: bool) -> bool {
        self.tool.unwrap_or(server) || self.arguments.iter().any(|(_, on)| *on)
    }

    /// Whether the argument `name` may be converted when the server's switch is `server`.
    fn applies(&self, name: &str, server: bool) -> bool {
        let own = self.arguments.iter().find(|(n, _)| n == name);
        own.map(|(_, on)| *on).or(self.tool).unwrap_or(server)
    }

    /// The problems of arguments given a setting that the input schema does not have (an
    /// `#[arg(coerce)]` on a context value or on `Args<T>`), each a sentence.
    pub(crate) fn unknown_arguments(&self, input_schema: &Value) -> Vec<String> {
        let properties = input_schema.get("properties").and_then(Value::as_object);
        self.arguments
            .iter()
            .filter(|(name, _)| !properties.is_some_and(|p| p.contains_key(name)))
            .map(|(name, _)| {
                let which = if name.is_empty() {
                    "a parameter that is no named argument".to_owned()
                } else {
                    format!("`{name}`, which is no argument of the input schema")
                };
                format!(
                    "`coerce` is set on {which}: to convert the arguments of `Args<T>`, set it \
                     on the tool"
                )
            })
            .collect()
    }

    /// Converts the `arguments` of a call as this setting and the server's switch (`server`)
    /// allow, by `input_schema`; `None` when nothing was converted (and, with every level off,
    /// without looking at the arguments).
    pub(crate) fn apply(
        &self,
        server: bool,
        input_schema: &Value,
        arguments: &mut Map<String, Value>,
    ) -> Option<Coerced> {
        if !self.enabled(server) {
            return None;
        }
        let mut walk = Walk {
            root: input_schema,
            done: Vec::new(),
        };
        for (name, value) in arguments.iter_mut() {
            if !self.applies(name, server) {
                continue;
            }
            if let Some(schema) = member(input_schema, name) {
                walk.value(schema, value, &Path::Root(name));
            }
        }
        (!walk.done.is_empty()).then_some(Coerced(walk.done))
    }
}

/// The conversions made in the arguments of one call, in the order made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Coerced(Vec<Conversion>);

/// One conversion: the value's path, and the JSON type it became (it was a string).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Conversion {
    path: String,
    to: &'static str,
}

impl Coerced {
    /// The conversions as the result's `_meta` and the call's span show them: a JSON array of
    /// `{"argument", "from", "to"}`.
    pub(crate) fn to_json(&self) -> Value {
        let records = self.0.iter().map(|c| {
            let mut record = Map::new();
            record.insert("argument".into(), Value::String(c.path.clone()));
            record.insert("from".into(), Value::String("string".into()));
            record.insert("to".into(), Value::String(c.to.into()));
            Value::Object(record)
        });
        Value::Array(records.collect())
    }

    /// Adds the conversions to a result's `_meta` (under [`COERCED_META_KEY`]).
    pub(crate) fn record(&self, meta: &mut Option<Map<String, Value>>) {
        meta.get_or_insert_with(Map::new)
            .insert(COERCED_META_KEY.to_owned(), self.to_json());
    }
}

/// Where a value is among the arguments, rendered only for a conversion.
enum Path<'a> {
    Root(&'a str),
    Property(&'a Path<'a>, &'a str),
    Item(&'a Path<'a>, usize),
}

impl Path<'_> {
    fn render(&self, out: &mut String) {
        match self {
            Path::Root(name) => out.push_str(name),
            Path::Property(parent, name) => {
                parent.render(out);
                out.push('.');
                out.push_str(name);
            }
            Path::Item(parent, i) => {
                parent.render(out);
                let _ = write!(out, "[{i}]");
            }
        }
    }
}

/// One walk over a call's arguments.
struct Walk<'s> {
    /// The input schema, which `$ref`s point into.
    root: &'s Value,
    done: Vec<Conversion>,
}

impl<'s> Walk<'s> {
    /// Converts `value` if it is a string and `schema` wants exactly one other type, then
    /// goes into it.
    fn value(&mut self, schema: &'s Value, value: &mut Value, path: &Path<'_>) {
        let Some((ty, schema)) = self.single_type(schema) else {
            return;
        };
        if let Value::String(text) = value {
            let Some(converted) = convert(text, ty) else {
                return;
            };
            *value = converted;
            let mut rendered = String::new();
            path.render(&mut rendered);
            self.done.push(Conversion {
                path: rendered,
                to: ty,
            });
        }
        match value {
            Value::Object(fields) if ty == "object" => {
                for (name, field) in fields.iter_mut() {
                    if let Some(sub) = member(schema, name) {
                        self.value(sub, field, &Path::Property(path, name));
                    }
                }
            }
            Value::Array(items) if ty == "array" => {
                if let Some(sub) = schema.get("items").filter(|s| s.is_object()) {
                    for (i, item) in items.iter_mut().enumerate() {
                        self.value(sub, item, &Path::Item(path, i));
                    }
                }
            }
            _ => {}
        }
    }

    /// The one JSON type `schema` allows (besides `null`), with the schema that says it
    /// (local `$ref`s followed); `None` when it allows several, or says nothing.
    fn single_type(&self, schema: &'s Value) -> Option<(&'static str, &'s Value)> {
        let mut schema = schema;
        for _ in 0..MAX_REFS {
            let object = schema.as_object()?;
            if let Some(reference) = object.get("$ref") {
                schema = self.resolve(reference.as_str()?)?;
                continue;
            }
            match object.get("type") {
                Some(Value::String(ty)) => return Some((type_name(ty)?, schema)),
                Some(Value::Array(types)) => {
                    let mut others = types.iter().filter(|t| t.as_str() != Some("null"));
                    let ty = others.next()?.as_str()?;
                    return match others.next() {
                        None => Some((type_name(ty)?, schema)),
                        Some(_) => None,
                    };
                }
                Some(_) => return None,
                None => {}
            }
            let branches = ["anyOf", "oneOf", "allOf"]
                .iter()
                .find_map(|k| object.get(*k))?
                .as_array()?;
            let mut others = branches.iter().filter(|b| !is_null_type(b));
            let only = others.next()?;
            if others.next().is_some() {
                return None;
            }
            schema = only;
        }
        None
    }

    /// The schema a local reference (`#/$defs/Name`, any JSON Pointer in the input schema)
    /// points at.
    fn resolve(&self, reference: &str) -> Option<&'s Value> {
        let pointer = reference.strip_prefix('#')?;
        let pointer = percent_decoded(pointer)?;
        self.root.pointer(&pointer)
    }
}

/// The schema of the member `name` of an object whose schema is `schema`: its property, else
/// what `additionalProperties` says of the others (when it is a schema).
fn member<'s>(schema: &'s Value, name: &str) -> Option<&'s Value> {
    schema
        .get("properties")
        .and_then(|p| p.get(name))
        .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object()))
}

/// A JSON type name as a `'static` string; `None` for a name JSON Schema does not have.
fn type_name(ty: &str) -> Option<&'static str> {
    [
        "string", "integer", "number", "boolean", "array", "object", "null",
    ]
    .into_iter()
    .find(|t| *t == ty)
}

/// Whether a branch allows only `null` (`Option<T>`'s other branch).
fn is_null_type(branch: &Value) -> bool {
    branch.get("type").and_then(Value::as_str) == Some("null")
        || branch.get("const").is_some_and(Value::is_null)
}

/// A JSON Pointer written in a URI fragment, with its `%XX` escapes decoded.
fn percent_decoded(pointer: &str) -> Option<String> {
    if !pointer.contains('%') {
        return Some(pointer.to_owned());
    }
    let bytes = pointer.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// `text` as a value of the JSON type `ty`, when it unambiguously is one.
fn convert(text: &str, ty: &str) -> Option<Value> {
    match ty {
        "integer" => number(text)
            .filter(|n| n.is_i64() || n.is_u64())
            .map(Value::Number),
        "number" => number(text).map(Value::Number),
        "boolean" => match text {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        "array" => serde_json::from_str::<Value>(text)
            .ok()
            .filter(Value::is_array),
        "object" => serde_json::from_str::<Value>(text)
            .ok()
            .filter(Value::is_object),
        _ => None,
    }
}

/// `text` as a JSON number, written exactly as JSON writes one (no spaces around it, no `+`,
/// no leading zeros) and within the range of a double.
fn number(text: &str) -> Option<Number> {
    let first = *text.as_bytes().first()?;
    let last = *text.as_bytes().last()?;
    if !(first == b'-' || first.is_ascii_digit()) || !last.is_ascii_digit() {
        return None;
    }
    serde_json::from_str::<Number>(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The arguments after conversion with the tool's setting on, and the conversions.
    fn coerced(schema: Value, arguments: Value) -> (Value, Value) {
        let mut coercion = Coercion::default();
        coercion.arguments(true);
        let Value::Object(mut arguments) = arguments else {
            panic!("arguments are an object")
        };
        let done = coercion.apply(false, &schema, &mut arguments);
        (
            Value::Object(arguments),
            done.map_or(Value::Null, |d| d.to_json()),
        )
    }

    fn one(ty: Value, value: Value) -> Option<Value> {
        let schema = json!({"type": "object", "properties": {"a": ty}});
        let (arguments, done) = coerced(schema, json!({ "a": value }));
        (!done.is_null()).then(|| arguments["a"].clone())
    }

    #[test]
    fn integers_are_digits_that_fit_64_bits() {
        let int = json!({"type": "integer", "format": "int64"});
        assert_eq!(one(int.clone(), json!("3")), Some(json!(3)));
        assert_eq!(one(int.clone(), json!("-12")), Some(json!(-12)));
        assert_eq!(
            one(int.clone(), json!("18446744073709551615")),
            Some(json!(u64::MAX))
        );
        for refused in [
            "3.5",
            "3.0",
            "1e3",
            "03",
            "+3",
            " 3 ",
            "3 ",
            "-0",
            "",
            "x",
            "0x10",
            "18446744073709551616",
            "-9223372036854775809",
            "1e400",
        ] {
            assert_eq!(one(int.clone(), json!(refused)), None, "{refused:?}");
        }
    }

    #[test]
    fn numbers_are_json_numbers() {
        let num = json!({"type": "number"});
        assert_eq!(one(num.clone(), json!("3.5")), Some(json!(3.5)));
        assert_eq!(one(num.clone(), json!("3")), Some(json!(3)));
        assert_eq!(one(num.clone(), json!("-2e3")), Some(json!(-2000.0)));
        for refused in [
            "1e400", "NaN", "Infinity", ".5", "1.", " 3.5", "3,5", "1_000",
        ] {
            assert_eq!(one(num.clone(), json!(refused)), None, "{refused:?}");
        }
    }

    #[test]
    fn booleans_are_true_or_false_exactly() {
        let b = json!({"type": "boolean"});
        assert_eq!(one(b.clone(), json!("true")), Some(json!(true)));
        assert_eq!(one(b.clone(), json!("false")), Some(json!(false)));
        for refused in ["yes", "True", "1", "on", " true", ""] {
            assert_eq!(one(b.clone(), json!(refused)), None, "{refused:?}");
        }
    }

    #[test]
    fn arrays_and_objects_are_parsed_and_must_have_the_type() {
        let array = json!({"type": "array", "items": {"type": "integer"}});
        assert_eq!(one(array.clone(), json!("[1, 2]")), Some(json!([1, 2])));
        assert_eq!(one(array.clone(), json!("{\"a\": 1}")), None);
        assert_eq!(one(array.clone(), json!("[1,")), None);
        assert_eq!(one(array.clone(), json!("1")), None);
        let object = json!({"type": "object"});
        assert_eq!(
            one(object.clone(), json!(r#"{"k": "v"}"#)),
            Some(json!({"k": "v"}))
        );
        assert_eq!(one(object.clone(), json!("[1]")), None);
        assert_eq!(one(object, json!("null")), None);
    }

    #[test]
    fn only_strings_are_converted() {
        let int = json!({"type": "integer"});
        assert_eq!(one(int.clone(), json!(null)), None);
        assert_eq!(one(int.clone(), json!(true)), None);
        assert_eq!(one(int.clone(), json!(3.5)), None);
        assert_eq!(one(json!({"type": "string"}), json!("3")), None);
    }

    #[test]
    fn a_schema_that_allows_several_types_is_ambiguous() {
        for ambiguous in [
            json!({"type": ["string", "integer"]}),
            json!({"type": ["integer", "boolean"]}),
            json!({"anyOf": [{"type": "string"}, {"type": "number"}]}),
            json!({"oneOf": [{"type": "integer"}, {"type": "boolean"}]}),
            json!({}),
            json!(true),
            json!({"enum": [1, 2, 3]}),
        ] {
            assert_eq!(one(ambiguous.clone(), json!("3")), None, "{ambiguous}");
            assert_eq!(one(ambiguous.clone(), json!("true")), None, "{ambiguous}");
        }
    }

    #[test]
    fn an_optional_value_is_its_type() {
        assert_eq!(
            one(json!({"type": ["integer", "null"]}), json!("3")),
            Some(json!(3))
        );
        assert_eq!(
            one(json!({"type": ["integer", "null"]}), json!("null")),
            None
        );
        assert_eq!(
            one(
                json!({"anyOf": [{"type": "boolean"}, {"type": "null"}]}),
                json!("false")
            ),
            Some(json!(false))
        );
    }

    #[test]
    fn nested_values_follow_references() {
        let schema = json!({
            "type": "object",
            "properties": {
                "filter": {"anyOf": [{"$ref": "#/$defs/Filter"}, {"type": "null"}]},
                "ids": {"type": "array", "items": {"type": "integer"}},
                "counts": {"type": "object", "additionalProperties": {"type": "integer"}}
            },
            "$defs": {
                "Filter": {
                    "type": "object",
                    "properties": {"limit": {"type": "integer"}, "exact": {"type": "boolean"}}
                }
            }
        });
        let (arguments, done) = coerced(
            schema,
            json!({
                "filter": "{\"limit\": \"5\", \"exact\": \"true\"}",
                "ids": ["1", 2, "x"],
                "counts": {"a": "7"}
            }),
        );
        assert_eq!(
            arguments,
            json!({
                "filter": {"limit": 5, "exact": true},
                "ids": [1, 2, "x"],
                "counts": {"a": 7}
            })
        );
        let mut paths: Vec<&str> = done
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["argument"].as_str().unwrap())
            .collect();
        paths.sort_unstable();
        assert_eq!(
            paths,
            [
                "counts.a",
                "filter",
                "filter.exact",
                "filter.limit",
                "ids[0]"
            ]
        );
    }

    #[test]
    fn a_reference_loop_ends() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}},
            "$defs": {"A": {"$ref": "#/$defs/A"}}
        });
        let (_, done) = coerced(schema, json!({"a": "3"}));
        assert_eq!(done, Value::Null);
    }

    #[test]
    fn the_most_specific_setting_decides() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "integer"}, "b": {"type": "integer"}
        }});
        let run = |coercion: &Coercion, server: bool| {
            let mut arguments =
                Map::from_iter([("a".to_owned(), json!("1")), ("b".to_owned(), json!("2"))]);
            coercion.apply(server, &schema, &mut arguments);
            (arguments["a"].is_number(), arguments["b"].is_number())
        };
        let mut coercion = Coercion::default();
        assert_eq!(run(&coercion, false), (false, false), "strict by default");
        assert_eq!(run(&coercion, true), (true, true), "the server's switch");
        coercion.argument("a", true);
        assert_eq!(run(&coercion, false), (true, false), "one argument");
        coercion.arguments(false);
        assert_eq!(run(&coercion, true), (true, false), "the tool opts out");
        coercion.argument("a", false).arguments(true);
        assert_eq!(
            run(&coercion, false),
            (false, true),
            "the argument opts out"
        );
    }

    #[test]
    fn nothing_converted_gives_no_record() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        let mut coercion = Coercion::default();
        coercion.arguments(true);
        let mut arguments = Map::from_iter([("a".to_owned(), json!(1))]);
        assert_eq!(coercion.apply(false, &schema, &mut arguments), None);
    }

    #[test]
    fn the_record_goes_into_meta_beside_other_entries() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        let mut coercion = Coercion::default();
        coercion.argument("a", true);
        let mut arguments = Map::from_iter([("a".to_owned(), json!("4"))]);
        let done = coercion.apply(false, &schema, &mut arguments).unwrap();
        let mut meta = Some(Map::from_iter([("k".to_owned(), json!(1))]));
        done.record(&mut meta);
        assert_eq!(
            Value::Object(meta.unwrap()),
            json!({"k": 1, "dev.mcp-tool/coerced": [
                {"argument": "a", "from": "string", "to": "integer"}
            ]})
        );
    }

    #[test]
    fn settings_on_what_is_no_argument_are_problems() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        let mut coercion = Coercion::default();
        coercion
            .argument("a", true)
            .argument("ctx", true)
            .argument("", true);
        let problems = coercion.unknown_arguments(&schema);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("`ctx`, which is no argument"));
        assert!(problems[1].contains("a parameter that is no named argument"));
    }
}
