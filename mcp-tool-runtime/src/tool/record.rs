//! How generated code registers tools: [`ToolRecord`]s, submitted through `inventory` or given
//! explicitly as a [`ToolSet`], and how a tool runs ([`Call`]).
//!
//! Records are built only from `&'static str`s and `fn` pointers, so they can live in statics.

use std::any::TypeId;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::tool::definition::builder::DefBuilder;
use crate::tool::extract::ToolCall;
use crate::tool::result::ToolResult;

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
        write!(f, "tool `{}` ({})", self.name, self.site())
    }
}

impl ToolRecord {
    /// Where the tool is defined (`file:line`).
    pub(crate) fn site(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }

    pub(crate) fn same_definition(&self, other: &ToolRecord) -> bool {
        self.name == other.name && self.file == other.file && self.line == other.line
    }
}

inventory::collect!(ToolRecord);

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

    pub(crate) fn is_dynamic(&self) -> bool {
        matches!(self, Call::Dynamic(_))
    }
}
