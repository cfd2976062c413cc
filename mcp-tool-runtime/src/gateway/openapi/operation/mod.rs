//! An OpenAPI document read as tools: each operation its name, description, input schema
//! (parameters and JSON body), output schema (its 2xx JSON answer), annotations (from the
//! method) and the server it is sent to. What cannot be read faithfully is refused with the
//! operation and the keyword named; the other operations are mounted.

use std::collections::BTreeSet;

use reqwest::{Method, Url};
use serde_json::{Map, Value, json};

use super::schema::Converter;
use crate::tool::Annotations;

/// The methods an OpenAPI path item may hold operations for, in its order.
const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// The longest operation name kept (the mount's label and `__` go before it).
const MAX_NAME: usize = 60;

/// Where a parameter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Location {
    Path,
    Query,
    Header,
    Cookie,
}

/// How a parameter's value is written (OpenAPI's `style`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    Simple,
    Form,
    SpaceDelimited,
    PipeDelimited,
    DeepObject,
}

/// One parameter of an operation.
#[derive(Debug, Clone)]
pub(crate) struct Param {
    /// Its property in the tool's arguments.
    pub(crate) property: String,
    /// Its name in the request.
    pub(crate) name: String,
    pub(crate) location: Location,
    pub(crate) style: Style,
    pub(crate) explode: bool,
    /// Described by `content: application/json`: sent as JSON text.
    pub(crate) json: bool,
}

/// How the arguments make the JSON request body.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    /// The body object's properties are the tool's own (beside the parameters).
    Flat { fields: Vec<String>, required: bool },
    /// The whole body is one argument.
    Whole { property: String, required: bool },
}

/// One operation as a tool.
#[derive(Debug, Clone)]
pub(crate) struct Operation {
    /// The tool's name after the label.
    pub(crate) name: String,
    pub(crate) method: Method,
    /// The path template (`/pets/{id}`).
    pub(crate) path: String,
    /// The server the request goes to.
    pub(crate) base: Url,
    pub(crate) params: Vec<Param>,
    pub(crate) body: Option<Body>,
    pub(crate) title: Option<String>,
    pub(crate) description: String,
    pub(crate) input_schema: Value,
    pub(crate) output_schema: Option<Value>,
    pub(crate) annotations: Annotations,
    /// Its 2xx answer is MCP content blocks (a schema marked `x-mcp-content`, as the document
    /// of tools served as REST marks a tool's content): they are the result's content.
    pub(crate) content_blocks: bool,
}

/// A document's operations, and what was refused (one line each, naming the operation).
#[derive(Debug, Default)]
pub(crate) struct Read {
    pub(crate) operations: Vec<Operation>,
    pub(crate) refused: Vec<String>,
}

/// Reads `doc`: its operations sent to `server_url` when given, else to the document's
/// `servers` (a relative one resolved against `spec_url`). An error for a document that is
/// no OpenAPI 3.0 or 3.1 one, or whose server cannot be known.
pub(crate) fn read(
    doc: &Value,
    spec_url: Option<&Url>,
    server_url: Option<&str>,
) -> Result<Read, String> {
    let version = doc["openapi"].as_str().unwrap_or_default();
    if !(version.starts_with("3.0") || version.starts_with("3.1")) {
        return Err(match doc.get("swagger") {
            Some(_) => "a Swagger 2.0 document: only OpenAPI 3.0 and 3.1 are read (convert it to OpenAPI 3 first)".into(),
            None => format!("not an OpenAPI 3.0 or 3.1 document (`openapi` is {:?})", doc.get("openapi").unwrap_or(&Value::Null)),
        });
    }
    let paths = doc["paths"]
        .as_object()
        .ok_or("the document has no `paths`")?;
    let given = server_url.map(checked_url).transpose()?;
    let mut out = Read::default();
    let mut names = BTreeSet::new();
    let converter = &mut Converter::new(doc);
    for (path, item) in paths {
        let item = match converter.deref(item) {
            Ok(item) => item,
            Err(e) => {
                out.refused.push(format!("path `{path}`: {e}"));
                continue;
            }
        };
        for method in METHODS {
            let Some(op) = item.get(*method) else {
                continue;
            };
            let label = op["operationId"].as_str().map_or_else(
                || format!("{} {path}", method.to_uppercase()),
                |id| format!("`{id}`"),
            );
            let base = match &given {
                Some(url) => Ok(url.clone()),
                None => server(doc, item, op, spec_url),
            };
            let built = base.and_then(|base| operation(converter, path, method, item, op, base));
            // What a refused operation gathered is not another's.
            converter.take_defs();
            match built {
                Ok(mut operation) => {
                    operation.name = unique(&mut names, &operation.name);
                    out.operations.push(operation);
                }
                Err(e) => out.refused.push(format!("operation {label}: {e}")),
            }
        }
    }
    Ok(out)
}

/// A URL the mount may send requests to: absolute `http(s)`.
fn checked_url(text: &str) -> Result<Url, String> {
    let url = Url::parse(text).map_err(|e| format!("`{text}` is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(format!("`{text}` is not an http(s) URL"));
    }
    Ok(url)
}

/// The server of `op`: its own `servers`, else its path's, else the document's (none: `/`),
/// the first of them with its variables' defaults, resolved against the document's URL.
fn server(doc: &Value, item: &Value, op: &Value, spec_url: Option<&Url>) -> Result<Url, String> {
    let servers = [&op["servers"], &item["servers"], &doc["servers"]]
        .into_iter()
        .find_map(|s| s.as_array().filter(|a| !a.is_empty()));
    let first = servers.and_then(|s| s.first());
    let mut text = first
        .and_then(|s| s["url"].as_str())
        .unwrap_or("/")
        .to_owned();
    if let Some(variables) = first.and_then(|s| s["variables"].as_object()) {
        for (name, variable) in variables {
            let default = variable["default"]
                .as_str()
                .ok_or_else(|| format!("the server variable `{name}` has no default"))?;
            text = text.replace(&format!("{{{name}}}"), default);
        }
    }
    if text.contains('{') {
        return Err(format!(
            "the server `{text}` has a variable without a default"
        ));
    }
    match Url::parse(&text) {
        Ok(_) => checked_url(&text),
        Err(_) => {
            let spec = spec_url.ok_or_else(|| format!(
                "the document's server `{text}` is relative and the document is a file: give the mount a `server_url`"
            ))?;
            let url = spec
                .join(&text)
                .map_err(|e| format!("the server `{text}` cannot be resolved: {e}"))?;
            checked_url(url.as_str())
        }
    }
}

/// A tool name of `text`: letters, digits, `_` and `-`, other runs of characters one `_`.
pub(crate) fn sanitize(text: &str) -> String {
    let mut name = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
            name.push(c);
        } else if !name.ends_with('_') {
            name.push('_');
        }
    }
    let name = name.trim_matches('_');
    let mut name: String = name.chars().take(MAX_NAME).collect();
    if name.is_empty() {
        name.push_str("operation");
    }
    name
}

/// `name`, or `name_2`, `name_3`… when taken.
fn unique(names: &mut BTreeSet<String>, name: &str) -> String {
    let mut candidate = name.to_owned();
    let mut n = 2;
    while names.contains(&candidate) {
        candidate = format!("{name}_{n}");
        n += 1;
    }
    names.insert(candidate.clone());
    candidate
}

fn operation(
    converter: &mut Converter<'_>,
    path: &str,
    method: &str,
    item: &Value,
    op: &Value,
    base: Url,
) -> Result<Operation, String> {
    if !path.starts_with('/') {
        return Err(format!("the path `{path}` does not start with `/`"));
    }
    let name = sanitize(
        &op["operationId"]
            .as_str()
            .map_or_else(|| format!("{method}_{path}"), str::to_owned),
    );
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut params = Vec::new();
    // The operation's parameters override its path's of the same name and place.
    let mut declared: Vec<&Value> = Vec::new();
    for list in [&op["parameters"], &item["parameters"]] {
        for p in list.as_array().into_iter().flatten() {
            let p = converter.deref(p)?;
            let key = (&p["name"], &p["in"]);
            if !declared.iter().any(|d| (&d["name"], &d["in"]) == key) {
                declared.push(p);
            }
        }
    }
    for p in declared {
        let Some((param, schema, needed)) = parameter(converter, p)? else {
            continue;
        };
        let mut property = param.name.clone();
        if properties.contains_key(&property) {
            property = format!("{}_{}", location_word(param.location), param.name);
            if properties.contains_key(&property) {
                return Err(format!("two parameters named `{}`", param.name));
            }
        }
        if needed {
            required.push(Value::String(property.clone()));
        }
        properties.insert(property.clone(), schema);
        params.push(Param { property, ..param });
    }
    for segment in path.split('{').skip(1) {
        let name = segment.split('}').next().unwrap_or_default();
        if !params
            .iter()
            .any(|p| p.location == Location::Path && p.name == name)
        {
            return Err(format!("the path parameter `{name}` is not declared"));
        }
    }
    let body = match op.get("requestBody") {
        Some(body) => request_body(
            converter,
            body,
            &mut properties,
            &mut required,
            params.is_empty(),
        )?,
        None => None,
    };
    let mut input = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        input["required"] = Value::Array(required);
    }
    let body = body.map(|(body, root)| {
        match root {
            Root::Whole(schema) => input = schema,
            Root::Extra(extra) => input["additionalProperties"] = extra,
            Root::Built => {}
        }
        body
    });
    let defs = converter.take_defs();
    if !defs.is_empty() {
        input["$defs"] = Value::Object(defs);
    }
    let (output_schema, content_blocks) = output(converter, op)?;
    let summary = op["summary"]
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let details = op["description"]
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let mut description = match (summary, details) {
        (Some(s), Some(d)) => format!("{s}\n\n{d}"),
        (Some(t), None) | (None, Some(t)) => t.to_owned(),
        (None, None) => format!("{} {path}", method.to_uppercase()),
    };
    if op["deprecated"] == json!(true) {
        description.insert_str(0, "(Deprecated) ");
    }
    Ok(Operation {
        name,
        method: Method::from_bytes(method.to_uppercase().as_bytes()).map_err(|e| e.to_string())?,
        path: path.to_owned(),
        base,
        params,
        body,
        title: summary.filter(|_| details.is_some()).map(str::to_owned),
        description,
        input_schema: input,
        output_schema,
        annotations: declared_hints(annotations(method), op),
        content_blocks,
    })
}

/// `hints` with those the operation declares in `x-mcp-annotations` (as an OpenAPI document
/// of tools served as REST writes them) put first.
fn declared_hints(hints: Annotations, op: &Value) -> Annotations {
    let declared = |key: &str| op["x-mcp-annotations"][key].as_bool();
    Annotations {
        read_only: declared("readOnlyHint").or(hints.read_only),
        destructive: declared("destructiveHint").or(hints.destructive),
        idempotent: declared("idempotentHint").or(hints.idempotent),
        open_world: declared("openWorldHint").or(hints.open_world),
    }
}

/// The hints a method gives: GET and HEAD read only and idempotent, PUT and DELETE
/// idempotent, DELETE destructive; every call reaches a service outside the gateway.
pub(crate) fn annotations(method: &str) -> Annotations {
    let read_only = matches!(method, "get" | "head" | "options" | "trace");
    Annotations {
        read_only: Some(read_only),
        destructive: (!read_only).then_some(method == "delete"),
        idempotent: Some(read_only || matches!(method, "put" | "delete")),
        open_world: Some(true),
    }
}

fn location_word(location: Location) -> &'static str {
    match location {
        Location::Path => "path",
        Location::Query => "query",
        Location::Header => "header",
        Location::Cookie => "cookie",
    }
}

/// One parameter: how it is sent, its schema, and whether it is required; `None` for the
/// headers OpenAPI says are ignored (`Accept`, `Content-Type`, `Authorization`).
fn parameter(
    converter: &mut Converter<'_>,
    p: &Value,
) -> Result<Option<(Param, Value, bool)>, String> {
    let name = p["name"]
        .as_str()
        .ok_or("a parameter without a `name`")?
        .to_owned();
    let location = match p["in"].as_str() {
        Some("path") => Location::Path,
        Some("query") => Location::Query,
        Some("header") => Location::Header,
        Some("cookie") => Location::Cookie,
        Some(other) => {
            return Err(format!(
                "parameter `{name}`: `in` is {other:?}, not `path`, `query`, `header` or `cookie`"
            ));
        }
        None => {
            return Err(format!(
                "parameter `{name}` has no `in` (`path`, `query`, `header` or `cookie`)"
            ));
        }
    };
    if location == Location::Header
        && ["accept", "content-type", "authorization"].contains(&name.to_ascii_lowercase().as_str())
    {
        return Ok(None);
    }
    let default_style = match location {
        Location::Path | Location::Header => "simple",
        Location::Query | Location::Cookie => "form",
    };
    let style_word = p["style"].as_str().unwrap_or(default_style);
    let style = match (location, style_word) {
        (Location::Path | Location::Header, "simple") => Style::Simple,
        (Location::Query | Location::Cookie, "form") => Style::Form,
        (Location::Query, "spaceDelimited") => Style::SpaceDelimited,
        (Location::Query, "pipeDelimited") => Style::PipeDelimited,
        (Location::Query, "deepObject") => Style::DeepObject,
        (_, other) => {
            return Err(format!(
                "parameter `{name}` in {}: `style: {other}` is not supported",
                location_word(location)
            ));
        }
    };
    let explode = p["explode"].as_bool().unwrap_or(style == Style::Form);
    if matches!(style, Style::SpaceDelimited | Style::PipeDelimited) && explode {
        return Err(format!(
            "parameter `{name}`: `style: {style_word}` with `explode: true` is not supported (it is `form`'s)"
        ));
    }
    if style == Style::DeepObject && !explode {
        return Err(format!(
            "parameter `{name}`: `style: deepObject` with `explode: false` is not supported"
        ));
    }
    let (schema, json) = match (p.get("schema"), p.get("content")) {
        (Some(schema), _) => (schema.clone(), false),
        (None, Some(Value::Object(content))) => {
            let (media, entry) = content
                .iter()
                .next()
                .ok_or_else(|| format!("parameter `{name}`: `content` is empty"))?;
            if !is_json(media) {
                return Err(format!(
                    "parameter `{name}`: `content` of type `{media}` is not supported (only JSON)"
                ));
            }
            (entry.get("schema").cloned().unwrap_or(json!({})), true)
        }
        _ => (json!({}), false),
    };
    let mut schema = converter
        .convert(&schema)
        .map_err(|e| format!("parameter `{name}`: {e}"))?;
    if let Some(m) = schema.as_object_mut() {
        if let Some(d) = p["description"].as_str() {
            m.entry("description")
                .or_insert_with(|| Value::String(d.to_owned()));
        }
        if p["deprecated"] == json!(true) {
            m.insert("deprecated".into(), Value::Bool(true));
        }
    }
    let needed = location == Location::Path || p["required"] == json!(true);
    Ok(Some((
        Param {
            property: String::new(),
            name,
            location,
            style,
            explode,
            json,
        },
        schema,
        needed,
    )))
}

/// Whether a media type is JSON (`application/json`, `…+json`).
pub(crate) fn is_json(media: &str) -> bool {
    let essence = media
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// What the request body makes of the input schema's root.
enum Root {
    /// The body's schema is the input schema, whole (a required object body, no parameter).
    Whole(Value),
    /// The properties and the parameters' make it, with the body's `additionalProperties`.
    Extra(Value),
    /// The properties and the parameters' make it.
    Built,
}

/// The request body: the whole input schema when it is a required object and no parameter is
/// beside it; else its object's properties beside the parameters when it is an object whose
/// names they do not take, else one `body` argument.
fn request_body(
    converter: &mut Converter<'_>,
    body: &Value,
    properties: &mut Map<String, Value>,
    required: &mut Vec<Value>,
    alone: bool,
) -> Result<Option<(Body, Root)>, String> {
    let body = converter.deref(body)?;
    let Some(content) = body["content"].as_object() else {
        return Ok(None);
    };
    let Some((_, media)) = content.iter().find(|(m, _)| is_json(m)) else {
        let kinds: Vec<&str> = content.keys().map(String::as_str).collect();
        return match kinds.is_empty() {
            true => Ok(None),
            false => Err(format!(
                "its request body is sent as `{}`: only JSON request bodies are supported",
                kinds.join("`, `")
            )),
        };
    };
    let needed = body["required"] == json!(true);
    let schema = converter
        .convert_inline(media.get("schema").unwrap_or(&json!({})))
        .map_err(|e| format!("request body: {e}"))?;
    if alone && needed && schema["type"] == json!("object") {
        let fields = schema["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let body = Body::Flat {
            fields,
            required: true,
        };
        return Ok(Some((body, Root::Whole(schema))));
    }
    let flat = schema["type"] == json!("object")
        && schema.get("properties").is_some_and(Value::is_object)
        && [
            "allOf",
            "anyOf",
            "oneOf",
            "not",
            "if",
            "$ref",
            "patternProperties",
        ]
        .iter()
        .all(|k| schema.get(*k).is_none())
        && (alone || schema.get("additionalProperties").is_none())
        && schema["properties"]
            .as_object()
            .is_some_and(|p| p.keys().all(|k| !properties.contains_key(k)));
    if flat {
        let mut fields = Vec::new();
        for (name, field) in schema["properties"].as_object().into_iter().flatten() {
            properties.insert(name.clone(), field.clone());
            fields.push(name.clone());
        }
        if needed {
            required.extend(schema["required"].as_array().into_iter().flatten().cloned());
        }
        // Alone (no parameter beside it): the body's own rule for other names holds.
        let root = match schema.get("additionalProperties") {
            Some(extra) => Root::Extra(extra.clone()),
            None => Root::Built,
        };
        return Ok(Some((
            Body::Flat {
                fields,
                required: needed,
            },
            root,
        )));
    }
    let mut property = "body".to_owned();
    if properties.contains_key(&property) {
        property = "request_body".into();
        if properties.contains_key(&property) {
            return Err("parameters named both `body` and `request_body` leave no name for the request body".into());
        }
    }
    properties.insert(property.clone(), schema);
    if needed {
        required.push(Value::String(property.clone()));
    }
    Ok(Some((
        Body::Whole {
            property,
            required: needed,
        },
        Root::Built,
    )))
}

/// The output schema: that of the one 2xx answer, when it is JSON with a schema; and whether
/// that schema is MCP content blocks (then no output schema: the blocks are the content).
fn output(converter: &mut Converter<'_>, op: &Value) -> Result<(Option<Value>, bool), String> {
    let Some(responses) = op["responses"].as_object() else {
        return Ok((None, false));
    };
    let success: Vec<&Value> = responses
        .iter()
        .filter(|(code, _)| code.starts_with('2'))
        .map(|(_, r)| r)
        .collect();
    let [response] = success.as_slice() else {
        return Ok((None, false));
    };
    let response = converter.deref(response)?;
    let Some(content) = response["content"].as_object() else {
        return Ok((None, false));
    };
    let Some((_, media)) = content.iter().find(|(m, _)| is_json(m)) else {
        return Ok((None, false));
    };
    let Some(schema) = media
        .get("schema")
        .filter(|s| s.as_object().is_some_and(|m| !m.is_empty()))
    else {
        return Ok((None, false));
    };
    let target = converter
        .deref(schema)
        .map_err(|e| format!("response: {e}"))?;
    if target["x-mcp-content"] == json!(true) {
        return Ok((None, true));
    }
    let mut schema = converter
        .convert_inline(schema)
        .map_err(|e| format!("response: {e}"))?;
    let defs = converter.take_defs();
    if !defs.is_empty()
        && let Some(m) = schema.as_object_mut()
    {
        m.insert("$defs".into(), Value::Object(defs));
    }
    Ok((Some(schema), false))
}

#[cfg(test)]
mod tests;
