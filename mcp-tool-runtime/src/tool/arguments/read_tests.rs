//! Values read from text here are serde_json's, case by case.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;

use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::{Integer, Object, Value, integer};

/// What serde_json reads from `text`, and what [`Value`] reads, as text (values and
/// whether each failed).
fn both<T: DeserializeOwned + Debug>(text: &str) -> (String, String) {
    let json = serde_json::from_str::<T>(text).map_err(drop);
    let here = T::deserialize(Value(text.as_bytes(), Some(text), None)).map_err(drop);
    // The text as bytes only (as a parameter's is read).
    let bytes = T::deserialize(Value(text.as_bytes(), None, None)).map_err(drop);
    let (json, here, bytes) = (
        format!("{json:?}"),
        format!("{here:?}"),
        format!("{bytes:?}"),
    );
    match here == bytes {
        true => (json, here),
        false => (here, bytes),
    }
}

/// Floats compared by their bits, so that `-0.0` and `0.0` differ.
fn floats(text: &str) -> (Option<u64>, Option<u64>) {
    let json = serde_json::from_str::<f64>(text).ok().map(f64::to_bits);
    let here = f64::deserialize(Value(text.as_bytes(), None, None))
        .ok()
        .map(f64::to_bits);
    (json, here)
}

const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "2",
    "42",
    "255",
    "256",
    "-128",
    "-129",
    "65535",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "-18446744073709551615",
    "-18446744073709551616",
    "99999999999999999999",
    "100000000000000000000",
    "123456789012345678901234567890",
    "1e5",
    "1E5",
    "-1e5",
    "1e-5",
    "1.0",
    "-0.0",
    "1.5",
    "-1.5",
    "0.1",
    "2.5e3",
    "1e400",
    "-1e400",
    "1.7976931348623157e308",
    "5e-324",
    "3.141592653589793",
    "100.000",
];

const OTHERS: &[&str] = &[
    "null",
    "true",
    "false",
    r#""""#,
    r#""x""#,
    r#""2""#,
    r#""null""#,
    r#""a b c""#,
    r#""x\ny""#,
    r#""\u00e4""#,
    r#""\ud83d\ude00""#,
    r#""ä€😀""#,
    r#""\"""#,
    r#""\\""#,
    r#""ab""#,
    "[]",
    "[1,2]",
    "[1,\"x\",null]",
    "{}",
    r#"{"k":1}"#,
    r#"{"k":"v","j":null}"#,
    r#"{"1":2}"#,
    "[[1],[2,3]]",
];

#[test]
fn integers_are_read_as_serde_json_reads_them() {
    assert_eq!(integer(b"2"), Some(Integer::Unsigned(2)));
    assert_eq!(integer(b"-2"), Some(Integer::Signed(-2)));
    assert_eq!(
        integer(b"18446744073709551615"),
        Some(Integer::Unsigned(u64::MAX))
    );
    assert_eq!(
        integer(b"-9223372036854775808"),
        Some(Integer::Signed(i64::MIN))
    );
    // serde_json reads these as floats (or fails): serde_json reads them here too.
    for text in [
        "-0",
        "-9223372036854775809",
        "18446744073709551616",
        "1e5",
        "1.0",
        "01",
        "-",
        "",
    ] {
        assert_eq!(integer(text.as_bytes()), None, "{text}");
    }
}

macro_rules! agree {
    ($texts:expr, $($t:ty),* $(,)?) => {
        for text in $texts {
            $(
                let (json, here) = both::<$t>(text);
                assert_eq!(json, here, "{} as {}", text, stringify!($t));
            )*
        }
    };
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Wrap(i64);

#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Role {
    User,
    Admin,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
#[allow(dead_code)]
enum Either {
    Number(i64),
    Text(String),
    Float(f64),
    Other(serde_json::Value),
}

#[test]
fn values_are_serde_jsons() {
    let all = || NUMBERS.iter().chain(OTHERS);
    agree!(
        all(),
        i8,
        i16,
        i32,
        i64,
        i128,
        u8,
        u16,
        u32,
        u64,
        u128,
        f32,
        bool,
        char,
        String,
        (),
        Option<i64>,
        Option<u64>,
        Option<String>,
        Option<Option<bool>>,
        Option<f32>,
        Vec<i64>,
        Vec<serde_json::Value>,
        (i64, i64),
        BTreeMap<String, i64>,
        HashMap<String, String>,
        Wrap,
        Role,
        Either,
        serde_json::Value,
        Box<serde_json::value::RawValue>,
        serde::de::IgnoredAny,
    );
    for text in all() {
        assert_eq!(floats(text).0, floats(text).1, "{text} as f64");
    }
    for text in [r#""user""#, r#""admin""#, r#""Admin""#, "1"] {
        assert_eq!(both::<Role>(text).0, both::<Role>(text).1, "{text}");
    }
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Account {
    email: String,
    name: String,
    #[serde(default)]
    role: Option<Role>,
    metadata: Option<HashMap<String, String>>,
    #[serde(default)]
    age: u8,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Strict {
    a: i64,
    b: Option<f64>,
}

/// What serde_json reads from an object's `text`, and what [`Object`] reads from its members.
fn whole<T: DeserializeOwned + Debug>(text: &str) -> (String, String) {
    let json = serde_json::from_str::<T>(text).map_err(drop);
    let members = serde_json::from_str::<BTreeMap<String, Box<serde_json::value::RawValue>>>(text)
        .expect("an object");
    // In the text's order: a `BTreeMap` sorts them, so they are found again.
    let mut ordered: Vec<(usize, &str, &str)> = members
        .iter()
        .map(|(k, v)| {
            let at = text.find(&format!("\"{k}\":")).expect("the key");
            (at, k.as_str(), v.get())
        })
        .collect();
    ordered.sort();
    let object = Object {
        text: text.as_bytes(),
        members: ordered
            .iter()
            .map(|&(_, k, v)| Some((k, Value(v.as_bytes(), Some(v), None)))),
    };
    let here = T::deserialize(object).map_err(drop);
    (format!("{json:?}"), format!("{here:?}"))
}

#[test]
fn whole_arguments_are_serde_jsons() {
    let texts = [
        r#"{"email":"a@b.c","name":"Jane"}"#,
        r#"{"name":"Jane","email":"a@b.c","role":"admin"}"#,
        r#"{"email":"a@b.c","name":"Jane","role":null,"metadata":{"k":"v"}}"#,
        r#"{"email":"a@b.c","name":"Jane","role":"nobody"}"#,
        r#"{"email":"a@b.c","name":"Jane","age":300}"#,
        r#"{"email":"a@b.c","name":"Jane","age":-1}"#,
        r#"{"email":"a@b.c","name":"Jane","age":2,"other":[1,{"x":null}]}"#,
        r#"{"email":"a@b.c"}"#,
        r#"{"email":"a\nb","name":"J\u00e4ne"}"#,
        r#"{"email":2,"name":"Jane"}"#,
        r#"{"a":1}"#,
        r#"{"a":1,"b":2}"#,
        r#"{"a":1,"b":2.5,"c":3}"#,
        r#"{"a":-9223372036854775808,"b":null}"#,
        r#"{"a":9223372036854775808}"#,
        r#"{"1":2,"3":4}"#,
        r#"{}"#,
    ];
    for text in texts {
        let (json, here) = whole::<Account>(text);
        assert_eq!(json, here, "{text} as Account");
        let (json, here) = whole::<Strict>(text);
        assert_eq!(json, here, "{text} as Strict");
        let (json, here) = whole::<BTreeMap<String, serde_json::Value>>(text);
        assert_eq!(json, here, "{text} as a map");
        let (json, here) = whole::<serde_json::Value>(text);
        assert_eq!(json, here, "{text} as a value");
        let (json, here) = whole::<Option<Strict>>(text);
        assert_eq!(json, here, "{text} as an option");
    }
    // Keys read as numbers are not read here (the map reads them).
    assert_eq!(whole::<HashMap<u32, u32>>(r#"{"1":2}"#).1, "Err(())");
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
enum Shape {
    Dot,
    Circle(u32),
    Rect { w: u32, h: u32 },
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Inner {
    a: i64,
    #[serde(default)]
    b: Option<String>,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Outer {
    inner: Inner,
    tags: BTreeMap<String, String>,
    shape: Shape,
}

#[test]
fn nested_objects_and_variants_are_serde_jsons() {
    let texts = [
        r#"{"a":1}"#,
        r#"{"a":1,"b":"x"}"#,
        r#"{"b":"x","a":1}"#,
        r#"{"a":1,"a":2}"#,
        r#"{"a\u0062":1}"#,
        r#"{"a":1,"b":"x\ny"}"#,
        r#"{"a":1,"c":[1,{"d":2}]}"#,
        r#"{ "a" : 1 , "b" : null }"#,
        r#"[1,"x"]"#,
        "[1]",
        "{}",
        r#"{"k":"v"}"#,
        r#"{"k":1}"#,
        r#"{"k\"":"v"}"#,
        r#"{"é":"ü"}"#,
        r#""Dot""#,
        r#""Circle""#,
        r#""Rect""#,
        r#""D\u006ft""#,
        r#"{"Circle":3}"#,
        r#"{"Rect":{"w":1,"h":2}}"#,
        r#"{"Dot":null}"#,
        r#""Nope""#,
        "3",
        "null",
        r#"{"inner":{"a":1},"tags":{"x":"y"},"shape":"Dot"}"#,
        r#"{"inner":{"a":1,"b":null},"tags":{},"shape":{"Rect":{"w":1,"h":2}}}"#,
        r#"{"inner":[2],"tags":{"x":"y","x":"z"},"shape":"Circle"}"#,
        r#"{"inner":{"a":1},"tags":{"x":2},"shape":"Dot"}"#,
    ];
    agree!(
        texts,
        Inner,
        Option<Inner>,
        BTreeMap<String, String>,
        BTreeMap<String, serde_json::Value>,
        Shape,
        Outer,
    );
}
