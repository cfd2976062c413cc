//! Host and Origin checks: DNS rebinding protection. By default only loopback names are
//! accepted in `Host` and `Origin`; a configured list replaces that (`*` accepts any).

use axum::http::StatusCode;
use axum::http::header::{self, HeaderMap};

use crate::protocol::code;

use super::config::HttpConfig;
use super::endpoint::{Refusal, refuse};

/// Host and Origin checks (DNS rebinding protection).
pub(super) fn check_origin(config: &HttpConfig, headers: &HeaderMap) -> Result<(), Refusal> {
    if let Some(host) = headers.get(header::HOST) {
        let host = host.to_str().unwrap_or("");
        let allowed = match &config.allowed_hosts {
            None => is_loopback_host(host),
            Some(list) => list.iter().any(|a| a == "*" || host_matches(a, host)),
        };
        if !allowed {
            return Err(refuse(
                StatusCode::FORBIDDEN,
                code::INVALID_REQUEST,
                &format!("Forbidden: Host `{host}` is not allowed"),
            ));
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let allowed = match &config.allowed_origins {
            None => origin_host(origin).is_some_and(is_loopback_host),
            Some(list) => list
                .iter()
                .any(|a| a == "*" || a.eq_ignore_ascii_case(origin)),
        };
        if !allowed {
            return Err(refuse(
                StatusCode::FORBIDDEN,
                code::INVALID_REQUEST,
                &format!("Forbidden: Origin `{origin}` is not allowed"),
            ));
        }
    }
    Ok(())
}

/// `host[:port]` without the port (IPv6 literals keep their brackets).
fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    host.rsplit_once(':').map_or(host, |(name, _)| name)
}

fn is_loopback_host(host: &str) -> bool {
    let name = strip_port(host).to_ascii_lowercase();
    name == "localhost" || name == "127.0.0.1" || name == "[::1]" || name.ends_with(".localhost")
}

fn host_matches(allowed: &str, host: &str) -> bool {
    allowed.eq_ignore_ascii_case(host) || allowed.eq_ignore_ascii_case(strip_port(host))
}

/// The host part of an origin (`scheme://host[:port]`).
fn origin_host(origin: &str) -> Option<&str> {
    origin
        .split_once("://")
        .map(|(_, rest)| rest.trim_end_matches('/'))
}
