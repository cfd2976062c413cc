//! The ranges of schemars' integer formats (`int32`, `uint64`, …): written into derived
//! schemas as `minimum`/`maximum`, so that clients see them and validation refuses what the
//! Rust type cannot hold, and asserted exactly by the validator, whose bounds compare as
//! floats (2^63 and `i64::MAX` are the same float).
//!
//! Arguments reach a tool through `serde_json::Value`, which holds no integer wider than 64
//! bits (a longer one becomes a float, which no integer type deserializes from), so `int128`
//! and `uint128` are bounded to the 64-bit range.

use serde_json::{Number, Value};

/// The integers a format of schemars stands for, as `(minimum, maximum)`.
pub(crate) fn range(format: &str) -> Option<(i128, i128)> {
    let (min, max): (i128, i128) = match format {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" | "int128" => (i64::MIN.into(), i64::MAX.into()),
        "uint8" => (0, u8::MAX.into()),
        "uint16" => (0, u16::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        "uint64" | "uint128" => (0, u64::MAX.into()),
        // `isize` and `usize`: the target's pointer width.
        "int" => (isize::MIN as i128, isize::MAX as i128),
        "uint" => (0, usize::MAX as i128),
        _ => return None,
    };
    Some((min, max))
}

/// Whether a number is an integer within `[min, max]`, exactly: a float counts when it is
/// whole (JSON Schema's integers include `1.0` and `1e19`) and within the range.
pub(crate) fn within(n: &Number, (min, max): (i128, i128)) -> bool {
    if let Some(i) = n.as_i64() {
        return (min..=max).contains(&i128::from(i));
    }
    if let Some(u) = n.as_u64() {
        return (min..=max).contains(&i128::from(u));
    }
    // Every bound is below 2^64 in magnitude, where a float converts to i128 exactly; a
    // float beyond that saturates, and is out of range all the same. A float of -2^63 is an
    // integer text below `i64::MIN`, rounded (`i64::MIN` itself reads as an integer).
    n.as_f64().is_some_and(|f| {
        #[allow(clippy::cast_possible_truncation)]
        let whole = f as i128;
        f.fract() != 0.0 || ((min..=max).contains(&whole) && whole != i128::from(i64::MIN))
    })
}

/// Writes the bounds of every integer format into `schema` and its subschemas (its
/// definitions included): `minimum`/`maximum` added where missing, and narrowed where they
/// allow more than the format holds. Values (`const`, `enum`, `default`, `examples`) are left
/// alone.
pub(crate) fn bound_integers(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            let range = map.get("format").and_then(Value::as_str).and_then(range);
            let integer = match map.get("type") {
                Some(Value::String(t)) => t == "integer",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
                _ => false,
            };
            if let (Some((min, max)), true) = (range, integer) {
                narrow(map, "minimum", min, |given, bound| given < bound);
                narrow(map, "maximum", max, |given, bound| given > bound);
            }
            for (key, value) in map.iter_mut() {
                if !matches!(key.as_str(), "const" | "enum" | "default" | "examples") {
                    bound_integers(value);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(bound_integers),
        _ => {}
    }
}

/// Sets `key` to `bound` unless it holds a number that is already as strict.
fn narrow(
    map: &mut serde_json::Map<String, Value>,
    key: &str,
    bound: i128,
    looser: fn(f64, f64) -> bool,
) {
    let bound_value = match (i64::try_from(bound), u64::try_from(bound)) {
        (Ok(i), _) => Value::from(i),
        (_, Ok(u)) => Value::from(u),
        _ => return,
    };
    #[allow(clippy::cast_precision_loss)]
    let keep = map
        .get(key)
        .and_then(Value::as_f64)
        .is_some_and(|given| !looser(given, bound as f64));
    if !keep {
        map.insert(key.to_owned(), bound_value);
    }
}

/// A range as the validator words it: `from 0 to 255`.
pub(crate) fn range_text((min, max): (i128, i128)) -> String {
    format!("from {min} to {max}")
}

/// A whole float (`1.0`, `1e19`) as the integer it is, when an integer type can hold it
/// (from `i64::MIN` to `u64::MAX`, where the conversion is exact); `None` otherwise.
pub(crate) fn whole(f: f64) -> Option<Value> {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f.fract() != 0.0 || !f.is_finite() {
        return None;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    if (-TWO_63..TWO_63).contains(&f) {
        Some(Value::from(f as i64))
    } else if (TWO_63..2.0 * TWO_63).contains(&f) {
        Some(Value::from(f as u64))
    } else {
        None
    }
}

/// Writes every float with no fraction (`1.0`, `1e19`) as an integer, recursively, when an
/// integer type can hold it: the schema accepted it as one (an integer format's range
/// included), and an integer type must deserialize from it.
pub(crate) fn whole_numbers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(whole) = n.as_f64().and_then(whole) {
                *value = whole;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_numbers),
        Value::Object(fields) => fields.values_mut().for_each(whole_numbers),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn number(text: &str) -> Number {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn the_edges_of_64_bits_are_exact() {
        let i64_range = range("int64").unwrap();
        assert!(within(&number("9223372036854775807"), i64_range));
        assert!(!within(&number("9223372036854775808"), i64_range));
        assert!(within(&number("-9223372036854775808"), i64_range));
        assert!(!within(&number("-9223372036854775809"), i64_range));
        let u64_range = range("uint64").unwrap();
        assert!(within(&number("18446744073709551615"), u64_range));
        assert!(!within(&number("18446744073709551616"), u64_range));
        assert!(within(&number("1e19"), u64_range));
        assert!(!within(&number("-1"), u64_range));
        assert!(!within(&number("1e300"), u64_range));
        // Not whole: the `type` keyword refuses it, not the format.
        assert!(within(&number("1.5"), u64_range));
    }

    #[test]
    fn bounds_are_added_narrowed_and_kept() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "format": "int32"},
                "b": {"type": ["integer", "null"], "format": "uint64", "minimum": 0},
                "c": {"type": "integer", "format": "uint8", "minimum": 1, "maximum": 1000},
                "d": {"type": "integer", "format": "int128", "default": {"type": "integer", "format": "int8"}},
                "e": {"type": "string", "format": "int32"}
            }
        });
        bound_integers(&mut schema);
        let p = &schema["properties"];
        assert_eq!(p["a"]["minimum"], json!(-2_147_483_648));
        assert_eq!(p["a"]["maximum"], json!(2_147_483_647));
        assert_eq!(p["b"]["maximum"], json!(18_446_744_073_709_551_615_u64));
        assert_eq!(
            (&p["c"]["minimum"], &p["c"]["maximum"]),
            (&json!(1), &json!(255))
        );
        assert_eq!(p["d"]["maximum"], json!(i64::MAX));
        assert_eq!(
            p["d"]["default"],
            json!({"type": "integer", "format": "int8"})
        );
        assert!(p["e"].get("maximum").is_none());
    }

    #[test]
    fn whole_floats_become_the_integers_they_are() {
        assert_eq!(whole(1.0), Some(json!(1)));
        assert_eq!(whole(-9_223_372_036_854_775_808.0), Some(json!(i64::MIN)));
        assert_eq!(whole(1e19), Some(json!(10_000_000_000_000_000_000_u64)));
        assert_eq!(whole(18_446_744_073_709_551_616.0), None);
        assert_eq!(whole(1.5), None);
        assert_eq!(whole(f64::INFINITY), None);
    }
}
