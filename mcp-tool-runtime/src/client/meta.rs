//! The `_meta` every 2026-07-28 request carries (protocol version, client capabilities and
//! information), merged into a request's params while they are written.

use serde_json::{Map, Value};

/// Params with a 2026-07-28 `_meta` merged into theirs as they are written (their own
/// entries win), so that no request copies or rebuilds its params for it.
pub(super) struct WithMeta<'a> {
    pub(super) params: &'a Value,
    pub(super) meta: &'a Map<String, Value>,
}

impl serde::Serialize for WithMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let empty = Map::new();
        let params = self.params.as_object().unwrap_or(&empty);
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in params.iter().filter(|(k, _)| *k != "_meta") {
            map.serialize_entry(key, value)?;
        }
        match params.get("_meta") {
            None => map.serialize_entry("_meta", self.meta)?,
            Some(Value::Object(own)) => map.serialize_entry(
                "_meta",
                &Merged {
                    own,
                    meta: self.meta,
                },
            )?,
            Some(other) => map.serialize_entry("_meta", other)?,
        }
        map.end()
    }
}

/// A request's own `_meta` entries, then those of the client it has not.
struct Merged<'a> {
    own: &'a Map<String, Value>,
    meta: &'a Map<String, Value>,
}

impl serde::Serialize for Merged<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.own {
            map.serialize_entry(key, value)?;
        }
        for (key, value) in self.meta.iter().filter(|(k, _)| !self.own.contains_key(*k)) {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}
