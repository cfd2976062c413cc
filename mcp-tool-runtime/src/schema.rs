//! Tool definitions: the builder generated code fills in, the finished [`ToolDef`] with its
//! input schema (JSON Schema 2020-12), its compiled validator, and the wording of validation
//! errors.
//!
//! Everything here runs once per tool when a server starts, never per call.

use std::any::TypeId;
use std::fmt::Write as _;
use std::time::Duration;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use schemars::generate::SchemaSettings;
use schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Value};

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
    fn to_json(&self, title: Option<&str>) -> Option<Value> {
        let mut m = Map::new();
        if let Some(t) = title {
            m.insert("title".into(), Value::String(t.into()));
        }
        for (key, v) in [
            ("readOnlyHint", self.read_only),
            ("destructiveHint", self.destructive),
            ("idempotentHint", self.idempotent),
            ("openWorldHint", self.open_world),
        ] {
            if let Some(v) = v {
                m.insert(key.into(), Value::Bool(v));
            }
        }
        (!m.is_empty()).then_some(Value::Object(m))
    }
}

/// What the macros say about one parameter of a tool.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    /// The argument's name in the input schema (the parameter's name, or its rename).
    pub name: &'static str,
    /// The argument's description (`#[arg(description = "…")]`).
    pub description: Option<&'static str>,
    /// Whether a missing argument takes the type's `Default` (`#[arg(default)]`).
    pub default: bool,
}

/// Collects a tool's definition while a server starts. Generated code calls its methods.
pub struct DefBuilder {
    name: String,
    title: Option<String>,
    description: Option<String>,
    annotations: Annotations,
    properties: Map<String, Value>,
    required: Vec<String>,
    whole: Option<Schema>,
    output_schema: Option<Schema>,
    input_schema_override: Option<Value>,
    meta: Option<Map<String, Value>>,
    generator: SchemaGenerator,
    problems: Vec<String>,
    hidden: bool,
    always_visible: bool,
    timeout: Option<Duration>,
    states: Vec<(TypeId, &'static str)>,
    server: String,
    ui: Option<(&'static str, &'static str)>,
    visibility: Option<Vec<&'static str>>,
    examples: Option<(Option<Value>, Option<Value>)>,
    icons: Option<Value>,
    /// `invoking` and `invoked` status texts.
    status: (Option<String>, Option<String>),
}

impl DefBuilder {
    /// A builder for the tool `name`.
    pub fn new(name: impl Into<String>) -> Self {
        DefBuilder {
            name: name.into(),
            title: None,
            description: None,
            annotations: Annotations::default(),
            properties: Map::new(),
            required: Vec::new(),
            whole: None,
            output_schema: None,
            input_schema_override: None,
            meta: None,
            generator: generator(),
            problems: Vec::new(),
            hidden: false,
            always_visible: false,
            timeout: None,
            states: Vec::new(),
            server: String::new(),
            ui: None,
            visibility: None,
            examples: None,
            icons: None,
            status: (None, None),
        }
    }

    /// The builder of a tool of the server `server` (which names its UI resources).
    pub(crate) fn for_server(name: impl Into<String>, server: &str) -> Self {
        let mut b = DefBuilder::new(name);
        b.server = server.to_owned();
        b
    }

    fn parse_json(&mut self, key: &str, json: &str) -> Option<Value> {
        match serde_json::from_str(json) {
            Ok(v) => Some(v),
            Err(e) => {
                self.problem(format!("`{key}` is not valid JSON: {e}"));
                None
            }
        }
    }

    /// The status text shown while the tool runs (`openai/toolInvocation/invoking`).
    pub fn invoking(&mut self, text: &str) -> &mut Self {
        self.status.0 = Some(text.to_owned());
        self
    }

    /// The status text shown once the tool ran (`openai/toolInvocation/invoked`).
    pub fn invoked(&mut self, text: &str) -> &mut Self {
        self.status.1 = Some(text.to_owned());
        self
    }

    /// An example request and response (JSON texts), published in `_meta.examples` and
    /// checked against the schemas by [`ToolDef::check_examples`].
    pub fn examples_json(&mut self, request: Option<&str>, response: Option<&str>) -> &mut Self {
        let request = request.and_then(|r| self.parse_json("examples(request)", r));
        let response = response.and_then(|r| self.parse_json("examples(response)", r));
        self.examples = Some((request, response));
        self
    }

    /// Icons (a JSON array of `{src, mimeType?, sizes?, theme?}`).
    pub fn icons_json(&mut self, json: &str) -> &mut Self {
        self.icons = self.parse_json("icons", json);
        self
    }

    /// Entries merged into the tool's `_meta` (a JSON object). Keys with a prefix MCP reserves
    /// are refused.
    pub fn meta_json(&mut self, json: &str) -> &mut Self {
        if let Some(Value::Object(m)) = self.parse_json("meta", json) {
            if let Some(k) = m.keys().find(|k| reserved_meta_key(k)) {
                self.problem(format!("`_meta` key `{k}` uses a prefix MCP reserves"));
            }
            self.meta(m);
        }
        self
    }

    /// Links the tool to an MCP Apps view: `ui://<server>/<name>`, whose HTML is `html`.
    pub fn ui(&mut self, name: &'static str, html: &'static str) -> &mut Self {
        self.ui = Some((name, html));
        self
    }

    /// Who may call the tool: `"model"` (listed for the model) and/or `"app"` (callable from
    /// an MCP Apps view).
    pub fn visibility(&mut self, who: &[&'static str]) -> &mut Self {
        self.visibility = Some(who.to_vec());
        self
    }

    /// Registers the tool without listing it until it is enabled (`hidden`).
    pub fn hidden(&mut self, hidden: bool) -> &mut Self {
        self.hidden = hidden;
        self
    }

    /// Keeps the tool listed whatever the allow or block mode (`always_visible`).
    pub fn always_visible(&mut self, always_visible: bool) -> &mut Self {
        self.always_visible = always_visible;
        self
    }

    /// Limits how long one call may run (`timeout = "30s"`).
    pub fn timeout(&mut self, timeout: Duration) -> &mut Self {
        self.timeout = Some(timeout);
        self
    }

    /// Records that the tool takes `State<T>` of this type.
    pub fn require_state(&mut self, id: TypeId, name: &'static str) -> &mut Self {
        self.states.push((id, name));
        self
    }

    /// Sets the human-readable title.
    pub fn title(&mut self, title: impl Into<String>) -> &mut Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description.
    pub fn description(&mut self, description: impl Into<String>) -> &mut Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the behaviour hints.
    pub fn annotations(&mut self, annotations: Annotations) -> &mut Self {
        self.annotations = annotations;
        self
    }

    /// Merges entries into the tool's `_meta`.
    pub fn meta(&mut self, meta: Map<String, Value>) -> &mut Self {
        self.meta.get_or_insert_with(Map::new).extend(meta);
        self
    }

    /// Replaces the derived input schema with a hand-written one, kept verbatim.
    pub fn input_schema(&mut self, schema: Value) -> &mut Self {
        self.input_schema_override = Some(schema);
        self
    }

    /// Replaces the derived input schema with JSON text (checked at compile time by the
    /// macros), kept verbatim.
    pub fn input_schema_json(&mut self, json: &str) -> &mut Self {
        match serde_json::from_str(json) {
            Ok(v) => self.input_schema(v),
            Err(e) => {
                self.problem(format!("`input_schema` is not valid JSON: {e}"));
                self
            }
        }
    }

    /// Replaces the derived output schema with JSON text (checked at compile time by the
    /// macros).
    pub fn output_schema_json(&mut self, json: &str) -> &mut Self {
        match serde_json::from_str::<Value>(json).map(Schema::try_from) {
            Ok(Ok(s)) => self.output_schema(s),
            _ => {
                self.problem("`output_schema` is not a JSON Schema object");
                self
            }
        }
    }

    /// Replaces the output schema.
    pub fn output_schema(&mut self, schema: Schema) -> &mut Self {
        self.output_schema = Some(schema);
        self
    }

    /// Derives the output schema with a generator of its own, so its definitions travel in the
    /// output schema's own `$defs`.
    pub fn output_from(&mut self, derive: impl FnOnce(&mut SchemaGenerator) -> Option<Schema>) {
        let mut generator = generator();
        if let Some(mut schema) = derive(&mut generator) {
            let mut defs = generator.take_definitions(true);
            retain_referenced(&mut defs, &schema.clone().to_value());
            if !defs.is_empty() {
                schema.insert("$defs".into(), Value::Object(defs));
            }
            self.output_schema = Some(schema);
        }
    }

    /// The schema generator shared by all of this tool's schemas (its definitions end up in
    /// the input schema's `$defs`).
    pub fn generator(&mut self) -> &mut SchemaGenerator {
        &mut self.generator
    }

    /// Adds one named argument.
    pub fn property(&mut self, spec: &ParamSpec, mut schema: Schema, required: bool) {
        if let Some(d) = spec.description {
            schema.insert("description".into(), Value::String(d.into()));
        }
        if spec.name.is_empty() {
            self.problems.push(
                "a parameter whose pattern is not a plain name is an argument here: name it, or give it `#[arg(rename = \"…\")]`"
                    .into(),
            );
        }
        if self.properties.contains_key(spec.name) {
            self.problems
                .push(format!("argument `{}` is declared twice", spec.name));
        }
        self.properties.insert(spec.name.into(), schema.to_value());
        if required && !spec.default {
            self.required.push(spec.name.into());
        }
    }

    /// Adds a whole-arguments type (`Args<T>`): its properties become the tool's.
    pub fn whole(&mut self, schema: Schema) {
        if self.whole.is_some() {
            self.problems
                .push("a tool takes at most one whole-arguments parameter (`Args<T>`)".into());
        }
        self.whole = Some(schema);
    }

    /// Records a problem found while building; the server refuses to start and names it.
    pub fn problem(&mut self, problem: impl Into<String>) {
        self.problems.push(problem.into());
    }

    /// Finishes the definition: builds the input schema and compiles its validator.
    pub fn finish(mut self) -> Result<ToolDef, Vec<String>> {
        let input_schema = match self.input_schema_override.take() {
            Some(s) => s,
            None => self.derived_input_schema(),
        };
        if input_schema.get("type").and_then(Value::as_str) != Some("object") {
            self.problems
                .push("the input schema's root must have `\"type\": \"object\"`".into());
        }
        let output_schema = self.output_schema.take().map(Schema::to_value);
        let wrap_output = match &output_schema {
            Some(s) => s.get("type").and_then(Value::as_str) != Some("object"),
            None => false,
        };
        let output_schema = output_schema.map(|mut s| {
            if wrap_output {
                // `$ref`s point at the root: the definitions move up to the wrapper.
                let defs = s.as_object_mut().and_then(|m| m.remove("$defs"));
                let mut wrapper = serde_json::json!({
                    "type": "object",
                    "properties": { "result": s },
                    "required": ["result"]
                });
                if let Some(defs) = defs {
                    wrapper["$defs"] = defs;
                }
                wrapper
            } else {
                s
            }
        });
        let validator = match jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&input_schema)
        {
            Ok(v) => Some(v),
            Err(e) => {
                self.problems
                    .push(format!("the input schema is not a valid JSON Schema: {e}"));
                None
            }
        };
        if !self.problems.is_empty() {
            return Err(self.problems);
        }
        let mut tool = Map::new();
        tool.insert("name".into(), Value::String(self.name.clone()));
        if let Some(t) = &self.title {
            tool.insert("title".into(), Value::String(t.clone()));
        }
        if let Some(d) = &self.description {
            tool.insert("description".into(), Value::String(d.clone()));
        }
        tool.insert("inputSchema".into(), input_schema);
        if let Some(o) = &output_schema {
            tool.insert("outputSchema".into(), o.clone());
        }
        if let Some(a) = self.annotations.to_json(self.title.as_deref()) {
            tool.insert("annotations".into(), a);
        }
        if let Some(icons) = &self.icons {
            tool.insert("icons".into(), icons.clone());
        }
        let for_model = self
            .visibility
            .as_ref()
            .is_none_or(|v| v.contains(&"model"));
        let for_app = self.visibility.as_ref().is_none_or(|v| v.contains(&"app"));
        let ui_uri = self
            .ui
            .map(|(name, _)| format!("ui://{}/{name}", self.server));
        // What the attributes say wins over the same keys given through `meta`.
        for (key, text) in [
            ("openai/toolInvocation/invoking", &self.status.0),
            ("openai/toolInvocation/invoked", &self.status.1),
        ] {
            if let Some(t) = text {
                self.meta
                    .get_or_insert_with(Map::new)
                    .insert(key.into(), Value::String(t.clone()));
            }
        }
        if ui_uri.is_some() || self.visibility.is_some() {
            // Merged into a `ui` object given through `meta` (its other keys are kept).
            let mut ui = match self.meta.as_mut().and_then(|m| m.remove("ui")) {
                Some(Value::Object(m)) => m,
                _ => Map::new(),
            };
            if let Some(uri) = &ui_uri {
                ui.insert("resourceUri".into(), Value::String(uri.clone()));
            }
            if let Some(v) = &self.visibility {
                ui.insert(
                    "visibility".into(),
                    Value::Array(v.iter().map(|s| Value::String((*s).into())).collect()),
                );
            }
            let meta = self.meta.get_or_insert_with(Map::new);
            meta.insert("ui".into(), Value::Object(ui));
            if let Some(uri) = &ui_uri {
                // The OpenAI Apps SDK's names for the same things.
                meta.insert("openai/outputTemplate".into(), Value::String(uri.clone()));
            }
            meta.insert("openai/widgetAccessible".into(), Value::Bool(for_app));
            if !for_model {
                meta.insert("openai/visibility".into(), Value::String("private".into()));
            }
        }
        if let Some((request, response)) = &self.examples {
            let mut ex = Map::new();
            if let Some(r) = request {
                ex.insert("request".into(), r.clone());
            }
            if let Some(r) = response {
                ex.insert("response".into(), r.clone());
            }
            self.meta
                .get_or_insert_with(Map::new)
                .insert("examples".into(), Value::Object(ex));
        }
        if let Some(m) = &self.meta {
            tool.insert("_meta".into(), Value::Object(m.clone()));
        }
        let output_validator = match &output_schema {
            None => None,
            Some(schema) => match jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .should_validate_formats(true)
                .build(schema)
            {
                Ok(v) => Some(v),
                Err(e) => {
                    return Err(vec![format!(
                        "the output schema is not a valid JSON Schema: {e}"
                    )]);
                }
            },
        };
        Ok(ToolDef {
            name: self.name,
            title: self.title,
            description: self.description,
            annotations: self.annotations,
            output_schema,
            wrap_output,
            validator: validator.expect("checked above"),
            json: Value::Object(tool),
            hidden: self.hidden,
            always_visible: self.always_visible,
            timeout: self.timeout,
            states: self.states,
            for_model,
            ui: self
                .ui
                .map(|(name, html)| (ui_uri.unwrap_or_default(), name, html)),
            examples: self.examples,
            output_validator,
        })
    }

    fn derived_input_schema(&mut self) -> Value {
        let mut root = Map::new();
        root.insert("type".into(), Value::String("object".into()));
        let mut properties = std::mem::take(&mut self.properties);
        let mut required = std::mem::take(&mut self.required);
        let mut closed = true;
        if let Some(whole) = self.whole.take() {
            let resolved = resolve_ref(&self.generator, whole);
            if resolved.get("type").and_then(Value::as_str) != Some("object") {
                self.problems.push(
                    "`Args<T>` needs a `T` whose schema is an object (a struct with named fields)"
                        .into(),
                );
            }
            if let Some(Value::Object(p)) = resolved.get("properties") {
                for (k, v) in p {
                    if properties.insert(k.clone(), v.clone()).is_some() {
                        self.problems
                            .push(format!("argument `{k}` is declared twice"));
                    }
                }
            }
            if let Some(Value::Array(r)) = resolved.get("required") {
                required.extend(r.iter().filter_map(|v| v.as_str().map(String::from)));
            }
            // A whole-arguments struct decides for itself whether unknown fields are refused
            // (`#[serde(deny_unknown_fields)]` gives `additionalProperties: false`).
            closed = resolved.get("additionalProperties") == Some(&Value::Bool(false));
        }
        root.insert("properties".into(), Value::Object(properties));
        if !required.is_empty() {
            root.insert(
                "required".into(),
                Value::Array(required.into_iter().map(Value::String).collect()),
            );
        }
        if closed {
            root.insert("additionalProperties".into(), Value::Bool(false));
        }
        let mut defs = self.generator.take_definitions(true);
        retain_referenced(&mut defs, &Value::Object(root.clone()));
        if !defs.is_empty() {
            root.insert("$defs".into(), Value::Object(defs));
        }
        Value::Object(root)
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
fn retain_referenced(defs: &mut Map<String, Value>, root: &Value) {
    let text = root.to_string() + &Value::Object(defs.clone()).to_string();
    defs.retain(|k, _| text.contains(&format!("\"#/$defs/{k}\"")));
}

/// A finished tool definition: what `tools/list` shows and what each call is validated against.
pub struct ToolDef {
    name: String,
    title: Option<String>,
    description: Option<String>,
    annotations: Annotations,
    output_schema: Option<Value>,
    wrap_output: bool,
    validator: jsonschema::Validator,
    json: Value,
    hidden: bool,
    always_visible: bool,
    timeout: Option<Duration>,
    states: Vec<(TypeId, &'static str)>,
    for_model: bool,
    ui: Option<(String, &'static str, &'static str)>,
    examples: Option<(Option<Value>, Option<Value>)>,
    output_validator: Option<jsonschema::Validator>,
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef").field("json", &self.json).finish()
    }
}

impl ToolDef {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
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

    /// The input schema, exactly as advertised.
    pub fn input_schema(&self) -> &Value {
        &self.json["inputSchema"]
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

    /// Whether the tool stays listed whatever the allow or block mode.
    pub fn always_visible(&self) -> bool {
        self.always_visible
    }

    /// The tool's own time limit per call.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Whether the tool is listed for the model (its visibility includes `model`).
    pub fn for_model(&self) -> bool {
        self.for_model
    }

    /// The tool's MCP Apps view: its `ui://` URI, its name and its HTML.
    pub fn ui(&self) -> Option<(&str, &'static str, &'static str)> {
        self.ui
            .as_ref()
            .map(|(uri, name, html)| (uri.as_str(), *name, *html))
    }

    /// Checks structured content against the output schema (the same rules a client applies).
    pub fn validate_output(&self, structured: &Value) -> Result<(), String> {
        let Some(validator) = &self.output_validator else {
            return Ok(());
        };
        if validator.is_valid(structured) {
            return Ok(());
        }
        let mut out = String::new();
        for error in validator.iter_errors(structured) {
            if !out.is_empty() {
                out.push('\n');
            }
            let path = pointer_to_path(error.instance_path().as_str());
            let _ = write!(
                out,
                "{}: {error}",
                if path.is_empty() { "result" } else { &path }
            );
        }
        Err(out)
    }

    /// Checks the tool's examples: the request against the input schema, the response against
    /// the output schema. Call it in a test (see `mcp_tool::testing::check_examples`).
    pub fn check_examples(&self) -> Result<(), String> {
        let Some((request, response)) = &self.examples else {
            return Ok(());
        };
        let mut problems = Vec::new();
        if let Some(r) = request
            && let Err(e) = self.validate(r)
        {
            problems.push(format!(
                "the example request does not fit the input schema:\n{e}"
            ));
        }
        // The response is the structured content a client sees (wrapped as `{"result": …}`
        // for a non-object output).
        if let Some(r) = response
            && let Err(e) = self.validate_output(r)
        {
            problems.push(format!(
                "the example response does not fit the output schema:\n{e}"
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    }

    /// The `State<T>` types the tool takes.
    pub(crate) fn states(&self) -> &[(TypeId, &'static str)] {
        &self.states
    }

    /// The tool's entry in `tools/list`.
    pub fn to_json(&self) -> &Value {
        &self.json
    }

    /// Validates arguments against the input schema. The error names every broken rule, one
    /// per line, each with the path of the offending field.
    pub fn validate(&self, arguments: &Value) -> Result<(), String> {
        if self.validator.is_valid(arguments) {
            return Ok(());
        }
        let mut out = String::new();
        for error in self.validator.iter_errors(arguments) {
            if !out.is_empty() {
                out.push('\n');
            }
            describe_error(&mut out, &error, self.input_schema());
        }
        Err(out)
    }
}

/// Writes one validation error as `field.path: what is wrong`.
fn describe_error(out: &mut String, error: &jsonschema::ValidationError<'_>, root: &Value) {
    let path = pointer_to_path(error.instance_path().as_str());
    let instance = error.instance();
    let shown = short(instance);
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), String::from);
            let full = if path.is_empty() {
                name
            } else {
                format!("{path}.{name}")
            };
            let _ = write!(out, "{full}: required argument is missing");
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            for (i, name) in unexpected.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                let full = if path.is_empty() {
                    name.clone()
                } else {
                    format!("{path}.{name}")
                };
                let _ = write!(out, "{full}: unknown argument (not in the input schema)");
            }
        }
        kind => {
            let label = if path.is_empty() { "arguments" } else { &path };
            let _ = write!(out, "{label}: ");
            match kind {
                ValidationErrorKind::Format { format } => {
                    let _ = write!(out, "{shown} is not a valid {format}");
                }
                ValidationErrorKind::MinLength { limit } => {
                    let _ = write!(out, "{shown} is shorter than {limit} characters");
                }
                ValidationErrorKind::MaxLength { limit } => {
                    let _ = write!(out, "{shown} is longer than {limit} characters");
                }
                ValidationErrorKind::Enum { options } => {
                    let _ = write!(out, "{shown} is not one of {options}");
                }
                ValidationErrorKind::Type { kind } => {
                    let expected = match kind {
                        TypeKind::Single(t) => t.to_string(),
                        TypeKind::Multiple(ts) => ts
                            .iter()
                            .map(|t| t.to_string())
                            .collect::<Vec<_>>()
                            .join(" or "),
                    };
                    let _ = write!(out, "{shown} is not of type {expected}");
                }
                ValidationErrorKind::OneOfNotValid { .. } | ValidationErrorKind::AnyOf { .. }
                    if allowed_constants(root, error.schema_path().as_str()).is_some() =>
                {
                    let allowed = allowed_constants(root, error.schema_path().as_str());
                    let _ = write!(out, "{shown} is not one of {}", allowed.unwrap_or_default());
                }
                ValidationErrorKind::Minimum { limit } => {
                    let _ = write!(out, "{shown} is less than the minimum of {limit}");
                }
                ValidationErrorKind::Maximum { limit } => {
                    let _ = write!(out, "{shown} is greater than the maximum of {limit}");
                }
                _ => {
                    let _ = write!(out, "{error}");
                }
            }
        }
    }
}

/// For a `oneOf`/`anyOf` whose branches are all `const` (how schemars writes an enum with
/// documented variants), the allowed values as a JSON array.
fn allowed_constants(root: &Value, schema_path: &str) -> Option<String> {
    let mut node = root;
    for seg in schema_path.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        node = if seg == "$ref" {
            let target = node.get("$ref")?.as_str()?.strip_prefix('#')?;
            root.pointer(target)?
        } else if let Value::Array(items) = node {
            items.get(seg.parse::<usize>().ok()?)?
        } else {
            node.get(&seg)?
        };
    }
    let values: Option<Vec<&Value>> = node
        .as_array()?
        .iter()
        .map(|branch| branch.get("const"))
        .collect();
    values.map(|v| Value::Array(v.into_iter().cloned().collect()).to_string())
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

/// `/items/0/name` → `items[0].name`.
fn pointer_to_path(pointer: &str) -> String {
    let mut out = String::new();
    for seg in pointer.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
            let _ = write!(out, "[{seg}]");
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg);
        }
    }
    out
}

/// A value as JSON, cut short when long.
fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 80 {
        let cut: String = s.chars().take(77).collect();
        format!("{cut}...")
    } else {
        s
    }
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
