//! Tool search for large catalogs. A tool with `defer_loading` (`#[tool(defer_loading)]`,
//! [`DynamicTool::deferred`], or a mounted server's `defer_loading`) is left out of
//! `tools/list`; whenever a catalog holds one, the server offers the built-in tool
//! [`SEARCH_TOOL`] (`always_visible`, so no allow or block list collapses it), which ranks the
//! deferred tools against a query with BM25 over their names, titles, descriptions and
//! parameter names, answers with the definitions of the best ones, and reveals them to the
//! client that searched: in a 2025-11-25 session through the session's tool selection (so
//! `notifications/tools/list_changed` follows and `tools/list` carries them), in 2026-07-28
//! through the selection of the request's principal (its authenticated subject), which later
//! `tools/list` requests carry (such lists are private with `ttlMs: 0`). An anonymous
//! 2026-07-28 HTTP client has no principal to keep a selection for (anonymous clients are not
//! told apart, and one client's search must not change another's list): it gets the
//! definitions all the same, and calls the tools by name. Deferring saves the list, it guards
//! nothing: a deferred tool is callable by name before any search (what may be called is the
//! tool selection's and a mount's `allowed_tools`' business). App-only tools are never
//! deferred (the model could not call them), so search never returns them.
//!
//! The index is built once per catalog, at the first search.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::tool::{Annotations, DynamicArgs, DynamicTool, ToolResult};

use crate::server::offerings::catalog::{Catalog, Entry, SEARCH_TOOL};

/// How many tools one search returns unless it asks: the best few, as a model reads them.
const DEFAULT_LIMIT: usize = 5;
/// The most one search returns.
const MAX_LIMIT: usize = 20;

/// The built-in search tool, as a dynamic tool of the server's.
pub(crate) fn search_tool() -> DynamicTool {
    DynamicTool::new(
        SEARCH_TOOL,
        "Find tools that are not listed yet. Describe the task (words such as the action and \
         the thing acted on); the best matching tools come back with their full definitions, \
         and from then on they are listed and can be called.",
        run,
    )
    .title("Search tools")
    .input_schema(json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "maxLength": 1000,
                "description": "What the tool should do, in a few words"
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LIMIT,
                "description": format!("How many tools at most (default {DEFAULT_LIMIT})")
            }
        },
        "required": ["query"],
        "additionalProperties": false
    }))
    .annotations(Annotations {
        read_only: Some(true),
        destructive: Some(false),
        idempotent: Some(true),
        open_world: Some(false),
    })
    .always_visible()
}

async fn run(args: DynamicArgs) -> ToolResult {
    let query = args.get_str("query").unwrap_or_default().to_owned();
    let limit = args
        .arguments
        .get("limit")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_LIMIT, |l| (l as usize).clamp(1, MAX_LIMIT));
    let server = args.ctx.state.conn().server();
    let catalog: Arc<Catalog> = server.catalog();
    // Tools of one user (a gateway's) are found by that user only, as they are listed.
    let user = args.ctx.user_key();
    let found: Vec<&Arc<Entry>> = catalog
        .search(&query, limit)
        .into_iter()
        .filter_map(|(i, _)| catalog.entries().get(i))
        .filter(|e| e.def.shown_to(user.as_deref()))
        .collect();
    let names: Vec<String> = found.iter().map(|e| e.name.to_string()).collect();
    // Listed from now on where the client has a selection to keep it in (a session, or an
    // authenticated principal); callable either way.
    let listed = names.is_empty() || args.ctx.tools().enable(names.iter().cloned()).is_ok();
    let version = args.ctx.protocol_version();
    let tools: Vec<Value> = found
        .iter()
        .filter_map(|e| serde_json::to_value(e.def.wire_as(version, catalog.keeps_refs())).ok())
        .collect();
    let text = if found.is_empty() {
        format!("No tool matches `{query}`. Try other words for the action or the thing.")
    } else {
        let mut text = format!(
            "{} tool(s) found for `{query}`, {}:",
            found.len(),
            if listed {
                "now listed and callable"
            } else {
                "callable by name"
            }
        );
        for e in &found {
            text.push_str(&format!(
                "\n- {}: {}",
                e.name,
                e.def.description().unwrap_or_default()
            ));
        }
        text
    };
    let mut structured = Map::new();
    structured.insert("tools".into(), Value::Array(tools));
    ToolResult {
        content: vec![crate::protocol::Content::text(text)],
        structured_content: Some(Value::Object(structured).into()),
        ..ToolResult::default()
    }
}
