//! A tool call's arguments written as the HTTP request its operation describes: path, query,
//! header and cookie parameters by their `style` and `explode`, and the JSON body.

use reqwest::Url;
use serde_json::{Map, Value};

use super::operation::{Body, Location, Operation, Param, Style};
use crate::protocol::oauth::fetch::form_encode;

/// The request of one call, before credentials.
#[derive(Debug)]
pub(crate) struct Request {
    pub(crate) url: Url,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Option<Value>,
}

/// Builds the request `op` makes of `arguments` (checked against its input schema already),
/// with `extra_query` (the connection's query parameters) added.
pub(crate) fn build(
    op: &Operation,
    mut arguments: Map<String, Value>,
    extra_query: &[(String, String)],
) -> Result<Request, String> {
    let mut path = op.path.clone();
    let mut query: Vec<String> = Vec::new();
    let mut headers = Vec::new();
    let mut cookies = Vec::new();
    for param in &op.params {
        let Some(value) = arguments.remove(&param.property) else {
            continue;
        };
        if value.is_null() {
            continue;
        }
        match param.location {
            Location::Path => {
                let text = simple(param, &value, true);
                path = path.replace(&format!("{{{}}}", param.name), &text);
            }
            Location::Query => query.extend(form(param, &value)),
            Location::Header => headers.push((param.name.clone(), simple(param, &value, false))),
            Location::Cookie => {
                let text = if param.json {
                    json_text(&value)
                } else {
                    join(&value, ",", false)
                };
                cookies.push(format!("{}={}", param.name, text));
            }
        }
    }
    if !cookies.is_empty() {
        headers.push(("Cookie".into(), cookies.join("; ")));
    }
    for (name, value) in extra_query {
        query.push(format!("{}={}", form_encode(name), form_encode(value)));
    }
    let body = match &op.body {
        None => None,
        Some(Body::Whole { property, required }) => match arguments.remove(property) {
            Some(value) => Some(value),
            None => required.then(|| Value::Object(Map::new())),
        },
        Some(Body::Flat { fields, required }) => {
            let mut object = Map::new();
            for field in fields {
                if let Some(value) = arguments.remove(field) {
                    object.insert(field.clone(), value);
                }
            }
            // What is left is the body's too (its schema allowed other names).
            object.extend(arguments);
            (*required || !object.is_empty()).then_some(Value::Object(object))
        }
    };
    let mut url = join_path(&op.base, &path)?;
    if !query.is_empty() {
        let mut all = url
            .query()
            .map(str::to_owned)
            .into_iter()
            .collect::<Vec<_>>();
        all.extend(query);
        url.set_query(Some(&all.join("&")));
    }
    Ok(Request { url, headers, body })
}

/// The server's URL with `path` (its parameters written, each encoded) after its own path.
fn join_path(base: &Url, path: &str) -> Result<Url, String> {
    let mut url = base.clone();
    let joined = format!("{}{path}", base.path().trim_end_matches('/'));
    url.set_path(&joined);
    if url.origin() != base.origin() {
        return Err("the request would leave the service's origin".into());
    }
    Ok(url)
}

/// One value as text: a string as it is, anything else as JSON.
fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => json_text(other),
    }
}

fn json_text(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// `value` in `simple` style (path and header): an array's items and an object's pairs
/// joined by `,` (`k=v` pairs when exploded), each piece encoded for a path when `encode`.
fn simple(param: &Param, value: &Value, encode: bool) -> String {
    if param.json {
        let text = json_text(value);
        return if encode { form_encode(&text) } else { text };
    }
    let piece = |s: &str| if encode { form_encode(s) } else { s.to_owned() };
    match value {
        Value::Array(items) => items
            .iter()
            .map(|i| piece(&scalar(i)))
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(fields) => fields
            .iter()
            .map(|(k, v)| {
                let sep = if param.explode { "=" } else { "," };
                format!("{}{sep}{}", piece(k), piece(&scalar(v)))
            })
            .collect::<Vec<_>>()
            .join(","),
        other => piece(&scalar(other)),
    }
}

/// An array's items or an object's pairs (`k,v`) joined by `sep`, encoded for a query when
/// `encode`.
fn join(value: &Value, sep: &str, encode: bool) -> String {
    let piece = |s: &str| if encode { form_encode(s) } else { s.to_owned() };
    match value {
        Value::Array(items) => items
            .iter()
            .map(|i| piece(&scalar(i)))
            .collect::<Vec<_>>()
            .join(sep),
        Value::Object(fields) => fields
            .iter()
            .flat_map(|(k, v)| [piece(k), piece(&scalar(v))])
            .collect::<Vec<_>>()
            .join(sep),
        other => piece(&scalar(other)),
    }
}

/// A query parameter's `name=value` pairs, encoded, by its style: `form` (exploded: an
/// array's items each their own pair, an object's properties each their own parameter),
/// `spaceDelimited` and `pipeDelimited` arrays, `deepObject` objects (`name[key]=value`).
fn form(param: &Param, value: &Value) -> Vec<String> {
    let name = form_encode(&param.name);
    if param.json {
        return vec![format!("{name}={}", form_encode(&json_text(value)))];
    }
    match (param.style, value) {
        (Style::DeepObject, Value::Object(fields)) => fields
            .iter()
            .map(|(k, v)| format!("{name}%5B{}%5D={}", form_encode(k), form_encode(&scalar(v))))
            .collect(),
        (Style::Form, Value::Array(items)) if param.explode => items
            .iter()
            .map(|i| format!("{name}={}", form_encode(&scalar(i))))
            .collect(),
        (Style::Form, Value::Object(fields)) if param.explode => fields
            .iter()
            .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(&scalar(v))))
            .collect(),
        (Style::SpaceDelimited, v @ (Value::Array(_) | Value::Object(_))) => {
            vec![format!("{name}={}", join(v, "%20", true))]
        }
        (Style::PipeDelimited, v @ (Value::Array(_) | Value::Object(_))) => {
            vec![format!("{name}={}", join(v, "|", true))]
        }
        (_, v) => vec![format!("{name}={}", join(v, ",", true))],
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::gateway::openapi::operation::read;

    fn op(parameters: Value, body: Option<Value>) -> Operation {
        let mut get = json!({"operationId": "op", "parameters": parameters, "responses": {}});
        if let Some(body) = body {
            get["requestBody"] = body;
        }
        let doc = json!({"openapi": "3.1.0", "servers": [{"url": "http://127.0.0.1:9/api/"}],
                         "paths": {"/things/{id}": {"post": get}}});
        let mut read = read(&doc, None, None).unwrap();
        assert!(read.refused.is_empty(), "{:?}", read.refused);
        read.operations.remove(0)
    }

    fn id() -> Value {
        json!({"name": "id", "in": "path", "required": true, "schema": {"type": "string"}})
    }

    fn q(name: &str, style: &str, explode: bool) -> Value {
        json!({"name": name, "in": "query", "style": style, "explode": explode, "schema": {}})
    }

    #[test]
    fn query_styles_write_arrays_and_objects_as_openapi_says() {
        let o = op(
            json!([
                id(),
                q("a", "form", true),
                q("b", "form", false),
                q("c", "spaceDelimited", false),
                q("d", "pipeDelimited", false),
                q("e", "deepObject", true),
                q("f", "form", true),
                q("g", "form", false)
            ]),
            None,
        );
        let args = json!({"id": "x/y z", "a": [1, "two"], "b": ["p", "q,r"], "c": [1, 2], "d": [3, 4],
                          "e": {"k": "v w", "n": 1}, "f": {"lat": 1, "lon": 2}, "g": {"x": 1, "y": 2}});
        let r = build(
            &o,
            args.as_object().unwrap().clone(),
            &[("key".into(), "s&t".into())],
        )
        .unwrap();
        assert_eq!(r.url.path(), "/api/things/x%2Fy%20z");
        assert_eq!(
            r.url.query().unwrap(),
            "a=1&a=two&b=p,q%2Cr&c=1%202&d=3|4&e%5Bk%5D=v%20w&e%5Bn%5D=1&lat=1&lon=2&g=x,1,y,2&key=s%26t"
        );
        assert!(r.body.is_none());
    }

    #[test]
    fn headers_cookies_and_simple_style_arrays_and_objects() {
        let o = op(
            json!([
                {"name": "id", "in": "path", "required": true, "schema": {"type": "array"}},
                {"name": "X-Tags", "in": "header", "schema": {}},
                {"name": "X-Point", "in": "header", "explode": true, "schema": {}},
                {"name": "session", "in": "cookie", "schema": {}},
                {"name": "filter", "in": "query", "content": {"application/json": {"schema": {}}}},
                {"name": "Accept", "in": "header", "schema": {}}
            ]),
            None,
        );
        assert!(
            !o.input_schema["properties"]
                .as_object()
                .unwrap()
                .contains_key("Accept")
        );
        let args = json!({"id": [1, 2], "X-Tags": ["a", "b"], "X-Point": {"x": 1, "y": 2},
                          "session": "abc", "filter": {"n": [1]}});
        let r = build(&o, args.as_object().unwrap().clone(), &[]).unwrap();
        assert_eq!(r.url.path(), "/api/things/1,2");
        assert_eq!(r.url.query().unwrap(), "filter=%7B%22n%22%3A%5B1%5D%7D");
        assert_eq!(
            r.headers,
            [
                ("X-Tags".to_owned(), "a,b".to_owned()),
                ("X-Point".to_owned(), "x=1,y=2".to_owned()),
                ("Cookie".to_owned(), "session=abc".to_owned())
            ]
        );
    }

    #[test]
    fn a_json_body_object_is_flattened_beside_the_parameters_unless_names_collide() {
        let body = json!({"required": true, "content": {"application/json": {"schema": {
            "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}});
        let o = op(json!([id()]), Some(body));
        assert_eq!(o.input_schema["required"], json!(["id", "name"]));
        let r = build(
            &o,
            json!({"id": "7", "name": "n"}).as_object().unwrap().clone(),
            &[],
        )
        .unwrap();
        assert_eq!(r.body, Some(json!({"name": "n"})));
        let body = json!({"content": {"application/json": {"schema": {
            "type": "object", "properties": {"id": {"type": "string"}}}}}});
        let o = op(json!([id()]), Some(body));
        assert_eq!(
            o.input_schema["properties"]["body"]["properties"]["id"],
            json!({"type": "string"})
        );
        let r = build(&o, json!({"id": "7"}).as_object().unwrap().clone(), &[]).unwrap();
        assert_eq!(r.body, None, "an optional body not given is not sent");
    }
}
