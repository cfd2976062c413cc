//! `conformance-client`: the official MCP conformance suite's client leg runs this against
//! each of its client scenarios (`conformance client --command "conformance-client"`): the
//! suite starts a test server, appends its URL to the command, and names the scenario in
//! `MCP_CONFORMANCE_SCENARIO` and the version in `MCP_CONFORMANCE_PROTOCOL_VERSION`
//! (2026-07-28: stateless, a `server/discover` and per-request `_meta`; anything older: the
//! `initialize` handshake and a session). Everything goes through `mcp_tool::client`.
//!
//! - `initialize`, `tools_call` (and any other): list the tools, call the first with
//!   `{a: 2, b: 3}`;
//! - `elicitation-sep1034-client-defaults`: call `test_client_elicitation_defaults`, accepting
//!   its question with the defaults of the requested schema (the user changed nothing);
//! - `sse-retry`: call `test_reconnection`, whose stream the server closes before the answer
//!   (the client resumes after the server's `retry:` with `Last-Event-ID`);
//! - `request-metadata`: `server/discover` (asked again when the server refuses the version
//!   but lists 2026-07-28), then `tools/list`.
//!
//! Exits 0 when the scenario's flow completed, 1 (with the reason on stderr) otherwise.

use std::sync::Arc;
use std::time::Duration;

use mcp_tool::client::oauth::{EnterpriseIdp, OAuthClient, TokenSource, UserAgent};
use mcp_tool::client::{
    ClientFuture, ClientHandler, Connect, McpClient, VersionChoice, form_defaults,
};
use mcp_tool::protocol::RpcError;
use serde_json::{Value, json};

/// Declares what the suite looks for, and answers a form with its defaults.
struct Conformance;

impl ClientHandler for Conformance {
    fn capabilities(&self) -> Value {
        json!({ "elicitation": { "form": {} }, "sampling": {}, "roots": {} })
    }

    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> ClientFuture<'a, Result<Value, RpcError>> {
        Box::pin(async move {
            match method {
                "elicitation/create" => Ok(json!({
                    "action": "accept",
                    "content": form_defaults(&params),
                })),
                "roots/list" => Ok(json!({ "roots": [] })),
                other => Err(RpcError::new(
                    mcp_tool::protocol::code::METHOD_NOT_FOUND,
                    format!("this client does not answer `{other}`"),
                )),
            }
        })
    }
}

/// The suite's authorization servers answer the authorization request at once with a
/// redirect: this user agent follows it no further than reading where it points (what a
/// browser would then load). Its HTTP client is made at the first authorization: by then
/// `mcp_tool::client` has installed the process's TLS provider, which reqwest needs.
struct Headless;

/// The redirect URI the suite's clients use (the suite's servers never load it).
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// This client's metadata document, for authorization servers that take one as a client id.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

impl UserAgent for Headless {
    fn redirect_uri(&self) -> String {
        REDIRECT_URI.into()
    }

    fn authorize<'a>(&'a self, url: &'a str) -> ClientFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| e.to_string())?;
            let response = http.get(url).send().await.map_err(|e| e.to_string())?;
            response
                .headers()
                .get("location")
                .and_then(|l| l.to_str().ok())
                .map(str::to_owned)
                .ok_or_else(|| {
                    format!(
                        "the authorization page answered {} without a redirect",
                        response.status()
                    )
                })
        })
    }
}

/// What the suite passes in `MCP_CONFORMANCE_CONTEXT` (an empty object when nothing).
fn context() -> Result<Value, String> {
    match std::env::var("MCP_CONFORMANCE_CONTEXT") {
        Ok(text) => {
            serde_json::from_str(&text).map_err(|e| format!("MCP_CONFORMANCE_CONTEXT: {e}"))
        }
        Err(_) => Ok(json!({})),
    }
}

/// How the scenario wants the client to authorize, from its name and the context the suite
/// passes in `MCP_CONFORMANCE_CONTEXT`; `None` for a scenario without authorization.
fn oauth(scenario: &str) -> Result<Option<OAuthClient>, String> {
    if !scenario.starts_with("auth/") {
        return Ok(None);
    }
    let context = context()?;
    let field = |name: &str| {
        context[name]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("MCP_CONFORMANCE_CONTEXT has no `{name}`"))
    };
    let oauth = match scenario {
        "auth/client-credentials-basic" => {
            OAuthClient::client_credentials(field("client_id")?, field("client_secret")?)
        }
        "auth/client-credentials-jwt" => OAuthClient::client_credentials_with_key(
            field("client_id")?,
            field("private_key_pem")?,
            field("signing_algorithm").unwrap_or_else(|_| "ES256".into()),
        ),
        // SEP-1933: the workload's identity token as a JWT bearer assertion.
        "auth/wif-jwt-bearer" => OAuthClient::workload_identity(
            field("client_id")?,
            TokenSource::Value(field("valid_jwt")?),
        ),
        // SEP-990: the user's ID token exchanged at the IdP for an ID-JAG, then a JWT bearer
        // grant at the MCP server's authorization server.
        "auth/enterprise-managed-authorization" => OAuthClient::enterprise(
            EnterpriseIdp::new(
                field("idp_token_endpoint")?,
                field("idp_client_id")?,
                TokenSource::Value(field("idp_id_token")?),
            ),
            field("client_id")?,
        )
        .client_secret(field("client_secret")?),
        _ => {
            let mut oauth = OAuthClient::authorization_code(Arc::new(Headless))
                .client_name("mcp-tool-conformance-client");
            if scenario == "auth/pre-registration" {
                oauth = oauth
                    .client_id(field("client_id")?)
                    .client_secret(field("client_secret")?);
            } else {
                oauth = oauth.client_metadata_url(CLIENT_METADATA_URL);
            }
            oauth
        }
    };
    Ok(Some(oauth))
}

async fn run(scenario: &str, url: &str, version: VersionChoice) -> Result<(), String> {
    let mut connect = Connect::http(url)
        .protocol_version(version)
        .timeout(Duration::from_secs(20))
        .client_name("mcp-tool-conformance-client");
    if let Some(oauth) = oauth(scenario)? {
        connect = connect.oauth(oauth);
    }
    let client = McpClient::connect_with(connect, Arc::new(Conformance))
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let outcome = async {
        match scenario {
            "sse-retry" => {
                let result = client
                    .call("test_reconnection", json!({}))
                    .await
                    .map_err(|e| format!("test_reconnection: {e}"))?;
                eprintln!("test_reconnection: {result}");
            }
            "request-metadata" => {
                let tools = client
                    .list_tools()
                    .await
                    .map_err(|e| format!("tools/list: {e}"))?;
                eprintln!("{} tools", tools.len());
            }
            "elicitation-sep1034-client-defaults" => {
                let result = client
                    .call("test_client_elicitation_defaults", json!({}))
                    .await
                    .map_err(|e| format!("test_client_elicitation_defaults: {e}"))?;
                eprintln!("test_client_elicitation_defaults: {result}");
            }
            "sep-2322-client-request-state" => {
                // A call whose input rounds carry state, one whose rounds carry none, one in
                // between that is no retry of anything, and one whose result names no type.
                client
                    .list_tools()
                    .await
                    .map_err(|e| format!("tools/list: {e}"))?;
                for name in [
                    "test_mrtr_echo_state",
                    "test_mrtr_unrelated",
                    "test_mrtr_no_state",
                    "test_mrtr_no_result_type",
                ] {
                    let result = client
                        .call(name, json!({}))
                        .await
                        .map_err(|e| format!("{name}: {e}"))?;
                    eprintln!("{name}: {result}");
                }
            }
            "http-custom-headers" => {
                // The calls the suite names in its context, after the list that says which
                // arguments go into headers.
                client
                    .list_tools()
                    .await
                    .map_err(|e| format!("tools/list: {e}"))?;
                let context = context()?;
                for call in context["toolCalls"].as_array().into_iter().flatten() {
                    let name = call["name"].as_str().unwrap_or_default();
                    let result = client
                        .call(name, call["arguments"].clone())
                        .await
                        .map_err(|e| format!("{name}: {e}"))?;
                    eprintln!("{name}: {result}");
                }
            }
            "http-invalid-tool-headers" => {
                // The client leaves out the tools whose header annotations are invalid; the
                // valid one is called.
                let tools = client
                    .list_tools()
                    .await
                    .map_err(|e| format!("tools/list: {e}"))?;
                let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
                eprintln!("tools kept: {names:?}");
                if names.contains(&"valid_tool") {
                    let result = client
                        .call("valid_tool", json!({ "region": "us-west1" }))
                        .await
                        .map_err(|e| format!("valid_tool: {e}"))?;
                    eprintln!("valid_tool: {result}");
                }
            }
            "json-schema-2020-12-preservation" => {
                let tools = client
                    .list_tools()
                    .await
                    .map_err(|e| format!("tools/list: {e}"))?;
                let schema = tools
                    .iter()
                    .find(|t| t["name"] == "json_schema_2020_12_tool")
                    .map(|t| t["inputSchema"].clone())
                    .ok_or("json_schema_2020_12_tool is not listed")?;
                let result = client
                    .call("json_schema_echo", json!({ "schema": schema }))
                    .await
                    .map_err(|e| format!("json_schema_echo: {e}"))?;
                eprintln!("json_schema_echo: {result}");
            }
            "json-schema-ref-no-deref" => {
                let tools = client
                    .list_tools()
                    .await
                    .map_err(|e| format!("tools/list: {e}"))?;
                eprintln!("{} tools", tools.len());
            }
            name if name.starts_with("auth/") => {
                let tools = client
                    .list_tools()
                    .await
                    .map_err(|e| format!("tools/list: {e}"))?;
                eprintln!("{} tools", tools.len());
                if !name.starts_with("auth/client-credentials") && name != "auth/pre-registration" {
                    let result = client
                        .call("test-tool", json!({}))
                        .await
                        .map_err(|e| format!("test-tool: {e}"))?;
                    eprintln!("test-tool: {result}");
                }
            }
            _ => {
                let tools = client
                    .list_tools()
                    .await
                    .map_err(|e| format!("tools/list: {e}"))?;
                if let Some(name) = tools.first().and_then(|t| t["name"].as_str()) {
                    let result = client
                        .call(name, json!({ "a": 2, "b": 3 }))
                        .await
                        .map_err(|e| format!("{name}: {e}"))?;
                    eprintln!("{name}: {result}");
                }
            }
        }
        Ok::<(), String>(())
    }
    .await;
    client.close().await;
    outcome
}

fn main() {
    let Some(url) = std::env::args().nth(1) else {
        eprintln!(
            "usage: conformance-client <server-url> (MCP_CONFORMANCE_SCENARIO names the scenario)"
        );
        std::process::exit(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let version = match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").as_deref() {
        Ok("2026-07-28") => VersionChoice::V2026_07_28,
        Ok(_) => VersionChoice::V2025_11_25,
        Err(_) => VersionChoice::Auto,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    match runtime.block_on(run(&scenario, &url, version)) {
        Ok(()) => {}
        Err(why) => {
            eprintln!("conformance-client ({scenario}): {why}");
            std::process::exit(1);
        }
    }
}
