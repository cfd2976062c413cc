//! The OpenAPI 3.1 document of the REST API, made from the catalog as it is (a gateway's
//! mounted tools included): one operation per tool served, whose request body is the tool's
//! input schema and whose 200 answer is its output schema (or its content), with the errors
//! every call may answer, the tool's annotations (`x-mcp-annotations`) and scopes, and the
//! endpoint's bearer authentication. Tool schemas are JSON Schema 2020-12, the dialect of
//! OpenAPI 3.1: they are kept as they are, but their `$defs` move to `components/schemas`
//! (each named after its tool) and their `$ref`s follow them.

use std::sync::Arc;

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use crate::protocol::jsonrpc;
use crate::server::ServerHandle;
use crate::tool::{TaskSupport, ToolDef};

use super::super::config::HttpConfig;
use super::super::endpoint::{Endpoint, split_url};
use super::answer::reword;
use super::base_of;

/// `GET {base}/openapi.json`: the document, for a caller the endpoint admits (the tools it
/// lists are those the caller's scopes let it call).
pub(in super::super) async fn handle_document(
    State(endpoint): State<Arc<Endpoint>>,
    request: axum::extract::Request,
) -> Response {
    let (parts, _) = request.into_parts();
    let identity = match endpoint.admit(&parts).await {
        Ok(i) => i,
        Err(refusal) => return reword(*refusal).await,
    };
    let granted = identity.as_ref().map(|i| &i.scopes[..]);
    let document = document(&endpoint.server, &endpoint.config, granted);
    (
        [(header::CONTENT_TYPE, "application/json")],
        jsonrpc::json_string(&document),
    )
        .into_response()
}

/// Whether the document lists `def` and REST serves it in full: a tool the model sees, not
/// hidden, not one user's, not left out (`rest = false`, `OpenApi::exclude`), that does not
/// run only as a task.
fn documented(def: &ToolDef, config: &HttpConfig, granted: Option<&[String]>) -> bool {
    config.openapi.as_ref().is_some_and(|o| o.serves(def))
        && def.for_model()
        && !def.hidden()
        && def.shown_to(None)
        && def.task_support() != TaskSupport::Required
        && def.missing_scopes(granted).is_empty()
}

/// The document, for a caller granted `granted` (`None`: every tool).
pub(crate) fn document(
    server: &ServerHandle,
    config: &HttpConfig,
    granted: Option<&[String]>,
) -> Value {
    let shared = &server.shared;
    let info = &shared.info;
    let catalog = server.catalog();
    let mut schemas = Map::new();
    schemas.insert("Problem".into(), problem_schema());
    schemas.insert("Content".into(), content_schema());
    let mut paths = Map::new();
    let secured = config.auth.is_some();
    for entry in catalog.entries() {
        let def = &entry.def;
        if !documented(def, config, granted) {
            continue;
        }
        let name = &*entry.name;
        let input = lift(def.input_schema(), name, "input", &mut schemas);
        let output = match def.output_schema() {
            Some(schema) => lift(schema, name, "output", &mut schemas),
            None => json!({"$ref": "#/components/schemas/Content"}),
        };
        let answer = match def.output_schema() {
            Some(_) => "The tool's structured result.",
            None => "The tool's content blocks (it declares no output schema).",
        };
        let mut operation = json!({
            "operationId": name,
            "summary": def.title().unwrap_or(name),
            "requestBody": {
                "required": true,
                "content": {"application/json": {"schema": input}},
            },
            "responses": {
                "200": {
                    "description": answer,
                    "content": {"application/json": {"schema": output}},
                },
                "400": {"$ref": "#/components/responses/BadRequest"},
                "404": {"$ref": "#/components/responses/NotFound"},
                "422": {"$ref": "#/components/responses/Invalid"},
                "429": {"$ref": "#/components/responses/RateLimited"},
                "500": {"$ref": "#/components/responses/Failed"},
                "default": {"$ref": "#/components/responses/Error"},
            },
            "x-mcp-tool": name,
        });
        let mut description = def.description().unwrap_or_default().to_owned();
        let hints = def.annotations();
        if hints.read_only == Some(true) {
            description.push_str(if description.is_empty() { "" } else { "\n\n" });
            description.push_str("Read-only: the tool changes nothing.");
        }
        if !description.is_empty() {
            operation["description"] = Value::String(description);
        }
        let mut annotations = Map::new();
        for (key, value) in [
            ("readOnlyHint", hints.read_only),
            ("destructiveHint", hints.destructive),
            ("idempotentHint", hints.idempotent),
            ("openWorldHint", hints.open_world),
        ] {
            if let Some(value) = value {
                annotations.insert(key.into(), Value::Bool(value));
            }
        }
        if !annotations.is_empty() {
            operation["x-mcp-annotations"] = Value::Object(annotations);
        }
        if def.deferred() {
            operation["x-mcp-defer-loading"] = Value::Bool(true);
        }
        if secured {
            operation["security"] = json!([{"bearer": def.scopes()}]);
            let responses = &mut operation["responses"];
            responses["401"] = json!({"$ref": "#/components/responses/Unauthorized"});
            responses["403"] = json!({"$ref": "#/components/responses/Forbidden"});
        }
        paths.insert(format!("/tools/{name}"), json!({"post": operation}));
    }
    let mut components = json!({
        "schemas": schemas,
        "responses": responses(),
    });
    let mut document = json!({
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "info": {
            "title": info.title.as_deref().unwrap_or(&info.name),
            "version": info.version,
        },
        "servers": [{"url": match base_of(&config.path) { "" => "/", base => base }}],
        "paths": paths,
    });
    let about = info
        .description
        .as_deref()
        .or(shared.instructions.as_deref());
    if let Some(about) = about {
        document["info"]["description"] = Value::String(about.to_owned());
    }
    if secured {
        let mut scheme = json!({
            "type": "http",
            "scheme": "bearer",
            "description": "The bearer token the MCP endpoint takes. An operation lists the scopes the token needs.",
        });
        if let Some(meta) = &config.resource_metadata {
            let (origin, path) = split_url(&meta.resource);
            scheme["description"] = Value::String(format!(
                "An OAuth access token for {}, as the MCP endpoint takes (RFC 9728 metadata: {origin}/.well-known/oauth-protected-resource{path}). An operation lists the scopes the token needs.",
                meta.resource
            ));
            if !meta.authorization_servers.is_empty() {
                scheme["x-authorization-servers"] = json!(meta.authorization_servers);
            }
        }
        components["securitySchemes"] = json!({"bearer": scheme});
        document["security"] = json!([{"bearer": []}]);
    }
    document["components"] = components;
    document
}

/// A tool's schema as the document holds it: its `$defs` moved to `components/schemas` as
/// `{tool}.{name}` (`{tool}.{kind}.{name}` when another schema of the tool took the name for
/// something else) and its `$ref`s rewritten to follow; a reference to the schema's own root
/// makes the schema a component too (`{tool}.{kind}`).
fn lift(schema: &Value, tool: &str, kind: &str, components: &mut Map<String, Value>) -> Value {
    let mut schema = schema.clone();
    let mut renamed: Vec<(String, String)> = Vec::new();
    if let Some(Value::Object(defs)) = schema.as_object_mut().and_then(|s| s.remove("$defs")) {
        for (name, def) in defs {
            let mut key = format!("{tool}.{}", component_name(&name));
            if components.get(&key).is_some_and(|taken| *taken != def) {
                key = format!("{tool}.{kind}.{}", component_name(&name));
            }
            renamed.push((name, key));
            components.insert(renamed[renamed.len() - 1].1.clone(), def);
        }
    }
    let root = format!("{tool}.{kind}");
    if let Some(object) = schema.as_object_mut() {
        // The document says the dialect; a root's own `$id` would move what its `$ref`s mean.
        object.remove("$schema");
        object.remove("$id");
    }
    let mut refers_to_root = false;
    let keys: Vec<String> = renamed.iter().map(|(_, k)| k.clone()).collect();
    rewrite(&mut schema, &renamed, &root, &mut refers_to_root);
    for key in keys {
        if let Some(def) = components.get_mut(&key) {
            rewrite(def, &renamed, &root, &mut refers_to_root);
        }
    }
    if refers_to_root {
        components.insert(root.clone(), schema);
        return json!({"$ref": format!("#/components/schemas/{root}")});
    }
    schema
}

/// A component's name: the characters OpenAPI allows (`A-Z a-z 0-9 . _ -`), others `_`.
fn component_name(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '.' | '_' | '-' => c,
            _ => '_',
        })
        .collect()
}

/// Rewrites the local `$ref`s of `value`: into `$defs` to the components they moved to,
/// elsewhere into the schema to its root's component (`root`, noted in `to_root`).
fn rewrite(value: &mut Value, renamed: &[(String, String)], root: &str, to_root: &mut bool) {
    match value {
        Value::Object(object) => {
            if let Some(Value::String(target)) = object.get_mut("$ref")
                && let Some(pointer) = target.strip_prefix('#')
                && !pointer.starts_with("/components/")
            {
                let moved = pointer.strip_prefix("/$defs/").and_then(|rest| {
                    let (token, tail) = rest.split_once('/').map_or((rest, ""), |(t, r)| (t, r));
                    let name = token.replace("~1", "/").replace("~0", "~");
                    renamed.iter().find(|(n, _)| *n == name).map(|(_, key)| {
                        let tail = if tail.is_empty() {
                            String::new()
                        } else {
                            format!("/{tail}")
                        };
                        format!("#/components/schemas/{key}{tail}")
                    })
                });
                *target = match moved {
                    Some(moved) => moved,
                    None => {
                        *to_root = true;
                        format!("#/components/schemas/{root}{pointer}")
                    }
                };
            }
            for (_, child) in object.iter_mut() {
                rewrite(child, renamed, root, to_root);
            }
        }
        Value::Array(items) => {
            for item in items {
                rewrite(item, renamed, root, to_root);
            }
        }
        _ => {}
    }
}

/// RFC 9457 problem details, as every refusal of a call is written.
fn problem_schema() -> Value {
    json!({
        "type": "object",
        "description": "An RFC 9457 problem: the status, and the message an MCP client gets for the same call.",
        "required": ["title", "status", "detail"],
        "properties": {
            "title": {"type": "string"},
            "status": {"type": "integer"},
            "detail": {"type": "string"},
            "code": {"type": "string", "description": "The tool's error code."},
            "message": {"type": "string", "description": "The tool error's own message (`detail` without its code and suggestion)."},
            "suggestion": {"type": "string"},
            "retryable": {"type": "boolean"},
            "errors": {
                "type": "array",
                "description": "The fields that do not fit the input schema.",
                "items": {
                    "type": "object",
                    "required": ["pointer", "field", "message"],
                    "properties": {
                        "pointer": {"type": "string", "description": "A JSON Pointer into the body."},
                        "field": {"type": "string"},
                        "message": {"type": "string"},
                    },
                },
            },
        },
    })
}

/// MCP content blocks (the answer of a tool without an output schema), marked
/// `x-mcp-content` so that an OpenAPI mount of the document makes them a result's content again.
fn content_schema() -> Value {
    json!({
        "type": "array",
        "x-mcp-content": true,
        "description": "MCP content blocks: text, images, audio, resource links and embedded resources.",
        "items": {
            "type": "object",
            "required": ["type"],
            "properties": {"type": {"type": "string"}},
        },
    })
}

/// The error answers every operation shares.
fn responses() -> Value {
    let problem = |description: &str| {
        json!({
            "description": description,
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}},
        })
    };
    let mut limited = problem("Too many calls: the rate limit, or a tool's `RATE_LIMITED` error.");
    limited["headers"] = json!({
        "Retry-After": {"description": "Seconds to wait before calling again.", "schema": {"type": "integer"}},
    });
    let mut unauthorized = problem(
        "No credentials, or credentials refused (with the `WWW-Authenticate` challenge of the MCP endpoint).",
    );
    unauthorized["headers"] = json!({
        "WWW-Authenticate": {"schema": {"type": "string"}},
    });
    let mut forbidden = problem(
        "The token lacks a scope the tool needs (the `insufficient_scope` challenge names every scope), or the tool's `FORBIDDEN` error.",
    );
    forbidden["headers"] = json!({
        "WWW-Authenticate": {"schema": {"type": "string"}},
    });
    json!({
        "BadRequest": problem("The body is not a JSON object, or the tool's invalid-argument error."),
        "NotFound": problem("No such tool over REST, or the tool's `NOT_FOUND` error."),
        "Invalid": problem("The arguments do not fit the input schema: `errors` names each field."),
        "RateLimited": limited,
        "Failed": problem("The tool failed (an error without a code, or one of a code not listed)."),
        "Error": problem("Another error of the tool (its code says which: see the code table of the REST API)."),
        "Unauthorized": unauthorized,
        "Forbidden": forbidden,
    })
}
