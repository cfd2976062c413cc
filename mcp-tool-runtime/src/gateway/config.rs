//! The configuration of a mounted server, with exactly the `MCPTool` document's fields (and
//! its JSON shape: a list of `{"type": "mcp", …}` objects), and how its rules resolve:
//! `allowed_tools`, `require_approval`, `tool_configs` with `*`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The separator between a server's label and a remote tool's name: `calc__add`. MCP-valid,
/// and accepted by hosts that allow only letters, digits, `_` and `-` in tool names.
pub const LABEL_SEPARATOR: &str = "__";

/// A remote MCP server mounted beside the local tools (the `MCPTool` interface). `Default`
/// gives `type: "mcp"` and nothing else: set the label and one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpTool {
    /// `"mcp"`, or `"openapi"` for an HTTP service mounted by its OpenAPI document (`spec`).
    #[serde(rename = "type", default = "mcp")]
    pub kind: String,
    /// Names the server in its tools' names (`label__tool`): letters, digits, `_`, `-`.
    pub server_label: String,
    /// The server's Streamable HTTP endpoint. One of `server_url`, `connector_id` and
    /// `command` is needed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_url: Option<String>,
    /// A service connector, resolved to a URL (and its credentials) through the connection
    /// store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connector_id: Option<String>,
    /// What the server is for: added to each of its tools' descriptions, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_description: Option<String>,
    /// Which of its tools are listed and callable: a list of names, or a filter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<AllowedTools>,
    /// Which calls the user approves first: `"always"`, `"never"` (the default), or lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_approval: Option<RequireApproval>,
    /// Headers sent with every request to this server (and to no other).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, String>>,
    /// An OAuth access token the application obtained, sent as a bearer token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization: Option<String>,
    /// A connection in the connection store holding the credentials (so no secret sits in
    /// the mount file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_connection_id: Option<String>,
    /// Per-tool settings by remote tool name; `*` is the default. An exact name wins over
    /// `*`; names the server does not have are ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_configs: Option<BTreeMap<String, ToolConfig>>,
    /// The server's tools are not listed but found through tool search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defer_loading: Option<bool>,
    /// Beside the document's fields: a local server started as this command (stdio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// `type: "openapi"`: the service's OpenAPI document (3.0 or 3.1, JSON), a URL or a
    /// path; its operations are the tools. `server_url` then replaces the document's
    /// `servers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<String>,
}

fn mcp() -> String {
    "mcp".into()
}

impl Default for McpTool {
    fn default() -> Self {
        McpTool {
            kind: mcp(),
            server_label: String::new(),
            server_url: None,
            connector_id: None,
            server_description: None,
            allowed_tools: None,
            require_approval: None,
            headers: None,
            authorization: None,
            project_connection_id: None,
            tool_configs: None,
            defer_loading: None,
            command: None,
            spec: None,
        }
    }
}

/// `allowed_tools`: names, or a filter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AllowedTools {
    /// These tools only.
    Names(Vec<String>),
    /// The tools the filter matches.
    Filter(ToolFilter),
}

/// Matches tools by name and by their read-only hint (`MCPToolFilter`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolFilter {
    /// Tools named so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_names: Option<Vec<String>>,
    /// Tools whose `readOnlyHint` is this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
}

impl ToolFilter {
    /// Whether the filter matches a remote tool (every criterion given must hold).
    pub fn matches(&self, name: &str, read_only: bool) -> bool {
        self.tool_names
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == name))
            && self.read_only.is_none_or(|r| r == read_only)
    }
}

/// `require_approval`: `"always"`, `"never"`, or which tools always/never need it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequireApproval {
    /// `"always"` or `"never"`.
    Mode(Approval),
    /// `{always: filter, never: filter}` (`MCPToolRequireApproval`); a tool matched by
    /// neither needs approval.
    Lists {
        /// Tools that always need approval.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        always: Option<ToolFilter>,
        /// Tools that never do.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        never: Option<ToolFilter>,
    },
}

/// Whether a call is approved by the user first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Approval {
    /// Every call is.
    Always,
    /// No call is.
    Never,
}

/// Per-tool settings (`tool_configs`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolConfig {
    /// Found through tool search instead of listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defer_loading: Option<bool>,
    /// Whether the user approves each call first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_approval: Option<Approval>,
    /// The tool's description as the model should read it (replacing the server's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Behaviour hints replacing those an OpenAPI operation's method gives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolHints>,
}

/// A tool's behaviour hints as a mount file gives them (`tool_configs`), in MCP's words.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolHints {
    /// The tool does not change its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy what it changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling it again with the same arguments changes nothing more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// It reaches entities outside the gateway's world.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// How one remote tool is mounted, once every rule is resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub(crate) allowed: bool,
    pub(crate) approval: bool,
    pub(crate) deferred: bool,
    pub(crate) description: Option<String>,
}

impl McpTool {
    /// The settings of the remote tool `name`: `tool_configs[name]`, else `tool_configs["*"]`,
    /// else the server-wide fields.
    pub(crate) fn resolve(&self, name: &str, read_only: bool) -> Resolved {
        let configs = self.tool_configs.as_ref();
        let exact = configs.and_then(|c| c.get(name));
        let any = configs.and_then(|c| c.get("*"));
        let setting = |pick: fn(&ToolConfig) -> Option<bool>| {
            exact.and_then(pick).or_else(|| any.and_then(pick))
        };
        let allowed = match &self.allowed_tools {
            None => true,
            Some(AllowedTools::Names(names)) => names.iter().any(|n| n == name),
            Some(AllowedTools::Filter(f)) => f.matches(name, read_only),
        };
        let server_wide = match &self.require_approval {
            None | Some(RequireApproval::Mode(Approval::Never)) => false,
            Some(RequireApproval::Mode(Approval::Always)) => true,
            Some(RequireApproval::Lists { always, never }) => {
                if always.as_ref().is_some_and(|f| f.matches(name, read_only)) {
                    true
                } else {
                    !never.as_ref().is_some_and(|f| f.matches(name, read_only))
                }
            }
        };
        let approval =
            setting(|c| c.require_approval.map(|a| a == Approval::Always)).unwrap_or(server_wide);
        let deferred = setting(|c| c.defer_loading).unwrap_or(self.defer_loading == Some(true));
        let description = exact
            .and_then(|c| c.description.clone())
            .or_else(|| any.and_then(|c| c.description.clone()));
        Resolved {
            allowed,
            approval,
            deferred,
            description,
        }
    }

    /// What is wrong with the configuration, if anything (checked when the server starts).
    pub(crate) fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let label = &self.server_label;
        // An `openapi` mount's own fields are checked with the rest of its code.
        if self.kind != "mcp" && self.kind != "openapi" {
            problems.push(format!(
                "mount `{label}`: `type` must be \"mcp\" or \"openapi\", not {:?}",
                self.kind
            ));
        }
        if label.is_empty()
            || label.len() > 64
            || !label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            || label.contains(LABEL_SEPARATOR)
            // `a_` and `a` would name tools alike (`a_` + `__x` and `a` + `___x`): a label
            // that ends with `_` makes the prefix ambiguous.
            || label.ends_with('_')
        {
            problems.push(format!(
                "mount `{label}`: `server_label` must be 1-64 letters, digits, `_` or `-`, with no `__` and no `_` at its end (so that `label__tool` names one mount's tool only)"
            ));
        }
        let targets = [
            self.server_url.is_some(),
            self.connector_id.is_some(),
            self.command.is_some(),
        ];
        // A project connection may name the server itself (its `server_url`).
        let given = targets.iter().filter(|t| **t).count();
        if self.kind == "openapi" {
            // Its `spec` is its target; `server_url` only overrides the document's servers.
        } else if self.spec.is_some() {
            problems.push(format!(
                "mount `{label}`: `spec` is for `\"type\": \"openapi\"` mounts"
            ));
        } else if given > 1 || (given == 0 && self.project_connection_id.is_none()) {
            problems.push(format!(
                "mount `{label}`: give exactly one of `server_url`, `connector_id` and `command` (or a `project_connection_id` whose connection has a `server_url`)"
            ));
        }
        if self.command.as_ref().is_some_and(Vec::is_empty) {
            problems.push(format!("mount `{label}`: `command` names no program"));
        }
        problems
    }
}

/// Reads a mount file: a list of `{"type": "mcp", …}` objects (or one).
pub fn read_mounts(text: &str) -> Result<Vec<McpTool>, MountFileError> {
    let value: Value = serde_json::from_str(text).map_err(MountFileError::NotJson)?;
    let list = match value {
        Value::Array(items) => items,
        one @ Value::Object(_) => vec![one],
        _ => return Err(MountFileError::NotAList),
    };
    list.into_iter()
        .enumerate()
        .map(|(i, item)| {
            serde_json::from_value::<McpTool>(item).map_err(|error| MountFileError::Entry {
                entry: i + 1,
                error,
            })
        })
        .collect()
}

/// Why a mount file was refused ([`read_mounts`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MountFileError {
    /// The text is not JSON (the error has its line and column).
    #[error("not JSON: {0}")]
    NotJson(serde_json::Error),
    /// The JSON is neither a list nor one object.
    #[error("expected a list of {{\"type\": \"mcp\", …}} objects")]
    NotAList,
    /// An entry is not an `MCPTool` object: a field unknown, missing or of the wrong type.
    #[error("entry {entry}: {error}")]
    Entry {
        /// The entry's position in the list, from 1.
        entry: usize,
        /// What is wrong with it.
        error: serde_json::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mount(v: Value) -> McpTool {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn an_exact_name_wins_over_the_star_and_the_server_wide_setting() {
        let m = mount(json!({
            "type": "mcp", "server_label": "s", "server_url": "http://x",
            "require_approval": "always",
            "tool_configs": {
                "*": {"require_approval": "never", "defer_loading": true},
                "delete": {"require_approval": "always"},
                "ghost": {"defer_loading": false}
            }
        }));
        let delete = m.resolve("delete", false);
        assert!(delete.approval && delete.deferred && delete.allowed);
        let read = m.resolve("read", true);
        assert!(!read.approval && read.deferred);
        // `ghost` is not a tool of the server: its entry is simply never consulted.
        let plain =
            mount(json!({"server_label": "s", "server_url": "http://x"})).resolve("x", false);
        assert_eq!(
            plain,
            Resolved {
                allowed: true,
                approval: false,
                deferred: false,
                description: None
            }
        );
    }

    #[test]
    fn allowed_tools_and_approval_lists_filter_by_name_and_read_only() {
        let m = mount(json!({
            "server_label": "s", "server_url": "http://x",
            "allowed_tools": {"read_only": true},
            "require_approval": {"never": {"tool_names": ["get"]}}
        }));
        assert!(m.resolve("get", true).allowed);
        assert!(!m.resolve("put", false).allowed);
        assert!(!m.resolve("get", true).approval);
        assert!(
            m.resolve("list", true).approval,
            "matched by neither list: approval"
        );
        let names =
            mount(json!({"server_label": "s", "server_url": "http://x", "allowed_tools": ["a"]}));
        assert!(names.resolve("a", false).allowed && !names.resolve("b", true).allowed);
    }

    #[test]
    fn bad_configurations_are_named() {
        let m =
            mount(json!({"server_label": "a__b", "server_url": "http://x", "connector_id": "c"}));
        let text = m.problems().join("\n");
        assert!(
            text.contains("server_label") && text.contains("exactly one"),
            "{text}"
        );
        // `a_` beside `a` would make `a___x` ambiguous: refused.
        let m = mount(json!({"server_label": "a_", "server_url": "http://x"}));
        assert!(
            m.problems().join("\n").contains("no `_` at its end"),
            "{:?}",
            m.problems()
        );
        assert!(
            mount(json!({"server_label": "_a-b_c", "server_url": "http://x"}))
                .problems()
                .is_empty()
        );
        let e = read_mounts(
            r#"[{"type":"mcp","server_label":"s","server_url":"http://x"},
                {"type":"mcp","server_label":"t","server_url":"http://x","colour":1}]"#,
        )
        .unwrap_err();
        assert!(
            matches!(&e, MountFileError::Entry { entry: 2, error } if error.to_string().contains("colour")),
            "{e}"
        );
        assert!(
            e.to_string().starts_with("entry 2: unknown field `colour`"),
            "{e}"
        );
        assert!(matches!(read_mounts("7"), Err(MountFileError::NotAList)));
        match read_mounts("[\n{]") {
            Err(MountFileError::NotJson(e)) => assert_eq!(e.line(), 2),
            other => panic!("{other:?}"),
        }
    }
}
