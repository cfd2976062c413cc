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

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::protocol::Era;
use crate::tool::{Annotations, DynamicArgs, DynamicTool, ToolResult};

use super::catalog::{Catalog, Entry};
use super::handle::ServerHandle;

/// The name of the built-in search tool.
pub const SEARCH_TOOL: &str = "search_tools";

/// How many tools one search returns unless it asks: the best few, as a model reads them.
const DEFAULT_LIMIT: usize = 5;
/// The most one search returns.
const MAX_LIMIT: usize = 20;
/// BM25's term-frequency saturation and length normalisation (the usual values).
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// A name counts this many times over the rest of a tool's text: a query naming a tool
/// should find that tool first.
const NAME_WEIGHT: usize = 3;
/// A tool scoring under this share of the best one's score is left out: it shares only a
/// side word with the query, and revealing it would crowd the list.
const RELATIVE_CUTOFF: f64 = 0.3;

/// Words too common to tell tools apart (English function words).
const STOP_WORDS: &[&str] = &[
    "a", "all", "an", "and", "any", "are", "as", "at", "be", "by", "can", "do", "doe", "for",
    "from", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or",
    "some", "that", "the", "their", "then", "this", "to", "tool", "use", "want", "what", "which",
    "with", "you", "your",
];

/// The BM25 index of a catalog's deferred tools.
pub(crate) struct SearchIndex {
    /// Per deferred tool: its entry index in the catalog, and its terms with their counts.
    docs: Vec<(usize, HashMap<String, usize>, usize)>,
    /// In how many documents each term occurs.
    df: HashMap<String, usize>,
    avg_len: f64,
}

impl SearchIndex {
    /// Indexes the deferred tools of `entries`.
    pub(crate) fn new(entries: &[Arc<Entry>]) -> SearchIndex {
        let mut docs = Vec::new();
        let mut df: HashMap<String, usize> = HashMap::new();
        for (i, entry) in entries.iter().enumerate() {
            let def = &entry.def;
            if !def.deferred() || !def.for_model() {
                continue;
            }
            let mut terms: Vec<String> = Vec::new();
            for _ in 0..NAME_WEIGHT {
                terms.extend(tokens(def.name()));
            }
            for text in [def.title(), def.description()].into_iter().flatten() {
                terms.extend(tokens(text));
            }
            for param in parameter_names(def.input_schema()) {
                terms.extend(tokens(param));
            }
            let len = terms.len();
            let mut tf: HashMap<String, usize> = HashMap::new();
            for t in terms {
                *tf.entry(t).or_default() += 1;
            }
            for t in tf.keys() {
                *df.entry(t.clone()).or_default() += 1;
            }
            docs.push((i, tf, len));
        }
        let total: usize = docs.iter().map(|d| d.2).sum();
        let avg_len = if docs.is_empty() {
            1.0
        } else {
            total as f64 / docs.len() as f64
        };
        SearchIndex { docs, df, avg_len }
    }

    /// The entry indexes of the best `limit` tools for `query`, best first, each with its
    /// score; tools sharing no term with the query are left out.
    pub(crate) fn search(&self, query: &str, limit: usize) -> Vec<(usize, f64)> {
        let mut query_terms = tokens(query);
        query_terms.sort();
        query_terms.dedup();
        let n = self.docs.len() as f64;
        let mut scored: Vec<(usize, f64)> = self
            .docs
            .iter()
            .filter_map(|(i, tf, len)| {
                let mut score = 0.0;
                for t in &query_terms {
                    let Some(&f) = tf.get(t) else { continue };
                    let df = self.df.get(t).copied().unwrap_or(0) as f64;
                    let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                    let f = f as f64;
                    score += idf * f * (K1 + 1.0)
                        / (f + K1 * (1.0 - B + B * *len as f64 / self.avg_len));
                }
                (score > 0.0).then_some((*i, score))
            })
            .collect();
        // Best first; ties by name order (the catalog's), so answers are stable.
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        if let Some(&(_, best)) = scored.first() {
            scored.retain(|&(_, score)| score >= best * RELATIVE_CUTOFF);
        }
        scored.truncate(limit);
        scored
    }
}

/// The names of a schema's top-level properties.
fn parameter_names(schema: &Value) -> impl Iterator<Item = &str> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|p| p.keys().map(String::as_str))
}

/// The search terms of a text: words split at anything not a letter or digit and at
/// lower-to-upper case changes (`getUserById`, `get_user_by_id`, `get-user` alike),
/// lower-cased, with a plural `s` taken off (`users` finds `user`), common English function
/// words left out.
pub(crate) fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && prev_lower && !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            word.extend(c.to_lowercase());
        } else {
            prev_lower = false;
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out.into_iter()
        .map(stem)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .collect()
}

fn stem(word: String) -> String {
    if word.chars().count() > 3 && word.ends_with('s') && !word.ends_with("ss") {
        let mut w = word;
        w.pop();
        w
    } else {
        word
    }
}

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
    let Some(server) = args
        .ctx
        .state
        .conn()
        .server()
        .downcast_ref::<ServerHandle>()
    else {
        return ToolResult::error("internal error: the search has no server");
    };
    let catalog: Arc<Catalog> = server.catalog();
    let found: Vec<&Arc<Entry>> = catalog
        .search(&query, limit)
        .into_iter()
        .filter_map(|(i, _)| catalog.entries().get(i))
        .collect();
    let names: Vec<String> = found.iter().map(|e| e.name.to_string()).collect();
    // Listed from now on where the client has a selection to keep it in (a session, or an
    // authenticated principal); callable either way.
    let listed = names.is_empty() || args.ctx.tools().enable(names.iter().cloned()).is_ok();
    let era = Era::of(args.ctx.protocol_version());
    let tools: Vec<Value> = found
        .iter()
        .filter_map(|e| serde_json::to_value(e.def.wire(era)).ok())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_split_cases_and_separators_and_drop_plurals() {
        assert_eq!(
            tokens("getUserById get_users-list HTTPServer v2 for the"),
            [
                "get",
                "user",
                "id",
                "get",
                "user",
                "list",
                "httpserver",
                "v2"
            ]
        );
        assert_eq!(tokens("Address class"), ["address", "class"]);
    }
}
