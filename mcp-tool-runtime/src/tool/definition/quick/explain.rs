//! Why a value breaks a schema's rules, as the full validator (boon) tells it: the same
//! broken rules at the same places, grouped the same way (one group per part with more than
//! one, one per failed `anyOf` or `oneOf`), in the same order (`type`, `const` and `enum`
//! first and alone, then the format, `$ref`, the rules of the value's kind, and the
//! applicators). The validator words a [`Failure`] the same way whichever made it.

use serde_json::{Map, Number, Value};

use super::{
    ARRAY, BOOLEAN, Bound, INTEGER, MAX_DEPTH, NULL, NUMBER, OBJECT, Part, Quick, Rules, STRING,
    TooDeep, Walk, duplicate, equal, integers, of_type,
};

/// A broken rule at a place in the value, or a group of them (`causes`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Failure {
    /// Where in the value, from its root.
    pub(crate) at: Vec<Token>,
    pub(crate) kind: Kind,
    pub(crate) causes: Vec<Failure>,
}

/// A step into a value: a property or an item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    Prop(String),
    Item(usize),
}

/// What is broken.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    /// Only its causes: several rules broken in one part, a `$ref`, an `allOf`.
    Group,
    /// No branch of an `anyOf` (or a `oneOf`) matched: each branch's failure is a cause.
    AnyOf,
    /// Required properties missing, in the schema's order.
    Required(Vec<String>),
    /// Properties `additionalProperties: false` refuses, in the value's order.
    Additional(Vec<String>),
    /// The types the value may have.
    Type(Vec<&'static str>),
    /// A format, and for an integer format the range it holds (`from 0 to 255`).
    Format {
        name: String,
        range: Option<String>,
    },
    MinLength(usize),
    MaxLength(usize),
    Enum(Vec<Value>),
    Const(Value),
    /// The bounds, as the schema writes them.
    Minimum(String),
    Maximum(String),
    ExclusiveMinimum(String),
    ExclusiveMaximum(String),
    MultipleOf(String),
    Pattern(String),
    MinItems {
        got: usize,
        want: usize,
    },
    MaxItems {
        got: usize,
        want: usize,
    },
    /// The indexes of two equal items.
    UniqueItems(usize, usize),
    /// Any other rule, worded as the full validator words it.
    Other(String),
}

impl Quick {
    /// Why `instance` breaks the rules (`Ok(None)`: it does not); `Ok(None)` too when a part
    /// is the full validator's ([`Quick::complete`] is false), which must then say.
    pub(crate) fn explain(&self, instance: &Value) -> Result<Option<Failure>, TooDeep> {
        if !self.complete {
            return Ok(None);
        }
        Explain {
            parts: &self.parts,
            at: Vec::new(),
        }
        .part(0, instance, 0)
    }
}

struct Explain<'a> {
    parts: &'a [Part],
    at: Vec<Token>,
}

impl Explain<'_> {
    fn fail(&self, kind: Kind) -> Failure {
        Failure {
            at: self.at.clone(),
            kind,
            causes: Vec::new(),
        }
    }

    /// The verdicts alone (for `not`, `if`, and `oneOf` after its match).
    fn walk(&self) -> Walk<'_> {
        Walk {
            parts: self.parts,
            // A complete schema has no part elsewhere.
            elsewhere: &|_, _| true,
        }
    }

    fn valid(&self, index: usize, value: &Value, depth: u32) -> Result<bool, TooDeep> {
        self.walk().valid(index, value, depth)
    }

    fn part(
        &mut self,
        index: usize,
        value: &Value,
        depth: u32,
    ) -> Result<Option<Failure>, TooDeep> {
        if depth >= MAX_DEPTH {
            return Err(TooDeep);
        }
        match &self.parts[index] {
            Part::Always(true) | Part::Elsewhere(_) => Ok(None),
            Part::Always(false) => Ok(Some(self.fail(Kind::Other("false schema".to_owned())))),
            Part::Rules(rules) => self.rules(rules, value, depth + 1),
        }
    }

    /// A property or an item, at its place.
    fn inner(
        &mut self,
        token: Token,
        index: usize,
        value: &Value,
        depth: u32,
    ) -> Result<Option<Failure>, TooDeep> {
        self.at.push(token);
        let failure = self.part(index, value, depth);
        self.at.pop();
        failure
    }

    fn rules(
        &mut self,
        rules: &Rules,
        value: &Value,
        depth: u32,
    ) -> Result<Option<Failure>, TooDeep> {
        if rules.types != 0 && !of_type(value, rules.types) {
            return Ok(Some(self.fail(Kind::Type(type_names(rules.types)))));
        }
        if let Some(constant) = &rules.constant
            && !equal(value, constant)
        {
            return Ok(Some(self.fail(Kind::Const(constant.clone()))));
        }
        if let Some(values) = &rules.one_of_values
            && !values.iter().any(|v| equal(value, v))
        {
            return Ok(Some(self.fail(Kind::Enum(values.clone()))));
        }
        let mut errors = Vec::new();
        if let Some(format) = self.format(rules, value) {
            errors.push(format);
        }
        if let Some(target) = rules.reference {
            errors.extend(self.part(target, value, depth)?);
        }
        match value {
            Value::Object(map) => self.object(rules, map, depth, &mut errors)?,
            Value::Array(items) => self.array(rules, items, depth, &mut errors)?,
            Value::String(s) => self.string(rules, s, &mut errors),
            Value::Number(n) => self.number(rules, n, &mut errors),
            Value::Null | Value::Bool(_) => {}
        }
        self.applicators(rules, value, depth, &mut errors)?;
        Ok(match errors.len() {
            0 => None,
            1 => errors.pop(),
            _ => Some(self.group(Kind::Group, errors)),
        })
    }

    fn group(&self, kind: Kind, causes: Vec<Failure>) -> Failure {
        Failure {
            causes,
            ..self.fail(kind)
        }
    }

    /// Several failures as one group of `kind`; one as itself.
    fn add(&self, mut causes: Vec<Failure>, kind: Kind, errors: &mut Vec<Failure>) {
        if causes.len() == 1 {
            errors.append(&mut causes);
        } else {
            errors.push(self.group(kind, causes));
        }
    }

    fn format(&self, rules: &Rules, value: &Value) -> Option<Failure> {
        match value {
            Value::String(s) => {
                let format = rules.format?;
                (!format.valid(s)).then(|| {
                    self.fail(Kind::Format {
                        name: format.name().to_owned(),
                        range: None,
                    })
                })
            }
            Value::Number(n) => {
                let range = rules.integer_range?;
                (!integers::within(n, range)).then(|| {
                    self.fail(Kind::Format {
                        name: rules.integer_format.clone().unwrap_or_default(),
                        range: Some(integers::range_text(range)),
                    })
                })
            }
            _ => None,
        }
    }

    fn object(
        &mut self,
        rules: &Rules,
        map: &Map<String, Value>,
        depth: u32,
        errors: &mut Vec<Failure>,
    ) -> Result<(), TooDeep> {
        if let Some(want) = rules.min_properties
            && map.len() < want
        {
            errors.push(self.fail(Kind::Other(format!(
                "minimum {want} properties required, but got {} properties",
                map.len()
            ))));
        }
        if let Some(want) = rules.max_properties
            && map.len() > want
        {
            errors.push(self.fail(Kind::Other(format!(
                "maximum {want} properties required, but got {} properties",
                map.len()
            ))));
        }
        let missing: Vec<String> = rules
            .required
            .iter()
            .filter(|name| !map.contains_key(name.as_str()))
            .cloned()
            .collect();
        if !missing.is_empty() {
            errors.push(self.fail(Kind::Required(missing)));
        }
        let mut additional = Vec::new();
        for (name, value) in map {
            let part = match rules
                .properties
                .binary_search_by(|(p, _)| p.as_str().cmp(name))
            {
                Ok(at) => rules.properties[at].1,
                Err(_) => match rules.additional_properties {
                    // `additionalProperties: false` names the properties it refuses.
                    Some(part) if matches!(self.parts[part], Part::Always(false)) => {
                        additional.push(name.clone());
                        continue;
                    }
                    Some(part) => part,
                    None => continue,
                },
            };
            errors.extend(self.inner(Token::Prop(name.clone()), part, value, depth)?);
        }
        if !additional.is_empty() {
            errors.push(self.fail(Kind::Additional(additional)));
        }
        Ok(())
    }

    fn array(
        &mut self,
        rules: &Rules,
        items: &[Value],
        depth: u32,
        errors: &mut Vec<Failure>,
    ) -> Result<(), TooDeep> {
        let got = items.len();
        if let Some(want) = rules.min_items
            && got < want
        {
            errors.push(self.fail(Kind::MinItems { got, want }));
        }
        if let Some(want) = rules.max_items
            && got > want
        {
            errors.push(self.fail(Kind::MaxItems { got, want }));
        }
        if rules.unique_items
            && let Some((a, b)) = duplicate(items)
        {
            errors.push(self.fail(Kind::UniqueItems(a, b)));
        }
        for (i, (&part, item)) in rules.prefix_items.iter().zip(items).enumerate() {
            errors.extend(self.inner(Token::Item(i), part, item, depth)?);
        }
        if let Some(part) = rules.items {
            let after = rules.prefix_items.len();
            for (i, item) in items.iter().enumerate().skip(after) {
                errors.extend(self.inner(Token::Item(i), part, item, depth)?);
            }
        }
        Ok(())
    }

    fn string(&self, rules: &Rules, s: &str, errors: &mut Vec<Failure>) {
        if rules.min_length.is_some() || rules.max_length.is_some() {
            let len = s.chars().count();
            if let Some(want) = rules.min_length
                && len < want
            {
                errors.push(self.fail(Kind::MinLength(want)));
            }
            if let Some(want) = rules.max_length
                && len > want
            {
                errors.push(self.fail(Kind::MaxLength(want)));
            }
        }
        if let Some(pattern) = &rules.pattern
            && !pattern.is_match(s)
        {
            errors.push(self.fail(Kind::Pattern(pattern.source().to_owned())));
        }
    }

    fn number(&self, rules: &Rules, n: &Number, errors: &mut Vec<Failure>) {
        let Some(f) = n.as_f64() else {
            return;
        };
        let checks: [NumberCheck<'_>; 5] = [
            (&rules.minimum, |f, b| f < b, Kind::Minimum),
            (&rules.maximum, |f, b| f > b, Kind::Maximum),
            (
                &rules.exclusive_minimum,
                |f, b| f <= b,
                Kind::ExclusiveMinimum,
            ),
            (
                &rules.exclusive_maximum,
                |f, b| f >= b,
                Kind::ExclusiveMaximum,
            ),
            (
                &rules.multiple_of,
                |f, b| (f / b).fract() != 0.0,
                Kind::MultipleOf,
            ),
        ];
        for (bound, broken, kind) in checks {
            if let Some(bound) = bound
                && broken(f, bound.at)
            {
                errors.push(self.fail(kind(bound.shown.to_string())));
            }
        }
    }

    /// `not`, `allOf`, `anyOf`, `oneOf`, `if`/`then`/`else`.
    fn applicators(
        &mut self,
        rules: &Rules,
        value: &Value,
        depth: u32,
        errors: &mut Vec<Failure>,
    ) -> Result<(), TooDeep> {
        if let Some(not) = rules.not
            && self.valid(not, value, depth)?
        {
            errors.push(self.fail(Kind::Other("not failed".to_owned())));
        }
        let mut failed = Vec::new();
        for &part in &rules.all_of {
            failed.extend(self.part(part, value, depth)?);
        }
        if !failed.is_empty() {
            self.add(failed, Kind::Group, errors);
        }
        if !rules.any_of.is_empty() {
            let mut failed = Vec::new();
            for &part in &rules.any_of {
                match self.part(part, value, depth)? {
                    Some(failure) => failed.push(failure),
                    None => {
                        failed.clear();
                        break;
                    }
                }
            }
            if !failed.is_empty() {
                self.add(failed, Kind::AnyOf, errors);
            }
        }
        if !rules.one_of.is_empty() {
            let mut matched = None;
            let mut failed = Vec::new();
            for (i, &part) in rules.one_of.iter().enumerate() {
                match matched {
                    None => match self.part(part, value, depth)? {
                        Some(failure) => failed.push(failure),
                        None => matched = Some(i),
                    },
                    Some(first) => {
                        if self.valid(part, value, depth)? {
                            errors.push(self.fail(Kind::Other(format!(
                                "oneOf failed, subschemas {first}, {i} matched"
                            ))));
                            break;
                        }
                    }
                }
            }
            if matched.is_none() {
                self.add(failed, Kind::AnyOf, errors);
            }
        }
        if let Some(condition) = rules.condition
            && let Some(branch) = self.walk().branch(condition, value, depth)?
        {
            errors.extend(self.part(branch, value, depth)?);
        }
        Ok(())
    }
}

/// A number keyword: its bound, when the value breaks it, and how it is named.
type NumberCheck<'a> = (&'a Option<Bound>, fn(f64, f64) -> bool, fn(String) -> Kind);

/// The names of the types in `types`, in the full validator's order.
fn type_names(types: u8) -> Vec<&'static str> {
    [
        (NULL, "null"),
        (BOOLEAN, "boolean"),
        (NUMBER, "number"),
        (INTEGER, "integer"),
        (STRING, "string"),
        (ARRAY, "array"),
        (OBJECT, "object"),
    ]
    .into_iter()
    .filter(|(bit, _)| types & bit != 0)
    .map(|(_, name)| name)
    .collect()
}
