//! HTTP services mounted from their OpenAPI document (`"type": "openapi"`): each operation a
//! tool `label__operation`, its arguments written as the request the document describes,
//! sent only to the document's server (or the mount's `server_url`), its answer the tool's
//! result. The document is read again when it changes (a file's time or size, a URL's
//! `ETag` or `Last-Modified`), and the tools follow it as a mounted MCP server's follow its
//! list.

mod call;
mod operation;
mod request;
mod schema;

use std::collections::BTreeSet;
use std::hash::{BuildHasher, RandomState};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use reqwest::Url;
use serde_json::Value;

use super::config::{LABEL_SEPARATOR, McpTool, ToolHints};
use super::connection::{self, Authorization};
use super::list::replace_tools;
use super::{Gate, Mounts, ServerHandle};
use crate::client::oauth::Authorizer;
use crate::tool::{Annotations, DynamicArgs, DynamicTool};
use operation::Operation;

/// How often a document in a file is looked at for a change (its time and size).
const FILE_POLL: Duration = Duration::from_secs(1);

/// How often a document at a URL is asked for again (conditionally: `If-None-Match`,
/// `If-Modified-Since`).
const URL_POLL: Duration = Duration::from_secs(10);

/// The longest the document's server may take to answer a call (the whole answer read).
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest the document itself may take to arrive.
const SPEC_TIMEOUT: Duration = Duration::from_secs(10);

/// What is wrong with an `openapi` mount's configuration (checked when the server starts).
pub(crate) fn problems(config: &McpTool) -> Vec<String> {
    let label = &config.server_label;
    let mut problems = Vec::new();
    if config.spec.is_none() {
        problems.push(format!(
            "mount `{label}`: an `openapi` mount needs its `spec` (the document's URL or path)"
        ));
    }
    for (field, given) in [
        ("command", config.command.is_some()),
        ("connector_id", config.connector_id.is_some()),
    ] {
        if given {
            problems.push(format!(
                "mount `{label}`: `{field}` is for `mcp` mounts; an `openapi` mount reads its `spec`"
            ));
        }
    }
    problems
}

impl Mounts {
    /// The mounts with these OpenAPI mounts beside them (the first list waits for them too).
    pub(crate) fn with_apis(mut self, apis: Vec<Arc<ApiMount>>) -> Self {
        self.gate.pending.send_modify(|n| *n += apis.len());
        self.apis = apis;
        self
    }
}

/// Starts each OpenAPI mount's reading of its document.
pub(super) fn start(apis: &[Arc<ApiMount>], server: &ServerHandle, gate: &Arc<Gate>) {
    for api in apis {
        tokio::spawn(api.clone().run(server.clone(), gate.clone()));
    }
}

/// Where the document is.
#[derive(Debug, Clone)]
enum Source {
    Url(Url),
    File(PathBuf),
}

/// What was seen of the document last time, to tell a change.
#[derive(Default)]
struct Seen {
    etag: Option<String>,
    modified: Option<String>,
    stamp: Option<(SystemTime, u64)>,
    digest: u64,
}

/// Credentials sent with every call (never with the document's own request).
#[derive(Default)]
struct Credentials {
    headers: Vec<(String, String)>,
    query: Vec<(String, String)>,
    bearer: Option<String>,
    oauth: Option<crate::client::oauth::OAuthClient>,
    authorizer: std::sync::OnceLock<Authorizer>,
}

/// One OpenAPI mount while the server runs.
pub(crate) struct ApiMount {
    config: McpTool,
    source: Source,
    credentials: Credentials,
    /// The client of every call: redirects followed within the origin they start at only.
    http: reqwest::Client,
    /// The client of the document's request.
    fetcher: reqwest::Client,
    /// Our names of the operations registered now.
    names: Mutex<BTreeSet<String>>,
    settled: AtomicBool,
    digests: RandomState,
    last_error: Mutex<Option<String>>,
    loaded: AtomicU64,
}

impl ApiMount {
    /// The mount of `config` when it and what was `found` wrong with it (the fields every
    /// mount has) are right; else what is wrong goes to `problems`.
    pub(crate) fn checked(
        config: &McpTool,
        mut found: Vec<String>,
        connections: Option<&std::path::Path>,
        problems: &mut Vec<String>,
    ) -> Option<Arc<ApiMount>> {
        found.extend(self::problems(config));
        if !found.is_empty() {
            problems.extend(found);
            return None;
        }
        ApiMount::new(config.clone(), connections)
            .map_err(|e| problems.push(e))
            .ok()
    }

    /// A mount of `config`, its credentials resolved from the connection store.
    pub(crate) fn new(
        config: McpTool,
        connections: Option<&std::path::Path>,
    ) -> Result<Arc<ApiMount>, String> {
        let label = config.server_label.clone();
        let spec = config.spec.clone().unwrap_or_default();
        let source = if spec.starts_with("http://") || spec.starts_with("https://") {
            Source::Url(
                Url::parse(&spec)
                    .map_err(|e| format!("mount `{label}`: `spec` is not a URL: {e}"))?,
            )
        } else {
            Source::File(PathBuf::from(spec.strip_prefix("file://").unwrap_or(&spec)))
        };
        if let Some(url) = &config.server_url {
            Url::parse(url)
                .ok()
                .filter(|u| matches!(u.scheme(), "http" | "https"))
                .ok_or_else(|| {
                    format!("mount `{label}`: `server_url` {url:?} is not an http(s) URL")
                })?;
        }
        let mut credentials = Credentials::default();
        if let Some(id) = config.project_connection_id.as_deref() {
            let store = connection::connection(id, connections)
                .map_err(|e| format!("mount `{label}`: {e}"))?;
            credentials.headers.extend(store.headers.clone());
            credentials.query.extend(store.query.clone());
            credentials.bearer.clone_from(&store.authorization);
            match store
                .authorization(id)
                .map_err(|e| format!("mount `{label}`: {e}"))?
            {
                Authorization::Given => {}
                Authorization::Service(oauth) => credentials.oauth = Some(oauth),
                Authorization::PerUser(_) => {
                    return Err(format!(
                        "mount `{label}`: connection `{id}` signs each user in (`grant: authorization_code`), which OpenAPI mounts do not do; use a token or client credentials"
                    ));
                }
            }
        }
        credentials.headers.extend(
            config
                .headers
                .iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.clone())),
        );
        if config.authorization.is_some() {
            credentials.bearer.clone_from(&config.authorization);
        }
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(CALL_TIMEOUT)
            .connect_timeout(CALL_TIMEOUT)
            .redirect(reqwest::redirect::Policy::custom(|attempt| {
                let first = attempt.previous().first().map(Url::origin);
                if attempt.previous().len() > 5 {
                    attempt.error("more than 5 redirects")
                } else if first == Some(attempt.url().origin()) {
                    attempt.follow()
                } else {
                    attempt.stop()
                }
            }))
            .build()
            .map_err(|e| format!("mount `{label}`: no HTTP client: {e}"))?;
        let fetcher = reqwest::Client::builder()
            .timeout(SPEC_TIMEOUT)
            .connect_timeout(SPEC_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("mount `{label}`: no HTTP client: {e}"))?;
        Ok(Arc::new(ApiMount {
            config,
            source,
            credentials,
            http,
            fetcher,
            names: Mutex::new(BTreeSet::new()),
            settled: AtomicBool::new(false),
            digests: RandomState::new(),
            last_error: Mutex::new(None),
            loaded: AtomicU64::new(0),
        }))
    }

    pub(crate) fn label(&self) -> &str {
        &self.config.server_label
    }

    fn settle(&self, gate: &Gate) {
        if !self.settled.swap(true, Ordering::SeqCst) {
            gate.pending.send_modify(|n| *n = n.saturating_sub(1));
        }
    }

    /// Says a failure once (until another, or a success, comes).
    fn failed(&self, what: &str, error: String) {
        let mut last = crate::sync::lock(&self.last_error);
        if last.as_deref() != Some(error.as_str()) {
            tracing::warn!(mount = %self.label(), error = %error, "{what}");
            *last = Some(error);
        }
    }

    /// Reads the document and mounts its operations, then again each time it changes — for
    /// as long as the server runs.
    async fn run(self: Arc<Self>, server: ServerHandle, gate: Arc<Gate>) {
        let mut seen = Seen::default();
        let poll = match self.source {
            Source::File(_) => FILE_POLL,
            Source::Url(_) => URL_POLL,
        };
        // After a failure the document is asked for again sooner: 250 ms, doubling to `poll`.
        let mut retry = Duration::from_millis(125);
        loop {
            let max = server.shared.limits.max_mount_bytes;
            let pause = match self.load(&mut seen, max).await {
                Ok(Some(doc)) => {
                    *crate::sync::lock(&self.last_error) = None;
                    self.register(&server, &doc, server.shared.limits.max_mount_tools);
                    retry = Duration::from_millis(125);
                    poll
                }
                Ok(None) => poll,
                Err(e) => {
                    self.failed(
                        "the OpenAPI document could not be read; its tools stay as they were",
                        e,
                    );
                    retry = (retry * 2).min(poll);
                    retry
                }
            };
            self.settle(&gate);
            tokio::time::sleep(pause).await;
        }
    }

    /// The document when it changed since `seen` (`None`: unchanged), within `max_bytes`.
    async fn load(&self, seen: &mut Seen, max_bytes: usize) -> Result<Option<Value>, String> {
        let bytes = match &self.source {
            Source::File(path) => {
                let meta = std::fs::metadata(path)
                    .map_err(|e| format!("`{}` cannot be read: {e}", path.display()))?;
                let stamp = (
                    meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                    meta.len(),
                );
                if seen.stamp == Some(stamp) {
                    return Ok(None);
                }
                if meta.len() > max_bytes as u64 {
                    return Err(format!(
                        "`{}` is larger than {max_bytes} bytes (`Limits::max_mount_list`)",
                        path.display()
                    ));
                }
                let bytes = std::fs::read(path)
                    .map_err(|e| format!("`{}` cannot be read: {e}", path.display()))?;
                seen.stamp = Some(stamp);
                bytes
            }
            Source::Url(url) => {
                let mut request = self
                    .fetcher
                    .get(url.clone())
                    .header("Accept", "application/json");
                if let Some(etag) = &seen.etag {
                    request = request.header("If-None-Match", etag);
                }
                if let Some(modified) = &seen.modified {
                    request = request.header("If-Modified-Since", modified);
                }
                let (status, headers, bytes) = call::read_bounded(request, max_bytes)
                    .await
                    .map_err(|e| format!("`{url}`: {e}"))?;
                if status == 304 {
                    return Ok(None);
                }
                if !(200..300).contains(&status) {
                    return Err(format!("`{url}` answered HTTP {status}"));
                }
                let header = |name: &str| {
                    headers
                        .get(name)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned)
                };
                seen.etag = header("etag");
                seen.modified = header("last-modified");
                bytes
            }
        };
        let digest = self.digests.hash_one(&bytes);
        if seen.digest == digest && self.loaded.load(Ordering::SeqCst) > 0 {
            return Ok(None);
        }
        let doc: Value = serde_json::from_slice(&bytes).map_err(|e| {
            format!("the document is not JSON ({e}); OpenAPI documents are read in JSON (convert one in YAML first)")
        })?;
        seen.digest = digest;
        self.loaded.fetch_add(1, Ordering::SeqCst);
        Ok(Some(doc))
    }

    /// Registers the document's operations as tools (and removes those it no longer has).
    fn register(self: &Arc<Self>, server: &ServerHandle, doc: &Value, max_tools: usize) {
        let spec_url = match &self.source {
            Source::Url(url) => Some(url),
            Source::File(_) => None,
        };
        let read = match operation::read(doc, spec_url, self.config.server_url.as_deref()) {
            Ok(read) => read,
            Err(e) => return self.failed("the OpenAPI document cannot be mounted", e),
        };
        for refused in &read.refused {
            tracing::warn!(mount = %self.label(), "{refused}; the document's other operations are mounted");
        }
        if read.operations.len() > max_tools {
            return self.failed(
                "the OpenAPI document cannot be mounted",
                format!(
                    "{} operations, more than the {max_tools} a gateway takes from one server (`Limits::max_mount_list`)",
                    read.operations.len()
                ),
            );
        }
        let mut add = Vec::new();
        for op in read.operations {
            let hints = self.hints(&op.name, op.annotations.clone());
            let rules = self.config.resolve(&op.name, hints.read_only == Some(true));
            if !rules.allowed {
                continue;
            }
            let name = format!("{}{LABEL_SEPARATOR}{}", self.label(), op.name);
            add.push(self.tool(&name, op, hints, rules));
        }
        let mut names = crate::sync::lock(&self.names);
        replace_tools(
            server,
            self.label(),
            &mut names,
            add,
            "an operation could not be mounted",
        );
    }

    /// The operation's hints, with those `tool_configs` gives (its exact name, else `*`).
    fn hints(&self, name: &str, from_method: Annotations) -> Annotations {
        let configs = self.config.tool_configs.as_ref();
        let given: Vec<&ToolHints> = [
            configs.and_then(|c| c.get(name)),
            configs.and_then(|c| c.get("*")),
        ]
        .into_iter()
        .flatten()
        .filter_map(|c| c.annotations.as_ref())
        .collect();
        let pick = |f: fn(&ToolHints) -> Option<bool>, own: Option<bool>| {
            given.iter().find_map(|h| f(h)).or(own)
        };
        Annotations {
            read_only: pick(|h| h.read_only_hint, from_method.read_only),
            destructive: pick(|h| h.destructive_hint, from_method.destructive),
            idempotent: pick(|h| h.idempotent_hint, from_method.idempotent),
            open_world: pick(|h| h.open_world_hint, from_method.open_world),
        }
    }

    fn tool(
        self: &Arc<Self>,
        name: &str,
        op: Operation,
        hints: Annotations,
        rules: super::config::Resolved,
    ) -> DynamicTool {
        let mut description = rules
            .description
            .clone()
            .unwrap_or_else(|| op.description.clone());
        if let Some(about) = &self.config.server_description {
            description.push_str(&format!(
                "\n\n(From the `{}` service: {about})",
                self.label()
            ));
        }
        let mut tool = DynamicTool::new(name, description, {
            let mount = self.clone();
            let op = Arc::new(op.clone());
            let approval = rules.approval;
            move |args: DynamicArgs| {
                let (mount, op) = (mount.clone(), op.clone());
                async move { mount.call(&op, args, approval).await }
            }
        })
        .annotations(hints)
        .input_schema(op.input_schema)
        .forwarded();
        if let Some(title) = op.title {
            tool = tool.title(title);
        }
        if let Some(output) = op.output_schema {
            tool = tool.output_schema(output);
        }
        if rules.deferred {
            tool = tool.deferred();
        }
        tool
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn mount(v: Value) -> McpTool {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn tool_configs_hints_replace_the_methods_exact_name_first() {
        let config = mount(json!({
            "type": "openapi", "server_label": "s", "spec": "api.json",
            "tool_configs": {
                "*": {"annotations": {"openWorldHint": false}},
                "addPet": {"annotations": {"idempotentHint": true, "openWorldHint": true}}
            }
        }));
        let api = ApiMount::new(config, None).unwrap();
        let add = api.hints("addPet", operation::annotations("post"));
        assert_eq!(
            (add.idempotent, add.open_world, add.read_only),
            (Some(true), Some(true), Some(false))
        );
        let get = api.hints("getPet", operation::annotations("get"));
        assert_eq!((get.read_only, get.open_world), (Some(true), Some(false)));
    }

    #[test]
    fn an_openapi_mount_needs_its_spec_and_takes_no_command() {
        let bad = mount(json!({"type": "openapi", "server_label": "s", "command": ["x"]}));
        let text = problems(&bad).join("\n");
        assert!(
            text.contains("needs its `spec`") && text.contains("`command` is for `mcp` mounts"),
            "{text}"
        );
        let mut found = Vec::new();
        assert!(ApiMount::checked(&bad, Vec::new(), None, &mut found).is_none());
        assert_eq!(found.len(), 2);
        // `spec` on an MCP mount is named too.
        let mcp = mount(json!({"server_label": "s", "server_url": "http://x", "spec": "a.json"}));
        assert!(
            mcp.problems().join("\n").contains("`spec` is for"),
            "{:?}",
            mcp.problems()
        );
        let e = ApiMount::new(
            mount(json!({"type": "openapi", "server_label": "s", "spec": "a.json", "server_url": "ftp://x"})),
            None,
        )
        .err()
        .unwrap_or_default();
        assert!(e.contains("is not an http(s) URL"), "{e}");
    }
}
