//! CORS for clients that run in a browser (`HttpConfig::cors_origins`; off by default): a
//! preflight from an origin on the list is answered here with the methods and the MCP headers
//! a client sends, and every answer to such an origin names it and exposes the headers a
//! client reads (`Mcp-Session-Id`, `MCP-Protocol-Version`, `WWW-Authenticate`). An origin not
//! on the list gets no CORS headers (and its requests are refused by the Origin check).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The request headers a browser may send: those of the MCP transport, and `Mcp-Param-*`.
const ALLOWED: [&str; 9] = [
    "content-type",
    "accept",
    "authorization",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
    "mcp-method",
    "mcp-name",
    "traceparent",
];

/// The response headers a browser's script may read.
const EXPOSED: &str = "mcp-session-id, mcp-protocol-version, www-authenticate";

/// How long a browser may keep a preflight's answer (seconds).
const MAX_AGE: &str = "600";

/// The origins CORS answers, as configured.
pub(crate) type Origins = Arc<[String]>;

/// The CORS layer: preflights answered, answers to listed origins marked.
pub(crate) async fn cors(State(origins): State<Origins>, request: Request, next: Next) -> Response {
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .filter(|o| {
            origins
                .iter()
                .any(|a| a == "*" || a.eq_ignore_ascii_case(o))
        })
        .and_then(|o| HeaderValue::from_str(o).ok());
    if request.method() == Method::OPTIONS {
        let Some(origin) = origin else {
            return StatusCode::FORBIDDEN.into_response();
        };
        let mut response = StatusCode::NO_CONTENT.into_response();
        let headers = response.headers_mut();
        mark(headers, origin);
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST, DELETE"),
        );
        let asked = request
            .headers()
            .get(header::ACCESS_CONTROL_REQUEST_HEADERS)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let allowed: Vec<&str> = asked
            .split(',')
            .map(str::trim)
            .filter(|h| is_allowed(h))
            .collect();
        if let Ok(value) = HeaderValue::from_str(&allowed.join(", ")) {
            headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, value);
        }
        headers.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static(MAX_AGE),
        );
        return response;
    }
    let mut response = next.run(request).await;
    if let Some(origin) = origin {
        mark(response.headers_mut(), origin);
    }
    response
}

/// Names the origin (and varies on it), and exposes the headers a client reads.
fn mark(headers: &mut HeaderMap, origin: HeaderValue) {
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.append(header::VARY, HeaderValue::from_static("Origin"));
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSED),
    );
}

/// Whether a browser may send the request header `name`.
fn is_allowed(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    ALLOWED.contains(&lower.as_str())
        || lower
            .strip_prefix("mcp-param-")
            .is_some_and(|rest| !rest.is_empty())
}

#[cfg(test)]
mod tests {
    use super::is_allowed;

    #[test]
    fn the_mcp_headers_are_allowed_and_no_others() {
        for name in [
            "Content-Type",
            "Mcp-Session-Id",
            "MCP-Protocol-Version",
            "Mcp-Param-Region",
        ] {
            assert!(is_allowed(name), "{name}");
        }
        for name in ["Cookie", "X-Forwarded-For", "Mcp-Param-", ""] {
            assert!(!is_allowed(name), "{name}");
        }
    }
}
