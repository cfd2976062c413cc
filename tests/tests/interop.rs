//! Real MCP clients that nobody here wrote, driven against the `users` example server over
//! stdio and over Streamable HTTP (`users --http 127.0.0.1:PORT`, endpoint `/mcp`):
//!
//! - the official TypeScript SDK client (`interop/ts-client.mjs`, npm `@modelcontextprotocol/sdk`);
//! - the official Python SDK client (`interop/py-client.py`, PyPI `mcp`), in its default mode
//!   (a `server/discover` probe first, which our server answers: 2026-07-28), pinned to
//!   2026-07-28 (no probe, no handshake) and in legacy mode (`initialize`: 2025-11-25); and the
//!   same client against the `files` example (`interop/py-files.py`), through a tool that asks
//!   the user (elicitation) and one that asks the client's model (sampling), in all three modes;
//!   and against the `files` example's prompt and resource template, defined with `#[prompt]`
//!   and `#[resource_template]` (`interop/py-offerings.py`): listed, got with arguments (and
//!   refused without), read through the template, completed, in all three modes;
//! - the MCP Inspector's CLI (`interop/inspector.mjs`, npm `@modelcontextprotocol/inspector-cli`).
//!
//! Each script runs as a subprocess with a time limit, checks what it saw itself (exiting
//! non-zero on any failed check) and prints one JSON line summarizing it, which the tests here
//! check again. The clients are installed by `bash interop/setup.sh` (which
//! `.ci/run` runs): the versions are pinned in `interop/package-lock.json` and
//! `interop/requirements.txt`, and each summary must report the pinned version.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_tool_tests::{ExampleHttp, TempDir, example_bin, interop_dir, users_bin, wait_bounded};
use serde_json::{Value, json};

/// The longest one client script may run (the scripts give up by themselves after 60 s).
const SCRIPT_LIMIT: Duration = Duration::from_secs(120);

/// The version every client must negotiate with our server through `initialize`.
const NEGOTIATED: &str = "2025-11-25";

/// The version a client that probes `server/discover` first must settle on.
const V2026_07_28: &str = "2026-07-28";

const TOOLS: [&str; 5] = [
    "create_user",
    "delete_user",
    "get_user",
    "seed_users",
    "send_email",
];

const SETUP_HINT: &str = "install the interop clients with `bash interop/setup.sh` \
                          (.ci/run does it)";

// ---------------------------------------------------------------------------------------------
// The clients
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum Transport {
    Stdio,
    Http,
}

/// The versions the project pins: `interop/package.json` and `interop/requirements.txt`.
fn pinned(package: &str) -> String {
    let dir = interop_dir();
    if package == "mcp" {
        let text = std::fs::read_to_string(dir.join("requirements.txt")).expect("requirements");
        return text
            .lines()
            .find_map(|l| l.trim().strip_prefix("mcp=="))
            .expect("mcp is pinned in requirements.txt")
            .to_owned();
    }
    let text = std::fs::read_to_string(dir.join("package.json")).expect("package.json");
    let json: Value = serde_json::from_str(&text).expect("package.json is JSON");
    json["dependencies"][package]
        .as_str()
        .unwrap_or_else(|| panic!("{package} is pinned in package.json"))
        .to_owned()
}

/// The interpreter of a client script, checking that its packages are installed.
fn interpreter(script: &str) -> PathBuf {
    let dir = interop_dir();
    if script.ends_with(".py") {
        let python = dir.join(".venv/bin/python");
        assert!(
            python.exists(),
            "{} is missing: {SETUP_HINT}",
            python.display()
        );
        return python;
    }
    for package in [
        "@modelcontextprotocol/sdk",
        "@modelcontextprotocol/inspector-cli",
    ] {
        let manifest = dir.join("node_modules").join(package).join("package.json");
        assert!(manifest.exists(), "{package} is missing: {SETUP_HINT}");
    }
    PathBuf::from("node")
}

/// Runs one client script against `users` over `transport` and returns its JSON summary,
/// after checking that it exited 0 and reported no failure.
fn run_client(label: &str, script: &str, leading: &[&str], transport: Transport) -> Value {
    let users = users_bin();
    let server = (transport == Transport::Http).then(ExampleHttp::users);
    let mut args: Vec<String> = leading.iter().map(|s| (*s).to_owned()).collect();
    match &server {
        None => args.extend(["stdio".to_owned(), users.to_owned()]),
        Some(server) => args.extend(["http".to_owned(), server.url.clone()]),
    }
    run_script(label, script, &args)
}

/// Runs one client script with `args` and returns its JSON summary, after checking that it
/// exited 0 and reported no failure.
fn run_script(label: &str, script: &str, args: &[String]) -> Value {
    let program = interpreter(script);
    let started = Instant::now();
    let mut child = Command::new(&program)
        .arg(script)
        .args(args)
        .current_dir(interop_dir())
        .env_remove("MCP_TOOL_BEARER_TOKENS")
        .env_remove("RUST_LOG")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{label}: cannot run {}: {e}", program.display()));
    let (status, out, err) = wait_bounded(&mut child, SCRIPT_LIMIT)
        .unwrap_or_else(|| panic!("{label}: {script} ran for more than {SCRIPT_LIMIT:?}"));
    let line = out
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let summary: Value = serde_json::from_str(line).unwrap_or_else(|e| {
        panic!("{label}: the last line of stdout is not a JSON summary ({e}):\n{out}\n--- stderr:\n{err}")
    });
    assert!(
        status.success() && summary["ok"] == true,
        "{label}: {script} exited with {status}; failures: {:#}\n--- stderr:\n{err}",
        summary["failures"]
    );
    assert_eq!(summary["failures"], json!([]), "{label}");
    eprintln!(
        "{label}: ok in {:.2} s: {line}",
        started.elapsed().as_secs_f64()
    );
    summary
}

/// The checks every client's summary must pass: the tools, a created user, the bad call.
fn check_common(label: &str, summary: &Value) {
    assert_eq!(summary["tools"], json!(TOOLS), "{label}: tools");
    let user = &summary["created"];
    assert_eq!(user["email"], "jane.doe@example.com", "{label}: {user}");
    assert!(
        user["id"].as_str().is_some_and(|id| id.starts_with("usr_")),
        "{label}: {user}"
    );
    assert_eq!(summary["badCall"]["isError"], true, "{label}");
    assert!(
        summary["badCall"]["text"]
            .as_str()
            .is_some_and(|t| t.contains(r#"email: "x" is not a valid email"#)),
        "{label}: {}",
        summary["badCall"]
    );
}

/// The checks of an SDK client's summary: the version, client-side output validation, the
/// unknown user, and every progress notification.
fn check_sdk(label: &str, summary: &Value) {
    check_common(label, summary);
    // The TypeScript client has one mode: `initialize`.
    let expected = match summary["mode"].as_str() {
        Some("auto" | V2026_07_28) => V2026_07_28,
        _ => NEGOTIATED,
    };
    assert_eq!(summary["protocolVersion"], expected, "{label}");
    assert_eq!(summary["server"]["name"], "users", "{label}");
    assert_eq!(summary["validatorRejectsTampered"], true, "{label}");
    assert_eq!(summary["missingUser"]["isError"], true, "{label}");
    let progress = summary["progress"].as_array().expect("progress");
    let seen: Vec<(f64, f64)> = progress
        .iter()
        .map(|p| {
            (
                p["progress"].as_f64().unwrap_or(-1.0),
                p["total"].as_f64().unwrap_or(-1.0),
            )
        })
        .collect();
    assert_eq!(
        seen,
        (1..=5).map(|i| (f64::from(i), 5.0)).collect::<Vec<_>>(),
        "{label}: progress notifications"
    );
    assert_eq!(summary["seedResult"], "created 5 demo users", "{label}");
}

fn typescript(transport: Transport) {
    let label = format!("TypeScript SDK over {transport:?}");
    let summary = run_client(&label, "ts-client.mjs", &[], transport);
    assert_eq!(
        summary["sdkVersion"],
        pinned("@modelcontextprotocol/sdk"),
        "{label}"
    );
    check_sdk(&label, &summary);
    assert_eq!(summary["outputValidatorCached"], true, "{label}");
    if transport == Transport::Http {
        assert_eq!(summary["sessionTerminated"], true, "{label}: DELETE");
        let deletes = summary["deleteStatuses"]
            .as_array()
            .expect("deleteStatuses");
        assert!(
            deletes.len() == 1 && deletes[0].as_u64().is_some_and(|s| (200..300).contains(&s)),
            "{label}: DELETE answered {deletes:?}, not one 2xx"
        );
        assert_eq!(summary["statusAfterDelete"], 404, "{label}: after DELETE");
    }
}

fn python(mode: &str, transport: Transport) {
    let label = format!("Python SDK ({mode} mode) over {transport:?}");
    let summary = run_client(&label, "py-client.py", &[mode], transport);
    assert_eq!(summary["sdkVersion"], pinned("mcp"), "{label}");
    check_sdk(&label, &summary);
    let probes = summary["discoverProbe"].as_array().expect("discoverProbe");
    if mode == "auto" {
        // The probe succeeded, so the client speaks 2026-07-28 without a handshake.
        assert_eq!(probes.len(), 1, "{label}: {probes:?}");
        assert!(probes[0]["result"].is_object(), "{label}: {probes:?}");
    } else {
        assert!(probes.is_empty(), "{label}: {probes:?}");
    }
}

/// The `files` server's password, and the bearer token of its one HTTP subject.
const PASSWORD: &str = "open-sesame";
const TOKEN: &str = "interop-token";

/// What `py-files.py`'s sampling callback answers for the client's model.
const SUMMARY: &str = "A short note about the moon.";

/// Runs the Python SDK script `script` against `files --root <root> --password <pw>` (with
/// `env` over HTTP): its arguments are `leading`, then `stdio <files> <server args>` or
/// `http <url> <http_trailing>`. Stops the server, checks the SDK's version and the protocol
/// the mode (`leading[0]`) must settle on, and returns the summary.
fn run_files_client(
    label: &str,
    script: &str,
    transport: Transport,
    leading: &[&str],
    root: &str,
    env: &[(&str, &str)],
    http_trailing: &[&str],
) -> Value {
    let files = example_bin("files");
    let server_args = ["--root", root, "--password", PASSWORD];
    let server =
        (transport == Transport::Http).then(|| ExampleHttp::start("files", &server_args, env));
    let mut args: Vec<String> = leading.iter().map(|s| (*s).to_owned()).collect();
    match &server {
        None => {
            args.extend(["stdio".to_owned(), files.to_owned()]);
            args.extend(server_args.map(str::to_owned));
        }
        Some(server) => {
            args.extend(["http".to_owned(), server.url.clone()]);
            args.extend(http_trailing.iter().map(|s| (*s).to_owned()));
        }
    }
    let summary = run_script(label, script, &args);
    drop(server);

    assert_eq!(summary["sdkVersion"], pinned("mcp"), "{label}");
    let expected = if leading[0] == "legacy" {
        NEGOTIATED
    } else {
        V2026_07_28
    };
    assert_eq!(summary["protocolVersion"], expected, "{label}");
    summary
}

/// The Python SDK client against `files --root <tmp> --password <pw>`: `login` reveals
/// `delete_file`, which asks the user (elicitation) before deleting, and `summarize_file` asks
/// the client's model (sampling). Checks the summary and the folder afterwards.
fn python_files(mode: &str, transport: Transport) {
    let label = format!("Python SDK ({mode} mode) over {transport:?}, files");
    let root = TempDir::new("py-files");
    let notes = "The moon keeps the same face turned to the Earth.\n";
    for (name, text) in [
        ("gone.txt", "delete me\n"),
        ("keep.txt", "keep me\n"),
        ("notes.txt", notes),
    ] {
        std::fs::write(root.path().join(name), text).expect("write the fixture");
    }
    // Over HTTP in 2026-07-28 there is no session: what `login` enables belongs to the subject
    // the bearer token names.
    let tokens = format!("alice:{TOKEN}");
    let summary = run_files_client(
        &label,
        "py-files.py",
        transport,
        &[mode, root.arg(), PASSWORD],
        root.arg(),
        &[(mcp_tool::env::BEARER_TOKENS, tokens.as_str())],
        &[TOKEN],
    );
    let names = |key: &str| -> Vec<String> {
        serde_json::from_value(summary[key].clone())
            .unwrap_or_else(|e| panic!("{label}: {key}: {e}"))
    };
    let (before, after) = (names("toolsBefore"), names("toolsAfter"));
    assert!(
        !before.iter().any(|n| n == "delete_file"),
        "{label}: {before:?}"
    );
    for name in ["delete_file", "write_file"] {
        assert!(after.iter().any(|n| n == name), "{label}: {after:?}");
    }
    assert_eq!(
        summary["deleteAccepted"],
        json!({ "isError": false, "text": "deleted gone.txt" }),
        "{label}"
    );
    assert_eq!(
        summary["deleteDeclined"],
        json!({ "isError": false, "text": "keep.txt was not deleted" }),
        "{label}"
    );
    let asked: Vec<&Value> = summary["elicitations"]
        .as_array()
        .expect("elicitations")
        .iter()
        .map(|e| &e["message"])
        .collect();
    assert_eq!(
        asked,
        ["Delete `gone.txt`?", "Delete `keep.txt`?"],
        "{label}"
    );
    assert_eq!(
        summary["summary"],
        json!({ "isError": false, "text": SUMMARY }),
        "{label}"
    );
    assert_eq!(summary["samplingQuotesFile"], true, "{label}");
    let rounds = summary["inputRequired"].as_array().expect("inputRequired");
    if mode == "legacy" {
        // Server-to-client requests, no InputRequiredResult.
        assert!(rounds.is_empty(), "{label}: {rounds:?}");
    } else {
        let asked: Vec<&Value> = rounds.iter().map(|r| &r["asked"]).collect();
        assert_eq!(
            asked,
            [
                &json!(["elicitation/create"]),
                &json!(["elicitation/create"]),
                &json!(["sampling/createMessage"])
            ],
            "{label}"
        );
        assert!(
            rounds
                .iter()
                .all(|r| r["requestState"] == true && r["retries"] == 1),
            "{label}: {rounds:?}"
        );
    }
    // The folder agrees.
    assert!(!root.path().join("gone.txt").exists(), "{label}: gone.txt");
    assert_eq!(
        std::fs::read_to_string(root.path().join("keep.txt"))
            .ok()
            .as_deref(),
        Some("keep me\n"),
        "{label}: keep.txt"
    );
}

/// The Python SDK client against `files --root <tmp>`: the prompt `review_file` and the
/// template `files://{name}`, both defined with the macros. Checks the summary.
fn python_offerings(mode: &str, transport: Transport) {
    let label = format!("Python SDK ({mode} mode) over {transport:?}, prompts and templates");
    let root = TempDir::new("py-offerings");
    let notes = "The moon keeps the same face turned to the Earth.\n";
    std::fs::write(root.path().join("notes.txt"), notes).expect("write the fixture");
    let summary = run_files_client(
        &label,
        "py-offerings.py",
        transport,
        &[mode, root.arg()],
        root.arg(),
        &[],
        &[],
    );
    assert_eq!(
        summary["reviewFile"],
        json!({
            "name": "review_file",
            "title": "Review a file",
            "description": "Review a text file under the root folder: its text, and what to look at.",
            "arguments": [
                { "name": "path", "description": "Path relative to the root folder", "required": true },
                { "name": "focus", "description": "What to look at (anything worth improving, by default)", "required": false }
            ]
        }),
        "{label}"
    );
    assert_eq!(
        summary["review"],
        json!(["Review `notes.txt`, looking at tone.", notes]),
        "{label}"
    );
    for refusal in ["missing", "unknown"] {
        assert_eq!(
            summary["refusals"][refusal]["code"], -32602,
            "{label}: {refusal}"
        );
    }
    assert_eq!(
        summary["read"],
        json!([{ "uri": "files://notes.txt", "mimeType": "text/plain", "text": notes }]),
        "{label}"
    );
    assert_eq!(summary["completion"], json!(["notes.txt"]), "{label}");
}

fn inspector(transport: Transport) {
    let label = format!("Inspector CLI over {transport:?}");
    let summary = run_client(&label, "inspector.mjs", &[], transport);
    assert_eq!(
        summary["inspectorVersion"],
        pinned("@modelcontextprotocol/inspector-cli"),
        "{label}"
    );
    check_common(&label, &summary);
}

/// One `#[test]` a row: the client, in its mode, over the transport.
macro_rules! interop_tests {
    ($($name:ident => $client:ident($($arg:expr),*);)*) => {
        $(
            #[test]
            fn $name() {
                $client($($arg),*);
            }
        )*
    };
}

interop_tests! {
    typescript_sdk_over_stdio => typescript(Transport::Stdio);
    typescript_sdk_over_http => typescript(Transport::Http);
    python_sdk_auto_mode_over_stdio => python("auto", Transport::Stdio);
    python_sdk_legacy_mode_over_stdio => python("legacy", Transport::Stdio);
    python_sdk_auto_mode_over_http => python("auto", Transport::Http);
    python_sdk_legacy_mode_over_http => python("legacy", Transport::Http);
    python_sdk_pinned_mode_over_stdio => python(V2026_07_28, Transport::Stdio);
    python_sdk_pinned_mode_over_http => python(V2026_07_28, Transport::Http);
    python_sdk_files_auto_mode_over_stdio => python_files("auto", Transport::Stdio);
    python_sdk_files_pinned_mode_over_stdio => python_files(V2026_07_28, Transport::Stdio);
    python_sdk_files_legacy_mode_over_stdio => python_files("legacy", Transport::Stdio);
    python_sdk_files_auto_mode_over_http => python_files("auto", Transport::Http);
    python_sdk_files_pinned_mode_over_http => python_files(V2026_07_28, Transport::Http);
    python_sdk_files_legacy_mode_over_http => python_files("legacy", Transport::Http);
    python_sdk_offerings_auto_mode_over_stdio => python_offerings("auto", Transport::Stdio);
    python_sdk_offerings_pinned_mode_over_stdio => python_offerings(V2026_07_28, Transport::Stdio);
    python_sdk_offerings_legacy_mode_over_stdio => python_offerings("legacy", Transport::Stdio);
    python_sdk_offerings_auto_mode_over_http => python_offerings("auto", Transport::Http);
    python_sdk_offerings_pinned_mode_over_http => python_offerings(V2026_07_28, Transport::Http);
    python_sdk_offerings_legacy_mode_over_http => python_offerings("legacy", Transport::Http);
    inspector_cli_over_stdio => inspector(Transport::Stdio);
    inspector_cli_over_http => inspector(Transport::Http);
}
