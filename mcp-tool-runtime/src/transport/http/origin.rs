//! Host and Origin checks: DNS rebinding protection. By default only loopback names are
//! accepted in `Host` and `Origin`; a configured list replaces that (`*` accepts any).

use axum::http::StatusCode;
use axum::http::header::HeaderValue;

use crate::protocol::code;

use crate::transport::http::config::HttpConfig;
use crate::transport::http::refusal::{Refusal, refuse};

/// Host and Origin checks (DNS rebinding protection), of a request's `Host` and `Origin`
/// values (`None`: not sent).
pub(super) fn check_origin(
    config: &HttpConfig,
    host: Option<&HeaderValue>,
    origin: Option<&HeaderValue>,
) -> Result<(), Refusal> {
    if let Some(host) = host {
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
    if let Some(origin) = origin {
        let origin = origin.to_str().unwrap_or("");
        let listed = |list: &[String]| {
            list.iter()
                .any(|a| a == "*" || a.eq_ignore_ascii_case(origin))
        };
        let allowed = match &config.allowed_origins {
            None => origin_host(origin).is_some_and(is_loopback_host),
            Some(list) => listed(list),
        } || config.cors_origins.as_deref().is_some_and(listed);
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

/// `host[:port]` without the port (IPv6 literals keep their brackets). Anything that is not
/// exactly a name and an optional numeric port (`[::1]evil.com`, `host:abc`) is returned whole,
/// so that it matches no allowed name.
fn strip_port(host: &str) -> &str {
    let port_ok = |port: &str| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit());
    if host.starts_with('[') {
        return match host.find(']') {
            Some(end) if end + 1 == host.len() => host,
            Some(end) => match host[end + 1..].strip_prefix(':') {
                Some(port) if port_ok(port) => &host[..=end],
                _ => host,
            },
            None => host,
        };
    }
    // One colon, then digits only (a second colon is no digit).
    match host.bytes().position(|b| b == b':') {
        Some(colon) if port_ok(&host[colon + 1..]) => &host[..colon],
        _ => host,
    }
}

fn is_loopback_host(host: &str) -> bool {
    let name = strip_port(host).as_bytes();
    let suffix = b".localhost";
    [&b"localhost"[..], b"127.0.0.1", b"[::1]"]
        .iter()
        .any(|loopback| name.eq_ignore_ascii_case(loopback))
        || name.len() >= suffix.len()
            && name[name.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_stripped_only_when_they_are_ports() {
        assert_eq!(strip_port("localhost:8080"), "localhost");
        assert_eq!(strip_port("[::1]:80"), "[::1]");
        assert_eq!(strip_port("[::1]"), "[::1]");
        assert_eq!(strip_port("example.com"), "example.com");
        assert_eq!(strip_port("[::1]evil.com"), "[::1]evil.com");
        assert_eq!(strip_port("[::1]:80evil"), "[::1]:80evil");
        assert_eq!(strip_port("host:abc"), "host:abc");
        assert_eq!(strip_port("host:80:80"), "host:80:80");
        assert_eq!(strip_port("::1"), "::1");
        assert_eq!(strip_port("host:"), "host:");
        assert!(is_loopback_host("[::1]:8080"));
        assert!(!is_loopback_host("[::1]evil.com"));
        assert!(!is_loopback_host("[::1].evil.com"));
        assert!(!is_loopback_host("127.0.0.1.evil.com"));
    }
}
