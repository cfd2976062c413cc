//! The `calc`, `users`, `media` and `moon` examples in both protocol versions over real stdio:
//! each scenario runs once with the 2025-11-25 handshake (`…_2025`) and once stateless, with
//! the per-request `_meta` of 2026-07-28 (`…_2026`), from the same tool definitions. The
//! tools each version lists are compared too: the same tools, the same schemas.

mod common;

use base64::Engine as _;
use common::stateless::{
    V2026_07_28, Version, VersionClient, assert_cache_hints, error_2026, exchange_2026,
    params_2026, same_tools_in_both_versions,
};
use common::{CALC, USERS, error_text, is_error, names_field, obj, text};
use serde_json::{Value, json};

/// The `media` example server.
const MEDIA: &str = env!("CARGO_BIN_EXE_media");

/// The `moon` example server.
const MOON: &str = env!("CARGO_BIN_EXE_moon");

/// The view `show_moon` links to, as the crate embeds it.
const MOON_HTML: &str = include_str!("../ui/moon.html");

/// The URI of that view.
const MOON_VIEW: &str = "ui://moon/moon";

fn names(tools: &[Value]) -> Vec<&str> {
    tools
        .iter()
        .map(|t| t["name"].as_str().expect("a tool has a name"))
        .collect()
}

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool `{name}` in {tools:?}"))
}

/// Standard base64 decoded (it must be).
fn decode(data: &Value) -> Vec<u8> {
    let text = data
        .as_str()
        .unwrap_or_else(|| panic!("base64 data is a string: {data}"));
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap_or_else(|e| panic!("not standard base64 ({e}): {text}"))
}

/// The blocks of a successful tool result.
fn blocks(result: &Value) -> &Vec<Value> {
    assert!(!is_error(result), "expected success: {result}");
    result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("`content` is an array: {result}"))
}

/// Asserts that a result's structured content is an object and its one text block is the
/// same JSON; returns the structured content.
fn structured(result: &Value) -> &Value {
    let content = blocks(result);
    let data = &result["structuredContent"];
    assert!(data.is_object(), "structured content: {result}");
    assert_eq!(content.len(), 1, "one text copy: {result}");
    let copy: Value = serde_json::from_str(&text(result)).expect("the text copy is JSON");
    assert_eq!(&copy, data, "the text block says the same: {result}");
    data
}

/// The contents of a `resources/read` of `uri`, with the version's shape checked (cache hints
/// in 2026-07-28).
fn read(c: &mut VersionClient, uri: &str) -> Vec<Value> {
    let read = c.result("resources/read", json!({ "uri": uri }));
    if c.version == Version::V2026_07_28 {
        assert_cache_hints(&read);
    }
    let contents = read["contents"].as_array().expect("contents").clone();
    assert_eq!(contents.len(), 1, "{read}");
    assert_eq!(contents[0]["uri"], uri, "{read}");
    contents
}

/// The listed resources, with the version's shape checked.
fn resources(c: &mut VersionClient) -> Vec<Value> {
    let list = c.result("resources/list", json!({}));
    if c.version == Version::V2026_07_28 {
        assert_cache_hints(&list);
    }
    list["resources"].as_array().expect("resources").clone()
}

// ---------------------------------------------------------------------------------------------
// calc: arithmetic, and a division by zero as a tool error

#[test]
fn calc_lists_the_same_tools_in_both_versions() {
    let tools = same_tools_in_both_versions(CALC, &[]);
    assert_eq!(names(&tools), ["divide", "multiply"]);
    for t in &tools {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert_eq!(t["inputSchema"]["required"], json!(["a", "b"]), "{t}");
        assert_eq!(t["annotations"]["readOnlyHint"], true, "{t}");
    }
}

fn calc_arithmetic_and_its_errors(version: Version) {
    let mut c = VersionClient::start(CALC, &[], version, json!({}));
    let r = c.call("multiply", json!({ "a": 6, "b": 7 }));
    assert!(!is_error(&r), "{r}");
    assert_eq!(text(&r), "42");
    let r = c.call("divide", json!({ "a": 1, "b": 4 }));
    assert_eq!(text(&r), "0.25", "{r}");

    // Dividing by zero is the tool's error, with its code and suggestion in the text and in
    // `_meta` (beside the server's identity in 2026-07-28).
    let r = c.call("divide", json!({ "a": 1, "b": 0 }));
    let t = error_text(&r);
    assert!(t.contains("DIVISION_BY_ZERO"), "{t}");
    assert!(t.contains("non-zero divisor"), "{t}");
    let detail = obj(&r["_meta"])
        .values()
        .find(|m| m["code"] == "DIVISION_BY_ZERO")
        .unwrap_or_else(|| panic!("the error's fields travel in `_meta`: {r}"));
    assert_eq!(detail["message"], "cannot divide by zero");
    assert_eq!(detail["retryable"], false);

    // Bad arguments are tool errors naming the field; an unknown tool is a protocol error.
    let t = error_text(&c.call("divide", json!({ "a": "x", "b": 1 })));
    assert!(names_field(&t, "a"), "{t}");
    let e = c.error(
        "tools/call",
        json!({ "name": "modulo", "arguments": { "a": 1, "b": 2 } }),
    );
    assert_eq!(e["code"], -32602, "{e}");
}

#[test]
fn calc_arithmetic_and_its_errors_2025() {
    calc_arithmetic_and_its_errors(Version::V2025_11_25);
}

#[test]
fn calc_arithmetic_and_its_errors_2026() {
    calc_arithmetic_and_its_errors(Version::V2026_07_28);
}

#[test]
fn calc_without_the_meta_of_2026_is_refused_and_removed_methods_are_gone_2026() {
    let mut c = VersionClient::start(CALC, &[], Version::V2026_07_28, json!({}));
    // `_meta` without the protocol version: -32602 naming it.
    let e = c.p.rpc_error(
        "server/discover",
        json!({ "_meta": { "io.modelcontextprotocol/clientCapabilities": {} } }),
    );
    assert_eq!(e["code"], -32602, "{e}");
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("io.modelcontextprotocol/protocolVersion")),
        "{e}"
    );
    // What 2026-07-28 removed does not exist for its requests.
    for method in ["initialize", "ping", "logging/setLevel"] {
        let e = error_2026(&mut c.p, method, json!({}));
        assert_eq!(e["code"], -32601, "{method}: {e}");
    }
    // `server/discover` describes the server, both versions among the versions.
    let d = c.result("server/discover", json!({}));
    assert_cache_hints(&d);
    let versions = d["supportedVersions"].as_array().expect("versions");
    assert!(versions.contains(&json!(V2026_07_28)), "{d}");
    assert!(versions.contains(&json!("2025-11-25")), "{d}");
    assert!(d["capabilities"]["tools"].is_object(), "{d}");
    assert_eq!(
        d["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "calc"
    );
}

// ---------------------------------------------------------------------------------------------
// users: structured output, validation, progress

#[test]
fn users_lists_the_same_tools_in_both_versions() {
    let tools = same_tools_in_both_versions(USERS, &[]);
    assert_eq!(
        names(&tools),
        [
            "create_user",
            "delete_user",
            "get_user",
            "seed_users",
            "send_email"
        ],
        "sorted by name"
    );
    let create = tool(&tools, "create_user");
    assert_eq!(create["title"], "Create User Account");
    assert_eq!(create["outputSchema"]["type"], "object", "{create}");
    assert_eq!(
        create["inputSchema"]["properties"]["email"]["format"], "email",
        "{create}"
    );
}

fn users_structured_output_and_validation(version: Version) {
    let mut c = VersionClient::start(USERS, &[], version, json!({}));
    let r = c.call(
        "create_user",
        json!({ "email": "ann@example.com", "name": "Ann Lee", "role": "admin" }),
    );
    let user = structured(&r).clone();
    assert_eq!(user["id"], "usr_000001", "{r}");
    assert_eq!(user["email"], "ann@example.com");
    assert_eq!(user["role"], "admin");
    let got = c.call("get_user", json!({ "userId": "usr_000001" }));
    assert_eq!(structured(&got), &user);

    // Invalid input: every problem named, nothing created.
    let t = error_text(&c.call("create_user", json!({ "email": "x", "name": "A" })));
    assert!(names_field(&t, "email") && names_field(&t, "name"), "{t}");
    assert!(t.contains("\"x\" is not a valid email"), "{t}");
    let t = error_text(&c.call("get_user", json!({ "userId": "usr_000002" })));
    assert!(t.contains("NOT_FOUND"), "{t}");
    let t = error_text(&c.call("get_user", json!({})));
    assert!(names_field(&t, "userId"), "{t}");
}

#[test]
fn users_structured_output_and_validation_2025() {
    users_structured_output_and_validation(Version::V2025_11_25);
}

#[test]
fn users_structured_output_and_validation_2026() {
    users_structured_output_and_validation(Version::V2026_07_28);
}

fn users_seed_reports_progress(version: Version) {
    let mut c = VersionClient::start(USERS, &[], version, json!({}));
    let (before, response) = c.exchange(
        "tools/call",
        json!({
            "name": "seed_users",
            "arguments": { "count": 3 },
            "_meta": { "progressToken": "seed-1" }
        }),
    );
    assert_eq!(
        before.len(),
        3,
        "one progress notification per user: {before:?}"
    );
    for (i, n) in before.iter().enumerate() {
        let step = i as u64 + 1;
        assert_eq!(n["method"], "notifications/progress", "{n}");
        assert!(n.get("id").is_none(), "{n}");
        let params = &n["params"];
        assert_eq!(params["progressToken"], "seed-1", "{n}");
        assert_eq!(params["progress"].as_u64(), Some(step), "{n}");
        assert_eq!(params["total"].as_u64(), Some(3), "{n}");
        assert_eq!(params["message"], format!("created usr_{step:06x}"), "{n}");
    }
    let result = &response["result"];
    assert!(!is_error(result), "{response}");
    assert_eq!(text(result), "created 3 demo users");
    if version == Version::V2026_07_28 {
        assert_eq!(result["resultType"], "complete", "{result}");
    }
    // The users exist; without a token there is no progress; out of range is a tool error.
    let got = c.call("get_user", json!({ "userId": "usr_000003" }));
    assert_eq!(structured(&got)["email"], "demo3@example.com");
    let (before, response) = c.exchange(
        "tools/call",
        json!({ "name": "seed_users", "arguments": { "count": 1 } }),
    );
    assert!(before.is_empty(), "no token, no progress: {before:?}");
    assert!(!is_error(&response["result"]), "{response}");
    let t = error_text(&c.call("seed_users", json!({ "count": 21 })));
    assert!(t.contains("OUT_OF_RANGE"), "{t}");
}

#[test]
fn users_seed_reports_progress_2025() {
    users_seed_reports_progress(Version::V2025_11_25);
}

#[test]
fn users_seed_reports_progress_2026() {
    users_seed_reports_progress(Version::V2026_07_28);
}

// ---------------------------------------------------------------------------------------------
// media: image, audio, resource links, embedded resources, structured content, dynamic tools

#[test]
fn media_lists_the_same_tools_in_both_versions() {
    let tools = same_tools_in_both_versions(MEDIA, &[]);
    for name in [
        "swatch",
        "tone",
        "latest_report",
        "embedded_files",
        "palette",
        "mix_colors",
        "checksum",
    ] {
        tool(&tools, name);
    }
    let checksum = tool(&tools, "checksum");
    assert_eq!(checksum["inputSchema"]["required"], json!(["text"]));
    assert_eq!(checksum["outputSchema"]["type"], "object", "{checksum}");
}

fn media_blocks(version: Version) {
    let mut c = VersionClient::start(MEDIA, &[], version, json!({}));

    // An image: a PNG of the size asked for.
    let r = c.call("swatch", json!({ "color": "#3366cc", "size": 4 }));
    let content = blocks(&r);
    assert_eq!(content.len(), 1, "{r}");
    assert_eq!(content[0]["type"], "image", "{r}");
    assert_eq!(content[0]["mimeType"], "image/png", "{r}");
    let png = decode(&content[0]["data"]);
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "the PNG signature");
    assert_eq!(&png[12..16], b"IHDR");
    assert_eq!(png[16..24], [0, 0, 0, 4, 0, 0, 0, 4], "4 × 4 pixels");

    // Audio: a WAV file.
    let r = c.call("tone", json!({ "frequency": 440, "durationMs": 10 }));
    let content = blocks(&r);
    assert_eq!(content[0]["type"], "audio", "{r}");
    assert_eq!(content[0]["mimeType"], "audio/wav", "{r}");
    let wav = decode(&content[0]["data"]);
    assert_eq!((&wav[..4], &wav[8..12]), (&b"RIFF"[..], &b"WAVE"[..]));

    // Embedded resources: a text and a blob.
    let r = c.call("embedded_files", json!({}));
    let content = blocks(&r);
    assert_eq!(content.len(), 2, "{r}");
    assert_eq!(content[0]["type"], "resource");
    assert_eq!(
        content[0]["resource"]["text"],
        "Hello from an embedded resource."
    );
    assert_eq!(content[1]["resource"]["mimeType"], "image/png");
    assert_eq!(&decode(&content[1]["resource"]["blob"])[1..4], b"PNG");

    // A link to a resource the server offers, listed and readable.
    let r = c.call("latest_report", json!({}));
    let link = &blocks(&r)[0];
    assert_eq!(link["type"], "resource_link", "{r}");
    let uri = link["uri"].as_str().expect("a uri").to_owned();
    assert!(
        resources(&mut c)
            .iter()
            .any(|res| res["uri"] == uri.as_str()),
        "the linked resource is listed"
    );
    let contents = read(&mut c, &uri);
    let body = contents[0]["text"].as_str().expect("text");
    assert!(body.starts_with("# Media report"), "{body}");
    assert_eq!(Some(body.len() as u64), link["size"].as_u64());

    // Structured content alone, with the framework's text copy; a dynamic tool with an
    // output schema.
    let r = c.call("palette", json!({ "color": "#3366cc" }));
    let colours = structured(&r);
    assert_eq!(colours["base"], "#3366cc");
    assert_eq!(colours["complement"], "#cc9933");
    let r = c.call("checksum", json!({ "text": "abc" }));
    assert_eq!(
        structured(&r),
        &json!({ "algorithm": "crc32", "value": 0x3524_41c2_u32, "hex": "352441c2" })
    );
    let r = c.call("mix_colors", json!({ "colors": ["#000000", "#ffffff"] }));
    assert_eq!(text(&r), "#808080", "{r}");
    let t = error_text(&c.call("swatch", json!({ "color": "blue" })));
    assert!(names_field(&t, "color"), "{t}");
}

#[test]
fn media_blocks_2025() {
    media_blocks(Version::V2025_11_25);
}

#[test]
fn media_blocks_2026() {
    media_blocks(Version::V2026_07_28);
}

// ---------------------------------------------------------------------------------------------
// moon: structured content drawn by an MCP Apps view, served as a resource

#[test]
fn moon_lists_the_same_tools_in_both_versions() {
    let tools = same_tools_in_both_versions(MOON, &[]);
    assert_eq!(names(&tools), ["moon_facts", "show_moon"]);
    let show = tool(&tools, "show_moon");
    assert_eq!(show["_meta"]["ui"]["resourceUri"], MOON_VIEW, "{show}");
    assert_eq!(show["outputSchema"]["type"], "object", "{show}");
}

fn moon_phase_and_its_view(version: Version) {
    let mut c = VersionClient::start(MOON, &[], version, json!({}));
    let r = c.call("show_moon", json!({ "date": "2024-04-08" }));
    let moon = structured(&r);
    assert_eq!(moon["date"], "2024-04-08");
    assert_eq!(moon["phase"], "New Moon");
    assert_eq!(moon["emoji"], "🌑");
    let t = error_text(&c.call("show_moon", json!({ "date": "2024-13-01" })));
    assert!(
        t.contains("INVALID_DATE") && t.contains("YYYY-MM-DD"),
        "{t}"
    );
    let r = c.call("moon_facts", json!({ "topic": "distance" }));
    assert!(text(&r).contains("384,400 km"), "{r}");
    assert!(r.get("structuredContent").is_none(), "{r}");

    // The view the tool links to: listed, and read as the crate embeds it.
    let listed = resources(&mut c);
    let view = listed
        .iter()
        .find(|res| res["uri"] == MOON_VIEW)
        .unwrap_or_else(|| panic!("the view is listed: {listed:?}"));
    assert_eq!(view["mimeType"], "text/html;profile=mcp-app");
    let contents = read(&mut c, MOON_VIEW);
    assert_eq!(contents[0]["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(contents[0]["text"], MOON_HTML);
    // Its `_meta.ui` (`Server::ui_meta`), on the listing and on the contents alike.
    let ui =
        json!({ "csp": { "connectDomains": [], "resourceDomains": [] }, "prefersBorder": true });
    assert_eq!(view["_meta"]["ui"], ui, "{view}");
    assert_eq!(contents[0]["_meta"]["ui"], ui, "{contents:?}");

    // An unknown resource: -32602 with its URI in 2026-07-28 (which retired -32002),
    // -32002 before.
    let e = c.error("resources/read", json!({ "uri": "ui://moon/sun" }));
    let code = match version {
        Version::V2025_11_25 => -32002,
        Version::V2026_07_28 => -32602,
    };
    assert_eq!(e["code"], code, "{e}");
    assert_eq!(e["data"]["uri"], "ui://moon/sun", "{e}");
}

#[test]
fn moon_phase_and_its_view_2025() {
    moon_phase_and_its_view(Version::V2025_11_25);
}

#[test]
fn moon_phase_and_its_view_2026() {
    moon_phase_and_its_view(Version::V2026_07_28);
}

/// The capabilities of a host that renders MCP Apps views, as the extension has it declare
/// them: `extensions["io.modelcontextprotocol/ui"]` with the MIME types it renders.
fn apps_host() -> Value {
    json!({
        "extensions": {
            "io.modelcontextprotocol/ui": { "mimeTypes": ["text/html;profile=mcp-app"] }
        }
    })
}

#[test]
fn moon_declares_the_apps_extension_in_both_versions() {
    // 2025-11-25: in the `initialize` result.
    let mut p = common::Proc::spawn(MOON);
    let init = p.result(
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": apps_host(),
            "clientInfo": { "name": "integration-tests", "version": "0.0.0" }
        }),
    );
    assert_eq!(
        init["capabilities"]["extensions"],
        json!({ "io.modelcontextprotocol/ui": {} }),
        "{init}"
    );
    // 2026-07-28: in `server/discover`.
    let mut c = VersionClient::start(MOON, &[], Version::V2026_07_28, apps_host());
    let found = c.result("server/discover", json!({}));
    assert_eq!(
        found["capabilities"]["extensions"]["io.modelcontextprotocol/ui"],
        json!({}),
        "{found}"
    );
    // A server without a view does not declare it.
    let mut c = VersionClient::start(CALC, &[], Version::V2026_07_28, apps_host());
    let found = c.result("server/discover", json!({}));
    assert!(found["capabilities"].get("extensions").is_none(), "{found}");
}

/// `moon_refresh` is app-only: listed, with its `_meta.ui.visibility`, to a client that
/// declared MCP Apps (its host keeps it from the model and lets the view call it), left out
/// for a client that did not (it would offer the tool to its model); callable by name either
/// way (visibility is not access control).
fn moon_app_only_tool(version: Version) {
    let mut plain = VersionClient::start(MOON, &[], version, json!({}));
    assert_eq!(names(&plain.tools()), ["moon_facts", "show_moon"]);

    let mut host = VersionClient::start(MOON, &[], version, apps_host());
    let tools = host.tools();
    assert_eq!(names(&tools), ["moon_facts", "moon_refresh", "show_moon"]);
    let refresh = tool(&tools, "moon_refresh");
    assert_eq!(
        refresh["_meta"]["ui"],
        json!({ "resourceUri": MOON_VIEW, "visibility": ["app"] }),
        "{refresh}"
    );
    assert_eq!(
        refresh["_meta"]["openai/visibility"], "private",
        "{refresh}"
    );
    // The tools for the model are the same for both clients.
    let show = tool(&tools, "show_moon");
    assert_eq!(
        show["_meta"]["ui"],
        json!({ "resourceUri": MOON_VIEW }),
        "{show}"
    );

    // The host relays the view's call.
    let r = host.call("moon_refresh", json!({ "date": "2024-04-23" }));
    assert_eq!(structured(&r)["phase"], "Full Moon", "{r}");
    let t = error_text(&host.call("moon_refresh", json!({ "date": "04/23/2024" })));
    assert!(t.contains("INVALID_DATE"), "{t}");
    let r = plain.call("moon_refresh", json!({ "date": "2024-04-08" }));
    assert_eq!(structured(&r)["phase"], "New Moon", "{r}");

    if version == Version::V2026_07_28 {
        // Which tools a list has depends on who asks: no shared cache may hand it on.
        for c in [&mut plain, &mut host] {
            let list = c.result("tools/list", json!({}));
            assert_eq!(list["cacheScope"], "private", "{list}");
        }
    }
}

#[test]
fn moon_app_only_tool_2025() {
    moon_app_only_tool(Version::V2025_11_25);
}

#[test]
fn moon_app_only_tool_2026() {
    moon_app_only_tool(Version::V2026_07_28);
}

#[test]
fn moon_view_subscription_2025() {
    let mut c = VersionClient::start(MOON, &[], Version::V2025_11_25, json!({}));
    let r =
        c.p.result("resources/subscribe", json!({ "uri": MOON_VIEW }));
    assert_eq!(r, json!({}));
    let r =
        c.p.result("resources/unsubscribe", json!({ "uri": MOON_VIEW }));
    assert_eq!(r, json!({}));
}

#[test]
fn moon_view_subscription_2026() {
    let mut c = VersionClient::start(MOON, &[], Version::V2026_07_28, json!({}));
    // `resources/subscribe` is gone; `subscriptions/listen` replaces it.
    let e = error_2026(&mut c.p, "resources/subscribe", json!({ "uri": MOON_VIEW }));
    assert_eq!(e["code"], -32601, "{e}");
    let id = json!("listen-1");
    c.p.send_request(
        &id,
        "subscriptions/listen",
        params_2026(json!({ "notifications": {
            "resourceSubscriptions": [MOON_VIEW],
            "resourcesListChanged": true,
            "promptsListChanged": true
        } })),
    );
    // Acknowledged first, tagged with the listen request's id; only what the server has
    // (no prompts here) is agreed to.
    let ack = c.p.recv();
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    let params = &ack["params"];
    assert_eq!(
        params["_meta"]["io.modelcontextprotocol/subscriptionId"], id,
        "{ack}"
    );
    assert_eq!(
        params["notifications"]["resourceSubscriptions"],
        json!([MOON_VIEW]),
        "{ack}"
    );
    assert_eq!(
        params["notifications"]["resourcesListChanged"], true,
        "{ack}"
    );
    assert_ne!(params["notifications"]["promptsListChanged"], true, "{ack}");
    // Other requests are answered while the stream is open; cancelling it ends it quietly.
    let (before, response) = exchange_2026(&mut c.p, "resources/list", json!({}));
    assert!(before.is_empty(), "{before:?}");
    assert!(response["result"]["resources"].is_array(), "{response}");
    c.p.notify("notifications/cancelled", json!({ "requestId": id }));
    c.p.expect_silence();
    assert!(!c.call("moon_facts", json!({})).is_null());
}
