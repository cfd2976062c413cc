//! The tool registry: records submitted by generated code (through `inventory`, or explicitly
//! as a [`ToolSet`]), and the immutable [`Catalog`] a server builds from them when it starts.
//!
//! Records are built only from `&'static str`s and `fn` pointers, so they can live in statics.
//! Everything derived from them (schemas, validators, the `tools/list` pages) is computed once,
//! in [`Catalog::build`], and every problem found there is reported together.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::extract::ToolCall;
use crate::protocol::Era;
use crate::result::ToolResult;
use crate::schema::{DefBuilder, ToolDef};

/// The future a tool call runs as.
pub type BoxFuture = Pin<Box<dyn Future<Output = ToolResult> + Send + 'static>>;

/// The type of the service instance a tool method runs on.
#[derive(Clone, Copy)]
pub struct ServiceType {
    /// The type's id.
    pub id: fn() -> TypeId,
    /// The type's name, for messages.
    pub name: fn() -> &'static str,
}

impl ServiceType {
    /// The service type `T`.
    pub const fn of<T: Send + Sync + 'static>() -> Self {
        ServiceType {
            id: TypeId::of::<T>,
            name: std::any::type_name::<T>,
        }
    }
}

/// One tool, as generated code registers it.
#[derive(Clone, Copy)]
pub struct ToolRecord {
    /// The tool's name.
    pub name: &'static str,
    /// Source file of the definition.
    pub file: &'static str,
    /// Source line of the definition.
    pub line: u32,
    /// The service type of a method tool; `None` for a free function.
    pub service: Option<ServiceType>,
    /// Fills in the definition: description, annotations, parameters, output.
    pub define: fn(&mut DefBuilder),
    /// Runs one call.
    pub call: fn(ToolCall) -> BoxFuture,
}

impl fmt::Debug for ToolRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tool `{}` ({}:{})", self.name, self.file, self.line)
    }
}

impl ToolRecord {
    fn site(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }

    fn same_definition(&self, other: &ToolRecord) -> bool {
        self.name == other.name && self.file == other.file && self.line == other.line
    }
}

inventory::collect!(ToolRecord);

/// The specification's rule for tool names: 1–128 characters of `A-Z a-z 0-9 _ - .` (the
/// macros check it at compile time; dynamic tools here).
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let len = name.chars().count();
    if !(1..=128).contains(&len) {
        return Err(format!(
            "a tool name has 1 to 128 characters, `{name}` has {len}"
        ));
    }
    match name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        Some(bad) => Err(format!(
            "tool name `{name}` contains {bad:?}: tool names use only `A-Z`, `a-z`, `0-9`, `_`, `-` and `.`"
        )),
        None => Ok(()),
    }
}

/// Every tool registered through `inventory` in this binary.
pub(crate) fn registered() -> impl Iterator<Item = &'static ToolRecord> {
    inventory::iter::<ToolRecord>.into_iter()
}

/// A set of tools given to a server explicitly, without the `inventory` registry: what
/// `#[tools]` generates as `Type::mcp_tools()`.
#[derive(Debug, Clone, Default)]
pub struct ToolSet {
    records: Vec<ToolRecord>,
}

impl ToolSet {
    /// A set of the given records.
    pub fn new(records: Vec<ToolRecord>) -> Self {
        ToolSet { records }
    }

    /// Adds the tools of another set.
    #[must_use]
    pub fn with(mut self, other: ToolSet) -> Self {
        self.records.extend(other.records);
        self
    }

    /// The records.
    pub fn records(&self) -> &[ToolRecord] {
        &self.records
    }
}

/// Why a server could not start. Lists every problem found, not only the first.
#[derive(Clone, PartialEq, Eq)]
pub struct StartError {
    problems: Vec<String>,
}

impl StartError {
    pub(crate) fn new(problems: Vec<String>) -> Self {
        StartError { problems }
    }

    /// Each problem, one sentence each.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the MCP server cannot start:")?;
        for p in &self.problems {
            write!(f, "\n  - {p}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for StartError {}

/// The service instances given to a server, by type.
pub(crate) type Services = HashMap<TypeId, Arc<dyn Any + Send + Sync>>;

/// How a tool runs: a function the macros generated, or a closure of a dynamic tool.
#[derive(Clone)]
pub(crate) enum Call {
    Static(fn(ToolCall) -> BoxFuture),
    Dynamic(Arc<dyn Fn(ToolCall) -> BoxFuture + Send + Sync>),
}

impl Call {
    pub(crate) fn invoke(&self, call: ToolCall) -> BoxFuture {
        match self {
            Call::Static(f) => f(call),
            Call::Dynamic(f) => f(call),
        }
    }
}

/// One tool ready to be called.
pub(crate) struct Entry {
    pub(crate) def: Arc<ToolDef>,
    pub(crate) name: Arc<str>,
    pub(crate) call: Call,
    pub(crate) service: Option<Arc<dyn Any + Send + Sync>>,
}

/// The tools of a running server: sorted by name, with their `tools/list` pages rendered once.
/// Adding or removing a tool while serving builds a new catalog.
pub(crate) struct Catalog {
    entries: Vec<Arc<Entry>>,
    index: HashMap<Arc<str>, usize>,
    /// The `tools/list` pages of the default selection, rendered once per protocol era.
    pages: [Vec<String>; 3],
    page_size: usize,
}

impl Catalog {
    /// Builds the catalog from records, checking names, services and schemas.
    pub(crate) fn build(
        server: &str,
        records: Vec<ToolRecord>,
        services: &Services,
        states: &Services,
        page_size: usize,
    ) -> Result<Catalog, StartError> {
        let mut problems = Vec::new();
        let mut records = records;
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
            let service = match record.service {
                None => None,
                Some(st) => match services.get(&(st.id)()) {
                    Some(s) => Some(s.clone()),
                    None => {
                        let ty = (st.name)();
                        let short = ty.rsplit("::").next().unwrap_or(ty);
                        problems.push(format!(
                            "tool `{}` ({}) runs on a `{ty}`, but no instance was given to the server: add `.service({short} {{ … }})` to the `Server` builder",
                            record.name,
                            record.site()
                        ));
                        None
                    }
                },
            };
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
                    entries.push(Arc::new(Entry {
                        def: Arc::new(def),
                        name: Arc::from(record.name),
                        call: Call::Static(record.call),
                        service,
                    }));
                }
                Err(errs) => {
                    for e in errs {
                        problems.push(format!("tool `{}` ({}): {e}", record.name, record.site()));
                    }
                }
            }
        }
        if !problems.is_empty() {
            return Err(StartError::new(problems));
        }
        Ok(Catalog::from_entries(entries, page_size))
    }

    /// A catalog of these entries (sorted here), with its pages rendered.
    pub(crate) fn from_entries(mut entries: Vec<Arc<Entry>>, page_size: usize) -> Catalog {
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        let index = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.name.clone(), i))
            .collect();
        let page_size = page_size.max(1);
        let listed: Vec<&Entry> = entries
            .iter()
            .map(|e| &**e)
            .filter(|e| !e.def.hidden() && e.def.for_model())
            .collect();
        let pages = Era::ALL.map(|era| render_pages(&listed, page_size, era));
        Catalog {
            entries,
            index,
            pages,
            page_size,
        }
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
        Catalog::from_entries(entries, self.page_size)
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<Entry>> {
        self.index.get(name).map(|&i| &self.entries[i])
    }

    pub(crate) fn page_size(&self) -> usize {
        self.page_size
    }

    pub(crate) fn entries(&self) -> &[Arc<Entry>] {
        &self.entries
    }

    /// The `tools/list` result for a cursor (`None`: the first page), as JSON text.
    pub(crate) fn page(&self, cursor: Option<&str>, era: Era) -> Option<&str> {
        let pages = &self.pages[era.index()];
        let i = match cursor {
            None => 0,
            Some(c) => c
                .parse::<usize>()
                .ok()
                .filter(|&i| i > 0 && i < pages.len())?,
        };
        pages.get(i).map(String::as_str)
    }
}

fn render_pages(entries: &[&Entry], page_size: usize, era: Era) -> Vec<String> {
    let count = entries.len().div_ceil(page_size).max(1);
    (0..count)
        .map(|i| render(entries, page_size, i, era))
        .collect()
}

/// Renders one `tools/list` page of a filtered list; `None` for a bad cursor.
pub(crate) fn render_page(
    entries: &[&Entry],
    page_size: usize,
    cursor: Option<&str>,
    era: Era,
) -> Option<String> {
    let count = entries.len().div_ceil(page_size).max(1);
    let i = match cursor {
        None => 0,
        Some(c) => c.parse::<usize>().ok().filter(|&i| i > 0 && i < count)?,
    };
    Some(render(entries, page_size, i, era))
}

fn render(entries: &[&Entry], page_size: usize, page: usize, era: Era) -> String {
    let start = page * page_size;
    let chunk = &entries[start.min(entries.len())..(start + page_size).min(entries.len())];
    let mut m = Map::with_capacity(2);
    m.insert(
        "tools".into(),
        Value::Array(
            chunk
                .iter()
                .map(|e| era.shape_tool(e.def.to_json()))
                .collect(),
        ),
    );
    if start + page_size < entries.len() {
        m.insert("nextCursor".into(), Value::String((page + 1).to_string()));
    }
    Value::Object(m).to_string()
}
