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

use boon::{ErrorKind, InstanceLocation, InstanceToken, ValidationError};
use serde_json::Value;

use super::quick::Quick;
use crate::sync::lock;

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

    /// `Ok` when `instance` is valid; otherwise every rule it breaks, one per line.
    pub(crate) fn check(&self, instance: &Value) -> Result<(), String> {
        if let Some(quick) = &self.quick
            && quick.check(instance, &self.schemas) == Some(true)
        {
            return Ok(());
        }
        match self.schemas.validate(instance, self.index) {
            Ok(()) => Ok(()),
            Err(error) => {
                let mut lines = Vec::new();
                describe(&error, instance, &mut lines);
                drop_repeated_ranges(&mut lines);
                if lines.is_empty() {
                    lines.push(format!("arguments: {error}"));
                }
                Err(lines.join("\n"))
            }
        }
    }
}

/// Adds the lines describing `error` (a tree: groups of causes, down to broken rules).
fn describe(error: &ValidationError<'_, '_>, instance: &Value, out: &mut Vec<String>) {
    let path = path_of(&error.instance_location);
    let label = || {
        if path.is_empty() {
            "arguments".to_owned()
        } else {
            path.clone()
        }
    };
    let shown = || short(value_at(instance, &error.instance_location).unwrap_or(&Value::Null));
    let line = match &error.kind {
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
                format!("{}: {} is not one of {allowed}", label(), shown())
            } else {
                // `Option<T>` is "T or null": a value that is not null broke T's rules.
                let branches: Vec<&ValidationError<'_, '_>> = error
                    .causes
                    .iter()
                    .filter(|c| !wants_only_null(c))
                    .collect();
                if let [only] = branches.as_slice() {
                    return describe(only, instance, out);
                }
                format!(
                    "{}: {} matches none of the forms this value may take",
                    label(),
                    shown()
                )
            }
        }
        ErrorKind::Required { want } => {
            for name in want {
                out.push(format!(
                    "{}: required argument is missing",
                    join(&path, name)
                ));
            }
            return;
        }
        ErrorKind::AdditionalProperties { got } => {
            for name in got {
                out.push(format!(
                    "{}: unknown argument (not in the input schema)",
                    join(&path, name)
                ));
            }
            return;
        }
        ErrorKind::Type { want, .. } => {
            let want: Vec<String> = want.iter().map(|t| t.to_string()).collect();
            format!(
                "{}: {} is not of type {}",
                label(),
                shown(),
                want.join(" or ")
            )
        }
        ErrorKind::Format { want, err, .. } if super::integers::range(want).is_some() => {
            format!(
                "{}: {} is out of the range of {want}, {err}",
                label(),
                shown()
            )
        }
        ErrorKind::Format { want, .. } => format!("{}: {} is not a valid {want}", label(), shown()),
        ErrorKind::MinLength { want, .. } => {
            format!("{}: {} is shorter than {want} characters", label(), shown())
        }
        ErrorKind::MaxLength { want, .. } => {
            format!("{}: {} is longer than {want} characters", label(), shown())
        }
        ErrorKind::Enum { want } => format!(
            "{}: {} is not one of {}",
            label(),
            shown(),
            Value::Array((*want).clone())
        ),
        ErrorKind::Const { want } => format!("{}: {} is not {want}", label(), shown()),
        ErrorKind::Minimum { want, .. } => {
            format!(
                "{}: {} is less than the minimum of {want}",
                label(),
                shown()
            )
        }
        ErrorKind::Maximum { want, .. } => {
            format!(
                "{}: {} is greater than the maximum of {want}",
                label(),
                shown()
            )
        }
        ErrorKind::ExclusiveMinimum { want, .. } => {
            format!("{}: {} must be greater than {want}", label(), shown())
        }
        ErrorKind::ExclusiveMaximum { want, .. } => {
            format!("{}: {} must be less than {want}", label(), shown())
        }
        ErrorKind::MultipleOf { want, .. } => {
            format!("{}: {} is not a multiple of {want}", label(), shown())
        }
        ErrorKind::Pattern { want, .. } => {
            format!("{}: {} does not match the pattern {want}", label(), shown())
        }
        ErrorKind::MinItems { got, want } => {
            format!(
                "{}: has {got} items, fewer than the {want} required",
                label()
            )
        }
        ErrorKind::MaxItems { got, want } => {
            format!("{}: has {got} items, more than the {want} allowed", label())
        }
        ErrorKind::UniqueItems { got: [a, b] } => {
            format!(
                "{}: items {a} and {b} are equal; items must be unique",
                label()
            )
        }
        other => {
            let mut text = format!("{}: {other}", label());
            if !error.causes.is_empty() {
                let mut inner = Vec::new();
                for cause in &error.causes {
                    describe(cause, instance, &mut inner);
                }
                let _ = write!(text, " ({})", inner.join("; "));
            }
            text
        }
    };
    out.push(line);
}

/// Drops the line of an integer format's range where `minimum` or `maximum` already refused
/// the same value (a derived schema has both, and one line per broken rule is enough).
fn drop_repeated_ranges(lines: &mut Vec<String>) {
    const RANGE: &str = " is out of the range of ";
    let bounded: Vec<String> = lines
        .iter()
        .filter_map(|l| {
            l.split_once(" is less than the minimum of ")
                .or_else(|| l.split_once(" is greater than the maximum of "))
                .map(|(head, _)| head.to_owned())
        })
        .collect();
    lines.retain(|l| {
        l.split_once(RANGE)
            .is_none_or(|(head, _)| !bounded.iter().any(|b| b == head))
    });
}

/// When every branch of an `anyOf`/`oneOf` failed only for not being one constant (how
/// schemars writes an enum with documented variants), the constants as a JSON array.
fn allowed_constants(branches: &[ValidationError<'_, '_>]) -> Option<String> {
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
fn wants_only_null(branch: &ValidationError<'_, '_>) -> bool {
    matches!(leaf(branch), Some(ErrorKind::Type { want, .. })
        if want.iter().map(|t| t.to_string()).eq(["null".to_owned()]))
}

/// The one broken rule under a chain of references, if the error is that simple.
fn leaf<'e, 's, 'v>(error: &'e ValidationError<'s, 'v>) -> Option<&'e ErrorKind<'s, 'v>> {
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

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// A value as JSON, cut short when long.
fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 80 {
        let cut: String = s.chars().take(77).collect();
        format!("{cut}...")
    } else {
        s
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
            v.check(&json!(9_223_372_036_854_775_808_u64)).unwrap_err(),
            "arguments: 9223372036854775808 is out of the range of int64, \
             from -9223372036854775808 to 9223372036854775807"
        );
        let v = Validator::compile(&json!({"type": "integer", "format": "uint8", "maximum": 255}))
            .unwrap();
        assert_eq!(
            v.check(&json!(300)).unwrap_err(),
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
