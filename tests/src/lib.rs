//! Integration and UI tests of mcp-tool live in `tests/`: protocol round trips through the
//! in-process client, start-time checks, HTTP, real clients, and trybuild cases for every macro
//! diagnostic. This library holds what several of those test files share.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader as StdBufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use mcp_tool::client::{ClientFuture, ClientHandler};
use mcp_tool::protocol::RpcError;
use mcp_tool::server::ServerHandle;
use serde_json::{Value, json};

use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf, split,
};

/// How long a raw session waits for the server.
const WAIT: Duration = Duration::from_secs(5);

/// Waits for a child whose stdout and stderr are piped, reading both; kills it and returns
/// `None` after `limit` (printing what it wrote so far).
pub fn wait_bounded(child: &mut Child, limit: Duration) -> Option<(ExitStatus, String, String)> {
    fn reader(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = pipe.read_to_string(&mut s);
            s
        })
    }
    let out = reader(child.stdout.take().expect("piped stdout"));
    let err = reader(child.stderr.take().expect("piped stderr"));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (out, err) = (
        out.join().expect("stdout reader"),
        err.join().expect("stderr reader"),
    );
    match status {
        Some(status) => Some((status, out, err)),
        None => {
            eprintln!("--- stdout so far:\n{out}\n--- stderr so far:\n{err}");
            None
        }
    }
}

/// The workspace's `interop/` folder: the real clients and servers (npm, PyPI) the interop
/// tests drive, installed by `bash interop/setup.sh`.
pub fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../interop")
        .canonicalize()
        .expect("the interop/ directory of the workspace")
}

/// The path of an example binary of `mcp-tool-examples` (`users`, `files`, …), built once per
/// test binary and name, with the same cargo.
pub fn example_bin(name: &str) -> &'static str {
    static BUILT: Mutex<BTreeMap<String, &'static str>> = Mutex::new(BTreeMap::new());
    // Held while building, so two tests never build the same example at once.
    let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(path) = built.get(name) {
        return path;
    }
    let workspace = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let mut child = Command::new(env!("CARGO"))
        .args([
            "build",
            "-p",
            "mcp-tool-examples",
            "--bin",
            name,
            "--message-format=json",
        ])
        .current_dir(workspace)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cargo runs");
    let (status, out, err) = wait_bounded(&mut child, Duration::from_secs(300))
        .unwrap_or_else(|| panic!("building the {name} example took more than 5 minutes"));
    assert!(status.success(), "cargo build failed:\n{err}");
    let path = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name)
        .find_map(|m| m["executable"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("no {name} executable in cargo's output:\n{err}"));
    let path: &'static str = Box::leak(path.into_boxed_str());
    built.insert(name.to_owned(), path);
    path
}

/// The path of the `users` example (see [`example_bin`]).
pub fn users_bin() -> &'static str {
    example_bin("users")
}

/// An example server on `--http 127.0.0.1:0`, listening on the port the system gave it (read
/// from the line the CLI prints, so no two servers race for a port); killed when dropped.
pub struct ExampleHttp {
    /// The server process.
    pub child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its MCP endpoint.
    pub url: String,
}

impl ExampleHttp {
    /// Sends one JSON-RPC message as an HTTP POST to the endpoint (`Connection: close`) and
    /// leaves the answer unread: with `session`, as that 2025-11-25 session's; without, an
    /// `initialize` as it is and any other message as a 2026-07-28 request (its `Mcp-Method`
    /// and `Mcp-Name`). Reading the answer times out after `bound`.
    pub fn send_raw(&self, session: Option<&str>, body: &str, bound: Duration) -> TcpStream {
        let mut stream = TcpStream::connect(self.addr).expect("connects");
        stream
            .set_read_timeout(Some(bound))
            .expect("a read timeout");
        let message: Value = serde_json::from_str(body).expect("JSON");
        let headers = match session {
            Some(s) => format!("Mcp-Session-Id: {s}\r\nMCP-Protocol-Version: 2025-11-25\r\n"),
            None if message["method"] == "initialize" => String::new(),
            None => format!(
                "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {}\r\nMcp-Name: {}\r\n",
                message["method"].as_str().unwrap_or(""),
                message["params"]["name"].as_str().unwrap_or("")
            ),
        };
        write!(
            stream,
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            self.addr,
            body.len()
        )
        .expect("sent");
        stream
    }

    /// Opens a 2025-11-25 session with `initialize` (its text) and `notifications/initialized`
    /// through [`ExampleHttp::post_raw`]: the session's id.
    pub fn session_raw(&self, initialize: &str, bound: Duration) -> String {
        let answer = self.post_raw(None, initialize, bound);
        let id = answer
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("mcp-session-id:")
                    .map(|v| v.trim().to_owned())
            })
            .unwrap_or_else(|| panic!("no session id: {answer}"));
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        self.post_raw(Some(&id), initialized, bound);
        id
    }

    /// [`ExampleHttp::send_raw`], then the whole answer (head and body) as text, which must be
    /// a success.
    pub fn post_raw(&self, session: Option<&str>, body: &str, bound: Duration) -> String {
        let mut answer = String::new();
        StdBufReader::new(self.send_raw(session, body, bound))
            .read_to_string(&mut answer)
            .expect("an answer");
        assert!(
            answer.lines().next().is_some_and(|l| l.contains(" 20")),
            "{answer}"
        );
        answer
    }
}

impl ExampleHttp {
    /// `users --http 127.0.0.1:0`, without bearer tokens.
    pub fn users() -> ExampleHttp {
        ExampleHttp::start("users", &[], &[])
    }

    /// Starts the example `name` with `args` and `--http 127.0.0.1:0`, its environment plus
    /// `env` (and without bearer tokens unless `env` sets them), and waits (at most 10 s) until
    /// it says where it listens.
    pub fn start(name: &str, args: &[&str], env: &[(&str, &str)]) -> ExampleHttp {
        ExampleHttp::start_bin(example_bin(name), name, args, env)
    }

    /// [`ExampleHttp::start`] for the server binary at `path` (`label` names it in messages).
    pub fn start_bin(path: &str, label: &str, args: &[&str], env: &[(&str, &str)]) -> ExampleHttp {
        ExampleHttp::spawn(path, label, "127.0.0.1:0", args, env)
    }

    /// [`ExampleHttp::start`] on `--http addr` (a port given again, to restart a server where
    /// its clients look for it).
    pub fn start_at(name: &str, addr: &str, args: &[&str], env: &[(&str, &str)]) -> ExampleHttp {
        ExampleHttp::spawn(example_bin(name), name, addr, args, env)
    }

    fn spawn(
        path: &str,
        label: &str,
        addr: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> ExampleHttp {
        let name = label;
        let mut child = Command::new(path)
            .args(args)
            .args(["--http", addr])
            .env_remove(mcp_tool::env::BEARER_TOKENS)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{name} does not start: {e}"));
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = mpsc::channel();
        let label = name.to_owned();
        // Reads the endpoint line, then passes the rest of stderr on (and keeps the pipe drained).
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in StdBufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.split("MCP endpoint ").nth(1)
                    && let Some(tx) = tx.take()
                {
                    let _ = tx.send(url.trim().to_owned());
                } else {
                    eprintln!("{label}: {line}");
                }
            }
        });
        let url = match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(url) => url,
            Err(e) => {
                let _ = child.kill();
                let status = child.wait().expect("wait");
                panic!("{name} --http {addr} never said where it listens ({e}); {status}");
            }
        };
        let addr = url
            .strip_prefix("http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("not an endpoint URL: {url}"));
        ExampleHttp { child, addr, url }
    }
}

impl Drop for ExampleHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fresh folder under the system's temporary folder, removed (with what it holds) when dropped.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// Creates `<tmp>/mcp-tool-<label>-<pid>-<n>`.
    pub fn new(label: &str) -> TempDir {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "mcp-tool-{label}-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        // A leftover of an earlier process with the same id goes first.
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create a temporary folder");
        TempDir { path }
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The folder as a command-line argument.
    pub fn arg(&self) -> &str {
        self.path.to_str().expect("a UTF-8 temporary folder")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// One raw session of a shared core over an in-memory pipe, for tests that need the core
/// itself (`add_tool`, `resource_updated`, …) and several sessions of it.
pub struct RawSession {
    write: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    next_id: i64,
}

impl RawSession {
    /// Opens a session of `server` and initializes it.
    pub async fn open(server: &ServerHandle) -> RawSession {
        let (client_end, server_end) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = split(server_end);
        let server = server.clone();
        tokio::spawn(async move {
            let _ = mcp_tool::testing::serve_io(server, server_read, server_write).await;
        });
        let (read, write) = split(client_end);
        let mut session = RawSession {
            write,
            lines: BufReader::new(read).lines(),
            next_id: 0,
        };
        let init = session
            .request(
                "initialize",
                json!({ "protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": { "name": "raw", "version": "0" } }),
            )
            .await;
        assert!(init.get("result").is_some(), "{init}");
        session
            .send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await;
        session
    }

    /// Writes one message.
    pub async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.flush().await.unwrap();
    }

    /// The next message from the server.
    pub async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.lines.next_line())
            .await
            .expect("the server writes within the timeout")
            .unwrap()
            .expect("the server is running");
        serde_json::from_str(&line).unwrap()
    }

    /// Sends a request; returns its response, failing on any other message before it.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        let message = self.next().await;
        assert_eq!(
            message["id"], id,
            "expected the response to {method}, got {message}"
        );
        message
    }

    /// The names `tools/list` gives.
    pub async fn tool_names(&mut self) -> Vec<String> {
        let r = self.request("tools/list", json!({})).await;
        r["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .filter_map(|t| t["name"].as_str().map(String::from))
            .collect()
    }

    /// Calls a tool; returns the whole response.
    pub async fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.request(
            "tools/call",
            json!({ "name": name, "arguments": arguments }),
        )
        .await
    }

    /// Asserts that the next message is `notifications/tools/list_changed`.
    pub async fn expect_list_changed(&mut self) {
        let m = self.next().await;
        assert_eq!(
            m,
            json!({ "jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {} })
        );
    }

    /// Asserts that nothing came before the answer to a ping.
    pub async fn expect_nothing_pending(&mut self) {
        let pong = self.request("ping", json!({})).await;
        assert_eq!(pong["result"], json!({}), "{pong}");
    }
}

/// An HTTP client for the tests (no proxy). mcp-tool's `client` feature builds reqwest with
/// rustls and no built-in crypto provider, so a reqwest client in the same process needs a
/// process-wide one: ring's is installed first (a no-op when one is there already).
pub fn http_client() -> reqwest::Client {
    install_crypto_provider();
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("an HTTP client")
}

/// Installs ring's rustls crypto provider as the process default (a no-op when one is there):
/// needed before any reqwest client is built in a process that has mcp-tool's `client`
/// feature (see [`http_client`]), such as rmcp's Streamable HTTP transport.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A user of a client: answers every kind of question a server asks (a form with a name, or
/// a color when the form asks for one; a model's reply; the roots), and keeps what was asked.
pub struct User {
    /// What was asked: each request's method and params.
    pub asked: Mutex<Vec<(String, Value)>>,
    /// What the "model" replies to a sampling request.
    sampled: &'static str,
}

impl Default for User {
    fn default() -> Self {
        User::saying("Hello")
    }
}

impl User {
    /// A user whose model replies `sampled`.
    pub fn saying(sampled: &'static str) -> Self {
        User {
            asked: Mutex::default(),
            sampled,
        }
    }

    /// The methods asked, in order.
    pub fn methods(&self) -> Vec<String> {
        let asked = self.asked.lock().unwrap_or_else(PoisonError::into_inner);
        asked.iter().map(|(m, _)| m.clone()).collect()
    }
}

impl ClientHandler for User {
    fn capabilities(&self) -> Value {
        json!({ "elicitation": { "form": {} }, "sampling": {}, "roots": {} })
    }

    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> ClientFuture<'a, Result<Value, RpcError>> {
        Box::pin(async move {
            self.asked
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((method.to_owned(), params.clone()));
            let message = params["message"].as_str().unwrap_or_default();
            Ok(match method {
                "elicitation/create" if message.contains("color") => {
                    json!({ "action": "accept", "content": { "color": "teal" } })
                }
                "elicitation/create" => {
                    json!({ "action": "accept", "content": { "name": "Ada" } })
                }
                "sampling/createMessage" => json!({
                    "role": "assistant",
                    "content": { "type": "text", "text": self.sampled },
                    "model": "test-model",
                    "stopReason": "endTurn"
                }),
                "roots/list" => json!({ "roots": [{ "uri": "file:///srv/a" }] }),
                other => return Err(RpcError::new(-32601, format!("no {other} here"))),
            })
        })
    }
}

/// Serves `handle` as the POST of `/mcp` on a loopback port (GET is 405, DELETE 200): a small
/// MCP server written by hand for a test. Returns its URL.
pub async fn serve_mcp<H, T>(handle: H) -> String
where
    H: axum::handler::Handler<T, ()>,
    T: 'static,
{
    use axum::http::StatusCode;
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(handle)
            .get(|| async { StatusCode::METHOD_NOT_ALLOWED })
            .delete(|| async { StatusCode::OK }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a loopback port");
    let addr = listener.local_addr().expect("the listener's address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/mcp")
}

/// Raw Streamable HTTP requests to an endpoint, each with the bearer token given (or none):
/// what the authentication tests send, read whole (status, challenge, body).
pub mod raw_http {
    use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
    use reqwest::{RequestBuilder, StatusCode};
    use serde_json::{Value, json};

    /// A response read whole.
    pub struct Reply {
        /// Its status.
        pub status: StatusCode,
        /// Its `WWW-Authenticate` header.
        pub challenge: Option<String>,
        /// Its `Retry-After` header.
        pub retry_after: Option<String>,
        /// The JSON-RPC message of its body (JSON or one SSE event), or null.
        pub body: Value,
    }

    /// Sends `request` and reads its answer whole.
    pub async fn send(request: RequestBuilder) -> Reply {
        let response = request.send().await.expect("the server answers");
        let status = response.status();
        let header = |name| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let (challenge, retry_after) = (header(WWW_AUTHENTICATE), header(RETRY_AFTER));
        let text = response.text().await.expect("a body");
        // An SSE answer carries its message on a `data:` line (after a resumable stream's
        // priming event, whose data is empty).
        let json = text
            .lines()
            .find_map(|l| l.strip_prefix("data: ").filter(|d| !d.trim().is_empty()))
            .unwrap_or(&text);
        Reply {
            status,
            challenge,
            retry_after,
            body: serde_json::from_str(json).unwrap_or(Value::Null),
        }
    }

    /// The sorted names of a `tools/list` answer.
    pub fn tool_names(list: &Value) -> Vec<String> {
        let mut names: Vec<String> = list["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("a tool list: {list}"))
            .iter()
            .map(|t| t["name"].as_str().expect("a name").to_owned())
            .collect();
        names.sort();
        names
    }

    /// An endpoint at `{base}/mcp`.
    pub struct Endpoint {
        /// `http://host:port`.
        pub base: String,
        /// The client the requests go through.
        pub http: reqwest::Client,
    }

    impl Endpoint {
        /// The endpoint at `{base}/mcp`.
        pub fn new(base: String) -> Endpoint {
            super::install_crypto_provider();
            let http = reqwest::Client::builder()
                .no_proxy()
                .timeout(std::time::Duration::from_secs(20))
                .build()
                .expect("an HTTP client");
            Endpoint { base, http }
        }

        /// The endpoint's URL.
        pub fn url(&self) -> String {
            format!("{}/mcp", self.base)
        }

        /// A POST of JSON to the endpoint, with `token` if any.
        pub fn post(&self, token: Option<&str>) -> RequestBuilder {
            let request = self
                .http
                .post(self.url())
                .header(ACCEPT, "application/json, text/event-stream")
                .header(CONTENT_TYPE, "application/json");
            match token {
                Some(t) => request.header(AUTHORIZATION, format!("Bearer {t}")),
                None => request,
            }
        }

        /// A 2025-11-25 session of `token`'s holder: its id.
        pub async fn session(&self, token: Option<&str>) -> String {
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}});
            let response = self
                .post(token)
                .body(init.to_string())
                .send()
                .await
                .expect("initialize");
            assert_eq!(response.status(), StatusCode::OK);
            let id = response.headers()["mcp-session-id"]
                .to_str()
                .expect("an id")
                .to_owned();
            let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            let reply = send(self.in_session(token, &id).body(done.to_string())).await;
            assert_eq!(reply.status, StatusCode::ACCEPTED);
            id
        }

        /// A POST in the session `id`.
        pub fn in_session(&self, token: Option<&str>, id: &str) -> RequestBuilder {
            self.post(token)
                .header("mcp-session-id", id)
                .header("mcp-protocol-version", "2025-11-25")
        }

        /// A 2026-07-28 request of `token`'s holder (id 7), with the headers that mirror it.
        pub async fn stateless(
            &self,
            token: Option<&str>,
            method: &str,
            name: Option<&str>,
            params: Value,
        ) -> Reply {
            let mut params = params;
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            });
            let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
            let mut request = self
                .post(token)
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", method);
            if let Some(name) = name {
                request = request.header("mcp-name", name);
            }
            send(request.body(body.to_string())).await
        }

        /// A 2026-07-28 `tools/call` of the tool `name` with `arguments`, of `token`'s holder.
        pub async fn call_tool(&self, token: Option<&str>, name: &str, arguments: Value) -> Reply {
            let params = json!({"name": name, "arguments": arguments});
            self.stateless(token, "tools/call", Some(name), params)
                .await
        }

        /// A 2026-07-28 `resources/read` of `uri`, of `token`'s holder.
        pub async fn read_resource(&self, token: Option<&str>, uri: &str) -> Reply {
            self.stateless(token, "resources/read", Some(uri), json!({"uri": uri}))
                .await
        }
    }
}
