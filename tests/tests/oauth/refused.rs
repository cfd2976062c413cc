//! A gateway mount whose client secret the provider refuses (`invalid_client`): its callers
//! are told the mount and the reason, in both revisions, the secret never; the connection
//! store fixed, the mount connects again without a restart.

use super::*;

/// What a list of the gateway shows, and what a call of the mount's tools answers.
async fn seen(
    url: &str,
    version: VersionChoice,
) -> (Vec<String>, Value, Result<Value, ClientError>) {
    let client = McpClient::connect(Connect::http(url).protocol_version(version))
        .await
        .expect("connect to the gateway");
    let listed = client.list_tools().await.expect("tools/list");
    let names = listed
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    let status = listed
        .iter()
        .find(|t| t["name"] == "users__status")
        .cloned()
        .unwrap_or(Value::Null);
    let called = client
        .call("users__get_user", json!({"userId": "usr_000000"}))
        .await;
    let status_called = client.call("users__status", json!({})).await;
    client.close().await;
    (
        names,
        json!({"tool": status, "called": status_called.ok()}),
        called,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mount_with_a_wrong_secret_tells_its_callers_why_until_the_store_is_fixed() {
    let (provider, users, _, url) = users_behind_a_provider().await;
    let dir = TempDir::new("oauth-refused");
    let store = dir.path().join("connections.json");
    let write_store = |secret: &str| {
        // Written whole, then renamed: the gateway never reads half a store.
        let part = dir.path().join("connections.part");
        std::fs::write(
            &part,
            json!({"users-oidc": {
                "server_url": url, "client_id": "writer", "client_secret": secret,
                "issuer": provider.issuer, "scopes": ["users:read", "users:write"],
            }})
            .to_string(),
        )
        .expect("write the connection store");
        std::fs::rename(&part, &store).expect("replace the connection store");
    };
    write_store("not-the-secret");
    let gateway = gateway_mounting_users(&dir, &store).await;
    for version in [VersionChoice::V2025_11_25, VersionChoice::V2026_07_28] {
        let (names, status, called) = seen(&gateway.url, version).await;
        // The mount's tools give way to its status, which says why.
        assert!(
            names.iter().any(|n| n == "users__status"),
            "{version:?}: {names:?}"
        );
        assert!(!names.iter().any(|n| n == "users__get_user"), "{names:?}");
        let description = status["tool"]["description"].as_str().unwrap_or_default();
        assert!(
            description.contains("`users`") && description.contains("invalid_client"),
            "{version:?}: {status}"
        );
        let text = status["called"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert_eq!(status["called"]["isError"], true, "{version:?}: {status}");
        assert!(text.contains("invalid_client"), "{version:?}: {status}");
        // A call of a tool the mount would have: the mount and the reason, not "unknown".
        match &called {
            Err(ClientError::Rpc(e)) => {
                assert!(
                    e.message.contains("`users`")
                        && e.message.contains("invalid_client")
                        && e.message.contains("connection store"),
                    "{version:?}: {}",
                    e.message
                );
            }
            other => panic!("{version:?}: {other:?}"),
        }
        for shown in [description, text, &format!("{called:?}")] {
            assert!(!shown.contains("not-the-secret"), "{shown}");
        }
    }

    // The store fixed: the mount connects again, its tools come back, the status goes.
    write_store("writer-secret");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (names, _, called) = seen(&gateway.url, VersionChoice::V2026_07_28).await;
        if names.iter().any(|n| n == "users__get_user") {
            assert!(!names.iter().any(|n| n == "users__status"), "{names:?}");
            let got = called.expect("a forwarded call");
            assert!(
                got["content"][0]["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("NOT_FOUND")),
                "{got}"
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the mount did not come back within 30 s of the store's fix: {names:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    drop(gateway);
    drop(users);
    provider.stop();
}
