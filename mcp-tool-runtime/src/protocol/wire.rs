//! The typed wire model: every result, notification and request the server sends, as derived
//! `Serialize` types that borrow from what they describe. A revision that knows fewer fields
//! gets a view of the same type with those fields left out (`None` is never written), not an
//! edited `Value`.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};

use super::content::{Content, ResourceContents};
use super::error::RpcError;

/// `{}`: the result of `ping`, `logging/setLevel`, `resources/subscribe`, and a capability
/// with no options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Empty {}

/// The server's name and version (`Implementation`).
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Implementation {
    pub(crate) name: String,
    pub(crate) version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) title: Option<String>,
}

/// `{"listChanged": true}`.
#[derive(Debug, Clone, Copy, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListChanged {
    pub(crate) list_changed: bool,
}

/// The resources capability.
#[derive(Debug, Clone, Copy, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResourcesCapability {
    pub(crate) subscribe: bool,
    pub(crate) list_changed: bool,
}

/// What the server declares it can do.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct ServerCapabilities {
    /// Extensions the server speaks, by identifier (2026-07-28).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) extensions: Option<std::collections::BTreeMap<&'static str, Empty>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tools: Option<ListChanged>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) logging: Option<Empty>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) resources: Option<ResourcesCapability>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) prompts: Option<ListChanged>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) completions: Option<Empty>,
    /// 2025-11-25's tasks (`list`, `cancel`, `requests.tools.call`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tasks: Option<TasksCapability>,
}

/// The result of `initialize`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeResult<'a> {
    pub(crate) protocol_version: &'static str,
    pub(crate) capabilities: &'a ServerCapabilities,
    pub(crate) server_info: &'a Implementation,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) instructions: Option<&'a str>,
}

/// The params of `initialize`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeParams<'a> {
    #[serde(borrow)]
    pub(crate) protocol_version: std::borrow::Cow<'a, str>,
    #[serde(default)]
    pub(crate) capabilities: Value,
    #[serde(default)]
    pub(crate) client_info: Value,
}

/// A tool's hints (`ToolAnnotations`), with its title.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolAnnotations<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) title: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) read_only_hint: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) destructive_hint: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) idempotent_hint: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) open_world_hint: Option<bool>,
}

impl ToolAnnotations<'_> {
    pub(crate) fn is_empty(&self) -> bool {
        *self == ToolAnnotations::default()
    }
}

/// A tool's entry in `tools/list`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Tool<'a> {
    pub(crate) name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) title: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<&'a str>,
    pub(crate) input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) output_schema: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) annotations: Option<ToolAnnotations<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) icons: Option<&'a Value>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub(crate) meta: Option<&'a Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) execution: Option<ToolExecution>,
}

/// A tool's `execution` (2025-11-25): whether it runs as a task.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolExecution {
    pub(crate) task_support: &'static str,
}

/// One page of `tools/list`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListTools<'a> {
    pub(crate) tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) next_cursor: Option<String>,
}

/// The result of `tools/call` for a revision without structured content.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LegacyCallToolResult<'a> {
    pub(crate) content: Vec<std::borrow::Cow<'a, Content>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) is_error: bool,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub(crate) meta: Option<&'a Map<String, Value>>,
}

/// The params of a list request.
#[derive(Deserialize)]
pub(crate) struct ListParams<'a> {
    #[serde(borrow, default)]
    pub(crate) cursor: Option<std::borrow::Cow<'a, str>>,
}

/// The params of `tools/call`.
#[derive(Deserialize)]
pub(crate) struct CallToolParams<'a> {
    #[serde(borrow)]
    pub(crate) name: std::borrow::Cow<'a, str>,
    #[serde(default)]
    pub(crate) arguments: Value,
    #[serde(rename = "_meta", default)]
    pub(crate) meta: Option<Map<String, Value>>,
    /// 2025-11-25: run the call as a task.
    #[serde(default)]
    pub(crate) task: Option<TaskParams>,
}

/// `task` of a task-augmented request (2025-11-25).
#[derive(Deserialize, Default)]
pub(crate) struct TaskParams {
    /// How long the client wants the task kept, in milliseconds.
    #[serde(default)]
    pub(crate) ttl: Option<u64>,
}

/// A resource's entry in `resources/list`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Resource<'a> {
    pub(crate) uri: &'a str,
    #[serde(flatten)]
    pub(crate) described: Described<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) size: Option<u64>,
}

/// A resource template's entry in `resources/templates/list`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResourceTemplate<'a> {
    pub(crate) uri_template: &'a str,
    #[serde(flatten)]
    pub(crate) described: Described<'a>,
}

/// What resources and templates share.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Described<'a> {
    pub(crate) name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) title: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) mime_type: Option<&'a str>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub(crate) meta: Option<&'a Map<String, Value>>,
}

/// A prompt's entry in `prompts/list`.
#[derive(Serialize)]
pub(crate) struct Prompt<'a> {
    pub(crate) name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) title: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) arguments: &'a [PromptArgument],
}

/// An argument of a prompt.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PromptArgument {
    pub(crate) name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
    pub(crate) required: bool,
}

/// One page of `resources/list`, `resources/templates/list` or `prompts/list`: the items
/// under the list's own key.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Listing<'a> {
    Resources(Vec<Resource<'a>>),
    ResourceTemplates(Vec<ResourceTemplate<'a>>),
    Prompts(Vec<Prompt<'a>>),
}

/// A list page: the items and the cursor of the next page.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListPage<'a> {
    #[serde(flatten)]
    pub(crate) items: Listing<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) next_cursor: Option<String>,
}

/// The result of `resources/read`.
#[derive(Serialize)]
pub(crate) struct ReadResourceResult {
    pub(crate) contents: Vec<ResourceContents>,
}

/// The result of `completion/complete`.
#[derive(Serialize)]
pub(crate) struct CompleteResult<'a> {
    pub(crate) completion: Completion<'a>,
}

/// The values of a completion.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Completion<'a> {
    pub(crate) values: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) total: Option<usize>,
    pub(crate) has_more: bool,
}

/// The params of `notifications/progress`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProgressParams<'a> {
    pub(crate) progress_token: &'a Value,
    pub(crate) progress: Number,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) total: Option<Number>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) message: Option<&'a str>,
}

/// The params of `notifications/message`.
#[derive(Serialize)]
pub(crate) struct LogParams<'a> {
    pub(crate) level: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) logger: Option<&'a str>,
    pub(crate) data: &'a Value,
}

/// The params of `notifications/resources/updated` (and of a request naming a resource).
#[derive(Serialize, Deserialize)]
pub(crate) struct UriParams<'a> {
    #[serde(borrow)]
    pub(crate) uri: std::borrow::Cow<'a, str>,
}

/// The params of `elicitation/create` in form mode.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ElicitParams<'a> {
    pub(crate) mode: &'static str,
    pub(crate) message: &'a str,
    pub(crate) requested_schema: &'a Value,
}

/// The params of `notifications/cancelled`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CancelledParams<'a> {
    #[serde(borrow)]
    pub(crate) request_id: &'a RawValue,
}

/// The params of `logging/setLevel`.
#[derive(Deserialize)]
pub(crate) struct SetLevelParams<'a> {
    #[serde(borrow)]
    pub(crate) level: std::borrow::Cow<'a, str>,
}

/// The params of `prompts/get`.
#[derive(Deserialize)]
pub(crate) struct GetPromptParams {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) arguments: Map<String, Value>,
}

/// What `completion/complete` completes: an argument of a prompt or a variable of a resource
/// template.
#[derive(Deserialize)]
#[serde(tag = "type")]
pub(crate) enum CompleteRef {
    #[serde(rename = "ref/prompt")]
    Prompt { name: String },
    #[serde(rename = "ref/resource")]
    Resource { uri: String },
}

/// The params of `completion/complete`.
#[derive(Deserialize)]
pub(crate) struct CompleteParams {
    #[serde(rename = "ref")]
    pub(crate) reference: CompleteRef,
    pub(crate) argument: CompleteArgument,
    #[serde(default)]
    pub(crate) context: Option<CompleteContext>,
}

/// The argument being completed.
#[derive(Deserialize)]
pub(crate) struct CompleteArgument {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) value: String,
}

/// Arguments already known.
#[derive(Deserialize, Default)]
pub(crate) struct CompleteContext {
    #[serde(default)]
    pub(crate) arguments: Map<String, Value>,
}

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
#[derive(Serialize)]
pub(crate) struct ResultMeta<'a> {
    #[serde(rename = "io.modelcontextprotocol/serverInfo")]
    pub(crate) server_info: &'a Implementation,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub(crate) extra: Option<&'a Map<String, Value>>,
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
    pub(crate) structured_content: Option<&'a Value>,
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

/// A whole number as a JSON integer, anything else as a float (NaN and infinities, which JSON
/// cannot carry, as 0).
pub(crate) fn number(n: f64) -> Number {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        #[allow(clippy::cast_possible_truncation)] // checked: integral and in range
        Number::from(n as i64)
    } else {
        Number::from_f64(n).unwrap_or_else(|| Number::from(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn list_pages_put_their_items_under_their_own_key() {
        let page = ListPage {
            items: Listing::Prompts(vec![Prompt {
                name: "p",
                title: None,
                description: Some("d"),
                arguments: &[],
            }]),
            next_cursor: Some("2".into()),
        };
        assert_eq!(
            serde_json::to_value(&page).unwrap(),
            json!({"prompts": [{"name": "p", "description": "d"}], "nextCursor": "2"})
        );
        assert_eq!(
            serde_json::to_value(Empty {}).unwrap(),
            json!({}),
            "an empty result is an object"
        );
    }

    #[test]
    fn numbers_are_integers_when_whole() {
        assert_eq!(Value::from(number(3.0)), json!(3));
        assert_eq!(Value::from(number(0.5)), json!(0.5));
        assert_eq!(Value::from(number(f64::NAN)), json!(0));
    }
}

/// A task as a result or notification shows it: 2025-11-25's names (`ttl`, `pollInterval`)
/// or the 2026-07-28 extension's (`ttlMs`, `pollIntervalMs`), whichever is set.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskView<'a> {
    pub(crate) task_id: &'a str,
    pub(crate) status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) status_message: Option<&'a str>,
    pub(crate) created_at: String,
    pub(crate) last_updated_at: String,
    /// 2025-11-25: the time to live (`null`: unlimited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ttl: Option<Option<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) poll_interval: Option<u64>,
    /// 2026-07-28: the time to live (`null`: unlimited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ttl_ms: Option<Option<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) poll_interval_ms: Option<u64>,
}

/// 2025-11-25's `CreateTaskResult`.
#[derive(Serialize)]
pub(crate) struct CreateTask<'a> {
    pub(crate) task: TaskView<'a>,
}

/// 2026-07-28's flat `CreateTaskResult` (`resultType: "task"`).
#[derive(Serialize)]
pub(crate) struct CreatedTask<'a> {
    #[serde(flatten)]
    pub(crate) task: TaskView<'a>,
    #[serde(rename = "resultType")]
    pub(crate) result_type: &'static str,
    #[serde(rename = "_meta")]
    pub(crate) meta: ResultMeta<'a>,
}

/// The detailed task of 2026-07-28's `tasks/get`: its questions, result or error inlined.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DetailedTask<'a> {
    #[serde(flatten)]
    pub(crate) task: TaskView<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) input_requests: Option<&'a Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<&'a RpcError>,
}

/// The result of 2025-11-25's `tasks/list`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListTasks<'a> {
    pub(crate) tasks: Vec<TaskView<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) next_cursor: Option<&'a str>,
}

/// 2025-11-25's `tasks` server capability: listing, cancelling, and task-augmented
/// `tools/call`.
#[derive(Debug, Clone, Serialize, Default)]
pub(crate) struct TasksCapability {
    pub(crate) list: Empty,
    pub(crate) cancel: Empty,
    pub(crate) requests: TaskRequests,
}

/// Which requests may be tasks.
#[derive(Debug, Clone, Serialize, Default)]
pub(crate) struct TaskRequests {
    pub(crate) tools: TaskToolRequests,
}

/// `tools/call` may be a task.
#[derive(Debug, Clone, Serialize, Default)]
pub(crate) struct TaskToolRequests {
    pub(crate) call: Empty,
}

/// `{extensions: {id: {}}}`.
#[derive(Serialize)]
pub(crate) struct ExtensionsOf<'a> {
    pub(crate) extensions: std::collections::BTreeMap<&'a str, Empty>,
}
