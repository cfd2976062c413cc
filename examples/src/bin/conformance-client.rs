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

async fn run(scenario: &str, url: &str, version: VersionChoice) -> Result<(), String> {
    let connect = Connect::http(url)
        .protocol_version(version)
        .timeout(Duration::from_secs(20))
        .client_name("mcp-tool-conformance-client");
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
