//! Prompts, resources and resource templates defined with `#[prompt]`, `#[resource]` and
//! `#[resource_template]`: the [`OfferingRecord`]s generated code registers (through
//! `inventory`, as tools are, or given explicitly as an [`OfferingSet`]), and how a starting
//! server turns them into offerings beside those given with the builders.
//!
//! A record is built only from `&'static str`s and `fn` pointers, so it can live in a static;
//! what it defines is built when the server starts, with the service instance of a method's
//! type, and checked then: a missing instance or state, two definitions of one name, URI or
//! template.

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

use crate::tool::extract::TypeMap;
use crate::tool::{DefBuilder, ServiceType};

use crate::server::offerings::Offerings;
use crate::server::offerings::prompt::Prompt;
use crate::server::offerings::resource::{Resource, ResourceTemplate};

/// What a record defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum OfferingKind {
    /// A prompt (`#[prompt]`), keyed by its name.
    Prompt,
    /// A resource with a fixed URI (`#[resource]`), keyed by its URI.
    Resource,
    /// A resource template (`#[resource_template]`), keyed by its URI template.
    ResourceTemplate,
}

impl OfferingKind {
    fn noun(self) -> &'static str {
        match self {
            OfferingKind::Prompt => "prompt",
            OfferingKind::Resource => "resource",
            OfferingKind::ResourceTemplate => "resource template",
        }
    }
}

/// One prompt, resource or resource template, as generated code registers it.
#[derive(Clone, Copy)]
pub struct OfferingRecord {
    /// What it is.
    pub kind: OfferingKind,
    /// What names it: a prompt's name, a resource's URI, a template's URI template.
    pub key: &'static str,
    /// Source file of the definition.
    pub file: &'static str,
    /// Source line of the definition.
    pub line: u32,
    /// The service type of a method; `None` for a free function.
    pub service: Option<ServiceType>,
    /// Builds it when the server starts.
    pub build: fn(&mut Build) -> Result<Offering, String>,
}

impl fmt::Debug for OfferingRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} `{}` ({})", self.kind.noun(), self.key, self.site())
    }
}

impl OfferingRecord {
    fn site(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }

    fn same_definition(&self, other: &OfferingRecord) -> bool {
        (self.kind, self.key, self.file, self.line)
            == (other.kind, other.key, other.file, other.line)
    }
}

inventory::collect!(OfferingRecord);

/// Prompts, resources and templates given to a server explicitly, without the `inventory`
/// registry: what `#[tools]` generates as `Type::mcp_offerings()` for an impl block with
/// `#[prompt]`, `#[resource]` or `#[resource_template]` methods (see `Server::offerings`).
#[derive(Debug, Clone, Default)]
pub struct OfferingSet {
    records: Vec<OfferingRecord>,
}

impl OfferingSet {
    /// A set of the given records.
    pub fn new(records: Vec<OfferingRecord>) -> Self {
        OfferingSet { records }
    }

    /// Adds the records of another set.
    #[must_use]
    pub fn with(mut self, other: OfferingSet) -> Self {
        self.records.extend(other.records);
        self
    }

    /// The records.
    pub fn records(&self) -> &[OfferingRecord] {
        &self.records
    }
}

/// A built prompt, resource or template.
#[doc(hidden)]
pub enum Offering {
    /// A prompt.
    Prompt(Prompt),
    /// A resource.
    Resource(Resource),
    /// A resource template.
    ResourceTemplate(ResourceTemplate),
}

/// What a record's `build` has while the server starts: the service instance of a method's
/// type, and the states its context values need (checked once it is built).
#[doc(hidden)]
pub struct Build {
    pub(crate) service: Option<Arc<dyn Any + Send + Sync>>,
    pub(crate) needs: Vec<(TypeId, &'static str)>,
    /// What is wrong with the definition, found while building it.
    pub(crate) problems: Vec<String>,
}

/// Every offering registered through `inventory` in this binary.
fn registered() -> impl Iterator<Item = &'static OfferingRecord> {
    inventory::iter::<OfferingRecord>.into_iter()
}

/// What a server starts with: the records given explicitly and, unless it ignores the
/// registry, the registered ones.
pub(crate) fn records(mut given: Vec<OfferingRecord>, registry: bool) -> Vec<OfferingRecord> {
    if registry {
        given.extend(registered().copied());
    }
    given
}

impl Offerings {
    /// Builds the records and adds what they define, after what the builders gave (sorted by
    /// key, so lists do not depend on link order). Every problem is returned: a key given
    /// twice, a missing service instance or state, a definition that does not build.
    pub(crate) fn add_records(
        &mut self,
        mut records: Vec<OfferingRecord>,
        services: &TypeMap,
        states: &TypeMap,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        records
            .sort_by(|a, b| (a.kind, a.key, a.file, a.line).cmp(&(b.kind, b.key, b.file, b.line)));
        records.dedup_by(|b, a| a.same_definition(b));
        for pair in records.windows(2) {
            if (pair[0].kind, pair[0].key) == (pair[1].kind, pair[1].key) {
                problems.push(format!(
                    "two {}s are `{}`: one at {}, one at {}",
                    pair[0].kind.noun(),
                    pair[0].key,
                    pair[0].site(),
                    pair[1].site()
                ));
            }
        }
        for record in &records {
            if self.given(record) {
                problems.push(format!(
                    "{} `{}` ({}) is also given with the `Server` builder",
                    record.kind.noun(),
                    record.key,
                    record.site()
                ));
                continue;
            }
            let service = match record.service {
                None => None,
                Some(st) => match services.get(&(st.id)()) {
                    Some(found) => Some(found.clone()),
                    None => {
                        let ty = (st.name)();
                        let short = ty.rsplit("::").next().unwrap_or(ty);
                        problems.push(format!(
                            "{} `{}` ({}) is defined on `{ty}`, but no instance was given to the server: add `.service({short} {{ … }})` to the `Server` builder",
                            record.kind.noun(),
                            record.key,
                            record.site()
                        ));
                        continue;
                    }
                },
            };
            let mut build = Build {
                service,
                needs: Vec::new(),
                problems: Vec::new(),
            };
            let built = (record.build)(&mut build);
            for problem in &build.problems {
                problems.push(format!(
                    "{} `{}` ({}): {problem}",
                    record.kind.noun(),
                    record.key,
                    record.site()
                ));
            }
            for (id, ty) in &build.needs {
                if !states.contains_key(id) {
                    problems.push(format!(
                        "{} `{}` ({}) takes `State<{ty}>`, but no such value was given to the server: add `.state(…)` to the `Server` builder",
                        record.kind.noun(),
                        record.key,
                        record.site()
                    ));
                }
            }
            match built {
                Ok(Offering::Prompt(p)) => self.prompts.push(p),
                Ok(Offering::Resource(r)) => self.resources.push(r),
                Ok(Offering::ResourceTemplate(t)) => self.templates.push(t),
                Err(e) => problems.push(format!(
                    "{} `{}` ({}): {e}",
                    record.kind.noun(),
                    record.key,
                    record.site()
                )),
            }
        }
        problems
    }

    /// Whether the builders gave what `record` defines.
    fn given(&self, record: &OfferingRecord) -> bool {
        match record.kind {
            OfferingKind::Prompt => self.prompts.iter().any(|p| p.name == record.key),
            OfferingKind::Resource => self.resources.iter().any(|r| r.uri() == record.key),
            OfferingKind::ResourceTemplate => {
                self.templates.iter().any(|t| t.template == record.key)
            }
        }
    }
}

impl Build {
    /// Records the states a context value of type `T` needs.
    pub(crate) fn require<T, M>(&mut self)
    where
        T: crate::tool::FromToolCall<M>,
    {
        // A context value says what it needs to a tool's definition: ask one, then read it.
        let mut def = DefBuilder::new("needs");
        let spec = crate::tool::ParamSpec {
            name: "",
            description: None,
            default: false,
            header: None,
        };
        T::describe(&mut def, &spec);
        if let Ok(def) = def.finish() {
            self.needs.extend_from_slice(def.states());
        }
    }

    /// The service instance a method runs on.
    pub(crate) fn service<T: Send + Sync + 'static>(&self) -> Result<Arc<T>, String> {
        self.service
            .clone()
            .and_then(|s| s.downcast::<T>().ok())
            .ok_or_else(|| {
                format!(
                    "internal error: no `{}` instance was given to the server",
                    std::any::type_name::<T>()
                )
            })
    }
}
