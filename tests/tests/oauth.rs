//! OAuth end to end: our resource server (`mcp_tool::http::OAuthVerifier`) against a real
//! authorization server, `oidc-provider` (npm), a certified OpenID Connect provider run by
//! `interop/oidc-provider.mjs` on 127.0.0.1. Tokens come from its token endpoint with the
//! client-credentials grant and a resource indicator (RFC 8707); they are JWTs signed with
//! RS256, ES256 or EdDSA, or opaque ones checked by introspection (RFC 7662). Tokens the
//! provider would never issue (expired, not valid yet, signed by another key, unsigned…) are
//! signed by the same script with the provider's own key or a stranger's.
//!
//! Every refused request is a `tools/call` of a tool that records its runs: the tests check the
//! status, the whole `WWW-Authenticate` challenge (or `Retry-After`), and that nothing ran.
//! oidc-provider is installed by `bash interop/setup.sh` (which `.ci/run` runs), pinned in
//! `interop/package-lock.json`. Each wait on a process is bounded; none is a fixed sleep.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError, mpsc};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_tool::client::{ClientError, Connect, McpClient, VersionChoice};
use mcp_tool::http::{HttpConfig, OAuthVerifier, ResourceMetadata};
use mcp_tool::prelude::*;
use mcp_tool_tests::raw_http::{Endpoint, Reply, send, tool_names};
use mcp_tool_tests::{ExampleHttp, TempDir, interop_dir, wait_bounded};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use reqwest::{RequestBuilder, StatusCode};
use serde_json::{Value, json};
use tokio::net::TcpListener;

#[path = "oauth/fetches.rs"]
mod fetches;
#[path = "oauth/sign_in.rs"]
mod sign_in;

#[path = "oauth/dpop.rs"]
mod dpop;
#[path = "oauth/refused.rs"]
mod refused;

#[path = "oauth/assertion.rs"]
mod assertion;

const SETUP_HINT: &str = "run `bash interop/setup.sh` (.ci/run does it)";

/// The longest the provider may take to say it listens, and a script to finish.
const START_LIMIT: Duration = Duration::from_secs(60);

/// A resource the provider issues tokens for that is not ours.
const ELSEWHERE: &str = "http://127.0.0.1:9/elsewhere";

/// What the refusal of a request names about the server that could not check its token.
const UNAVAILABLE: &str = "Service Unavailable: the authorization server cannot be reached to \
                           check the token; try again shortly";

// ---------------------------------------------------------------------------------------------
// The tools
// ---------------------------------------------------------------------------------------------

/// The names `delete_user` was called with (each request uses a name of its own).
static DELETED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn deleted(name: &str) -> bool {
    DELETED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .any(|n| n == name)
}

/// A name no other request uses.
fn fresh(label: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!("{label}-{}", N.fetch_add(1, Ordering::Relaxed))
}

/// Lists the users.
#[tool(scopes = ["users:read"])]
fn list_users() -> String {
    "ada".into()
}

/// Deletes a user.
#[tool(scopes = ["users:read", "users:write"])]
fn delete_user(name: String) -> String {
    let said = format!("deleted {name}");
    DELETED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(name);
    said
}

/// Says hello to anyone.
#[tool]
fn hello() -> &'static str {
    "hello"
}

const TOOLS: [&str; 3] = ["list_users", "delete_user", "hello"];

// ---------------------------------------------------------------------------------------------
// The authorization server
// ---------------------------------------------------------------------------------------------

/// `node interop/oidc-provider.mjs`, once oidc-provider is known to be installed.
fn script() -> Command {
    let dir = interop_dir();
    let installed = dir.join("node_modules/oidc-provider/package.json");
    assert!(installed.exists(), "oidc-provider is missing: {SETUP_HINT}");
    let mut command = Command::new("node");
    command
        .arg(dir.join("oidc-provider.mjs"))
        .current_dir(&dir)
        .env_remove("OIDC_PORT")
        .env_remove("DEBUG");
    command
}

/// Runs `oidc-provider.mjs args…` to its end and returns what it printed.
fn run_script(args: &[&str]) -> String {
    let mut command = script();
    command.args(args);
    run_to_end(command, &format!("oidc-provider.mjs {args:?}"))
}

/// Runs `command` (named `label` in messages) to its end, within [`START_LIMIT`], and returns
/// what it printed; it must succeed. A failure shows what it wrote to stderr only (stdout
/// may hold a key set).
fn run_to_end(mut command: Command, label: &str) -> String {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{label} does not start ({e}): {SETUP_HINT}"));
    let (status, out, err) = wait_bounded(&mut child, START_LIMIT)
        .unwrap_or_else(|| panic!("{label} ran for more than {START_LIMIT:?}"));
    assert!(status.success(), "{label}: {status}\n{err}");
    out.trim().to_owned()
}

/// A key set of the provider's, in a file of its own.
struct Keys {
    _dir: TempDir,
    path: PathBuf,
    kid: String,
}

impl Keys {
    /// A new key set signing with `alg` (and an encryption key beside it).
    fn new(alg: &str) -> Keys {
        let set = run_script(&["keys", alg]);
        let json: Value = serde_json::from_str(&set).expect("a key set");
        let kid = json["keys"][0]["kid"].as_str().expect("a kid").to_owned();
        let dir = TempDir::new("oauth-keys");
        let path = dir.path().join("keys.json");
        std::fs::write(&path, set).expect("write the key set");
        Keys {
            _dir: dir,
            path,
            kid,
        }
    }

    fn arg(&self) -> &str {
        self.path.to_str().expect("a UTF-8 path")
    }

    /// A JWT of `claims` signed with this set's key; `header` overrides the header's members.
    fn sign(&self, claims: &Value, header: &Value) -> String {
        run_script(&["sign", self.arg(), &claims.to_string(), &header.to_string()])
    }
}

/// `oidc-provider.mjs serve`: killed when dropped (and it stops by itself when its stdin
/// closes, should this process die first).
struct Provider {
    child: Child,
    _stdin: ChildStdin,
    issuer: String,
    port: u16,
    http: reqwest::Client,
}

impl Provider {
    /// A provider signing with `keys` (`alg`) for `resources`, on `port` (0: any).
    fn start(keys: &Keys, alg: &str, resources: &[&str], port: u16) -> Provider {
        Provider::start_with(keys, alg, resources, port, &[])
    }

    /// [`start`](Self::start), with more of the script's `serve` options (`--read-only`
    /// logins, token lifetimes).
    fn start_with(
        keys: &Keys,
        alg: &str,
        resources: &[&str],
        port: u16,
        options: &[&str],
    ) -> Provider {
        let mut command = script();
        command.args(["serve", "--keys", keys.arg(), "--alg", alg, "--port"]);
        command.arg(port.to_string());
        for resource in resources {
            command.args(["--resource", resource]);
        }
        command.args(options);
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("node does not start ({e}): {SETUP_HINT}"));
        let stdin = child.stdin.take().expect("piped stdin");
        let (tx, rx) = mpsc::channel();
        let stdout = child.stdout.take().expect("piped stdout");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = child.stderr.take().expect("piped stderr");
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                eprintln!("[provider] {line}");
            }
        });
        let issuer = match rx.recv_timeout(START_LIMIT) {
            Ok(line) => match line.strip_prefix("ready ") {
                Some(issuer) => issuer.to_owned(),
                None => panic!("the provider said `{line}`, not `ready <issuer>`"),
            },
            Err(e) => {
                let _ = child.kill();
                let status = child.wait().expect("wait");
                panic!("the provider never said it was ready ({e}); {status} (its log is above)");
            }
        };
        let port = issuer
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {issuer}"));
        Provider {
            child,
            _stdin: stdin,
            issuer,
            port,
            http: client(),
        }
    }

    /// An access token for `resource` with `scope`, by the client-credentials grant of
    /// `client` (whose secret is `<client>-secret`, sent with HTTP Basic).
    async fn token(&self, client: &str, resource: &str, scope: &str) -> String {
        let answer = self.ask_token(client, resource, scope).await;
        assert_eq!(answer["token_type"], "Bearer", "{answer}");
        answer["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token for {client}: {answer}"))
            .to_owned()
    }

    /// The token endpoint's answer.
    async fn ask_token(&self, client: &str, resource: &str, scope: &str) -> Value {
        let metadata: Value = self
            .http
            .get(format!("{}/.well-known/openid-configuration", self.issuer))
            .send()
            .await
            .expect("the provider's metadata")
            .json()
            .await
            .expect("JSON metadata");
        let endpoint = metadata["token_endpoint"]
            .as_str()
            .expect("a token endpoint");
        self.http
            .post(endpoint)
            .basic_auth(client, Some(format!("{client}-secret")))
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(format!(
                "grant_type=client_credentials&resource={}&scope={}",
                form(resource),
                form(scope)
            ))
            .send()
            .await
            .expect("the token endpoint answers")
            .json()
            .await
            .expect("a JSON answer")
    }

    /// Kills the provider (its port is free at once: the next one may take it).
    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `application/x-www-form-urlencoded`.
fn form(value: &str) -> String {
    value
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn client() -> reqwest::Client {
    mcp_tool_tests::install_crypto_provider();
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(20))
        .build()
        .expect("an HTTP client")
}

fn now() -> i64 {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    i64::try_from(secs).expect("fits")
}

// ---------------------------------------------------------------------------------------------
// Our server
// ---------------------------------------------------------------------------------------------

/// A port of ours, bound before the provider starts (which must know our resource URL).
struct Bound {
    listener: TcpListener,
    base: String,
}

impl Bound {
    async fn new() -> Bound {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        Bound {
            listener,
            base: format!("http://127.0.0.1:{port}"),
        }
    }

    /// This server's resource URL: its endpoint.
    fn resource(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// Serves the three tools, checking tokens with `oauth`.
    fn serve(self, issuer: &str, oauth: OAuthVerifier) -> Served {
        let mut config = HttpConfig::default().with_auth(oauth);
        config.resource_metadata = Some(ResourceMetadata {
            resource: self.resource(),
            authorization_servers: vec![issuer.to_owned()],
            scopes_supported: vec![],
        });
        let router = Server::new("scoped", "0")
            .only(TOOLS)
            .build()
            .expect("the server builds")
            .into_router(config);
        let listener = self.listener;
        tokio::spawn(async move {
            axum::serve(listener, router).await.expect("serves");
        });
        Served(Endpoint::new(self.base))
    }
}

/// The verifier of `issuer`'s tokens for `resource`: opaque ones by introspection as
/// `mcp-server`, no leeway, and the keys fetched again for any `kid` not known.
fn verifier(issuer: &str, resource: &str) -> OAuthVerifier {
    OAuthVerifier::new(issuer, resource)
        .introspection("mcp-server", "mcp-server-secret")
        .leeway(Duration::ZERO)
        .refresh_interval(Duration::ZERO)
}

/// Our endpoint, every request carrying a token.
struct Served(Endpoint);

impl std::ops::Deref for Served {
    type Target = Endpoint;

    fn deref(&self) -> &Endpoint {
        &self.0
    }
}

impl Served {
    async fn session(&self, token: &str) -> String {
        self.0.session(Some(token)).await
    }

    fn in_session(&self, token: &str, id: &str) -> RequestBuilder {
        self.0.in_session(Some(token), id)
    }

    async fn stateless(
        &self,
        token: &str,
        method: &str,
        name: Option<&str>,
        params: Value,
    ) -> Reply {
        self.0.stateless(Some(token), method, name, params).await
    }

    async fn list(&self, token: &str) -> Vec<String> {
        let reply = self.stateless(token, "tools/list", None, json!({})).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        tool_names(&reply.body)
    }

    /// `delete_user` of a user named after `label`, in a 2026-07-28 request: the reply, and
    /// whether the tool ran.
    async fn delete(&self, token: &str, label: &str) -> (Reply, bool) {
        let name = fresh(label);
        let reply = self
            .stateless(
                token,
                "tools/call",
                Some("delete_user"),
                json!({"name": "delete_user", "arguments": {"name": name}}),
            )
            .await;
        (reply, deleted(&name))
    }

    /// The challenge of a request refused with 401.
    fn invalid_token(&self, description: &str) -> String {
        format!(
            "Bearer realm=\"mcp\", error=\"invalid_token\", error_description=\"{description}\", \
             resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
            self.base
        )
    }

    /// `token` is refused with 401, `invalid_token` and `description`, and nothing runs.
    async fn assert_invalid(&self, label: &str, token: &str, description: &str) {
        let (reply, ran) = self.delete(token, label).await;
        assert_eq!(
            reply.status,
            StatusCode::UNAUTHORIZED,
            "{label}: {}",
            reply.body
        );
        assert_eq!(
            reply.challenge.as_deref(),
            Some(self.invalid_token(description).as_str()),
            "{label}"
        );
        assert_eq!(
            reply.body["error"]["message"],
            format!("Unauthorized: {description}")
        );
        assert!(!ran, "{label}: the tool ran");
    }

    /// `token` cannot be checked now: 503 with `Retry-After` and no challenge, nothing runs.
    async fn assert_unavailable(&self, label: &str, token: &str) {
        let (reply, ran) = self.delete(token, label).await;
        assert_eq!(
            reply.status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{label}: {}",
            reply.body
        );
        assert_eq!(reply.retry_after.as_deref(), Some("5"), "{label}");
        assert_eq!(reply.challenge, None, "{label}");
        assert_eq!(reply.body["error"]["message"], UNAVAILABLE, "{label}");
        assert!(!ran, "{label}: the tool ran");
    }

    /// `token` is accepted: `delete_user` runs.
    async fn assert_accepted(&self, label: &str, token: &str) {
        let (reply, ran) = self.delete(token, label).await;
        assert_eq!(reply.status, StatusCode::OK, "{label}: {}", reply.body);
        assert!(
            reply.body["result"]["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("deleted ")),
            "{label}: {}",
            reply.body
        );
        assert!(ran, "{label}: the tool did not run");
    }

    /// `token` is refused `delete_user` with the step-up challenge (403), and nothing runs.
    async fn assert_step_up(&self, label: &str, reply: &Reply, ran: bool) {
        assert_eq!(
            reply.status,
            StatusCode::FORBIDDEN,
            "{label}: {}",
            reply.body
        );
        assert_eq!(
            reply.challenge.as_deref(),
            Some(
                format!(
                    "Bearer error=\"insufficient_scope\", scope=\"users:read users:write\", \
                     error_description=\"the request needs the scopes users:read users:write\", \
                     resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
                    self.base
                )
                .as_str()
            ),
            "{label}"
        );
        assert_eq!(
            reply.body["error"]["code"], -32030,
            "{label}: {}",
            reply.body
        );
        assert!(!ran, "{label}: the tool ran");
    }
}

fn call(id: u64, name: &str, arguments: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}})
    .to_string()
}

// ---------------------------------------------------------------------------------------------
// Tokens the provider issues
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_token_s_scopes_decide_what_its_holder_sees_and_calls_in_both_eras() {
    let ours = Bound::new().await;
    let resource = ours.resource();
    let keys = Keys::new("RS256");
    let provider = Provider::start(&keys, "RS256", &[&resource], 0);
    let srv = ours.serve(
        &provider.issuer,
        OAuthVerifier::new(&provider.issuer, &resource),
    );
    let reader = provider.token("reader", &resource, "users:read").await;
    let writer = provider
        .token("writer", &resource, "users:read users:write")
        .await;
    // The provider holds the reader to its scope.
    let asked = provider
        .ask_token("reader", &resource, "users:read users:write")
        .await;
    assert_eq!(asked["error"], "invalid_scope", "{asked}");

    // 2026-07-28: one request each.
    assert_eq!(
        srv.list(&writer).await,
        ["delete_user", "hello", "list_users"]
    );
    assert_eq!(srv.list(&reader).await, ["hello", "list_users"]);
    let (reply, ran) = srv.delete(&reader, "stateless-reader").await;
    srv.assert_step_up("stateless reader", &reply, ran).await;
    srv.assert_accepted("stateless writer", &writer).await;

    // 2025-11-25: a session each.
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let session = srv.session(&reader).await;
    let reply = send(srv.in_session(&reader, &session).body(list.clone())).await;
    assert_eq!(tool_names(&reply.body), ["hello", "list_users"]);
    let name = fresh("session-reader");
    let reply = send(srv.in_session(&reader, &session).body(call(
        2,
        "delete_user",
        &json!({ "name": name }),
    )))
    .await;
    srv.assert_step_up("session reader", &reply, deleted(&name))
        .await;
    let reply = send(
        srv.in_session(&reader, &session)
            .body(call(3, "list_users", &json!({}))),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(
        reply.body["result"]["content"][0]["text"], "ada",
        "{}",
        reply.body
    );

    let session = srv.session(&writer).await;
    let reply = send(srv.in_session(&writer, &session).body(list)).await;
    assert_eq!(
        tool_names(&reply.body),
        ["delete_user", "hello", "list_users"]
    );
    let name = fresh("session-writer");
    let reply = send(srv.in_session(&writer, &session).body(call(
        4,
        "delete_user",
        &json!({ "name": name }),
    )))
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert!(deleted(&name));
}

// ---------------------------------------------------------------------------------------------
// The `users` example behind OAuth, driven by real clients
// ---------------------------------------------------------------------------------------------

/// `interop/.venv/bin/python`, installed by `interop/setup.sh`.
fn python() -> PathBuf {
    let python = interop_dir().join(".venv/bin/python");
    assert!(python.exists(), "the Python SDK is missing: {SETUP_HINT}");
    python
}

/// `py-scoped.py mode url token`: what the Python SDK client saw.
fn python_sees(mode: &str, url: &str, token: &str) -> Value {
    let mut command = Command::new(python());
    command
        .arg(interop_dir().join("py-scoped.py"))
        .args([mode, url, token]);
    let out = run_to_end(command, &format!("py-scoped.py {mode}"));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("py-scoped.py said {out}: {e}"))
}

/// `py-least.py mode url issuer client scope`: what the Python SDK client saw, obtaining its
/// own tokens with client credentials.
fn python_least(mode: &str, url: &str, issuer: &str, client: &str, scope: &str) -> Value {
    let mut command = Command::new(python());
    command
        .arg(interop_dir().join("py-least.py"))
        .args([mode, url, issuer, client, scope]);
    let out = run_to_end(command, &format!("py-least.py {mode} {client}"));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("py-least.py said {out}: {e}"))
}

/// The names of the tools `client` is shown, sorted.
async fn listed_by(client: &McpClient) -> Vec<String> {
    let mut names: Vec<String> = client
        .list_tools()
        .await
        .expect("tools/list")
        .iter()
        .map(|t| t["name"].as_str().expect("a name").to_owned())
        .collect();
    names.sort();
    names
}

/// What our own client sees with `token`, in the same shape as `py-scoped.py`'s summary.
async fn ours_sees(url: &str, token: &str, version: VersionChoice) -> Value {
    let client = McpClient::connect(Connect::http(url).bearer(token).protocol_version(version))
        .await
        .expect("connects with the token");
    let tools = listed_by(&client).await;
    let called = |answer: Result<Value, ClientError>| match answer {
        Ok(result) => json!({
            "isError": result["isError"] == true,
            "structured": result["structuredContent"],
        }),
        Err(ClientError::Rpc(e)) => json!({
            "error": {"code": e.code, "message": e.message, "data": e.data},
        }),
        Err(other) => panic!("a call failed outside JSON-RPC: {other:?}"),
    };
    let created = called(
        client
            .call(
                "create_user",
                json!({"email": "ada@example.com", "name": "Ada Lovelace"}),
            )
            .await,
    );
    let id = created["structured"]["id"].as_str().unwrap_or("usr_000000");
    let got = called(client.call("get_user", json!({ "userId": id })).await);
    let summary = json!({
        "protocolVersion": client.server().protocol_version.as_str(),
        "tools": tools,
        "create_user": created,
        "get_user": got,
    });
    client.close().await;
    summary
}

/// `users --http` with `MCP_TOOL_OAUTH_ISSUER`: a token with both scopes sees and runs every
/// tool; a `users:read` token does not see the writing tools, and its `create_user` gets the
/// step-up challenge, in both revisions, over the Python SDK client and over ours. The
/// challenge itself (403, `WWW-Authenticate`) is checked on the wire beside them.
/// `users --http` behind a provider (RS256) that issues tokens for it: the provider, the
/// server, its port and URL.
async fn users_behind_a_provider() -> (Provider, ExampleHttp, u16, String) {
    users_behind_a_provider_with(&[]).await
}

/// [`users_behind_a_provider`], with more of the provider's options.
async fn users_behind_a_provider_with(options: &[&str]) -> (Provider, ExampleHttp, u16, String) {
    // The provider must know our resource URL before the server starts.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let keys = Keys::new("RS256");
    let provider = Provider::start_with(&keys, "RS256", &[&url], 0, options);
    let users = {
        let (addr, url, issuer) = (
            format!("127.0.0.1:{port}"),
            url.clone(),
            provider.issuer.clone(),
        );
        tokio::task::spawn_blocking(move || {
            ExampleHttp::start_at(
                "users",
                &addr,
                &[],
                &[
                    (mcp_tool::env::RESOURCE, url.as_str()),
                    (mcp_tool::env::OAUTH_ISSUER, issuer.as_str()),
                ],
            )
        })
        .await
        .expect("users starts")
    };
    assert_eq!(users.url, url);
    (provider, users, port, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_example_behind_oauth_shows_and_runs_what_each_token_allows() {
    let (provider, users, port, url) = users_behind_a_provider().await;
    let issuer = provider.issuer.clone();
    let reader = provider.token("reader", &url, "users:read").await;
    let writer = provider
        .token("writer", &url, "users:read users:write")
        .await;

    let every = [
        "create_user",
        "delete_user",
        "get_user",
        "seed_users",
        "send_email",
    ];
    let step_up = json!({
        "code": -32030,
        "data": {"requiredScopes": ["users:write"]},
    });
    for (mode, version) in [
        ("legacy", VersionChoice::V2025_11_25),
        ("2026-07-28", VersionChoice::V2026_07_28),
    ] {
        let expected = if mode == "legacy" { "2025-11-25" } else { mode };
        let py = {
            let (url, reader, writer) = (url.clone(), reader.clone(), writer.clone());
            tokio::task::spawn_blocking(move || {
                (
                    python_sees(mode, &url, &writer),
                    python_sees(mode, &url, &reader),
                )
            })
            .await
            .expect("the Python client ran")
        };
        let ours = (
            ours_sees(&url, &writer, version).await,
            ours_sees(&url, &reader, version).await,
        );
        for (client, (as_writer, as_reader)) in [("python", py), ("ours", ours)] {
            let label = format!("{client} {mode}");
            for seen in [&as_writer, &as_reader] {
                assert_eq!(seen["protocolVersion"], expected, "{label}: {seen}");
            }
            // The writer sees and runs everything.
            assert_eq!(as_writer["tools"], json!(every), "{label}: {as_writer}");
            let created = &as_writer["create_user"];
            assert_eq!(created["isError"], false, "{label}: {created}");
            assert_eq!(created["structured"]["name"], "Ada Lovelace", "{label}");
            let got = &as_writer["get_user"];
            assert_eq!(got["isError"], false, "{label}: {got}");
            assert_eq!(got["structured"], created["structured"], "{label}");
            // The reader sees `get_user` only, and is told what `create_user` needs.
            assert_eq!(
                as_reader["tools"],
                json!(["get_user"]),
                "{label}: {as_reader}"
            );
            let refused = &as_reader["create_user"]["error"];
            assert_eq!(refused["code"], step_up["code"], "{label}: {as_reader}");
            assert_eq!(refused["data"], step_up["data"], "{label}: {as_reader}");
            // Nothing ran: the reader's `get_user` of a made-up id finds no user.
            let got = &as_reader["get_user"];
            assert_eq!(got["isError"], true, "{label}: {got}");
        }
    }

    // On the wire: 403 and the challenge naming the missing scope, with the metadata's address.
    let reply = send(
        client()
            .post(&url)
            .header(AUTHORIZATION, format!("Bearer {reader}"))
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .body(call(
                1,
                "create_user",
                &json!({"email": "eve@example.com", "name": "Eve"}),
            )),
    )
    .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN, "{}", reply.body);
    assert_eq!(
        reply.challenge.as_deref(),
        Some(
            format!(
                "Bearer error=\"insufficient_scope\", scope=\"users:write\", \
                 error_description=\"the request needs the scopes users:write\", \
                 resource_metadata=\"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp\""
            )
            .as_str()
        )
    );
    // The metadata names the issuer and the scopes the tools declare.
    let metadata: Value = client()
        .get(format!(
            "http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
        ))
        .send()
        .await
        .expect("the metadata")
        .json()
        .await
        .expect("JSON metadata");
    assert_eq!(metadata["resource"], url);
    assert_eq!(metadata["authorization_servers"], json!([issuer]));
    assert_eq!(
        metadata["scopes_supported"],
        json!(["users:read", "users:write"])
    );
    drop(users);
    provider.stop();
}

/// Least privilege with the official Python SDK's client-credentials provider, configured for
/// `users:read`, against `users --http` behind the provider, in both revisions: the 401 names
/// the scope the read-only tools need (`scope="users:read"`, RFC 6750 §3), so the SDK asks for
/// it alone and connects (without it, it asked for every scope of the metadata and the
/// provider refused the reader). It lists and reads; for `create_user` the 403 names
/// `users:write`: the writer's client steps up and the call runs, in both revisions (a
/// 2025-11-25 session is its principal's, the writer through its client, and takes the
/// stepped-up token of that principal in it); the reader's step-up is refused by the provider
/// and nothing runs. A server binary takes the scopes from `MCP_TOOL_OAUTH_INITIAL_SCOPES`
/// instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_starts_with_the_read_scope_and_steps_up_for_writing() {
    let (provider, users, port, url) = users_behind_a_provider().await;
    let issuer = provider.issuer.clone();
    // On the wire: the 401 of a request without a token names the reading scope.
    let reply = send(
        client()
            .post(&url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .body(call(1, "get_user", &json!({"userId": "usr_000000"}))),
    )
    .await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{}", reply.body);
    assert_eq!(
        reply.challenge.as_deref(),
        Some(
            format!(
                "Bearer realm=\"mcp\", scope=\"users:read\", \
                 resource_metadata=\"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp\""
            )
            .as_str()
        )
    );
    for mode in ["legacy", "2026-07-28"] {
        let (writer, reader) = {
            let (url, issuer) = (url.clone(), issuer.clone());
            tokio::task::spawn_blocking(move || {
                (
                    python_least(mode, &url, &issuer, "writer", "users:read"),
                    python_least(mode, &url, &issuer, "reader", "users:read"),
                )
            })
            .await
            .expect("the Python client ran")
        };
        for seen in [&writer, &reader] {
            // Connected with a reading token, listed the reading tool, and read.
            assert_eq!(seen["tokenScopes"][0], "users:read", "{mode}: {seen}");
            assert_eq!(seen["tools"], json!(["get_user"]), "{mode}: {seen}");
            assert_eq!(seen["get_user"]["isError"], true, "{mode}: {seen}");
        }
        // The writer's client stepped up to both scopes (the 403 named `users:write`).
        assert_eq!(
            writer["tokenScopes"],
            json!(["users:read", "users:read users:write"]),
            "{mode}: {writer}"
        );
        assert!(writer.get("exception").is_none(), "{mode}: {writer}");
        // The stepped-up token's call runs: a 2026-07-28 request stands alone, and a
        // 2025-11-25 session takes its principal's stepped-up token.
        let created = &writer["create_user"];
        assert_eq!(created["isError"], false, "{mode}: {writer}");
        assert_eq!(created["structured"]["name"], "Ada Lovelace", "{mode}");
        // The reader's could not: the provider refuses it `users:write`, which ends the client.
        assert_eq!(
            reader["tokenScopes"],
            json!(["users:read"]),
            "{mode}: {reader}"
        );
        assert!(
            reader["create_user"].get("isError").is_none(),
            "{mode}: the reader's create_user ran: {reader}"
        );
        assert!(
            reader["exception"]
                .as_str()
                .is_some_and(|e| e.contains("invalid_scope") && e.contains("users:write")),
            "{mode}: {reader}"
        );
    }
    drop(users);
    provider.stop();

    // The operator's choice: a server binary's 401 names the scopes of the variable.
    let calc = tokio::task::spawn_blocking(|| {
        ExampleHttp::start(
            "calc",
            &[],
            &[
                (mcp_tool::env::BEARER_TOKENS, "ann:tok-ann"),
                (mcp_tool::env::OAUTH_INITIAL_SCOPES, "calc:read, calc:list"),
            ],
        )
    })
    .await
    .expect("calc starts");
    let reply = send(
        client()
            .post(&calc.url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .body(call(1, "add", &json!({"a": 1, "b": 2}))),
    )
    .await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{}", reply.body);
    let challenge = reply.challenge.unwrap_or_default();
    assert!(
        challenge
            .starts_with("Bearer realm=\"mcp\", scope=\"calc:read calc:list\", resource_metadata="),
        "{challenge}"
    );
}

/// Our client obtains its own tokens from the provider (client credentials, found through
/// the server's 401 and its metadata), in both versions: the writer, asking for both scopes
/// (unasked, a client starts with the reading scope the 401 names), sees and runs every
/// tool; the reader, asking for `users:read` only, sees `get_user`, and its `create_user`'s
/// step-up is refused by the provider (the reader may not have `users:write`), which the
/// client reports as such. Then the gateway mounts the same server through a connection that
/// holds the writer's client credentials instead of a token: its first list holds the
/// mounted tools, and a call runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_and_the_gateway_obtain_tokens_with_client_credentials() {
    use mcp_tool::client::oauth::OAuthClient as Credentials;
    let (provider, users, _, url) = users_behind_a_provider().await;
    for version in [VersionChoice::V2025_11_25, VersionChoice::V2026_07_28] {
        let writer = McpClient::connect(
            Connect::http(&url).protocol_version(version).oauth(
                Credentials::client_credentials("writer", "writer-secret")
                    .scopes(["users:read", "users:write"]),
            ),
        )
        .await
        .expect("the writer authorizes itself");
        let tools = listed_by(&writer).await;
        assert!(
            tools.iter().any(|t| t == "create_user"),
            "{version:?}: {tools:?}"
        );
        let created = writer
            .call(
                "create_user",
                json!({"email": "cc@example.com", "name": "Client Credentials"}),
            )
            .await
            .expect("create_user");
        assert_ne!(created["isError"], true, "{version:?}: {created}");
        assert_eq!(created["structuredContent"]["name"], "Client Credentials");
        writer.close().await;

        let reader = McpClient::connect(Connect::http(&url).protocol_version(version).oauth(
            Credentials::client_credentials("reader", "reader-secret").scopes(["users:read"]),
        ))
        .await
        .expect("the reader authorizes itself");
        assert_eq!(listed_by(&reader).await, ["get_user"], "{version:?}");
        let refused = reader
            .call(
                "create_user",
                json!({"email": "r@example.com", "name": "R"}),
            )
            .await;
        match &refused {
            Err(ClientError::Unauthorized(why)) => {
                assert!(
                    why.message().contains("token endpoint"),
                    "{version:?}: {why}"
                );
                assert!(!why.message().contains("reader-secret"), "{why}");
                // What the provider answered, typed, through the transport's error.
                assert_eq!(
                    why.answer().oauth_error(),
                    Some("invalid_scope"),
                    "{version:?}: {why:?}"
                );
                assert!(!why.answer().is_transient(), "{why:?}");
            }
            other => panic!("{version:?}: the step-up was not refused: {other:?}"),
        }
        reader.close().await;
    }

    // The gateway, with the writer's credentials in its connection store.
    let dir = TempDir::new("oauth-gateway");
    let store = dir.path().join("connections.json");
    std::fs::write(
        &store,
        json!({"users-oidc": {
            "server_url": url, "client_id": "writer", "client_secret": "writer-secret",
            "issuer": provider.issuer, "scopes": ["users:read", "users:write"],
        }})
        .to_string(),
    )
    .expect("write the connection store");
    let gateway = gateway_mounting_users(&dir, &store).await;
    for version in [VersionChoice::V2025_11_25, VersionChoice::V2026_07_28] {
        let client = McpClient::connect(Connect::http(&gateway.url).protocol_version(version))
            .await
            .expect("connect to the gateway");
        let tools = listed_by(&client).await;
        assert!(
            tools.iter().any(|t| t == "users__create_user"),
            "{version:?}: {tools:?}"
        );
        let got = client
            .call("users__get_user", json!({"userId": "usr_000000"}))
            .await
            .expect("a forwarded call");
        assert!(
            got["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains("NOT_FOUND")),
            "{version:?}: {got}"
        );
        client.close().await;
    }
    drop(gateway);
    drop(users);
    provider.stop();
}

#[tokio::test]
async fn es256_and_eddsa_tokens_are_verified_too() {
    for alg in ["ES256", "EdDSA"] {
        let ours = Bound::new().await;
        let resource = ours.resource();
        let keys = Keys::new(alg);
        let provider = Provider::start(&keys, alg, &[&resource], 0);
        let srv = ours.serve(
            &provider.issuer,
            OAuthVerifier::new(&provider.issuer, &resource),
        );
        let writer = provider
            .token("writer", &resource, "users:read users:write")
            .await;
        let header: Value = {
            use base64::Engine as _;
            let head = writer.split('.').next().expect("a header");
            let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(head)
                .expect("base64url");
            serde_json::from_slice(&bytes).expect("JSON")
        };
        assert_eq!(header["alg"], alg, "{header}");
        assert_eq!(header["kid"], keys.kid.as_str(), "{header}");
        srv.assert_accepted(&format!("{alg} writer"), &writer).await;
        let reader = provider.token("reader", &resource, "users:read").await;
        assert_eq!(srv.list(&reader).await, ["hello", "list_users"], "{alg}");
        let (reply, ran) = srv.delete(&reader, &format!("{alg}-reader")).await;
        srv.assert_step_up(&format!("{alg} reader"), &reply, ran)
            .await;
    }
}

#[tokio::test]
async fn opaque_tokens_are_checked_by_introspection() {
    let ours = Bound::new().await;
    let resource = ours.resource();
    let keys = Keys::new("RS256");
    let provider = Provider::start(&keys, "RS256", &[&resource, ELSEWHERE], 0);
    let oauth = verifier(&provider.issuer, &resource);
    let srv = ours.serve(&provider.issuer, oauth);
    let opaque = provider
        .token("opaque-reader", &resource, "users:read")
        .await;
    assert_eq!(opaque.matches('.').count(), 0, "not a JWT: {opaque}");
    assert_eq!(srv.list(&opaque).await, ["hello", "list_users"]);
    let (reply, ran) = srv.delete(&opaque, "opaque-reader").await;
    srv.assert_step_up("opaque reader", &reply, ran).await;

    // One the provider does not know, and one for another resource.
    srv.assert_invalid(
        "unknown opaque",
        "an-opaque-token-nobody-issued",
        "the token is not active",
    )
    .await;
    let elsewhere = provider
        .token("opaque-reader", ELSEWHERE, "users:read")
        .await;
    srv.assert_invalid(
        "opaque, another resource",
        &elsewhere,
        "the token was issued for another resource",
    )
    .await;
}

#[tokio::test]
async fn our_client_sends_the_token_it_is_given() {
    let ours = Bound::new().await;
    let resource = ours.resource();
    let keys = Keys::new("RS256");
    let provider = Provider::start(&keys, "RS256", &[&resource], 0);
    let srv = ours.serve(
        &provider.issuer,
        OAuthVerifier::new(&provider.issuer, &resource),
    );
    let reader = provider.token("reader", &resource, "users:read").await;
    let client = McpClient::connect(Connect::http(srv.url()).bearer(&reader))
        .await
        .expect("connects with the reader's token");
    assert_eq!(listed_by(&client).await, ["hello", "list_users"]);
    let name = fresh("client-reader");
    let refused = client
        .call("delete_user", json!({ "name": name }))
        .await
        .expect_err("the reader may not delete");
    match refused {
        ClientError::Rpc(e) => {
            assert_eq!(e.code, -32030, "{e:?}");
            assert_eq!(
                e.data,
                Some(json!({"requiredScopes": ["users:read", "users:write"]}))
            );
        }
        other => panic!("the reader's call: {other:?}"),
    }
    assert!(!deleted(&name), "the tool ran");
    client.close().await;

    // Without a token, the client cannot connect.
    let e = McpClient::connect(Connect::http(srv.url()))
        .await
        .expect_err("no token");
    match e {
        ClientError::Rpc(e) => assert_eq!(e.message, "Unauthorized: a bearer token is required"),
        other => panic!("without a token: {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Tokens refused
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn bad_tokens_are_refused_with_invalid_token() {
    let ours = Bound::new().await;
    let resource = ours.resource();
    let keys = Keys::new("RS256");
    let provider = Provider::start(&keys, "RS256", &[&resource, ELSEWHERE], 0);
    let issuer = provider.issuer.clone();
    let srv = ours.serve(&issuer, verifier(&issuer, &resource));
    let writer = provider
        .token("writer", &resource, "users:read users:write")
        .await;
    srv.assert_accepted("a good token", &writer).await;

    // What a good token of the provider's says, changed one member at a time and signed with
    // its key (or another).
    let claims = |change: Value| {
        let mut claims = json!({
            "iss": issuer, "aud": resource, "sub": "writer", "client_id": "writer",
            "scope": "users:read users:write", "iat": now(), "exp": now() + 300,
            "jti": fresh("jti"),
        });
        for (k, v) in change.as_object().expect("an object") {
            claims[k] = v.clone();
        }
        claims
    };
    let signed = keys.sign(&claims(json!({})), &json!({}));
    srv.assert_accepted("signed like the provider", &signed)
        .await;

    // Another resource.
    let elsewhere = provider
        .token("writer", ELSEWHERE, "users:read users:write")
        .await;
    srv.assert_invalid(
        "another audience",
        &elsewhere,
        "the token was issued for another resource",
    )
    .await;

    // Another issuer: a second provider with the same keys.
    let other = Provider::start(&keys, "RS256", &[&resource], 0);
    let foreign = other
        .token("writer", &resource, "users:read users:write")
        .await;
    srv.assert_invalid(
        "another issuer",
        &foreign,
        "the token was issued by another issuer",
    )
    .await;
    other.stop();

    // Expired, not valid yet (no leeway).
    let expired = keys.sign(
        &claims(json!({"iat": now() - 600, "exp": now() - 60})),
        &json!({}),
    );
    srv.assert_invalid("expired", &expired, "the token has expired")
        .await;
    let early = keys.sign(&claims(json!({"nbf": now() + 3600})), &json!({}));
    srv.assert_invalid("not valid yet", &early, "the token is not valid yet")
        .await;

    // A stranger's key: under the provider's kid, and under its own.
    let stranger = Keys::new("RS256");
    let forged = stranger.sign(&claims(json!({})), &json!({ "kid": keys.kid }));
    srv.assert_invalid(
        "an unknown key under the provider's kid",
        &forged,
        "the token's signature is not valid",
    )
    .await;
    let unknown = stranger.sign(&claims(json!({})), &json!({}));
    srv.assert_invalid(
        "an unknown key",
        &unknown,
        "the token is signed by a key its issuer does not publish",
    )
    .await;
    // The provider's key under a kid that names nothing, or none at all.
    let nowhere = keys.sign(&claims(json!({})), &json!({ "kid": "nowhere" }));
    srv.assert_invalid(
        "a kid that names nothing",
        &nowhere,
        "the token is signed by a key its issuer does not publish",
    )
    .await;
    let no_kid = keys.sign(&claims(json!({})), &json!({ "kid": null }));
    srv.assert_invalid(
        "no kid",
        &no_kid,
        "the token is signed by a key its issuer does not publish",
    )
    .await;

    // Unsigned; and HMAC with the provider's public key (PEM) as the secret.
    let none = keys.sign(&claims(json!({})), &json!({ "alg": "none" }));
    srv.assert_invalid("alg none", &none, "the token is not signed")
        .await;
    let confused = keys.sign(&claims(json!({})), &json!({ "alg": "HS256" }));
    srv.assert_invalid(
        "HS256 with the public key",
        &confused,
        "HMAC-signed tokens are not accepted by this server",
    )
    .await;

    // Not a token the provider would issue: no `sub`; a logout token.
    let mut no_sub = claims(json!({}));
    no_sub.as_object_mut().expect("an object").remove("sub");
    let no_sub = keys.sign(&no_sub, &json!({}));
    srv.assert_invalid("no sub", &no_sub, "the token has no `sub`")
        .await;
    let logout = keys.sign(&claims(json!({})), &json!({ "typ": "logout+jwt" }));
    srv.assert_invalid(
        "a logout token",
        &logout,
        "the token is not an access token",
    )
    .await;

    // Cut short: in its signature, and in its payload. The signature keeps a length no
    // base64url text has (4n + 1): cut to any other length, whether it still decodes depends
    // on the bits of its last character (1 time in 16 it did, and the refusal then named the
    // signature instead).
    let signature_len = writer.len() - writer.rfind('.').expect("a JWT") - 1;
    let cut = (8..12)
        .find(|cut| (signature_len - cut) % 4 == 1)
        .expect("a cut");
    srv.assert_invalid(
        "truncated signature",
        &writer[..writer.len() - cut],
        "the token is not a valid JWT",
    )
    .await;
    // Another token's signature.
    let (signed_part, _) = writer.rsplit_once('.').expect("a JWT");
    let (_, other_signature) = signed.rsplit_once('.').expect("a JWT");
    srv.assert_invalid(
        "another token's signature",
        &format!("{signed_part}.{other_signature}"),
        "the token's signature is not valid",
    )
    .await;
    let cut = writer.rfind('.').expect("a JWT") - 10;
    srv.assert_invalid(
        "truncated payload",
        &writer[..cut],
        "the token is not a valid JWT",
    )
    .await;
    // Longer than the verifier reads (8 KiB); and a megabyte, which the HTTP layer refuses
    // before any authenticator sees it.
    let long = format!("{writer}{}", "A".repeat(8 * 1024));
    srv.assert_invalid("9 KiB", &long, "the token is longer than 8192 bytes")
        .await;
    let huge = format!("{writer}{}", "A".repeat(1 << 20));
    let (reply, ran) = srv.delete(&huge, "huge").await;
    assert_eq!(reply.status, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
    assert_eq!(reply.challenge, None);
    assert!(!ran, "a megabyte token ran a tool");

    // The good token still passes after all that.
    srv.assert_accepted("a good token, again", &writer).await;
}

// ---------------------------------------------------------------------------------------------
// Keys rotated, and an authorization server that is gone
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn rotated_keys_are_fetched_and_the_old_key_is_dropped() {
    // Two servers: one fetches the keys again for any unknown kid, one at most hourly.
    let (eager, slow) = (Bound::new().await, Bound::new().await);
    let (eager_resource, slow_resource) = (eager.resource(), slow.resource());
    let resources = [eager_resource.as_str(), slow_resource.as_str()];
    let old_keys = Keys::new("RS256");
    let provider = Provider::start(&old_keys, "RS256", &resources, 0);
    let (issuer, port) = (provider.issuer.clone(), provider.port);
    let eager = eager.serve(&issuer, verifier(&issuer, &eager_resource));
    let slow_oauth =
        OAuthVerifier::new(&issuer, &slow_resource).refresh_interval(Duration::from_secs(3600));
    let slow = slow.serve(&issuer, slow_oauth);
    let old_eager = provider
        .token("writer", &eager_resource, "users:read users:write")
        .await;
    let old_slow = provider
        .token("writer", &slow_resource, "users:read users:write")
        .await;
    eager.assert_accepted("old key, before", &old_eager).await;
    slow.assert_accepted("old key, before (slow)", &old_slow)
        .await;

    // The provider comes back on the same port with a new key set.
    provider.stop();
    let new_keys = Keys::new("RS256");
    assert_ne!(new_keys.kid, old_keys.kid);
    let provider = Provider::start(&new_keys, "RS256", &resources, port);
    assert_eq!(provider.issuer, issuer);
    let new_eager = provider
        .token("writer", &eager_resource, "users:read users:write")
        .await;
    let new_slow = provider
        .token("writer", &slow_resource, "users:read users:write")
        .await;

    // The eager server fetches the new set for the new kid; the old key is gone from it.
    eager.assert_accepted("new key", &new_eager).await;
    eager
        .assert_invalid(
            "old key, after",
            &old_eager,
            "the token is signed by a key its issuer does not publish",
        )
        .await;

    // The slow one fetched less than an interval ago: it keeps the set it has, so the new
    // key is unknown to it and the old one still good, until it fetches again.
    slow.assert_invalid(
        "new key, within the interval",
        &new_slow,
        "the token is signed by a key its issuer does not publish",
    )
    .await;
    slow.assert_accepted("old key, within the interval", &old_slow)
        .await;
}

#[tokio::test]
async fn an_unreachable_authorization_server_means_503_never_acceptance() {
    let (known, fresh_bound) = (Bound::new().await, Bound::new().await);
    let (known_resource, fresh_resource) = (known.resource(), fresh_bound.resource());
    let resources = [known_resource.as_str(), fresh_resource.as_str()];
    let keys = Keys::new("RS256");
    let provider = Provider::start(&keys, "RS256", &resources, 0);
    let (issuer, port) = (provider.issuer.clone(), provider.port);
    // `known` has fetched the metadata and the keys; `fresh` never met the provider.
    let known = known.serve(&issuer, verifier(&issuer, &known_resource));
    let fresh_srv = fresh_bound.serve(&issuer, verifier(&issuer, &fresh_resource));
    let scope = "users:read users:write";
    let seen = provider.token("writer", &known_resource, scope).await;
    known.assert_accepted("seen before the stop", &seen).await;
    let unseen = provider.token("writer", &known_resource, scope).await;
    let opaque = provider
        .token("opaque-reader", &known_resource, "users:read")
        .await;
    let for_fresh = provider.token("writer", &fresh_resource, scope).await;
    let stranger = Keys::new("RS256");
    let new_kid = stranger.sign(
        &json!({"iss": issuer, "aud": known_resource, "sub": "writer", "exp": now() + 300}),
        &json!({}),
    );
    provider.stop();

    // Nothing can be checked without the provider: 503, and no tool runs.
    fresh_srv
        .assert_unavailable("no metadata yet", &for_fresh)
        .await;
    known
        .assert_unavailable("an opaque token never introspected", &opaque)
        .await;
    known
        .assert_unavailable("a kid not in the keys held", &new_kid)
        .await;
    // A JWT signed by a key already held is checked without the provider.
    known
        .assert_accepted("a new token signed by a held key", &unseen)
        .await;

    // The provider back: the same token passes.
    let provider = Provider::start(&keys, "RS256", &resources, port);
    assert_eq!(provider.issuer, issuer);
    fresh_srv
        .assert_accepted("metadata fetched once back", &for_fresh)
        .await;
}

/// `calc` over HTTP mounting `users` through the connection `users-oidc` of the connection
/// store at `store` (its mount file written into `dir`).
async fn gateway_mounting_users(dir: &TempDir, store: &std::path::Path) -> ExampleHttp {
    let mounts =
        json!([{"type": "mcp", "server_label": "users", "project_connection_id": "users-oidc"}]);
    gateway_mounting(dir, store, &mounts).await
}

/// `calc` over HTTP with the connection store at `store` and the mounts `mounts` (their file
/// written into `dir`).
async fn gateway_mounting(dir: &TempDir, store: &std::path::Path, mounts: &Value) -> ExampleHttp {
    let path = dir.path().join("mounts.json");
    std::fs::write(&path, mounts.to_string()).expect("write the mount file");
    let mounts = path;
    let (store, mounts) = (
        store.to_string_lossy().into_owned(),
        mounts.to_string_lossy().into_owned(),
    );
    tokio::task::spawn_blocking(move || {
        ExampleHttp::start(
            "calc",
            &["--mount", &mounts],
            &[(mcp_tool::env::CONNECTIONS, store.as_str())],
        )
    })
    .await
    .expect("the gateway starts")
}
