//! The example servers' command line: `list`, `schema`, `call`, `help`, `--http` on an
//! address in use, and bad input (status 2, a message and the usage on stderr).

mod common;

use common::{CALC, Proc, USERS, VERSION, error_text, is_error, run, text};
use serde_json::{Value, json};

/// Asserts the shape of a command-line error: status 2, nothing on stdout, `error: …` and
/// the usage on stderr. Returns stderr.
fn assert_usage_error(bin: &str, args: &[&str]) -> String {
    let out = run(bin, args);
    assert_eq!(out.code(), 2, "{args:?}: {out:?}");
    assert!(
        out.stdout.is_empty(),
        "{args:?}: nothing on stdout: {out:?}"
    );
    assert!(out.stderr.starts_with("error: "), "{args:?}: {out:?}");
    assert!(out.stderr.contains("usage:"), "{args:?}: {out:?}");
    assert!(out.stderr.contains("call <tool>"), "{args:?}: {out:?}");
    out.stderr
}

#[test]
fn users_list_shows_a_table_of_the_tools() {
    let out = run(USERS, &["list"]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    for name in [
        "create_user",
        "delete_user",
        "get_user",
        "seed_users",
        "send_email",
    ] {
        assert!(out.stdout.contains(name), "{name} missing: {}", out.stdout);
    }
    let row = |name: &str| -> String {
        out.stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no row for {name}: {}", out.stdout))
            .to_owned()
    };
    assert!(row("create_user").contains("Create User Account"));
    assert!(row("get_user").contains("read-only"));
    assert!(row("get_user").contains("idempotent"));
    assert!(row("delete_user").contains("destructive"));
    assert!(row("send_email").contains("open-world"));
    assert!(!row("create_user").contains("destructive"));
    assert!(
        out.stdout.contains(&format!("5 tools on users {VERSION}")),
        "{}",
        out.stdout
    );
}

#[test]
fn users_schema_is_the_tools_list() {
    let out = run(USERS, &["schema"]);
    assert_eq!(out.code(), 0, "{out:?}");
    let schema = out.json();
    let tools = schema["tools"].as_array().expect("`tools` array");
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "create_user",
            "delete_user",
            "get_user",
            "seed_users",
            "send_email"
        ]
    );
    // The same definitions a client gets over stdio.
    let mut p = Proc::initialized(USERS);
    assert_eq!(&p.tools(), tools);
}

#[test]
fn users_call_create_user_prints_the_result() {
    let out = run(
        USERS,
        &["call", "create_user", r#"{"email":"a@b.co","name":"Ann"}"#],
    );
    assert_eq!(out.code(), 0, "{out:?}");
    let result = out.json();
    assert!(!is_error(&result), "{result}");
    let user = &result["structuredContent"];
    assert_eq!(user["email"], "a@b.co");
    assert_eq!(user["name"], "Ann");
    assert_eq!(user["role"], "user");
    assert!(
        user["id"].is_string() && user["createdAt"].is_string(),
        "{user}"
    );
    let from_text: Value = serde_json::from_str(&text(&result)).unwrap();
    assert_eq!(&from_text, user);
}

#[test]
fn users_call_with_a_tool_error_exits_1() {
    let out = run(USERS, &["call", "get_user", r#"{"userId":"nope"}"#]);
    assert_eq!(out.code(), 1, "{out:?}");
    let t = error_text(&out.json());
    assert!(t.contains("NOT_FOUND"), "{t}");

    // Invalid arguments are a tool error too (the model would see it), not a usage error.
    let out = run(
        USERS,
        &["call", "create_user", r#"{"email":"x","name":"Ann"}"#],
    );
    assert_eq!(out.code(), 1, "{out:?}");
    let t = error_text(&out.json());
    assert!(t.contains("\"x\" is not a valid email"), "{t}");

    // No JSON at all means `{}`: the required arguments are missing.
    let out = run(CALC, &["call", "multiply"]);
    assert_eq!(out.code(), 1, "{out:?}");
    let t = error_text(&out.json());
    assert!(t.contains("required"), "{t}");
}

#[test]
fn calc_call() {
    let out = run(CALC, &["call", "multiply", r#"{"a":6,"b":7}"#]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert_eq!(text(&out.json()), "42");

    let out = run(CALC, &["call", "divide", r#"{"a":1,"b":0}"#]);
    assert_eq!(out.code(), 1, "{out:?}");
    let result = out.json();
    let t = error_text(&result);
    assert!(t.contains("DIVISION_BY_ZERO"), "{t}");
    assert!(
        result["_meta"]
            .as_object()
            .is_some_and(|m| m.values().any(|d| d["code"] == "DIVISION_BY_ZERO")),
        "{result}"
    );
}

#[test]
fn calc_call_of_an_unknown_tool_names_the_tools() {
    let stderr = assert_usage_error(CALC, &["call", "nope", "{}"]);
    assert!(stderr.contains("nope"), "{stderr}");
    assert!(
        stderr.contains("divide") && stderr.contains("multiply"),
        "{stderr}"
    );
}

#[test]
fn calc_call_with_bad_json_is_a_usage_error() {
    let stderr = assert_usage_error(CALC, &["call", "multiply", "not json"]);
    assert!(stderr.contains("JSON"), "{stderr}");
    for args in [r#"[6, 7]"#, "5", "null", r#""{}""#, r#"{"a":1"#] {
        assert_usage_error(CALC, &["call", "multiply", args]);
    }
}

#[test]
fn calc_wrong_argument_counts_are_usage_errors() {
    assert_usage_error(CALC, &["call"]);
    assert_usage_error(CALC, &["call", "multiply", r#"{"a":1,"b":2}"#, "extra"]);
    assert_usage_error(CALC, &["list", "extra"]);
    assert_usage_error(CALC, &["schema", "extra"]);
}

#[test]
fn calc_unknown_command_is_a_usage_error() {
    let stderr = assert_usage_error(CALC, &["frobnicate"]);
    assert!(stderr.contains("frobnicate"), "{stderr}");
    assert_usage_error(CALC, &["LIST"]);
    assert_usage_error(CALC, &[""]);
}

#[test]
fn calc_help_prints_the_usage() {
    for flag in ["help", "--help", "-h"] {
        let out = run(CALC, &[flag]);
        assert_eq!(out.code(), 0, "{flag}: {out:?}");
        assert!(out.stdout.contains("usage:"), "{flag}: {out:?}");
        assert!(out.stdout.contains("calc call <tool>"), "{flag}: {out:?}");
        assert!(out.stderr.is_empty(), "{flag}: {out:?}");
    }
}

#[test]
fn calc_list_and_schema() {
    let out = run(CALC, &["list"]);
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(
        out.stdout.contains("divide") && out.stdout.contains("multiply"),
        "{out:?}"
    );
    assert!(
        out.stdout.contains(&format!("2 tools on calc {VERSION}")),
        "{out:?}"
    );

    let out = run(CALC, &["schema"]);
    assert_eq!(out.code(), 0, "{out:?}");
    let names: Vec<Value> = out.json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, [json!("divide"), json!("multiply")]);
}

#[test]
fn http_on_an_address_in_use_says_which_and_exits_1() {
    // Held open for the whole test: the server cannot bind it.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = taken.local_addr().expect("its address").to_string();
    let out = run(USERS, &["--http", &addr]);
    assert_eq!(out.code(), 1, "{out:?}");
    assert!(out.stdout.is_empty(), "nothing on stdout: {out:?}");
    assert!(
        out.stderr.contains(&format!("cannot listen on {addr}")),
        "{out:?}"
    );
}

/// A token list that does not fit `subject:token` stops the server at start, naming the entry
/// (a token is never cut short silently).
#[test]
fn a_malformed_token_list_stops_the_server() {
    for (tokens, says) in [
        ("s3cret", "entry 1 has no subject"),
        ("alice:ok, bob:has space", "entry 2"),
        (
            "alice[users:read:s3cret",
            "entry 1: write scopes as `subject[scope scope]:token`",
        ),
    ] {
        let out = std::process::Command::new(CALC)
            .args(["--http", "127.0.0.1:0"])
            .env("MCP_TOOL_BEARER_TOKENS", tokens)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("calc runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{tokens}: {stderr}");
        assert!(stderr.contains(says), "{tokens}: {stderr}");
    }
}

/// An OAuth configuration that cannot work stops the server at start, saying why: an issuer
/// beside static tokens, a client id without its secret, a leeway that is no duration.
#[test]
fn a_malformed_oauth_configuration_stops_the_server() {
    for (env, says) in [
        (
            vec![
                ("MCP_TOOL_OAUTH_ISSUER", "https://auth.example.com"),
                ("MCP_TOOL_BEARER_TOKENS", "alice:s3cret"),
            ],
            "not both",
        ),
        (
            vec![
                ("MCP_TOOL_OAUTH_ISSUER", "https://auth.example.com"),
                ("MCP_TOOL_OAUTH_CLIENT_ID", "mcp-server"),
            ],
            "go together",
        ),
        (
            vec![
                ("MCP_TOOL_OAUTH_ISSUER", "https://auth.example.com"),
                ("MCP_TOOL_OAUTH_LEEWAY", "soon"),
            ],
            "is not a duration",
        ),
        (
            vec![
                ("MCP_TOOL_OAUTH_ISSUER", "https://auth.example.com"),
                ("MCP_TOOL_OAUTH_CACHE_CEILING", "forever"),
            ],
            "MCP_TOOL_OAUTH_CACHE_CEILING=`forever` is not a duration",
        ),
    ] {
        let out = std::process::Command::new(CALC)
            .args(["--http", "127.0.0.1:0"])
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("calc runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{env:?}: {stderr}");
        assert!(stderr.contains(says), "{env:?}: {stderr}");
        assert!(
            !stderr.contains("s3cret"),
            "no secret in the message: {stderr}"
        );
    }
}

/// A server binary's command line reads its environment (the library's builder does not): a
/// request-state key that is not hex or base64, or shorter than 32 bytes, stops the binary
/// with a message naming the variable; a good one is taken.
#[test]
fn the_state_key_comes_from_the_environment_and_is_checked() {
    let run_with = |key: &str| {
        std::process::Command::new(CALC)
            .arg("list")
            .env("MCP_TOOL_STATE_KEY", key)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("calc runs")
    };
    for (key, says) in [
        ("not a key!", "neither hex nor base64"),
        ("00112233", "at least 32 bytes"),
    ] {
        let out = run_with(key);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{key}: {stderr}");
        assert!(stderr.contains("MCP_TOOL_STATE_KEY"), "{key}: {stderr}");
        assert!(stderr.contains(says), "{key}: {stderr}");
    }
    let out = run_with(&"ab".repeat(32));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

/// With tokens, the endpoint announces its RFC 9728 metadata: in every challenge, and at the
/// well-known URL; a request without credentials gets no error code (RFC 6750 §3.1).
#[test]
fn bearer_tokens_come_with_protected_resource_metadata() {
    let server = common::stateless::HttpServer::start(
        CALC,
        &[],
        &[
            ("MCP_TOOL_BEARER_TOKENS", "alice:a:b:c"),
            ("MCP_TOOL_AUTHORIZATION_SERVERS", "https://auth.example.com"),
        ],
    );
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}});
    let refused = server.post(&[], &init);
    assert_eq!(refused.status, 401, "{refused:?}");
    let challenge = refused.header("www-authenticate").expect("a challenge");
    assert!(!challenge.contains("error="), "{challenge}");
    assert!(
        challenge.contains("resource_metadata=\"http://")
            && challenge.contains("/.well-known/oauth-protected-resource/mcp"),
        "{challenge}"
    );
    let wrong = server.post(&[("Authorization", "Bearer a:b")], &init);
    assert_eq!(wrong.status, 401);
    assert!(
        wrong
            .header("www-authenticate")
            .is_some_and(|c| c.contains("error=\"invalid_token\"")),
        "{wrong:?}"
    );
    // The whole token, colons included.
    let ok = server.post(&[("Authorization", "Bearer a:b:c")], &init);
    assert_eq!(ok.status, 200, "{ok:?}");
    let metadata = server.get("/.well-known/oauth-protected-resource/mcp");
    assert_eq!(metadata.status, 200, "{metadata:?}");
    let body: Value = serde_json::from_str(&metadata.body).expect("JSON metadata");
    assert!(
        body["resource"].as_str().unwrap().ends_with("/mcp"),
        "{body}"
    );
    assert_eq!(body["authorization_servers"][0], "https://auth.example.com");
}
