//! DPoP (RFC 9449) at our resource server, with tokens the real provider binds to keys
//! (`serve --dpop on`: a token request with a proof gets `token_type: DPoP` and `cnf.jkt`):
//! proofs made by the provider's script with the key the token is bound to, or forged (a
//! replayed `jti`, another URL or method, a stale `iat`, another token's `ath`, another key),
//! in both eras; a bound token sent as a bearer token; and our own client, which binds its
//! tokens to a key of its own when the authorization server takes proofs, through a server
//! that requires DPoP and asks for nonces.

use mcp_tool::http::DpopMode;

use super::*;

/// A token bound to a key, and the key's private JWK.
struct BoundToken {
    token: String,
    jwk: Value,
}

/// A token of `client` bound to a new key, for `resource` with `scope`.
fn bound_token(provider: &Provider, client: &str, resource: &str, scope: &str) -> BoundToken {
    let answer = run_script(&["dpop-token", &provider.issuer, client, resource, scope]);
    let answer: Value = serde_json::from_str(&answer).expect("JSON");
    assert_eq!(answer["token_type"], "DPoP", "{answer}");
    BoundToken {
        token: answer["access_token"].as_str().expect("a token").to_owned(),
        jwk: answer["jwk"].clone(),
    }
}

/// A proof of `claims` signed with `jwk` (its header's members overridden by `header`).
fn proof(jwk: &Value, claims: &Value, header: &Value) -> String {
    run_script(&[
        "dpop-proof",
        &jwk.to_string(),
        &claims.to_string(),
        &header.to_string(),
    ])
}

/// The claims of a good proof of a POST to `url` presenting `token`.
fn claims_for(url: &str, token: &str) -> Value {
    json!({"jti": fresh("jti"), "htm": "POST", "htu": url, "iat": now(), "ath_of": token})
}

/// `claims` with `changes` (a null removes a claim).
fn with(claims: &Value, changes: Value) -> Value {
    let mut out = claims.clone();
    for (k, v) in changes.as_object().expect("an object") {
        if v.is_null() {
            out.as_object_mut().expect("an object").remove(k);
        } else {
            out[k] = v.clone();
        }
    }
    out
}

impl Served {
    /// A POST presenting `token` with `scheme`, and `proof` in `DPoP` when given.
    fn post_with(&self, scheme: &str, token: &str, proof: Option<&str>) -> RequestBuilder {
        let mut request = self
            .http
            .post(self.url())
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .header(AUTHORIZATION, format!("{scheme} {token}"));
        if let Some(proof) = proof {
            request = request.header("dpop", proof);
        }
        request
    }

    /// `delete_user` in a 2026-07-28 request presenting `token` with `scheme` and `proof`:
    /// the reply, its `DPoP-Nonce`, and whether the tool ran.
    async fn delete_with(
        &self,
        scheme: &str,
        token: &str,
        proof: Option<&str>,
    ) -> (Reply, Option<String>, bool) {
        let name = fresh("dpop");
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "delete_user", "arguments": {"name": name},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}});
        let response = self
            .post_with(scheme, token, proof)
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "delete_user")
            .body(body.to_string())
            .send()
            .await
            .expect("the server answers");
        let nonce = response
            .headers()
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let challenges: Vec<String> = response
            .headers()
            .get_all("www-authenticate")
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_owned))
            .collect();
        let status = response.status();
        let text = response.text().await.expect("a body");
        let json = text
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .unwrap_or(&text);
        let reply = Reply {
            status,
            challenge: (!challenges.is_empty()).then(|| challenges.join(" | ")),
            retry_after: None,
            body: serde_json::from_str(json).unwrap_or(Value::Null),
        };
        (reply, nonce, deleted(&name))
    }

    /// The `DPoP` challenge of a refusal with `error` and `description`.
    fn dpop_challenge(&self, error: &str, description: &str) -> String {
        format!(
            "DPoP algs=\"ES256 ES384 RS256 RS384 RS512 PS256 PS384 PS512\", error=\"{error}\", \
             error_description=\"{description}\", \
             resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
            self.base
        )
    }

    /// The `Bearer` challenge without an error that a DPoP refusal comes with (mode
    /// `allowed`).
    fn plain_bearer(&self) -> String {
        format!(
            "Bearer realm=\"mcp\", resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
            self.base
        )
    }
}

#[tokio::test]
async fn bound_tokens_need_a_fresh_proof_of_their_key_in_both_eras() {
    let keys = Keys::new("ES256");
    let bound = Bound::new().await;
    let resource = bound.resource();
    let provider = Provider::start_with(&keys, "ES256", &[&resource], 0, &["--dpop", "on"]);
    let served = bound.serve(
        &provider.issuer,
        verifier(&provider.issuer, &resource).dpop(DpopMode::Allowed),
    );
    let BoundToken { token, jwk } =
        bound_token(&provider, "writer", &resource, "users:read users:write");
    let other = bound_token(&provider, "writer", &resource, "users:read users:write");
    let good = claims_for(&resource, &token);

    // The proof of the key the token is bound to, for this request: the tool runs.
    let first = proof(&jwk, &good, &json!({}));
    let (reply, _, ran) = served.delete_with("DPoP", &token, Some(&first)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert!(ran);

    // Each forgery is refused with 401 and the DPoP challenge that names what is wrong.
    let refused = |description: &str| {
        format!(
            "{} | {}",
            served.plain_bearer(),
            served.dpop_challenge("invalid_dpop_proof", description)
        )
    };
    let forgeries: Vec<(&str, Option<String>, String)> = vec![
        (
            "replayed",
            Some(first.clone()),
            refused("the DPoP proof was used before (its `jti`)"),
        ),
        (
            "another URL",
            Some(proof(
                &jwk,
                &with(
                    &good,
                    json!({"jti": fresh("j"), "htu": format!("{}/other", served.base)}),
                ),
                &json!({}),
            )),
            refused("the DPoP proof's `htu` is not this request's URL"),
        ),
        (
            "another method",
            Some(proof(
                &jwk,
                &with(&good, json!({"jti": fresh("j"), "htm": "GET"})),
                &json!({}),
            )),
            refused("the DPoP proof's `htm` is not this request's method"),
        ),
        (
            "stale",
            Some(proof(
                &jwk,
                &with(&good, json!({"jti": fresh("j"), "iat": now() - 600})),
                &json!({}),
            )),
            refused("the DPoP proof's `iat` is not recent"),
        ),
        (
            "another token's ath",
            Some(proof(
                &jwk,
                &with(&good, json!({"jti": fresh("j"), "ath_of": other.token})),
                &json!({}),
            )),
            refused("the DPoP proof's `ath` is not the access token's"),
        ),
        (
            "another key",
            Some(proof(
                &other.jwk,
                &with(&good, json!({"jti": fresh("j")})),
                &json!({}),
            )),
            refused("the DPoP proof is signed by another key than the token is bound to"),
        ),
        (
            "not a proof type",
            Some(proof(
                &jwk,
                &with(&good, json!({"jti": fresh("j")})),
                &json!({"typ": "JWT"}),
            )),
            refused("the DPoP proof's `typ` is not `dpop+jwt`"),
        ),
        (
            "no proof",
            None,
            refused("one DPoP proof is required (the DPoP header)"),
        ),
    ];
    for (label, forged, challenge) in forgeries {
        let (reply, _, ran) = served.delete_with("DPoP", &token, forged.as_deref()).await;
        assert_eq!(
            reply.status,
            StatusCode::UNAUTHORIZED,
            "{label}: {}",
            reply.body
        );
        assert_eq!(
            reply.challenge.as_deref(),
            Some(challenge.as_str()),
            "{label}"
        );
        assert!(!ran, "{label}: the tool ran");
    }

    // A bound token sent as a bearer token is refused: whoever stole it has no key.
    let (reply, _, ran) = served.delete_with("Bearer", &token, None).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    let description =
        "the token is bound to a DPoP key: present it with the DPoP scheme and a proof";
    assert_eq!(
        reply.challenge.as_deref(),
        Some(
            format!(
                "{} | DPoP algs=\"ES256 ES384 RS256 RS384 RS512 PS256 PS384 PS512\", resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
                served.invalid_token(description),
                served.base
            )
            .as_str()
        )
    );
    assert!(!ran);

    // A plain bearer token of the same provider still goes (mode `allowed`).
    let plain = provider
        .token("writer", &resource, "users:read users:write")
        .await;
    let (reply, _, ran) = served.delete_with("Bearer", &plain, None).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert!(ran);

    // 2025-11-25: every request of the session carries a proof of its own.
    let fresh_proof = || proof(&jwk, &claims_for(&resource, &token), &json!({}));
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}});
    let response = served
        .post_with("DPoP", &token, Some(&fresh_proof()))
        .body(init.to_string())
        .send()
        .await
        .expect("initialize");
    assert_eq!(response.status(), StatusCode::OK);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .expect("an id")
        .to_owned();
    let in_session = |p: &str| {
        served
            .post_with("DPoP", &token, Some(p))
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
    };
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = send(in_session(&fresh_proof()).body(done.to_string())).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED);
    let name = fresh("dpop-2025");
    let call_text = call(1, "delete_user", &json!({"name": name}));
    let used = fresh_proof();
    let reply = send(in_session(&used).body(call_text.clone())).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert!(deleted(&name));
    let again = fresh("dpop-2025");
    let reply = send(in_session(&used).body(call(2, "delete_user", &json!({"name": again})))).await;
    assert_eq!(
        reply.status,
        StatusCode::UNAUTHORIZED,
        "a replay in a session too"
    );
    assert!(!deleted(&again));
    provider.stop();
}

#[tokio::test]
async fn replicas_sharing_state_refuse_a_proof_another_replica_took() {
    use mcp_tool::server::replicas::MemoryReplicaStore;
    let keys = Keys::new("ES256");
    let (one, two) = (Bound::new().await, Bound::new().await);
    // Both replicas stand for one public URL: the first's.
    let resource = one.resource();
    let provider = Provider::start_with(&keys, "ES256", &[&resource], 0, &["--dpop", "on"]);
    let shared = std::sync::Arc::new(MemoryReplicaStore::default());
    let replica = |bound: Bound| {
        bound.serve(
            &provider.issuer,
            verifier(&provider.issuer, &resource)
                .dpop(DpopMode::Allowed)
                .dpop_replays(shared.clone()),
        )
    };
    let (one, two) = (replica(one), replica(two));
    let BoundToken { token, jwk } =
        bound_token(&provider, "writer", &resource, "users:read users:write");
    let taken = proof(&jwk, &claims_for(&resource, &token), &json!({}));
    let (reply, _, ran) = one.delete_with("DPoP", &token, Some(&taken)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert!(ran);
    let (reply, _, ran) = two.delete_with("DPoP", &token, Some(&taken)).await;
    assert_eq!(
        reply.status,
        StatusCode::UNAUTHORIZED,
        "the other replica knows the jti"
    );
    assert!(
        reply
            .challenge
            .as_deref()
            .is_some_and(|c| c.contains("the DPoP proof was used before")),
        "{:?}",
        reply.challenge
    );
    assert!(!ran);
    // A fresh proof goes to either.
    let fresh_one = proof(&jwk, &claims_for(&resource, &token), &json!({}));
    let (reply, _, ran) = two.delete_with("DPoP", &token, Some(&fresh_one)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert!(ran);
    provider.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_requires_dpop_refuses_bearer_tokens_and_our_client_binds_its_own() {
    let keys = Keys::new("ES256");
    let bound = Bound::new().await;
    let resource = bound.resource();
    let provider = Provider::start_with(&keys, "ES256", &[&resource], 0, &["--dpop", "on"]);
    let served = bound.serve(
        &provider.issuer,
        verifier(&provider.issuer, &resource)
            .dpop(DpopMode::Required)
            .dpop_nonces(b"a nonce key of the test".to_vec()),
    );

    // A bearer token: refused, the only challenge a DPoP one.
    let plain = provider
        .token("writer", &resource, "users:read users:write")
        .await;
    let (reply, _, ran) = served.delete_with("Bearer", &plain, None).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        reply.challenge.as_deref(),
        Some(
            served
                .dpop_challenge(
                    "invalid_token",
                    "this server takes DPoP-bound tokens only (the DPoP scheme, with a proof)"
                )
                .as_str()
        )
    );
    assert!(!ran);

    // A good proof without the server's nonce: `use_dpop_nonce`, and the nonce to use.
    let BoundToken { token, jwk } =
        bound_token(&provider, "writer", &resource, "users:read users:write");
    let good = claims_for(&resource, &token);
    let (reply, nonce, ran) = served
        .delete_with("DPoP", &token, Some(&proof(&jwk, &good, &json!({}))))
        .await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        reply.challenge.as_deref(),
        Some(
            served
                .dpop_challenge(
                    "use_dpop_nonce",
                    "the DPoP proof must carry the server's nonce"
                )
                .as_str()
        )
    );
    assert!(!ran);
    let nonce = nonce.expect("a DPoP-Nonce header");
    let with_nonce = with(&good, json!({"jti": fresh("j"), "nonce": nonce}));
    let (reply, _, ran) = served
        .delete_with("DPoP", &token, Some(&proof(&jwk, &with_nonce, &json!({}))))
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert!(ran);

    // Our client: client credentials at a provider that takes proofs bind its token to a key
    // of its own; every request carries a fresh proof, and the server's nonce after it asks.
    for version in [VersionChoice::V2025_11_25, VersionChoice::V2026_07_28] {
        let oauth =
            mcp_tool::client::oauth::OAuthClient::client_credentials("writer", "writer-secret");
        let client = McpClient::connect(
            Connect::http(&resource)
                .protocol_version(version)
                .oauth(oauth),
        )
        .await
        .unwrap_or_else(|e| panic!("{version:?}: {e}"));
        let name = fresh("client-dpop");
        let result = client
            .call("delete_user", json!({"name": name}))
            .await
            .unwrap_or_else(|e| panic!("{version:?}: {e}"));
        assert_ne!(result["isError"], true, "{version:?}: {result}");
        assert!(deleted(&name), "{version:?}");
        client.close().await;
    }
    provider.stop();
}
