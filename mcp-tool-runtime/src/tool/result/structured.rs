//! A result's structured content as JSON text, serialized once ([`Structured`]).

use std::fmt;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::tool::result::copy;

/// A result's structured content: JSON text, serialized once and written as it is (as
/// `structuredContent`, and as the text copy of a result that has no other content).
///
/// `Structured::new(&value)` serializes any `Serialize` value; a [`Value`] converts with
/// `.into()`. Two are equal when their JSON values are, whatever their spacing or key order.
///
/// ```
/// use mcp_tool::content::Structured;
/// use serde_json::json;
///
/// let s: Structured = json!({"id": 1}).into();
/// assert_eq!(s.get(), r#"{"id":1}"#);
/// assert_eq!(s, json!({"id": 1}));
/// ```
#[derive(Clone)]
pub struct Structured {
    /// The JSON text as serde_json writes it, from `json_at` on; before it, when it was
    /// written beside it, that text escaped as a JSON string's contents: how the text copy
    /// of a `Json<T>` result is written without escaping it again. (JSON text is never
    /// empty, nor then its escaped form: `json_at` is 0 when there is none.)
    text: String,
    json_at: usize,
}

impl Structured {
    /// `value`'s JSON (an error only for a map with keys that are not strings, or a type
    /// whose `Serialize` fails).
    pub fn new<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        serde_json::to_string(value).map(|text| Structured { text, json_at: 0 })
    }

    /// [`Structured::new`], with the text escaped as a JSON string's contents written beside
    /// it, for a result whose text block is the structured content's copy; and that JSON
    /// text again, for the block.
    pub(crate) fn with_copy<T: Serialize + ?Sized>(
        value: &T,
    ) -> Result<(Self, String), serde_json::Error> {
        let (json, mut text) = copy::json_and_copy(value)?;
        let json_at = text.len();
        text.push_str(&json);
        Ok((Structured { text, json_at }, json))
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        self.text.get(self.json_at..).unwrap_or_default()
    }

    /// The JSON text escaped as a JSON string's contents (without the quotes), when it was
    /// written beside it.
    pub(crate) fn escaped(&self) -> Option<&str> {
        (self.json_at > 0).then(|| self.text.get(..self.json_at).unwrap_or_default())
    }

    /// The JSON text as serde_json's raw value, to write as it is through serde (checked on
    /// the way: the writing by hand in `respond` is the common one).
    pub(crate) fn raw(&self) -> Result<&RawValue, serde_json::Error> {
        serde_json::from_str(self.get())
    }

    /// The JSON value.
    pub fn to_value(&self) -> Value {
        // Text serde_json wrote (or checked) is JSON.
        serde_json::from_str(self.get()).unwrap_or(Value::Null)
    }

    /// `null`.
    pub(crate) fn null() -> Self {
        Structured {
            text: "null".to_owned(),
            json_at: 0,
        }
    }

    /// Whether it is `null`.
    pub(crate) fn is_null(&self) -> bool {
        self.get() == "null"
    }

    /// `{"result": …}` of this value.
    pub(crate) fn wrapped(&self) -> Self {
        Structured {
            text: format!("{{\"result\":{}}}", self.get()),
            json_at: 0,
        }
    }
}

impl From<Value> for Structured {
    fn from(value: Value) -> Self {
        // A `Value`'s keys are strings: it always serializes.
        Structured::new(&value).unwrap_or_else(|_| Structured::null())
    }
}

impl PartialEq for Structured {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get() || self.to_value() == other.to_value()
    }
}

impl PartialEq<Value> for Structured {
    fn eq(&self, other: &Value) -> bool {
        self.to_value() == *other
    }
}

impl fmt::Debug for Structured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

impl Serialize for Structured {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Written as it is, through serde_json's raw value (whose checks this JSON passes:
        // serde_json wrote it). Only results written by serde come here (see `respond`).
        self.raw()
            .map_err(serde::ser::Error::custom)?
            .serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn structured_content_compares_as_json() {
        let s = Structured::from(json!({"a": 1, "b": [true]}));
        assert_eq!(s, json!({"b": [true], "a": 1}));
        let spaced: Structured = serde_json::from_str::<Value>(r#"{ "b" : [true], "a": 1 }"#)
            .unwrap()
            .into();
        assert_eq!(s, spaced);
        assert_ne!(s, Structured::null());
        assert!(Structured::null().is_null());
        assert_eq!(s.wrapped(), json!({"result": {"a": 1, "b": [true]}}));
        assert_eq!(s.wrapped().get(), r#"{"result":{"a":1,"b":[true]}}"#);
        assert_eq!(s.escaped(), None);
    }

    #[test]
    fn a_copy_is_kept_before_the_json_and_read_apart() {
        let (s, json) = Structured::with_copy(&json!({"a": "x\"y", "b": [1]})).unwrap();
        assert_eq!(s.get(), r#"{"a":"x\"y","b":[1]}"#);
        assert_eq!(json, s.get());
        assert_eq!(s.escaped(), Some(r#"{\"a\":\"x\\\"y\",\"b\":[1]}"#));
        assert_eq!(s.clone().escaped(), s.escaped());
        assert_eq!(s.to_value(), json!({"a": "x\"y", "b": [1]}));
        assert_eq!(s.raw().unwrap().get(), s.get());
        assert_eq!(s.wrapped().get(), r#"{"result":{"a":"x\"y","b":[1]}}"#);
        assert_eq!(s.wrapped().escaped(), None);
        assert_eq!(format!("{s:?}"), s.get());
    }
}
