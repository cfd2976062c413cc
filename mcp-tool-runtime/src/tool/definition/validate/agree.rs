//! The rules checked against the full validator (boon), on chosen and on random values: the
//! same verdict, and the same words for every refusal.

use serde_json::{Map, Value, json};

use super::full::Full;
use super::{Validator, refused};
use crate::tool::definition::quick::Quick;

/// The rules' verdict and boon's, for each instance; and the validator's answer (the rules'
/// words where they decide) against boon's words.
fn verdicts(schema: &Value, instances: &[Value]) -> Vec<(Option<bool>, bool)> {
    let (full, quick) = Full::compile(schema).unwrap();
    let quick = quick.expect("a schema with rules");
    let validator = Validator::compile(schema).unwrap();
    instances
        .iter()
        .map(|i| {
            let boon = full
                .check(i)
                .expect("boon compiles the schema")
                .map_err(|f| refused(&f, i));
            assert_eq!(validator.check(i), boon, "{i} against {schema}");
            // Read as text, never valid where the value is not.
            for text in [i.to_string(), serde_json::to_string_pretty(i).unwrap()] {
                let valid = quick.valid_text(&text, &mut Default::default());
                assert!(!valid || boon.is_ok(), "{text} against {schema}");
            }
            (quick.check(i, &|p, v| full.part(p, v)), boon.is_ok())
        })
        .collect()
}

fn agree(schema: Value, instances: &[Value]) {
    for (instance, (quick, boon)) in instances.iter().zip(verdicts(&schema, instances)) {
        assert_eq!(quick, Some(boon), "{instance} against {schema}");
    }
}

#[test]
fn the_rules_are_boons() {
    agree(
        json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "format": "uint8", "minimum": 1, "maximum": 255},
                "x": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5},
                "s": {"type": "string", "minLength": 2, "maxLength": 3},
                "e": {"$ref": "#/$defs/E"},
                "o": {"type": ["object", "null"], "additionalProperties": {"type": "string"}},
                "a": {"type": "array", "items": {"type": "boolean"}, "minItems": 1},
                "c": {"const": [1, {"k": 2}]},
                "u": {"oneOf": [{"const": "a"}, {"const": "b"}, {"type": "integer"}]},
                "f": {"type": "number", "format": "double"}
            },
            "required": ["n"],
            "additionalProperties": false,
            "$defs": {"E": {"type": "string", "enum": ["x", "y"]}}
        }),
        &[
            json!({"n": 1}),
            json!({"n": 1.0}),
            json!({"n": 0}),
            json!({"n": 256}),
            json!({"n": 300.0}),
            json!({"n": 1.5}),
            json!({"n": "1"}),
            json!({}),
            json!({"n": 1, "z": 1}),
            json!({"n": 1, "x": 1.5}),
            json!({"n": 1, "x": 1.25}),
            json!({"n": 1, "x": 0}),
            json!({"n": 1, "s": "ab"}),
            json!({"n": 1, "s": "äöü"}),
            json!({"n": 1, "s": "äöüß"}),
            json!({"n": 1, "s": "a"}),
            json!({"n": 1, "e": "x"}),
            json!({"n": 1, "e": "z"}),
            json!({"n": 1, "o": null}),
            json!({"n": 1, "o": {"k": "v"}}),
            json!({"n": 1, "o": {"k": 1}}),
            json!({"n": 1, "a": [true, false]}),
            json!({"n": 1, "a": []}),
            json!({"n": 1, "a": [1]}),
            json!({"n": 1, "c": [1.0, {"k": 2}]}),
            json!({"n": 1, "c": [1, {"k": 3}]}),
            json!({"n": 1, "u": "a"}),
            json!({"n": 1, "u": "c"}),
            json!({"n": 1, "u": 2.0}),
            json!({"n": 1, "f": 1e300}),
            json!([1]),
        ],
    );
}

#[test]
fn what_it_does_not_check_boon_does() {
    let schema = json!({
        "type": "object",
        "properties": {
            "email": {"type": "string", "format": "email"},
            "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "tags": {"type": "array", "uniqueItems": true},
            "odd": {"not": {"multipleOf": 2}},
            "when": {"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"type": "integer"}}
        }
    });
    agree(
        schema,
        &[
            json!({"email": "a@example.com"}),
            json!({"email": "not an address"}),
            json!({"code": "ABC"}),
            json!({"code": "AB"}),
            json!({"tags": [1, 2]}),
            json!({"tags": [1, 1.0]}),
            json!({"odd": 3}),
            json!({"odd": 4}),
            json!({"when": "ab"}),
            json!({"when": "a"}),
            json!({"when": 3}),
            json!({"when": true}),
        ],
    );
}

/// Random values, from a fixed seed: small trees of the kinds of JSON the rules above
/// tell apart (whole floats, edges of integer ranges, strings of many characters).
struct Values(u64);

impl Values {
    fn next(&mut self) -> u64 {
        // xorshift64
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a, T>(&mut self, from: &'a [T]) -> &'a T {
        let at = usize::try_from(self.next() % from.len() as u64).unwrap();
        &from[at]
    }

    fn value(&mut self, names: &[&str], depth: u32) -> Value {
        let leaves = [
            json!(null),
            json!(true),
            json!(0),
            json!(1),
            json!(-1),
            json!(1.0),
            json!(1.5),
            json!(2),
            json!(255),
            json!(256),
            json!(i64::MAX),
            json!(u64::MAX),
            json!(1e19),
            json!(-9.3e18),
            json!(""),
            json!("a"),
            json!("ab"),
            json!("äöü"),
            json!("user"),
            json!("admin"),
            json!("x@example.com"),
            json!("@"),
            json!("2020-02-29"),
            json!("2021-02-29"),
        ];
        match self.next() % 8 {
            0 if depth < 3 => {
                let n = self.next() % 4;
                Value::Array((0..n).map(|_| self.value(names, depth + 1)).collect())
            }
            1 | 2 if depth < 3 => {
                let n = self.next() % 5;
                let mut map = Map::new();
                for _ in 0..n {
                    let name = (*self.pick(names)).to_owned();
                    map.insert(name, self.value(names, depth + 1));
                }
                Value::Object(map)
            }
            _ => self.pick(&leaves).clone(),
        }
    }
}

#[test]
fn random_values_get_boons_verdict() {
    let schemas = [
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "format": "int64", "minimum": -9_223_372_036_854_775_808_i64, "maximum": 9_223_372_036_854_775_807_i64},
                "b": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255}
            },
            "required": ["a", "b"],
            "additionalProperties": false
        }),
        json!({
            "$defs": {"Role": {"type": "string", "enum": ["user", "admin", "moderator"]}},
            "type": "object",
            "properties": {
                "email": {"type": "string", "format": "email"},
                "name": {"type": "string", "minLength": 2, "maxLength": 3},
                "role": {"$ref": "#/$defs/Role", "default": "user"},
                "metadata": {"type": ["object", "null"], "additionalProperties": {"type": "string"}}
            },
            "required": ["email", "name"],
            "additionalProperties": false
        }),
        json!({
            "anyOf": [
                {"type": "array", "items": {"oneOf": [{"type": "integer"}, {"type": "number", "maximum": 2}]}, "maxItems": 2},
                {"type": "object", "minProperties": 1, "properties": {"a": {"not": {"type": "null"}}}},
                {"const": "a"}
            ]
        }),
        json!({
            "type": "object",
            "properties": {"email": {"$ref": "#"}, "name": {"enum": [1, [1.0], {"a": null}]}},
            "additionalProperties": {"type": "array", "items": {"$ref": "#"}}
        }),
        // Every other rule the validator words itself.
        json!({
            "type": "object",
            "minProperties": 1,
            "maxProperties": 3,
            "properties": {
                "a": {"oneOf": [{"type": "integer"}, {"minimum": 1}, {"const": "x"}]},
                "b": {"allOf": [{"exclusiveMinimum": 0}, {"exclusiveMaximum": 2}, {"multipleOf": 0.5}]},
                "c": {"if": {"type": "string"}, "then": {"maxLength": 1}, "else": {"not": {"type": "null"}}},
                "d": {"anyOf": [{"type": "array", "minItems": 1, "maxItems": 2}, {"enum": [null, true]}]},
                "e": false
            },
            "additionalProperties": {"type": ["string", "boolean"], "format": "email"}
        }),
        // Sets, tuples (as schemars derives them), patterns and formats.
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "array", "uniqueItems": true},
                "b": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string", "pattern": "^[a-z]+$"}], "minItems": 1, "maxItems": 2},
                "c": {"type": "string", "pattern": "^.{2}$"},
                "d": {"type": ["string", "array"], "format": "date", "uniqueItems": false}
            },
            "required": ["a"]
        }),
    ];
    // A valid value of each schema, changed at random below, and names to use.
    let examples = [
        json!({"a": 1, "b": 2}),
        json!({"email": "x@example.com", "name": "ab", "role": "user", "metadata": {}}),
        json!({"a": [1]}),
        json!({"email": {}, "name": 1, "c": []}),
        json!({"a": 2, "b": 1.5, "c": "x", "d": [1]}),
        json!({"a": [1, "a"], "b": [1, "ab"], "c": "äö", "d": "2020-02-29"}),
    ];
    let names: [&[&str]; 6] = [
        &["a", "b"],
        &["email", "name", "role", "metadata"],
        &["a", "b"],
        &["email", "name", "c"],
        &["a", "b", "c", "d", "e", "f"],
        &["a", "b", "c", "d"],
    ];
    let mut values = Values(0x9E37_79B9_7F4A_7C15);
    for ((schema, example), names) in schemas.iter().zip(&examples).zip(names) {
        let instances: Vec<Value> = (0..3000)
            .map(|i| {
                if i % 3 == 0 {
                    return values.value(names, 0);
                }
                let mut map = example.as_object().cloned().unwrap_or_default();
                for name in names {
                    match values.next() % 12 {
                        0..4 => {
                            let value = values.value(names, 2);
                            map.insert((*name).to_owned(), value);
                        }
                        4..6 => {
                            map.remove(*name);
                        }
                        _ => {}
                    }
                }
                if values.next().is_multiple_of(8) {
                    map.insert("z".to_owned(), values.value(names, 2));
                }
                Value::Object(map)
            })
            .collect();
        let verdicts = verdicts(schema, &instances);
        let accepted = verdicts.iter().filter(|(_, boon)| *boon).count();
        assert!(
            (100..2900).contains(&accepted),
            "{accepted} of 3000 values valid against {schema}"
        );
        for (instance, (quick, boon)) in instances.iter().zip(verdicts) {
            assert_eq!(quick, Some(boon), "{instance} against {schema}");
        }
    }
}

#[test]
fn odd_property_names_are_found_by_boon_too() {
    agree(
        json!({
            "type": "object",
            "properties": {
                "a b/c~d%é": {"type": "string", "pattern": "^x"},
                "q?#": {"type": "string", "format": "email"}
            }
        }),
        &[
            json!({"a b/c~d%é": "xy"}),
            json!({"a b/c~d%é": "yx"}),
            json!({"q?#": "a@example.com"}),
            json!({"q?#": "nope"}),
        ],
    );
}

#[test]
fn email_addresses_get_boons_verdict() {
    let schema = json!({"type": "string", "format": "email"});
    // Strings of the characters that matter to the rules, every length up to 6, then some.
    let alphabet = [
        'a', 'Z', '0', '@', '.', '-', '_', '+', '"', '[', ']', ' ', 'é', '!',
    ];
    let mut strings: Vec<String> = vec![String::new()];
    let mut values = Values(0xD1B5_4A32_D192_ED03);
    for _ in 0..2000 {
        let len = 1 + values.next() % 12;
        strings.push(
            (0..len)
                .map(|_| *values.pick(&alphabet))
                .collect::<String>(),
        );
    }
    // Near-addresses: a local part and a domain of likely characters around one `@`.
    let local = ['a', 'a', 'a', '0', '.', '-', '_', '+', '!', '"', 'é'];
    let domain = ['b', 'b', 'b', 'b', '1', '-', '.', 'é', '[', '_'];
    for _ in 0..2000 {
        let (l, d) = (values.next() % 6, 1 + values.next() % 8);
        let l: String = (0..l).map(|_| *values.pick(&local)).collect();
        let d: String = (0..d).map(|_| *values.pick(&domain)).collect();
        strings.push(format!("{l}@{d}"));
    }
    strings.extend(
        [
            "jane.doe@example.com",
            "a@b",
            "a@b.",
            "a@-b.com",
            "a@b-.com",
            "a..b@c.com",
            ".a@c.com",
            "a.@c.com",
            "\"a b\"@c.com",
            "a@[127.0.0.1]",
            "a@@b.com",
            "a@b@c.com",
        ]
        .map(String::from),
    );
    strings.push(format!("{}@example.com", "a".repeat(64)));
    strings.push(format!("{}@example.com", "a".repeat(65)));
    strings.push(format!("a@{}.com", "b".repeat(63)));
    strings.push(format!("a@{}.com", "b".repeat(64)));
    strings.push(format!("a@{}", vec!["b".repeat(60); 5].join(".")));
    let instances: Vec<Value> = strings.into_iter().map(Value::String).collect();
    agree(schema, &instances);
}

#[test]
fn a_reference_loop_is_left_to_boon() {
    let schema = json!({"$defs": {"A": {"$ref": "#/$defs/A"}}, "$ref": "#/$defs/A"});
    let (full, quick) = Full::compile(&schema).unwrap();
    assert!(quick.is_none(), "a loop has no rules");
    assert!(
        full.check(&json!(1)).unwrap().is_err(),
        "boon names the loop as an error"
    );
    // A recursive schema that consumes the value as it goes has rules.
    let tree = json!({
        "type": "object",
        "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}
    });
    agree(
        tree,
        &[
            json!({"children": [{"children": []}]}),
            json!({"children": [{"children": [1]}]}),
        ],
    );
}

#[test]
fn schemas_with_context_dependent_keywords_are_boons_alone() {
    for schema in [
        json!({"unevaluatedProperties": false}),
        json!({"properties": {"a": {"$dynamicRef": "#x"}}}),
        json!({"$schema": "http://json-schema.org/draft-07/schema#"}),
        json!({"$defs": {"A": {"$id": "urn:other"}}}),
    ] {
        assert!(Quick::build(&schema, &mut |_| Some(0)).is_err(), "{schema}");
    }
    let (_, quick) = Full::compile(&json!({"unevaluatedProperties": false})).unwrap();
    assert!(quick.is_none());
}

#[test]
fn a_schema_the_rules_take_whole_is_not_given_to_boon_to_start() {
    let (full, quick) =
        Full::compile(&json!({"type": "object", "properties": {"a": {"type": "integer"}}}))
            .unwrap();
    assert!(quick.is_some());
    assert!(matches!(&full, Full::Lazy { compiled, .. } if compiled.get().is_none()));
    // Asked (a value too deep for the rules), boon compiles it then.
    assert!(full.check(&json!({"a": "x"})).unwrap().is_err());
    assert!(matches!(&full, Full::Lazy { compiled, .. } if compiled.get().is_some()));
    let (full, _) =
        Full::compile(&json!({"properties": {"a": {"patternProperties": {"^x": true}}}})).unwrap();
    assert!(matches!(full, Full::Compiled(_)));
}

#[test]
fn what_the_rules_refuse_as_no_schema_boon_refuses_too() {
    for invalid in super::tests::invalid_schemas() {
        assert!(
            Quick::build(&invalid, &mut |_| None).is_err(),
            "the rules took {invalid}"
        );
        assert!(
            super::full::Compiled::new(&invalid, false).is_err(),
            "boon took {invalid}"
        );
        assert!(Validator::compile(&invalid).is_err(), "{invalid}");
    }
}

/// Strings near the valid ones of each format the rules assert, and of a pattern: each
/// valid example with one, two or three characters changed, dropped or doubled. boon gives
/// the verdict and the words; where it strays from the format's RFC, `strays` says so.
#[test]
fn formats_and_patterns_get_boons_verdict() {
    let examples: [(&str, &[&str]); 13] = [
        ("date", &["2020-02-29", "1963-06-19"]),
        (
            "time",
            &["23:59:60Z", "08:30:06.28+01:00", "15:59:60-08:00"],
        ),
        (
            "date-time",
            &["1963-06-19T08:30:06.283185Z", "1990-12-31t15:59:60-08:00"],
        ),
        ("duration", &["P4DT12H30M5S", "P2W", "PT36H"]),
        ("period", &["1963-06-19T08:30:06Z/P1D"]),
        ("uuid", &["2eb8aa08-aa98-11ea-b4aa-73b441d16380"]),
        ("ipv4", &["192.168.0.1"]),
        ("ipv6", &["fe80::1:2", "::ffff:1.2.3.4"]),
        ("hostname", &["www.example.com", "a-b.c"]),
        ("uri", &["http://u@[::1]:80/a/b?q=1#f", "urn:a:b%20c"]),
        ("uri-reference", &["//h/p?q#f", "../a:b/c"]),
        ("json-pointer", &["/a~1b/0", ""]),
        ("relative-json-pointer", &["10/a~0", "0#"]),
    ];
    let alphabet = [
        '0', '1', '2', '5', '9', '-', ':', '.', 'T', 'Z', 'P', 'W', 'D', 'H', 'M', 'Y', 'S', '+',
        '/', '~', '#', '%', '@', '[', ']', 'a', 'f', 'g', ' ', 'é', '?', '\\',
    ];
    let mut values = Values(0x2545_F491_4F6C_DD1D);
    for (format, valid) in examples {
        let mut strings: Vec<String> = valid.iter().map(|s| (*s).to_owned()).collect();
        for _ in 0..3000 {
            let mut chars: Vec<char> = values.pick(valid).chars().collect();
            for _ in 0..=values.next() % 3 {
                let at = usize::try_from(values.next() % (chars.len() as u64 + 1)).unwrap();
                match values.next() % 3 {
                    0 if at < chars.len() => chars[at] = *values.pick(&alphabet),
                    1 if at < chars.len() => {
                        chars.remove(at);
                    }
                    _ => chars.insert(at, *values.pick(&alphabet)),
                }
            }
            strings.push(chars.into_iter().collect());
        }
        let strays = |s: &str| strays(format, s);
        let instances: Vec<Value> = strings
            .into_iter()
            .filter(|s| !strays(s))
            .map(Value::String)
            .collect();
        let verdicts = verdicts(&json!({"format": format}), &instances);
        let accepted = verdicts.iter().filter(|(_, boon)| *boon).count();
        assert!(accepted > 20, "{accepted} valid {format}s");
        for (instance, (quick, boon)) in instances.iter().zip(verdicts) {
            assert_eq!(quick, Some(boon), "{instance} as {format}");
        }
    }
    let instances: Vec<Value> = [
        "ABC", "AB", "xABCx", "A\u{A0}B", "ab\nc", "a.c", "é", "a_1", "1a", "١x",
    ]
    .map(|s| json!(s))
    .to_vec();
    agree(json!({"pattern": "^[A-Z]{3}$"}), &instances);
    // boon words a pattern it translated as translated; the rules, as the schema wrote it.
    // (boon's `.` also matches `\r`, which ECMA-262's does not: not among these strings.)
    for pattern in [r"\s", "^a.c$", r"^\w+$", r"^\d\D$"] {
        let schema = json!({ "pattern": pattern });
        let (full, _) = Full::compile(&schema).unwrap();
        let validator = Validator::compile(&schema).unwrap();
        for i in &instances {
            let boon = full.check(i).unwrap().is_ok();
            assert_eq!(validator.check(i).is_ok(), boon, "{i} against {pattern}");
        }
    }
}

/// Where boon's verdict is not the format's RFC's, the rules keep to the RFC: boon reads the
/// numbers of dates and times with their sign (`+1`) as numbers, where the RFC has digits.
fn strays(format: &str, s: &str) -> bool {
    let signed =
        |i: usize| i == 0 || matches!(s.as_bytes()[i - 1], b'-' | b':' | b'T' | b't' | b'+' | b'/');
    matches!(format, "date" | "time" | "date-time" | "period")
        && s.match_indices('+').any(|(i, _)| signed(i))
}

#[test]
fn long_arrays_find_their_first_equal_items_as_boon_does() {
    let schema = json!({"type": "array", "uniqueItems": true});
    let mut instances = Vec::new();
    for (a, b) in [(3_u8, 24), (0, 24), (10, 11), (23, 24)] {
        let mut items: Vec<Value> = (0..25).map(|i| json!({"k": [i, "x"]})).collect();
        items[b] = json!({"k": [f64::from(a), "x"]});
        // Another pair, earlier by its first item, later by its second.
        items[usize::from(a) + 1] = json!(null);
        items[24 - usize::from(b == 24)] = json!(null);
        instances.push(Value::Array(items));
    }
    instances.push(Value::Array((0..25).map(|i| json!(i)).collect()));
    agree(schema, &instances);
}

#[test]
fn anchors_are_found_as_boon_finds_them() {
    agree(
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                "properties": {"street": {"type": "string"}}, "required": ["street"]}},
            "properties": {
                "a": {"$ref": "#addressDef"},
                "b": {"items": {"$anchor": "item", "type": "integer"}},
                "c": {"$ref": "#item"}
            },
            "allOf": [{"anyOf": [{"required": ["a"]}, {"required": ["c"]}]}]
        }),
        &[
            json!({"a": {"street": "x"}}),
            json!({"a": {"street": 1}}),
            json!({"a": {}}),
            json!({"c": 1}),
            json!({"c": "1", "b": [1, "2"]}),
            json!({"b": []}),
        ],
    );
}
