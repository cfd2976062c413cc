//! The gateway acting for each of its users: `users --http` behind oidc-provider, mounted
//! through a connection with `grant: authorization_code`. Each calling user (a bearer token of
//! the gateway's own) is asked through URL-mode elicitation to open the provider's sign-in
//! page; the test follows that address as a browser would (the provider's login and consent
//! forms, its cookies, its redirects), back to the gateway's own endpoint. One user does it
//! from a 2025-11-25 client through the mount's sign-in tool, the other from a 2026-07-28 client
//! by calling a mounted tool at once; each gets a token of their own (the second a read-only
//! one), and sees and runs what their own token allows.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_tool::client::{ClientFuture, ClientHandler, Connect, McpClient, VersionChoice};
use mcp_tool::protocol::RpcError;
use mcp_tool_tests::{ExampleHttp, TempDir};
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, COOKIE, LOCATION, SET_COOKIE};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::{listed_by, users_behind_a_provider, users_behind_a_provider_with};

#[path = "kept.rs"]
mod kept;
#[path = "stdio_sign_in.rs"]
mod stdio;

/// A person at a browser, signing in on the provider's pages as `login`.
struct Browser {
    login: String,
    http: reqwest::Client,
    cookies: BTreeMap<String, String>,
}

/// Where a page's form posts to (`action="…"`), if it has one.
fn form_action(html: &str) -> Option<String> {
    let at = html.find("<form")?;
    let rest = &html[at..];
    let start = rest.find("action=\"")? + "action=\"".len();
    let end = rest[start..].find('"')?;
    Some(rest[start..start + end].replace("&amp;", "&"))
}

impl Browser {
    fn new(login: &str) -> Browser {
        Browser {
            login: login.to_owned(),
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(Duration::from_secs(20))
                .build()
                .expect("a browser"),
            cookies: BTreeMap::new(),
        }
    }

    /// One request, as this browser sends it (its cookies), keeping the cookies it is given:
    /// the status, where it redirects (if it does), and the text.
    async fn open(&mut self, page: &str) -> (StatusCode, Option<String>, String) {
        let cookies: Vec<String> = self
            .cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let answer = self
            .http
            .get(page)
            .header(COOKIE, cookies.join("; "))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{page}: {e}"));
        self.keep_cookies(&answer);
        let status = answer.status();
        let location = answer
            .headers()
            .get(LOCATION)
            .map(|l| l.to_str().expect("a location").to_owned());
        (status, location, answer.text().await.unwrap_or_default())
    }

    fn keep_cookies(&mut self, answer: &reqwest::Response) {
        for set in answer.headers().get_all(SET_COOKIE) {
            let pair = set.to_str().unwrap_or_default().split(';').next().unwrap();
            if let Some((name, value)) = pair.split_once('=') {
                if value.is_empty() {
                    self.cookies.remove(name);
                } else {
                    self.cookies.insert(name.to_owned(), value.to_owned());
                }
            }
        }
    }

    /// Opens `page` and goes through the provider's sign-in and consent, following every
    /// redirect, until a page that asks nothing more: the last status and text, and the
    /// address it came from.
    async fn sign_in(mut self, page: &str) -> (StatusCode, String, String) {
        self.walk(page).await
    }

    /// [`Browser::sign_in`], keeping the browser (its cookies) for more.
    async fn walk(&mut self, page: &str) -> (StatusCode, String, String) {
        let mut url = reqwest::Url::parse(page).expect("the page is a URL");
        let mut form: Option<Vec<(&str, String)>> = None;
        for _ in 0..20 {
            let request = match form.take() {
                Some(fields) => {
                    let body = reqwest::Url::parse_with_params("http://form.invalid/", &fields)
                        .expect("a form")
                        .query()
                        .unwrap_or_default()
                        .to_owned();
                    self.http
                        .post(url.clone())
                        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                        .body(body)
                }
                None => self.http.get(url.clone()),
            };
            let cookies: Vec<String> = self
                .cookies
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            let answer = request
                .header(COOKIE, cookies.join("; "))
                .send()
                .await
                .unwrap_or_else(|e| panic!("{url}: {e}"));
            self.keep_cookies(&answer);
            let status = answer.status();
            if status.is_redirection() {
                let to = answer.headers()[LOCATION].to_str().expect("a location");
                url = url.join(to).expect("a redirect to a URL");
                continue;
            }
            let text = answer.text().await.unwrap_or_default();
            if text.contains("name=\"login\"") {
                form = Some(vec![
                    ("prompt", "login".into()),
                    ("login", self.login.clone()),
                    ("password", "any".into()),
                ]);
            } else if text.contains("value=\"consent\"") {
                form = Some(vec![("prompt", "consent".into())]);
            } else {
                return (status, text, url.to_string());
            }
            let action = form_action(&text).unwrap_or_else(|| panic!("no form in {text}"));
            url = url.join(&action).expect("a form address");
        }
        panic!("the sign-in went round in circles at {url}");
    }
}

/// A user's client: declares URL-mode elicitation, and when the gateway asks them to sign in,
/// opens the page in a browser of their own (or declines).
struct Person {
    login: String,
    accept: bool,
    url_mode: bool,
    asked: Mutex<Vec<Value>>,
    walks: Mutex<Vec<JoinHandle<(StatusCode, String, String)>>>,
    /// The start link opened elsewhere: its address's beginning replaced (another replica).
    open_at: Mutex<Option<(String, String)>>,
}

impl Person {
    fn new(login: &str) -> Arc<Person> {
        Person::with(login, true, true)
    }

    /// A person who accepts to sign in or not, with a client that declares URL-mode
    /// elicitation or not.
    fn with(login: &str, accept: bool, url_mode: bool) -> Arc<Person> {
        Arc::new(Person {
            login: login.to_owned(),
            accept,
            url_mode,
            asked: Mutex::new(Vec::new()),
            walks: Mutex::new(Vec::new()),
            open_at: Mutex::new(None),
        })
    }

    /// The browser walks this person made: each one's last page.
    async fn walked(&self) -> Vec<(StatusCode, String, String)> {
        let walks: Vec<_> = self.walks.lock().unwrap().drain(..).collect();
        let mut pages = Vec::new();
        for walk in walks {
            pages.push(walk.await.expect("the browser walk"));
        }
        pages
    }
}

/// A user's client that accepts to sign in and keeps the page: the test walks it itself.
struct Holder {
    pages: Mutex<Vec<String>>,
}

impl Holder {
    /// The first page the user was asked to open, once there is one (within 30 s); `what`
    /// says who waits for it.
    async fn first_page(&self, what: &str) -> String {
        tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                if let Some(page) = self.pages.lock().unwrap().first() {
                    return page.clone();
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("{what}"))
    }
}

impl ClientHandler for Holder {
    fn capabilities(&self) -> Value {
        json!({ "elicitation": { "form": {}, "url": {} } })
    }

    fn request<'a>(
        &'a self,
        _method: &'a str,
        params: Value,
    ) -> ClientFuture<'a, Result<Value, RpcError>> {
        Box::pin(async move {
            let page = params["url"].as_str().expect("a URL").to_owned();
            self.pages.lock().unwrap().push(page);
            Ok(json!({ "action": "accept" }))
        })
    }
}

impl ClientHandler for Person {
    fn capabilities(&self) -> Value {
        if self.url_mode {
            json!({ "elicitation": { "form": {}, "url": {} } })
        } else {
            json!({ "elicitation": { "form": {} } })
        }
    }

    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> ClientFuture<'a, Result<Value, RpcError>> {
        Box::pin(async move {
            assert_eq!(method, "elicitation/create", "{params}");
            assert_eq!(params["mode"], "url", "{params}");
            self.asked.lock().unwrap().push(params.clone());
            if !self.accept {
                return Ok(json!({ "action": "decline" }));
            }
            let mut page = params["url"].as_str().expect("a URL").to_owned();
            if let Some((from, to)) = &*self.open_at.lock().unwrap() {
                assert!(page.starts_with(from.as_str()), "{page}");
                page = page.replacen(from.as_str(), to, 1);
            }
            let browser = Browser::new(&self.login);
            self.walks
                .lock()
                .unwrap()
                .push(tokio::spawn(async move { browser.sign_in(&page).await }));
            Ok(json!({ "action": "accept" }))
        })
    }
}

async fn connect(
    url: &str,
    token: &str,
    version: VersionChoice,
    person: &Arc<Person>,
) -> McpClient {
    McpClient::connect_with(
        Connect::http(url)
            .protocol_version(version)
            .bearer(token)
            .timeout(Duration::from_secs(60)),
        person.clone(),
    )
    .await
    .expect("connect to the gateway")
}

/// The answer of the mount's sign-in tool.
async fn sign_in_tool(client: &McpClient) -> Value {
    client
        .call("users__sign_in", json!({}))
        .await
        .expect("the sign-in tool answers")
}

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_user_of_the_gateway_signs_in_and_acts_with_a_token_of_their_own() {
    let (provider, users, _, url) = users_behind_a_provider_with(&["--read-only", "bob"]).await;
    let gateway = Gateway::start(
        &url,
        "alice:tok-alice,bob:tok-bob,carol:tok-carol,dave:tok-dave",
    )
    .await;
    let gateway_origin = gateway.origin();

    // Alice, with a 2025-11-25 client: before she signs in, the mount shows her its sign-in
    // tool only.
    let alice = Person::new("alice");
    let as_alice = connect(
        gateway.url(),
        "tok-alice",
        VersionChoice::V2025_11_25,
        &alice,
    )
    .await;
    assert_eq!(mounted(&listed_by(&as_alice).await), ["users__sign_in"]);
    let signed = sign_in_tool(&as_alice).await;
    assert_ne!(signed["isError"], true, "{signed}");
    assert_eq!(
        text_of(&signed),
        "Signed in to `users`. Its tools: users__create_user, users__delete_user, \
         users__get_user, users__seed_users, users__send_email."
    );
    // She was sent to the provider's authorization page, for the users server.
    let asked = alice.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    // The gateway's own start link, which sends her browser on to the provider's
    // authorization page (for the users server); it works once only.
    let page = asked[0]["url"].as_str().unwrap();
    assert!(
        page.starts_with(&format!("{gateway_origin}/oauth/callback?start=")),
        "{page}"
    );
    let (status, _, _) = Browser::new("alice").open(page).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "opened a second time");
    // Her browser ended on the gateway's own page.
    let walked = alice.walked().await;
    assert_eq!(walked.len(), 1);
    let (status, text, at) = &walked[0];
    assert_eq!(*status, StatusCode::OK, "{text}");
    assert!(text.contains("You are signed in"), "{text}");
    assert!(
        at.starts_with(&format!("{gateway_origin}/oauth/callback?")),
        "{at}"
    );
    // Now she sees the users server's tools as her token allows (all of them; `send_email` is
    // deferred: found through the tool search), and runs one.
    let hers = [
        "users__create_user",
        "users__delete_user",
        "users__get_user",
        "users__seed_users",
    ];
    assert_eq!(mounted(&listed_by(&as_alice).await), hers);
    let created = as_alice
        .call(
            "users__create_user",
            json!({"email": "alice@example.com", "name": "Alice"}),
        )
        .await
        .expect("create_user through the gateway");
    assert_ne!(created["isError"], true, "{created}");
    assert_eq!(created["structuredContent"]["name"], "Alice", "{created}");

    // Bob, with a 2026-07-28 client, sees none of Alice's tools: only the sign-in tool.
    let bob = Person::new("bob");
    let as_bob = connect(gateway.url(), "tok-bob", VersionChoice::V2026_07_28, &bob).await;
    assert_eq!(mounted(&listed_by(&as_bob).await), ["users__sign_in"]);
    // He calls a mounted tool at once: the call asks him to sign in, then runs as him.
    let got = as_bob
        .call("users__get_user", json!({"userId": "usr_000000"}))
        .await
        .expect("get_user through the gateway");
    assert!(text_of(&got).contains("NOT_FOUND"), "{got}");
    assert_eq!(bob.asked.lock().unwrap().len(), 1);
    let walked = bob.walked().await;
    assert_eq!(walked.len(), 1);
    assert_eq!(walked[0].0, StatusCode::OK, "{}", walked[0].1);
    // His token is his own, read-only: he sees `get_user` only, and the writing tools are not
    // his to call.
    assert_eq!(mounted(&listed_by(&as_bob).await), ["users__get_user"]);
    let refused = as_bob
        .call(
            "users__create_user",
            json!({"email": "bob@example.com", "name": "Bob"}),
        )
        .await
        .expect("an answer");
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        text_of(&refused).contains("does not list `create_user` for this user"),
        "{refused}"
    );
    // Alice still has hers.
    assert_eq!(mounted(&listed_by(&as_alice).await), hers);
    // The tool search finds a deferred tool of the mount for those who have it only.
    let search = |client: &McpClient| {
        let client = client.clone();
        async move {
            let found = client
                .call("search_tools", json!({"query": "send an email"}))
                .await
                .expect("search_tools");
            found["structuredContent"]["tools"]
                .as_array()
                .expect("the tools found")
                .iter()
                .filter_map(|t| t["name"].as_str().map(String::from))
                .collect::<Vec<String>>()
        }
    };
    assert!(search(&as_bob).await.is_empty());
    assert_eq!(search(&as_alice).await, ["users__send_email"]);

    // Carol's client cannot show a page: she is told which capability it lacks.
    let carol = Person::with("carol", true, false);
    let as_carol = connect(
        gateway.url(),
        "tok-carol",
        VersionChoice::V2025_11_25,
        &carol,
    )
    .await;
    let refused = sign_in_tool(&as_carol).await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(text_of(&refused).contains("`elicitation.url`"), "{refused}");
    // Dave declines: nothing is sent for him, and he is still signed out.
    let dave = Person::with("dave", false, true);
    let as_dave = connect(gateway.url(), "tok-dave", VersionChoice::V2026_07_28, &dave).await;
    let declined = as_dave
        .call("users__get_user", json!({"userId": "usr_000000"}))
        .await
        .expect("an answer");
    assert_eq!(declined["isError"], true, "{declined}");
    assert!(
        text_of(&declined).contains("did not sign in to `users`"),
        "{declined}"
    );
    assert_eq!(mounted(&listed_by(&as_dave).await), ["users__sign_in"]);

    // A redirect nobody waits for is refused.
    let stray = reqwest::get(format!("{gateway_origin}/oauth/callback?code=x&state=y"))
        .await
        .expect("the gateway answers");
    assert_eq!(stray.status(), StatusCode::BAD_REQUEST);

    for client in [as_alice, as_bob, as_carol, as_dave] {
        client.close().await;
    }
    drop(gateway);
    drop(users);
    provider.stop();
}

/// The mounted tools among `names`.
fn mounted(names: &[String]) -> Vec<String> {
    names
        .iter()
        .filter(|n| n.starts_with("users__"))
        .cloned()
        .collect()
}

/// A gateway (`calc --http`) whose callers are the users of `tokens`
/// (`MCP_TOOL_BEARER_TOKENS`), mounting the users server at `url` for each user.
/// The connection store and mount file in `dir` of a gateway mounting `url` per user as
/// `users`, its connection given `more` fields. Both scopes are asked for: unasked, a sign-in
/// would start with the reading scope the server's 401 names.
fn user_mount_files(
    dir: &TempDir,
    url: &str,
    more: &[(&str, &str)],
) -> (std::path::PathBuf, std::path::PathBuf) {
    let store = dir.path().join("connections.json");
    let mut connection = json!({"server_url": url, "grant": "authorization_code",
                                "scopes": ["users:read", "users:write"]});
    for (name, value) in more {
        connection[*name] = json!(value);
    }
    std::fs::write(&store, json!({ "users-each": connection }).to_string())
        .expect("write the connection store");
    let mounts = dir.path().join("mounts.json");
    std::fs::write(
        &mounts,
        json!([{"type": "mcp", "server_label": "users", "project_connection_id": "users-each",
                "tool_configs": {"send_email": {"defer_loading": true}}}])
        .to_string(),
    )
    .expect("write the mount file");
    (store, mounts)
}

struct Gateway {
    http: ExampleHttp,
    _dir: TempDir,
}

impl Gateway {
    async fn start(url: &str, tokens: &str) -> Gateway {
        let dir = TempDir::new("oauth-sign-in");
        Gateway::start_with(url, tokens, dir, "127.0.0.1:0", &[], &[]).await
    }

    /// [`Gateway::start`] in `dir`, on `addr`, its connection given `more` fields and the
    /// gateway `env`.
    async fn start_with(
        url: &str,
        tokens: &str,
        dir: TempDir,
        addr: &str,
        more: &[(&str, &str)],
        env: &[(&str, &str)],
    ) -> Gateway {
        let (store, mounts) = user_mount_files(&dir, url, more);
        let (store, mounts, tokens, addr) = (
            store.to_string_lossy().into_owned(),
            mounts.to_string_lossy().into_owned(),
            tokens.to_owned(),
            addr.to_owned(),
        );
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let http = tokio::task::spawn_blocking(move || {
            let mut all = vec![
                (mcp_tool::env::CONNECTIONS, store.as_str()),
                (mcp_tool::env::BEARER_TOKENS, tokens.as_str()),
            ];
            all.extend(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            ExampleHttp::start_at("calc", &addr, &["--mount", &mounts], &all)
        })
        .await
        .expect("the gateway starts");
        Gateway { http, _dir: dir }
    }

    /// Stops the gateway: the folder it kept its files in.
    fn stop(self) -> TempDir {
        drop(self.http);
        self._dir
    }

    fn url(&self) -> &str {
        &self.http.url
    }

    /// `http://host:port`, where users come back to.
    fn origin(&self) -> String {
        self.http.url.trim_end_matches("/mcp").to_owned()
    }
}

/// A refresh the authorization server refuses (the refresh token expired) signs the user out:
/// their next call asks them to sign in again, and then runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_refresh_asks_the_user_to_sign_in_again() {
    // Access tokens are always within the client's early-refresh margin (30 s), so every
    // request refreshes first; refresh tokens live 3 s.
    let (provider, users, _, url) =
        users_behind_a_provider_with(&["--access-ttl", "20", "--refresh-ttl", "3"]).await;
    let gateway = Gateway::start(&url, "alice:tok-alice").await;
    let alice = Person::new("alice");
    let as_alice = connect(
        gateway.url(),
        "tok-alice",
        VersionChoice::V2025_11_25,
        &alice,
    )
    .await;
    let signed = sign_in_tool(&as_alice).await;
    assert_ne!(signed["isError"], true, "{signed}");
    assert_eq!(alice.walked().await.len(), 1);
    // The refresh token's lifetime is a clock's business: it has to pass.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let got = as_alice
        .call("users__get_user", json!({"userId": "usr_000000"}))
        .await
        .expect("get_user through the gateway");
    assert!(text_of(&got).contains("NOT_FOUND"), "{got}");
    assert_eq!(
        alice.asked.lock().unwrap().len(),
        2,
        "asked to sign in again"
    );
    let walked = alice.walked().await;
    assert_eq!(walked.len(), 1);
    assert_eq!(walked[0].0, StatusCode::OK, "{}", walked[0].1);
    as_alice.close().await;
    drop(gateway);
    drop(users);
    provider.stop();
}

/// `text` as a query value (`application/x-www-form-urlencoded`).
fn urlencode(text: &str) -> String {
    reqwest::Url::parse_with_params("http://x/", [("v", text)])
        .expect("a URL")
        .query()
        .expect("a query")
        .trim_start_matches("v=")
        .to_owned()
}

/// A gateway with no HTTP endpoint (stdio, here in process) receives its user back on a
/// loopback listener: a connection whose `redirect_uri` names another address cannot be
/// served, and the sign-in says so, and starts nothing.
#[tokio::test]
async fn a_stdio_sign_in_refuses_a_redirect_uri_that_is_not_loopback() {
    use mcp_tool::gateway::McpTool;
    let dir = TempDir::new("oauth-sign-in-stdio");
    let store = dir.path().join("connections.json");
    std::fs::write(
        &store,
        json!({"users-each": {"server_url": "http://127.0.0.1:9/mcp", "grant": "authorization_code",
                              "redirect_uri": "https://gw.example.com/oauth/callback"}})
            .to_string(),
    )
    .expect("write the connection store");
    let gateway = mcp_tool::Server::new("gw", "0")
        .without_registry()
        .mount(McpTool {
            server_label: "users".into(),
            project_connection_id: Some("users-each".into()),
            ..McpTool::default()
        })
        .connection_store(&store);
    let client = mcp_tool::testing::Client::start(gateway)
        .await
        .expect("the gateway starts");
    // The first list waits for the mounts: the sign-in tool is in it.
    let names: Vec<String> = client
        .list_tools()
        .await
        .expect("tools/list")
        .iter()
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect();
    assert_eq!(names, ["users__sign_in"]);
    let answer = client
        .call("users__sign_in", json!({}))
        .await
        .expect("an answer");
    assert!(answer.is_error(), "{}", answer.text());
    assert!(
        answer
            .text()
            .contains("over stdio needs a loopback redirect URI"),
        "{}",
        answer.text()
    );
}

/// The query value `name` of `url`.
fn query_value(url: &str, name: &str) -> Option<String> {
    reqwest::Url::parse(url)
        .ok()?
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// Someone else's browser cannot finish a user's sign-in: Alice's browser opens the gateway's
/// start link (which binds it to her sign-in) and is sent to the provider; Bob's browser,
/// handed that authorization page, logs in as Bob and comes back — refused, and Alice is not
/// signed in; the start link does nothing a second time; Alice's own browser finishes, and
/// her calls then act as her (the provider gives Bob read-only tokens, Alice every scope).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_browser_cannot_finish_a_users_sign_in() {
    let (provider, users, _, url) = users_behind_a_provider_with(&["--read-only", "bob"]).await;
    let gateway = Gateway::start(&url, "alice:tok-alice,bob:tok-bob").await;
    let origin = gateway.origin();
    let alice = Arc::new(Holder {
        pages: Mutex::new(Vec::new()),
    });
    let as_alice = McpClient::connect_with(
        Connect::http(gateway.url())
            .protocol_version(VersionChoice::V2025_11_25)
            .bearer("tok-alice")
            .timeout(Duration::from_secs(120)),
        alice.clone(),
    )
    .await
    .expect("connect to the gateway");
    let signing = tokio::spawn({
        let as_alice = as_alice.clone();
        async move { sign_in_tool(&as_alice).await }
    });
    let start = alice.first_page("Alice is asked to open a page").await;
    assert!(
        start.starts_with(&format!("{origin}/oauth/callback?start=")),
        "{start}"
    );

    // Alice's browser opens it: a cookie for the callback path only, and on to the provider.
    let mut alices = Browser::new("alice");
    let (status, location, _) = alices.open(&start).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let authorize = location.expect("sent on");
    assert!(
        authorize.starts_with(&format!("{}/auth?", provider.issuer)),
        "{authorize}"
    );
    assert!(
        authorize.contains("code_challenge_method=S256"),
        "{authorize}"
    );
    assert!(
        authorize.contains(&format!(
            "redirect_uri={}",
            urlencode(&format!("{origin}/oauth/callback"))
        )),
        "{authorize}"
    );
    let bound: Vec<&String> = alices
        .cookies
        .keys()
        .filter(|k| k.starts_with("mcp-sign-in-"))
        .collect();
    assert_eq!(bound.len(), 1, "{:?}", alices.cookies.keys());

    // Bob's browser follows the authorization page and logs in as Bob: refused at the gateway.
    let (status, text, at) = Browser::new("bob").sign_in(&authorize).await;
    assert!(at.starts_with(&format!("{origin}/oauth/callback?")), "{at}");
    assert!(at.contains("code="), "the provider gave Bob a code: {at}");
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    assert!(text.contains("did not start this sign-in"), "{text}");
    assert!(!text.contains("You are signed in"), "{text}");
    // The start link, opened again (by Bob): refused, no cookie, not sent on.
    let mut bobs = Browser::new("bob");
    let (status, location, text) = bobs.open(&start).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    assert!(location.is_none());
    assert!(text.contains("used already"), "{text}");
    assert!(bobs.cookies.is_empty(), "{:?}", bobs.cookies.keys());
    // Alice is not signed in: her call still waits, and she sees the sign-in tool only.
    assert!(!signing.is_finished());
    assert_eq!(mounted(&listed_by(&as_alice).await), ["users__sign_in"]);

    // Alice's own browser finishes: the page says she is signed in, once she is.
    let (status, text, at) = alices.walk(&authorize).await;
    assert!(at.starts_with(&format!("{origin}/oauth/callback?")), "{at}");
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(text.contains("You are signed in"), "{text}");
    assert!(
        alices
            .cookies
            .keys()
            .all(|k| !k.starts_with("mcp-sign-in-")),
        "the binding cookie is cleared"
    );
    let signed = signing.await.expect("the sign-in call");
    assert_ne!(signed["isError"], true, "{signed}");
    // As Alice (every tool), not as Bob (read-only).
    assert_eq!(
        mounted(&listed_by(&as_alice).await),
        [
            "users__create_user",
            "users__delete_user",
            "users__get_user",
            "users__seed_users"
        ]
    );
    // Her callback, replayed, finds nothing waiting.
    let (status, _, _) = alices.open(&at).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(alice.pages.lock().unwrap().len(), 1);
    as_alice.close().await;
    drop(gateway);
    drop(users);
    provider.stop();
}

/// A user who signed in before and signs in again as another account of the provider is
/// refused: the page says the sign-in did not succeed (it waits for the exchange and the
/// check), the call says why, and the stranger's tokens are not used.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_in_again_as_another_account_is_refused_and_the_page_says_so() {
    // Refresh tokens live 3 s: after them, Alice is asked to sign in again.
    let (provider, users, _, url) =
        users_behind_a_provider_with(&["--access-ttl", "20", "--refresh-ttl", "3"]).await;
    let gateway = Gateway::start(&url, "alice:tok-alice").await;
    let alice = Person::new("alice");
    let as_alice = connect(
        gateway.url(),
        "tok-alice",
        VersionChoice::V2025_11_25,
        &alice,
    )
    .await;
    let signed = sign_in_tool(&as_alice).await;
    assert_ne!(signed["isError"], true, "{signed}");
    assert_eq!(alice.walked().await[0].0, StatusCode::OK);
    tokio::time::sleep(Duration::from_secs(4)).await;
    // This time the browser logs in as Bob.
    let as_bob_now = Person::new("bob");
    let as_alice_again = connect(
        gateway.url(),
        "tok-alice",
        VersionChoice::V2025_11_25,
        &as_bob_now,
    )
    .await;
    let got = as_alice_again
        .call("users__get_user", json!({"userId": "usr_000000"}))
        .await
        .expect("an answer");
    assert_eq!(got["isError"], true, "{got}");
    assert!(text_of(&got).contains("another account"), "{got}");
    let walked = as_bob_now.walked().await;
    assert_eq!(walked.len(), 1);
    let (status, text, _) = &walked[0];
    assert_eq!(*status, StatusCode::BAD_REQUEST, "{text}");
    assert!(text.contains("did not succeed"), "{text}");
    assert!(text.contains("another account"), "{text}");
    assert!(!text.contains("You are signed in"), "{text}");
    assert_eq!(
        mounted(&listed_by(&as_alice_again).await),
        ["users__sign_in"]
    );
    for client in [as_alice, as_alice_again] {
        client.close().await;
    }
    drop(gateway);
    drop(users);
    provider.stop();
}

/// A user's client that, asked to sign in, opens the start link and then turns the provider
/// down (the provider's answer `access_denied`, as its consent page gives it), before it
/// answers "accept"; asked again, it declines.
struct Denier {
    issuer: String,
    pages: Mutex<Vec<String>>,
}

impl ClientHandler for Denier {
    fn capabilities(&self) -> Value {
        json!({ "elicitation": { "form": {}, "url": {} } })
    }

    fn request<'a>(
        &'a self,
        _method: &'a str,
        params: Value,
    ) -> ClientFuture<'a, Result<Value, RpcError>> {
        Box::pin(async move {
            let page = params["url"].as_str().expect("a URL").to_owned();
            let first = {
                let mut pages = self.pages.lock().unwrap();
                pages.push(page.clone());
                pages.len() == 1
            };
            if !first {
                return Ok(json!({ "action": "decline" }));
            }
            let mut browser = Browser::new("alice");
            let (_, location, _) = browser.open(&page).await;
            let authorize = location.expect("sent on to the provider");
            let state = query_value(&authorize, "state").expect("a state");
            let back = query_value(&authorize, "redirect_uri").expect("a redirect URI");
            let denied = reqwest::Url::parse_with_params(
                &back,
                [
                    ("error", "access_denied"),
                    ("state", state.as_str()),
                    ("iss", self.issuer.as_str()),
                ],
            )
            .expect("a URL");
            let (status, _, text) = browser.open(denied.as_str()).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
            assert!(text.contains("did not succeed"), "{text}");
            Ok(json!({ "action": "accept" }))
        })
    }
}

/// After a failed sign-in, a 2026-07-28 client's retry (its "accept" for the page of that
/// sign-in) is told it failed at once: it is never taken for a new sign-in's page, which the
/// user has not seen (and would wait for until the sign-in's bound). The next call asks again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_a_failed_sign_in_says_so_and_waits_for_no_page_unseen() {
    let (provider, users, _, url) = users_behind_a_provider_with(&[]).await;
    let gateway = Gateway::start(&url, "alice:tok-alice").await;
    let alice = Arc::new(Denier {
        issuer: provider.issuer.clone(),
        pages: Mutex::new(Vec::new()),
    });
    let as_alice = McpClient::connect_with(
        Connect::http(gateway.url())
            .protocol_version(VersionChoice::V2026_07_28)
            .bearer("tok-alice")
            .timeout(Duration::from_secs(120)),
        alice.clone(),
    )
    .await
    .expect("connect to the gateway");
    let got = tokio::time::timeout(
        Duration::from_secs(30),
        as_alice.call("users__sign_in", json!({})),
    )
    .await
    .expect("the retry is answered at once, not held for a page nobody saw")
    .expect("an answer");
    assert_eq!(got["isError"], true, "{got}");
    assert!(text_of(&got).contains("failed"), "{got}");
    assert!(text_of(&got).contains("access_denied"), "{got}");
    assert_eq!(alice.pages.lock().unwrap().len(), 1, "no page unseen");
    // The next call starts a sign-in of its own, and asks for its page.
    let declined = tokio::time::timeout(
        Duration::from_secs(30),
        as_alice.call("users__sign_in", json!({})),
    )
    .await
    .expect("answered")
    .expect("an answer");
    assert!(text_of(&declined).contains("did not sign in"), "{declined}");
    let pages = alice.pages.lock().unwrap().clone();
    assert_eq!(pages.len(), 2);
    assert_ne!(pages[0], pages[1]);
    as_alice.close().await;
    drop(gateway);
    drop(users);
    provider.stop();
}
