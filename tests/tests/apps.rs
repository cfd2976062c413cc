//! MCP Apps (`io.modelcontextprotocol/ui`) as the extension defines it, in process: the
//! server declares the extension when it has a view; app-only tools are listed, with their
//! `_meta.ui.visibility`, to clients that declared the extension (2025-11-25 `initialize`,
//! 2026-07-28 per-request `_meta`) and left out for others; a view's `_meta.ui` (CSP
//! domains, permissions, dedicated domain, border) comes from `Server::ui_meta`, else the
//! server's `ui_csp`; what no host could use stops the server from starting.
//! `tests/apps_browser.rs` renders a real view in Chromium.

use mcp_tool::prelude::*;
use mcp_tool::resource::{APP_MIME_TYPE, UI_EXTENSION, UiResourceMeta};
use mcp_tool::testing::Client;
use serde_json::{Value, json};

/// Shows the panel.
#[tool(ui = "panel")]
fn open_panel() -> &'static str {
    "opened"
}

/// Reloads the panel's data: for the view only.
#[tool(ui = "panel", visibility = ["app"])]
fn reload_panel() -> &'static str {
    "reloaded"
}

/// For the model only.
#[tool(visibility = ["model"])]
fn summarize() -> &'static str {
    "summary"
}

const TOOLS: [&str; 3] = ["open_panel", "reload_panel", "summarize"];

const PANEL: &str = "ui://apps/panel";

fn server() -> Server {
    Server::new("apps", "0.1.0").only(TOOLS)
}

/// The capabilities of a host that renders views.
fn host() -> Value {
    json!({ "extensions": { UI_EXTENSION: { "mimeTypes": [APP_MIME_TYPE] } } })
}

fn names(tools: &[Value]) -> Vec<&str> {
    tools.iter().filter_map(|t| t["name"].as_str()).collect()
}

async fn session(server: Server, capabilities: Value) -> (Client, Value) {
    let c = Client::connect(server).expect("the server starts");
    let init = c
        .initialize_with("2025-11-25", capabilities)
        .await
        .expect("initialized");
    (c, init)
}

#[tokio::test]
async fn a_server_with_a_view_declares_the_extension() {
    let (_, init) = session(server(), json!({})).await;
    assert_eq!(
        init["capabilities"]["extensions"],
        json!({ UI_EXTENSION: {} }),
        "{init}"
    );
    let (_, init) = session(Server::new("plain", "0.1.0").only(["summarize"]), host()).await;
    assert!(
        init["capabilities"].get("extensions").is_none(),
        "no view, no extension: {init}"
    );
    let c = Client::stateless(server(), json!({})).unwrap();
    let found = c.request("server/discover", json!({})).await.unwrap();
    assert_eq!(
        found["capabilities"]["extensions"][UI_EXTENSION],
        json!({}),
        "{found}"
    );
}

#[tokio::test]
async fn app_only_tools_are_listed_to_hosts_that_declared_the_extension() {
    for (capabilities, listed) in [
        (json!({}), vec!["open_panel", "summarize"]),
        // Declared as something else than an object: not declared.
        (
            json!({ "extensions": { UI_EXTENSION: null } }),
            vec!["open_panel", "summarize"],
        ),
        (
            json!({ "experimental": { UI_EXTENSION: {} } }),
            vec!["open_panel", "summarize"],
        ),
        (host(), vec!["open_panel", "reload_panel", "summarize"]),
    ] {
        let (c, _) = session(server(), capabilities.clone()).await;
        let tools = c.list_tools().await.unwrap();
        assert_eq!(names(&tools), listed, "2025-11-25, {capabilities}");
        let m = Client::stateless(server(), capabilities.clone()).unwrap();
        let tools = m.list_tools().await.unwrap();
        assert_eq!(names(&tools), listed, "2026-07-28, {capabilities}");
    }

    let (c, _) = session(server(), host()).await;
    let tools = c.list_tools().await.unwrap();
    let reload = tools.iter().find(|t| t["name"] == "reload_panel").unwrap();
    assert_eq!(
        reload["_meta"]["ui"],
        json!({ "resourceUri": PANEL, "visibility": ["app"] }),
        "{reload}"
    );
    let summarize = tools.iter().find(|t| t["name"] == "summarize").unwrap();
    assert_eq!(summarize["_meta"]["ui"], json!({ "visibility": ["model"] }));

    // The host calls it for its view; a client without the extension may call it by name too.
    for c in [c, session(server(), json!({})).await.0] {
        let r = c.call("reload_panel", json!({})).await.unwrap();
        assert_eq!(r.text(), "reloaded");
    }
    let m = Client::stateless(server(), host()).unwrap();
    assert_eq!(
        m.call("reload_panel", json!({})).await.unwrap().text(),
        "reloaded"
    );
}

#[tokio::test]
async fn a_list_that_depends_on_the_client_is_private_in_2026() {
    let m = Client::stateless(server(), host()).unwrap();
    let list = m.request("tools/list", json!({})).await.unwrap();
    assert_eq!(list["cacheScope"], "private", "{list}");
    assert!(list["ttlMs"].as_u64().is_some_and(|t| t > 0), "{list}");
    let m =
        Client::stateless(Server::new("plain", "0.1.0").only(["summarize"]), json!({})).unwrap();
    let list = m.request("tools/list", json!({})).await.unwrap();
    assert_eq!(list["cacheScope"], "public", "{list}");
}

/// The view as `resources/list` and `resources/read` give it: its listing and its contents.
async fn view(server: Server) -> (Value, Value) {
    let (c, _) = session(server, host()).await;
    let list = c.request("resources/list", json!({})).await.unwrap();
    let listed = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == PANEL)
        .unwrap_or_else(|| panic!("the view is listed: {list}"))
        .clone();
    let read = c
        .request("resources/read", json!({ "uri": PANEL }))
        .await
        .unwrap();
    (listed, read["contents"][0].clone())
}

#[tokio::test]
async fn a_views_meta_is_the_extensions_ui_resource_meta() {
    let meta = UiResourceMeta::new()
        .connect_domains(["https://api.example.com", "wss://live.example.com"])
        .resource_domains(["https://*.cdn.example.com"])
        .frame_domains(["https://www.youtube.com"])
        .base_uri_domains(["https://cdn.example.com"])
        .camera()
        .microphone()
        .geolocation()
        .clipboard_write()
        .domain("a904794854a047f6.claudemcpcontent.com")
        .prefers_border(false);
    let (listed, contents) = view(server().ui_meta("panel", meta)).await;
    let expected = json!({
        "csp": {
            "connectDomains": ["https://api.example.com", "wss://live.example.com"],
            "resourceDomains": ["https://*.cdn.example.com"],
            "frameDomains": ["https://www.youtube.com"],
            "baseUriDomains": ["https://cdn.example.com"]
        },
        "permissions": { "camera": {}, "microphone": {}, "geolocation": {}, "clipboardWrite": {} },
        "domain": "a904794854a047f6.claudemcpcontent.com",
        "prefersBorder": false
    });
    assert_eq!(listed["_meta"]["ui"], expected, "{listed}");
    assert_eq!(listed["mimeType"], APP_MIME_TYPE);
    assert_eq!(contents["_meta"]["ui"], expected, "{contents}");
    assert_eq!(contents["mimeType"], "text/html;profile=mcp-app");
    assert!(
        contents["text"]
            .as_str()
            .unwrap()
            .contains("tests/tests/apps.rs")
    );
}

#[tokio::test]
async fn a_view_without_meta_of_its_own_takes_the_servers_csp() {
    // Nothing said: no `_meta` (the host's restrictive default applies).
    let (listed, contents) = view(server()).await;
    assert!(listed.get("_meta").is_none(), "{listed}");
    assert!(contents.get("_meta").is_none(), "{contents}");

    let csp = json!({ "connectDomains": ["https://api.example.com"], "resourceDomains": [] });
    let (listed, contents) = view(
        server()
            .ui_csp(["https://api.example.com"], std::iter::empty::<&str>())
            .ui_meta("panel", UiResourceMeta::new().prefers_border(true)),
    )
    .await;
    let expected = json!({ "csp": csp, "prefersBorder": true });
    assert_eq!(listed["_meta"]["ui"], expected, "{listed}");
    assert_eq!(contents["_meta"]["ui"], expected, "{contents}");

    // A CSP of the view's own replaces the server's whole.
    let (listed, _) = view(
        server()
            .ui_csp(["https://api.example.com"], ["https://cdn.example.com"])
            .ui_meta(
                "panel",
                UiResourceMeta::new().frame_domains(["https://maps.example.com"]),
            ),
    )
    .await;
    assert_eq!(
        listed["_meta"]["ui"],
        json!({ "csp": { "frameDomains": ["https://maps.example.com"] } }),
        "{listed}"
    );
}

#[test]
fn meta_no_host_could_use_stops_the_server() {
    let e = server()
        .ui_meta("pannel", UiResourceMeta::new())
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`pannel`") && e.contains("ui = \"pannel\""),
        "{e}"
    );
    let e = server()
        .ui_meta(
            "panel",
            UiResourceMeta::new().connect_domains(["https://a.example.com; script-src *"]),
        )
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("view `panel`") && e.contains("script-src"),
        "{e}"
    );
    let e = server()
        .ui_meta("panel", UiResourceMeta::new().domain(""))
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("view `panel`"), "{e}");
}
