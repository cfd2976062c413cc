//! The example servers over real stdio: newline-delimited JSON-RPC 2.0 (MCP 2025-11-25),
//! spoken to a child process, bad input included.

mod common;

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use common::{CALC, Proc, TIMEOUT, USERS, VERSION, error_text, is_error, names_field, obj, text};
use serde_json::{Value, json};

const LATEST: &str = "2025-11-25";

fn init_params(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": { "name": "integration-tests", "version": "0.0.0" }
    })
}

/// Follows a local `$ref` (`#/$defs/…`) from the schema's root.
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let pointer = r
                .strip_prefix('#')
                .unwrap_or_else(|| panic!("non-local $ref {r}"));
            root.pointer(pointer)
                .unwrap_or_else(|| panic!("dangling $ref {r} in {root}"))
        }
        None => schema,
    }
}

/// The string values a schema allows: its `enum`, or the `const`s/`enum`s of its `oneOf`/`anyOf`.
fn allowed_strings(root: &Value, schema: &Value) -> Vec<String> {
    let s = resolve(root, schema);
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    };
    if let Some(e) = s.get("enum") {
        return strings(e);
    }
    let mut out = Vec::new();
    for alt in s
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        out.extend(allowed_strings(root, alt));
    }
    for key in ["oneOf", "anyOf"] {
        for alt in s.get(key).and_then(Value::as_array).into_iter().flatten() {
            let alt = resolve(root, alt);
            if let Some(c) = alt.get("const").and_then(Value::as_str) {
                out.push(c.to_owned());
            }
            out.extend(alt.get("enum").map(strings).unwrap_or_default());
        }
    }
    out
}

/// Whether a schema's `type` is `ty` or lists it.
fn has_type(schema: &Value, ty: &str) -> bool {
    match &schema["type"] {
        Value::String(s) => s == ty,
        Value::Array(a) => a.iter().any(|t| t == ty),
        _ => false,
    }
}

fn required(schema: &Value) -> Vec<&str> {
    schema["required"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = obj(v).keys().map(String::as_str).collect();
    k.sort_unstable();
    k
}

/// Whether a schema refuses properties it does not list.
fn is_closed(schema: &Value) -> bool {
    schema.get("additionalProperties") == Some(&Value::Bool(false))
}

fn create_user(p: &mut Proc, email: &str, name: &str) -> Value {
    let result = p.call("create_user", json!({ "email": email, "name": name }));
    assert!(!is_error(&result), "create_user failed: {result}");
    result["structuredContent"].clone()
}

// ---------------------------------------------------------------------------------------------
// initialize

#[test]
fn initialize_echoes_every_supported_version() {
    for version in ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
        let mut p = Proc::spawn(USERS);
        let result = p.result("initialize", init_params(version));
        assert_eq!(result["protocolVersion"], version, "{result}");
        assert_eq!(result["serverInfo"]["name"], "users", "{result}");
        assert_eq!(result["serverInfo"]["version"], VERSION, "{result}");
        assert!(result["capabilities"]["tools"].is_object(), "{result}");
        p.notify("notifications/initialized", Value::Null);
        assert_eq!(p.result("ping", Value::Null), json!({}));
    }
}

#[test]
fn initialize_with_an_unknown_version_gets_the_latest() {
    for version in ["1999-01-01", "", "2025-11-26", "latest"] {
        let mut p = Proc::spawn(USERS);
        let result = p.result("initialize", init_params(version));
        assert_eq!(
            result["protocolVersion"], LATEST,
            "asked for {version:?}: {result}"
        );
        assert_eq!(result["serverInfo"]["name"], "users");
    }
}

#[test]
fn initialize_result_shape() {
    let mut p = Proc::spawn(USERS);
    let result = p.result("initialize", init_params(LATEST));
    let info = obj(&result["serverInfo"]);
    assert_eq!(info["name"], "users");
    assert_eq!(info["version"], VERSION);
    assert_eq!(info.get("title"), Some(&json!("User accounts")));
    assert!(obj(&result["capabilities"]).contains_key("tools"));

    let mut calc = Proc::spawn(CALC);
    let result = calc.result("initialize", init_params(LATEST));
    assert_eq!(result["serverInfo"]["name"], "calc");
    assert_eq!(result["serverInfo"]["version"], VERSION);
    assert!(result["capabilities"]["tools"].is_object());
}

#[test]
fn initialize_with_bad_params_is_invalid_params() {
    let mut p = Proc::spawn(USERS);
    for params in [
        Value::Null,                            // no params at all
        json!({}),                              // no protocolVersion
        json!({ "protocolVersion": 20251125 }), // not a string
        json!({ "protocolVersion": null }),
    ] {
        let e = p.rpc_error("initialize", params.clone());
        assert_eq!(e["code"], -32602, "params {params}: {e}");
    }
    // Still serving; a good initialize works after the bad ones.
    let result = p.result("initialize", init_params("2025-06-18"));
    assert_eq!(result["protocolVersion"], "2025-06-18");
}

#[test]
fn server_discover_needs_its_meta_and_then_comes_before_any_handshake() {
    let mut p = Proc::spawn(USERS);
    // Without the per-request `_meta` of 2026-07-28: -32602, naming what is missing.
    for params in [Value::Null, json!({})] {
        let e = p.rpc_error("server/discover", params.clone());
        assert_eq!(e["code"], -32602, "params {params}: {e}");
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .contains("io.modelcontextprotocol/protocolVersion"),
            "{e}"
        );
    }
    let result = p.result(
        "server/discover",
        json!({ "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }}),
    );
    assert_eq!(result["supportedVersions"][0], "2026-07-28", "{result}");
    assert!(
        result["supportedVersions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v == LATEST),
        "{result}"
    );
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "users"
    );
    assert!(result["capabilities"]["tools"].is_object(), "{result}");
    // The handshake of 2025-11-25 still works on the same connection.
    let result = p.result("initialize", init_params(LATEST));
    assert_eq!(result["protocolVersion"], LATEST);
    p.notify("notifications/initialized", Value::Null);
    assert_eq!(p.tools().len(), 5);
}

// ---------------------------------------------------------------------------------------------
// Plain JSON-RPC

#[test]
fn ping_answers_an_empty_object() {
    let mut p = Proc::initialized(USERS);
    let response = p.request("ping", Value::Null);
    assert_eq!(response["result"], json!({}));
    assert_eq!(
        obj(&response).len(),
        3,
        "only jsonrpc, id and result: {response}"
    );
    let response = p.request("ping", json!({}));
    assert_eq!(response["result"], json!({}));
    // Works before `initialize` too.
    let mut fresh = Proc::spawn(CALC);
    assert_eq!(fresh.result("ping", Value::Null), json!({}));
}

#[test]
fn ids_are_echoed_exactly() {
    let mut p = Proc::initialized(USERS);
    for id in [
        json!(0),
        json!(-5),
        json!(9_007_199_254_740_993_u64),
        json!(u64::MAX),
        json!("abc"),
        json!(""),
        json!("with \"quotes\" and ✓ unicode"),
    ] {
        let response = p.request_with_id(id.clone(), "ping", Value::Null);
        assert_eq!(response["id"], id);
        assert_eq!(response["result"], json!({}));
    }
}

#[test]
fn unknown_method_is_method_not_found() {
    let mut p = Proc::initialized(USERS);
    for method in [
        "frobnicate",
        "tools/frobnicate",
        "resources/list",
        "prompts/list",
        "",
    ] {
        let e = p.rpc_error(method, Value::Null);
        assert_eq!(e["code"], -32601, "method {method:?}: {e}");
    }
    assert_eq!(p.result("ping", Value::Null), json!({}));
}

#[test]
fn notifications_get_no_response() {
    let mut p = Proc::initialized(USERS);
    p.notify("notifications/frobnicate", json!({ "x": 1 }));
    p.notify("frobnicate", Value::Null);
    p.notify("notifications/initialized", Value::Null);
    p.notify(
        "notifications/cancelled",
        json!({ "requestId": 12345, "reason": "test" }),
    );
    p.notify("notifications/cancelled", json!({}));
    p.notify("tools/list", Value::Null); // a request method sent as a notification
    p.expect_silence();
    // The next message is the answer to the next request, and nothing else.
    let response = p.request_with_id(json!("after"), "ping", Value::Null);
    assert_eq!(response["result"], json!({}));
    p.expect_silence();
}

#[test]
fn responses_from_the_client_get_no_response() {
    let mut p = Proc::initialized(USERS);
    p.send(&json!({ "jsonrpc": "2.0", "id": 99, "result": {} }));
    p.send(&json!({ "jsonrpc": "2.0", "id": "x", "error": { "code": -1, "message": "no" } }));
    p.expect_silence();
    // Both `result` and `error`: not a valid response.
    p.send(
        &json!({ "jsonrpc": "2.0", "id": 7, "result": {}, "error": { "code": 1, "message": "m" } }),
    );
    let e = p.recv();
    assert_eq!(e["error"]["code"], -32600, "{e}");
    assert_eq!(e["id"], 7);
    assert_eq!(p.result("ping", Value::Null), json!({}));
}

#[test]
fn malformed_json_is_a_parse_error_with_a_null_id_and_the_server_keeps_going() {
    let mut p = Proc::initialized(USERS);
    let lines: [&[u8]; 6] = [
        br#"{"jsonrpc": "2.0", "id": 1, "method": "#,
        b"not json at all",
        br#"{"jsonrpc":"2.0","id":2,"method":"ping",}"#,
        b"{",
        br#"{"jsonrpc":"2.0","id":3,"method":"ping"}}"#,
        b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"p\xffng\"}", // invalid UTF-8
    ];
    for line in lines {
        let mut bytes = line.to_vec();
        bytes.push(b'\n');
        p.send_bytes(&bytes);
        let response = p.recv();
        assert_eq!(
            response["error"]["code"],
            -32700,
            "line {:?}: {response}",
            String::from_utf8_lossy(line)
        );
        assert_eq!(response["id"], Value::Null, "{response}");
        assert!(response.get("result").is_none());
        // The next request is answered.
        let id = p.next_id();
        let ok = p.request_with_id(json!(id), "ping", Value::Null);
        assert_eq!(ok["result"], json!({}));
    }
}

#[test]
fn invalid_requests_are_invalid_request() {
    let mut p = Proc::initialized(USERS);
    // (line, the id the error must carry)
    let cases: &[(&str, Value)] = &[
        (r#"{"id":1,"method":"ping"}"#, json!(1)),
        (r#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#, json!(2)),
        (r#"{"jsonrpc":2.0,"id":3,"method":"ping"}"#, json!(3)),
        (r#"{"jsonrpc":null,"id":4,"method":"ping"}"#, json!(4)),
        (r#"[{"jsonrpc":"2.0","id":5,"method":"ping"}]"#, Value::Null),
        (r#"[]"#, Value::Null),
        (r#""ping""#, Value::Null),
        (r#"42"#, Value::Null),
        (r#"null"#, Value::Null),
        (r#"true"#, Value::Null),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            Value::Null,
        ),
        (r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#, Value::Null),
        (r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, Value::Null),
        (
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            Value::Null,
        ),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, Value::Null),
        (
            r#"{"jsonrpc":"2.0","id":6,"method":"ping","params":[]}"#,
            json!(6),
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":["x"]}"#,
            json!(7),
        ),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":"ping","params":"x"}"#,
            json!(8),
        ),
        (
            r#"{"jsonrpc":"2.0","id":9,"method":"ping","params":null}"#,
            json!(9),
        ),
        (r#"{"jsonrpc":"2.0","id":10,"method":5}"#, json!(10)),
        (r#"{"jsonrpc":"2.0","id":11}"#, json!(11)),
        (r#"{"jsonrpc":"2.0"}"#, Value::Null),
        (r#"{}"#, Value::Null),
    ];
    for (line, id) in cases {
        p.send_raw(line);
        let response = p.recv();
        assert_eq!(response["error"]["code"], -32600, "line {line}: {response}");
        assert_eq!(&response["id"], id, "line {line}: {response}");
        assert!(response.get("result").is_none(), "line {line}: {response}");
        p.expect_silence();
    }
    assert_eq!(p.result("ping", Value::Null), json!({}));
}

#[test]
fn an_array_is_never_taken_for_a_request() {
    // A JSON array is a batch (unsupported) however its elements look: it must not be read
    // as a request with positional fields (`jsonrpc`, `id`, `method`, …).
    let mut p = Proc::initialized(USERS);
    for line in [r#"["2.0", 1, "ping"]"#, r#"["2.0", 2, "tools/list", {}]"#] {
        p.send_raw(line);
        let response = p.recv();
        assert_eq!(response["error"]["code"], -32600, "line {line}: {response}");
        assert_eq!(response["id"], Value::Null, "line {line}: {response}");
        p.expect_silence();
    }
}

#[test]
fn a_batch_is_refused_as_a_batch() {
    // The error explains that batches are not supported (rather than blaming `jsonrpc`).
    let mut p = Proc::initialized(USERS);
    p.send_raw(
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
    );
    let response = p.recv();
    assert_eq!(response["error"]["code"], -32600, "{response}");
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(message.to_lowercase().contains("batch"), "{response}");
    p.expect_silence();
}

#[test]
fn framing_tolerates_blank_lines_crlf_and_spacing() {
    let mut p = Proc::initialized(USERS);
    p.send_bytes(b"\n\n   \n\t\n");
    p.expect_silence();
    p.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":\"crlf\",\"method\":\"ping\"}\r\n");
    assert_eq!(
        p.recv(),
        json!({ "jsonrpc": "2.0", "id": "crlf", "result": {} })
    );
    p.send_raw(r#"  { "jsonrpc" : "2.0" , "id" : "spaced" , "method" : "ping" }  "#);
    assert_eq!(
        p.recv(),
        json!({ "jsonrpc": "2.0", "id": "spaced", "result": {} })
    );
    // Two messages in one write, each on its own line.
    p.send_bytes(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n",
    );
    assert_eq!(p.recv()["id"], 1);
    assert_eq!(p.recv()["id"], 2);
    p.expect_silence();
}

#[test]
fn an_escaped_jsonrpc_version_is_still_2_0() {
    // `"2\u002e0"` is the JSON string "2.0".
    let mut p = Proc::initialized(USERS);
    p.send_raw(r#"{"jsonrpc":"2\u002e0","id":1,"method":"ping"}"#);
    let response = p.recv();
    assert_eq!(response["result"], json!({}), "{response}");
}

// ---------------------------------------------------------------------------------------------
// tools/list

#[test]
fn users_tools_list_matches_seed_001() {
    let mut p = Proc::initialized(USERS);
    let tools = p.tools();
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
    let by_name: HashMap<&str, &Value> = names.iter().copied().zip(tools.iter()).collect();

    let expect = [
        (
            "create_user",
            "Create User Account",
            [false, false, false, false],
        ),
        (
            "delete_user",
            "Delete User Account",
            [false, true, true, false],
        ),
        ("get_user", "Get User Profile", [true, false, true, false]),
        (
            "seed_users",
            "Seed Demo Users",
            [false, false, false, false],
        ),
        ("send_email", "Send Email", [false, false, false, true]),
    ];
    for (name, title, [read_only, destructive, idempotent, open_world]) in expect {
        let t = by_name[name];
        assert_eq!(t["title"], title, "{t}");
        assert!(
            t["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{name} has a description: {t}"
        );
        let a = &t["annotations"];
        assert_eq!(a["readOnlyHint"], read_only, "{name}: {a}");
        assert_eq!(a["destructiveHint"], destructive, "{name}: {a}");
        assert_eq!(a["idempotentHint"], idempotent, "{name}: {a}");
        assert_eq!(a["openWorldHint"], open_world, "{name}: {a}");
        assert_eq!(t["inputSchema"]["type"], "object", "{name}: {t}");
    }
    assert_eq!(
        by_name["create_user"]["description"],
        "Create a new user account with the provided details. Returns the created user object with generated ID."
    );
    assert_eq!(
        by_name["get_user"]["description"],
        "Retrieve user profile by ID"
    );
    assert_eq!(
        by_name["delete_user"]["description"],
        "Permanently delete a user account and all associated data"
    );
    assert_eq!(
        by_name["send_email"]["description"],
        "Send an email via external email service"
    );
}

#[test]
fn create_user_schemas() {
    let mut p = Proc::initialized(USERS);
    let tools = p.tools();
    let create = tools.iter().find(|t| t["name"] == "create_user").unwrap();
    let input = &create["inputSchema"];
    assert_eq!(input["type"], "object");
    let props = &input["properties"];
    assert_eq!(
        keys(props),
        ["email", "metadata", "name", "role"],
        "{input}"
    );
    let mut req = required(input);
    req.sort_unstable();
    assert_eq!(req, ["email", "name"], "{input}");

    let email = resolve(input, &props["email"]);
    assert!(has_type(email, "string"), "{email}");
    assert_eq!(email["format"], "email", "{email}");
    assert!(props["email"]["description"].is_string(), "{email}");

    let name = resolve(input, &props["name"]);
    assert!(has_type(name, "string"), "{name}");
    assert_eq!(name["minLength"], 2, "{name}");
    assert_eq!(name["maxLength"], 100, "{name}");

    let mut roles = allowed_strings(input, &props["role"]);
    roles.sort_unstable();
    assert_eq!(roles, ["admin", "moderator", "user"], "{}", props["role"]);
    assert_eq!(props["role"]["default"], "user", "{}", props["role"]);

    let metadata = resolve(input, &props["metadata"]);
    assert!(has_type(metadata, "object"), "{metadata}");
    assert!(
        has_type(&metadata["additionalProperties"], "string"),
        "metadata is a map of strings: {metadata}"
    );

    let output = &create["outputSchema"];
    assert_eq!(output["type"], "object", "{output}");
    assert_eq!(
        keys(&output["properties"]),
        ["createdAt", "email", "id", "name", "role"],
        "{output}"
    );
    let mut out_req = required(output);
    out_req.sort_unstable();
    assert_eq!(
        out_req,
        ["createdAt", "email", "id", "name", "role"],
        "{output}"
    );
}

#[test]
fn get_delete_and_send_email_schemas() {
    let mut p = Proc::initialized(USERS);
    let tools = p.tools();
    let find = |n: &str| tools.iter().find(|t| t["name"] == n).unwrap().clone();

    for (tool, description) in [
        ("get_user", "User ID"),
        ("delete_user", "User ID to delete"),
    ] {
        let t = find(tool);
        let input = &t["inputSchema"];
        assert_eq!(keys(&input["properties"]), ["userId"], "{tool}: {input}");
        assert_eq!(required(input), ["userId"], "{tool}: {input}");
        let user_id = &input["properties"]["userId"];
        assert!(
            has_type(resolve(input, user_id), "string"),
            "{tool}: {input}"
        );
        assert_eq!(user_id["description"], description, "{tool}: {input}");
    }
    let get = find("get_user");
    assert_eq!(
        keys(&get["outputSchema"]["properties"]),
        ["createdAt", "email", "id", "name", "role"]
    );
    assert!(find("delete_user").get("outputSchema").is_none());

    let send = find("send_email");
    let input = &send["inputSchema"];
    assert_eq!(
        keys(&input["properties"]),
        ["body", "subject", "to"],
        "{input}"
    );
    let mut req = required(input);
    req.sort_unstable();
    assert_eq!(req, ["body", "subject", "to"], "{input}");
    assert_eq!(
        resolve(input, &input["properties"]["to"])["format"],
        "email"
    );
    assert!(send.get("outputSchema").is_none());
}

#[test]
fn tools_list_params_and_cursors() {
    let mut p = Proc::initialized(USERS);
    let all = p.result("tools/list", json!({}));
    assert_eq!(all["tools"].as_array().unwrap().len(), 5);
    assert_eq!(p.result("tools/list", json!({ "cursor": null })), all);
    for cursor in [json!("abc"), json!("1"), json!("0"), json!("-1"), json!("")] {
        let e = p.rpc_error("tools/list", json!({ "cursor": cursor }));
        assert_eq!(e["code"], -32602, "cursor {cursor}: {e}");
    }
    let e = p.rpc_error("tools/list", json!({ "cursor": 5 }));
    assert_eq!(e["code"], -32602, "{e}");
    // The list is the same after all that.
    assert_eq!(p.result("tools/list", Value::Null), all);
}

#[test]
fn calc_tools_list() {
    let mut p = Proc::initialized(CALC);
    let tools = p.tools();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["divide", "multiply"]);
    for t in &tools {
        let input = &t["inputSchema"];
        assert_eq!(keys(&input["properties"]), ["a", "b"], "{t}");
        let mut req = required(input);
        req.sort_unstable();
        assert_eq!(req, ["a", "b"], "{t}");
        assert!(
            has_type(resolve(input, &input["properties"]["a"]), "number"),
            "{t}"
        );
        assert!(is_closed(input), "named arguments refuse unknown ones: {t}");
        assert_eq!(t["annotations"]["readOnlyHint"], true, "{t}");
        assert_eq!(t["annotations"]["idempotentHint"], true, "{t}");
        assert_eq!(t["annotations"]["openWorldHint"], false, "{t}");
        assert!(t.get("outputSchema").is_none(), "{t}");
    }
    assert_eq!(tools[1]["description"], "Multiply two numbers.");
    assert_eq!(
        tools[1]["inputSchema"]["properties"]["a"]["description"],
        "First factor"
    );
}

// ---------------------------------------------------------------------------------------------
// tools/call: users

#[test]
fn create_get_delete_round_trip() {
    let mut p = Proc::initialized(USERS);
    let result = p.call(
        "create_user",
        json!({ "email": "ann@example.com", "name": "Ann Lee" }),
    );
    assert!(!is_error(&result), "{result}");
    let user = &result["structuredContent"];
    assert_eq!(
        keys(user),
        ["createdAt", "email", "id", "name", "role"],
        "{user}"
    );
    assert_eq!(user["email"], "ann@example.com");
    assert_eq!(user["name"], "Ann Lee");
    assert_eq!(user["role"], "user", "the default role");
    let id = user["id"].as_str().expect("string id").to_owned();
    assert!(!id.is_empty());
    let created = user["createdAt"].as_str().expect("string createdAt");
    let b = created.as_bytes();
    assert!(
        created.len() == 20 && b[4] == b'-' && b[7] == b'-' && b[10] == b'T' && b[19] == b'Z',
        "RFC 3339 UTC timestamp: {created}"
    );
    // The text block is the same JSON.
    let blocks = result["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 1, "{result}");
    assert_eq!(blocks[0]["type"], "text");
    let from_text: Value = serde_json::from_str(blocks[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(&from_text, user);

    // get_user gives the same user back.
    let got = p.call("get_user", json!({ "userId": id }));
    assert!(!is_error(&got), "{got}");
    assert_eq!(&got["structuredContent"], user);
    let from_text: Value = serde_json::from_str(&text(&got)).unwrap();
    assert_eq!(&from_text, user);

    // A second user gets another id.
    let other = create_user(&mut p, "bob@example.com", "Bob");
    assert_ne!(other["id"], user["id"]);

    // delete_user, then get_user fails.
    let deleted = p.call("delete_user", json!({ "userId": id }));
    assert!(!is_error(&deleted), "{deleted}");
    assert!(text(&deleted).contains(&id), "{deleted}");
    let gone = p.call("get_user", json!({ "userId": id }));
    let t = error_text(&gone);
    assert!(t.contains("NOT_FOUND"), "{t}");
    // Deleting again is not an error (idempotent).
    let again = p.call("delete_user", json!({ "userId": id }));
    assert!(!is_error(&again), "{again}");
    // The other user is untouched.
    let still = p.call("get_user", json!({ "userId": other["id"] }));
    assert_eq!(still["structuredContent"], other);
}

#[test]
fn create_user_with_role_and_metadata() {
    let mut p = Proc::initialized(USERS);
    for role in ["user", "admin", "moderator"] {
        let result = p.call(
            "create_user",
            json!({ "email": "r@example.com", "name": "Role Test", "role": role,
                    "metadata": { "team": "core", "level": "3" } }),
        );
        assert!(!is_error(&result), "{result}");
        assert_eq!(result["structuredContent"]["role"], role);
    }
    let result = p.call(
        "create_user",
        json!({ "email": "n@example.com", "name": "Null Meta", "metadata": null }),
    );
    assert!(
        !is_error(&result),
        "metadata is optional (nullable): {result}"
    );
}

#[test]
fn get_user_with_an_unknown_id_is_a_tool_error() {
    let mut p = Proc::initialized(USERS);
    let result = p.call("get_user", json!({ "userId": "usr_nope" }));
    let t = error_text(&result);
    assert!(t.contains("NOT_FOUND"), "{t}");
    assert!(t.contains("usr_nope"), "{t}");
    assert!(result.get("structuredContent").is_none(), "{result}");
    let meta = obj(&result["_meta"]);
    assert!(
        meta.values()
            .any(|m| m["code"] == "NOT_FOUND" && m["suggestion"].is_string()),
        "{result}"
    );
}

#[test]
fn send_email() {
    let mut p = Proc::initialized(USERS);
    let result = p.call(
        "send_email",
        json!({ "to": "ann@example.com", "subject": "Hi", "body": "Hello there" }),
    );
    assert!(!is_error(&result), "{result}");
    let t = text(&result);
    assert!(t.contains("ann@example.com"), "{t}");
    assert!(result.get("structuredContent").is_none(), "{result}");

    let bad = p.call(
        "send_email",
        json!({ "to": "not-an-address", "subject": "Hi", "body": "x" }),
    );
    let t = error_text(&bad);
    assert!(names_field(&t, "to"), "{t}");
    assert!(t.contains("\"not-an-address\" is not a valid email"), "{t}");

    let missing = p.call("send_email", json!({ "to": "a@b.co" }));
    let t = error_text(&missing);
    assert!(names_field(&t, "subject") && names_field(&t, "body"), "{t}");
}

#[test]
fn a_long_line_is_one_message() {
    let mut p = Proc::initialized(USERS);
    let body = "x".repeat(1 << 20);
    let result = p.call(
        "send_email",
        json!({ "to": "a@b.co", "subject": "big", "body": body }),
    );
    assert!(!is_error(&result), "{result}");
    assert_eq!(p.result("ping", Value::Null), json!({}));
}

// ---------------------------------------------------------------------------------------------
// Argument validation

#[test]
fn create_user_validation_errors_name_the_field() {
    let mut p = Proc::initialized(USERS);

    let t = error_text(&p.call("create_user", json!({ "email": "x", "name": "Ann" })));
    assert!(names_field(&t, "email"), "{t}");
    assert!(t.contains("\"x\" is not a valid email"), "{t}");

    let t = error_text(&p.call("create_user", json!({ "email": "a@b.co", "name": "A" })));
    assert!(names_field(&t, "name"), "{t}");
    assert!(t.contains("shorter than 2"), "{t}");

    let long = "N".repeat(101);
    let t = error_text(&p.call("create_user", json!({ "email": "a@b.co", "name": long })));
    assert!(names_field(&t, "name"), "{t}");
    assert!(t.contains("longer than 100"), "{t}");

    let t = error_text(&p.call(
        "create_user",
        json!({ "email": "a@b.co", "name": "Ann", "role": "king" }),
    ));
    assert!(names_field(&t, "role"), "{t}");
    assert!(t.contains("king"), "{t}");

    let t = error_text(&p.call("create_user", json!({ "email": "a@b.co" })));
    assert!(names_field(&t, "name"), "{t}");
    assert!(t.contains("required"), "{t}");

    let t = error_text(&p.call("create_user", json!({ "email": 5, "name": "Ann" })));
    assert!(names_field(&t, "email"), "{t}");
    assert!(t.contains("string"), "{t}");

    let t = error_text(&p.call(
        "create_user",
        json!({ "email": "a@b.co", "name": "Ann", "metadata": { "k": 1 } }),
    ));
    assert!(t.contains("metadata"), "{t}");

    // Several problems are all reported.
    let t = error_text(&p.call("create_user", json!({ "email": "x", "name": "A" })));
    assert!(names_field(&t, "email") && names_field(&t, "name"), "{t}");

    // Nothing was created by any of the failed calls.
    let user = create_user(&mut p, "ok@example.com", "Okay");
    assert_eq!(
        user["id"], "usr_000001",
        "ids start at 1 and only successes take one"
    );
}

#[test]
fn unknown_arguments_follow_the_advertised_schema() {
    let mut p = Proc::initialized(USERS);
    let tools = p.tools();
    let schema_of = |n: &str| tools.iter().find(|t| t["name"] == n).unwrap()["inputSchema"].clone();

    // create_user takes `Args<CreateUser>`: closed only if the schema says so.
    let create_closed = is_closed(&schema_of("create_user"));
    let result = p.call(
        "create_user",
        json!({ "email": "a@b.co", "name": "Ann", "nickname": "annie" }),
    );
    if create_closed {
        let t = error_text(&result);
        assert!(names_field(&t, "nickname"), "{t}");
    } else {
        assert!(
            !is_error(&result),
            "the schema allows extra properties: {result}"
        );
        assert!(result["structuredContent"].get("nickname").is_none());
    }

    // get_user's named arguments: the schema must be closed and the call refused.
    assert!(
        is_closed(&schema_of("get_user")),
        "{}",
        schema_of("get_user")
    );
    let t = error_text(&p.call("get_user", json!({ "userId": "u", "verbose": true })));
    assert!(names_field(&t, "verbose"), "{t}");
}

#[test]
fn omitted_or_null_arguments_are_an_empty_object() {
    let mut p = Proc::initialized(USERS);
    let omitted = p.result("tools/call", json!({ "name": "create_user" }));
    let t = error_text(&omitted);
    assert!(names_field(&t, "email") && names_field(&t, "name"), "{t}");
    assert!(t.contains("required"), "{t}");

    let null = p.result(
        "tools/call",
        json!({ "name": "get_user", "arguments": null }),
    );
    let t = error_text(&null);
    assert!(names_field(&t, "userId"), "{t}");
}

#[test]
fn arguments_that_are_not_an_object_are_invalid_params() {
    let mut p = Proc::initialized(USERS);
    for arguments in [
        json!(5),
        json!("x"),
        json!([]),
        json!(["a@b.co", "Ann"]),
        json!(true),
    ] {
        let e = p.rpc_error(
            "tools/call",
            json!({ "name": "create_user", "arguments": arguments }),
        );
        assert_eq!(e["code"], -32602, "arguments {arguments}: {e}");
    }
    assert_eq!(p.result("ping", Value::Null), json!({}));
}

#[test]
fn unknown_tool_and_bad_call_params_are_invalid_params() {
    let mut p = Proc::initialized(USERS);
    let e = p.rpc_error("tools/call", json!({ "name": "nope", "arguments": {} }));
    assert_eq!(e["code"], -32602, "{e}");
    assert!(e["message"].as_str().unwrap().contains("nope"), "{e}");
    for params in [
        Value::Null,
        json!({}),
        json!({ "arguments": {} }),
        json!({ "name": 5 }),
        json!({ "name": null }),
        json!({ "name": "" }),
        json!({ "name": "create_user", "_meta": 5 }),
    ] {
        let e = p.rpc_error("tools/call", params.clone());
        assert_eq!(e["code"], -32602, "params {params}: {e}");
    }
    // `_meta` as an object is fine.
    let result = p.result(
        "tools/call",
        json!({ "name": "get_user", "arguments": { "userId": "x" }, "_meta": { "progressToken": 1 } }),
    );
    assert!(is_error(&result), "{result}");
}

// ---------------------------------------------------------------------------------------------
// tools/call: calc

#[test]
fn calc_multiply_and_divide() {
    let mut p = Proc::initialized(CALC);
    let r = p.call("multiply", json!({ "a": 6, "b": 7 }));
    assert!(!is_error(&r), "{r}");
    assert_eq!(text(&r), "42");
    let r = p.call("multiply", json!({ "a": 1.5, "b": -2 }));
    assert_eq!(text(&r), "-3");
    let r = p.call("divide", json!({ "a": 1, "b": 4 }));
    assert!(!is_error(&r), "{r}");
    assert_eq!(text(&r), "0.25");
}

#[test]
fn calc_divide_by_zero_is_a_tool_error_with_its_fields_in_meta() {
    let mut p = Proc::initialized(CALC);
    let r = p.call("divide", json!({ "a": 1, "b": 0 }));
    let t = error_text(&r);
    assert!(t.contains("DIVISION_BY_ZERO"), "{t}");
    assert!(t.contains("cannot divide by zero"), "{t}");
    assert!(
        t.contains("call `divide` again with a non-zero divisor `b`"),
        "{t}"
    );
    let meta = obj(&r["_meta"]);
    let detail = meta
        .values()
        .find(|m| m["code"] == "DIVISION_BY_ZERO")
        .unwrap_or_else(|| panic!("the error's fields travel in `_meta`: {r}"));
    assert_eq!(detail["message"], "cannot divide by zero");
    assert_eq!(
        detail["suggestion"],
        "call `divide` again with a non-zero divisor `b`"
    );
    assert_eq!(detail["retryable"], false);
    // -0.0 is zero too.
    let r = p.call("divide", json!({ "a": 1, "b": -0.0 }));
    assert!(is_error(&r), "{r}");
}

#[test]
fn calc_bad_arguments_name_the_field() {
    let mut p = Proc::initialized(CALC);
    let t = error_text(&p.call("divide", json!({ "a": "x", "b": 1 })));
    assert!(names_field(&t, "a"), "{t}");
    assert!(t.contains("number"), "{t}");

    let t = error_text(&p.call("multiply", json!({ "a": 2 })));
    assert!(names_field(&t, "b"), "{t}");
    assert!(t.contains("required"), "{t}");

    let t = error_text(&p.call("multiply", json!({ "a": 2, "b": 3, "c": 4 })));
    assert!(names_field(&t, "c"), "{t}");

    let t = error_text(&p.call("multiply", json!({ "a": null, "b": 3 })));
    assert!(names_field(&t, "a"), "{t}");

    let e = p.rpc_error(
        "tools/call",
        json!({ "name": "add", "arguments": { "a": 1, "b": 2 } }),
    );
    assert_eq!(e["code"], -32602, "{e}");
}

// ---------------------------------------------------------------------------------------------
// Concurrency and shutdown

#[test]
fn many_calls_in_flight_are_each_answered_once() {
    const N: usize = 200;
    let mut p = Proc::initialized(USERS);
    let mut expected = HashMap::new();
    for i in 0..N {
        let id = if i % 2 == 0 {
            json!(i)
        } else {
            json!(format!("req-{i}"))
        };
        let email = format!("u{i}@example.com");
        p.send(&json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "tools/call",
            "params": { "name": "create_user", "arguments": { "email": email, "name": format!("User {i}") } }
        }));
        expected.insert(id.to_string(), email);
    }
    let deadline = Instant::now() + TIMEOUT;
    let mut seen = HashSet::new();
    let mut user_ids = HashSet::new();
    while seen.len() < N {
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(response) = p.recv_timeout(left) else {
            panic!(
                "only {} of {N} responses within {TIMEOUT:?}; stderr:\n{}",
                seen.len(),
                p.stderr()
            );
        };
        let key = response["id"].to_string();
        let email = expected
            .get(&key)
            .unwrap_or_else(|| panic!("a response to no request: {response}"));
        assert!(seen.insert(key.clone()), "answered twice: {response}");
        let result = &response["result"];
        assert!(!is_error(result), "{response}");
        assert_eq!(&result["structuredContent"]["email"], email, "{response}");
        assert!(user_ids.insert(result["structuredContent"]["id"].to_string()));
    }
    assert_eq!(user_ids.len(), N, "every user got its own id");
    p.expect_silence();
    assert_eq!(p.tools().len(), 5);
}

#[test]
fn closing_stdin_answers_what_is_in_flight_then_exits_0() {
    let mut p = Proc::initialized(USERS);
    let n = 50;
    for i in 0..n {
        p.send(&json!({
            "jsonrpc": "2.0",
            "id": i,
            "method": "tools/call",
            "params": { "name": "send_email",
                        "arguments": { "to": "a@b.co", "subject": format!("s{i}"), "body": "b" } }
        }));
    }
    p.send(&json!({ "jsonrpc": "2.0", "id": "last", "method": "ping" }));
    p.close_stdin();
    let mut ids = HashSet::new();
    for _ in 0..=n {
        let response = p.recv();
        assert!(response.get("result").is_some(), "{response}");
        assert!(
            ids.insert(response["id"].to_string()),
            "answered twice: {response}"
        );
    }
    assert!(ids.contains("\"last\""));
    assert!(
        p.wait_stdout_closed(Duration::from_secs(5)),
        "stdout ends after the input ends"
    );
    let status = p
        .wait_exit(Duration::from_secs(5))
        .unwrap_or_else(|| panic!("still running after stdin closed; stderr:\n{}", p.stderr()));
    assert!(
        status.success(),
        "exit status {status}; stderr:\n{}",
        p.stderr()
    );
}

#[test]
fn closing_stdin_at_once_exits_0() {
    for bin in [USERS, CALC] {
        let mut p = Proc::spawn(bin);
        p.close_stdin();
        assert!(p.wait_stdout_closed(Duration::from_secs(5)));
        let status = p
            .wait_exit(Duration::from_secs(5))
            .unwrap_or_else(|| panic!("{bin} still running after stdin closed"));
        assert!(status.success(), "{bin}: {status}; stderr:\n{}", p.stderr());
    }
}

#[test]
fn closing_stdin_after_a_partial_line_exits_0() {
    let mut p = Proc::initialized(USERS);
    p.send_bytes(br#"{"jsonrpc":"2.0","id":1,"method":"pi"#);
    p.close_stdin();
    // The unterminated last line is either answered as a parse error or dropped; either way
    // the server exits cleanly.
    if let Some(response) = p.recv_timeout(Duration::from_secs(2)) {
        assert_eq!(response["error"]["code"], -32700, "{response}");
    }
    assert!(p.wait_stdout_closed(Duration::from_secs(5)));
    let status = p.wait_exit(Duration::from_secs(5)).expect("exits");
    assert!(status.success(), "{status}; stderr:\n{}", p.stderr());
}

/// SIGTERM stops the reading, not the calls: the call in flight answers, then the server exits
/// cleanly (as over HTTP).
#[cfg(unix)]
#[test]
fn sigterm_lets_the_call_in_flight_answer() {
    let mut p = Proc::initialized(USERS);
    let id = json!(4242);
    p.send_request(
        &id,
        "tools/call",
        json!({ "name": "seed_users", "arguments": { "count": 10 }, "_meta": { "progressToken": 1 } }),
    );
    // The call is running once it reports progress; the signal comes then.
    loop {
        let message = p.recv();
        if message["method"] == "notifications/progress" {
            break;
        }
    }
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &p.pid().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let (_, response) = p.until_response(&id);
    assert_eq!(
        response["result"]["content"][0]["text"], "created 10 demo users",
        "{response}"
    );
    let status = p
        .wait_exit(Duration::from_secs(10))
        .expect("the server exits");
    assert!(status.success(), "{status:?}");
}
