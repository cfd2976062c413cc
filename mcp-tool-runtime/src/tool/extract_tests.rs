//! Parameters read from the arguments' text receive what they would from the map: the same
//! values, the same errors, the same arguments left over.

use std::fmt::Debug;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{all_arguments, argument};
use crate::tool::arguments::Arguments;
use crate::tool::definition::integers::whole_numbers;
use crate::tool::definition::validate::Validator;

/// The arguments of `text` as a call that is not plain gets them (validated and their whole
/// floats made integers, the schema being `{}`), and as a plain one does, when the
/// validator reads `text` as valid and plain.
fn both(schema: &Value, text: &str) -> (Arguments, Option<Arguments>) {
    let mut map: Map<String, Value> = serde_json::from_str(text).expect("an object");
    map.values_mut().for_each(whole_numbers);
    let validator = Validator::compile(schema).expect("a schema");
    let plain = Arguments::text(text, |members| validator.valid_text(text, members));
    (Arguments::from(map), plain)
}

fn named<T: serde::de::DeserializeOwned + Debug>(
    name: &'static str,
) -> impl Fn(&mut Arguments) -> String {
    move |arguments| match argument::<T>(arguments, name) {
        Ok(value) => format!("{value:?}"),
        Err(refused) => format!("error {:?}", refused.content),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Pair {
    a: i64,
    b: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Strict {
    a: i64,
}

/// Runs `steps` on both forms of each text; returns how many texts were plain.
fn agree(schema: &Value, texts: &[&str], steps: &[&dyn Fn(&mut Arguments) -> String]) -> usize {
    let mut plain = 0;
    for text in texts {
        let (mut map, raw) = both(schema, text);
        let Some(mut raw) = raw else { continue };
        plain += 1;
        for (n, step) in steps.iter().enumerate() {
            assert_eq!(step(&mut raw), step(&mut map), "step {n} of {text}");
        }
        assert_eq!(raw.map(), map.map(), "what is left of {text}");
        assert_eq!(raw.into_map(), map.into_map(), "what is left of {text}");
    }
    plain
}

const TEXTS: &[&str] = &[
    r#"{"a":2,"b":"x"}"#,
    r#"{"a":2,"b":"x\n\u00e4"}"#,
    r#"{"a":-9223372036854775808,"b":null}"#,
    r#"{"a":18446744073709551615}"#,
    r#"{"a":1.5,"b":3}"#,
    r#"{"a":1.0,"b":"x"}"#,
    r#"{"a":"2","b":2}"#,
    r#"{"a":null}"#,
    r#"{"b":"x"}"#,
    r#"{"a":2,"b":"x","a":3}"#,
    r#"{"a":2,"b":"x","extra":{"k":[1,{"z":null}],"j":1.5}}"#,
    r#"{"a":2,"extra":{"k":1,"k":2}}"#,
    r#"{"a":300,"b":["x"]}"#,
    r#"{}"#,
    // Longer than a text kept in place, and more members than are listed in place.
    r#"{"b":"a string long enough that the arguments' text is kept apart from their members, past ninety-six bytes","a":7}"#,
    r#"{"z":1,"y":2,"x":3,"w":4,"v":5,"u":6,"t":7,"s":8,"b":"x","a":-3,"r":[1.5]}"#,
    r#"{"a":-0,"b":"x"}"#,
    r#"{"a":1e2,"b":"x"}"#,
    r#"{"a":-9223372036854775809}"#,
];

#[test]
fn named_arguments_read_from_text_are_the_maps() {
    let any = json!({});
    let steps: [&dyn Fn(&mut Arguments) -> String; 4] = [
        &named::<i64>("a"),
        &named::<Option<String>>("b"),
        &named::<Option<u8>>("missing"),
        &named::<Value>("extra"),
    ];
    assert!(agree(&any, TEXTS, &steps) >= 10);
    let other: [&dyn Fn(&mut Arguments) -> String; 4] = [
        &named::<u8>("a"),
        &named::<f64>("a"),
        &named::<String>("b"),
        &named::<Option<i64>>("a"),
    ];
    for step in other {
        assert!(agree(&any, TEXTS, &[step]) >= 10);
    }
}

#[test]
fn all_arguments_read_from_text_are_the_maps() {
    let any = json!({});
    let pair: &dyn Fn(&mut Arguments) -> String = &|arguments| {
        format!(
            "{:?}",
            all_arguments::<Pair>(arguments).map_err(|r| r.content)
        )
    };
    let strict: &dyn Fn(&mut Arguments) -> String = &|arguments| {
        format!(
            "{:?}",
            all_arguments::<Strict>(arguments).map_err(|r| r.content)
        )
    };
    assert!(agree(&any, TEXTS, &[pair]) >= 10);
    assert!(agree(&any, TEXTS, &[strict]) >= 10);
    // After a named argument was taken, the rest come from the map.
    assert!(agree(&any, TEXTS, &[&named::<Option<i64>>("a"), pair]) >= 10);
}

#[test]
fn the_map_asked_for_leaves_out_what_was_taken() {
    let any = json!({});
    let map: &dyn Fn(&mut Arguments) -> String = &|arguments| format!("{:?}", arguments.map());
    let absent: &dyn Fn(&mut Arguments) -> String =
        &|arguments| format!("{} {}", arguments.is_absent("a"), arguments.is_absent("b"));
    let steps = [
        map,
        &named::<Option<i64>>("a"),
        map,
        absent,
        &named::<Value>("b"),
        map,
    ];
    assert!(agree(&any, TEXTS, &steps) >= 10);
}

#[test]
fn a_whole_float_or_a_repeated_key_is_never_read_from_text() {
    let any = json!({});
    for text in [
        r#"{"a":1.0}"#,
        r#"{"a":1,"a":2}"#,
        r#"{"\u0061":1}"#,
        r#"{"a":{"b":2e0}}"#,
    ] {
        assert!(both(&any, text).1.is_none(), "{text}");
    }
    // Whereas a plain call's are.
    assert!(both(&any, r#"{"a":2,"b":3}"#).1.is_some());
}

/// A tool that takes `Args<T>` has its arguments read from their text (which costs less
/// than the map); a dynamic tool, which takes the map itself, does not.
#[test]
fn whole_arguments_are_read_from_text_but_a_dynamic_tools_map_is_not() {
    use crate::tool::definition::builder::DefBuilder;
    use crate::tool::extract::FromToolCall;

    let spec = crate::tool::definition::builder::ParamSpec {
        name: "p",
        description: None,
        default: false,
        header: None,
    };
    let mut whole = DefBuilder::new("whole");
    whole.description("Takes a pair.");
    <super::Args<Pair> as FromToolCall<super::ViaArgs>>::describe(&mut whole, &spec);
    assert!(whole.finish().expect("a definition").reads_text());
    let mut dynamic = DefBuilder::new("dynamic");
    dynamic.description("Takes a map.").takes_whole();
    assert!(!dynamic.finish().expect("a definition").reads_text());
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Nested {
    a: i64,
    pair: Option<Pair>,
    tags: Option<std::collections::BTreeMap<String, String>>,
}

/// An object member (listed with the arguments) and the rest are read from the text, as
/// the map reads them.
#[test]
fn nested_objects_are_read_from_text_as_from_the_map() {
    let any = json!({});
    for text in [
        r#"{"a":1,"pair":{"a":2,"b":"x"},"tags":{"k":"v"}}"#,
        r#"{"a":1,"tags":{"k":"v","j":"w"},"pair":{"b":null,"a":3}}"#,
        r#"{"a":1,"pair":null,"tags":{}}"#,
        r#"{"a":1,"pair":{"a":2,"b":"x\n"},"tags":{"k":"\u00e4"}}"#,
        r#"{"a":1,"pair":{"a":"2"}}"#,
        r#"{"a":1,"tags":{"k":1}}"#,
        r#"{"a":1,"pair":{"a":2,"c":[{"d":1}]}}"#,
    ] {
        let (_, raw) = both(&any, text);
        let mut raw = raw.expect("plain");
        let read = raw.take_all::<Nested>().map(|n| format!("{n:?}"));
        let json = serde_json::from_str::<Nested>(text)
            .ok()
            .map(|n| format!("{n:?}"));
        assert_eq!(read, json, "{text}");
    }
}
