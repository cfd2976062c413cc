//! The client's OAuth flow (`mcp_tool::client::oauth`) against an authorization server of
//! this file that misbehaves in one way at a time, beside a small protected MCP server
//! (2026-07-28, stateless) that accepts one token and records every `Authorization` it is
//! sent. The well-behaved flow (and the suite's own hostile cases: resource and issuer
//! mismatches, RFC 9207, step-up limits) is covered by the conformance suite's client
//! scenarios in `conformance/run.sh`; the end to end flow with a real authorization server
//! is in `tests/oauth.rs`.
//!
//! Each misbehaviour gives `ClientError::Unauthorized` naming what went wrong, a bounded
//! number of requests, no token sent anywhere it was not issued for, and no secret (client
//! secret, token, code) in the error.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use mcp_tool::client::oauth::{MemoryTokenStore, OAuthClient, TokenKey, TokenStore, UserAgent};
use mcp_tool::client::{ClientError, ClientFuture, Connect, McpClient, VersionChoice};
use serde_json::{Value, json};

const SECRET: &str = "s3cret-of-the-client";
const REDIRECT: &str = "http://127.0.0.1:1/callback";

/// What the authorization server gets wrong.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    None,
    /// Its metadata document is 2 MiB.
    HugeMetadata,
    /// Its metadata document is not JSON.
    MalformedMetadata,
    /// It publishes no metadata at all (the resource's metadata names it all the same).
    NoMetadata,
    /// Its token answer has no `access_token`.
    NoAccessToken,
    /// Its redirect names another issuer (RFC 9207 `iss`).
    WrongIss,
    /// It redirects somewhere else than the client's redirect URI.
    RedirectElsewhere,
    /// It issues tokens the protected server never accepts.
    UselessTokens,
    /// The resource metadata is JSON of another shape, quoting what a server might hold.
    LeakyResourceMetadata,
}

#[derive(Default)]
struct Seen {
    /// Every `Authorization` the MCP endpoint was sent.
    mcp_authorizations: Vec<String>,
    token_requests: usize,
    authorize_requests: usize,
    issued: Vec<String>,
    resource_metadata_requests: usize,
}

struct World {
    fault: Fault,
    base: String,
    seen: Mutex<Seen>,
    /// The authorization server the resource metadata names, when not this world's own.
    names: Mutex<Option<String>>,
    /// The `resource_metadata` the challenge names, when not this world's own.
    metadata_at: Mutex<Option<String>>,
}

type Shared = Arc<World>;

/// Serves the protected MCP endpoint, its resource metadata and the authorization server
/// (issuer `<base>/as`) on one loopback port.
async fn world(fault: Fault) -> Shared {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let world = Arc::new(World {
        fault,
        base,
        seen: Mutex::new(Seen::default()),
        names: Mutex::new(None),
        metadata_at: Mutex::new(None),
    });
    let app = axum::Router::new()
        .route("/mcp", post(mcp))
        .route("/.well-known/oauth-protected-resource/mcp", get(prm))
        .route("/.well-known/oauth-authorization-server/as", get(metadata))
        .route("/as/authorize", get(authorize))
        .route("/as/token", post(token))
        .route("/as/register", post(register))
        .with_state(world.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    world
}

async fn mcp(State(w): State<Shared>, headers: HeaderMap, body: String) -> Response {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let accepted = {
        let mut seen = w.seen.lock().unwrap();
        if let Some(a) = &authorization {
            seen.mcp_authorizations.push(a.clone());
        }
        w.fault != Fault::UselessTokens
            && authorization
                .as_deref()
                .and_then(|a| a.strip_prefix("Bearer "))
                .is_some_and(|t| seen.issued.iter().any(|i| i == t))
    };
    if !accepted {
        let at = w
            .metadata_at
            .lock()
            .unwrap()
            .clone()
            .unwrap_or_else(|| format!("{}/.well-known/oauth-protected-resource/mcp", w.base));
        let challenge = format!(r#"Bearer error="invalid_token", resource_metadata="{at}""#);
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, challenge)],
            "",
        )
            .into_response();
    }
    let request: Value = serde_json::from_str(&body).unwrap_or_default();
    let result = match request["method"].as_str() {
        Some("server/discover") => json!({
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": { "tools": {} },
            "_meta": { "io.modelcontextprotocol/serverInfo": { "name": "protected", "version": "1" } }
        }),
        Some("tools/list") => json!({
            "resultType": "complete",
            "tools": [{ "name": "echo", "inputSchema": { "type": "object" } }]
        }),
        _ => json!({ "resultType": "complete", "content": [] }),
    };
    json_body(json!({ "jsonrpc": "2.0", "id": request["id"], "result": result })).into_response()
}

/// A JSON answer.
fn json_body(value: Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

async fn prm(State(w): State<Shared>) -> Response {
    w.seen.lock().unwrap().resource_metadata_requests += 1;
    if w.fault == Fault::LeakyResourceMetadata {
        return json_body(json!({
            "resource": format!("{}/mcp", w.base),
            "authorization_servers": "internal-secret-value"
        }))
        .into_response();
    }
    let names = w.names.lock().unwrap().clone();
    json_body(json!({
        "resource": format!("{}/mcp", w.base),
        "authorization_servers": [names.unwrap_or_else(|| format!("{}/as", w.base))]
    }))
    .into_response()
}

async fn metadata(State(w): State<Shared>) -> Response {
    match w.fault {
        Fault::NoMetadata => StatusCode::NOT_FOUND.into_response(),
        Fault::HugeMetadata => {
            let padding = "x".repeat(2 << 20);
            json_body(json!({ "issuer": format!("{}/as", w.base), "padding": padding }))
                .into_response()
        }
        Fault::MalformedMetadata => (
            [(header::CONTENT_TYPE, "application/json")],
            "{\"issuer\": ",
        )
            .into_response(),
        _ => json_body(json!({
            "issuer": format!("{}/as", w.base),
            "authorization_endpoint": format!("{}/as/authorize", w.base),
            "token_endpoint": format!("{}/as/token", w.base),
            "registration_endpoint": format!("{}/as/register", w.base),
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": true,
            "token_endpoint_auth_methods_supported": ["client_secret_basic"]
        }))
        .into_response(),
    }
}

async fn register(State(w): State<Shared>) -> Response {
    let _ = &w;
    (
        StatusCode::CREATED,
        json_body(json!({ "client_id": "client-1", "client_secret": SECRET })),
    )
        .into_response()
}

async fn authorize(State(w): State<Shared>, uri: Uri) -> Response {
    let url = reqwest::Url::parse(&format!("http://x{uri}")).unwrap();
    let query: std::collections::HashMap<String, String> = url.query_pairs().into_owned().collect();
    w.seen.lock().unwrap().authorize_requests += 1;
    let target = match w.fault {
        Fault::RedirectElsewhere => "http://127.0.0.1:2/elsewhere".to_owned(),
        _ => query.get("redirect_uri").cloned().unwrap_or_default(),
    };
    let iss = match w.fault {
        Fault::WrongIss => "https://evil.example.com".to_owned(),
        _ => format!("{}/as", w.base),
    };
    let state = query.get("state").cloned().unwrap_or_default();
    let location = format!("{target}?code=the-secret-code&state={state}&iss={iss}");
    (StatusCode::FOUND, [(header::LOCATION, location)]).into_response()
}

async fn token(State(w): State<Shared>) -> Response {
    let mut seen = w.seen.lock().unwrap();
    seen.token_requests += 1;
    if w.fault == Fault::NoAccessToken {
        return json_body(json!({ "token_type": "Bearer", "expires_in": 60 })).into_response();
    }
    let token = format!("issued-token-{}", seen.token_requests);
    seen.issued.push(token.clone());
    json_body(json!({ "access_token": token, "token_type": "Bearer", "expires_in": 3600 }))
        .into_response()
}

/// Follows the authorization page's redirect no further than reading it (what a browser would
/// then load).
struct Headless;

impl UserAgent for Headless {
    fn redirect_uri(&self) -> String {
        REDIRECT.into()
    }

    fn authorize<'a>(&'a self, url: &'a str) -> ClientFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| e.to_string())?;
            let response = http.get(url).send().await.map_err(|e| e.to_string())?;
            response
                .headers()
                .get("location")
                .and_then(|l| l.to_str().ok())
                .map(str::to_owned)
                .ok_or_else(|| "no redirect".to_owned())
        })
    }
}

async fn connect(w: &World, store: Arc<MemoryTokenStore>) -> Result<McpClient, ClientError> {
    mcp_tool_tests::install_crypto_provider();
    let oauth = OAuthClient::authorization_code(Arc::new(Headless)).store(store);
    McpClient::connect(
        Connect::http(format!("{}/mcp", w.base))
            .protocol_version(VersionChoice::V2026_07_28)
            .timeout(Duration::from_secs(20))
            .oauth(oauth),
    )
    .await
}

/// The error of a connection that must fail, checked to hold no secret.
async fn refused(fault: Fault) -> (String, Shared) {
    let w = world(fault).await;
    let outcome = connect(&w, Arc::new(MemoryTokenStore::default())).await;
    let Err(ClientError::Unauthorized(why)) = outcome else {
        panic!("{fault:?}: not refused as unauthorized: {outcome:?}");
    };
    let why = why.message().to_owned();
    for secret in [SECRET, "the-secret-code", "issued-token"] {
        assert!(!why.contains(secret), "{fault:?}: a secret in `{why}`");
    }
    (why, w)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_well_behaved_server_authorizes_and_the_token_goes_to_its_resource_only() {
    let w = world(Fault::None).await;
    let store = Arc::new(MemoryTokenStore::default());
    let client = connect(&w, store.clone()).await.expect("authorized");
    let tools = client.list_tools().await.expect("tools/list");
    assert_eq!(tools[0]["name"], "echo");
    client.close().await;
    {
        let seen = w.seen.lock().unwrap();
        assert_eq!(seen.token_requests, 1);
        assert_eq!(seen.authorize_requests, 1);
        // Every authorization the endpoint saw is the token issued for it.
        assert!(
            seen.mcp_authorizations
                .iter()
                .all(|a| a == "Bearer issued-token-1"),
            "{:?}",
            seen.mcp_authorizations
        );
    }
    // Kept under the resource, the issuer and the (empty) principal.
    let key = TokenKey {
        resource: format!("{}/mcp", w.base),
        issuer: format!("{}/as", w.base),
        principal: String::new(),
    };
    let kept = store.tokens(&key).expect("kept");
    assert_eq!(kept.access_token, "issued-token-1");
    assert!(!format!("{kept:?}").contains("issued-token-1"));
    // A second client with the same store needs no new authorization.
    let again = connect(&w, store).await.expect("authorized from the store");
    again.list_tools().await.expect("tools/list");
    again.close().await;
    let seen = w.seen.lock().unwrap();
    assert_eq!(seen.authorize_requests, 1);
    assert_eq!(seen.token_requests, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_or_malformed_metadata_is_refused_before_any_authorization() {
    let (why, w) = refused(Fault::HugeMetadata).await;
    assert!(why.contains("more than 1048576 bytes"), "{why}");
    assert_eq!(w.seen.lock().unwrap().authorize_requests, 0);
    let (why, w) = refused(Fault::MalformedMetadata).await;
    assert!(why.contains("not the JSON expected"), "{why}");
    assert_eq!(w.seen.lock().unwrap().authorize_requests, 0);
}

/// Only a server of 2025-03-26 — one without resource metadata — has its authorization
/// server's default endpoints guessed; an authorization server a resource names must publish
/// its metadata, or nothing is sent to it (before, `/authorize` and `/token` at its origin
/// were tried, and PKCE support taken for granted).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authorization_server_a_resource_names_without_metadata_is_not_guessed_at() {
    let (why, w) = refused(Fault::NoMetadata).await;
    assert!(why.contains("has no metadata"), "{why}");
    let seen = w.seen.lock().unwrap();
    assert_eq!(seen.authorize_requests, 0);
    assert_eq!(seen.token_requests, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_answer_without_an_access_token_is_refused() {
    let (why, w) = refused(Fault::NoAccessToken).await;
    assert!(why.contains("without an access_token"), "{why}");
    assert!(w.seen.lock().unwrap().mcp_authorizations.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_from_another_issuer_or_to_another_place_is_never_exchanged() {
    let (why, w) = refused(Fault::WrongIss).await;
    assert!(
        why.contains("https://evil.example.com") && why.contains("RFC 9207"),
        "{why}"
    );
    assert_eq!(w.seen.lock().unwrap().token_requests, 0);
    let (why, w) = refused(Fault::RedirectElsewhere).await;
    assert!(
        why.contains("not to this client's redirect URI") && why.contains("/elsewhere"),
        "{why}"
    );
    assert_eq!(w.seen.lock().unwrap().token_requests, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_refuses_every_fresh_token_is_asked_a_bounded_number_of_times() {
    let (why, w) = refused(Fault::UselessTokens).await;
    assert!(why.contains("refused 2 fresh authorizations"), "{why}");
    let seen = w.seen.lock().unwrap();
    assert_eq!(seen.token_requests, 2, "{why}");
    assert_eq!(seen.authorize_requests, 2);
    // Only tokens issued for this resource were ever sent to it.
    assert!(
        seen.mcp_authorizations
            .iter()
            .all(|a| seen.issued.iter().any(|t| *a == format!("Bearer {t}"))),
        "{:?}",
        seen.mcp_authorizations
    );
}

/// A client with credentials of its own sends them to the authorization server they belong
/// to and to no other: pinned by `OAuthClient::issuer`, a server whose metadata names another
/// authorization server gets an error naming both, and that server is sent nothing; without
/// it, the first issuer discovered is pinned, and a later move elsewhere is refused the same
/// way. Before, the secret went to whatever authorization server the metadata named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_credentials_go_only_to_the_issuer_they_belong_to() {
    mcp_tool_tests::install_crypto_provider();
    let (good, evil) = (world(Fault::None).await, world(Fault::None).await);
    let (ours, theirs) = (format!("{}/as", good.base), format!("{}/as", evil.base));
    *good.names.lock().unwrap() = Some(theirs.clone());
    let connect = |oauth: OAuthClient| {
        McpClient::connect(
            Connect::http(format!("{}/mcp", good.base))
                .protocol_version(VersionChoice::V2026_07_28)
                .timeout(Duration::from_secs(20))
                .oauth(oauth),
        )
    };
    let pinned = OAuthClient::client_credentials("client-1", SECRET).issuer(&ours);
    let Err(ClientError::Unauthorized(why)) = connect(pinned).await else {
        panic!("connected through another authorization server");
    };
    let why = why.message().to_owned();
    assert!(why.contains(&ours) && why.contains(&theirs), "{why}");
    assert!(!why.contains(SECRET), "{why}");
    assert_eq!(
        evil.seen.lock().unwrap().token_requests,
        0,
        "the secret went to {theirs}"
    );

    // Without a pin: the first issuer discovered is kept.
    *good.names.lock().unwrap() = None;
    let client = connect(OAuthClient::client_credentials("client-1", SECRET))
        .await
        .expect("authorized by its own authorization server");
    client.list_tools().await.expect("tools/list");
    // The resource now names another authorization server, and refuses the token it has.
    *good.names.lock().unwrap() = Some(theirs.clone());
    good.seen.lock().unwrap().issued.clear();
    let moved = client.list_tools().await;
    let Err(ClientError::Unauthorized(why)) = moved else {
        panic!("not refused: {moved:?}");
    };
    let why = why.message().to_owned();
    assert!(why.contains(&ours) && why.contains(&theirs), "{why}");
    assert_eq!(
        evil.seen.lock().unwrap().token_requests,
        0,
        "the secret went to {theirs}"
    );
    client.close().await;
}

/// A challenge's `resource_metadata` on another origin than the server's is not fetched (the
/// client would GET whatever a server names); a body that is not resource metadata is refused
/// without quoting what it holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_metadata_elsewhere_is_not_fetched_and_a_bad_body_is_not_quoted() {
    let (good, other) = (world(Fault::None).await, world(Fault::None).await);
    *good.metadata_at.lock().unwrap() = Some(format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        other.base
    ));
    let outcome = connect(&good, Arc::new(MemoryTokenStore::default())).await;
    let Err(ClientError::Unauthorized(why)) = outcome else {
        panic!("not refused: {outcome:?}");
    };
    let why = why.message().to_owned();
    assert!(why.contains("another origin"), "{why}");
    assert_eq!(other.seen.lock().unwrap().resource_metadata_requests, 0);
    assert_eq!(good.seen.lock().unwrap().authorize_requests, 0);

    let (why, _) = refused(Fault::LeakyResourceMetadata).await;
    assert!(why.contains("JSON of another shape"), "{why}");
    assert!(!why.contains("internal-secret-value"), "{why}");
}
