//! A call's `_meta`, kept as the text it came in ([`CallMeta`]): read into a map only when a
//! tool asks for it.

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use crate::protocol::meta;
use crate::protocol::walk::JsonText;

/// A request's `_meta`, kept as its text: most tools never look at it, so it is read into a
/// map only when one does (its progress token is read at once, for the call's progress).
#[derive(Default)]
pub(crate) struct CallMeta {
    /// `_meta`'s text; `None` when the request had none. Shared with the thread's kept
    /// `_meta` when it is that one (`meta::shared_text`), else a copy of its own.
    text: Option<Arc<str>>,
    map: OnceLock<Option<Map<String, Value>>>,
}

impl CallMeta {
    /// The `_meta` of `text` (an object, as the caller checked), and its progress token (read
    /// with the request, as text).
    pub(crate) fn new(
        text: Option<JsonText<'_>>,
        token: Option<JsonText<'_>>,
    ) -> (CallMeta, Option<Value>) {
        let Some(text) = text.map(JsonText::get) else {
            // The common call of a session: nothing to keep.
            return (CallMeta::default(), None);
        };
        let token = token.and_then(|t| serde_json::from_str::<Value>(t.get()).ok());
        let text = meta::shared_text(text).unwrap_or_else(|| Arc::from(text));
        let meta = CallMeta {
            text: Some(text),
            map: OnceLock::new(),
        };
        (meta, token)
    }

    /// `_meta`'s text.
    fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// `_meta` as a map, read on first use.
    pub(crate) fn map(&self) -> Option<&Map<String, Value>> {
        self.map
            .get_or_init(|| self.text().and_then(|t| serde_json::from_str(t).ok()))
            .as_ref()
    }
}

impl fmt::Debug for CallMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text().unwrap_or("None"))
    }
}
