//! A result's structured content as JSON text, serialized once ([`Structured`]).

use std::fmt;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

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
pub struct Structured(Box<RawValue>);

impl Structured {
    /// `value`'s JSON (an error only for a map with keys that are not strings, or a type
    /// whose `Serialize` fails).
    pub fn new<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        serde_json::value::to_raw_value(value).map(Structured)
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// The JSON text, to write as it is.
    pub(crate) fn raw(&self) -> &RawValue {
        &self.0
    }

    /// The JSON value.
    pub fn to_value(&self) -> Value {
        // Text serde_json wrote (or checked) is JSON.
        serde_json::from_str(self.get()).unwrap_or(Value::Null)
    }

    /// `null`.
    pub(crate) fn null() -> Self {
        Structured(RawValue::NULL.to_owned())
    }

    /// Whether it is `null`.
    pub(crate) fn is_null(&self) -> bool {
        self.get() == "null"
    }

    /// `{"result": …}` of this value.
    pub(crate) fn wrapped(&self) -> Self {
        #[derive(Serialize)]
        struct Wrapped<'a> {
            result: &'a RawValue,
        }
        // Raw text is written as it is: this cannot fail.
        Structured::new(&Wrapped { result: &self.0 }).unwrap_or_else(|_| Structured::null())
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
        self.0.serialize(serializer)
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
    }
}
