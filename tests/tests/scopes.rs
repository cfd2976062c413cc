//! Scopes on tools (`#[tool(scopes = […])]`): a caller whose token lacks a tool's scopes does
//! not see it in `tools/list` and is refused a call with the step-up challenge (HTTP 403,
//! `WWW-Authenticate: Bearer error="insufficient_scope", scope=…, resource_metadata=…`) before
//! anything runs, in both protocol eras; the protected-resource metadata lists the declared
//! scopes; a server without authentication (and stdio) grants every scope. Resources,
//! resource templates and prompts declare scopes the same way (`.scopes([…])`).
//!
//! Every server runs in-process on `127.0.0.1:0`; every wait is bounded by the client's timeout.

use std::sync::Mutex;

use axum::http::request::Parts;
use mcp_tool::content::ResourceContents;
use mcp_tool::extract::Identity;
use mcp_tool::http::{
    AuthError, AuthFuture, Authenticator, BearerTokens, HttpConfig, ResourceMetadata,
};
use mcp_tool::prelude::*;
use mcp_tool::prompt::{Prompt, PromptMessage};
use mcp_tool::resource::{Resource, ResourceTemplate};
use mcp_tool_tests::raw_http::{Endpoint, Reply, send, tool_names};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// The names `delete_user` was called with (the tests run at once: each uses names of its own).
static DELETED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn deleted(name: &str) -> bool {
    DELETED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
        .any(|n| n == name)
}

/// Lists the users.
#[tool(scopes = ["users:read"])]
fn list_users() -> String {
    "ada".into()
}

/// Deletes a user.
#[tool(scopes = ["users:read", "users:write"])]
fn delete_user(name: String) -> String {
    let said = format!("deleted {name}");
    DELETED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(name);
    said
}

/// Says hello to anyone.
#[tool]
fn hello() -> &'static str {
    "hello"
}

const TOOLS: [&str; 3] = ["list_users", "delete_user", "hello"];

const READER: &str = "reader-token";
const WRITER: &str = "writer-token";

/// A server of the three tools; with tokens (`READER`: `users:read`, `WRITER`: both scopes)
/// and metadata when `auth`.
async fn serve(auth: bool) -> Endpoint {
    serve_with(|mut config| {
        if auth {
            config.with_auth(
                BearerTokens::new()
                    .token_with_scopes(READER, "rita", ["users:read"])
                    .token_with_scopes(WRITER, "will", ["users:read", "users:write"]),
            )
        } else {
            config.resource_metadata = None;
            config
        }
    })
    .await
}

/// A server of the three tools with metadata, configured further by `configure`.
async fn serve_with(configure: impl FnOnce(HttpConfig) -> HttpConfig) -> Endpoint {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let base = format!("http://127.0.0.1:{port}");
    let mut config = HttpConfig::default();
    config.resource_metadata = Some(ResourceMetadata {
        resource: format!("{base}/mcp"),
        authorization_servers: vec!["https://auth.example.com".into()],
        scopes_supported: vec!["openid".into()],
    });
    let config = configure(config);
    let router = offering(Server::new("scoped", "0").only(TOOLS))
        .build()
        .expect("the server builds")
        .into_router(config);
    tokio::spawn(async move {
        axum::serve(listener, router).await.expect("serves");
    });
    Endpoint::new(base)
}

/// Resources, a template and prompts beside the tools: `roster` and `greet` for readers,
/// `payroll`, `users://profile/{name}` and `offboard` for writers only.
fn offering(server: Server) -> Server {
    server
        .resource(
            Resource::text("users://roster", "roster", "text/plain", "ada, bo")
                .scopes(["users:read"]),
        )
        .resource(
            Resource::text("users://payroll", "payroll", "text/plain", "ada: 1")
                .scopes(["users:read", "users:write"]),
        )
        .resource_template(
            ResourceTemplate::new("users://profile/{name}", "profile")
                .scopes(["users:read", "users:write"])
                .read(|request| async move {
                    let name = request.var("name").unwrap_or_default().to_owned();
                    Ok(vec![ResourceContents::text(
                        request.uri(),
                        "text/plain",
                        name,
                    )])
                }),
        )
        .prompt(
            Prompt::new("greet")
                .get(|_| async { Ok(vec![PromptMessage::user("Say hello")].into()) }),
        )
        .prompt(
            Prompt::new("offboard")
                .scopes(["users:read", "users:write"])
                .get(|_| async { Ok(vec![PromptMessage::user("Offboard someone")].into()) }),
        )
}

fn call(id: u64, name: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}})
    .to_string()
}

/// The step-up challenge of a call to `delete_user` by `READER`.
fn assert_step_up(reply: &Reply, base: &str, id: u64) {
    assert_eq!(reply.status, StatusCode::FORBIDDEN, "{}", reply.body);
    let challenge = reply.challenge.as_deref().expect("WWW-Authenticate");
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    for part in [
        "error=\"insufficient_scope\"".to_owned(),
        "scope=\"users:read users:write\"".to_owned(),
        format!("resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""),
    ] {
        assert!(challenge.contains(&part), "{part} in {challenge}");
    }
    assert_eq!(reply.body["id"], id, "{}", reply.body);
    assert_eq!(reply.body["error"]["code"], -32030, "{}", reply.body);
    assert_eq!(
        reply.body["error"]["data"]["requiredScopes"],
        json!(["users:read", "users:write"])
    );
}

#[tokio::test]
async fn a_session_sees_and_calls_only_what_its_scopes_allow() {
    let srv = serve(true).await;
    let reader = srv.session(Some(READER)).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let reply = send(srv.in_session(Some(READER), &reader).body(list.clone())).await;
    assert_eq!(tool_names(&reply.body), ["hello", "list_users"]);

    let reply = send(srv.in_session(Some(READER), &reader).body(call(
        2,
        "delete_user",
        json!({"name": "session-reader"}),
    )))
    .await;
    assert_step_up(&reply, &srv.base, 2);
    assert!(!deleted("session-reader"), "nothing ran");

    // The tool a reader may call works.
    let reply = send(
        srv.in_session(Some(READER), &reader)
            .body(call(3, "list_users", json!({}))),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(
        reply.body["result"]["content"][0]["text"], "ada",
        "{}",
        reply.body
    );

    // A token with both scopes sees and calls everything.
    let writer = srv.session(Some(WRITER)).await;
    let reply = send(srv.in_session(Some(WRITER), &writer).body(list)).await;
    assert_eq!(
        tool_names(&reply.body),
        ["delete_user", "hello", "list_users"]
    );
    let reply = send(srv.in_session(Some(WRITER), &writer).body(call(
        4,
        "delete_user",
        json!({"name": "ada"}),
    )))
    .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(
        reply.body["result"]["content"][0]["text"], "deleted ada",
        "{}",
        reply.body
    );
}

#[tokio::test]
async fn a_stateless_request_sees_and_calls_only_what_its_scopes_allow() {
    let srv = serve(true).await;
    let reply = srv
        .stateless(Some(READER), "tools/list", None, json!({}))
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(tool_names(&reply.body), ["hello", "list_users"]);
    // The list depends on the token: no shared cache may keep it.
    assert_eq!(
        reply.body["result"]["cacheScope"], "private",
        "{}",
        reply.body
    );

    let reply = srv
        .stateless(
            Some(READER),
            "tools/call",
            Some("delete_user"),
            json!({"name": "delete_user", "arguments": {"name": "stateless-reader"}}),
        )
        .await;
    assert_step_up(&reply, &srv.base, 7);
    assert!(!deleted("stateless-reader"), "nothing ran");

    let reply = srv
        .stateless(Some(WRITER), "tools/list", None, json!({}))
        .await;
    assert_eq!(
        tool_names(&reply.body),
        ["delete_user", "hello", "list_users"]
    );
    let reply = srv
        .stateless(
            Some(WRITER),
            "tools/call",
            Some("delete_user"),
            json!({"name": "delete_user", "arguments": {"name": "bo"}}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.body["result"]["content"][0]["text"], "deleted bo");
}

/// Tokens as an OAuth verifier reads them, each standing for a principal (a subject through
/// a client) and granting scopes: Rita through the client `desk` with the reading scope,
/// then stepped up to both; Rita through the client `kiosk`; Will through `desk`.
const RITA_READS: &str = "rita-desk-read";
const RITA_WRITES: &str = "rita-desk-read-write";
const RITA_AT_KIOSK: &str = "rita-kiosk-read-write";
const WILL: &str = "will-desk-read-write";

/// The authenticator of [`RITA_READS`] and the other tokens of principals.
struct Principals;

impl Authenticator for Principals {
    fn authenticate<'a>(&'a self, request: &'a Parts) -> AuthFuture<'a> {
        let token = request
            .headers
            .get(reqwest::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        let both: &[&str] = &["users:read", "users:write"];
        let found = match token {
            Some(RITA_READS) => Some(("rita", "desk", &["users:read"][..])),
            Some(RITA_WRITES) => Some(("rita", "desk", both)),
            Some(RITA_AT_KIOSK) => Some(("rita", "kiosk", both)),
            Some(WILL) => Some(("will", "desk", both)),
            _ => None,
        };
        Box::pin(async move {
            let (subject, client, scopes) =
                found.ok_or_else(|| AuthError::invalid("an unknown token"))?;
            Ok(Identity {
                client_id: Some(client.to_owned()),
                ..Identity::new(subject, scopes.iter().copied())
            })
        })
    }
}

/// A step-up inside a 2025-11-25 session: the session is its principal's, not its first
/// token's. Rita's reading token cannot call the writing tool (the step-up challenge); her
/// stepped-up token, in the same session, sees and calls it; her reading token afterwards
/// still cannot (each request is granted its own token's scopes); a stream her reading token
/// started resumes with her stepped-up one. Another subject's token, or her own through
/// another client, is refused the session (403) and its streams (410), and nothing runs.
#[tokio::test]
async fn a_session_is_its_principal_s_and_each_request_is_granted_its_own_token_s_scopes() {
    let srv = serve_with(|mut config| {
        // Answers as streams, so that each has an event id to resume from.
        config.sse_responses = true;
        config.with_auth(Principals)
    })
    .await;
    let session = srv.session(Some(RITA_READS)).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let lists = |token| send(srv.in_session(Some(token), &session).body(list.clone()));
    let delete = |token, id, name: &str| {
        send(srv.in_session(Some(token), &session).body(call(
            id,
            "delete_user",
            json!({ "name": name }),
        )))
    };

    assert_eq!(
        tool_names(&lists(RITA_READS).await.body),
        ["hello", "list_users"]
    );
    assert_step_up(&delete(RITA_READS, 2, "before-step-up").await, &srv.base, 2);
    assert!(!deleted("before-step-up"), "nothing ran");

    // Stepped up, in the same session.
    assert_eq!(
        tool_names(&lists(RITA_WRITES).await.body),
        ["delete_user", "hello", "list_users"]
    );
    let reply = delete(RITA_WRITES, 3, "stepped-up").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(
        reply.body["result"]["content"][0]["text"], "deleted stepped-up",
        "{}",
        reply.body
    );

    // The older, narrower token is granted no more than before.
    assert_eq!(
        tool_names(&lists(RITA_READS).await.body),
        ["hello", "list_users"]
    );
    assert_step_up(&delete(RITA_READS, 4, "after-step-up").await, &srv.base, 4);
    assert!(!deleted("after-step-up"), "nothing ran");

    // Another subject, or the same one through another client, is someone else.
    for token in [WILL, RITA_AT_KIOSK] {
        let name = format!("by-{token}");
        let reply = delete(token, 5, &name).await;
        assert_eq!(
            reply.status,
            StatusCode::FORBIDDEN,
            "{token}: {}",
            reply.body
        );
        assert!(
            reply.body["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("belongs to another principal")),
            "{token}: {}",
            reply.body
        );
        assert!(!deleted(&name), "{token}: nothing ran");
        assert_eq!(lists(token).await.status, StatusCode::FORBIDDEN, "{token}");
    }

    // A stream the reading token started resumes with the stepped-up one, not with another
    // principal's token.
    let started = srv
        .in_session(Some(RITA_READS), &session)
        .body(call(6, "list_users", json!({})))
        .send()
        .await
        .expect("a call");
    assert_eq!(started.status(), StatusCode::OK);
    let text = started.text().await.expect("a stream");
    let priming = text
        .lines()
        .find_map(|l| l.strip_prefix("id: "))
        .unwrap_or_else(|| panic!("an event id: {text}"))
        .to_owned();
    let resume = |token| {
        srv.http
            .get(srv.url())
            .header(reqwest::header::AUTHORIZATION, format!("Bearer {token}"))
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .header("last-event-id", &priming)
    };
    let resumed = send(resume(RITA_WRITES)).await;
    assert_eq!(resumed.status, StatusCode::OK, "{}", resumed.body);
    assert_eq!(
        resumed.body["result"]["content"][0]["text"], "ada",
        "{}",
        resumed.body
    );
    for token in [WILL, RITA_AT_KIOSK] {
        let refused = send(resume(token)).await;
        assert_eq!(
            refused.status,
            StatusCode::GONE,
            "{token}: {}",
            refused.body
        );
    }
}

/// The names in a list result's `key` array, sorted.
fn listed(reply: &Reply, key: &str, field: &str) -> Vec<String> {
    let mut names: Vec<String> = reply.body["result"][key]
        .as_array()
        .unwrap_or_else(|| panic!("a {key} list: {}", reply.body))
        .iter()
        .map(|t| t[field].as_str().expect("a name").to_owned())
        .collect();
    names.sort();
    names
}

/// The challenge of a read or get a reader may not make: 403, the scopes it needs, -32030.
fn assert_offering_step_up(reply: &Reply, base: &str, what: &str) {
    assert_eq!(
        reply.status,
        StatusCode::FORBIDDEN,
        "{what}: {}",
        reply.body
    );
    let challenge = reply.challenge.as_deref().expect("WWW-Authenticate");
    assert_eq!(
        challenge,
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"users:read users:write\", \
             error_description=\"the request needs the scopes users:read users:write\", \
             resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
        ),
        "{what}"
    );
    assert_eq!(
        reply.body["error"]["code"], -32030,
        "{what}: {}",
        reply.body
    );
    assert_eq!(
        reply.body["error"]["message"],
        format!("Insufficient scope: {what} needs the scopes `users:read users:write`"),
    );
    assert_eq!(
        reply.body["error"]["data"]["requiredScopes"],
        json!(["users:read", "users:write"]),
        "{what}"
    );
}

#[tokio::test]
async fn resources_and_prompts_are_listed_and_given_by_scope_in_both_versions() {
    let srv = serve(true).await;
    let reads = [
        (
            "resources/read",
            "users://payroll",
            "reading `users://payroll`",
        ),
        (
            "resources/read",
            "users://profile/ada",
            "reading `users://profile/ada`",
        ),
        ("prompts/get", "offboard", "getting the prompt `offboard`"),
    ];
    let params = |method: &str, target: &str| match method {
        "resources/read" => json!({ "uri": target }),
        _ => json!({ "name": target }),
    };

    // 2026-07-28: each request on its own; filtered lists are private.
    for (token, resources, templates, prompts) in [
        (READER, vec!["roster"], vec![], vec!["greet"]),
        (
            WRITER,
            vec!["payroll", "roster"],
            vec!["profile"],
            vec!["greet", "offboard"],
        ),
    ] {
        for (method, key, field, expected) in [
            ("resources/list", "resources", "name", &resources),
            (
                "resources/templates/list",
                "resourceTemplates",
                "name",
                &templates,
            ),
            ("prompts/list", "prompts", "name", &prompts),
        ] {
            let reply = srv.stateless(Some(token), method, None, json!({})).await;
            assert_eq!(reply.status, StatusCode::OK, "{method}: {}", reply.body);
            assert_eq!(&listed(&reply, key, field), expected, "{token} {method}");
            assert_eq!(reply.body["result"]["cacheScope"], "private", "{method}");
        }
    }
    for (method, target, what) in reads {
        let reply = srv
            .stateless(Some(READER), method, Some(target), params(method, target))
            .await;
        assert_offering_step_up(&reply, &srv.base, what);
        let reply = srv
            .stateless(Some(WRITER), method, Some(target), params(method, target))
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{what}: {}", reply.body);
        assert!(reply.body["result"].is_object(), "{what}: {}", reply.body);
    }
    let reply = srv
        .stateless(
            Some(READER),
            "resources/read",
            Some("users://roster"),
            json!({"uri": "users://roster"}),
        )
        .await;
    assert_eq!(reply.body["result"]["contents"][0]["text"], "ada, bo");

    // 2025-11-25: the same through a session.
    let reader = srv.session(Some(READER)).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/list"}).to_string();
    let reply = send(srv.in_session(Some(READER), &reader).body(list)).await;
    assert_eq!(listed(&reply, "resources", "name"), ["roster"]);
    for (k, (method, target, what)) in reads.into_iter().enumerate() {
        let body = json!({"jsonrpc": "2.0", "id": 10 + k, "method": method,
            "params": params(method, target)});
        let reply = send(srv.in_session(Some(READER), &reader).body(body.to_string())).await;
        assert_offering_step_up(&reply, &srv.base, what);
    }
    let writer = srv.session(Some(WRITER)).await;
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/get",
        "params": {"name": "offboard"}});
    let reply = send(srv.in_session(Some(WRITER), &writer).body(body.to_string())).await;
    assert_eq!(
        reply.body["result"]["messages"][0]["content"]["text"], "Offboard someone",
        "{}",
        reply.body
    );

    // Without authentication, everything is there.
    let open = serve(false).await;
    let reply = open
        .stateless(None, "resources/list", None, json!({}))
        .await;
    assert_eq!(listed(&reply, "resources", "name"), ["payroll", "roster"]);
    assert_eq!(
        reply.body["result"]["cacheScope"], "public",
        "{}",
        reply.body
    );
}

#[test]
fn an_offering_s_scope_that_is_no_scope_stops_the_build() {
    let e = Server::new("scoped", "0")
        .only(["hello"])
        .resource(Resource::text("a://b", "b", "text/plain", "b").scopes(["has space"]))
        .prompt(Prompt::new("p").scopes(["quote\""]))
        .build()
        .expect_err("no build");
    let said = e.to_string();
    for part in [
        "`has space` is not an OAuth scope",
        "`quote\\\"` is not an OAuth scope",
    ] {
        assert!(said.contains(part), "{part} in {said}");
    }
}

#[tokio::test]
async fn the_metadata_lists_the_declared_scopes() {
    let srv = serve(true).await;
    let meta: Value = srv
        .http
        .get(format!(
            "{}/.well-known/oauth-protected-resource/mcp",
            srv.base
        ))
        .send()
        .await
        .expect("metadata")
        .json()
        .await
        .expect("JSON");
    assert_eq!(
        meta["scopes_supported"],
        json!(["openid", "users:read", "users:write"]),
        "{meta}"
    );
}

#[tokio::test]
async fn without_authentication_every_scope_is_granted() {
    let srv = serve(false).await;
    let id = srv.session(None).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let reply = send(srv.in_session(None, &id).body(list)).await;
    assert_eq!(
        tool_names(&reply.body),
        ["delete_user", "hello", "list_users"]
    );
    let reply = send(
        srv.in_session(None, &id)
            .body(call(2, "delete_user", json!({"name": "cy"}))),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.body["result"]["content"][0]["text"], "deleted cy");

    // In-process (as over stdio): no token, every scope.
    let server = Server::new("scoped", "0")
        .only(TOOLS)
        .build()
        .expect("builds");
    let result = server
        .call("delete_user", json!({"name": "di"}))
        .await
        .expect("a result");
    assert!(!result.is_error);
}

#[test]
fn the_definition_keeps_its_scopes() {
    let server = Server::new("scoped", "0")
        .only(TOOLS)
        .build()
        .expect("builds");
    let scopes: Vec<(String, Vec<String>)> = server
        .tools()
        .iter()
        .map(|d| (d.name().to_owned(), d.scopes().to_vec()))
        .collect();
    assert!(scopes.contains(&(
        "delete_user".into(),
        vec!["users:read".into(), "users:write".into()]
    )));
    assert!(scopes.contains(&("hello".into(), vec![])));
}

#[test]
fn a_dynamic_tool_declares_scopes_checked_like_the_attribute() {
    use mcp_tool::dynamic::DynamicTool;
    let server = Server::new("scoped", "0")
        .only(TOOLS)
        .build()
        .expect("builds");
    let tool = |scopes: &[&str]| {
        DynamicTool::new("report", "Writes a report.", |_| async { "done" })
            .scopes(scopes.iter().copied())
    };
    let e = server
        .add_tool(tool(&["reports write"]))
        .expect_err("a scope with a space");
    assert!(
        e.to_string()
            .contains("`reports write` is not an OAuth scope"),
        "{e}"
    );
    let e = server
        .add_tool(tool(&["a", "a"]))
        .expect_err("a scope twice");
    assert!(e.to_string().contains("`a` is listed twice"), "{e}");
    server
        .add_tool(tool(&["reports:write"]))
        .expect("a good scope");
    let def = server
        .tools()
        .into_iter()
        .find(|d| d.name() == "report")
        .expect("added");
    assert_eq!(def.scopes(), ["reports:write"]);
}
