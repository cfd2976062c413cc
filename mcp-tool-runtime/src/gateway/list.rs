//! A mount's list: the remote's tools read within the bounds a gateway keeps
//! (`Limits::max_mount_list`), registered as `label__tool` by the mount's rules, each name
//! once, and a list announced again unchanged told by its digest and re-read less and less
//! often.

use std::collections::BTreeSet;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::Value;

use crate::client::{ClientError, McpClient};
use crate::tool::{Annotations, DynamicArgs, DynamicTool};

use super::config::{self, LABEL_SEPARATOR};
use super::{Mount, ServerHandle};

/// How long a re-list waits after one that found nothing changed; doubled each time it
/// happens again, up to [`RELIST_PAUSE_MAX`].
pub(super) const RELIST_PAUSE: Duration = Duration::from_millis(500);
pub(super) const RELIST_PAUSE_MAX: Duration = Duration::from_secs(30);

/// Feeds what is written to a hasher.
struct HashWriter<'a, H>(&'a mut H);

impl<H: Hasher> std::io::Write for HashWriter<'_, H> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Mount {
    /// Registers the remote's allowed tools (and removes those it no longer has); whether
    /// the list differed from the last one (a list unchanged is not looked at further).
    pub(super) async fn sync(
        self: &Arc<Self>,
        server: &ServerHandle,
        client: &McpClient,
    ) -> Result<bool, String> {
        let limits = &server.shared.limits;
        let tools = client
            .list_tools_within(limits.max_mount_tools, limits.max_mount_bytes)
            .await
            .map_err(|e| match e {
                ClientError::Protocol(why) => format!(
                    "{why} (the most a gateway takes from one server: `Limits::max_mount_list`)"
                ),
                e => e.to_string(),
            })?;
        let digest = {
            let mut hasher = self.digests.build_hasher();
            let _ = serde_json::to_writer(HashWriter(&mut hasher), &tools);
            hasher.finish()
        };
        if self.digest.swap(digest, Ordering::SeqCst) == digest {
            return Ok(false);
        }
        let remote_names: BTreeSet<String> = tools
            .iter()
            .filter_map(|t| t["name"].as_str().map(String::from))
            .collect();
        for key in self.config.tool_configs.iter().flat_map(|c| c.keys()) {
            if key != "*" && !remote_names.contains(key) {
                tracing::debug!(mount = %self.label(), tool = %key, "`tool_configs` names a tool the server does not have; ignored");
            }
        }
        let mut add = Vec::new();
        let (tools, repeated) = unique_by_name(&tools);
        if !repeated.is_empty() {
            tracing::warn!(mount = %self.label(), tools = ?repeated, "the mounted server lists these tools more than once: the first of each is mounted");
        }
        for tool in tools {
            let Some(remote) = tool["name"].as_str() else {
                continue;
            };
            let read_only = tool["annotations"]["readOnlyHint"] == Value::Bool(true);
            let rules = self.config.resolve(remote, read_only);
            if !rules.allowed {
                continue;
            }
            let name = format!("{}{LABEL_SEPARATOR}{remote}", self.label());
            add.push(self.tool(&name, remote, tool, rules));
        }
        let mut names = crate::sync::lock(&self.names);
        replace_tools(
            server,
            self.label(),
            &mut names,
            add,
            "a remote tool could not be mounted",
        );
        Ok(true)
    }

    /// The local tool that stands for the remote tool `remote`.
    pub(super) fn tool(
        self: &Arc<Self>,
        name: &str,
        remote: &str,
        def: &Value,
        rules: config::Resolved,
    ) -> DynamicTool {
        let mut description = rules
            .description
            .clone()
            .or_else(|| def["description"].as_str().map(String::from))
            .unwrap_or_default();
        if let Some(about) = &self.config.server_description {
            description.push_str(&format!(
                "\n\n(From the `{}` server: {about})",
                self.label()
            ));
        }
        let mount = self.clone();
        let remote_name = remote.to_owned();
        let approval = rules.approval;
        let mut tool = DynamicTool::new(name, description, move |args: DynamicArgs| {
            let mount = mount.clone();
            let remote = remote_name.clone();
            async move { mount.forward(&remote, args, approval).await }
        });
        let hint = |key: &str| def["annotations"][key].as_bool();
        tool = tool.forwarded().annotations(Annotations {
            read_only: hint("readOnlyHint"),
            destructive: hint("destructiveHint"),
            idempotent: hint("idempotentHint"),
            open_world: hint("openWorldHint"),
        });
        if let Some(title) = def["title"].as_str() {
            tool = tool.title(title);
        }
        if def["inputSchema"].is_object() {
            tool = tool.input_schema(def["inputSchema"].clone());
        }
        if def["outputSchema"].is_object() {
            tool = tool.output_schema(def["outputSchema"].clone());
        }
        if rules.deferred {
            tool = tool.deferred();
        }
        tool
    }
}

/// The tools of a list with a name, each name once (the first wins), and the names listed
/// more than once.
fn unique_by_name(tools: &[Value]) -> (Vec<&Value>, Vec<String>) {
    let mut seen = BTreeSet::new();
    let mut repeated = BTreeSet::new();
    let mut unique = Vec::new();
    for tool in tools {
        let Some(name) = tool["name"].as_str() else {
            continue;
        };
        if seen.insert(name) {
            unique.push(tool);
        } else {
            repeated.insert(name.to_owned());
        }
    }
    (unique, repeated.into_iter().collect())
}

/// Puts the tools `add` in place of those a mount had registered (`names`): those no longer
/// listed go, all in one change of the catalog. A tool the server could not take is logged
/// with `what`; the problem names a tool from outside, so it is logged quoted and escaped,
/// and a name cannot forge a log line.
pub(super) fn replace_tools(
    server: &ServerHandle,
    label: &str,
    names: &mut BTreeSet<String>,
    add: Vec<DynamicTool>,
    what: &str,
) {
    let now: BTreeSet<String> = add.iter().map(|t| t.name().to_owned()).collect();
    let gone: Vec<String> = names.difference(&now).cloned().collect();
    *names = now;
    for problem in server.update_dynamic_tools(add, &gone) {
        tracing::warn!(mount = %label, problem = ?problem, "{what}");
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::unique_by_name;

    #[test]
    fn a_tool_listed_twice_is_mounted_once() {
        let tools = vec![
            json!({"name": "a", "description": "first"}),
            json!({"name": "b"}),
            json!({"name": "a", "description": "second"}),
            json!({"title": "no name"}),
        ];
        let (unique, repeated) = unique_by_name(&tools);
        assert_eq!(unique.len(), 2);
        assert_eq!(unique[0]["description"], "first");
        assert_eq!(repeated, ["a"]);
    }
}
