//! The builder of a tool's definition: generated code (and `DynamicTool`) fill it in while a
//! server starts; [`DefBuilder::finish`] derives the input schema (JSON Schema 2020-12),
//! compiles the validators and reports every problem together.
//!
//! Everything here runs once per tool when a server starts, never per call.

use std::any::TypeId;
use std::time::Duration;

use schemars::{Schema, SchemaGenerator};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::tool::definition::coerce::Coercion;
use crate::tool::definition::def::{
    Annotations, TaskSupport, ToolDef, generator, reserved_meta_key, resolve_ref, retain_referenced,
};
use crate::tool::definition::headers::param_headers;
use crate::tool::definition::inline::listed_schemas;
use crate::tool::definition::integers::bound_integers;
use crate::tool::definition::validate::Validator;

/// What the macros say about one parameter of a tool.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    /// The argument's name in the input schema (the parameter's name, or its rename).
    pub name: &'static str,
    /// The argument's description (`#[arg(description = "…")]`).
    pub description: Option<&'static str>,
    /// Whether a missing argument takes the type's `Default` (`#[arg(default)]`).
    pub default: bool,
    /// The header clients mirror the argument into over HTTP (`#[arg(header = "Region")]`
    /// gives `Mcp-Param-Region`, and `"x-mcp-header": "Region"` in the schema).
    pub header: Option<&'static str>,
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
    /// Whether the tool takes its arguments whole (`Args<T>`, a dynamic tool's map).
    takes_whole: bool,
    output_schema: Option<Schema>,
    /// Whether the output schema was derived (its definitions are ours to inline).
    output_derived: bool,
    input_schema_override: Option<Value>,
    meta: Option<Map<String, Value>>,
    generator: SchemaGenerator,
    problems: Vec<String>,
    hidden: bool,
    always_visible: bool,
    deferred: bool,
    /// Whether another server owns the tool and checks its arguments
    /// ([`Validator::compile_forwarded`]).
    forwarded: bool,
    rest: bool,
    timeout: Option<Duration>,
    states: Vec<(TypeId, &'static str)>,
    server: String,
    ui: Option<(&'static str, &'static str)>,
    visibility: Option<Vec<&'static str>>,
    scopes: Vec<String>,
    examples: Option<(Option<Value>, Option<Value>)>,
    icons: Option<Value>,
    /// `invoking` and `invoked` status texts.
    status: (Option<String>, Option<String>),
    task_support: TaskSupport,
    coercion: Coercion,
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
            takes_whole: false,
            output_schema: None,
            output_derived: false,
            input_schema_override: None,
            meta: None,
            generator: generator(),
            problems: Vec::new(),
            hidden: false,
            always_visible: false,
            deferred: false,
            forwarded: false,
            rest: true,
            timeout: None,
            states: Vec::new(),
            server: String::new(),
            ui: None,
            visibility: None,
            scopes: Vec::new(),
            examples: None,
            icons: None,
            status: (None, None),
            task_support: TaskSupport::Forbidden,
            coercion: Coercion::default(),
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

    /// The OAuth scopes a caller needs to see and call the tool (`scopes`): each a scope token
    /// (visible ASCII without spaces, `"` or `\\`), each once.
    pub fn scopes<S: AsRef<str>>(&mut self, scopes: &[S]) -> &mut Self {
        for scope in scopes {
            let scope = scope.as_ref();
            if let Err(why) = check_scope(scope) {
                self.problems.push(why);
            } else if self.scopes.iter().any(|s| s == scope) {
                self.problems
                    .push(format!("the scope `{scope}` is listed twice"));
            } else {
                self.scopes.push(scope.to_owned());
            }
        }
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

    /// Leaves the tool out of `tools/list` until the built-in tool search finds it for a
    /// client (`defer_loading`), which then lists it to that client; callable all along.
    pub fn defer_loading(&mut self, deferred: bool) -> &mut Self {
        self.deferred = deferred;
        self
    }

    /// The tool is another server's, which checks its own arguments: what the validator's
    /// own rules cannot check is left to it ([`Validator::compile_forwarded`]).
    pub(crate) fn forwarded(&mut self, forwarded: bool) -> &mut Self {
        self.forwarded = forwarded;
        self
    }

    /// Whether the tool is served over REST, beside MCP (`rest = false`: MCP only).
    pub fn rest(&mut self, served: bool) -> &mut Self {
        self.rest = served;
        self
    }

    /// Whether the tool runs as a task (`task = "optional"`).
    pub fn task_support(&mut self, support: TaskSupport) -> &mut Self {
        self.task_support = support;
        self
    }

    /// Which arguments a model sent as the wrong JSON type may be converted (`coerce`).
    pub fn coercion(&mut self) -> &mut Coercion {
        &mut self.coercion
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
        self.output_derived = false;
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
            let mut value = schema.to_value();
            bound_integers(&mut value);
            // A schema stays an object or a boolean, which is what `try_from` takes.
            self.output_schema = Schema::try_from(value).ok();
            self.output_derived = true;
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
        if let Some(h) = spec.header {
            schema.insert("x-mcp-header".into(), Value::String(h.into()));
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

    /// The tool takes its arguments whole, as a map: they are read into one for it, not
    /// from their text parameter by parameter (which pays only for named parameters).
    pub(crate) fn takes_whole(&mut self) -> &mut Self {
        self.takes_whole = true;
        self
    }

    /// Records a problem found while building; the server refuses to start and names it.
    pub fn problem(&mut self, problem: impl Into<String>) {
        self.problems.push(problem.into());
    }

    /// Finishes the definition: builds the input schema and compiles its validator; or every
    /// problem found, each a sentence (the server's `StartError` lists them).
    pub(crate) fn finish(mut self) -> Result<ToolDef, Vec<String>> {
        // Hand-written schemas are listed verbatim (`$defs`, `$anchor` and all); only the
        // definitions derived here are inlined.
        let input_derived = self.input_schema_override.is_none();
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
        let compile = if self.forwarded {
            Validator::compile_forwarded
        } else {
            Validator::compile
        };
        let validator = match compile(&input_schema) {
            Ok(v) => Some(v),
            Err(e) => {
                self.problems
                    .push(format!("the input schema is not a valid JSON Schema: {e}"));
                None
            }
        };
        let param_headers = match param_headers(&input_schema) {
            Ok(found) => found,
            Err(problems) => {
                self.problems.extend(problems);
                Vec::new()
            }
        };
        if let Some(who) = &self.visibility {
            if let Some(v) = who.iter().find(|v| !matches!(**v, "model" | "app")) {
                self.problems.push(format!(
                    "unknown visibility `{v}`: MCP Apps knows `model` and `app`"
                ));
            } else if who.is_empty() {
                self.problems.push(
                    "`visibility` is empty: nobody could call the tool; give `model`, `app` or both"
                        .into(),
                );
            }
        }
        if self.deferred {
            let clash = if self.always_visible {
                Some("`always_visible`: an always-visible tool is never collapsed behind search")
            } else if self.hidden {
                Some("`hidden`: a hidden tool is revealed by a tool manager, never by search")
            } else if self
                .visibility
                .as_ref()
                .is_some_and(|v| !v.contains(&"model"))
            {
                Some("app-only visibility: search finds tools for the model only")
            } else {
                None
            };
            if let Some(clash) = clash {
                self.problems.push(format!(
                    "a deferred tool (`defer_loading`) cannot also have {clash}"
                ));
            }
        }
        self.problems
            .extend(self.coercion.unknown_arguments(&input_schema));
        if !self.problems.is_empty() {
            return Err(self.problems);
        }
        let for_model = self
            .visibility
            .as_ref()
            .is_none_or(|v| v.contains(&"model"));
        let for_app = self.visibility.as_ref().is_none_or(|v| v.contains(&"app"));
        let ui_uri = self
            .ui
            .map(|(name, _)| format!("ui://{}/{name}", self.server));
        self.meta = merge_meta(
            self.meta.take(),
            &AttributeMeta {
                invoking: self.status.0.as_deref(),
                invoked: self.status.1.as_deref(),
                // The OpenAI Apps SDK's names for what `ui` and `visibility` say.
                output_template: ui_uri.as_deref(),
                widget_accessible: (ui_uri.is_some() || self.visibility.is_some())
                    .then_some(for_app),
                openai_visibility: (!for_model).then_some("private"),
                examples: self.examples.as_ref().map(|(request, response)| Examples {
                    request: request.as_ref(),
                    response: response.as_ref(),
                }),
            },
            (ui_uri.is_some() || self.visibility.is_some()).then_some(UiMeta {
                resource_uri: ui_uri.as_deref(),
                visibility: self.visibility.as_deref(),
            }),
        );
        let output_validator = match &output_schema {
            None => None,
            Some(schema) => match compile(schema) {
                Ok(v) => Some(v),
                Err(e) => {
                    return Err(vec![format!(
                        "the output schema is not a valid JSON Schema: {e}"
                    )]);
                }
            },
        };
        let (listed, refs_kept) = listed_schemas(
            Some(&input_schema).filter(|_| input_derived),
            output_schema.as_ref().filter(|_| self.output_derived),
        );
        Ok(ToolDef {
            name: self.name,
            title: self.title,
            description: self.description,
            annotations: self.annotations,
            input_schema,
            output_schema,
            icons: self.icons,
            meta: self.meta,
            wrap_output,
            validator: validator.expect("checked above"),
            hidden: self.hidden,
            always_visible: self.always_visible,
            deferred: self.deferred,
            rest: self.rest,
            by_name: !self.takes_whole,
            timeout: self.timeout,
            states: self.states,
            for_model,
            for_app,
            ui: self
                .ui
                .map(|(name, html)| (ui_uri.unwrap_or_default(), name, html)),
            examples: self.examples,
            output_validator,
            param_headers,
            task_support: self.task_support,
            scopes: self.scopes.into(),
            listed,
            refs_kept,
            coercion: self.coercion,
            audience: None,
        })
    }

    fn derived_input_schema(&mut self) -> Value {
        let mut root = Map::new();
        root.insert("type".into(), Value::String("object".into()));
        let mut properties = std::mem::take(&mut self.properties);
        let mut required = std::mem::take(&mut self.required);
        let mut closed = true;
        let mut additional = None;
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
            // Unknown arguments are refused, as for named parameters, unless the struct says
            // what they may be (a flattened map gives `additionalProperties` a schema).
            closed = match resolved.get("additionalProperties") {
                None | Some(Value::Bool(false)) => true,
                Some(_) => false,
            };
            if !closed && let Some(extra) = resolved.get("additionalProperties") {
                additional = Some(extra.clone());
            }
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
        } else if let Some(extra) = additional {
            root.insert("additionalProperties".into(), extra);
        }
        let mut defs = self.generator.take_definitions(true);
        retain_referenced(&mut defs, &Value::Object(root.clone()));
        if !defs.is_empty() {
            root.insert("$defs".into(), Value::Object(defs));
        }
        let mut root = Value::Object(root);
        bound_integers(&mut root);
        root
    }
}

/// The `_meta` entries a tool's attributes give, as the wire names them.
#[derive(Serialize)]
struct AttributeMeta<'a> {
    #[serde(
        rename = "openai/toolInvocation/invoking",
        skip_serializing_if = "Option::is_none"
    )]
    invoking: Option<&'a str>,
    #[serde(
        rename = "openai/toolInvocation/invoked",
        skip_serializing_if = "Option::is_none"
    )]
    invoked: Option<&'a str>,
    #[serde(
        rename = "openai/outputTemplate",
        skip_serializing_if = "Option::is_none"
    )]
    output_template: Option<&'a str>,
    #[serde(
        rename = "openai/widgetAccessible",
        skip_serializing_if = "Option::is_none"
    )]
    widget_accessible: Option<bool>,
    #[serde(rename = "openai/visibility", skip_serializing_if = "Option::is_none")]
    openai_visibility: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    examples: Option<Examples<'a>>,
}

/// `_meta.examples`: an example call.
#[derive(Serialize)]
struct Examples<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    request: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response: Option<&'a Value>,
}

/// `_meta.ui`: the tool's MCP Apps view and who may call it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UiMeta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_uri: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    visibility: Option<&'a [&'static str]>,
}

/// The tool's `_meta`: the entries given through `meta`, then the attributes' over them (the
/// attributes win; a `ui` object given through `meta` keeps its other keys).
fn merge_meta(
    given: Option<Map<String, Value>>,
    attributes: &AttributeMeta<'_>,
    ui: Option<UiMeta<'_>>,
) -> Option<Map<String, Value>> {
    let as_map = |v: serde_json::Result<Value>| match v {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let mut meta = given.unwrap_or_default();
    if let Some(ui) = ui {
        let mut merged = match meta.remove("ui") {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        merged.extend(as_map(serde_json::to_value(ui)));
        meta.insert("ui".into(), Value::Object(merged));
    }
    meta.extend(as_map(serde_json::to_value(attributes)));
    (!meta.is_empty()).then_some(meta)
}

/// Checks an OAuth scope token (RFC 6749 §3.3): visible ASCII but `"` and `\\`, not empty.
pub(crate) fn check_scope(scope: &str) -> Result<(), String> {
    let fits = |b: u8| b.is_ascii_graphic() && b != b'"' && b != b'\\';
    if scope.is_empty() {
        Err("a scope cannot be empty".to_owned())
    } else if scope.bytes().all(fits) {
        Ok(())
    } else {
        Err(format!(
            "`{}` is not an OAuth scope: a scope is visible ASCII without spaces, `\"` or `\\` (RFC 6749 §3.3)",
            scope.escape_debug()
        ))
    }
}
