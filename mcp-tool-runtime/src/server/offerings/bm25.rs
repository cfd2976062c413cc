//! The ranking behind tool search: BM25 over each deferred tool's name (weighted), title,
//! description and parameter names, with the terms of a text split the way tool names are
//! written (`getUserById`, `get_user_by_id`). It knows tool definitions, not the catalog:
//! the catalog builds one index at its first search and keeps it.

use std::collections::HashMap;

use serde_json::Value;

use crate::tool::ToolDef;

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
    /// Indexes the deferred tools among `defs` (a catalog's, in its order).
    pub(crate) fn new<'a>(defs: impl Iterator<Item = &'a ToolDef>) -> SearchIndex {
        let mut docs = Vec::new();
        let mut df: HashMap<String, usize> = HashMap::new();
        for (i, def) in defs.enumerate() {
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
