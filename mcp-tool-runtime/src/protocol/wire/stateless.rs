//! The shapes 2026-07-28 added: cache hints, the result envelope (`resultType`, the server's
//! identity in `_meta`), `server/discover`, input-required rounds, `subscriptions/listen`,
//! and the roots a client lists.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{Implementation, ServerCapabilities};
use crate::protocol::content::Content;

/// How long, and for whom, a client may keep a result (`ttlMs`, `cacheScope`; 2026-07-28).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheHints {
    /// Milliseconds the result stays fresh (0: stale at once).
    pub ttl_ms: u64,
    /// Who may share a cached copy.
    pub cache_scope: CacheScope,
}

impl CacheHints {
    /// Fresh for `ttl`, shareable by every user.
    pub fn public(ttl: std::time::Duration) -> Self {
        CacheHints {
            ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
            cache_scope: CacheScope::Public,
        }
    }

    /// Fresh for `ttl`, for the one user (authorization context) who asked.
    pub fn private(ttl: std::time::Duration) -> Self {
        CacheHints {
            cache_scope: CacheScope::Private,
            ..CacheHints::public(ttl)
        }
    }

    /// Not to be reused: stale at once, private.
    pub const NONE: CacheHints = CacheHints {
        ttl_ms: 0,
        cache_scope: CacheScope::Private,
    };
}

/// Who may share a cached result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Any user: the result does not depend on who asks.
    Public,
    /// Only the user (authorization context) who asked.
    Private,
}

/// A result's `_meta` in 2026-07-28: the server's identity, beside the result's own entries.
/// Without entries of its own (nearly always) it is the same text for every result, written
/// once per server and then copied.
pub(crate) struct ResultMeta<'a> {
    pub(crate) server_info: &'a Implementation,
    pub(crate) extra: Option<&'a Map<String, Value>>,
}

/// The key of the server's identity in a result's `_meta`.
const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

impl Serialize for ResultMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self.extra {
            Some(extra) if !extra.is_empty() => {
                let mut map = serializer.serialize_map(Some(1 + extra.len()))?;
                map.serialize_entry(SERVER_INFO, self.server_info)?;
                for (key, value) in extra {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
            _ => self.server_info.result_meta().serialize(serializer),
        }
    }
}

impl Implementation {
    /// `{"io.modelcontextprotocol/serverInfo": …}`, rendered the first time it is asked for.
    pub(crate) fn result_meta(&self) -> &RawValue {
        self.result_meta.get_or_init(|| {
            #[derive(Serialize)]
            struct Alone<'a> {
                #[serde(rename = "io.modelcontextprotocol/serverInfo")]
                server_info: &'a Implementation,
            }
            // Strings and icons: it always serializes.
            serde_json::value::to_raw_value(&Alone { server_info: self })
                .unwrap_or_else(|_| RawValue::NULL.to_owned())
        })
    }
}

/// A complete result of 2026-07-28: the result, its `resultType`, its cache hints if it is
/// cacheable, and the server's identity in `_meta`.
#[derive(Serialize)]
pub(crate) struct Complete<'a, T> {
    #[serde(flatten)]
    pub(crate) result: T,
    #[serde(rename = "resultType")]
    pub(crate) result_type: &'static str,
    #[serde(flatten)]
    pub(crate) cache: Option<CacheHints>,
    #[serde(rename = "_meta")]
    pub(crate) meta: ResultMeta<'a>,
}

/// The result of `server/discover`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DiscoverResult<'a> {
    pub(crate) supported_versions: Vec<&'static str>,
    pub(crate) capabilities: &'a ServerCapabilities,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) instructions: Option<&'a str>,
}

/// The result of `tools/call` in 2026-07-28.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StatelessCallToolResult<'a> {
    pub(crate) content: &'a [Content],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) structured_content: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) is_error: bool,
    pub(crate) result_type: &'static str,
    #[serde(rename = "_meta")]
    pub(crate) meta: ResultMeta<'a>,
}

/// A request the server needs answered before it can complete a request (2026-07-28):
/// `elicitation/create`, `sampling/createMessage` or `roots/list`, without `id` or `jsonrpc`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct InputRequest<'a, P> {
    pub(crate) method: &'a str,
    pub(crate) params: P,
}

/// An interim result asking the client for input, and the state it echoes when it retries.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InputRequiredResult<'a> {
    pub(crate) result_type: &'static str,
    pub(crate) input_requests: &'a Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) request_state: Option<&'a str>,
    #[serde(rename = "_meta")]
    pub(crate) meta: ResultMeta<'a>,
}

/// What a retry of a request that needed input carries (beside its own params).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Retry {
    /// The answers, by the keys of the input requests (anything else is ignored).
    #[serde(default, deserialize_with = "object_or_nothing")]
    pub(crate) input_responses: Map<String, Value>,
    #[serde(default)]
    pub(crate) request_state: Option<String>,
}

/// An object, or (anything else, `null` included) nothing: the answers of a retry that sent
/// no object are no answers.
fn object_or_nothing<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Map<String, Value>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Object(m) => m,
        _ => Map::new(),
    })
}

/// Which notifications a `subscriptions/listen` stream carries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SubscriptionFilter {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) tools_list_changed: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) prompts_list_changed: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) resources_list_changed: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) resource_subscriptions: Vec<String>,
}

/// The params of `subscriptions/listen`.
#[derive(Deserialize)]
pub(crate) struct ListenParams {
    #[serde(default)]
    pub(crate) notifications: SubscriptionFilter,
}

/// A notification's `_meta` on a listen stream: the subscription it belongs to.
#[derive(Serialize)]
pub(crate) struct SubscriptionMeta<'a> {
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    pub(crate) subscription_id: &'a RawValue,
}

/// The params of a notification on a listen stream: its own, and the subscription's `_meta`.
#[derive(Serialize)]
pub(crate) struct Tagged<'a, P> {
    #[serde(flatten)]
    pub(crate) params: P,
    #[serde(rename = "_meta")]
    pub(crate) meta: SubscriptionMeta<'a>,
}

/// The params of `notifications/subscriptions/acknowledged`.
#[derive(Serialize)]
pub(crate) struct Acknowledged<'a> {
    pub(crate) notifications: &'a SubscriptionFilter,
}

/// The result that ends a listen stream.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListenResult<'a> {
    pub(crate) result_type: &'static str,
    #[serde(rename = "_meta")]
    pub(crate) meta: ListenResultMeta<'a>,
}

/// The `_meta` of the result that ends a listen stream.
#[derive(Serialize)]
pub(crate) struct ListenResultMeta<'a> {
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    pub(crate) subscription_id: &'a RawValue,
    #[serde(rename = "io.modelcontextprotocol/serverInfo")]
    pub(crate) server_info: &'a Implementation,
}

/// A root the client exposes (`roots/list`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// The root's URI (`file:///…`).
    pub uri: String,
    /// A name for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The result of `roots/list`.
#[derive(Deserialize)]
pub(crate) struct ListRootsResult {
    pub(crate) roots: Vec<Root>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_result_meta_is_the_server_info_and_its_own_entries() {
        let info = Implementation {
            name: "s".into(),
            version: "1".into(),
            ..Implementation::default()
        };
        let alone = json!({"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}});
        for extra in [None, Some(Map::new())] {
            let meta = ResultMeta {
                server_info: &info,
                extra: extra.as_ref(),
            };
            // Twice: the second time from the text rendered the first.
            for _ in 0..2 {
                assert_eq!(serde_json::to_value(&meta).unwrap(), alone);
                assert_eq!(
                    serde_json::to_string(&meta).unwrap(),
                    r#"{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}"#
                );
            }
        }
        let extra = Map::from_iter([("k".to_owned(), json!([1]))]);
        let meta = ResultMeta {
            server_info: &info,
            extra: Some(&extra),
        };
        assert_eq!(
            serde_json::to_string(&meta).unwrap(),
            r#"{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"},"k":[1]}"#
        );
    }
}
