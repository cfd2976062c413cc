//! A gateway served over stdio (`calc --mount …`, a child process as an MCP host starts it)
//! signs its one local user in to a per-user mount of `users --http` behind oidc-provider:
//! each sign-in binds a loopback listener (RFC 8252 §7.3), the user is given the gateway's
//! start link on it — through URL-mode elicitation, or in the call's error when the client
//! cannot show a page — and on the gateway's stderr; the test's browser (a cookie jar) logs in
//! at the provider and is sent back to the listener, which takes the redirect from that
//! browser only, then closes. Both revisions.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_tool::client::{ClientFuture, ClientHandler, Connect, McpClient, VersionChoice};
use mcp_tool::protocol::RpcError;
use mcp_tool_tests::{TempDir, example_bin};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::super::{listed_by, users_behind_a_provider_with};
use super::{Browser, Holder, mounted, query_value, text_of, user_mount_files};

/// Every tool of `users`, as Alice's token (every scope) lists them; Bob's is read-only.
const ALICES: [&str; 4] = [
    "users__create_user",
    "users__delete_user",
    "users__get_user",
    "users__seed_users",
];

/// A gateway over stdio: `calc --mount` started by the client, its stderr kept in a file.
struct StdioGateway {
    client: McpClient,
    stderr: std::path::PathBuf,
    _dir: TempDir,
}

impl StdioGateway {
    async fn start(
        url: &str,
        version: VersionChoice,
        handler: Arc<dyn ClientHandler>,
    ) -> StdioGateway {
        let dir = TempDir::new("oauth-stdio-sign-in");
        let (store, mounts) = user_mount_files(&dir, url, &[]);
        let stderr = dir.path().join("stderr.log");
        let calc = tokio::task::spawn_blocking(|| example_bin("calc"))
            .await
            .expect("calc is built");
        // The shell only sends the gateway's stderr to a file: stdin and stdout are the
        // client's pipes, as an MCP host gives them.
        let client = McpClient::connect_with(
            Connect::stdio(
                "sh",
                [
                    "-c".to_owned(),
                    "exec \"$0\" --mount \"$1\" 2>\"$2\"".to_owned(),
                    calc.to_owned(),
                    mounts.to_string_lossy().into_owned(),
                    stderr.to_string_lossy().into_owned(),
                ],
            )
            .env(mcp_tool::env::CONNECTIONS, store.to_string_lossy())
            .protocol_version(version)
            .timeout(Duration::from_secs(120)),
            handler,
        )
        .await
        .expect("the stdio gateway starts");
        StdioGateway {
            client,
            stderr,
            _dir: dir,
        }
    }

    /// Waits (bounded) until the gateway's stderr holds `text`.
    async fn said(&self, text: &str) {
        let said = tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                let log = std::fs::read_to_string(&self.stderr).unwrap_or_default();
                if log.contains(text) {
                    return log;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
        assert!(
            said.is_ok(),
            "the gateway's stderr never said {text}: {}",
            std::fs::read_to_string(&self.stderr).unwrap_or_default()
        );
    }
}

/// The port of a loopback URL `http://127.0.0.1:PORT/…`.
fn port_of(url: &str) -> u16 {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.port())
        .unwrap_or_else(|| panic!("no port in {url}"))
}

/// Whether something listens on 127.0.0.1:`port`.
fn listens(port: u16) -> bool {
    std::net::TcpStream::connect_timeout(
        &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Duration::from_secs(2),
    )
    .is_ok()
}

/// The user of a stdio gateway calls the mount's sign-in tool, through a client that shows pages (URL-mode elicitation): the page is the gateway's start link on a loopback
/// listener, also on its stderr. Bob's browser, handed the authorization page Alice's browser
/// was sent to, logs in and comes back: refused (it holds no start link cookie), and nothing is
/// signed in. Alice's browser finishes: the call runs, as her (every tool; Bob's token is
/// read-only), and the listener is closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_gateway_signs_its_user_in_on_a_loopback_listener() {
    let (provider, users, _, url) = users_behind_a_provider_with(&["--read-only", "bob"]).await;
    for version in [VersionChoice::V2025_11_25, VersionChoice::V2026_07_28] {
        let alice = Arc::new(Holder {
            pages: Mutex::new(Vec::new()),
        });
        let gateway = StdioGateway::start(&url, version, alice.clone()).await;
        assert_eq!(
            mounted(&listed_by(&gateway.client).await),
            ["users__sign_in"]
        );
        // Until the user signs in, the mount's one tool is its sign-in tool.
        let calling = tokio::spawn({
            let client = gateway.client.clone();
            async move { client.call("users__sign_in", json!({})).await }
        });
        let start = alice.first_page("the user is asked to open a page").await;
        assert!(start.starts_with("http://127.0.0.1:"), "{start}");
        assert!(start.contains("/callback?start="), "{start}");
        gateway.said(&start).await;
        let port = port_of(&start);
        assert!(listens(port));

        // Alice's browser opens it: a cookie, and on to the provider, which is to send her
        // back to the listener.
        let mut alices = Browser::new("alice");
        let (status, location, _) = alices.open(&start).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        let authorize = location.expect("sent on");
        assert!(
            authorize.starts_with(&format!("{}/auth?", provider.issuer)),
            "{authorize}"
        );
        assert_eq!(
            query_value(&authorize, "redirect_uri").as_deref(),
            Some(format!("http://127.0.0.1:{port}/callback").as_str())
        );
        assert!(
            alices.cookies.keys().any(|k| k.starts_with("mcp-sign-in-")),
            "{:?}",
            alices.cookies.keys()
        );

        // Bob's browser, without the start link's cookie, cannot finish her sign-in.
        let (status, text, at) = Browser::new("bob").sign_in(&authorize).await;
        assert!(
            at.starts_with(&format!("http://127.0.0.1:{port}/callback?")),
            "{at}"
        );
        assert!(at.contains("code="), "the provider gave Bob a code: {at}");
        assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
        assert!(text.contains("did not start this sign-in"), "{text}");
        assert!(!calling.is_finished(), "nothing is signed in");
        // Nor does the start link work twice.
        let (status, _, text) = Browser::new("bob").open(&start).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");

        // Alice's own browser finishes: the call runs as her.
        let (status, text, _) = alices.walk(&authorize).await;
        assert_eq!(status, StatusCode::OK, "{text}");
        assert!(text.contains("You are signed in"), "{text}");
        let signed = calling
            .await
            .expect("the call")
            .expect("the sign-in tool answers");
        assert_ne!(signed["isError"], true, "{signed}");
        assert!(
            text_of(&signed).starts_with("Signed in to `users`."),
            "{signed}"
        );
        acts_as_alice(&gateway.client).await;
        assert_eq!(alice.pages.lock().unwrap().len(), 1);
        // The sign-in is over: its listener is closed.
        assert!(!listens(port), "the loopback listener is closed");
        gateway.client.close().await;
    }
    drop(users);
    provider.stop();
}

/// Alice's call runs through the gateway (as her: every tool of hers), which lists her tools.
async fn acts_as_alice(client: &McpClient) {
    let got = client
        .call("users__get_user", json!({"userId": "usr_000000"}))
        .await
        .expect("get_user through the gateway");
    assert!(text_of(&got).contains("NOT_FOUND"), "{got}");
    assert_eq!(mounted(&listed_by(client).await), ALICES);
}

/// A client that shows no pages (no `elicitation.url`).
struct NoPages;

impl ClientHandler for NoPages {
    fn capabilities(&self) -> Value {
        json!({ "elicitation": { "form": {} } })
    }

    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> ClientFuture<'a, Result<Value, RpcError>> {
        Box::pin(async move { panic!("not asked for anything: {method} {params}") })
    }
}

/// Through a client that cannot show a page, the call's error gives the start link (and the
/// gateway's stderr does): the user opens it, signs in, and calls again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_gateway_gives_the_sign_in_link_in_the_error_to_a_client_without_pages() {
    let (provider, users, _, url) = users_behind_a_provider_with(&["--read-only", "bob"]).await;
    for version in [VersionChoice::V2025_11_25, VersionChoice::V2026_07_28] {
        let gateway = StdioGateway::start(&url, version, Arc::new(NoPages)).await;
        let refused = gateway
            .client
            .call("users__sign_in", json!({}))
            .await
            .expect("an answer");
        assert_eq!(refused["isError"], true, "{refused}");
        let text = text_of(&refused);
        assert!(text.contains("sign in first"), "{text}");
        let start = text
            .split_whitespace()
            .find(|w| w.starts_with("http://127.0.0.1:"))
            .unwrap_or_else(|| panic!("no link in {text}"))
            .to_owned();
        assert!(start.contains("/callback?start="), "{start}");
        gateway.said(&start).await;
        // Asked again before signing in: the same sign-in, the same link.
        let again = gateway
            .client
            .call("users__sign_in", json!({}))
            .await
            .expect("an answer");
        assert_eq!(again["isError"], true, "{again}");
        assert!(text_of(&again).contains(&start), "{again}");
        let (status, text, at) = Browser::new("alice").sign_in(&start).await;
        assert_eq!(status, StatusCode::OK, "{text}");
        assert!(text.contains("You are signed in"), "{text}");
        assert!(at.starts_with(&format!("http://127.0.0.1:{}/callback?", port_of(&start))));
        // Called again at once: the page says "signed in" only once the user's tools are
        // listed, so the call finds them (it used to be given the link again for a moment).
        let got = gateway
            .client
            .call("users__sign_in", json!({}))
            .await
            .expect("the sign-in tool answers");
        assert!(!text_of(&got).contains(&start), "{got}");
        assert_ne!(got["isError"], true, "{got}");
        acts_as_alice(&gateway.client).await;
        assert!(!listens(port_of(&start)), "the loopback listener is closed");
        gateway.client.close().await;
    }
    drop(users);
    provider.stop();
}
