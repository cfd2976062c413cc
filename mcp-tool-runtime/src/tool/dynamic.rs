//! Tools defined at run time, without the macros: from a typed property list, a raw JSON
//! Schema or a schemars type, with the same validation and dispatch as `#[tool]` ones. Adding
//! or removing one while serving tells every session (`list_changed`).
//!
//! ```
//! use mcp_tool::dynamic::{DynamicTool, ToolProperty};
//! use mcp_tool::{Server, ToolResult};
//!
//! let greet = DynamicTool::new("greet", "Greet someone by name.", |args| async move {
//!     let name = args.get_str("name").unwrap_or("stranger").to_owned();
//!     ToolResult::text(format!("Hello, {name}!"))
//! })
//! .property(ToolProperty::string("name").description("Who to greet").required());
//!
//! let server = Server::new("dyn", "1.0.0").dynamic_tool(greet);
//! # let _ = server;
//! ```

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::tool::context::Ctx;
use crate::tool::definition::builder::DefBuilder;
use crate::tool::definition::def::{
    Annotations, TaskSupport, ToolDef, generator, reserved_meta_key,
};
use crate::tool::extract::ToolCall;
use crate::tool::record::{BoxFuture, Call, check_name};
use crate::tool::result::{IntoToolResult, ToolError};

/// The JSON type of a [`ToolProperty`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropertyType {
    /// A string.
    String,
    /// A number.
    Number,
    /// An integer.
    Integer,
    /// A boolean.
    Boolean,
    /// An object.
    Object,
}

impl PropertyType {
    fn as_str(self) -> &'static str {
        match self {
            PropertyType::String => "string",
            PropertyType::Number => "number",
            PropertyType::Integer => "integer",
            PropertyType::Boolean => "boolean",
            PropertyType::Object => "object",
        }
    }
}

/// One argument of a dynamic tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolProperty {
    /// The argument's name.
    pub name: String,
    /// Its type.
    pub property_type: PropertyType,
    /// What it is.
    pub description: Option<String>,
    /// Whether it must be given.
    pub required: bool,
    /// Whether it is a list of values of its type.
    pub is_array: bool,
}

impl ToolProperty {
    /// An argument of a type.
    pub fn new(name: impl Into<String>, property_type: PropertyType) -> Self {
        ToolProperty {
            name: name.into(),
            property_type,
            description: None,
            required: false,
            is_array: false,
        }
    }

    /// A string argument.
    pub fn string(name: impl Into<String>) -> Self {
        Self::new(name, PropertyType::String)
    }

    /// A number argument.
    pub fn number(name: impl Into<String>) -> Self {
        Self::new(name, PropertyType::Number)
    }

    /// An integer argument.
    pub fn integer(name: impl Into<String>) -> Self {
        Self::new(name, PropertyType::Integer)
    }

    /// A boolean argument.
    pub fn boolean(name: impl Into<String>) -> Self {
        Self::new(name, PropertyType::Boolean)
    }

    /// Describes the argument.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Makes the argument required.
    #[must_use]
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }

    /// Makes the argument a list.
    #[must_use]
    pub fn array(mut self) -> Self {
        self.is_array = true;
        self
    }

    fn schema(&self) -> Value {
        let mut item = Map::new();
        item.insert(
            "type".into(),
            Value::String(self.property_type.as_str().into()),
        );
        let mut schema = if self.is_array {
            let mut array = Map::new();
            array.insert("type".into(), Value::String("array".into()));
            array.insert("items".into(), Value::Object(item));
            array
        } else {
            item
        };
        if let Some(d) = &self.description {
            schema.insert("description".into(), Value::String(d.clone()));
        }
        Value::Object(schema)
    }
}

/// The arguments of a call to a dynamic tool (validated against its schema), and the
/// request's context.
pub struct DynamicArgs {
    /// The arguments.
    pub arguments: Map<String, Value>,
    /// The call's context (progress, logging, cancellation, the client…).
    pub ctx: Ctx,
}

impl fmt::Debug for DynamicArgs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynamicArgs")
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

impl DynamicArgs {
    /// A string argument.
    pub fn get_str(&self, name: &str) -> Option<&str> {
        self.arguments.get(name).and_then(Value::as_str)
    }

    /// All arguments as a type of the user's.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, ToolError> {
        T::deserialize(Value::Object(self.arguments.clone()))
            .map_err(|e| ToolError::new("INVALID_ARGUMENTS", format!("arguments: {e}")))
    }
}

type Define = Arc<dyn Fn(&mut DefBuilder) + Send + Sync>;

/// A tool defined at run time.
#[derive(Clone)]
pub struct DynamicTool {
    name: String,
    description: String,
    title: Option<String>,
    annotations: Annotations,
    properties: Vec<ToolProperty>,
    input_schema: Option<Value>,
    input_type: Option<Define>,
    output_schema: Option<Value>,
    meta: Option<Map<String, Value>>,
    hidden: bool,
    deferred: bool,
    forwarded: bool,
    rest: bool,
    always_visible: bool,
    task_support: TaskSupport,
    scopes: Vec<String>,
    coerce: Option<bool>,
    audience: Option<crate::tool::definition::def::Audience>,
    handler: Arc<dyn Fn(ToolCall) -> BoxFuture + Send + Sync>,
}

impl fmt::Debug for DynamicTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DynamicTool({})", self.name)
    }
}

impl DynamicTool {
    /// A tool named `name`, described by `description`, run by `handler`.
    pub fn new<F, Fut, R>(
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Self
    where
        F: Fn(DynamicArgs) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult,
    {
        let handler = Arc::new(handler);
        DynamicTool {
            name: name.into(),
            description: description.into(),
            title: None,
            annotations: Annotations::default(),
            properties: Vec::new(),
            input_schema: None,
            input_type: None,
            output_schema: None,
            meta: None,
            hidden: false,
            deferred: false,
            forwarded: false,
            rest: true,
            always_visible: false,
            task_support: TaskSupport::Forbidden,
            scopes: Vec::new(),
            coerce: None,
            audience: None,
            handler: Arc::new(move |call: ToolCall| -> BoxFuture {
                let args = DynamicArgs {
                    arguments: call.arguments.into_map(),
                    ctx: call.ctx,
                };
                let run = handler(args);
                Box::pin(async move { run.await.into_tool_result() })
            }),
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A human-readable title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Behaviour hints.
    #[must_use]
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// Adds an argument.
    #[must_use]
    pub fn property(mut self, property: ToolProperty) -> Self {
        self.properties.push(property);
        self
    }

    /// Takes a hand-written input schema (root `type: object`), used verbatim.
    #[must_use]
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = Some(schema);
        self
    }

    /// Takes the input schema of a schemars type.
    #[must_use]
    pub fn input_type<T: JsonSchema>(mut self) -> Self {
        self.input_type = Some(Arc::new(|def: &mut DefBuilder| {
            let schema = generator().root_schema_for::<T>();
            let mut value = schema.to_value();
            if let Some(m) = value.as_object_mut() {
                m.remove("$schema");
                m.remove("title");
            }
            crate::tool::definition::integers::bound_integers(&mut value);
            def.input_schema(value);
        }));
        self
    }

    /// Declares an output schema.
    #[must_use]
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Merges entries into the tool's `_meta`.
    #[must_use]
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta.get_or_insert_with(Map::new).extend(meta);
        self
    }

    /// Registers the tool without listing it until a session enables it.
    #[must_use]
    pub fn hidden(mut self) -> Self {
        self.hidden = true;
        self
    }

    /// Not listed until the built-in tool search finds it (and lists it to the client that
    /// found it); callable by name all along: `defer_loading`.
    #[must_use]
    pub fn deferred(mut self) -> Self {
        self.deferred = true;
        self
    }

    /// Another server's tool (a mount's, an OpenAPI operation's), which checks its own
    /// arguments: what the validator's own rules cannot check is left to it.
    #[must_use]
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn forwarded(mut self) -> Self {
        self.forwarded = true;
        self
    }

    /// Left out of the REST API (and its OpenAPI document) when the server serves one; MCP
    /// clients still call it: `rest = false`.
    #[must_use]
    pub fn rest(mut self, served: bool) -> Self {
        self.rest = served;
        self
    }

    /// Listed whatever a session's allow or block list says (`always_visible`).
    #[must_use]
    pub fn always_visible(mut self) -> Self {
        self.always_visible = true;
        self
    }

    /// The OAuth scopes a caller needs to see and call the tool (as
    /// `#[tool(scopes = ["users:write"])]`).
    #[must_use]
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Listed only to the callers `shown` says yes to, given the caller's key (`subject …`,
    /// `local`, or none for an anonymous caller): a gateway's tools of one user.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    #[must_use]
    pub(crate) fn shown_to(
        mut self,
        shown: impl Fn(Option<&str>) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.audience = Some(crate::tool::definition::def::Audience(Arc::new(shown)));
        self
    }

    /// Whether the tool runs as a task (as `#[tool(task = "optional")]`).
    #[must_use]
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = support;
        self
    }

    /// Converts the arguments a model sent as the wrong JSON type where the input schema
    /// leaves no doubt (`"3"` for an integer, `"true"` for a boolean, JSON text for an array
    /// or object), before validation (as `#[tool(coerce)]`); `false` keeps the tool strict
    /// even when the server converts (`Server::coerce_arguments`).
    ///
    /// ```
    /// use mcp_tool::dynamic::{DynamicTool, ToolProperty};
    /// use mcp_tool::{Server, ToolResult};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let double = DynamicTool::new("double", "Double a number.", |args| async move {
    ///     let n = args.arguments["n"].as_i64().unwrap_or_default();
    ///     ToolResult::text((n * 2).to_string())
    /// })
    /// .property(ToolProperty::integer("n").required())
    /// .coerce(true);
    ///
    /// let server = Server::new("dyn", "1.0.0").without_registry().dynamic_tool(double);
    /// let server = server.build().unwrap();
    /// let result = server.call("double", serde_json::json!({"n": "21"})).await.unwrap();
    /// assert_eq!(result.text_content(), "42");
    /// # }
    /// ```
    #[must_use]
    pub fn coerce(mut self, on: bool) -> Self {
        self.coerce = Some(on);
        self
    }

    /// The definition, built and checked as `#[tool]` ones are, and how the tool runs.
    pub(crate) fn define(&self, server: &str) -> Result<(ToolDef, Call), Vec<String>> {
        let mut def = DefBuilder::for_server(self.name.clone(), server);
        if let Err(e) = check_name(&self.name) {
            def.problem(e);
        }
        def.description(self.description.clone())
            .annotations(self.annotations.clone())
            .hidden(self.hidden)
            .defer_loading(self.deferred)
            .forwarded(self.forwarded)
            .rest(self.rest)
            .always_visible(self.always_visible)
            .task_support(self.task_support)
            .scopes(&self.scopes)
            .takes_whole();
        if let Some(on) = self.coerce {
            def.coercion().arguments(on);
        }
        if let Some(t) = &self.title {
            def.title(t.clone());
        }
        if let Some(m) = &self.meta {
            if let Some(k) = m.keys().find(|k| reserved_meta_key(k)) {
                def.problem(format!("`_meta` key `{k}` uses a prefix MCP reserves"));
            }
            def.meta(m.clone());
        }
        if let Some(define) = &self.input_type {
            define(&mut def);
        } else if let Some(schema) = &self.input_schema {
            def.input_schema(schema.clone());
        } else {
            let mut properties = Map::new();
            let mut required = Vec::new();
            for p in &self.properties {
                properties.insert(p.name.clone(), p.schema());
                if p.required {
                    required.push(Value::String(p.name.clone()));
                }
            }
            let mut schema = Map::new();
            schema.insert("type".into(), Value::String("object".into()));
            schema.insert("properties".into(), Value::Object(properties));
            if !required.is_empty() {
                schema.insert("required".into(), Value::Array(required));
            }
            def.input_schema(Value::Object(schema));
        }
        if let Some(o) = &self.output_schema {
            match schemars::Schema::try_from(o.clone()) {
                Ok(s) => {
                    def.output_schema(s);
                }
                Err(_) => def.problem("the output schema must be a JSON object"),
            }
        }
        let mut def = def.finish()?;
        def.audience = self.audience.clone();
        Ok((def, Call::Dynamic(self.handler.clone())))
    }
}

#[cfg(all(test, not(feature = "full-schema")))]
mod tests {
    use serde_json::json;

    use super::DynamicTool;

    #[test]
    fn another_servers_tool_takes_a_schema_the_rules_check_only_in_part() {
        let schema = json!({
            "type": "object",
            "properties": {"list": {"type": "array", "contains": {"const": 1}}}
        });
        let tool = |forwarded: bool| {
            let tool = DynamicTool::new("t", "d", |_| async { "ok" }).input_schema(schema.clone());
            if forwarded { tool.forwarded() } else { tool }
                .define("s")
                .map(|_| ())
        };
        assert!(tool(true).is_ok());
        let problems = tool(false).unwrap_err();
        assert!(
            problems[0].contains(
                "`contains` at #/properties/list is checked only by the full JSON Schema validator"
            ),
            "{problems:?}"
        );
    }
}
