//! How an OpenAPI document is read as tools.

use super::*;

fn doc(paths: Value) -> Value {
    json!({"openapi": "3.0.3", "servers": [{"url": "/api/{v}", "variables": {"v": {"default": "v3"}}}],
           "paths": paths})
}

#[test]
fn names_come_from_operation_ids_else_method_and_path_sanitized_and_unique() {
    let d = doc(json!({
        "/pets/{id}": {
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}],
            "get": {"operationId": "get pet!", "responses": {}},
            "delete": {"responses": {}},
            "put": {"operationId": "get_pet", "responses": {}}
        }
    }));
    let spec = Url::parse("http://127.0.0.1:8/docs/openapi.json").unwrap();
    let read = read(&d, Some(&spec), None).unwrap();
    let names: Vec<&str> = read.operations.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["get_pet", "get_pet_2", "delete_pets_id"]);
    // The relative server, its variable's default, resolved against the document's URL.
    assert_eq!(
        read.operations[0].base.as_str(),
        "http://127.0.0.1:8/api/v3"
    );
    let delete = &read.operations[2];
    assert_eq!(delete.annotations, annotations("delete"));
    assert_eq!(
        (
            delete.annotations.destructive,
            delete.annotations.idempotent,
            delete.annotations.read_only
        ),
        (Some(true), Some(true), Some(false))
    );
    let get = annotations("get");
    assert_eq!(
        (get.read_only, get.idempotent, get.destructive),
        (Some(true), Some(true), None)
    );
    let post = annotations("post");
    assert_eq!(
        (post.read_only, post.idempotent, post.destructive),
        (Some(false), Some(false), Some(false))
    );
    // A file's relative server needs the mount's `server_url`.
    let e = read_err(&d);
    assert!(
        e.iter()
            .all(|r| r.contains("give the mount a `server_url`")),
        "{e:?}"
    );
    let given = super::read(&d, None, Some("http://127.0.0.1:7/x")).unwrap();
    assert_eq!(given.operations[0].base.as_str(), "http://127.0.0.1:7/x");
}

fn read_err(d: &Value) -> Vec<String> {
    read(d, None, None).unwrap().refused
}

#[test]
fn what_is_not_supported_is_refused_by_operation_and_keyword_and_the_rest_mounts() {
    let d = doc(json!({
        "/upload": {"post": {"operationId": "upload", "requestBody": {"content": {
            "multipart/form-data": {"schema": {"type": "object"}}}}, "responses": {}}},
        "/m/{id}": {"get": {"operationId": "matrix", "parameters": [
            {"name": "id", "in": "path", "required": true, "style": "matrix", "schema": {}}], "responses": {}}},
        "/far": {"get": {"operationId": "far", "responses": {"200": {"description": "", "content": {
            "application/json": {"schema": {"$ref": "other.json#/Pet"}}}}}}},
        "/b": {"post": {"operationId": "body", "parameters": [
            {"name": "q", "in": "body", "schema": {}}], "responses": {}}},
        "/n": {"get": {"operationId": "nowhere", "parameters": [
            {"name": "q", "schema": {}}], "responses": {}}},
        "/ok": {"get": {"operationId": "ok", "responses": {"200": {"description": "", "content": {
            "application/json": {"schema": {"type": "array", "items": {"type": "string"}}}}}}}}
    }));
    let read = read(&d, None, Some("http://127.0.0.1:9")).unwrap();
    assert_eq!(read.operations.len(), 1);
    assert_eq!(
        read.operations[0].output_schema,
        Some(json!({"type": "array", "items": {"type": "string"}}))
    );
    let text = read.refused.join("\n");
    for expected in [
        "operation `upload`: its request body is sent as `multipart/form-data`: only JSON request bodies are supported",
        "operation `matrix`: parameter `id` in path: `style: matrix` is not supported",
        "operation `far`: response: `$ref` `other.json#/Pet` leaves the document",
        "operation `body`: parameter `q`: `in` is \"body\", not `path`, `query`, `header` or `cookie`",
        "operation `nowhere`: parameter `q` has no `in` (`path`, `query`, `header` or `cookie`)",
    ] {
        assert!(text.contains(expected), "{text}");
    }
    let e = super::read(&json!({"swagger": "2.0"}), None, None).unwrap_err();
    assert!(e.contains("Swagger 2.0"), "{e}");
}

#[test]
fn an_operation_of_tools_served_as_rest_reads_as_the_tool() {
    // As the REST API of a server's tools describes one: its hints in `x-mcp-annotations`,
    // its arguments the whole body, its answer MCP content blocks.
    let d = json!({"openapi": "3.1.0", "servers": [{"url": "http://127.0.0.1:9"}],
        "components": {"schemas": {"Content": {"type": "array", "x-mcp-content": true, "items": {}}}},
        "paths": {"/tools/find": {"post": {
            "operationId": "find",
            "x-mcp-annotations": {"readOnlyHint": true, "openWorldHint": false},
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
                "type": "object", "description": "what to find", "minProperties": 1,
                "properties": {"q": {"type": "string"}}, "additionalProperties": false}}}},
            "responses": {"200": {"description": "", "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/Content"}}}}}}}}});
    let read = read(&d, None, None).unwrap();
    let op = &read.operations[0];
    assert_eq!(
        op.input_schema,
        json!({"type": "object", "description": "what to find", "minProperties": 1,
               "properties": {"q": {"type": "string"}}, "additionalProperties": false})
    );
    assert!(op.content_blocks && op.output_schema.is_none());
    let hints = &op.annotations;
    assert_eq!(
        (
            hints.read_only,
            hints.open_world,
            hints.destructive,
            hints.idempotent
        ),
        (Some(true), Some(false), Some(false), Some(false)),
        "declared hints first, the method's beneath"
    );
}
