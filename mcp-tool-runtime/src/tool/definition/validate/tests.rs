//! The wording of validation errors, and the rules' agreement with the full validator.
use super::*;
use serde_json::json;

/// Schemas that are not valid JSON Schema, each for another reason the rules see.
pub(super) fn invalid_schemas() -> Vec<Value> {
    vec![
        json!({"type": "nonsense"}),
        json!({"required": "a"}),
        json!({"anyOf": []}),
        json!({"multipleOf": 0}),
        json!({"minimum": "1"}),
        json!({"$ref": "#/$defs/missing"}),
        json!({"not": 1}),
        json!({"title": 5}),
        json!({"examples": {}}),
        json!({"deprecated": "yes"}),
        json!({"type": []}),
        json!({"type": ["string", "string"]}),
        json!({"required": ["a", "a"]}),
        json!({"then": 1}),
        json!({"$defs": {"Unused": {"minimum": "a"}}}),
        json!({"$defs": {"a b": {}}, "$ref": "#/$defs/a b"}),
        json!({"$defs": {"é": {}}, "$ref": "#/$defs/é"}),
        json!({"$ref": "#nowhere"}),
        json!({"$defs": {"A": {"$anchor": "a"}, "B": {"$anchor": "a"}}}),
        json!({"$defs": {"A": {"$anchor": "1a"}}}),
    ]
}

fn errors(schema: Value, instance: Value) -> String {
    Validator::compile(&schema)
        .unwrap()
        .check(&instance)
        .unwrap_err()
        .to_string()
}

/// Asserts that `text` has `line` as one of its lines.
fn has_line(text: &str, line: &str) {
    assert!(
        text.lines().any(|l| l == line),
        "{line:?} missing from:\n{text}"
    );
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
        has_line(&text, line);
    }
}

#[test]
fn patterns_formats_sets_and_tuples_are_checked_by_the_rules_and_worded() {
    let schema = json!({
        "type": "object",
        "properties": {
            "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "id": {"type": "string", "format": "uuid"},
            "at": {"type": "string", "format": "date-time"},
            "site": {"type": "string", "format": "uri"},
            "tags": {"type": "array", "uniqueItems": true},
            "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": {"type": "boolean"}}
        }
    });
    let validator = Validator::compile(&schema).unwrap();
    assert!(
        validator
            .check(
                &json!({"code": "ABC", "id": "2eb8aa08-aa98-11ea-b4aa-73b441d16380",
                "at": "2026-12-07T10:00:00Z", "site": "https://example.com/a?b#c",
                "tags": [1, "1", [1]], "pair": [1, "a", true, false]})
            )
            .is_ok()
    );
    let text = errors(
        schema,
        json!({"code": "abc", "id": "2eb8aa08", "at": "2026-02-30T10:00:00Z",
            "site": "/relative", "tags": [1, 2, 1.0], "pair": ["a", "b", true, 3]}),
    );
    for line in [
        r#"code: "abc" does not match the pattern ^[A-Z]{3}$"#,
        r#"id: "2eb8aa08" is not a valid uuid"#,
        r#"at: "2026-02-30T10:00:00Z" is not a valid date-time"#,
        r#"site: "/relative" is not a valid uri"#,
        "tags: items 0 and 2 are equal; items must be unique",
        r#"pair[0]: "a" is not of type integer"#,
        // The item's own place, past the prefix (boon counts from the prefix's end).
        "pair[3]: 3 is not of type boolean",
    ] {
        has_line(&text, line);
    }
}

#[test]
fn a_reference_to_an_anchor_finds_its_part() {
    let validator = Validator::compile(&json!({
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object",
            "properties": {"city": {"type": "string"}}}},
        "properties": {"home": {"$ref": "#addressDef"}, "work": {"$ref": "#/$defs/address"}}
    }))
    .unwrap();
    assert!(
        validator
            .check(&json!({"home": {"city": "Kraków"}}))
            .is_ok()
    );
    assert_eq!(
        validator
            .check(&json!({"home": {"city": 1}, "work": {"city": 2}}))
            .unwrap_err()
            .to_string(),
        "home.city: 1 is not of type string\nwork.city: 2 is not of type string"
    );
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
    let v =
        Validator::compile(&json!({"type": "integer", "format": "uint8", "maximum": 255})).unwrap();
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

#[test]
fn a_schema_without_rules_here_is_refused_by_the_keyword_that_has_none() {
    use crate::tool::definition::quick::{Quick, Refusal};
    let refusal = |schema: Value| Quick::build(&schema, &mut |_| None).err();
    assert_eq!(
        refusal(
            json!({"properties": {"code": {"type": "object", "propertyNames": {"maxLength": 3}}}})
        ),
        Some(Refusal::Unchecked {
            keyword: "`propertyNames`".to_owned(),
            at: "/properties/code".to_owned()
        })
    );
    assert_eq!(
        refusal(json!({"items": {"format": "iri"}})),
        Some(Refusal::Unchecked {
            keyword: "`format: iri`".to_owned(),
            at: "/items".to_owned()
        })
    );
    // A pattern the rules' regular expressions cannot run (look-around).
    assert!(matches!(
        refusal(json!({"pattern": "^(?!x)"})),
        Some(Refusal::Unchecked { keyword, at }) if keyword.starts_with("`pattern` \"^(?!x)\" (") && at.is_empty()
    ));
    assert_eq!(
        refusal(json!({"$defs": {"A": {"$id": "urn:a"}}})),
        Some(Refusal::Unchecked {
            keyword: "`$id`".to_owned(),
            at: "/$defs/A/$id".to_owned()
        })
    );
    assert_eq!(
        refusal(json!({"properties": {"a": {"minimum": "1"}}})),
        Some(Refusal::Invalid {
            keyword: "minimum".to_owned(),
            at: "/properties/a".to_owned()
        })
    );
    for invalid in invalid_schemas() {
        assert!(
            matches!(refusal(invalid.clone()), Some(Refusal::Invalid { .. })),
            "{invalid}"
        );
    }
    assert_eq!(
        refusal(
            json!({"$defs": {"A": {"allOf": [{"$ref": "#/$defs/B"}]}, "B": {"not": {"$ref": "#/$defs/A"}}}, "properties": {"a": {"$ref": "#/$defs/A"}}})
        ),
        Some(Refusal::Loop {
            at: "/$defs/A".to_owned()
        })
    );
    // Derived schemas' keywords, annotations and formats (schemars' `ip` is no format JSON
    // Schema defines: an annotation) all have rules.
    assert_eq!(
        refusal(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "T",
            "type": "object",
            "properties": {
                "n": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255},
                "f": {"type": "number", "format": "double", "description": "x"},
                "e": {"type": "string", "format": "email", "default": "a@b.c"},
                "id": {"type": "string", "format": "uuid"},
                "at": {"type": "string", "format": "date-time"},
                "ip": {"type": "string", "format": "ip"},
                "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
                "set": {"type": "array", "uniqueItems": true, "items": {"type": "string"}},
                "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2},
                "o": {"anyOf": [{"$ref": "#/$defs/O"}, {"type": "null"}]},
                "t": {"type": "array", "items": {"$ref": "#"}}
            },
            "$defs": {"O": {"oneOf": [{"const": "a"}, {"const": "b"}]}},
            "required": ["n"],
            "additionalProperties": false
        })),
        None
    );
}

#[cfg(not(feature = "full-schema"))]
#[test]
fn without_the_full_validator_a_schema_it_would_check_is_refused_naming_the_feature() {
    let error = Validator::compile(&json!({
        "properties": {"code": {"type": "string", "format": "idn-hostname"}}
    }))
    .err()
    .unwrap();
    assert_eq!(
        error,
        "`format: idn-hostname` at #/properties/code is checked only by the full JSON Schema \
         validator (mcp-tool's feature `full-schema`)"
    );
}

#[cfg(not(feature = "full-schema"))]
#[test]
fn without_the_full_validator_a_value_too_deep_to_check_is_refused() {
    let validator = Validator::compile(&json!({"type": "array", "items": {"$ref": "#"}})).unwrap();
    let mut value = json!([]);
    for _ in 0..100 {
        value = json!([value]);
    }
    assert!(validator.check(&value).is_ok());
    for _ in 0..100 {
        value = Value::Array(vec![value]);
    }
    assert_eq!(
        validator.check(&value).unwrap_err().to_string(),
        "arguments: the value is nested too deeply to check (more than 256 schema parts on one \
         path)"
    );
    value[0] = json!(1);
    assert!(validator.check(&value).is_err());
}

#[cfg(not(feature = "full-schema"))]
#[test]
fn without_the_full_validator_another_servers_tool_is_checked_as_far_as_the_rules_go() {
    let schema = json!({
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "list": {"type": "array", "contains": {"const": 1}, "maxItems": 2}
        },
        "required": ["n"]
    });
    assert!(Validator::compile(&schema).is_err());
    let validator = Validator::compile_forwarded(&schema).unwrap();
    // The part with `contains` is the owner's to check; the rest is checked and worded here.
    assert!(validator.check(&json!({"n": 1, "list": [2, 3, 4]})).is_ok());
    assert_eq!(
        validator
            .check(&json!({"list": [1, 2, 3]}))
            .unwrap_err()
            .to_string(),
        "n: required argument is missing"
    );
    assert_eq!(
        validator.check(&json!({"n": "1"})).unwrap_err().to_string(),
        "n: \"1\" is not of type integer"
    );
    // A schema the rules cannot take at all checks nothing here.
    let whole =
        Validator::compile_forwarded(&json!({"type": "object", "unevaluatedProperties": false}))
            .unwrap();
    assert!(whole.check(&json!({"anything": 1})).is_ok());
    // One that is no schema is refused all the same.
    assert!(Validator::compile_forwarded(&json!({"type": "nonsense"})).is_err());
}
