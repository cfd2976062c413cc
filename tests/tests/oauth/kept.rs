//! A gateway of one process whose connection names a `sign_in_store`: its users' sign-ins are
//! kept in that file, sealed under a key derived from `MCP_TOOL_STATE_KEY`, and they are still
//! signed in after the gateway restarts. Without the key, the gateway says it cannot keep them.
//!
//! Three gateway replicas behind nginx sharing a Redis (`deploy/replicas.sh`; `nginx` and
//! `redis-server` are Debian packages `.ci/run` installs): a sign-in started on one replica,
//! its start link opened on another and the browser sent back to the third completes; after
//! every replica restarted, the user is still signed in.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use mcp_tool::client::VersionChoice;
use mcp_tool_tests::{TempDir, example_bin};
use reqwest::StatusCode;
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
    // Kept sealed: no token (a JWT starts `eyJ`), no user's name. The user's record is
    // written after the mount's registration (which the flow writes first): wait for it.
    let mut kept = String::new();
    for _ in 0..100 {
        kept = std::fs::read_to_string(&file).unwrap_or_default();
        if kept.contains("\"sign-in:user:") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(kept.contains("\"sign-in:user:"), "{kept}");
    assert_kept_sealed(&kept);

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

/// Every record of a sign-in file is sealed: its `sealed` text is `v1.` and base64url alone
/// (no `.`, so no JWT can sit in it in the clear), and nothing outside the sealed texts names
/// a token (a JWT starts `eyJ`) or the user. The sealed texts are not searched for `eyJ`: a
/// ciphertext spells it by chance about once in two hundred files.
fn assert_kept_sealed(kept: &str) {
    let file: serde_json::Value = serde_json::from_str(kept).expect("the sign-in file is JSON");
    let records = file["records"].as_object().expect("records");
    assert!(!records.is_empty(), "{kept}");
    let mut outside = kept.to_owned();
    for record in records.values() {
        let sealed = record["sealed"].as_str().expect("a sealed text");
        let body = sealed.strip_prefix("v1.").expect("a v1 seal");
        assert!(
            body.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "{sealed}"
        );
        outside = outside.replace(sealed, "");
    }
    assert!(
        !outside.contains("eyJ") && !outside.contains("alice"),
        "{kept}"
    );
}

/// Redis, three replicas of the gateway and nginx, run by `deploy/replicas.sh`; stopped when
/// dropped.
struct Cluster {
    dir: TempDir,
    env: Vec<(String, String)>,
    ports: Vec<u16>,
}

impl Cluster {
    /// Its ports chosen; nothing started yet.
    fn new(env: Vec<(String, String)>) -> Cluster {
        // Held together, so the system gives different ports: nginx, Redis, three replicas.
        let listeners: Vec<std::net::TcpListener> = (0..5)
            .map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("a free port"))
            .collect();
        let ports = listeners
            .iter()
            .map(|l| l.local_addr().expect("an address").port())
            .collect();
        drop(listeners);
        Cluster {
            dir: TempDir::new("kept-replicas"),
            env,
            ports,
        }
    }

    fn run(&self, args: &[&str]) {
        let replicas: Vec<String> = self.ports[2..].iter().map(u16::to_string).collect();
        let output = Command::new("bash")
            .arg(PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../deploy/replicas.sh"
            )))
            .args(args)
            .env("RUN_DIR", self.dir.path())
            .env("PORT", self.ports[0].to_string())
            .env("REDIS_PORT", self.ports[1].to_string())
            .env("REPLICA_PORTS", replicas.join(" "))
            .env("MCP_SERVER", example_bin("calc"))
            .env_remove("MCP_TOOL_STATE_KEY")
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .output()
            .expect("bash runs deploy/replicas.sh");
        assert!(
            output.status.success(),
            "deploy/replicas.sh {args:?}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// Replica `i`'s origin (1-based).
    fn replica(&self, i: usize) -> String {
        format!("http://127.0.0.1:{}", self.ports[1 + i])
    }

    fn nginx(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.ports[0])
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../deploy/replicas.sh"
            ))
            .arg("down")
            .env("RUN_DIR", self.dir.path())
            .output();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_completes_across_replicas_and_outlives_their_restarts() {
    let (provider, users, _, url) = users_behind_a_provider().await;
    let files = TempDir::new("kept-replicas-files");
    let (connections, mounts) = (
        files.path().join("connections.json"),
        files.path().join("mounts.json"),
    );
    std::fs::write(
        &mounts,
        json!([{"type": "mcp", "server_label": "users", "project_connection_id": "users-each"}])
            .to_string(),
    )
    .unwrap();
    let cluster = Cluster::new(vec![
        (
            "MCP_SERVER_ARGS".into(),
            format!("--mount {}", mounts.display()),
        ),
        (
            mcp_tool::env::CONNECTIONS.into(),
            connections.display().to_string(),
        ),
        (
            mcp_tool::env::BEARER_TOKENS.into(),
            "alice:tok-alice".into(),
        ),
    ]);
    // The browser comes back to replica 3.
    let back = format!("{}/oauth/callback", cluster.replica(3));
    std::fs::write(
        &connections,
        json!({"users-each": {"server_url": url, "grant": "authorization_code",
                              "scopes": ["users:read", "users:write"], "redirect_uri": back}})
        .to_string(),
    )
    .unwrap();
    cluster.run(&["up", "3"]);

    // Alice signs in through replica 1; her browser opens the start link on replica 2.
    let alice = Person::new("alice");
    *alice.open_at.lock().unwrap() = Some((
        back.clone(),
        format!("{}/oauth/callback", cluster.replica(2)),
    ));
    let as_alice = connect(
        &format!("{}/mcp", cluster.replica(1)),
        "tok-alice",
        VersionChoice::V2025_11_25,
        &alice,
    )
    .await;
    let signed = sign_in_tool(&as_alice).await;
    assert_ne!(signed["isError"], true, "{signed}");
    let walked = alice.walked().await;
    assert_eq!(walked.len(), 1);
    let (status, text, at) = &walked[0];
    assert_eq!(*status, StatusCode::OK, "{text}");
    assert!(text.contains("You are signed in"), "{text}");
    assert!(
        at.starts_with(&back),
        "the redirect came back to replica 3: {at}"
    );
    as_alice.close().await;

    // Every replica restarts: Alice is still signed in, wherever her calls land.
    for i in 1..=3 {
        cluster.run(&["kill", &i.to_string()]);
        cluster.run(&["start", &i.to_string()]);
    }
    for version in [VersionChoice::V2025_11_25, VersionChoice::V2026_07_28] {
        let as_alice = connect(&cluster.nginx(), "tok-alice", version, &alice).await;
        let signed = sign_in_tool(&as_alice).await;
        assert!(text_of(&signed).starts_with("Signed in"), "{signed}");
        as_alice.close().await;
    }
    let as_alice = connect(
        &format!("{}/mcp", cluster.replica(2)),
        "tok-alice",
        VersionChoice::V2025_11_25,
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
    drop(cluster);
    drop(users);
    provider.stop();
}
