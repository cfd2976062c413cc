//! The `users` example's REST API (`users --http 127.0.0.1:0 --openapi`) checked by tools
//! nobody here wrote, installed by `bash interop/setup.sh` into `interop/.venv` at the
//! versions `interop/requirements.txt` pins:
//!
//! - `openapi-spec-validator` validates its `/openapi.json` (OpenAPI 3.1, with the tools'
//!   JSON Schemas);
//! - schemathesis runs its schema-based checks (its `examples`, `coverage` and `fuzzing`
//!   phases; the document has no links, so no stateful phase) against the running server: no
//!   server error, no answer outside the document (status, media type, headers, body schema),
//!   no schema-invalid request accepted. Bounded: 10 examples an operation, a fixed seed.
//!   Left out: `positive_data_acceptance`, which wants every schema-valid request accepted,
//!   while `seed_users` refuses counts above 20 by its own rule (`OUT_OF_RANGE`, 400), a rule
//!   its `u8` argument's schema cannot say.
//!
//! And `users openapi` prints the document the server serves.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use mcp_tool_tests::{
    ExampleHttp, TempDir, install_crypto_provider, interop_dir, users_bin, wait_bounded,
};
use serde_json::Value;

/// The longest one checker may run.
const LIMIT: Duration = Duration::from_secs(120);

/// A program of `interop/.venv`, checking that it is installed.
fn venv_program(name: &str) -> PathBuf {
    let program = interop_dir().join(".venv/bin").join(name);
    assert!(
        program.exists(),
        "{} is missing: install the interop tools with `bash interop/setup.sh` (.ci/run does it)",
        program.display()
    );
    program
}

/// Runs `program` with `args` in `dir`; its exit status and output, within [`LIMIT`].
fn run(program: PathBuf, args: &[&str], dir: &TempDir) -> (bool, String) {
    let mut child = Command::new(&program)
        .args(args)
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{} does not start: {e}", program.display()));
    let (status, out, err) = wait_bounded(&mut child, LIMIT)
        .unwrap_or_else(|| panic!("{} ran longer than {LIMIT:?}", program.display()));
    (status.success(), format!("{out}\n{err}"))
}

async fn document(server: &ExampleHttp) -> Value {
    let url = format!("http://{}/openapi.json", server.addr);
    install_crypto_provider();
    let response = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(20))
        .build()
        .expect("an HTTP client")
        .get(&url)
        .send()
        .await
        .expect("the server answers");
    assert_eq!(response.status(), reqwest::StatusCode::OK, "{url}");
    response.json().await.expect("the document is JSON")
}

#[tokio::test]
async fn the_users_document_passes_an_independent_validator() {
    let server = ExampleHttp::start("users", &["--openapi"], &[]);
    let document = document(&server).await;
    let dir = TempDir::new("openapi");
    let file = dir.path().join("openapi.json");
    std::fs::write(&file, document.to_string()).expect("write the document");
    let (ok, said) = run(
        venv_program("openapi-spec-validator"),
        &[file.to_str().expect("a UTF-8 path")],
        &dir,
    );
    assert!(ok, "openapi-spec-validator refused the document:\n{said}");
    assert!(said.contains("OK"), "{said}");
    // `users openapi` prints what the server serves.
    let printed = Command::new(users_bin())
        .arg("openapi")
        .env_remove(mcp_tool::env::BEARER_TOKENS)
        .output()
        .expect("users openapi runs");
    assert!(printed.status.success(), "{printed:?}");
    let printed: Value = serde_json::from_slice(&printed.stdout).expect("JSON on stdout");
    assert_eq!(printed, document);
}

#[test]
fn schemathesis_finds_no_failure_in_the_users_api() {
    let server = ExampleHttp::start("users", &["--openapi"], &[]);
    let dir = TempDir::new("schemathesis");
    let url = format!("http://{}/openapi.json", server.addr);
    let (ok, said) = run(
        venv_program("schemathesis"),
        &[
            "run",
            &url,
            "--max-examples",
            "10",
            "--seed",
            "1",
            "--generation-database",
            "none",
            "--no-color",
            "--exclude-checks",
            "positive_data_acceptance",
        ],
        &dir,
    );
    assert!(ok, "schemathesis found failures:\n{said}");
    assert!(said.contains("5 selected / 5 total"), "{said}");
}
