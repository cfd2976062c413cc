//! The request id a call keeps ([`RelatedId`]).

use std::sync::{Arc, OnceLock};

use crate::protocol::jsonrpc;

/// The request's id as its call keeps it: the id's canonical JSON text, made when first
/// asked for (to route the call's own messages) from the id as sent, kept inline when short
/// (as most ids are): a call that sends nothing of its own makes none.
pub(crate) struct RelatedId {
    key: OnceLock<Arc<str>>,
    sent: Option<([u8; SHORT_ID], u8)>,
}

/// The longest id text kept inline.
const SHORT_ID: usize = 22;

impl RelatedId {
    /// The id's key, made already.
    pub(crate) fn key(key: Arc<str>) -> Self {
        RelatedId {
            key: OnceLock::from(key),
            sent: None,
        }
    }

    /// The id as sent (JSON text), when it is short enough to keep inline.
    pub(crate) fn sent(text: &str) -> Option<Self> {
        let len = u8::try_from(text.len())
            .ok()
            .filter(|&n| usize::from(n) <= SHORT_ID)?;
        let mut sent = [0; SHORT_ID];
        sent[..text.len()].copy_from_slice(text.as_bytes());
        Some(RelatedId {
            key: OnceLock::new(),
            sent: Some((sent, len)),
        })
    }

    /// The id's key (made on first use).
    pub(crate) fn get(&self) -> &Arc<str> {
        self.key.get_or_init(|| {
            let text = match &self.sent {
                Some((sent, len)) => std::str::from_utf8(&sent[..usize::from(*len)]).ok(),
                None => None,
            };
            jsonrpc::id_key(text.unwrap_or("null"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_kept_inline_has_the_key_of_the_id_as_sent() {
        for sent in [
            "1",
            " 7 ",
            "\"a\"",
            "\"caf\\u00e9\"",
            "-0",
            "\"0123456789abcdefghij\"",
        ] {
            let id = RelatedId::sent(sent).unwrap();
            assert_eq!(id.get(), &jsonrpc::id_key(sent), "{sent}");
        }
        let long = "\"0123456789abcdefghijk\"";
        assert!(RelatedId::sent(long).is_none(), "too long to keep inline");
        let key = jsonrpc::id_key(long);
        assert!(Arc::ptr_eq(RelatedId::key(key.clone()).get(), &key));
    }
}
