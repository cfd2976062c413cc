//! A call's `_meta`, kept as the text it came in ([`CallMeta`]): read into a map only when a
//! tool asks for it.

use std::fmt;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use crate::protocol::walk::JsonText;

/// A request's `_meta`, kept as its text: most tools never look at it, so it is read into a
/// map only when one does (its progress token is read at once, for the call's progress).
#[derive(Default)]
pub(crate) struct CallMeta {
    /// The text `_meta` is part of: a stateless request's whole params (kept once, for what
    /// the call may need of them later: the binding of a round that ends asking for input),
    /// or `_meta`'s own.
    text: Option<Arc<str>>,
    /// Where `_meta` is in `text`; `None` when the request had none.
    at: Option<Range<usize>>,
    /// Whether `text` is the request's whole params.
    whole: bool,
    map: OnceLock<Option<Map<String, Value>>>,
}

impl CallMeta {
    /// The `_meta` of `text` (an object, as the caller checked), and its progress token (read
    /// with the request, as text). With `params` (the text `_meta` was read from), the params
    /// are kept whole and `_meta` is found in them: one copy for both.
    pub(crate) fn new(
        text: Option<JsonText<'_>>,
        token: Option<JsonText<'_>>,
        params: Option<JsonText<'_>>,
    ) -> (CallMeta, Option<Value>) {
        if text.is_none() && params.is_none() {
            // The common call of a session: nothing to keep.
            return (CallMeta::default(), None);
        }
        let token = token.and_then(|t| serde_json::from_str::<Value>(t.get()).ok());
        let text = text.map(|t| t.get());
        let meta = match params.map(|p| p.get()) {
            Some(params) => match text.map(|t| within(params, t)) {
                // `_meta` is always read from its params; were it not, it is kept on its own.
                Some(None) => CallMeta::own(text),
                at => CallMeta {
                    text: Some(params.into()),
                    at: at.flatten(),
                    whole: true,
                    map: OnceLock::new(),
                },
            },
            None => CallMeta::own(text),
        };
        (meta, token)
    }

    /// `_meta`'s text on its own.
    fn own(text: Option<&str>) -> CallMeta {
        CallMeta {
            at: text.map(|t| 0..t.len()),
            text: text.map(Arc::from),
            whole: false,
            map: OnceLock::new(),
        }
    }

    /// `_meta`'s text.
    fn text(&self) -> Option<&str> {
        self.text.as_deref()?.get(self.at.clone()?)
    }

    /// The request's whole params, when they were kept.
    pub(crate) fn params(&self) -> Option<&str> {
        self.text.as_deref().filter(|_| self.whole)
    }

    /// `_meta` as a map, read on first use.
    pub(crate) fn map(&self) -> Option<&Map<String, Value>> {
        self.map
            .get_or_init(|| self.text().and_then(|t| serde_json::from_str(t).ok()))
            .as_ref()
    }
}

/// Where `inner`, a part of `outer`, is in it; `None` when it is no part of it.
fn within(outer: &str, inner: &str) -> Option<Range<usize>> {
    let start = inner.as_ptr().addr().checked_sub(outer.as_ptr().addr())?;
    let end = start.checked_add(inner.len())?;
    (end <= outer.len()).then_some(start..end)
}

impl fmt::Debug for CallMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text().unwrap_or("None"))
    }
}
