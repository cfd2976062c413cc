//! The full validator (feature `full-schema`): boon, a JSON Schema validator of every draft,
//! keyword and format. It checks the parts of a schema the [`Quick`] rules leave to it
//! (`patternProperties`, `contains`, an internationalized format, …) and the schemas they cannot take whole (`$id`,
//! `unevaluated*`, other drafts), checking such a schema against JSON Schema itself when it is
//! compiled, and turns its errors into [`Failure`]s, worded as the rules' own. A schema the
//! rules take whole is not given to boon unless a value is too deep for them.

use std::error::Error;
use std::fmt::Write as _;
use std::sync::OnceLock;

use boon::{Compiler, ErrorKind, SchemaIndex, Schemas};
use serde_json::Value;

use crate::tool::definition::integers;
use crate::tool::definition::quick::{Failure, Kind, Quick, Token};

/// Where the schema sits among boon's resources.
const LOCATION: &str = "urn:mcp-tool:schema";

/// The full validator's side of a schema.
pub(super) enum Full {
    /// Compiled when the schema was: it has parts the rules leave to boon, or no rules.
    Compiled(Compiled),
    /// The rules take the schema whole (and have checked it is one), so boon is not needed
    /// to start: it compiles the schema only for a value too deep for the rules. A server
    /// whose schemas are all of this kind never runs boon's code, and does not hold it in
    /// memory.
    Lazy {
        schema: Value,
        compiled: OnceLock<Option<Compiled>>,
    },
}

/// A schema compiled by boon, and the parts of it the rules leave to boon.
pub(super) struct Compiled {
    schemas: Schemas,
    root: SchemaIndex,
    /// Boon's index of each part the rules numbered.
    parts: Vec<SchemaIndex>,
}

impl Full {
    /// Compiles `schema`: its rules, and boon's unless the rules take it whole.
    pub(super) fn compile(schema: &Value) -> Result<(Full, Option<Quick>), String> {
        if let Ok(quick) = Quick::build(schema, &mut |_| None) {
            let lazy = Full::Lazy {
                schema: schema.clone(),
                compiled: OnceLock::new(),
            };
            return Ok((lazy, Some(quick)));
        }
        let (compiled, quick) = Compiled::new(schema, true)?;
        Ok((Full::Compiled(compiled), quick))
    }

    /// Whether `value` satisfies a part the rules numbered.
    pub(super) fn part(&self, part: usize, value: &Value) -> bool {
        match self {
            Full::Compiled(compiled) => compiled.part(part, value),
            // Rules that take the schema whole number no part.
            Full::Lazy { .. } => true,
        }
    }

    /// The whole schema's verdict, and why a value breaks it; `None` when boon, asked for the
    /// first time, cannot compile a schema the rules took.
    pub(super) fn check(&self, instance: &Value) -> Option<Result<(), Failure>> {
        let compiled = match self {
            Full::Compiled(compiled) => compiled,
            Full::Lazy { schema, compiled } => compiled
                .get_or_init(|| Compiled::new(schema, false).ok().map(|(c, _)| c))
                .as_ref()?,
        };
        Some(compiled.check(instance))
    }
}

impl Compiled {
    /// boon's compile of `schema`, and (`with_rules`) the rules with the parts they leave to
    /// boon compiled at their places.
    pub(super) fn new(
        schema: &Value,
        with_rules: bool,
    ) -> Result<(Compiled, Option<Quick>), String> {
        let mut compiler = Compiler::new();
        compiler.set_default_draft(boon::Draft::V2020_12);
        compiler.enable_format_assertions();
        for format in formats() {
            compiler.register_format(format);
        }
        let mut schemas = Schemas::new();
        compiler
            .add_resource(LOCATION, schema.clone())
            .map_err(|e| e.to_string())?;
        let root = compiler
            .compile(LOCATION, &mut schemas)
            .map_err(|e| format!("{e:#}"))?;
        let mut parts = Vec::new();
        let quick = with_rules
            .then(|| {
                Quick::build(schema, &mut |pointer| {
                    let location = format!("{LOCATION}#{}", fragment(pointer));
                    let index = compiler.compile(&location, &mut schemas).ok()?;
                    parts.push(index);
                    Some(parts.len() - 1)
                })
                .ok()
            })
            .flatten();
        let compiled = Compiled {
            schemas,
            root,
            parts,
        };
        Ok((compiled, quick))
    }

    fn part(&self, part: usize, value: &Value) -> bool {
        self.schemas.validate(value, self.parts[part]).is_ok()
    }

    fn check(&self, instance: &Value) -> Result<(), Failure> {
        self.schemas
            .validate(instance, self.root)
            .map_err(|e| failure(&e))
    }
}

/// A boon error as a [`Failure`].
fn failure(error: &boon::ValidationError<'_, '_>) -> Failure {
    let at = error
        .instance_location
        .tokens
        .iter()
        .map(|token| match token {
            boon::InstanceToken::Prop(p) => Token::Prop(p.to_string()),
            boon::InstanceToken::Item(i) => Token::Item(*i),
        })
        .collect();
    let kind = match &error.kind {
        ErrorKind::Group
        | ErrorKind::Schema { .. }
        | ErrorKind::Reference { .. }
        | ErrorKind::AllOf => Kind::Group,
        ErrorKind::AnyOf | ErrorKind::OneOf(None) => Kind::AnyOf,
        ErrorKind::Required { want } => {
            Kind::Required(want.iter().map(|name| (*name).to_owned()).collect())
        }
        ErrorKind::AdditionalProperties { got } => {
            Kind::Additional(got.iter().map(ToString::to_string).collect())
        }
        ErrorKind::Type { want, .. } => Kind::Type(want.iter().map(type_name).collect()),
        ErrorKind::Format { want, err, .. } => Kind::Format {
            name: (*want).to_owned(),
            range: integers::range(want).map(|_| err.to_string()),
        },
        ErrorKind::MinLength { want, .. } => Kind::MinLength(*want),
        ErrorKind::MaxLength { want, .. } => Kind::MaxLength(*want),
        ErrorKind::Enum { want } => Kind::Enum((*want).clone()),
        ErrorKind::Const { want } => Kind::Const((*want).clone()),
        ErrorKind::Minimum { want, .. } => Kind::Minimum(want.to_string()),
        ErrorKind::Maximum { want, .. } => Kind::Maximum(want.to_string()),
        ErrorKind::ExclusiveMinimum { want, .. } => Kind::ExclusiveMinimum(want.to_string()),
        ErrorKind::ExclusiveMaximum { want, .. } => Kind::ExclusiveMaximum(want.to_string()),
        ErrorKind::MultipleOf { want, .. } => Kind::MultipleOf(want.to_string()),
        ErrorKind::Pattern { want, .. } => Kind::Pattern((*want).to_owned()),
        ErrorKind::MinItems { got, want } => Kind::MinItems {
            got: *got,
            want: *want,
        },
        ErrorKind::MaxItems { got, want } => Kind::MaxItems {
            got: *got,
            want: *want,
        },
        ErrorKind::UniqueItems { got: [a, b] } => Kind::UniqueItems(*a, *b),
        other => Kind::Other(other.to_string()),
    };
    Failure {
        at,
        kind,
        causes: error.causes.iter().map(failure).collect(),
    }
}

fn type_name(t: boon::Type) -> &'static str {
    match t {
        boon::Type::Null => "null",
        boon::Type::Boolean => "boolean",
        boon::Type::Number => "number",
        boon::Type::Integer => "integer",
        boon::Type::String => "string",
        boon::Type::Array => "array",
        boon::Type::Object => "object",
    }
}

/// The assertions of schemars' integer formats: a number outside the format's range is
/// refused, named by the format and its range; anything else is left to the other keywords.
fn formats() -> impl Iterator<Item = boon::Format> {
    macro_rules! asserted {
        ($($name:literal),*) => {[$(boon::Format {
            name: $name,
            func: |v| check_integer($name, v),
        }),*]};
    }
    asserted!(
        "int8", "int16", "int32", "int64", "int128", "int", "uint8", "uint16", "uint32", "uint64",
        "uint128", "uint"
    )
    .into_iter()
}

fn check_integer(format: &str, value: &Value) -> Result<(), Box<dyn Error>> {
    match (value, integers::range(format)) {
        (Value::Number(n), Some(range)) if !integers::within(n, range) => {
            Err(integers::range_text(range).into())
        }
        _ => Ok(()),
    }
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
