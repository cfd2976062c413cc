//! The tools of a running server: the immutable [`Catalog`] built from the macros' records and
//! the dynamic tools when the server starts, checked as a whole, with its `tools/list` pages
//! rendered once per shape of protocol version ([`ProtocolVersion::SHAPES`]) and audience
//! (clients that declared the MCP Apps extension also see the app-only tools). Adding or
//! removing a tool while serving builds a new one.

use std::any::Any;
use std::sync::{Arc, OnceLock};

use crate::protocol::ProtocolVersion;
use crate::protocol::jsonrpc::{json_len, json_string};
use crate::protocol::wire::{Complete, Implementation, ListTools, ResultMeta};
use crate::protocol::{CacheHints, CacheScope};
use crate::tool::DefBuilder;
use crate::tool::ToolDef;
use crate::tool::ToolRecord;
use crate::tool::extract::TypeMap;
use crate::tool::record::Call;

use crate::server::error::StartError;
use crate::server::offerings::bm25::SearchIndex;

/// One tool ready to be called.
pub(crate) struct Entry {
    pub(crate) def: Arc<ToolDef>,
    pub(crate) name: Arc<str>,
    pub(crate) call: Call,
    pub(crate) service: Option<Arc<dyn Any + Send + Sync>>,
    /// About how many bytes its definition takes in a list (as 2025-11-25 writes it), for
    /// pages bounded in bytes.
    wire_bytes: usize,
}

impl Entry {
    pub(crate) fn new(
        def: ToolDef,
        call: Call,
        service: Option<Arc<dyn Any + Send + Sync>>,
    ) -> Self {
        let wire_bytes = json_len(&def.wire(ProtocolVersion::V2025_11_25));
        Entry {
            name: Arc::from(def.name()),
            def: Arc::new(def),
            call,
            service,
            wire_bytes,
        }
    }

    /// Whether the tool is in `tools/list` unless a session's selection says otherwise, for a
    /// client that declared the MCP Apps extension (`apps`) or not.
    fn listed_by_default(&self, apps: bool) -> bool {
        !self.def.starts_hidden() && self.def.listed_for(apps)
    }
}

/// The lookup key of a tool's name: its length, then its first eight bytes (big-endian,
/// zero-padded), as one integer. Names with different keys differ, and order by them; names
/// with the same one are compared.
fn name_key(name: &str) -> u128 {
    let mut head = [0u8; 8];
    let n = name.len().min(8);
    head[..n].copy_from_slice(&name.as_bytes()[..n]);
    // Tool names are short (the specification allows 128 characters).
    (name.len() as u128) << 64 | u128::from(u64::from_be_bytes(head))
}

/// How lists are cut into pages: at most `size` items, and at most about `bytes` bytes of
/// them (a single item larger than that has a page of its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Paging {
    pub(crate) size: usize,
    pub(crate) bytes: usize,
}

impl Paging {
    /// Where each page of `entries` starts (at least one page, maybe empty).
    fn starts(self, entries: &[&Entry]) -> Vec<usize> {
        let mut starts = vec![0];
        let (mut count, mut bytes) = (0, 0);
        for (i, entry) in entries.iter().enumerate() {
            if count > 0 && (count == self.size || bytes + entry.wire_bytes > self.bytes) {
                starts.push(i);
                (count, bytes) = (0, 0);
            }
            count += 1;
            bytes += entry.wire_bytes;
        }
        starts
    }
}

/// What a stateless (2026-07-28) list carries beside its items: the server's identity and
/// the cache hints the server gives lists.
pub(crate) struct Decor {
    pub(crate) info: Arc<Implementation>,
    pub(crate) hints: CacheHints,
    /// The built-in tool search, added to a catalog that holds deferred tools.
    pub(crate) search_tool: Option<Arc<Entry>>,
    /// Schemas listed with their `$ref`s, not inlined ([`Server::keep_schema_refs`]).
    ///
    /// [`Server::keep_schema_refs`]: crate::server::Server::keep_schema_refs
    pub(crate) keep_refs: bool,
}

/// The name of the built-in search tool.
pub const SEARCH_TOOL: &str = "search_tools";

/// The tools of a running server, sorted by name.
pub(crate) struct Catalog {
    entries: Vec<Arc<Entry>>,
    /// The entries by [`name_key`] then name: what a call finds its tool in, by a binary
    /// search that compares names (no hash of a name a client chose, so no collisions it
    /// could choose either), mostly as two integers.
    index: Vec<(u128, usize)>,
    /// The `tools/list` pages of the default selection, rendered once per shape of protocol
    /// version: for clients without the MCP Apps extension (`[0]`) and with it (`[1]`).
    pages: [[Vec<String>; 4]; 2],
    paging: Paging,
    decor: Arc<Decor>,
    /// The BM25 index of the deferred tools, built at the first search.
    search: OnceLock<SearchIndex>,
    /// Whether a tool declares OAuth scopes (then a caller's list depends on its token).
    scoped: bool,
    /// Whether a tool is listed to some callers only (a gateway's tools of one user).
    personal: bool,
}

impl Catalog {
    /// Builds the catalog from records, checking names, services, states and schemas.
    pub(crate) fn build(
        server: &str,
        mut records: Vec<ToolRecord>,
        services: &TypeMap,
        states: &TypeMap,
        paging: Paging,
        decor: Arc<Decor>,
    ) -> Result<Catalog, StartError> {
        let mut problems = Vec::new();
        records.sort_by(|a, b| (a.name, a.file, a.line).cmp(&(b.name, b.file, b.line)));
        records.dedup_by(|b, a| a.same_definition(b));
        for pair in records.windows(2) {
            if pair[0].name == pair[1].name {
                problems.push(format!(
                    "two tools are named `{}`: one at {}, one at {}; rename one with `#[tool(name = \"…\")]`",
                    pair[0].name,
                    pair[0].site(),
                    pair[1].site()
                ));
            }
        }
        let mut entries = Vec::with_capacity(records.len());
        for record in &records {
            let service = record.service.and_then(|st| {
                let found = services.get(&(st.id)()).cloned();
                if found.is_none() {
                    let ty = (st.name)();
                    let short = ty.rsplit("::").next().unwrap_or(ty);
                    problems.push(format!(
                        "tool `{}` ({}) runs on a `{ty}`, but no instance was given to the server: add `.service({short} {{ … }})` to the `Server` builder",
                        record.name,
                        record.site()
                    ));
                }
                found
            });
            let mut builder = DefBuilder::for_server(record.name, server);
            (record.define)(&mut builder);
            match builder.finish() {
                Ok(def) => {
                    for (id, ty) in def.states() {
                        if !states.contains_key(id) {
                            problems.push(format!(
                                "tool `{}` ({}) takes `State<{ty}>`, but no such value was given to the server: add `.state(…)` to the `Server` builder",
                                record.name,
                                record.site()
                            ));
                        }
                    }
                    entries.push(Arc::new(Entry::new(
                        def,
                        Call::Static(record.call),
                        service,
                    )));
                }
                Err(errs) => {
                    for e in errs {
                        problems.push(format!("tool `{}` ({}): {e}", record.name, record.site()));
                    }
                }
            }
        }
        let deferred = entries.iter().any(|e| e.def.deferred());
        if deferred && let Some(own) = records.iter().find(|r| r.name == SEARCH_TOOL) {
            problems.push(format!(
                "tool `{SEARCH_TOOL}` ({}) takes the name of the built-in tool search, which the deferred tools (`defer_loading`) need; rename it with `#[tool(name = \"…\")]`",
                own.site()
            ));
        }
        if !problems.is_empty() {
            return Err(StartError::new(problems));
        }
        Ok(Catalog::from_entries(entries, paging, decor))
    }

    /// A catalog of these entries (sorted here), with its pages rendered.
    pub(crate) fn from_entries(
        mut entries: Vec<Arc<Entry>>,
        paging: Paging,
        decor: Arc<Decor>,
    ) -> Catalog {
        // Deferred tools need the search that finds them (unless a dynamic tool took its name).
        if entries.iter().any(|e| e.def.deferred())
            && !entries.iter().any(|e| &*e.name == SEARCH_TOOL)
        {
            entries.extend(decor.search_tool.clone());
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        let mut index: Vec<_> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (name_key(&e.name), i))
            .collect();
        index.sort_by(|(a, i), (b, j)| {
            a.cmp(b)
                .then_with(|| entries[*i].name.cmp(&entries[*j].name))
        });
        let paging = Paging {
            size: paging.size.max(1),
            bytes: paging.bytes,
        };
        // A list a call can change (a hidden tool revealed by a tool manager) is private and
        // stale at once: a client that cached it would miss what its own call revealed. A
        // list with app-only tools depends on the client's capabilities: private, so no
        // shared cache hands one client's list to another; so does a list with tools that need
        // scopes, which depends on the caller's token.
        let scoped = entries.iter().any(|e| !e.def.scopes().is_empty());
        // A list with tools of one user changes when that user signs in: as private and as
        // stale as one a tool manager changes.
        let personal = entries.iter().any(|e| e.def.audience.is_some());
        let hints = if personal || entries.iter().any(|e| e.def.starts_hidden()) {
            CacheHints {
                cache_scope: CacheScope::Private,
                ttl_ms: 0,
            }
        } else if scoped || entries.iter().any(|e| e.def.app_only()) {
            CacheHints {
                cache_scope: CacheScope::Private,
                ..decor.hints
            }
        } else {
            decor.hints
        };
        let pages = [false, true].map(|apps| {
            let listed: Vec<&Entry> = entries
                .iter()
                .map(|e| &**e)
                .filter(|e| e.listed_by_default(apps))
                .collect();
            let starts = paging.starts(&listed);
            ProtocolVersion::SHAPES.map(|version| {
                (0..starts.len())
                    .map(|i| render(&listed, &starts, i, version, (&decor, hints)))
                    .collect()
            })
        });
        Catalog {
            entries,
            pages,
            index,
            paging,
            decor,
            search: OnceLock::new(),
            scoped,
            personal,
        }
    }

    /// Whether a tool is listed to some callers only.
    pub(crate) fn has_personal(&self) -> bool {
        self.personal
    }

    /// Whether a tool declares OAuth scopes.
    pub(crate) fn has_scopes(&self) -> bool {
        self.scoped
    }

    /// Every scope the tools declare, sorted, each once (for `scopes_supported`).
    pub(crate) fn scopes(&self) -> Vec<String> {
        let mut scopes: Vec<String> = self
            .entries
            .iter()
            .flat_map(|e| e.def.scopes().iter().cloned())
            .collect();
        scopes.sort();
        scopes.dedup();
        scopes
    }

    /// Every scope the read-only tools declare, sorted, each once: what a client reading
    /// only needs (the scopes a `401` challenge names by default).
    pub(crate) fn reading_scopes(&self) -> Vec<String> {
        let mut scopes: Vec<String> = self
            .entries
            .iter()
            .filter(|e| e.def.annotations().read_only == Some(true))
            .flat_map(|e| e.def.scopes().iter().cloned())
            .collect();
        scopes.sort();
        scopes.dedup();
        scopes
    }

    /// The deferred tools that best match `query`: entry indexes, best first, with scores.
    pub(crate) fn search(&self, query: &str, limit: usize) -> Vec<(usize, f64)> {
        self.search
            .get_or_init(|| SearchIndex::new(self.entries.iter().map(|e| &*e.def)))
            .search(query, limit)
    }

    /// This catalog with `entry` added (replacing a dynamic tool of the same name) or the tool
    /// `remove` removed.
    pub(crate) fn changed(&self, add: Option<Arc<Entry>>, remove: Option<&str>) -> Catalog {
        let mut entries: Vec<Arc<Entry>> = self
            .entries
            .iter()
            .filter(|e| Some(&*e.name) != remove && add.as_ref().is_none_or(|a| a.name != e.name))
            .cloned()
            .collect();
        entries.extend(add);
        Catalog::from_entries(entries, self.paging, self.decor.clone())
    }

    /// This catalog with `add` added (replacing dynamic tools of the same names) and the tools
    /// `remove` removed, rendered once.
    #[cfg(feature = "client")]
    pub(crate) fn changed_many(&self, add: Vec<Arc<Entry>>, remove: &[&str]) -> Catalog {
        let mut entries: Vec<Arc<Entry>> = self
            .entries
            .iter()
            .filter(|e| !remove.contains(&&*e.name) && !add.iter().any(|a| a.name == e.name))
            .cloned()
            .collect();
        entries.extend(add);
        Catalog::from_entries(entries, self.paging, self.decor.clone())
    }

    /// The tool `name` (the last of the name, should two have it).
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<Entry>> {
        let key = name_key(name);
        // Two names of one key have the same length and first eight bytes: the rest of them
        // (if any) tells them apart.
        let tail = |i: usize| self.entries[i].name.as_bytes().get(8..).unwrap_or_default();
        let own = name.as_bytes().get(8..).unwrap_or_default();
        // The first place in the index after every name up to `name`.
        let (mut low, mut high) = (0, self.index.len());
        while low < high {
            let middle = low + (high - low) / 2;
            let (k, i) = self.index[middle];
            match k < key || (k == key && tail(i) <= own) {
                true => low = middle + 1,
                false => high = middle,
            }
        }
        let &(k, i) = self.index[..low].last()?;
        (k == key && tail(i) == own).then(|| &self.entries[i])
    }

    /// Whether schemas are listed with their `$ref`s.
    pub(crate) fn keeps_refs(&self) -> bool {
        self.decor.keep_refs
    }

    /// How many items a page of a list holds at most.
    pub(crate) fn page_size(&self) -> usize {
        self.paging.size
    }

    pub(crate) fn entries(&self) -> &[Arc<Entry>] {
        &self.entries
    }

    /// The `tools/list` result of the default selection for a cursor (`None`: the first page),
    /// as JSON text, for a client that declared the MCP Apps extension (`apps`) or not;
    /// `None` for a cursor that names no page.
    pub(crate) fn page(
        &self,
        cursor: Option<&str>,
        version: ProtocolVersion,
        apps: bool,
    ) -> Option<&str> {
        let pages = &self.pages[usize::from(apps)][version.shape()];
        pages
            .get(page_index(cursor, pages.len())?)
            .map(String::as_str)
    }
}

/// The page a cursor names: `None` is the first, `"i"` the i-th of `count` (1 ≤ i < count).
pub(crate) fn page_index(cursor: Option<&str>, count: usize) -> Option<usize> {
    match cursor {
        None => Some(0),
        Some(c) => c.parse::<usize>().ok().filter(|&i| i > 0 && i < count),
    }
}

/// Renders one `tools/list` page of a list the session (or principal) filtered; `None` for a
/// bad cursor. In 2026-07-28 such a list is private to who asked.
pub(crate) fn render_page(
    entries: &[&Entry],
    cursor: Option<&str>,
    version: ProtocolVersion,
    catalog: &Catalog,
) -> Option<String> {
    let starts = catalog.paging.starts(entries);
    let i = page_index(cursor, starts.len())?;
    // A selection of the client's own, changed by its calls: private, and stale at once.
    let hints = CacheHints {
        cache_scope: CacheScope::Private,
        ttl_ms: 0,
    };
    Some(render(
        entries,
        &starts,
        i,
        version,
        (&catalog.decor, hints),
    ))
}

/// Page `page` of `entries`, whose pages start at `starts`.
fn render(
    entries: &[&Entry],
    starts: &[usize],
    page: usize,
    version: ProtocolVersion,
    (decor, hints): (&Decor, CacheHints),
) -> String {
    let end = starts.get(page + 1).copied().unwrap_or(entries.len());
    let chunk = &entries[starts[page].min(end)..end];
    let list = ListTools {
        tools: chunk
            .iter()
            .map(|e| e.def.wire_as(version, decor.keep_refs))
            .collect(),
        next_cursor: (page + 1 < starts.len()).then(|| (page + 1).to_string()),
    };
    if version.is_stateless() {
        json_string(&Complete {
            result: list,
            result_type: "complete",
            cache: Some(hints),
            meta: ResultMeta {
                server_info: &decor.info,
                extra: None,
            },
        })
    } else {
        json_string(&list)
    }
}

#[cfg(test)]
mod tests {
    use crate::server::Server;
    use crate::tool::DynamicTool;

    #[test]
    fn tools_are_found_by_their_exact_name_only() {
        // Names alike in length and in their first eight bytes, and prefixes of each other.
        let names = [
            "b",
            "a.b",
            "ab",
            "a",
            "a-b",
            "b_c",
            "zz",
            "abcdefgh",
            "abcdefgh1",
            "abcdefgh2",
            "abcdefgi1",
            "abcdefg",
        ];
        let mut server = Server::new("catalog", "1").without_registry();
        for name in names {
            server = server.dynamic_tool(DynamicTool::new(name, name, |_| async { "ok" }));
        }
        let handle = server.build().unwrap();
        let catalog = handle.catalog();
        for name in names {
            assert_eq!(catalog.get(name).map(|e| &*e.name), Some(name));
        }
        for unknown in [
            "",
            "0",
            "A",
            "a.",
            "aa",
            "a-bc",
            "b_",
            "c",
            "zzz",
            "~",
            "abcdefgh0",
            "abcdefgh3",
            "abcdefgh12",
            "abcdef",
            "abcdefgi",
        ] {
            assert!(catalog.get(unknown).is_none(), "{unknown:?} is no tool");
        }
    }
}
