//! What a builder was given to mount: the [`Server`] builder's methods of the gateway
//! ([`Server::mount`], [`Server::connection_store`], [`Server::mount_wait`]) and the list they
//! fill, built into the running mounts when the server starts. The server holds the list only
//! as a [`Mounting`], so that the gateway builds on the server and not the other way round.

use std::any::Any;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use super::{DEFAULT_MOUNT_WAIT, McpTool, Mount, Mounts, openapi, redirect};
use crate::server::Server;
use crate::server::core::handle::{Mounting, StartsWith};

/// The remote servers a builder was given to mount, and the connection store their ids name.
#[derive(Default)]
pub(crate) struct Remotes {
    pub(crate) list: Vec<McpTool>,
    pub(crate) connection_store: Option<std::path::PathBuf>,
    /// The bound on the first list's wait for the mounts (default [`DEFAULT_MOUNT_WAIT`]).
    pub(crate) wait: Option<Duration>,
    /// Whether a stdio user's sign-in page is opened with the desktop's browser.
    pub(crate) open_browser: bool,
}

impl Mounting for Remotes {
    /// The mounts, each checked and its target resolved (the connection store included);
    /// what is wrong goes to `problems`.
    fn build(&self, problems: &mut Vec<String>) -> Option<Box<dyn StartsWith>> {
        let mut list = Vec::new();
        let mut apis = Vec::new();
        let redirects = Arc::new(redirect::Redirects::default());
        redirects
            .open_browser
            .store(self.open_browser, std::sync::atomic::Ordering::Relaxed);
        let mut labels = BTreeSet::new();
        for remote in &self.list {
            let found = remote.problems();
            if !labels.insert(remote.server_label.clone()) {
                problems.push(format!("two mounts are labelled `{}`", remote.server_label));
            }
            if remote.kind == "openapi" {
                let store = self.connection_store.as_deref();
                apis.extend(openapi::ApiMount::checked(remote, found, store, problems));
            } else if found.is_empty() {
                match Mount::new(remote.clone(), self.connection_store.as_deref(), &redirects) {
                    Ok(m) => list.push(m),
                    Err(e) => problems.push(e),
                }
            } else {
                problems.extend(found);
            }
        }
        let mut mounts = Mounts::new(list, self.wait.unwrap_or(DEFAULT_MOUNT_WAIT)).with_apis(apis);
        mounts.redirects = redirects;
        Some(Box::new(mounts))
    }
}

/// The gateway's builder methods (feature `client`).
impl Server {
    /// Mounts a remote MCP server beside the local tools (feature `client`): its tools are
    /// listed as `label__tool` (as `allowed_tools` and `tool_configs` say), calls are
    /// forwarded (approved by the user first where `require_approval` says so), and its list
    /// changes followed. The connection is made when the server starts serving, and remade
    /// when lost. Server binaries also take `--mount FILE` (a list of such objects in JSON).
    pub fn mount(self, remote: McpTool) -> Self {
        self.remotes(|r| r.list.push(remote))
    }

    /// The connection store (feature `client`): a JSON file of connections by id, each with
    /// a `server_url`, an `authorization` and `headers`, which a mount's
    /// `project_connection_id` or `connector_id` names. Server binaries take it from
    /// `MCP_TOOL_CONNECTIONS`.
    pub fn connection_store(self, path: impl Into<std::path::PathBuf>) -> Self {
        self.remotes(|r| r.connection_store = Some(path.into()))
    }

    /// How long a `tools/list` or `tools/call` that arrives before every mount has listed
    /// its tools waits for them (feature `client`; default 5 s, [`DEFAULT_MOUNT_WAIT`]):
    /// the first answer then holds the mounted tools. A mount that fails at start does not
    /// hold anything up; one still silent after this is left out, logged, and joins later
    /// with `list_changed`. Server binaries take it from `MCP_TOOL_MOUNT_WAIT`.
    pub fn mount_wait(self, wait: Duration) -> Self {
        self.remotes(|r| r.wait = Some(wait))
    }

    /// Whether the sign-in page of a per-user mount's stdio user (who comes back to a loopback
    /// listener) is also opened with the desktop's browser (feature `client`; default: it is
    /// printed on stderr only). Server binaries take it from `MCP_TOOL_OPEN_BROWSER`.
    pub fn open_sign_in_browser(self, open: bool) -> Self {
        self.remotes(|r| r.open_browser = open)
    }

    /// Changes the builder's list of remote servers (made on first use).
    fn remotes(mut self, change: impl FnOnce(&mut Remotes)) -> Self {
        let mut remotes = self
            .mounts
            .take()
            .and_then(|m| (m as Box<dyn Any>).downcast::<Remotes>().ok())
            .unwrap_or_default();
        change(&mut remotes);
        self.mounts = Some(remotes);
        self
    }
}
