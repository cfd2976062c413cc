//! Validation against JSON Schema 2020-12 (with format assertions), and the wording of its
//! errors: one line per broken rule, each naming the field's path and the rule, so a model can
//! correct its call.
//!
//! A schema is compiled once, when a server starts. Its [`Quick`] rules check the keywords
//! derived schemas use and the common ones besides (and that their values are valid JSON
//! Schema) and word what they refuse. With the feature `full-schema`, the full validator
//! (`boon`) checks the parts with other keywords (`patternProperties`, `contains`, the
//! internationalized formats, …) and the schemas the rules cannot take whole, checks such a
//! schema against JSON Schema itself, and words its errors the same way ([`full`]). Without
//! it, such a schema is refused when compiled, naming the keyword and the feature; a tool
//! another server owns is checked as far as the rules go ([`Validator::compile_forwarded`]).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, LazyLock, Mutex};

use serde_json::Value;

use crate::sync::lock;
use crate::tool::definition::quick::{Failure, Kind, Members, Quick, Token};

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
    /// Always present without the full validator, which checks a schema without rules.
    quick: Option<Quick>,
    #[cfg(feature = "full-schema")]
    full: full::Full,
}

impl Validator {
    /// Compiles `schema` (draft 2020-12 unless its `$schema` says otherwise); a schema that
    /// is not valid, or (without the full validator) has keywords not checked, is refused.
    pub(crate) fn compile(schema: &Value) -> Result<Validator, String> {
        #[cfg(feature = "full-schema")]
        let (full, quick) = full::Full::compile(schema)?;
        #[cfg(not(feature = "full-schema"))]
        let quick = Some(Quick::build(schema, &mut |_| None).map_err(|r| r.to_string())?);
        Ok(Validator {
            quick,
            #[cfg(feature = "full-schema")]
            full,
        })
    }

    /// The validator of a tool another server owns (a mounted server's, an OpenAPI
    /// operation's): as [`Validator::compile`], except that, without the full validator, what
    /// the rules cannot check is left to that server, which checks its own arguments. A part
    /// with other keywords is taken as valid here; a schema the rules cannot take at all
    /// (`$id`, `unevaluated*`, another draft) checks nothing here. A schema that is not valid
    /// JSON Schema is refused all the same.
    pub(crate) fn compile_forwarded(schema: &Value) -> Result<Validator, String> {
        #[cfg(feature = "full-schema")]
        return Validator::compile(schema);
        #[cfg(not(feature = "full-schema"))]
        {
            use crate::tool::definition::quick::Refusal;
            // Each part the full validator would check is taken as valid below: its number
            // does not matter.
            let quick = match Quick::build(schema, &mut |_| Some(0)) {
                Ok(quick) => quick,
                Err(refusal @ (Refusal::Invalid { .. } | Refusal::Loop { .. })) => {
                    return Err(refusal.to_string());
                }
                Err(Refusal::Unchecked { .. }) => {
                    Quick::build(&Value::Bool(true), &mut |_| None).map_err(|r| r.to_string())?
                }
            };
            Ok(Validator {
                quick: Some(quick.assuming_elsewhere_valid()),
            })
        }
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

    /// Whether a value's text is certainly valid and plain (`Quick::valid_text`), its
    /// members put in `members`.
    pub(crate) fn valid_text(&self, text: &str, members: &mut Members) -> bool {
        self.quick
            .as_ref()
            .is_some_and(|quick| quick.valid_text(text, members))
    }

    /// `Ok` when `instance` is valid; otherwise every rule it breaks.
    pub(crate) fn check(&self, instance: &Value) -> Result<(), ValidationError> {
        if let Some(quick) = &self.quick {
            match quick.check(instance, &|part, value| self.elsewhere(part, value)) {
                Some(true) => return Ok(()),
                Some(false) => {
                    if let Ok(Some(failure)) = quick.explain(instance) {
                        return Err(refused(&failure, instance));
                    }
                }
                None => {}
            }
        }
        self.whole(instance).map_err(|f| refused(&f, instance))
    }

    /// A part of the rules the full validator checks.
    #[cfg(feature = "full-schema")]
    fn elsewhere(&self, part: usize, value: &Value) -> bool {
        self.full.part(part, value)
    }

    /// The full validator's verdict on the whole value: for a schema without rules, one with
    /// parts elsewhere, and a walk that went too deep.
    #[cfg(feature = "full-schema")]
    fn whole(&self, instance: &Value) -> Result<(), Failure> {
        match self.full.check(instance) {
            Some(verdict) => verdict,
            None => self.own(instance),
        }
    }

    /// Without the full validator no part is elsewhere.
    #[cfg(not(feature = "full-schema"))]
    fn elsewhere(&self, _part: usize, _value: &Value) -> bool {
        true
    }

    /// Without the full validator, only a walk that went too deep gets here.
    #[cfg(not(feature = "full-schema"))]
    fn whole(&self, instance: &Value) -> Result<(), Failure> {
        self.own(instance)
    }

    /// The rules' verdict, when they cannot say: the value is too deep for them.
    fn own(&self, instance: &Value) -> Result<(), Failure> {
        match self.quick.as_ref().map(|quick| quick.explain(instance)) {
            Some(Ok(None)) => Ok(()),
            Some(Ok(Some(failure))) => Err(failure),
            _ => Err(Failure {
                at: Vec::new(),
                kind: Kind::Other(format!(
                    "the value is nested too deeply to check (more than {} schema parts on one path)",
                    crate::tool::definition::quick::MAX_DEPTH
                )),
                causes: Vec::new(),
            }),
        }
    }
}

/// The violations a failure describes, one per broken rule.
fn refused(failure: &Failure, instance: &Value) -> ValidationError {
    let mut violations = Vec::new();
    describe(failure, instance, &mut violations);
    drop_repeated_ranges(&mut violations);
    if violations.is_empty() {
        violations.push(Violation {
            pointer: String::new(),
            path: String::new(),
            message: "does not fit the schema".to_owned(),
        });
    }
    ValidationError { violations }
}

/// Adds the violations `failure` describes (a tree: groups of causes, down to broken rules).
fn describe(failure: &Failure, instance: &Value, out: &mut Vec<Violation>) {
    let path = path_of(&failure.at);
    let pointer = pointer_of(&failure.at);
    let shown = || short(value_at(instance, &failure.at).unwrap_or(&Value::Null));
    let message = match &failure.kind {
        Kind::Group => {
            for cause in &failure.causes {
                describe(cause, instance, out);
            }
            return;
        }
        Kind::AnyOf => {
            if let Some(allowed) = allowed_constants(&failure.causes) {
                format!("{} is not one of {allowed}", shown())
            } else {
                // `Option<T>` is "T or null": a value that is not null broke T's rules.
                let branches: Vec<&Failure> = failure
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
        Kind::Required(want) => {
            for name in want {
                out.push(Violation {
                    pointer: format!("{pointer}/{}", escape(name)),
                    path: join(&path, name),
                    message: "required argument is missing".to_owned(),
                });
            }
            return;
        }
        Kind::Additional(got) => {
            for name in got {
                out.push(Violation {
                    pointer: format!("{pointer}/{}", escape(name)),
                    path: join(&path, name),
                    message: "unknown argument (not in the input schema)".to_owned(),
                });
            }
            return;
        }
        Kind::Type(want) => format!("{} is not of type {}", shown(), want.join(" or ")),
        Kind::Format {
            name,
            range: Some(range),
        } => format!("{} is out of the range of {name}, {range}", shown()),
        Kind::Format { name, range: None } => format!("{} is not a valid {name}", shown()),
        Kind::MinLength(want) => format!("{} is shorter than {want} characters", shown()),
        Kind::MaxLength(want) => format!("{} is longer than {want} characters", shown()),
        Kind::Enum(want) => format!("{} is not one of {}", shown(), Value::Array(want.clone())),
        Kind::Const(want) => format!("{} is not {want}", shown()),
        Kind::Minimum(want) => format!("{} is less than the minimum of {want}", shown()),
        Kind::Maximum(want) => format!("{} is greater than the maximum of {want}", shown()),
        Kind::ExclusiveMinimum(want) => format!("{} must be greater than {want}", shown()),
        Kind::ExclusiveMaximum(want) => format!("{} must be less than {want}", shown()),
        Kind::MultipleOf(want) => format!("{} is not a multiple of {want}", shown()),
        Kind::Pattern(want) => format!("{} does not match the pattern {want}", shown()),
        Kind::MinItems { got, want } => format!("has {got} items, fewer than the {want} required"),
        Kind::MaxItems { got, want } => format!("has {got} items, more than the {want} allowed"),
        Kind::UniqueItems(a, b) => format!("items {a} and {b} are equal; items must be unique"),
        Kind::Other(text) => {
            let mut text = text.clone();
            if !failure.causes.is_empty() {
                let mut inner = Vec::new();
                for cause in &failure.causes {
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
fn allowed_constants(branches: &[Failure]) -> Option<String> {
    let mut values = Vec::new();
    for branch in branches {
        match leaf(branch)? {
            Kind::Const(want) => values.push(want.clone()),
            Kind::Enum(want) => values.extend(want.iter().cloned()),
            _ => return None,
        }
    }
    (!values.is_empty()).then(|| Value::Array(values).to_string())
}

/// Whether a branch failed only because the value is not `null`.
fn wants_only_null(branch: &Failure) -> bool {
    matches!(leaf(branch), Some(Kind::Type(want)) if want == &["null"])
}

/// The one broken rule under a chain of groups, if the failure is that simple.
fn leaf(failure: &Failure) -> Option<&Kind> {
    match (&failure.kind, failure.causes.as_slice()) {
        (Kind::Group, [only]) => leaf(only),
        (kind, []) => Some(kind),
        _ => None,
    }
}

/// The value at a place in the instance.
fn value_at<'a>(instance: &'a Value, at: &[Token]) -> Option<&'a Value> {
    at.iter().try_fold(instance, |v, token| match token {
        Token::Prop(p) => v.get(p),
        Token::Item(i) => v.get(i),
    })
}

/// A place as a path: `items[0].name`.
fn path_of(at: &[Token]) -> String {
    let mut out = String::new();
    for token in at {
        match token {
            Token::Item(i) => {
                let _ = write!(out, "[{i}]");
            }
            Token::Prop(p) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(p);
            }
        }
    }
    out
}

/// A place as a JSON Pointer: `/items/0/name`.
fn pointer_of(at: &[Token]) -> String {
    let mut out = String::new();
    for token in at {
        out.push('/');
        match token {
            Token::Item(i) => {
                let _ = write!(out, "{i}");
            }
            Token::Prop(p) => out.push_str(&escape(p)),
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

#[cfg(all(test, feature = "full-schema"))]
mod agree;
#[cfg(feature = "full-schema")]
mod full;
#[cfg(test)]
mod tests;
