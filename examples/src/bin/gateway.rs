//! `gateway`: a server whose tools are mostly other servers' (the `MCPTool` document). It
//! mounts `users` over HTTP — `users__delete_user` is approved by the user before it is sent —
//! and `calc` over stdio, whose tools are deferred: not listed, found through `search_tools`.
//! Its own tool, `gateway_status`, says which mounted servers are up.
//!
//! ```sh
//! users --http 127.0.0.1:8181 &
//! gateway --users http://127.0.0.1:8181/mcp --calc ./target/debug/calc
//! ```
//!
//! The same mounts as a file, for any server binary: `gateway --mount gateway.json`, with
//! `[{"type": "mcp", "server_label": "users", "server_url": "http://127.0.0.1:8181/mcp",
//! "require_approval": {"always": {"tool_names": ["delete_user"]}, "never": {}}}, …]`.

use std::collections::BTreeMap;

use mcp_tool::gateway::{McpTool, RequireApproval, ToolConfig, ToolFilter};
use mcp_tool::prelude::*;
use mcp_tool::server::ServerHandle;

/// Say which mounted servers' tools are available now.
#[tool(read_only, open_world = false)]
fn gateway_status(server: ServerHandle) -> String {
    let mut labels: BTreeMap<String, usize> = BTreeMap::new();
    for tool in server.tools() {
        if let Some((label, _)) = tool.name().split_once("__") {
            *labels.entry(label.to_owned()).or_default() += 1;
        }
    }
    if labels.is_empty() {
        return "no mounted server is connected yet".into();
    }
    labels
        .iter()
        .map(|(label, n)| format!("{label}: {n} tools"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn usage() -> ! {
    eprintln!("usage: gateway [--users URL] [--calc PATH] [--mount FILE] [--http ADDR]");
    std::process::exit(2)
}

fn main() -> mcp_tool::Result<()> {
    let mut args = std::env::args();
    let mut rest = vec![args.next().unwrap_or_else(|| "gateway".to_owned())];
    let mut server =
        Server::new("gateway", env!("CARGO_PKG_VERSION")).title("A gateway to other MCP servers");
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--users" => {
                let url = args.next().unwrap_or_else(|| usage());
                server = server.mount(McpTool {
                    server_label: "users".into(),
                    server_url: Some(url),
                    server_description: Some("User accounts: create, read and delete users".into()),
                    // Deleting asks the user first; nothing else does.
                    require_approval: Some(RequireApproval::Lists {
                        always: Some(ToolFilter {
                            tool_names: Some(vec!["delete_user".into()]),
                            read_only: None,
                        }),
                        never: Some(ToolFilter::default()),
                    }),
                    ..McpTool::default()
                });
            }
            "--calc" => {
                let path = args.next().unwrap_or_else(|| usage());
                server = server.mount(McpTool {
                    server_label: "calc".into(),
                    command: Some(vec![path]),
                    server_description: Some("Arithmetic".into()),
                    // Every calc tool is found through search, not listed.
                    tool_configs: Some(BTreeMap::from([(
                        "*".to_owned(),
                        ToolConfig {
                            defer_loading: Some(true),
                            ..ToolConfig::default()
                        },
                    )])),
                    ..McpTool::default()
                });
            }
            _ => rest.push(arg),
        }
    }
    server.run_with_args(rest)
}
