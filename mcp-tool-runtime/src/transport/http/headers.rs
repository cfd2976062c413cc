//! The headers of a stateless (2026-07-28) request, checked against its body: the protocol
//! version (`MCP-Protocol-Version` against `_meta`), the method (`Mcp-Method`), the name a
//! request acts on (`Mcp-Name`: a tool's or a prompt's name, a resource's URI, a task's id),
//! and the arguments a tool's input schema mirrors into headers (`x-mcp-header` →
//! `Mcp-Param-<Name>`). A value may be sent as `=?base64?…?=`. Every mismatch is -32020.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use axum::http::HeaderMap;
use axum::http::header::HeaderName;

use crate::protocol::request::{Method, Request};
use crate::protocol::walk::JsonText;
use crate::protocol::{ProtocolVersion, RpcError, code};
use crate::server::ServerHandle;

pub(super) const METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
pub(super) const NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");

fn mismatch(message: String) -> RpcError {
    RpcError::new(code::HEADER_MISMATCH, message)
}

/// A header's value: trimmed of surrounding whitespace, decoded when sent as
/// `=?base64?…?=`; an error for one that is not text or not valid base64 of UTF-8.
fn header_value(headers: &HeaderMap, name: &HeaderName) -> Result<Option<String>, RpcError> {
    let Some(raw) = headers.get(name) else {
        return Ok(None);
    };
    let text = raw
        .to_str()
        .map_err(|_| mismatch(format!("Header mismatch: `{name}` is not visible ASCII")))?
        .trim_matches([' ', '\t']);
    match text
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        None => Ok(Some(text.to_owned())),
        Some(encoded) => STANDARD
            .decode(encoded)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .map(Some)
            .ok_or_else(|| {
                mismatch(format!(
                    "Header mismatch: `{name}` is not valid base64 of UTF-8 text"
                ))
            }),
    }
}

/// Checks a stateless request's `_meta` and headers, in the version's order: the required
/// `_meta` fields (-32602), the version header against `_meta` (-32020), the version
/// (-32022), then `Mcp-Method`, `Mcp-Name` and the tool's `Mcp-Param-*` headers (-32020).
pub(super) fn check(
    server: &ServerHandle,
    headers: &HeaderMap,
    header_version: Option<&str>,
    request: &Request<'_>,
) -> Result<ProtocolVersion, RpcError> {
    let method: &str = &request.name;
    let meta = request.stateless_meta()?;
    if let Some(header) = header_version
        && header != meta.declared_version
    {
        return Err(mismatch(format!(
            "Header mismatch: MCP-Protocol-Version `{header}` does not match `_meta` `{}`",
            meta.declared_version
        )));
    }
    let version = meta.version()?;
    match header_value(headers, &METHOD_HEADER)? {
        None => {
            return Err(mismatch(
                "Header mismatch: the Mcp-Method header is required".into(),
            ));
        }
        Some(m) if m != method => {
            return Err(mismatch(format!(
                "Header mismatch: Mcp-Method `{m}` does not match the body's method `{method}`"
            )));
        }
        Some(_) => {}
    }
    let Some(body_name) = request.target() else {
        return Ok(version);
    };
    // A member that is no string is the handler's to refuse; it mirrors no header.
    let body_name = body_name.ok().flatten();
    match (header_value(headers, &NAME_HEADER)?, body_name.as_deref()) {
        (None, _) => {
            return Err(mismatch(format!(
                "Header mismatch: `{method}` needs the Mcp-Name header"
            )));
        }
        (Some(h), Some(b)) if h == b => {}
        (Some(h), b) => {
            return Err(mismatch(format!(
                "Header mismatch: Mcp-Name `{h}` does not match the body's `{}`",
                b.unwrap_or("")
            )));
        }
    }
    if request.method == Method::ToolsCall
        && let Some(tool) = body_name.as_deref()
    {
        check_params(server, headers, tool, request.members.arguments)?;
    }
    Ok(version)
}

/// The arguments a tool's input schema mirrors into `Mcp-Param-<Name>` headers: each must be
/// sent when the argument has a value, must not be sent when it has none, and must match.
fn check_params(
    server: &ServerHandle,
    headers: &HeaderMap,
    tool: &str,
    arguments: Option<JsonText<'_>>,
) -> Result<(), RpcError> {
    let catalog = server.catalog();
    let Some(entry) = catalog.get(tool) else {
        return Ok(());
    };
    let mirrored = entry.def.param_headers();
    if mirrored.is_empty() {
        return Ok(());
    }
    // Only a tool that mirrors arguments has its arguments read here (as values).
    let arguments = arguments
        .and_then(|a| serde_json::from_str::<serde_json::Map<String, Value>>(a.get()).ok());
    let arguments = arguments.as_ref();
    for mirrored in mirrored {
        let property = &mirrored.argument;
        let Ok(name) = HeaderName::try_from(format!("mcp-param-{}", mirrored.header)) else {
            continue;
        };
        let body = arguments
            .and_then(|a| a.get(property))
            .and_then(|v| match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                Value::Bool(b) => Some(b.to_string()),
                _ => None,
            });
        // Integers compare as numbers: `42` in the header agrees with `42.0` in the body.
        let same = |h: &str, b: &str| {
            h == b
                || matches!(arguments.and_then(|a| a.get(property)), Some(Value::Number(n))
                    if h.parse::<f64>().ok() == n.as_f64())
        };
        match (header_value(headers, &name)?, body) {
            (None, None) => {}
            (Some(h), Some(b)) if same(&h, &b) => {}
            (None, Some(_)) => {
                return Err(mismatch(format!(
                    "Header mismatch: argument `{property}` has a value, so the `{name}` header is required"
                )));
            }
            (Some(_), None) => {
                return Err(mismatch(format!(
                    "Header mismatch: `{name}` is sent, but argument `{property}` has no value"
                )));
            }
            (Some(h), Some(b)) => {
                return Err(mismatch(format!(
                    "Header mismatch: `{name}` is `{h}`, but argument `{property}` is `{b}`"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn values_are_trimmed_and_base64_decoded_strictly() {
        let h = headers(&[("mcp-name", "  tool  ")]);
        assert_eq!(
            header_value(&h, &NAME_HEADER).unwrap().as_deref(),
            Some("tool")
        );
        let h = headers(&[("mcp-name", "=?base64?SGVsbG8=?=")]);
        assert_eq!(
            header_value(&h, &NAME_HEADER).unwrap().as_deref(),
            Some("Hello")
        );
        for bad in ["=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?="] {
            let h = headers(&[("mcp-name", bad)]);
            assert_eq!(
                header_value(&h, &NAME_HEADER).unwrap_err().code,
                code::HEADER_MISMATCH
            );
        }
        let h = headers(&[("mcp-name", "=?base64?SGVsbG8=")]);
        assert_eq!(
            header_value(&h, &NAME_HEADER).unwrap().as_deref(),
            Some("=?base64?SGVsbG8="),
            "without its suffix it is a literal"
        );
    }
}
