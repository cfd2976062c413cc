//! The rules on text against the rules on values: never "valid" where the value is not.

use serde_json::{Value, json};

use super::Quick;

impl Quick {
    fn _valid(&self, text: &str) -> bool {
        self.valid_text(text, &mut super::Members::default())
    }
}

fn quick(schema: &Value) -> Quick {
    Quick::build(schema, &mut |_| None).expect("a schema the rules take whole")
}

/// The value's verdict on `text`, which must be JSON.
fn value_verdict(quick: &Quick, text: &str) -> Option<bool> {
    let value: Value = serde_json::from_str(text).expect("JSON");
    quick.check(&value, &|_, _| false)
}

fn schemas() -> Vec<Value> {
    vec![
        // `add`: two integers.
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "format": "int64", "minimum": -9_223_372_036_854_775_808_i64, "maximum": 9_223_372_036_854_775_807_i64},
                "b": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255}
            },
            "required": ["a", "b"]
        }),
        // `create_user`: an email, a name, an optional role.
        json!({
            "$defs": {"Role": {"type": "string", "enum": ["user", "admin"]}},
            "type": "object",
            "properties": {
                "email": {"type": "string", "format": "email"},
                "name": {"type": "string", "minLength": 1, "maxLength": 3},
                "role": {"anyOf": [{"$ref": "#/$defs/Role"}, {"type": "null"}]},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                "meta": {"type": "object", "additionalProperties": {"type": "number"}, "maxProperties": 2}
            },
            "required": ["email", "name"],
            "additionalProperties": false
        }),
        json!({
            "type": "object",
            "properties": {
                "x": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5},
                "c": {"const": [1, {"k": 2}]},
                "n": {"not": {"type": "string"}},
                "i": {"if": {"type": "integer"}, "then": {"minimum": 5}, "else": {"type": "string"}},
                "o": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 1}]}
            }
        }),
        json!({"type": "object", "minProperties": 1, "required": ["q"]}),
        json!({}),
    ]
}

/// Texts of many kinds: plain ones, and each thing a text may hold that its value does not
/// show (escapes, keys given twice, whole floats, long numbers, deep nesting).
fn texts() -> Vec<String> {
    let mut texts: Vec<String> = [
        r#"{"a":2,"b":3}"#,
        r#"{ "a" : 2 , "b" : 3 }"#,
        r#"{"a":-2,"b":255}"#,
        r#"{"a":2,"b":256}"#,
        r#"{"a":2.0,"b":3}"#,
        r#"{"a":2,"b":3.0}"#,
        r#"{"a":2e0,"b":3}"#,
        r#"{"a":20E-1,"b":3}"#,
        r#"{"a":-0,"b":0}"#,
        r#"{"a":2,"b":3,"a":4}"#,
        r#"{"a":2,"b":3,"a":"x"}"#,
        r#"{"\u0061":2,"b":3}"#,
        r#"{"a":2,"b":3,"z\n":1}"#,
        r#"{"a":9223372036854775807,"b":1}"#,
        r#"{"a":9223372036854775808,"b":1}"#,
        r#"{"a":-9223372036854775808,"b":1}"#,
        r#"{"a":-9223372036854775809,"b":1}"#,
        r#"{"a":18446744073709551615,"b":1}"#,
        r#"{"a":18446744073709551616,"b":1}"#,
        r#"{"a":1.5,"b":1}"#,
        r#"{"a":2,"b":3,"extra":{"k":[1,2,{"z":null}]}}"#,
        r#"{"a":2,"b":3,"extra":{"k":1.0}}"#,
        r#"{"a":2,"b":3,"extra":{"k":1,"k":2}}"#,
        r#"{"a":null,"b":3}"#,
        r#"{"b":3}"#,
        r#"{}"#,
        r#"{"email":"jane.doe@example.com","name":"Ann"}"#,
        r#"{"email":"jane.doe@example.com","name":"Anna"}"#,
        r#"{"email":"jane.doe@example.com","name":""}"#,
        r#"{"email":"jane.doe\u0040example.com","name":"Ann"}"#,
        r#"{"email":"jane.doe@example.com","name":"\u00e4\u00f6\u00fc"}"#,
        r#"{"email":"jane.doe@example.com","name":"\u00e4\u00f6\u00fc\u00df"}"#,
        r#"{"email":"jane.doe@example.com","name":"äöü"}"#,
        r#"{"email":"jane.doe@example.com","name":"\ud83d\ude00"}"#,
        r#"{"email":"jane.doe@example.com","name":"\ud800"}"#,
        r#"{"email":"not an email","name":"Ann"}"#,
        r#"{"email":"jane.doe@example.com","name":"Ann","role":"admin"}"#,
        r#"{"email":"jane.doe@example.com","name":"Ann","role":"root"}"#,
        r#"{"email":"jane.doe@example.com","name":"Ann","role":"\u0061dmin"}"#,
        r#"{"email":"jane.doe@example.com","name":"Ann","role":null}"#,
        r#"{"email":"jane.doe@example.com","name":"Ann","tags":["a","b"]}"#,
        r#"{"email":"jane.doe@example.com","name":"Ann","tags":["a","b","c"]}"#,
        r#"{"email":"jane.doe@example.com","name":"Ann","tags":["a",1]}"#,
        r#"{"email":"jane.doe@example.com","name":"Ann","tags":[]}"#,
        r#"{"email":"jane.doe@example.com","name":"Ann","meta":{"x":1,"y":2.5}}"#,
        r#"{"email":"jane.doe@example.com","name":"Ann","meta":{"x":1,"y":2,"z":3}}"#,
        r#"{"email":"jane.doe@example.com","name":"Ann","meta":{"x":1,"x":"s"}}"#,
        r#"{"email":"jane.doe@example.com","name":"Ann","other":1}"#,
        r#"{"x":1.5,"c":[1,{"k":2}],"n":1,"i":7,"o":2}"#,
        r#"{"x":1.25}"#,
        r#"{"x":0}"#,
        r#"{"c":[1.0,{"k":2}]}"#,
        r#"{"c":[1,{"k":2,"k":2}]}"#,
        r#"{"n":"s"}"#,
        r#"{"i":3}"#,
        r#"{"i":"s"}"#,
        r#"{"i":null}"#,
        r#"{"o":1}"#,
        r#"{"o":1.5}"#,
        r#"{"o":0.5}"#,
        r#"{"x":0.30000000000000004}"#,
        r#"{"x":1.00000000000000000001}"#,
        r#"{"x":1e400}"#,
        r#"{"x":123456789012345678901234567890}"#,
        r#"{"q":1}"#,
        r#"{"q":1,"q":2}"#,
        r#"[1,2]"#,
        r#""s""#,
        r#"3"#,
        r#"null"#,
    ]
    .iter()
    .map(|t| (*t).to_owned())
    .collect();
    // Nesting around the depth limit.
    for depth in [10, 63, 64, 65, 120] {
        let nested = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        texts.push(format!(r#"{{"a":2,"b":3,"q":{nested}}}"#));
    }
    texts
}

#[test]
fn text_is_never_valid_where_its_value_is_not() {
    let mut valid = 0;
    for schema in schemas() {
        let quick = quick(&schema);
        for text in texts() {
            if quick._valid(&text) {
                valid += 1;
                assert_eq!(
                    value_verdict(&quick, &text),
                    Some(true),
                    "{text} against {schema}"
                );
            }
        }
    }
    assert!(valid > 30, "only {valid} texts read as valid");
}

#[test]
fn plain_arguments_are_valid_as_text() {
    let [add, user, ..] = &schemas()[..] else {
        unreachable!()
    };
    let (add, user) = (quick(add), quick(user));
    for text in [
        r#"{"a":2,"b":3}"#,
        r#"{ "a" : -2 , "b" : 255 }"#,
        r#"{"a":9223372036854775807,"b":0,"extra":{"k":[1,"x\n",{"z":null}]}}"#,
    ] {
        assert!(add._valid(text), "{text}");
    }
    for text in [
        r#"{"email":"jane.doe@example.com","name":"Ann"}"#,
        r#"{"email":"jane.doe\u0040example.com","name":"\u00e4\u00f6\u00fc","role":"admin"}"#,
        r#"{"email":"jane.doe@example.com","name":"Ann","role":null,"tags":["a"],"meta":{"x":1.5}}"#,
    ] {
        assert!(user._valid(text), "{text}");
    }
}

#[test]
fn what_text_does_not_show_plainly_is_left_to_the_value() {
    let add = quick(&schemas()[0]);
    let any = quick(&json!({}));
    for text in [
        // Valid, but read differently member by member, or not read here.
        r#"{"a":2.0,"b":3}"#,
        r#"{"a":2,"b":3,"a":2}"#,
        r#"{"\u0061":2,"b":3}"#,
        r#"{"a":2,"b":3,"extra":{"k":1.0}}"#,
        r#"{"a":2,"b":3,"extra":{"k":1,"k":1}}"#,
        r#"{"a":2,"b":3,"extra":"\ud800"}"#,
        // Invalid.
        r#"{"a":2,"b":256}"#,
        r#"{"a":2}"#,
    ] {
        assert!(!add._valid(text), "{text}");
    }
    let deep = format!(r#"{{"q":{}1{}}}"#, "[".repeat(64), "]".repeat(64));
    assert!(!any._valid(&deep));
    let shallow = format!(r#"{{"q":{}1{}}}"#, "[".repeat(63), "]".repeat(63));
    assert!(any._valid(&shallow));
    // Only an object's text is read so.
    assert!(!any._valid("[1]"));
}

#[test]
fn members_are_listed_as_serde_json_reads_them() {
    for text in [
        "{}",
        " { } ",
        r#"{"a":1}"#,
        r#"{ "a" : "x\"y,}" , "b" :{"d":[1,{"e":"]}\\"}],"f":null}, "g": -1.5e3 ,"h":true,"i":[[],{}]}"#,
        "{\"é\":\"ü\\n\", \"o\" : { \"p\" : { } , \"q\":[ ] } }",
        // More members than are kept in place.
        r#"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":[10],"k":{"l":11}}"#,
    ] {
        let expected: serde_json::Map<String, Value> = serde_json::from_str(text).unwrap();
        let mut members = super::Members::default();
        super::raw::list(text.as_bytes(), &mut members).expect("listed");
        assert_eq!(members.len(), expected.len(), "{text}");
        assert_eq!(members.iter().count(), expected.len(), "{text}");
        for (at, member) in members.iter().enumerate() {
            assert_eq!(members.get(at), Some(member));
            let value = member.value_str(text).unwrap();
            let unescaped = value.starts_with('"') && !value.contains('\\');
            assert_eq!(member.unescaped(), unescaped, "{value} in {text}");
            let value: Value = serde_json::from_str(member.value_str(text).unwrap()).unwrap();
            assert_eq!(expected[member.key_str(text).unwrap()], value, "{text}");
        }
        assert_eq!(members.get(members.len()), None);
    }
    for text in [
        r#"{"a\"b":1}"#,
        r#"{"a\\":1}"#,
        "[1]",
        r#"{"a":1"#,
        r#"{"a" 1}"#,
    ] {
        assert!(
            super::raw::list(text.as_bytes(), &mut super::Members::default()).is_err(),
            "{text}"
        );
    }
}

#[test]
fn numbers_are_read_as_serde_json_reads_them() {
    for text in [
        "0",
        "-0",
        "7",
        "-7",
        "9223372036854775807",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551615",
        "18446744073709551616",
        "-18446744073709551616",
        "1e5",
        "-1.0",
        "2.5",
    ] {
        let number = super::raw::number(text).expect("a number");
        let json: serde_json::Number = serde_json::from_str(text).unwrap();
        assert_eq!(number, json, "{text}");
        assert_eq!(number.is_f64(), json.is_f64(), "{text}");
    }
}

#[test]
fn values_on_text_are_the_values_verdicts() {
    let quick = quick(&json!({
        "type": "object",
        "properties": {
            "e": {"enum": ["a", 1, null, true, [1], {"k": "v"}, "\u{e4}", 2.5, "\"", -3]},
            "c": {"const": "x"},
            "n": {"const": 1},
            "r": {"allOf": [{"type": "string", "enum": ["user", "admin", "moderator"]}]}
        }
    }));
    let mut valid = 0;
    for member in [
        r#""e":"a""#,
        r#""e":"b""#,
        r#""e":"A""#,
        r#""e":1"#,
        r#""e":2"#,
        r#""e":2.5"#,
        r#""e":-3"#,
        r#""e":3"#,
        r#""e":null"#,
        r#""e":true"#,
        r#""e":false"#,
        r#""e":[1]"#,
        r#""e":[2]"#,
        r#""e":{"k":"v"}"#,
        r#""e":{"k":"w"}"#,
        r#""e":"ä""#,
        r#""e":"\u00e4""#,
        r#""e":"\"""#,
        r#""e":"1""#,
        r#""c":"x""#,
        r#""c":"\u0078""#,
        r#""c":"y""#,
        r#""c":"x ""#,
        r#""n":1"#,
        r#""n":2"#,
        r#""n":"1""#,
        r#""r":"admin""#,
        r#""r":"moderator""#,
        r#""r":"admins""#,
        r#""r":"""#,
        r#""r":null"#,
    ] {
        let text = format!("{{{member}}}");
        let here = quick._valid(&text);
        valid += usize::from(here);
        assert_eq!(Some(here), value_verdict(&quick, &text), "{text}");
    }
    assert_eq!(valid, 16);
}

#[test]
fn quotes_and_backslashes_are_found_eight_bytes_at_a_time() {
    let naive = |bytes: &[u8], at: usize| {
        bytes
            .get(at..)?
            .iter()
            .position(|&b| b == b'"' || b == b'\\')
            .map(|n| at + n)
    };
    for len in 0..40 {
        for special in [None, Some(b'"'), Some(b'\\')] {
            for place in 0..len.max(1) {
                // Bytes near both (`!`, `#`, `[`, `]`) and high ones, which a word's
                // arithmetic could mistake for them.
                let mut bytes: Vec<u8> = (0..len)
                    .map(|i| [b'!', b'#', b'[', b']', 0x80, 0xa2, 0xdc, b'a'][i % 8])
                    .collect();
                if let (Some(b), Some(slot)) = (special, bytes.get_mut(place)) {
                    *slot = b;
                }
                for at in 0..=len + 1 {
                    assert_eq!(
                        super::raw::quote_or_backslash(&bytes, at),
                        naive(&bytes, at),
                        "{bytes:?} from {at}"
                    );
                }
            }
        }
    }
}

#[test]
fn names_alike_are_told_apart() {
    // Names alike (of one length, first and last byte), and many names.
    let alike = quick(&json!({
        "type": "object",
        "properties": {"axb": {"type": "string"}, "ayb": {"type": "integer"}, "b": {"type": "null"}},
        "additionalProperties": false
    }));
    let many: serde_json::Map<String, Value> = (0..20)
        .map(|i| (format!("p{i}"), json!({"type": "integer", "maximum": i})))
        .collect();
    let many = quick(&json!({"type": "object", "properties": many, "additionalProperties": false}));
    for (quick, text, valid) in [
        (&alike, r#"{"axb":"s","ayb":1,"b":null}"#, true),
        (&alike, r#"{"ayb":1,"axb":"s"}"#, true),
        (&alike, r#"{"axb":1}"#, false),
        (&alike, r#"{"ayb":"s"}"#, false),
        (&alike, r#"{"azb":"s"}"#, false),
        (&alike, r#"{"b":1}"#, false),
        (&many, r#"{"p3":3,"p19":19,"p0":0}"#, true),
        (&many, r#"{"p3":4}"#, false),
        (&many, r#"{"p20":0}"#, false),
    ] {
        assert_eq!(quick._valid(text), valid, "{text}");
        assert_eq!(value_verdict(quick, text), Some(valid), "{text}");
    }
}

#[test]
fn an_object_member_is_listed_with_the_arguments() {
    let any = quick(&json!({}));
    for text in [
        r#"{"a":1,"m":{"k":"v","j":[1,{"x":2}]},"n":{"z":1}}"#,
        r#"{ "m" : { } , "b" : "x" }"#,
        r#"{"a":[{"k":1}],"m":{"k":{"l":null}}}"#,
    ] {
        let mut members = super::Members::default();
        assert!(any.valid_text(text, &mut members), "{text}");
        let at = members
            .iter()
            .position(|m| m.key_str(text) == Some("m"))
            .expect("m");
        let inner = members.inner(at).expect("m's members");
        let value: Value =
            serde_json::from_str(members.get(at).unwrap().value_str(text).unwrap()).unwrap();
        let value = value.as_object().unwrap();
        assert_eq!(inner.len(), value.len(), "{text}");
        for member in inner.iter() {
            let found: Value = serde_json::from_str(member.value_str(text).unwrap()).unwrap();
            assert_eq!(value[member.key_str(text).unwrap()], found, "{text}");
        }
        // Only the first object member's are.
        assert!(
            (0..members.len())
                .filter(|&at| members.inner(at).is_some())
                .count()
                == 1
        );
    }
    // An inner object's key given twice, or with an escape, is left to the value.
    for text in [
        r#"{"m":{"k":1,"k":2}}"#,
        r#"{"m":{"k\n":1}}"#,
        r#"{"m":{"k":1.0}}"#,
    ] {
        assert!(!any._valid(text), "{text}");
    }
    // The rules of the inner object's part are checked on its members.
    let typed = quick(&json!({
        "type": "object",
        "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 2}}
    }));
    for (text, valid) in [
        (r#"{"m":{"k":"v","j":"w"}}"#, true),
        (r#"{"m":{"k":"v","j":1}}"#, false),
        (r#"{"m":{"k":"v","j":"w","i":"x"}}"#, false),
        (r#"{"m":null}"#, false),
        (r#"{"m":{}}"#, true),
    ] {
        assert_eq!(typed._valid(text), valid, "{text}");
        assert_eq!(value_verdict(&typed, text), Some(valid), "{text}");
    }
}
