//! Gateway mounts that obtain their tokens by an assertion grant (RFC 7523 JWT bearer) at the
//! real authorization server: `grant: workload_identity` (SEP-1933), the workload's identity
//! token read from a file, and `grant: enterprise` (SEP-990), the user's ID token exchanged at
//! the enterprise's identity provider (a second oidc-provider, RFC 8693) for an ID-JAG. The
//! mounted server is ours, and its one tool says whose token each call came with. The
//! provider issues tokens of 20 seconds, less than the client's renewal margin: each call
//! makes its grant again, reading the file again.

use super::*;

/// The issuer of the workload's identity tokens (never contacted: only its key set is used).
const WORKLOAD_ISSUER: &str = "https://workload-issuer.invalid";

/// The provider's client of the assertion grants (public: the assertion is its proof).
const CLIENT: &str = "workload";

/// Who the call came from: the subject of its token, and its scopes.
#[tool]
fn whoami(ctx: Ctx) -> String {
    match ctx.identity() {
        Some(who) => format!("{} [{}]", who.subject, who.scopes.join(" ")),
        None => "nobody".into(),
    }
}

/// Serves `whoami` at `bound`, checking tokens of `issuer`.
fn serve_whoami(bound: Bound, issuer: &str) -> String {
    let resource = bound.resource();
    let mut config = HttpConfig::default().with_auth(verifier(issuer, &resource));
    config.resource_metadata = Some(ResourceMetadata {
        resource: resource.clone(),
        authorization_servers: vec![issuer.to_owned()],
        scopes_supported: vec![],
    });
    let router = Server::new("whoami", "0")
        .only(["whoami"])
        .build()
        .expect("the server builds")
        .into_router(config);
    tokio::spawn(async move {
        axum::serve(bound.listener, router).await.expect("serves");
    });
    resource
}

/// Writes `text` whole into `path` (a part renamed into place: never half a file read).
fn write_whole(path: &std::path::Path, text: &str) {
    let part = path.with_extension("part");
    std::fs::write(&part, text).expect("write");
    std::fs::rename(&part, path).expect("rename into place");
}

/// A token of `keys` for `sub`, from `iss` to `aud`, living 5 minutes; `kid` overrides the
/// header's key id.
fn assertion(keys: &Keys, iss: &str, sub: &str, aud: &str, kid: Option<&str>) -> String {
    let mut header = json!({"typ": "JWT"});
    if let Some(kid) = kid {
        header["kid"] = json!(kid);
    }
    keys.sign(
        &json!({"iss": iss, "sub": sub, "aud": aud, "iat": now(), "exp": now() + 300,
                "jti": fresh("assertion")}),
        &header,
    )
}

/// The provider's token endpoint's answer to the JWT bearer grant of `assertion` for
/// `resource`, as the client `workload`.
async fn bearer_grant(provider: &Provider, assertion: &str, resource: &str) -> (StatusCode, Value) {
    let answer = provider
        .http
        .post(format!("{}/token", provider.issuer))
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(format!(
            "grant_type={}&client_id={CLIENT}&assertion={}&resource={}&scope=users%3Aread",
            form("urn:ietf:params:oauth:grant-type:jwt-bearer"),
            form(assertion),
            form(resource)
        ))
        .send()
        .await
        .expect("the token endpoint answers");
    let status = answer.status();
    (status, answer.json().await.expect("a JSON answer"))
}

/// The claims of a JWT (unverified: the provider issued it to us).
fn claims_of(jwt: &str) -> Value {
    use base64::Engine as _;
    let payload = jwt.split('.').nth(1).expect("a JWT");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .expect("base64url");
    serde_json::from_slice(&bytes).expect("JSON claims")
}

/// `calc` over HTTP with a mount per connection of `store` (its label the connection's id).
async fn gateway(dir: &TempDir, store: &Value) -> ExampleHttp {
    let path = dir.path().join("connections.json");
    write_whole(&path, &store.to_string());
    let mounts: Vec<Value> = store
        .as_object()
        .expect("a store")
        .keys()
        .map(|id| json!({"type": "mcp", "server_label": id, "project_connection_id": id}))
        .collect();
    gateway_mounting(dir, &path, &Value::from(mounts)).await
}

/// What a caller of the gateway in `version` sees: the tools listed (name to description),
/// and the answers of `<label>__whoami` and `<label>__status` for each of `labels`.
struct Seen {
    listed: Vec<(String, String)>,
    answers: Vec<(String, Result<Value, ClientError>)>,
}

impl Seen {
    async fn of(url: &str, version: VersionChoice, labels: &[&str]) -> Seen {
        let client = McpClient::connect(Connect::http(url).protocol_version(version))
            .await
            .expect("connect to the gateway");
        let listed = client
            .list_tools()
            .await
            .expect("tools/list")
            .iter()
            .map(|t| {
                let text = |k: &str| t[k].as_str().unwrap_or_default().to_owned();
                (text("name"), text("description"))
            })
            .collect();
        let mut answers = Vec::new();
        for label in labels {
            for tool in ["whoami", "status"] {
                let name = format!("{label}__{tool}");
                let answer = client.call(&name, json!({})).await;
                answers.push((name, answer));
            }
        }
        client.close().await;
        Seen { listed, answers }
    }

    fn lists(&self, name: &str) -> bool {
        self.listed.iter().any(|(n, _)| n == name)
    }

    fn description(&self, name: &str) -> &str {
        self.listed
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, d)| d.as_str())
    }

    fn answer(&self, name: &str) -> &Result<Value, ClientError> {
        &self
            .answers
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{name} was not called"))
            .1
    }

    /// The text `name` answered with (its result's, or its error's message).
    fn said(&self, name: &str) -> String {
        match self.answer(name) {
            Ok(result) => result["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            Err(ClientError::Rpc(e)) => e.message.clone(),
            Err(other) => other.to_string(),
        }
    }

    /// Everything shown to the caller, to look for what must never be there.
    fn everything(&self) -> String {
        format!("{:?} {:?}", self.listed, self.answers)
    }

    /// `label`'s tools are listed and its `whoami` answered (no status in their place).
    fn mounted(&self, label: &str) -> Result<String, String> {
        let whoami = format!("{label}__whoami");
        if !self.lists(&whoami) || self.lists(&format!("{label}__status")) {
            return Err(format!("{label} is not mounted: {:?}", self.listed));
        }
        match self.answer(&whoami) {
            Ok(result) if result["isError"] != true => Ok(self.said(&whoami)),
            other => Err(format!("{whoami}: {other:?}")),
        }
    }

    /// `label` is refused: only its status is listed, naming the mount and `reason`, and
    /// every call of its tools is answered with both.
    fn assert_refused(&self, label: &str, reason: &str, version: VersionChoice) {
        let status = format!("{label}__status");
        assert!(self.lists(&status), "{version:?}: {:?}", self.listed);
        assert!(
            !self.lists(&format!("{label}__whoami")),
            "{version:?}: {:?}",
            self.listed
        );
        let named = format!("`{label}`");
        let description = self.description(&status);
        assert!(
            description.contains(&named) && description.contains(reason),
            "{version:?}: {description}"
        );
        match self.answer(&status) {
            Ok(result) => assert_eq!(result["isError"], true, "{version:?}: {result}"),
            Err(e) => panic!("{version:?}: {status} failed: {e}"),
        }
        for name in [status, format!("{label}__whoami")] {
            let said = self.said(&name);
            assert!(
                said.contains(&named) && said.contains(reason),
                "{version:?}: {name}: {said}"
            );
        }
    }
}

/// Calls `label__whoami` in `version` until it answers `subject`'s name, within 30 s.
async fn wait_for_subject(url: &str, label: &str, subject: &str) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let seen = Seen::of(url, VersionChoice::V2026_07_28, &[label]).await;
        let now = seen.mounted(label);
        if let Ok(said) = &now
            && said.starts_with(&format!("{subject} "))
        {
            return said.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{label} did not act as {subject} within 30 s: {now:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mount_acts_as_the_workload_its_token_file_names_and_a_forged_one_is_refused() {
    let bound = Bound::new().await;
    let resource = bound.resource();
    let workload = Keys::new("ES256");
    let stranger = Keys::new("ES256");
    let keys = Keys::new("RS256");
    let trust = format!("{WORKLOAD_ISSUER}={}", workload.arg());
    let provider = Provider::start_with(
        &keys,
        "RS256",
        &[&resource],
        0,
        &["--trust", &trust, "--access-ttl", "20"],
    );
    let url = serve_whoami(bound, &provider.issuer);

    // The grant itself: a workload's token gives an access token for the resource, its `sub`
    // the workload's; anything else is `invalid_grant` (RFC 7523 §3.1).
    let issuer = provider.issuer.clone();
    let (status, answer) = bearer_grant(
        &provider,
        &assertion(&workload, WORKLOAD_ISSUER, "wl-direct", &issuer, None),
        &resource,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let claims = claims_of(answer["access_token"].as_str().expect("a token"));
    assert_eq!(
        (
            &claims["sub"],
            &claims["aud"],
            &claims["iss"],
            &claims["scope"]
        ),
        (
            &json!("wl-direct"),
            &json!(resource),
            &json!(issuer),
            &json!("users:read")
        ),
        "{claims}"
    );
    let signed = |claims: Value, keys: &Keys, kid: &str| {
        keys.sign(&claims, &json!({"typ": "JWT", "kid": kid}))
    };
    let good = json!({"iss": WORKLOAD_ISSUER, "sub": "wl", "aud": issuer, "exp": now() + 300});
    let with = |change: Value| {
        let mut claims = good.clone();
        for (name, value) in change.as_object().expect("changes") {
            if value.is_null() {
                claims.as_object_mut().expect("claims").remove(name);
            } else {
                claims[name] = value.clone();
            }
        }
        claims
    };
    let refused = [
        (
            "another key",
            signed(good.clone(), &stranger, &workload.kid),
        ),
        (
            "an unknown issuer",
            signed(
                with(json!({"iss": "https://else.invalid"})),
                &workload,
                &workload.kid,
            ),
        ),
        (
            "another audience",
            signed(
                with(json!({"aud": "https://else.invalid"})),
                &workload,
                &workload.kid,
            ),
        ),
        (
            "expired",
            signed(with(json!({"exp": now() - 5})), &workload, &workload.kid),
        ),
        (
            "no subject",
            signed(with(json!({"sub": null})), &workload, &workload.kid),
        ),
        (
            "no expiry",
            signed(with(json!({"exp": null})), &workload, &workload.kid),
        ),
        (
            "no audience",
            signed(with(json!({"aud": null})), &workload, &workload.kid),
        ),
        ("not a JWT", "not.a.jwt".to_owned()),
    ];
    for (what, assertion) in refused {
        let (status, answer) = bearer_grant(&provider, &assertion, &resource).await;
        assert_eq!(
            (status, &answer["error"]),
            (StatusCode::BAD_REQUEST, &json!("invalid_grant")),
            // Only the error: a token issued by mistake is not printed.
            "{what}: {} {}",
            answer["error"],
            answer["error_description"]
        );
        assert!(answer.get("access_token").is_none(), "{what}");
    }
    // The token endpoint as the audience is taken too.
    let to_endpoint = signed(
        with(json!({"aud": format!("{issuer}/token")})),
        &workload,
        &workload.kid,
    );
    let (status, answer) = bearer_grant(&provider, &to_endpoint, &resource).await;
    assert_eq!(status, StatusCode::OK, "{answer}");

    let dir = TempDir::new("oauth-assertion");
    let token_file = dir.path().join("workload-token");
    let forged_file = dir.path().join("forged-token");
    let builder = "system:serviceaccount:ci:builder";
    let first = assertion(&workload, WORKLOAD_ISSUER, builder, &provider.issuer, None);
    write_whole(&token_file, &first);
    // Signed by another key under the workload issuer's key id: its signature fails.
    let forged = assertion(
        &stranger,
        WORKLOAD_ISSUER,
        builder,
        &provider.issuer,
        Some(&workload.kid),
    );
    write_whole(&forged_file, &forged);
    let connection = |file: &std::path::Path| {
        json!({
            "server_url": url, "grant": "workload_identity", "client_id": CLIENT,
            "issuer": provider.issuer, "scopes": ["users:read"],
            "subject_token": {"file": file},
        })
    };
    let gateway = gateway(
        &dir,
        &json!({"wl": connection(&token_file), "forged": connection(&forged_file)}),
    )
    .await;

    for version in [VersionChoice::V2025_11_25, VersionChoice::V2026_07_28] {
        let seen = Seen::of(&gateway.url, version, &["wl", "forged"]).await;
        // The mount lists the server's tool, and its call runs as the workload.
        let said = seen
            .mounted("wl")
            .unwrap_or_else(|e| panic!("{version:?}: {e}"));
        assert_eq!(said, format!("{builder} [users:read]"), "{version:?}");
        // The forged assertion: the mount says why, and shows no token.
        seen.assert_refused("forged", "invalid_grant", version);
        let everything = seen.everything();
        for token in [&first, &forged] {
            assert!(
                !everything.contains(token.as_str()),
                "{version:?}: {everything}"
            );
        }
        assert!(!everything.contains("eyJ"), "{version:?}: {everything}");
    }

    // The file rotated to another workload's token: the mount's next token is that one's.
    let deployer = "system:serviceaccount:ci:deployer";
    write_whole(
        &token_file,
        &assertion(&workload, WORKLOAD_ISSUER, deployer, &provider.issuer, None),
    );
    let said = wait_for_subject(&gateway.url, "wl", deployer).await;
    assert_eq!(said, format!("{deployer} [users:read]"));
    for version in [VersionChoice::V2025_11_25, VersionChoice::V2026_07_28] {
        let seen = Seen::of(&gateway.url, version, &["wl"]).await;
        assert_eq!(
            seen.mounted("wl"),
            Ok(format!("{deployer} [users:read]")),
            "{version:?}"
        );
    }

    // The refused mount's file given a good token: it is tried again, the store unchanged.
    let fixer = "system:serviceaccount:ci:fixer";
    write_whole(
        &forged_file,
        &assertion(&workload, WORKLOAD_ISSUER, fixer, &provider.issuer, None),
    );
    let said = wait_for_subject(&gateway.url, "forged", fixer).await;
    assert_eq!(said, format!("{fixer} [users:read]"));
    drop(gateway);
    provider.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mount_acts_as_the_enterprise_user_whose_id_token_the_idp_exchanges() {
    let bound = Bound::new().await;
    let resource = bound.resource();
    // The enterprise's identity provider: it issued the users' ID tokens, and exchanges them
    // for ID-JAGs for this resource.
    let idp_keys = Keys::new("ES256");
    let idp = Provider::start(&idp_keys, "ES256", &[&resource], 0);
    let keys = Keys::new("RS256");
    let trust = format!("{}={}", idp.issuer, idp_keys.arg());
    let provider = Provider::start_with(
        &keys,
        "RS256",
        &[&resource],
        0,
        &["--trust-idp", &trust, "--access-ttl", "20"],
    );
    let url = serve_whoami(bound, &provider.issuer);
    let stranger = Keys::new("ES256");
    let id_token = |keys: &Keys, sub: &str| {
        keys.sign(
            &json!({"iss": idp.issuer, "sub": sub, "aud": CLIENT, "iat": now(),
                    "exp": now() + 300}),
            &json!({"typ": "JWT", "kid": idp_keys.kid}),
        )
    };

    // An ID token is no ID-JAG: presented as the assertion itself, it is refused.
    let (status, answer) = bearer_grant(&provider, &id_token(&idp_keys, "alice"), &resource).await;
    assert_eq!(
        (status, &answer["error"]),
        (StatusCode::BAD_REQUEST, &json!("invalid_grant")),
        "{}",
        answer["error_description"]
    );

    let dir = TempDir::new("oauth-enterprise");
    let token_file = dir.path().join("id-token");
    let forged_file = dir.path().join("forged-id-token");
    let alice = "alice@corp.example";
    let first = id_token(&idp_keys, alice);
    write_whole(&token_file, &first);
    let forged = id_token(&stranger, alice);
    write_whole(&forged_file, &forged);
    let connection = |file: &std::path::Path| {
        json!({
            "server_url": url, "grant": "enterprise", "client_id": CLIENT,
            "issuer": provider.issuer, "scopes": ["users:read", "users:write"],
            "subject_token": {"file": file},
            "idp": {"token_endpoint": format!("{}/token", idp.issuer), "client_id": CLIENT},
        })
    };
    let gateway = gateway(
        &dir,
        &json!({"corp": connection(&token_file), "mallory": connection(&forged_file)}),
    )
    .await;

    for version in [VersionChoice::V2025_11_25, VersionChoice::V2026_07_28] {
        let seen = Seen::of(&gateway.url, version, &["corp", "mallory"]).await;
        let said = seen
            .mounted("corp")
            .unwrap_or_else(|e| panic!("{version:?}: {e}"));
        assert_eq!(
            said,
            format!("{alice} [users:read users:write]"),
            "{version:?}"
        );
        // The identity provider refuses the forged ID token: the mount says so.
        seen.assert_refused("mallory", "invalid_grant", version);
        let everything = seen.everything();
        assert!(
            everything.contains("identity provider"),
            "{version:?}: {everything}"
        );
        assert!(!everything.contains("eyJ"), "{version:?}: {everything}");
    }

    // Another user's ID token in the file: the next ID-JAG, and token, are theirs.
    let bob = "bob@corp.example";
    write_whole(&token_file, &id_token(&idp_keys, bob));
    let said = wait_for_subject(&gateway.url, "corp", bob).await;
    assert_eq!(said, format!("{bob} [users:read users:write]"));
    drop(gateway);
    provider.stop();
    idp.stop();
}
