//! The checks that need no authorization server: HMAC-signed tokens with a configured
//! secret, and what is refused before any key is looked for. Tokens signed with published
//! keys are tested against a real authorization server (`tests/tests/oauth.rs`).

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use jsonwebtoken::{EncodingKey, Header, encode};
use serde_json::{Value, json};

use super::OAuthVerifier;

const ISSUER: &str = "https://auth.example.com";
const AUDIENCE: &str = "https://mcp.example.com/mcp";
const SECRET: &[u8] = b"a shared secret of thirty-two bytes";

fn now() -> i64 {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    i64::try_from(secs).expect("fits")
}

fn claims(change: Value) -> Value {
    let mut claims = json!({
        "iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "exp": now() + 300,
        "iat": now(), "client_id": "app", "scope": "users:read users:write",
    });
    for (k, v) in change.as_object().expect("an object") {
        if v.is_null() {
            claims.as_object_mut().expect("an object").remove(k);
        } else {
            claims[k] = v.clone();
        }
    }
    claims
}

fn hs256(claims: &Value) -> String {
    let key = EncodingKey::from_secret(SECRET).expect("a key");
    encode(&Header::default(), claims, &key).expect("signs")
}

fn verifier() -> OAuthVerifier {
    OAuthVerifier::new(ISSUER, AUDIENCE).shared_secret(SECRET)
}

async fn refusal(oauth: &OAuthVerifier, token: &str) -> String {
    let e = oauth.check(token).await.expect_err("refused");
    assert_eq!(e.code, Some("invalid_token"), "{e:?}");
    assert!(e.unavailable.is_none());
    assert!(
        !e.description.contains(token),
        "the token is never said back"
    );
    e.description
}

#[tokio::test]
async fn a_good_token_gives_its_subject_scopes_and_client() {
    let identity = verifier()
        .check(&hs256(&claims(json!({}))))
        .await
        .expect("accepted");
    assert_eq!(identity.subject, "alice");
    assert_eq!(identity.scopes, ["users:read", "users:write"]);
    assert_eq!(identity.client_id.as_deref(), Some("app"));
    // `scp` as a list, the client as `azp`.
    let token = hs256(&claims(json!({
        "scope": null, "client_id": null, "scp": ["a", "b"], "azp": "web"
    })));
    let identity = verifier().check(&token).await.expect("accepted");
    assert_eq!(identity.scopes, ["a", "b"]);
    assert_eq!(identity.client_id.as_deref(), Some("web"));
    // Another audience configured beside the first.
    let token = hs256(&claims(
        json!({ "aud": ["other", "https://api.example.com"] }),
    ));
    let oauth = verifier().audience("https://api.example.com");
    assert!(oauth.check(&token).await.is_ok());
}

#[tokio::test]
async fn bad_claims_are_refused_each_for_what_it_is() {
    let oauth = verifier();
    for (change, why) in [
        (
            json!({ "iss": "https://evil.example.com" }),
            "another issuer",
        ),
        (
            json!({ "aud": "https://other.example.com/mcp" }),
            "another resource",
        ),
        (json!({ "exp": now() - 3600 }), "expired"),
        (json!({ "nbf": now() + 3600 }), "not valid yet"),
        (json!({ "sub": null }), "no `sub`"),
        (json!({ "exp": null }), "no `exp`"),
        (json!({ "aud": null }), "no `aud`"),
        // RFC 7519: `iss` is a string, not a list that holds the issuer.
        (json!({ "iss": [ISSUER] }), "`iss` is not a string"),
        (json!({ "sub": "" }), "`sub` is empty"),
        // RFC 6749 §3.3: only a space separates scopes.
        (
            json!({ "scope": "users:read\tusers:write" }),
            "`scope` is not a list of scopes separated by spaces",
        ),
        (
            json!({ "scope": null, "scp": "a\nb" }),
            "`scp` is not a list of scopes separated by spaces",
        ),
    ] {
        let said = refusal(&oauth, &hs256(&claims(change.clone()))).await;
        assert!(said.contains(why), "{change}: {said}");
    }
    // Within the leeway, an expired token still passes; past it, not.
    let token = hs256(&claims(json!({ "exp": now() - 10 })));
    assert!(oauth.check(&token).await.is_ok());
}

/// A token whose `exp` lies centuries ahead is remembered for a bounded time (adding it to
/// the clock once panicked the request).
#[tokio::test]
async fn a_token_expiring_in_the_far_future_is_taken_without_overflow() {
    let oauth = verifier();
    for exp in [u64::MAX, u64::MAX / 2, 1 << 40] {
        let token = hs256(&claims(json!({ "exp": exp })));
        let identity = oauth.check(&token).await.expect("accepted");
        assert_eq!(identity.subject, "alice");
        // And again, from what was remembered.
        assert!(oauth.check(&token).await.is_ok());
    }
}

#[tokio::test]
async fn no_algorithm_confusion() {
    // HMAC without a configured secret: refused whatever it says (a public key taken for
    // a secret makes no valid token).
    let token = hs256(&claims(json!({})));
    let plain = OAuthVerifier::new(ISSUER, AUDIENCE);
    assert!(refusal(&plain, &token).await.contains("HMAC"));
    // `alg: none`, unsigned.
    let b64 = |v: &Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string().as_bytes())
    };
    let none = format!(
        "{}.{}.",
        b64(&json!({ "alg": "none", "typ": "JWT" })),
        b64(&claims(json!({})))
    );
    assert_eq!(refusal(&verifier(), &none).await, "the token is not signed");
    // A signature made with another secret.
    let key = EncodingKey::from_secret(b"not the secret").expect("a key");
    let forged = encode(&Header::default(), &claims(json!({})), &key).expect("signs");
    assert!(refusal(&verifier(), &forged).await.contains("signature"));
    // A type that is not an access token.
    let header = Header {
        typ: Some("logout+jwt".into()),
        ..Header::default()
    };
    let key = EncodingKey::from_secret(SECRET).expect("a key");
    let odd = encode(&header, &claims(json!({})), &key).expect("signs");
    assert!(
        refusal(&verifier(), &odd)
            .await
            .contains("not an access token")
    );
}

#[tokio::test]
async fn tokens_of_no_shape_are_refused_before_anything_is_fetched() {
    let oauth = verifier();
    let good = hs256(&claims(json!({})));
    // Truncated, a megabyte, opaque without introspection, garbage.
    assert!(oauth.check(&good[..good.len() - 5]).await.is_err());
    let huge = "a".repeat(1 << 20);
    assert!(refusal(&oauth, &huge).await.contains("longer than"));
    assert!(refusal(&oauth, "opaque-token").await.contains("not a JWT"));
    assert!(refusal(&oauth, "a.b.c").await.contains("not a JWT"));
    // A JOSE object that cannot be taken is refused as it is, never sent to introspection
    // (nothing listens at this endpoint: a token sent there would get a 503).
    let introspecting = verifier()
        .introspection("mcp-server", "secret")
        .introspection_endpoint("http://127.0.0.1:9/introspect");
    let b64 = |v: &Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string().as_bytes())
    };
    let body = b64(&claims(json!({})));
    let (head, _) = good.split_once('.').expect("a JWT");
    for (token, why) in [
        (
            format!("{}.{body}.", b64(&json!({ "alg": "none" }))),
            "the token is not signed",
        ),
        (
            format!("{}.{body}.c2ln", b64(&json!({ "alg": "ES512" }))),
            "the token's algorithm is not accepted",
        ),
        (
            format!("{head}.{}", &body[..body.len() / 2]),
            "the token is not a valid JWT",
        ),
        (
            format!(
                "{}.a2V5.aXY.Y2lwaGVy.dGFn",
                b64(&json!({ "alg": "RSA-OAEP", "enc": "A256GCM" }))
            ),
            "the token is encrypted, which this server does not accept",
        ),
        (
            format!("{}.{body}.c2ln", b64(&json!({ "alg": "RS256", "kid": 7 }))),
            "the token's header is not valid",
        ),
    ] {
        assert_eq!(refusal(&introspecting, &token).await, why, "{token}");
    }
    let e = oauth.check("").await.expect_err("refused");
    assert_eq!(e.code, None);
}
