//! A gateway of one process whose connection names a `sign_in_store`: its users' sign-ins are
//! kept in that file, sealed under a key derived from `MCP_TOOL_STATE_KEY`, and they are still
//! signed in after the gateway restarts. Without the key, the gateway says it cannot keep them.

use std::time::Duration;

use mcp_tool::client::VersionChoice;
use mcp_tool_tests::TempDir;
use serde_json::json;

use super::{Gateway, Person, connect, sign_in_tool, text_of, users_behind_a_provider};

const STATE_KEY: &str = "7f3a9c1e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f3a";

fn free_addr() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    format!("127.0.0.1:{port}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_stays_signed_in_across_a_restart_with_a_sign_in_store() {
    let (provider, users, _, url) = users_behind_a_provider().await;
    let dir = TempDir::new("oauth-kept");
    let file = dir.path().join("sign-ins.json");
    let file_text = file.to_string_lossy().into_owned();
    let more = [("sign_in_store", file_text.as_str())];
    let env = [("MCP_TOOL_STATE_KEY", STATE_KEY)];
    let addr = free_addr();
    let gateway = Gateway::start_with(&url, "alice:tok-alice", dir, &addr, &more, &env).await;
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
    as_alice.close().await;
    // Kept sealed: no token (a JWT starts `eyJ`), no user's name.
    let mut kept = String::new();
    for _ in 0..100 {
        kept = std::fs::read_to_string(&file).unwrap_or_default();
        if kept.contains("\"sealed\"") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(kept.contains("\"sealed\""), "{kept}");
    assert!(!kept.contains("eyJ") && !kept.contains("alice"), "{kept}");

    // The gateway restarts (the same address, the same files, the same key): Alice is still
    // signed in — her call runs, and nobody asks her to sign in.
    let dir = gateway.stop();
    let gateway = Gateway::start_with(&url, "alice:tok-alice", dir, &addr, &more, &env).await;
    let as_alice = connect(
        gateway.url(),
        "tok-alice",
        VersionChoice::V2026_07_28,
        &alice,
    )
    .await;
    let signed = sign_in_tool(&as_alice).await;
    assert!(text_of(&signed).starts_with("Signed in"), "{signed}");
    let got = as_alice
        .call("users__get_user", json!({"userId": "usr_000000"}))
        .await
        .expect("get_user through the gateway");
    assert!(text_of(&got).contains("NOT_FOUND"), "{got}");
    assert_eq!(alice.asked.lock().unwrap().len(), 1, "asked once, before");
    as_alice.close().await;

    // Without a key of its own, the gateway cannot keep sign-ins in a file: it says so.
    let dir = gateway.stop();
    let gateway = Gateway::start_with(&url, "alice:tok-alice", dir, &addr, &more, &[]).await;
    let as_alice = connect(
        gateway.url(),
        "tok-alice",
        VersionChoice::V2025_11_25,
        &alice,
    )
    .await;
    let refused = sign_in_tool(&as_alice).await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        text_of(&refused).contains("MCP_TOOL_STATE_KEY"),
        "{refused}"
    );
    as_alice.close().await;
    drop(gateway);
    drop(users);
    provider.stop();
}
