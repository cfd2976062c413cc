//! A signed-in user's tools: listed as the mount's rules allow them, followed while the
//! user's connection lasts, and registered with the tools of every other signed-in user.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::client::McpClient;
use crate::sync::lock;

use super::super::config::LABEL_SEPARATOR;
use super::super::list::replace_tools;
use super::super::redirect::SignInAgent;
use super::super::{Mount, ServerHandle};
use super::{Failed, Phase, SIGN_IN, User};

impl Mount {
    /// Lists a signed-in user's tools, and again whenever their server says they changed,
    /// until the connection ends (the user is then signed out; their tokens stay). The
    /// browser's page says "signed in" once the tools are listed, not before: a call the user
    /// makes on seeing it finds them.
    pub(super) async fn follow(
        self: Arc<Self>,
        server: ServerHandle,
        user: Arc<User>,
        client: McpClient,
        (generation, id, mut agent): (u64, Arc<str>, Option<Arc<SignInAgent>>),
    ) {
        let mut changes = client.tool_changes();
        loop {
            let listed = self.user_tools(&server, &client).await;
            if !user.current(generation) {
                // Signed out meanwhile: the phase and the list are another sign-in's now.
                if let Some(agent) = agent {
                    agent.finish(Err("another sign-in took its place".into()));
                }
                client.close().await;
                return;
            }
            match listed {
                Ok(tools) => {
                    let tools = Arc::new(tools);
                    *lock(&user.listed) = tools.clone();
                    self.register_users_tools(&server);
                    user.set(generation, Phase::In(client.clone(), tools));
                    if let Some(agent) = agent.take() {
                        agent.finish(Ok(()));
                    }
                }
                Err(e) => {
                    tracing::warn!(mount = %self.label(), error = %e, "a user's tools could not be listed");
                    if let Some(agent) = agent {
                        agent.finish(Err(format!("its tools could not be listed: {e}")));
                    }
                    user.set(generation, Phase::Out(Some(Failed { id, why: e })));
                    break;
                }
            }
            if !changes.next().await {
                user.set(generation, Phase::Out(None));
                break;
            }
        }
        client.close().await;
        if user.current(generation) {
            *lock(&user.listed) = Arc::default();
            self.register_users_tools(&server);
        }
    }

    /// The remote tools a user's connection lists, as the mount's rules allow them.
    async fn user_tools(
        &self,
        server: &ServerHandle,
        client: &McpClient,
    ) -> Result<BTreeMap<String, Value>, String> {
        let limits = &server.shared.limits;
        let tools = client
            .list_tools_within(limits.max_mount_tools, limits.max_mount_bytes)
            .await
            .map_err(|e| e.to_string())?;
        let mut allowed = BTreeMap::new();
        for tool in tools {
            let Some(name) = tool["name"].as_str() else {
                continue;
            };
            let read_only = tool["annotations"]["readOnlyHint"] == Value::Bool(true);
            if name == SIGN_IN {
                tracing::warn!(mount = %self.label(), "the server's own `sign_in` tool is not mounted: the gateway's has its name");
                continue;
            }
            if self.config.resolve(name, read_only).allowed && !allowed.contains_key(name) {
                allowed.insert(name.to_owned(), tool);
            }
        }
        Ok(allowed)
    }

    /// Registers every tool some signed-in user has (each listed to those who have it), and
    /// removes those nobody has any more.
    pub(super) fn register_users_tools(self: &Arc<Self>, server: &ServerHandle) {
        // One registration at a time, from reading the users to updating the catalog: two
        // users' sign-ins registering at once would otherwise each remove what the other
        // added.
        let mut names = lock(&self.names);
        let all = self.users().union();
        let mut add = Vec::new();
        for (remote, def) in &all {
            let read_only = def["annotations"]["readOnlyHint"] == Value::Bool(true);
            let rules = self.config.resolve(remote, read_only);
            let name = format!("{}{LABEL_SEPARATOR}{remote}", self.label());
            let mount = self.clone();
            let remote_name = remote.clone();
            add.push(
                self.tool(&name, remote, def, rules)
                    .shown_to(move |key| mount.users().lists(key, &remote_name)),
            );
        }
        replace_tools(
            server,
            self.label(),
            &mut names,
            add,
            "a remote tool could not be mounted",
        );
        drop(names);
        // A user who signed in sees tools others had already: their list changed all the same.
        server.notify_tools_changed();
    }
}
