//! Arguments mirrored into HTTP headers (MCP 2026-07-28, `x-mcp-header`): a property of a
//! tool's input schema that carries `"x-mcp-header": "Region"` is sent by clients over
//! Streamable HTTP as `Mcp-Param-Region` too, so that load balancers and gateways can route on
//! it without reading the body.
//!
//! The rules are checked once, when a server starts: the name is an HTTP token, unique within
//! the tool regardless of case; the property sits directly under the root's `properties`; its
//! type is `string`, `integer` or `boolean` (optionally with `null`). A tool that breaks them is
//! refused with the reason, as clients are told to refuse it.

use serde_json::{Map, Value};

/// One argument mirrored into a header: the argument's name and the header's name part
/// (`Region` for `Mcp-Param-Region`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// The argument's name in the input schema.
    pub argument: String,
    /// The name after `Mcp-Param-`.
    pub header: String,
}

const KEY: &str = "x-mcp-header";

/// Whether `name` is an HTTP field-name token (RFC 9110 §5.6.2: one or more `tchar`).
pub(crate) fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        })
}

/// The mirrored arguments of an input schema, or every rule it breaks.
pub(crate) fn param_headers(schema: &Value) -> Result<Vec<ParamHeader>, Vec<String>> {
    let mut problems = Vec::new();
    let mut found: Vec<ParamHeader> = Vec::new();
    let defs = schema.get("$defs").and_then(Value::as_object);
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (argument, property) in properties {
            // Annotations deeper inside this property are not reachable through `properties`.
            nested(property, &format!("argument `{argument}`"), &mut problems);
            let Some(value) = property.get(KEY) else {
                continue;
            };
            let Some(header) = value.as_str() else {
                problems.push(format!(
                    "argument `{argument}`: `x-mcp-header` must be a string, not `{value}`"
                ));
                continue;
            };
            if !is_token(header) {
                problems.push(format!(
                    "argument `{argument}`: header name `{header}` is not an HTTP token (letters, \
                     digits and !#$%&'*+-.^_`|~, no spaces)"
                ));
                continue;
            }
            if let Some(other) = found.iter().find(|p| p.header.eq_ignore_ascii_case(header)) {
                problems.push(format!(
                    "arguments `{}` and `{argument}` both use header `Mcp-Param-{header}` (header \
                     names ignore case)",
                    other.argument
                ));
                continue;
            }
            if !primitive(property, defs) {
                problems.push(format!(
                    "argument `{argument}` is mirrored into header `Mcp-Param-{header}`, so its \
                     type must be a string, an integer or a boolean"
                ));
                continue;
            }
            found.push(ParamHeader {
                argument: argument.clone(),
                header: header.to_owned(),
            });
        }
    }
    // Annotations anywhere but directly on a root property.
    for (key, value) in schema.as_object().into_iter().flatten() {
        if key != "properties" {
            nested(value, "the input schema", &mut problems);
        }
    }
    if problems.is_empty() {
        Ok(found)
    } else {
        Err(problems)
    }
}

/// How a client sends an argument in its `Mcp-Param-*` header: a string as it is, unless it
/// holds what a header cannot carry as it is (a character beyond ASCII, a control character,
/// or whitespace at either end), then as `=?base64?…?=` of its UTF-8; a number as JSON writes
/// it; a boolean as `true` or `false`. Null (and anything else) sends no header.
#[cfg(feature = "client")]
pub(crate) fn param_value(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(header_text(s)),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// `text` as a header value: as it is when a header carries it unchanged, else
/// `=?base64?…?=` of its UTF-8.
#[cfg(feature = "client")]
pub(crate) fn header_text(text: &str) -> String {
    let unsafe_char = |c: char| !c.is_ascii() || c.is_ascii_control();
    let padded = text.starts_with([' ', '\t']) || text.ends_with([' ', '\t']);
    if padded || text.chars().any(unsafe_char) {
        use base64::Engine as _;
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(text)
        )
    } else {
        text.to_owned()
    }
}

/// Reports an `x-mcp-header` anywhere below `value` (not `value`'s own).
fn nested(value: &Value, within: &str, problems: &mut Vec<String>) {
    let children: Box<dyn Iterator<Item = &Value>> = match value {
        Value::Object(m) => Box::new(m.iter().filter(|(k, _)| *k != KEY).map(|(_, v)| v)),
        Value::Array(a) => Box::new(a.iter()),
        _ => return,
    };
    for child in children {
        if child.get(KEY).is_some() {
            problems.push(format!(
                "{within}: `x-mcp-header` is only allowed directly on a property of the input \
                 schema's root `properties`"
            ));
            return;
        }
        nested(child, within, problems);
    }
}

/// Whether a property's type is a string, an integer or a boolean (or one of them or null);
/// an enumeration's `$ref` is followed.
fn primitive(property: &Value, defs: Option<&Map<String, Value>>) -> bool {
    let allowed = |t: &str| matches!(t, "string" | "integer" | "boolean");
    let resolved = property
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .and_then(|name| defs?.get(name))
        .unwrap_or(property);
    match resolved.get("type") {
        Some(Value::String(t)) => allowed(t),
        Some(Value::Array(types)) => {
            let mut kinds = types
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null");
            kinds.next().is_some_and(allowed) && kinds.next().is_none()
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn headers(schema: Value) -> Result<Vec<(String, String)>, Vec<String>> {
        param_headers(&schema).map(|v| v.into_iter().map(|p| (p.argument, p.header)).collect())
    }

    #[cfg(feature = "client")]
    #[test]
    fn values_are_encoded_as_the_conformance_suite_expects() {
        let encoded = |v: Value| param_value(&v);
        assert_eq!(encoded(json!("us-west1")).as_deref(), Some("us-west1"));
        assert_eq!(encoded(json!("")).as_deref(), Some(""));
        assert_eq!(encoded(json!("us west 1")).as_deref(), Some("us west 1"));
        assert_eq!(encoded(json!(42)).as_deref(), Some("42"));
        assert_eq!(encoded(json!(false)).as_deref(), Some("false"));
        assert_eq!(encoded(json!(null)), None);
        assert_eq!(
            encoded(json!("Hello, 世界")).as_deref(),
            Some("=?base64?SGVsbG8sIOS4lueVjA==?=")
        );
        assert_eq!(
            encoded(json!(" padded ")).as_deref(),
            Some("=?base64?IHBhZGRlZCA=?=")
        );
        assert_eq!(
            encoded(json!("line1\r\nline2")).as_deref(),
            Some("=?base64?bGluZTENCmxpbmUy?=")
        );
        assert_eq!(
            encoded(json!("\tindented")).as_deref(),
            Some("=?base64?CWluZGVudGVk?=")
        );
    }

    #[test]
    fn tokens() {
        for ok in ["Region", "X-Tenant", "a.b", "t~1", "!#$%&'*+-.^_`|~"] {
            assert!(is_token(ok), "{ok}");
        }
        for bad in ["", "a b", "a:b", "é", "a\r\nb", "(x)", "a/b"] {
            assert!(!is_token(bad), "{bad:?}");
        }
    }

    #[test]
    fn finds_root_properties() {
        let found = headers(json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "n": {"type": ["integer", "null"], "x-mcp-header": "N"},
                "b": {"type": "boolean", "x-mcp-header": "Flag"},
                "plain": {"type": "string"}
            }
        }))
        .unwrap();
        assert_eq!(found.len(), 3);
        assert!(found.contains(&("region".into(), "Region".into())));
    }

    #[test]
    fn follows_an_enum_ref() {
        let found = headers(json!({
            "type": "object",
            "properties": {"unit": {"$ref": "#/$defs/Unit", "x-mcp-header": "Unit"}},
            "$defs": {"Unit": {"type": "string", "enum": ["c", "f"]}}
        }))
        .unwrap();
        assert_eq!(found, vec![("unit".into(), "Unit".into())]);
    }

    #[test]
    fn refuses_what_the_rules_forbid() {
        let problems = headers(json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "x-mcp-header": "Same"},
                "b": {"type": "string", "x-mcp-header": "same"},
                "c": {"type": "string", "x-mcp-header": "has space"},
                "d": {"type": "number", "x-mcp-header": "D"},
                "e": {"type": "object", "x-mcp-header": "E"},
                "f": {"type": "string", "x-mcp-header": 3},
                "g": {"type": "array", "items": {"type": "string", "x-mcp-header": "G"}},
                "h": {"type": ["string", "integer"], "x-mcp-header": "H"}
            },
            "$defs": {"X": {"type": "string", "x-mcp-header": "X"}}
        }))
        .unwrap_err();
        let text = problems.join("\n");
        for needle in [
            "`a` and `b` both use header `Mcp-Param-same`",
            "`has space` is not an HTTP token",
            "argument `d` is mirrored",
            "argument `e` is mirrored",
            "argument `f`: `x-mcp-header` must be a string",
            "argument `g`: `x-mcp-header` is only allowed directly",
            "argument `h` is mirrored",
            "the input schema: `x-mcp-header` is only allowed",
        ] {
            assert!(text.contains(needle), "{needle} in\n{text}");
        }
    }
}
