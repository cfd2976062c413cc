//! Validation against JSON Schema 2020-12 (with format assertions), and the wording of its
//! errors: one line per broken rule, each naming the field's path and the rule, so a model can
//! correct its call.
//!
//! The validator is `boon`, compiled once per schema when a server starts; a schema that is
//! not valid JSON Schema is refused then. A valid instance is accepted by the schema's
//! [`Quick`] rules when it has them (boon's verdict, reached without boon's general
//! machinery); any other instance goes through boon, which words the errors.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, LazyLock, Mutex};

use boon::{ErrorKind, InstanceLocation, InstanceToken};
use serde_json::Value;

use super::quick::Quick;
use crate::sync::lock;

/// Why a value does not fit a tool's schema: every rule it breaks, each at its field. Shown
/// one [`Violation`] per line, as a tool's caller reads it in the `isError` result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", lines(.violations))]
pub struct ValidationError {
    violations: Vec<Violation>,
}

impl ValidationError {
    /// The broken rules, in the order the schema was checked (never empty).
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }
}

/// One broken rule: the field that breaks it and what is wrong with it. Shown as
/// `path: message` (`items[0].name: "" is shorter than 1 characters`); the whole value is
/// named `arguments`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", if .path.is_empty() { "arguments" } else { .path })]
pub struct Violation {
    pointer: String,
    path: String,
    message: String,
}

impl Violation {
    /// The field as a JSON Pointer (RFC 6901): `/items/0/name`; empty for the whole value.
    /// For a missing or unknown argument, the pointer of that argument.
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// The field as the message writes it: `items[0].name`; empty for the whole value.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What is wrong with the field: `"x" is not a valid email`.
    pub fn message(&self) -> &str {
        &self.message
    }
}

fn lines(violations: &[Violation]) -> String {
    let lines: Vec<String> = violations.iter().map(Violation::to_string).collect();
    lines.join("\n")
}

/// A compiled schema.
pub(crate) struct Validator {
    schemas: boon::Schemas,
    index: boon::SchemaIndex,
    quick: Option<Quick>,
}

impl Validator {
    /// Compiles `schema` (draft 2020-12 unless its `$schema` says otherwise).
    pub(crate) fn compile(schema: &Value) -> Result<Validator, String> {
        const LOCATION: &str = "urn:mcp-tool:schema";
        let mut compiler = boon::Compiler::new();
        compiler.set_default_draft(boon::Draft::V2020_12);
        compiler.enable_format_assertions();
        for format in super::integers::formats() {
            compiler.register_format(format);
        }
        let mut schemas = boon::Schemas::new();
        compiler
            .add_resource(LOCATION, schema.clone())
            .map_err(|e| e.to_string())?;
        let index = compiler
            .compile(LOCATION, &mut schemas)
            .map_err(|e| format!("{e:#}"))?;
        let quick = Quick::build(schema, LOCATION, &mut compiler, &mut schemas);
        Ok(Validator {
            schemas,
            index,
            quick,
        })
    }

    /// The validator of `schema`, compiled once per distinct schema and kept by its text (at
    /// most 256): an elicitation asks with the same few schemas over and over, and compiling
    /// one cost more than the rest of a round trip.
    pub(crate) fn cached(schema: &Value) -> Result<Arc<Validator>, String> {
        static CACHE: LazyLock<Mutex<HashMap<String, Arc<Validator>>>> =
            LazyLock::new(Mutex::default);
        let text = schema.to_string();
        if let Some(validator) = lock(&CACHE).get(&text) {
            return Ok(validator.clone());
        }
        let validator = Arc::new(Validator::compile(schema)?);
        let mut cache = lock(&CACHE);
        if cache.len() >= 256 {
            cache.clear();
        }
        cache.insert(text, validator.clone());
        Ok(validator)
    }

    /// `Ok` when `instance` is valid; otherwise every rule it breaks.
    pub(crate) fn check(&self, instance: &Value) -> Result<(), ValidationError> {
        if let Some(quick) = &self.quick
            && quick.check(instance, &self.schemas) == Some(true)
        {
            return Ok(());
        }
        match self.schemas.validate(instance, self.index) {
            Ok(()) => Ok(()),
            Err(error) => {
                let mut violations = Vec::new();
                describe(&error, instance, &mut violations);
                drop_repeated_ranges(&mut violations);
                if violations.is_empty() {
                    violations.push(Violation {
                        pointer: String::new(),
                        path: String::new(),
                        message: error.to_string(),
                    });
                }
                Err(ValidationError { violations })
            }
        }
    }
}

/// Adds the violations `error` describes (a tree: groups of causes, down to broken rules).
fn describe(error: &boon::ValidationError<'_, '_>, instance: &Value, out: &mut Vec<Violation>) {
    let path = path_of(&error.instance_location);
    let pointer = error.instance_location.to_string();
    let shown = || short(value_at(instance, &error.instance_location).unwrap_or(&Value::Null));
    let message = match &error.kind {
        ErrorKind::Group
        | ErrorKind::Schema { .. }
        | ErrorKind::Reference { .. }
        | ErrorKind::AllOf => {
            for cause in &error.causes {
                describe(cause, instance, out);
            }
            return;
        }
        ErrorKind::AnyOf | ErrorKind::OneOf(None) => {
            if let Some(allowed) = allowed_constants(&error.causes) {
                format!("{} is not one of {allowed}", shown())
            } else {
                // `Option<T>` is "T or null": a value that is not null broke T's rules.
                let branches: Vec<&boon::ValidationError<'_, '_>> = error
                    .causes
                    .iter()
                    .filter(|c| !wants_only_null(c))
                    .collect();
                if let [only] = branches.as_slice() {
                    return describe(only, instance, out);
                }
                format!("{} matches none of the forms this value may take", shown())
            }
        }
        ErrorKind::Required { want } => {
            for name in want {
                out.push(Violation {
                    pointer: format!("{pointer}/{}", escape(name)),
                    path: join(&path, name),
                    message: "required argument is missing".to_owned(),
                });
            }
            return;
        }
        ErrorKind::AdditionalProperties { got } => {
            for name in got {
                out.push(Violation {
                    pointer: format!("{pointer}/{}", escape(name)),
                    path: join(&path, name),
                    message: "unknown argument (not in the input schema)".to_owned(),
                });
            }
            return;
        }
        ErrorKind::Type { want, .. } => {
            let want: Vec<String> = want.iter().map(|t| t.to_string()).collect();
            format!("{} is not of type {}", shown(), want.join(" or "))
        }
        ErrorKind::Format { want, err, .. } if super::integers::range(want).is_some() => {
            format!("{} is out of the range of {want}, {err}", shown())
        }
        ErrorKind::Format { want, .. } => format!("{} is not a valid {want}", shown()),
        ErrorKind::MinLength { want, .. } => {
            format!("{} is shorter than {want} characters", shown())
        }
        ErrorKind::MaxLength { want, .. } => {
            format!("{} is longer than {want} characters", shown())
        }
        ErrorKind::Enum { want } => format!(
            "{} is not one of {}",
            shown(),
            Value::Array((*want).clone())
        ),
        ErrorKind::Const { want } => format!("{} is not {want}", shown()),
        ErrorKind::Minimum { want, .. } => {
            format!("{} is less than the minimum of {want}", shown())
        }
        ErrorKind::Maximum { want, .. } => {
            format!("{} is greater than the maximum of {want}", shown())
        }
        ErrorKind::ExclusiveMinimum { want, .. } => {
            format!("{} must be greater than {want}", shown())
        }
        ErrorKind::ExclusiveMaximum { want, .. } => {
            format!("{} must be less than {want}", shown())
        }
        ErrorKind::MultipleOf { want, .. } => {
            format!("{} is not a multiple of {want}", shown())
        }
        ErrorKind::Pattern { want, .. } => {
            format!("{} does not match the pattern {want}", shown())
        }
        ErrorKind::MinItems { got, want } => {
            format!("has {got} items, fewer than the {want} required")
        }
        ErrorKind::MaxItems { got, want } => {
            format!("has {got} items, more than the {want} allowed")
        }
        ErrorKind::UniqueItems { got: [a, b] } => {
            format!("items {a} and {b} are equal; items must be unique")
        }
        other => {
            let mut text = other.to_string();
            if !error.causes.is_empty() {
                let mut inner = Vec::new();
                for cause in &error.causes {
                    describe(cause, instance, &mut inner);
                }
                let inner: Vec<String> = inner.iter().map(Violation::to_string).collect();
                let _ = write!(text, " ({})", inner.join("; "));
            }
            text
        }
    };
    out.push(Violation {
        pointer,
        path,
        message,
    });
}

/// Drops the violation of an integer format's range where `minimum` or `maximum` already
/// refused the same value (a derived schema has both, and one line per broken rule is enough).
fn drop_repeated_ranges(violations: &mut Vec<Violation>) {
    let bounded: Vec<String> = violations
        .iter()
        .filter(|v| {
            v.message.contains(" is less than the minimum of ")
                || v.message.contains(" is greater than the maximum of ")
        })
        .map(|v| v.pointer.clone())
        .collect();
    violations.retain(|v| {
        !(v.message.contains(" is out of the range of ") && bounded.contains(&v.pointer))
    });
}

/// When every branch of an `anyOf`/`oneOf` failed only for not being one constant (how
/// schemars writes an enum with documented variants), the constants as a JSON array.
fn allowed_constants(branches: &[boon::ValidationError<'_, '_>]) -> Option<String> {
    let mut values = Vec::new();
    for branch in branches {
        match leaf(branch)? {
            ErrorKind::Const { want } => values.push((*want).clone()),
            ErrorKind::Enum { want } => values.extend(want.iter().cloned()),
            _ => return None,
        }
    }
    (!values.is_empty()).then(|| Value::Array(values).to_string())
}

/// Whether a branch failed only because the value is not `null`.
fn wants_only_null(branch: &boon::ValidationError<'_, '_>) -> bool {
    matches!(leaf(branch), Some(ErrorKind::Type { want, .. })
        if want.iter().map(|t| t.to_string()).eq(["null".to_owned()]))
}

/// The one broken rule under a chain of references, if the error is that simple.
fn leaf<'e, 's, 'v>(error: &'e boon::ValidationError<'s, 'v>) -> Option<&'e ErrorKind<'s, 'v>> {
    match (&error.kind, error.causes.as_slice()) {
        (ErrorKind::Reference { .. } | ErrorKind::Group | ErrorKind::Schema { .. }, [only]) => {
            leaf(only)
        }
        (kind, []) => Some(kind),
        _ => None,
    }
}

/// The value at a location of the instance.
fn value_at<'a>(instance: &'a Value, location: &InstanceLocation<'_>) -> Option<&'a Value> {
    location
        .tokens
        .iter()
        .try_fold(instance, |v, token| match token {
            InstanceToken::Prop(p) => v.get(p.as_ref()),
            InstanceToken::Item(i) => v.get(i),
        })
}

/// A location as a path: `items[0].name`.
fn path_of(location: &InstanceLocation<'_>) -> String {
    let mut out = String::new();
    for token in &location.tokens {
        match token {
            InstanceToken::Item(i) => {
                let _ = write!(out, "[{i}]");
            }
            InstanceToken::Prop(p) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(p);
            }
        }
    }
    out
}

/// A property name as a JSON Pointer token (RFC 6901: `~` as `~0`, `/` as `~1`).
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// A value as JSON, cut short when long.
pub(crate) fn short(v: &Value) -> String {
    short_text(&v.to_string())
}

/// A text a client sent, cut short when long, to quote in a message.
pub(crate) fn short_text(s: &str) -> String {
    if s.chars().count() > 80 {
        let cut: String = s.chars().take(77).collect();
        format!("{cut}...")
    } else {
        s.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(schema: Value, instance: Value) -> String {
        Validator::compile(&schema)
            .unwrap()
            .check(&instance)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn each_broken_rule_names_its_field() {
        let schema = json!({
            "type": "object",
            "properties": {
                "email": {"type": "string", "format": "email"},
                "name": {"type": "string", "minLength": 2},
                "role": {"$ref": "#/$defs/Role"},
                "plan": {"oneOf": [{"const": "free", "description": "Free"}, {"const": "pro", "description": "Pro"}]},
                "seats": {"type": ["integer", "null"], "maximum": 5},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["email", "count"],
            "additionalProperties": false,
            "$defs": {"Role": {"type": "string", "enum": ["user", "admin"]}}
        });
        let text = errors(
            schema,
            json!({"email": "x", "name": "B", "role": "gold", "plan": "gold", "seats": 9, "tags": ["a", 1], "extra": true}),
        );
        for line in [
            r#"email: "x" is not a valid email"#,
            r#"name: "B" is shorter than 2 characters"#,
            r#"role: "gold" is not one of ["user","admin"]"#,
            r#"plan: "gold" is not one of ["free","pro"]"#,
            "seats: 9 is greater than the maximum of 5",
            "tags[1]: 1 is not of type string",
            "count: required argument is missing",
            "extra: unknown argument (not in the input schema)",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "{line:?} missing from:\n{text}"
            );
        }
    }

    #[test]
    fn each_violation_carries_the_pointer_of_its_field() {
        let schema = json!({
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string", "minLength": 1}},
                    "required": ["name"]
                }},
                "a/b~c": {"type": "integer"}
            },
            "required": ["id"],
            "additionalProperties": false
        });
        let error = Validator::compile(&schema)
            .unwrap()
            .check(&json!({"items": [{"name": ""}, {}], "a/b~c": "x", "extra": 1}))
            .unwrap_err();
        let mut found: Vec<(&str, &str, &str)> = error
            .violations()
            .iter()
            .map(|v| (v.pointer(), v.path(), v.message()))
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                ("/a~1b~0c", "a/b~c", r#""x" is not of type integer"#),
                (
                    "/extra",
                    "extra",
                    "unknown argument (not in the input schema)"
                ),
                ("/id", "id", "required argument is missing"),
                (
                    "/items/0/name",
                    "items[0].name",
                    r#""" is shorter than 1 characters"#
                ),
                (
                    "/items/1/name",
                    "items[1].name",
                    "required argument is missing"
                ),
            ]
        );
        let whole = Validator::compile(&json!({"type": "object"}))
            .unwrap()
            .check(&json!(1))
            .unwrap_err();
        assert_eq!(whole.violations()[0].pointer(), "");
        assert_eq!(whole.to_string(), "arguments: 1 is not of type object");
    }

    #[test]
    fn an_optional_value_reports_the_rules_of_its_type() {
        let schema = json!({
            "type": "object",
            "properties": {"mode": {"anyOf": [{"$ref": "#/$defs/M"}, {"type": "null"}]}},
            "$defs": {"M": {"type": "string", "enum": ["a", "b"]}}
        });
        assert_eq!(
            errors(schema, json!({"mode": "c"})),
            r#"mode: "c" is not one of ["a","b"]"#
        );
    }

    #[test]
    fn schemars_integer_formats_assert_their_range_exactly() {
        let v = Validator::compile(&json!({"type": "integer", "format": "int64"})).unwrap();
        assert!(v.check(&json!(i64::MAX)).is_ok());
        // 2^63 and i64::MAX are one float: `maximum` alone would let it through.
        assert_eq!(
            v.check(&json!(9_223_372_036_854_775_808_u64))
                .unwrap_err()
                .to_string(),
            "arguments: 9223372036854775808 is out of the range of int64, \
             from -9223372036854775808 to 9223372036854775807"
        );
        let v = Validator::compile(&json!({"type": "integer", "format": "uint8", "maximum": 255}))
            .unwrap();
        assert_eq!(
            v.check(&json!(300)).unwrap_err().to_string(),
            "arguments: 300 is greater than the maximum of 255",
            "one line per value, the bound's"
        );
        let v = Validator::compile(&json!({"type": "number", "format": "double"})).unwrap();
        assert!(
            v.check(&json!(1e300)).is_ok(),
            "a float format asserts nothing"
        );
    }

    #[test]
    fn an_invalid_schema_is_refused_when_compiled() {
        assert!(Validator::compile(&json!({"type": "nonsense"})).is_err());
        assert!(Validator::compile(&json!({"pattern": "("})).is_err());
    }
}
