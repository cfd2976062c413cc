//! [`ResultBudget`]: a tool result over a size is cut to fit, with a note saying so, and the
//! whole of it stays readable for a while as a resource the cut result links to.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::protocol::{Content, ResourceContents};
use crate::server::offerings::resource::ResourceTemplate;
use crate::sync::lock;
use crate::tool::{ToolError, ToolResult};

use super::{Call, CallFuture, Middleware, Next, random_id};

/// The scheme and path of the kept results' URIs: `mcp-tool://results/<id>`.
pub const RESULTS_URI_PREFIX: &str = "mcp-tool://results/";

/// The room a cut result keeps for its note and its link, besides the text it keeps.
const NOTE_ROOM: usize = 512;

/// Tool results of at most a number of bytes (their JSON, as the client would get it). A
/// larger one is cut: its text blocks are shortened to fit (at a character boundary), blocks
/// past the budget and its structured content are left out, and a note says what was cut
/// and where the whole is — a `resource_link` to `mcp-tool://results/<id>`, which
/// `resources/read` serves to the same principal (and no one else) for
/// [`keep_for`](ResultBudget::keep_for) (10 minutes by default). At most
/// [`keep_bytes`](ResultBudget::keep_bytes) (64 MiB by default) of whole results are kept;
/// past it the oldest go first — those of a client holding over a quarter of the bound
/// before anyone else's —, and a link to one gone says so.
/// `MCP_TOOL_RESULT_BUDGET=64KiB` switches it on for a server binary.
///
/// ```
/// let server = mcp_tool::Server::new("bounded", "1.0.0")
///     .middleware(mcp_tool::middleware::ResultBudget::new(64 * 1024));
/// ```
pub struct ResultBudget {
    max_bytes: usize,
    keep_for: Duration,
    kept: Arc<Kept>,
}

impl ResultBudget {
    /// Results of at most `max_bytes` bytes (at least 1 KiB: smaller budgets are raised to
    /// it, so that the note and the link fit).
    pub fn new(max_bytes: usize) -> Self {
        ResultBudget {
            max_bytes: max_bytes.max(1024),
            keep_for: Duration::from_secs(600),
            kept: Arc::new(Kept {
                max_bytes: 64 << 20,
                whole: Mutex::new(Whole::default()),
            }),
        }
    }

    /// How long the whole of a cut result stays readable.
    #[must_use]
    pub fn keep_for(mut self, keep_for: Duration) -> Self {
        self.keep_for = keep_for;
        self
    }

    /// How many bytes of whole results are kept at most, in all.
    #[must_use]
    pub fn keep_bytes(mut self, bytes: usize) -> Self {
        self.kept = Arc::new(Kept {
            max_bytes: bytes,
            whole: Mutex::new(Whole::default()),
        });
        self
    }

    /// The budget, in bytes.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// Reads a budget: `65536`, `64KiB`, `1MiB`, `64KB`, `1MB` (the form of
    /// `MCP_TOOL_RESULT_BUDGET`).
    pub fn parse(text: &str) -> Result<Self, BudgetError> {
        let bad = || BudgetError(text.to_owned());
        let text = text.trim();
        let digits = text
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len());
        let (number, unit) = text.split_at(digits);
        let number = number.parse::<usize>().map_err(|_| bad())?;
        let scale = match unit.trim() {
            "" | "B" => 1,
            "KiB" | "K" => 1 << 10,
            "MiB" | "M" => 1 << 20,
            "KB" => 1000,
            "MB" => 1_000_000,
            _ => return Err(bad()),
        };
        match number.checked_mul(scale) {
            Some(bytes) if bytes > 0 => Ok(ResultBudget::new(bytes)),
            _ => Err(bad()),
        }
    }

    /// Cuts `result` to the budget if it is over it, keeping the whole for `principal`.
    fn fit(&self, tool: &str, principal: String, result: &mut ToolResult) {
        if most_bytes(result) <= self.max_bytes {
            return;
        }
        let Ok(whole) = serde_json::to_string(&*result) else {
            return;
        };
        if whole.len() <= self.max_bytes {
            return;
        }
        let size = whole.len();
        let id = random_id();
        let uri = format!("{RESULTS_URI_PREFIX}{id}");
        let kept = self.kept.keep(
            id,
            Entry {
                principal,
                json: whole,
                until: Instant::now()
                    .checked_add(self.keep_for)
                    .unwrap_or_else(|| Instant::now() + Duration::from_secs(365 * 24 * 3600)),
            },
        );
        let mut room = self.max_bytes.saturating_sub(NOTE_ROOM);
        let mut content = Vec::new();
        for block in std::mem::take(&mut result.content) {
            match block {
                Content::Text(mut text) => {
                    // JSON escapes can make a text longer on the wire: count it as written.
                    let wire = serde_json::to_string(&text.text).map_or(usize::MAX, |s| s.len());
                    if wire <= room {
                        room -= wire;
                        content.push(Content::Text(text));
                    } else if room > 0 {
                        let cut = floor_char_boundary(&text.text, room * text.text.len() / wire);
                        text.text.truncate(cut);
                        room = 0;
                        content.push(Content::Text(text));
                    }
                }
                other => {
                    let wire = serde_json::to_string(&other).map_or(usize::MAX, |s| s.len());
                    if wire <= room {
                        room -= wire;
                        content.push(other);
                    }
                }
            }
        }
        let minutes = self.keep_for.as_secs().div_ceil(60);
        let note = if kept {
            format!(
                "[cut: the result of `{tool}` is {size} bytes, over this server's budget of {} bytes; what is above is its beginning{}. The whole result (its JSON) can be read for {minutes} min as the resource {uri}.]",
                self.max_bytes,
                if result.structured_content.is_some() {
                    ", without its structured content"
                } else {
                    ""
                },
            )
        } else {
            format!(
                "[cut: the result of `{tool}` is {size} bytes, over this server's budget of {} bytes, and too large to keep whole: what is above is its beginning.]",
                self.max_bytes
            )
        };
        content.push(Content::text(note));
        if kept {
            let mut link = Content::resource_link(uri, format!("whole result of {tool}"));
            if let Content::ResourceLink(l) = &mut link {
                l.mime_type = Some("application/json".to_owned());
                l.size = u64::try_from(size).ok();
            }
            content.push(link);
        }
        result.content = content;
        result.structured_content = None;
    }
}

/// At least as many bytes as the result's JSON, found without writing it where it can be:
/// a text counts 6 bytes a byte (the most an escape takes, `\u001f`), the structured content
/// its length (it is JSON text already); other blocks and `_meta` are written. Only a result
/// this bound puts over the budget is written whole.
fn most_bytes(result: &ToolResult) -> usize {
    let mut bytes = 64usize;
    for block in &result.content {
        let block = match block {
            Content::Text(t) if t.annotations.is_none() && t.meta.is_none() => {
                t.text.len().saturating_mul(6).saturating_add(32)
            }
            other => written(other),
        };
        bytes = bytes.saturating_add(block);
    }
    if let Some(structured) = &result.structured_content {
        bytes = bytes.saturating_add(structured.get().len() + 32);
    }
    if let Some(meta) = &result.meta {
        bytes = bytes.saturating_add(written(meta));
    }
    bytes
}

/// The length of a value's JSON, by writing it.
fn written<T: serde::Serialize>(value: &T) -> usize {
    serde_json::to_vec(value).map_or(usize::MAX, |v| v.len())
}

/// The largest index at most `at` that is a character boundary of `s`.
fn floor_char_boundary(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

impl Middleware for ResultBudget {
    fn call<'a>(&'a self, call: Call<'a>, next: Next<'a>) -> CallFuture<'a> {
        Box::pin(async move {
            let ctx = call.ctx;
            let mut outcome = next.run(call).await;
            if let Some(result) = outcome.result_mut() {
                self.fit(ctx.tool(), ctx.share_key(), result);
            }
            outcome
        })
    }

    fn resource_templates(&self) -> Vec<ResourceTemplate> {
        let kept = self.kept.clone();
        vec![
            ResourceTemplate::new(format!("{RESULTS_URI_PREFIX}{{id}}"), "kept results")
                .description("The whole of a tool result that was cut to fit the server's budget, for the client whose call it was.")
                .mime_type("application/json")
                .read(move |request| {
                    let kept = kept.clone();
                    async move {
                        let id = request.var("id").unwrap_or_default();
                        let principal = request.ctx().share_key();
                        match kept.get(id, &principal) {
                            Some(json) => Ok(vec![ResourceContents::text(
                                request.uri(),
                                "application/json",
                                json,
                            )]),
                            None => Err(ToolError::new(
                                "NOT_FOUND",
                                format!(
                                    "no kept result `{}`: it expired, was pushed out by newer ones, or is another client's",
                                    request.uri()
                                ),
                            )),
                        }
                    }
                }),
        ]
    }
}

/// A budget that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a size such as `65536`, `64KiB` or `1MiB`")]
pub struct BudgetError(String);

/// The whole results kept, with their bound.
struct Kept {
    max_bytes: usize,
    whole: Mutex<Whole>,
}

#[derive(Default)]
struct Whole {
    entries: HashMap<String, Entry>,
    /// Ids, oldest first.
    order: VecDeque<String>,
    bytes: usize,
    /// The bytes each principal holds.
    held: HashMap<String, usize>,
}

struct Entry {
    principal: String,
    json: String,
    until: Instant,
}

impl Whole {
    /// Removes the entry at `index` of the order.
    fn remove_at(&mut self, index: usize) {
        let Some(id) = self.order.remove(index) else {
            return;
        };
        if let Some(gone) = self.entries.remove(&id) {
            self.bytes -= gone.json.len();
            if let Some(held) = self.held.get_mut(&gone.principal) {
                *held -= gone.json.len();
                if *held == 0 {
                    self.held.remove(&gone.principal);
                }
            }
        }
    }

    /// Which entry goes to make room: the oldest of a principal holding more than `share`
    /// bytes (the one holding most), so that one client's results push out its own first;
    /// else the oldest of all.
    fn victim(&self, share: usize) -> usize {
        let heaviest = self
            .held
            .iter()
            .filter(|(_, bytes)| **bytes > share)
            .max_by_key(|(_, bytes)| **bytes)
            .map(|(principal, _)| principal);
        heaviest
            .and_then(|p| {
                self.order
                    .iter()
                    .position(|id| self.entries.get(id).is_some_and(|e| e.principal == *p))
            })
            .unwrap_or(0)
    }
}

impl Kept {
    /// Keeps `entry` under `id`, pushing out expired entries, then — while room is short —
    /// the oldest of whoever holds more than a quarter of the bound, else the oldest of all;
    /// `false` when it alone is over the bound (then it is not kept).
    fn keep(&self, id: String, entry: Entry) -> bool {
        if entry.json.len() > self.max_bytes {
            return false;
        }
        let mut whole = lock(&self.whole);
        let now = Instant::now();
        while let Some(oldest) = whole.order.front() {
            let expired = whole.entries.get(oldest).is_none_or(|e| e.until <= now);
            if expired {
                whole.remove_at(0);
            } else if whole.bytes + entry.json.len() > self.max_bytes {
                let victim = whole.victim(self.max_bytes / 4);
                whole.remove_at(victim);
            } else {
                break;
            }
        }
        whole.bytes += entry.json.len();
        *whole.held.entry(entry.principal.clone()).or_default() += entry.json.len();
        whole.order.push_back(id.clone());
        whole.entries.insert(id, entry);
        true
    }

    /// The whole result `id`, if it is still kept and `principal`'s.
    fn get(&self, id: &str, principal: &str) -> Option<String> {
        let whole = lock(&self.whole);
        let entry = whole.entries.get(id)?;
        (entry.until > Instant::now() && entry.principal == principal).then(|| entry.json.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;

    fn big(n: usize) -> ToolResult {
        ToolResult {
            content: vec![Content::text("é".repeat(n)), Content::text("second block")],
            structured_content: Some(serde_json::json!({ "n": n }).into()),
            ..ToolResult::default()
        }
    }

    #[test]
    fn budgets_are_read_in_bytes_and_binary_or_decimal_units() {
        for (text, bytes) in [
            ("65536", 65536),
            ("64KiB", 65536),
            ("1MiB", 1 << 20),
            ("2KB", 2000),
            (" 3 MB ", 3_000_000),
        ] {
            assert_eq!(
                ResultBudget::parse(text).unwrap().max_bytes(),
                bytes,
                "{text}"
            );
        }
        for bad in [
            "",
            "0",
            "KiB",
            "-1",
            "64 GiB",
            "1.5MiB",
            "99999999999999999999MiB",
        ] {
            assert!(ResultBudget::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn one_principal_over_its_share_pushes_out_its_own_results_not_others() {
        let budget = ResultBudget::new(1024).keep_bytes(8 * 1200);
        let keep = |principal: &str| {
            let mut result = ToolResult::text("x".repeat(1000));
            result.content.push(Content::text("y".repeat(50)));
            budget.fit("t", principal.into(), &mut result);
            let Some(Content::ResourceLink(link)) = result.content.last() else {
                panic!("not cut")
            };
            link.uri[RESULTS_URI_PREFIX.len()..].to_owned()
        };
        let bob = keep("subject bob");
        let flood: Vec<String> = (0..50).map(|_| keep("subject mallory")).collect();
        assert!(
            budget.kept.get(&bob, "subject bob").is_some(),
            "bob's result was pushed out"
        );
        assert!(budget.kept.get(&flood[49], "subject mallory").is_some());
        assert!(budget.kept.get(&flood[0], "subject mallory").is_none());
        assert!(lock(&budget.kept.whole).bytes <= 8 * 1200);
    }

    #[test]
    fn the_bound_is_never_below_the_written_size() {
        let results = [
            ToolResult::text(""),
            ToolResult::text("\u{1f}\u{0}\"\\\n".repeat(100)),
            ToolResult::error("é€𝄞".repeat(50)),
            big(300),
            ToolResult {
                content: vec![
                    Content::resource_link("a://b", "c"),
                    Content::image([0u8; 40], "image/png"),
                ],
                meta: Some(Map::from_iter([(
                    "k".to_owned(),
                    serde_json::json!([1, "\u{2}"]),
                )])),
                ..ToolResult::default()
            },
        ];
        for result in results {
            let written = serde_json::to_string(&result).unwrap().len();
            assert!(
                most_bytes(&result) >= written,
                "{written} > bound for {result:?}"
            );
        }
    }

    #[test]
    fn a_result_within_the_budget_is_left_alone() {
        let budget = ResultBudget::new(4096);
        let mut result = big(100);
        let before = result.clone();
        budget.fit("t", "local".into(), &mut result);
        assert_eq!(result, before);
    }

    #[test]
    fn a_result_over_the_budget_is_cut_to_fit_and_kept_whole_for_its_principal() {
        let budget = ResultBudget::new(2048);
        let mut result = big(10_000);
        let whole = serde_json::to_string(&result).unwrap();
        budget.fit("t", "subject alice".into(), &mut result);
        let wire = serde_json::to_string(&result).unwrap();
        assert!(wire.len() <= 2048, "{} bytes: {wire}", wire.len());
        assert!(result.structured_content.is_none());
        let Some(Content::ResourceLink(link)) = result.content.last() else {
            panic!("no link: {wire}")
        };
        assert!(link.uri.starts_with(RESULTS_URI_PREFIX));
        assert!(wire.contains("[cut: the result of `t` is"), "{wire}");
        let id = &link.uri[RESULTS_URI_PREFIX.len()..];
        assert_eq!(
            budget.kept.get(id, "subject alice").as_deref(),
            Some(&*whole)
        );
        assert_eq!(budget.kept.get(id, "subject mallory"), None);
    }

    #[test]
    fn kept_results_are_bounded_in_bytes_the_oldest_going_first() {
        let budget = ResultBudget::new(1024).keep_bytes(3 * 1200);
        let mut ids = Vec::new();
        for _ in 0..5 {
            let mut result = ToolResult::text("x".repeat(1000));
            result.content.push(Content::text("y".repeat(50)));
            budget.fit("t", "local".into(), &mut result);
            let Some(Content::ResourceLink(link)) = result.content.last() else {
                panic!("not cut")
            };
            ids.push(link.uri[RESULTS_URI_PREFIX.len()..].to_owned());
        }
        let held: Vec<bool> = ids
            .iter()
            .map(|id| budget.kept.get(id, "local").is_some())
            .collect();
        assert_eq!(held, [false, false, true, true, true]);
        assert!(lock(&budget.kept.whole).bytes <= 3 * 1200);
    }
}
