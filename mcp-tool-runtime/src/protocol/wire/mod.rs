//! The typed wire model: every result, notification and request the server sends, as derived
//! `Serialize` types that borrow from what they describe. A version that knows fewer fields
//! gets a view of the same type with those fields left out (`None` is never written), not an
//! edited `Value`.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};

use super::content::{Content, ResourceContents};
mod stateless;
mod tasks;

pub(crate) use stateless::*;
pub use stateless::{CacheHints, CacheScope, Root};
pub(crate) use tasks::*;

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
    /// What the server does (2026-07-28).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
    #[serde(rename = "websiteUrl", skip_serializing_if = "Option::is_none")]
    pub(crate) website_url: Option<String>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) icons: Vec<Icon>,
    /// The `_meta` of a 2026-07-28 result with no entries of its own, rendered once
    /// ([`ResultMeta`]).
    #[serde(skip)]
    pub(crate) result_meta: std::sync::OnceLock<Box<RawValue>>,
}

/// An icon of a server, a tool, a resource or a prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// Where it is: an `https:` URL or a `data:` URI.
    pub src: String,
    /// Its MIME type (`image/png`, `image/svg+xml`…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The sizes it is drawn for (`48x48`, `any`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<String>,
    /// The theme it suits: `light` or `dark`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
}

impl Icon {
    /// An icon at `src`.
    pub fn new(src: impl Into<String>) -> Self {
        Icon {
            src: src.into(),
            mime_type: None,
            sizes: Vec::new(),
            theme: None,
        }
    }

    /// Its MIME type.
    #[must_use]
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// A size it is drawn for.
    #[must_use]
    pub fn size(mut self, size: impl Into<String>) -> Self {
        self.sizes.push(size.into());
        self
    }

    /// The theme it suits (`light`, `dark`).
    #[must_use]
    pub fn theme(mut self, theme: impl Into<String>) -> Self {
        self.theme = Some(theme.into());
        self
    }
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
    /// Extensions the server speaks, by identifier, each with its settings (`{}` for none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) extensions: Option<std::collections::BTreeMap<&'static str, Value>>,
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

/// The result of `tools/call` for a version without structured content.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UnstructuredCallToolResult<'a> {
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
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) icons: &'a [Icon],
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
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) icons: &'a [Icon],
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

/// The params of `elicitation/create` in URL mode: the user is sent to a page of the server's
/// (a sign-in, a payment) instead of filling a form.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ElicitUrlParams<'a> {
    pub(crate) mode: &'static str,
    pub(crate) message: &'a str,
    pub(crate) url: &'a str,
    pub(crate) elicitation_id: &'a str,
}

/// The params of `notifications/elicitation/complete`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ElicitationCompleteParams<'a> {
    pub(crate) elicitation_id: &'a str,
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
                icons: &[],
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
