//! OpenAPI mounts over real processes: `calc --mount FILE` mounting a real FastAPI application
//! (`interop/fastapi-app.py`, OpenAPI 3.1) by the document it serves, and the Swagger
//! Petstore's OpenAPI 3.0 document (`../shared/data/petstore3`, beside the repository) served
//! by Prism's mock server (npm `@stoplight/prism-cli`), its API key and bearer token from the
//! connection store (Prism refuses calls without the credentials the document asks for);
//! listed and called through the gateway by the official Python SDK client
//! (`interop/py-openapi.py`) in both protocol eras — 2026-07-28 and 2025-11-25 —, an error
//! answer and a redirect to another origin (refused: the other origin, a listener of this
//! file, sees no connection) included. And a document in a file, changed while mounted: its
//! tools follow, and a 2025-11-25 session hears `list_changed`.
//!
//! Both services are installed by `bash interop/setup.sh` (pinned in `interop/requirements.txt`
//! and `interop/package-lock.json`).

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_tool::client::{Connect, McpClient, VersionChoice};
use mcp_tool_tests::{ExampleHttp, TempDir, interop_dir, wait_bounded};
use serde_json::{Value, json};

/// The longest a service may take to start, or a mount to show a change.
const APPEAR: Duration = Duration::from_secs(60);

/// A process killed when dropped.
struct Service(Child);

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A port free now on the loopback address.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Waits until `url` answers (any status), the service still running.
async fn wait_up(service: &mut Service, url: &str) {
    let client = mcp_tool_tests::http_client();
    let start = Instant::now();
    loop {
        if client.get(url).send().await.is_ok() {
            return;
        }
        if let Ok(Some(status)) = service.0.try_wait() {
            panic!("the service for {url} ended before it answered: {status}");
        }
        assert!(
            start.elapsed() < APPEAR,
            "{url} did not answer within {APPEAR:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The FastAPI application on a port of its own, redirecting `/elsewhere` to `other`.
async fn fastapi(other: &str) -> (Service, String) {
    let port = free_port();
    let python = interop_dir().join(".venv/bin/python");
    let child = Command::new(&python)
        .arg("fastapi-app.py")
        .arg(port.to_string())
        .arg(other)
        .current_dir(interop_dir())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("no Python in interop/.venv ({e}): run `bash interop/setup.sh`")
        });
    let mut service = Service(child);
    let base = format!("http://127.0.0.1:{port}");
    wait_up(&mut service, &format!("{base}/openapi.json")).await;
    (service, base)
}

/// The Swagger Petstore 3.0 document, beside the repository.
fn petstore_document() -> PathBuf {
    let path = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/data/petstore3/openapi.json"
    ));
    assert!(
        path.exists(),
        "the Petstore document is not at {}",
        path.display()
    );
    path
}

/// Prism's mock server of the Petstore document.
async fn prism() -> (Service, String) {
    let port = free_port();
    let prism = interop_dir().join("node_modules/.bin/prism");
    let child = Command::new(&prism)
        .args(["mock", "--host", "127.0.0.1", "--port", &port.to_string()])
        .arg(petstore_document())
        .current_dir(interop_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("no Prism in interop/node_modules ({e}): run `bash interop/setup.sh`")
        });
    let mut service = Service(child);
    let base = format!("http://127.0.0.1:{port}");
    wait_up(&mut service, &format!("{base}/store/inventory")).await;
    (service, base)
}

/// A listener that counts the connections made to it: the origin no call may reach.
async fn other_origin() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    let counted = seen.clone();
    tokio::spawn(async move {
        while let Ok((_stream, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
        }
    });
    (format!("http://{address}"), seen)
}

fn write(dir: &TempDir, name: &str, value: &Value) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, value.to_string()).expect("write");
    path.to_string_lossy().into_owned()
}

/// Runs `py-openapi.py` in `mode` against the gateway at `url`; its summary.
fn python_client(mode: &str, url: &str) -> Value {
    let python = interop_dir().join(".venv/bin/python");
    let mut child = Command::new(python)
        .args(["py-openapi.py", mode, url])
        .current_dir(interop_dir())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the Python SDK client runs");
    let (status, out, err) =
        wait_bounded(&mut child, Duration::from_secs(90)).expect("py-openapi.py ended within 90 s");
    let summary: Value = out
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no summary from py-openapi.py ({status}):\n{out}\n{err}"));
    assert!(
        status.success() && summary["ok"] == json!(true),
        "{mode}: {summary:#}\n{err}"
    );
    summary
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastapi_and_the_petstore_are_mounted_and_called_by_the_python_sdk_in_both_eras() {
    let (other, reached) = other_origin().await;
    let ((_shop, shop), (_pets, pets)) = tokio::join!(fastapi(&other), prism());
    let dir = TempDir::new("openapi-mount");
    let store = write(
        &dir,
        "connections.json",
        &json!({"petstore": {"headers": {"api_key": "special-key"}, "authorization": "pets-token"}}),
    );
    let mounts = write(
        &dir,
        "mounts.json",
        &json!([
            {"type": "openapi", "server_label": "shop", "spec": format!("{shop}/openapi.json")},
            {"type": "openapi", "server_label": "pets", "spec": petstore_document(),
             "server_url": pets, "project_connection_id": "petstore"}
        ]),
    );
    let gateway = ExampleHttp::start(
        "calc",
        &["--mount", &mounts],
        &[("MCP_TOOL_CONNECTIONS", &store)],
    );
    for mode in ["2026-07-28", "legacy"] {
        let summary = python_client(mode, &gateway.url);
        let expected = if mode == "legacy" {
            "2025-11-25"
        } else {
            "2026-07-28"
        };
        assert_eq!(summary["protocolVersion"], expected, "{summary:#}");
        assert!(
            summary["elsewhere"]
                .as_str()
                .unwrap_or_default()
                .contains(&other),
            "the refusal names the other origin: {summary:#}"
        );
    }
    assert_eq!(
        reached.load(Ordering::SeqCst),
        0,
        "the other origin was reached"
    );
}

/// A one-operation document whose operation is `id`.
fn document(ids: &[&str]) -> Value {
    let mut paths = serde_json::Map::new();
    for id in ids {
        paths.insert(
            format!("/{id}"),
            json!({"get": {"operationId": id, "responses": {"204": {"description": "nothing"}}}}),
        );
    }
    json!({"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": paths})
}

async fn names(client: &McpClient) -> Vec<String> {
    let mut names: Vec<String> = client
        .list_tools()
        .await
        .expect("tools/list")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .filter(|n| n.starts_with("doc__"))
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_changed_in_its_file_changes_the_tools_and_a_session_hears_it() {
    let dir = TempDir::new("openapi-change");
    let spec = write(&dir, "api.json", &document(&["first", "second"]));
    let mounts = write(
        &dir,
        "mounts.json",
        &json!([{"type": "openapi", "server_label": "doc", "spec": spec,
                 "server_url": "http://127.0.0.1:9", "allowed_tools": ["first", "third"]}]),
    );
    let gateway = ExampleHttp::start("calc", &["--mount", &mounts], &[]);
    let client = McpClient::connect(
        Connect::http(&gateway.url).protocol_version(VersionChoice::V2025_11_25),
    )
    .await
    .expect("connect");
    let mut changes = client.tool_changes();
    assert_eq!(names(&client).await, ["doc__first"]);
    write(&dir, "api.json", &document(&["third", "second"]));
    tokio::time::timeout(APPEAR, changes.next())
        .await
        .expect("list_changed within the bound");
    let start = Instant::now();
    while names(&client).await != ["doc__third"] {
        assert!(start.elapsed() < APPEAR, "{:?}", names(&client).await);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A document that is no longer OpenAPI leaves the tools as they were.
    std::fs::write(dir.path().join("api.json"), "{\"swagger\": \"2.0\"}").unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(names(&client).await, ["doc__third"]);
    client.close().await;
}
