//! The clients of stateless requests, remembered. A 2026-07-28 request carries its client's
//! capabilities and info in its `_meta`, and a client sends the same text with every request:
//! the [`ClientInfo`] built from a text is kept, and shared by the requests that repeat it,
//! instead of each request building the same values again.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use crate::protocol::meta::{self, RequestMeta};
use crate::protocol::walk::JsonText;
use crate::protocol::{LogLevel, ProtocolVersion};
use crate::tool::ClientInfo;

/// What a stateless request's `_meta` said.
#[derive(Debug)]
pub(crate) struct Stateless {
    pub(crate) version: ProtocolVersion,
    pub(crate) client: Arc<ClientInfo>,
    pub(crate) log_level: Option<LogLevel>,
}

/// How many distinct clients are remembered; the one remembered first is forgotten first.
const REMEMBERED: usize = 16;

/// Texts longer than this (capabilities and info together, in bytes) are not remembered:
/// their values are built for the request alone.
const LONGEST: usize = 4096;

/// The clients remembered, at most [`REMEMBERED`] of at most [`LONGEST`] bytes each.
#[derive(Default)]
pub(crate) struct KnownClients {
    known: RwLock<VecDeque<Known>>,
    /// The `_meta` of the last stateless request, when it was the thread's kept one
    /// (`meta::shared_text`: shared, not copied), and what it said. A client sends the same
    /// `_meta` with every request: the next one that does is not checked and looked up again.
    last: Mutex<Option<(Arc<str>, Arc<Stateless>)>>,
}

struct Known {
    version: ProtocolVersion,
    capabilities: Box<str>,
    info: Box<str>,
    client: Arc<ClientInfo>,
    /// What a request of this client says, by the log level it asks for (none first).
    stateless: [OnceLock<Arc<Stateless>>; 9],
}

impl KnownClients {
    /// The client a request's `_meta` describes: the one remembered for the same texts, else
    /// one built now (and remembered when it is short).
    pub(crate) fn client(
        &self,
        version: ProtocolVersion,
        meta: &RequestMeta<'_>,
    ) -> Arc<ClientInfo> {
        let capabilities = meta.capabilities.get();
        let info = meta.client_info.map_or("", JsonText::get);
        let same = |k: &Known| {
            k.version == version && *k.capabilities == *capabilities && *k.info == *info
        };
        if let Some(known) = crate::sync::read(&self.known).iter().find(|k| same(k)) {
            return known.client.clone();
        }
        let (capabilities_value, info_value) = meta.values();
        let client = Arc::new(ClientInfo {
            protocol_version: version,
            info: info_value,
            capabilities: capabilities_value,
        });
        if capabilities.len() + info.len() <= LONGEST {
            let mut known = crate::sync::write(&self.known);
            if !known.iter().any(same) {
                if known.len() == REMEMBERED {
                    known.pop_front();
                }
                known.push_back(Known {
                    version,
                    capabilities: capabilities.into(),
                    info: info.into(),
                    client: client.clone(),
                    stateless: Default::default(),
                });
            }
        }
        client
    }
}

impl KnownClients {
    /// What the stateless request whose `_meta` is `text` says about itself, when that is the
    /// text the last one came with ([`KnownClients::remember`]), checked then.
    pub(crate) fn repeated(&self, text: &str) -> Option<Arc<Stateless>> {
        let last = crate::sync::lock(&self.last);
        let (kept, stateless) = last.as_ref()?;
        (**kept == *text).then(|| stateless.clone())
    }

    /// Keeps what a stateless request whose `_meta` is `text` said (checked), for the next
    /// that comes with the same text; only a `_meta` the thread keeps, shared with it.
    pub(crate) fn remember(&self, text: &str, stateless: &Arc<Stateless>) {
        if let Some(shared) = meta::shared_text(text) {
            *crate::sync::lock(&self.last) = Some((shared, stateless.clone()));
        }
    }

    /// What a stateless request says about itself: the one kept for a known client and the
    /// log level it asks for, else one made now.
    pub(crate) fn stateless(
        &self,
        version: ProtocolVersion,
        meta: &RequestMeta<'_>,
    ) -> Arc<Stateless> {
        let capabilities = meta.capabilities.get();
        let info = meta.client_info.map_or("", JsonText::get);
        let level = meta.log_level.map_or(0, |l| l as usize + 1);
        if let Some(known) = crate::sync::read(&self.known)
            .iter()
            .find(|k| k.version == version && *k.capabilities == *capabilities && *k.info == *info)
        {
            return known.stateless[level]
                .get_or_init(|| {
                    Arc::new(Stateless {
                        version,
                        client: known.client.clone(),
                        log_level: meta.log_level,
                    })
                })
                .clone();
        }
        Arc::new(Stateless {
            version,
            client: self.client(version, meta),
            log_level: meta.log_level,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::value::RawValue;

    fn meta(text: &str) -> RequestMeta<'static> {
        let raw: &'static RawValue =
            Box::leak(serde_json::from_str::<Box<RawValue>>(text).unwrap());
        let request =
            crate::protocol::request::Request::read(None, "tools/list".into(), Some(raw.into()));
        Box::leak(Box::new(request)).stateless_meta().unwrap()
    }

    fn params(capabilities: &str, info: &str) -> String {
        format!(
            r#"{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{capabilities}{info}}}}}"#
        )
    }

    #[test]
    fn the_same_texts_share_one_client_and_others_get_their_own() {
        let known = KnownClients::default();
        let v = ProtocolVersion::V2026_07_28;
        let info = r#","io.modelcontextprotocol/clientInfo":{"name":"a","version":"1"}"#;
        let first = known.client(v, &meta(&params(r#"{"sampling":{}}"#, info)));
        let again = known.client(v, &meta(&params(r#"{"sampling":{}}"#, info)));
        assert!(Arc::ptr_eq(&first, &again));
        assert!(first.has_capability("sampling"));
        assert_eq!(first.info["name"], "a");
        // Other capabilities, other info, no info: each its own client, with its own values.
        let other = known.client(v, &meta(&params("{}", info)));
        assert!(!other.has_capability("sampling"));
        let anonymous = known.client(v, &meta(&params(r#"{"sampling":{}}"#, "")));
        assert!(!Arc::ptr_eq(&first, &anonymous) && anonymous.info.is_null());
    }

    #[test]
    fn at_most_sixteen_short_clients_are_remembered() {
        let known = KnownClients::default();
        let v = ProtocolVersion::V2026_07_28;
        for n in 0..40 {
            let info = format!(r#","io.modelcontextprotocol/clientInfo":{{"name":"c{n}"}}"#);
            known.client(v, &meta(&params("{}", &info)));
        }
        let remembered = known.known.read().unwrap();
        assert_eq!(remembered.len(), REMEMBERED);
        assert!(remembered.back().unwrap().info.contains("c39"));
        drop(remembered);
        // A long text is built for its request and not kept.
        let long = format!(r#"{{"x":"{}"}}"#, "y".repeat(LONGEST));
        let first = known.client(v, &meta(&params(&long, "")));
        let again = known.client(v, &meta(&params(&long, "")));
        assert!(!Arc::ptr_eq(&first, &again));
        assert!(
            known
                .known
                .read()
                .unwrap()
                .iter()
                .all(|k| k.capabilities.len() < LONGEST)
        );
    }
    #[test]
    fn a_repeated_kept_meta_is_answered_as_the_last_request_was() {
        let known = KnownClients::default();
        let v = ProtocolVersion::V2026_07_28;
        let text = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
        // Read with a request, so the thread keeps it.
        let said = known.stateless(v, &meta(&format!(r#"{{"_meta":{text}}}"#)));
        assert!(known.repeated(text).is_none());
        known.remember(text, &said);
        assert!(Arc::ptr_eq(&known.repeated(text).unwrap(), &said));
        // Another text is not the last one; one the thread does not keep (a progress token
        // changes from one request to the next) is not remembered.
        let other = text.replace("{}}", r#"{"sampling":{}}}"#);
        assert!(known.repeated(&other).is_none());
        let token = text.replace("{}}", r#"{},"progressToken":1}"#);
        let with_token = known.stateless(v, &meta(&format!(r#"{{"_meta":{token}}}"#)));
        known.remember(&token, &with_token);
        assert!(known.repeated(&token).is_none());
        assert!(Arc::ptr_eq(&known.repeated(text).unwrap(), &said));
    }
}
