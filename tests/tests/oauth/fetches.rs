//! What the resource server asks of an authorization server that fails or hangs: an
//! authorization server of this file whose metadata is good and whose key set and
//! introspection endpoint answer 500, or never. Every fetch is single-flight, a failure is
//! said again without a new fetch until the refresh interval is over (before any success
//! too), and a request waits for a fetch no longer than its own deadline (5 s): it never
//! queues behind other requests' fetches.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderName, StatusCode};
use axum::routing::{get, post};
use base64::Engine as _;
use mcp_tool::http::OAuthVerifier;
use serde_json::{Value, json};

/// How the key set and the introspection endpoint answer.
#[derive(Clone, Copy, PartialEq)]
enum Fault {
    /// 500 at once.
    Failing,
    /// Never (within the test).
    Hanging,
}

struct Broken {
    fault: Fault,
    base: String,
    jwks: AtomicUsize,
    introspections: AtomicUsize,
}

async fn metadata(State(b): State<Arc<Broken>>) -> ([(HeaderName, &'static str); 1], String) {
    let document = json!({
        "issuer": b.base,
        "jwks_uri": format!("{}/jwks", b.base),
        "introspection_endpoint": format!("{}/introspect", b.base),
    });
    ([(CONTENT_TYPE, "application/json")], document.to_string())
}

async fn answer(b: &Broken) -> StatusCode {
    if b.fault == Fault::Hanging {
        tokio::time::sleep(Duration::from_secs(120)).await;
    }
    StatusCode::INTERNAL_SERVER_ERROR
}

async fn jwks(State(b): State<Arc<Broken>>) -> StatusCode {
    b.jwks.fetch_add(1, Ordering::SeqCst);
    answer(&b).await
}

async fn introspect(State(b): State<Arc<Broken>>) -> StatusCode {
    b.introspections.fetch_add(1, Ordering::SeqCst);
    answer(&b).await
}

/// The broken authorization server on a loopback port, and a verifier of its tokens
/// (introspecting opaque ones) with the default refresh interval.
async fn broken(fault: Fault) -> (Arc<Broken>, OAuthVerifier) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let b = Arc::new(Broken {
        fault,
        base: base.clone(),
        jwks: AtomicUsize::new(0),
        introspections: AtomicUsize::new(0),
    });
    let app = axum::Router::new()
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/jwks", get(jwks))
        .route("/introspect", post(introspect))
        .with_state(b.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let oauth = OAuthVerifier::new(&base, "http://127.0.0.1:1/mcp")
        .introspection("mcp-server", "its-secret");
    (b, oauth)
}

/// A JWT of no one's making, under a `kid` the verifier looks up in the key set.
fn junk_jwt(i: usize) -> String {
    let b64 = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    format!(
        "{}.{}.c2lnbmF0dXJl",
        b64(json!({ "alg": "RS256", "kid": format!("kid-{i}") })),
        b64(json!({ "sub": format!("junk-{i}"), "exp": 4_000_000_000u64 }))
    )
}

/// Checks `token`: it cannot be checked now (503 with `Retry-After`).
async fn unavailable(oauth: &OAuthVerifier, token: &str) {
    let e = oauth.check(token).await.expect_err("not accepted");
    assert!(e.unavailable.is_some(), "{e:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_key_set_or_introspection_is_fetched_a_handful_of_times_not_per_token() {
    let (b, oauth) = broken(Fault::Failing).await;
    for i in 0..30 {
        unavailable(&oauth, &junk_jwt(i)).await;
    }
    for i in 0..30 {
        unavailable(&oauth, &format!("opaque-junk-{i}")).await;
    }
    let (jwks, introspections) = (
        b.jwks.load(Ordering::SeqCst),
        b.introspections.load(Ordering::SeqCst),
    );
    // Before, 30 of each: a set never fetched was fetched for every token.
    assert!(
        (1..=2).contains(&jwks),
        "{jwks} key set fetches for 30 tokens"
    );
    assert!(
        (1..=2).contains(&introspections),
        "{introspections} introspections for 30 tokens"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_waiting_on_a_hanging_fetch_are_answered_within_one_deadline() {
    let (b, oauth) = broken(Fault::Hanging).await;
    let started = tokio::time::Instant::now();
    let mut checks = Vec::new();
    for i in 0..6 {
        let oauth = oauth.clone();
        checks.push(tokio::spawn(async move {
            unavailable(&oauth, &junk_jwt(i)).await;
            started.elapsed()
        }));
    }
    // The same opaque token six times: one introspection, six answers.
    for _ in 0..6 {
        let oauth = oauth.clone();
        checks.push(tokio::spawn(async move {
            unavailable(&oauth, "opaque-hanging").await;
            started.elapsed()
        }));
    }
    let mut slowest = Duration::ZERO;
    for check in checks {
        slowest = slowest.max(check.await.expect("answered"));
    }
    // One deadline is 5 s; before, the key set's waiters were answered at 5, 10, … 30 s.
    assert!(
        slowest < Duration::from_secs(8),
        "the slowest answer took {slowest:?}"
    );
    assert_eq!(b.jwks.load(Ordering::SeqCst), 1);
    assert_eq!(b.introspections.load(Ordering::SeqCst), 1);
    // And within the interval, a new token is answered at once, with no new fetch.
    let again = tokio::time::Instant::now();
    unavailable(&oauth, &junk_jwt(99)).await;
    assert!(
        again.elapsed() < Duration::from_secs(1),
        "{:?}",
        again.elapsed()
    );
    assert_eq!(b.jwks.load(Ordering::SeqCst), 1);
}
