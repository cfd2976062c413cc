//! A finished tool definition, [`ToolDef`]: what `tools/list` shows (a view of the wire model
//! per protocol version) and what each call is validated against, with the wording of validation
//! errors that names the field and the rule.

use std::any::TypeId;
use std::time::Duration;

use schemars::generate::SchemaSettings;
use schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Value};

use crate::protocol::ProtocolVersion;
use crate::protocol::wire::{self, ToolAnnotations};

use crate::tool::definition::coerce::{Coerced, Coercion};
use crate::tool::definition::headers::ParamHeader;
use crate::tool::definition::quick::Members;
use crate::tool::definition::validate::{ValidationError, Validator};

/// The schema generator settings every tool uses: JSON Schema 2020-12, definitions under
/// `$defs`, no `$schema` keyword on subschemas.
pub(crate) fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|s| s.meta_schema = None)
        .into_generator()
}

/// The behaviour hints of a tool (`ToolAnnotations`). Unset hints are omitted so the
/// specification's defaults apply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Annotations {
    /// The tool does not modify its environment.
    pub read_only: Option<bool>,
    /// The tool may perform destructive updates.
    pub destructive: Option<bool>,
    /// Repeated calls with the same arguments have no additional effect.
    pub idempotent: Option<bool>,
    /// The tool may interact with an open world of external entities.
    pub open_world: Option<bool>,
}

impl Annotations {
    /// The hints as the wire writes them, with the tool's title.
    fn wire<'a>(&self, title: Option<&'a str>) -> ToolAnnotations<'a> {
        ToolAnnotations {
            title,
            read_only_hint: self.read_only,
            destructive_hint: self.destructive,
            idempotent_hint: self.idempotent,
            open_world_hint: self.open_world,
        }
    }
}

/// Follows a top-level `$ref` into the generator's definitions (schemars refers to a named
/// struct or enum instead of inlining it).
pub(crate) fn resolve_ref(generator: &SchemaGenerator, schema: Schema) -> Schema {
    if let Some(Value::String(r)) = schema.get("$ref")
        && let Some(def) = r
            .rsplit('/')
            .next()
            .and_then(|n| generator.definitions().get(n))
        && let Ok(s) = Schema::try_from(def.clone())
    {
        return s;
    }
    schema
}

/// Drops the definitions nothing refers to (a struct whose schema was inlined at the root).
pub(crate) fn retain_referenced(defs: &mut Map<String, Value>, root: &Value) {
    let text = root.to_string() + &Value::Object(defs.clone()).to_string();
    defs.retain(|k, _| text.contains(&format!("\"#/$defs/{k}\"")));
}

/// Whether a tool runs as a task (MCP tasks: the client polls for the result instead of
/// holding the request open).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum TaskSupport {
    /// Never as a task (the default).
    #[default]
    Forbidden,
    /// As a task when the client asks for one (2025-11-25) or can take one (2026-07-28),
    /// else as a plain call.
    Optional,
    /// Only as a task: a client that cannot take one is refused.
    Required,
}

impl TaskSupport {
    /// The wire name: `forbidden`, `optional` or `required`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
}

/// A finished tool definition: what `tools/list` shows and what each call is validated against.
pub struct ToolDef {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) annotations: Annotations,
    pub(crate) input_schema: Value,
    pub(crate) output_schema: Option<Value>,
    pub(crate) icons: Option<Value>,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) wrap_output: bool,
    pub(crate) validator: Validator,
    pub(crate) hidden: bool,
    pub(crate) always_visible: bool,
    pub(crate) deferred: bool,
    /// Served over REST too (`rest = false`: MCP only).
    pub(crate) rest: bool,
    /// Whether its parameters take arguments by name or whole as a type (`Args<T>`), not as
    /// a dynamic tool's map: only then are a call's arguments read from their text.
    pub(crate) by_name: bool,
    pub(crate) timeout: Option<Duration>,
    pub(crate) states: Vec<(TypeId, &'static str)>,
    pub(crate) for_model: bool,
    pub(crate) for_app: bool,
    pub(crate) ui: Option<(String, &'static str, &'static str)>,
    pub(crate) examples: Option<(Option<Value>, Option<Value>)>,
    pub(crate) output_validator: Option<Validator>,
    pub(crate) param_headers: Vec<ParamHeader>,
    pub(crate) task_support: TaskSupport,
    /// The OAuth scopes a caller needs to see and call the tool.
    pub(crate) scopes: Box<[String]>,
    /// The schemas as listed, their `$defs` inlined (`None`: as they are, having none).
    pub(crate) listed: Option<Box<ListedSchemas>>,
    /// Why a schema keeps its references (a recursive type), when one does.
    pub(crate) refs_kept: Option<String>,
    /// Which arguments a model got wrong may be converted (`coerce`).
    pub(crate) coercion: Coercion,
    /// Who sees the tool in lists, when not everybody does (a gateway's tools of one user).
    pub(crate) audience: Option<Audience>,
}

/// Who sees a tool in lists when not every caller does: asked with the caller's key
/// ([`user_key`]), `None` for a caller nobody vouched for. Calls are not filtered by it (the
/// tool itself refuses whom it does not serve).
#[derive(Clone)]
pub(crate) struct Audience(pub(crate) std::sync::Arc<Shown>);

/// Whether the caller with a key sees a tool.
pub(crate) type Shown = dyn Fn(Option<&str>) -> bool + Send + Sync;

impl std::fmt::Debug for Audience {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Audience")
    }
}

/// The key a caller is known by where something is kept per user (a gateway's per-user
/// connections): `subject …` for an authenticated caller, `local` for the one client of a
/// stdio connection, none for an anonymous HTTP caller.
pub(crate) fn user_key(subject: Option<&str>, local: bool) -> Option<String> {
    match subject {
        Some(subject) => Some(format!("subject {subject}")),
        None => local.then(|| "local".to_owned()),
    }
}

/// A tool's derived schemas with their definitions inlined, as `tools/list` shows them
/// (`None`: the schema as it is).
#[derive(Debug)]
pub(crate) struct ListedSchemas {
    pub(crate) input: Option<Value>,
    pub(crate) output: Option<Value>,
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef")
            .field("name", &self.name)
            .field("input_schema", &self.input_schema)
            .finish_non_exhaustive()
    }
}

impl ToolDef {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The OAuth scopes a caller needs to see and call the tool (`#[tool(scopes = […])]`).
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// The scopes among the tool's that were not `granted` (a caller's); none when nothing
    /// was checked (a server without authentication, or stdio, grants every scope).
    pub(crate) fn missing_scopes<'a>(&'a self, granted: Option<&[String]>) -> Vec<&'a str> {
        missing_scopes(&self.scopes, granted)
    }

    /// Whether the caller known by `key` ([`user_key`]) sees the tool in lists.
    pub(crate) fn shown_to(&self, key: Option<&str>) -> bool {
        self.audience.as_ref().is_none_or(|a| (a.0)(key))
    }

    /// The tool's title.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The tool's description.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The tool's behaviour hints.
    pub fn annotations(&self) -> &Annotations {
        &self.annotations
    }

    /// Whether the tool runs as a task.
    pub fn task_support(&self) -> TaskSupport {
        self.task_support
    }

    /// The arguments clients mirror into `Mcp-Param-*` headers over HTTP (`x-mcp-header`).
    pub fn param_headers(&self) -> &[ParamHeader] {
        &self.param_headers
    }

    /// The input schema, exactly as advertised.
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// The output schema, exactly as advertised.
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }

    /// Whether structured output is wrapped as `{"result": …}` (its schema is not an object).
    pub fn wraps_output(&self) -> bool {
        self.wrap_output
    }

    /// Whether the tool is registered but not listed until enabled.
    pub fn hidden(&self) -> bool {
        self.hidden
    }

    /// Whether the tool is deferred (`defer_loading`): not listed until the built-in tool
    /// search finds it for a client.
    pub fn deferred(&self) -> bool {
        self.deferred
    }

    /// Whether the tool is served over REST beside MCP, when the server serves REST
    /// (`#[tool(rest = false)]`: MCP only).
    pub fn rest(&self) -> bool {
        self.rest
    }

    /// Whether the tool starts out of `tools/list`: hidden (until a tool manager enables
    /// it) or deferred (until a search finds it).
    pub(crate) fn starts_hidden(&self) -> bool {
        self.hidden || self.deferred
    }

    /// Whether the tool stays listed whatever the allow or block mode.
    pub fn always_visible(&self) -> bool {
        self.always_visible
    }

    /// The tool's own time limit per call.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Whether the tool is for the model (its visibility includes `model`, as it does when
    /// no visibility is given).
    pub fn for_model(&self) -> bool {
        self.for_model
    }

    /// Whether an MCP Apps view may call the tool (its visibility includes `app`, as it does
    /// when no visibility is given).
    pub fn for_app(&self) -> bool {
        self.for_app
    }

    /// Whether the tool is app-only (`visibility = ["app"]`): for views, never for the model.
    pub fn app_only(&self) -> bool {
        self.for_app && !self.for_model
    }

    /// Whether `tools/list` shows the tool to a client (unless a tool selection hides it): a
    /// tool for the model to every client, an app-only tool only to a client that declared
    /// the MCP Apps extension (`apps`), whose host keeps it from the model by its
    /// `_meta.ui.visibility`. A client without the extension would offer it to the model.
    pub(crate) fn listed_for(&self, apps: bool) -> bool {
        self.for_model || (apps && self.for_app)
    }

    /// The tool's MCP Apps view: its `ui://` URI, its name and its HTML.
    pub fn ui(&self) -> Option<(&str, &'static str, &'static str)> {
        self.ui
            .as_ref()
            .map(|(uri, name, html)| (uri.as_str(), *name, *html))
    }

    /// Checks structured content against the output schema (the same rules a client applies).
    pub fn validate_output(&self, structured: &Value) -> Result<(), ValidationError> {
        match &self.output_validator {
            None => Ok(()),
            Some(validator) => validator.check(structured),
        }
    }

    /// Checks the tool's examples: the request against the input schema, the response against
    /// the output schema. Call it in a test (see `mcp_tool::testing::check_examples`).
    pub fn check_examples(&self) -> Result<(), ExampleError> {
        let Some((request, response)) = &self.examples else {
            return Ok(());
        };
        let request = request.as_ref().and_then(|r| self.validate(r).err());
        // The response is the structured content a client sees (wrapped as `{"result": …}`
        // for a non-object output).
        let response = response
            .as_ref()
            .and_then(|r| self.validate_output(r).err());
        if request.is_none() && response.is_none() {
            Ok(())
        } else {
            Err(ExampleError {
                tool: self.name.clone(),
                request,
                response,
            })
        }
    }

    /// The `State<T>` types the tool takes.
    pub(crate) fn states(&self) -> &[(TypeId, &'static str)] {
        &self.states
    }

    /// The tool's entry in `tools/list`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.wire(ProtocolVersion::V2025_11_25)).unwrap_or(Value::Null)
    }

    /// The tool's entry in `tools/list` for a client of `version`: what the version does not know
    /// (titles and output schemas before 2025-06-18, annotations before 2025-03-26) left out.
    pub(crate) fn wire(&self, version: ProtocolVersion) -> wire::Tool<'_> {
        self.wire_as(version, false)
    }

    /// Why the listed schemas keep `$ref`s (a recursive type), if they do.
    pub fn refs_kept(&self) -> Option<&str> {
        self.refs_kept.as_deref()
    }

    /// The definition as `tools/list` shows it in `version`: the schemas with their `$defs`
    /// inlined, or as they are (`keep_refs`, [`Server::keep_schema_refs`]).
    ///
    /// [`Server::keep_schema_refs`]: crate::server::Server::keep_schema_refs
    pub(crate) fn wire_as(&self, version: ProtocolVersion, keep_refs: bool) -> wire::Tool<'_> {
        let structured = version.has_structured();
        let listed = self.listed.as_deref().filter(|_| !keep_refs);
        let input_schema = listed
            .and_then(|l| l.input.as_ref())
            .unwrap_or(&self.input_schema);
        let output_schema = match listed {
            Some(l) => l.output.as_ref().or(self.output_schema.as_ref()),
            None => self.output_schema.as_ref(),
        };
        let title = self.title.as_deref().filter(|_| structured);
        let annotations = Some(self.annotations.wire(title))
            .filter(|a| version.has_annotations() && !a.is_empty());
        wire::Tool {
            name: &self.name,
            title,
            description: self.description.as_deref(),
            input_schema,
            output_schema: output_schema.filter(|_| structured),
            annotations,
            icons: self.icons.as_ref(),
            meta: self.meta.as_ref(),
            // 2025-11-25's `execution`; in 2026-07-28 the server decides per call.
            execution: (structured
                && !version.is_stateless()
                && self.task_support != TaskSupport::Forbidden)
                .then(|| wire::ToolExecution {
                    task_support: self.task_support.as_str(),
                }),
        }
    }

    /// Validates arguments against the input schema. The error names every broken rule, each
    /// with the path of the offending field (one per line when shown).
    pub fn validate(&self, arguments: &Value) -> Result<(), ValidationError> {
        self.validator.check(arguments)
    }

    /// Whether the tool's arguments may be read from their text: not when a dynamic tool
    /// takes them as a map (reading one from text costs more than the map a validation
    /// builds).
    pub(crate) fn reads_text(&self) -> bool {
        self.by_name
    }

    /// Whether `text`, a call's arguments as JSON text, is certainly valid and reads as a
    /// `Value` would, member by member (see `Quick::valid_text`), its members put in
    /// `members`; `false` when that is not certain, for [`ToolDef::validate`] to decide.
    pub(crate) fn valid_text(&self, text: &str, members: &mut Members) -> bool {
        self.validator.valid_text(text, members)
    }

    /// Whether some argument of a call may be converted, the server's switch being `server`.
    pub(crate) fn may_coerce(&self, server: bool) -> bool {
        self.coercion.enabled(server)
    }

    /// Converts the arguments of a call that a model sent as the wrong JSON type, where the
    /// input schema leaves no doubt and the tool's settings (or, where it has none, the
    /// server's switch `server`) allow it; `None` when nothing was converted. With coercion
    /// off for every argument, the arguments are not looked at.
    pub(crate) fn coerce(
        &self,
        arguments: &mut Map<String, Value>,
        server: bool,
    ) -> Option<Coerced> {
        self.coercion.apply(server, &self.input_schema, arguments)
    }
}

/// A tool's `examples(request = …, response = …)` that do not fit its own schemas: the tool,
/// and what is wrong with each example that does not fit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.lines())]
pub struct ExampleError {
    tool: String,
    request: Option<ValidationError>,
    response: Option<ValidationError>,
}

impl ExampleError {
    /// The tool whose examples these are.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// How the example request breaks the input schema, if it does.
    pub fn request(&self) -> Option<&ValidationError> {
        self.request.as_ref()
    }

    /// How the example response breaks the output schema, if it does.
    pub fn response(&self) -> Option<&ValidationError> {
        self.response.as_ref()
    }

    fn lines(&self) -> String {
        let request = self
            .request
            .iter()
            .map(|e| format!("the example request does not fit the input schema:\n{e}"));
        let response = self
            .response
            .iter()
            .map(|e| format!("the example response does not fit the output schema:\n{e}"));
        request.chain(response).collect::<Vec<_>>().join("\n")
    }
}

/// Checks `instance` against a schema given at run time (an elicitation's requested schema),
/// with the wording of argument validation; a schema that is not valid JSON Schema is said so.
pub(crate) fn check_against(schema: &Value, instance: &Value) -> Result<(), String> {
    Validator::cached(schema)?
        .check(instance)
        .map_err(|e| e.to_string())
}

/// Whether a `_meta` key uses a prefix MCP reserves (a prefix label `modelcontextprotocol` or
/// `mcp`).
pub(crate) fn reserved_meta_key(key: &str) -> bool {
    key.split_once('/').is_some_and(|(prefix, _)| {
        prefix
            .split('.')
            .any(|label| label == "modelcontextprotocol" || label == "mcp")
    })
}

/// A duration as the `timeout` attribute writes it (`500ms`, `30s`, `2m`, `1h`).
pub(crate) fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(3_600_000) && ms > 0 {
        format!("{}h", ms / 3_600_000)
    } else if ms.is_multiple_of(60_000) && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// The scopes among `declared` (a tool's, a resource's, a prompt's) that were not `granted` (a
/// caller's); none when nothing was checked (a server without authentication, or stdio, grants
/// every scope).
pub(crate) fn missing_scopes<'a>(
    declared: &'a [String],
    granted: Option<&[String]>,
) -> Vec<&'a str> {
    match granted {
        None => Vec::new(),
        Some(granted) => declared
            .iter()
            .filter(|s| !granted.contains(s))
            .map(String::as_str)
            .collect(),
    }
}
