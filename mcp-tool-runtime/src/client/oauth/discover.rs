//! Where a protected server's tokens come from: its resource metadata (RFC 9728), from the
//! challenge's `resource_metadata` or the well-known URLs, its `resource` checked against the
//! server's URL; then its authorization server's metadata (RFC 8414, OpenID Connect), its
//! `issuer` checked; and a server of 2025-03-26 without either, at its origin's default
//! endpoints.

use serde::Deserialize;

use crate::client::ClientError;
use crate::protocol::oauth::fetch;
use crate::protocol::oauth::{
    AuthServerMetadata, Challenge, MetadataError, discover_authorization_server, origin_and_path,
    protected_resource_urls,
};

use super::{excerpt, fetch_error, unauthorized};

/// The protected resource's metadata (RFC 9728): what the client reads of it.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct ResourceMetadata {
    resource: String,
    #[serde(default)]
    authorization_servers: Vec<String>,
    #[serde(default)]
    scopes_supported: Option<Vec<String>>,
}

/// Where the last discovery led.
#[derive(Debug, Clone)]
pub(super) struct Discovered {
    /// The resource identifier tokens are asked for (RFC 8707).
    pub(super) resource: String,
    /// The issuer, exactly as the resource names it.
    pub(super) issuer: String,
    pub(super) metadata: AuthServerMetadata,
    /// Whether the metadata was found (a server of 2025-03-26 may have none: its default
    /// endpoints are used, and PKCE support is not advertised).
    pub(super) documented: bool,
    pub(super) scopes_supported: Option<Vec<String>>,
}

/// Whether tokens for `resource` may be sent to `server` (RFC 8707, RFC 9728 §3.3): the same
/// origin, and the server's path at or under the resource's.
fn resource_covers(resource: &str, server: &str) -> bool {
    let (resource_origin, resource_path) = origin_and_path(resource);
    let (server_origin, server_path) = origin_and_path(server);
    let normal = |origin: &str| {
        let lower = origin.to_ascii_lowercase();
        lower
            .strip_suffix(":443")
            .filter(|_| lower.starts_with("https://"))
            .or_else(|| {
                lower
                    .strip_suffix(":80")
                    .filter(|_| lower.starts_with("http://"))
            })
            .map_or(lower.clone(), str::to_owned)
    };
    normal(resource_origin) == normal(server_origin)
        && (server_path == resource_path || server_path.starts_with(&format!("{resource_path}/")))
}

/// What discovery may reach beyond the server's own origin: the issuer the credentials are
/// pinned to, if any, and the origins trusted by configuration.
pub(super) struct Trust<'a> {
    pub(super) issuer: Option<&'a str>,
    pub(super) origins: &'a [String],
}

/// The origin of `url` (`scheme://host:port`, the port always said), if it is an http(s) URL.
fn origin(url: &str) -> Option<String> {
    let url = reqwest::Url::parse(url).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    Some(format!(
        "{}://{}:{}",
        url.scheme(),
        url.host_str()?.to_ascii_lowercase(),
        url.port_or_known_default()?
    ))
}

/// Whether `url`'s host is this machine or a private network's: a loopback, private,
/// link-local, shared or unspecified address, or `localhost`. (A name that resolves to such an
/// address is not seen here.)
fn internal(url: &str) -> bool {
    use std::net::{IpAddr, Ipv4Addr};
    let Some(host) = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
    else {
        return true;
    };
    let v4 = |ip: Ipv4Addr| {
        let [a, b, ..] = ip.octets();
        ip.is_loopback()
            || ip.is_private()
            || ip.is_link_local()
            || ip.is_unspecified()
            || ip.is_broadcast()
            || (a == 100 && (b & 0xc0) == 64)
    };
    match host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
    {
        Ok(IpAddr::V4(ip)) => v4(ip),
        Ok(IpAddr::V6(ip)) => {
            let first = ip.segments()[0];
            ip.is_loopback()
                || ip.is_unspecified()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || ip.to_ipv4_mapped().is_some_and(v4)
        }
        Err(_) => {
            let name = host.trim_end_matches('.');
            name == "localhost" || name.ends_with(".localhost")
        }
    }
}

impl Trust<'_> {
    /// Whether `url`'s origin is trusted by configuration (the pinned issuer's, or one given).
    fn configured(&self, url: &str) -> bool {
        let Some(at) = origin(url) else { return false };
        self.issuer.and_then(origin).as_ref() == Some(&at)
            || self.origins.iter().any(|o| origin(o).as_ref() == Some(&at))
    }

    /// Refuses the resource metadata a challenge names on another origin than `server`'s
    /// (unless trusted): the client would fetch whatever a server names.
    fn resource_metadata(&self, url: &str, server: &str) -> Result<(), ClientError> {
        if origin(url).is_none() {
            return Err(unauthorized(format!(
                "the resource metadata address `{}` is not an http(s) URL",
                excerpt(url)
            )));
        }
        if origin(url) == origin(server) || self.configured(url) {
            return Ok(());
        }
        Err(unauthorized(format!(
            "the server's challenge names resource metadata at `{}`, on another origin than the server's: not fetched (OAuthClient::trusted_origin allows an origin)",
            excerpt(url)
        )))
    }

    /// Refuses an authorization server at an internal address, unless the server is at one
    /// too or it is configured; and, with an issuer pinned, any other authorization server.
    fn authorization_server(&self, issuer: &str, server: &str) -> Result<(), ClientError> {
        if let Some(pinned) = self.issuer
            && pinned != issuer
        {
            return Err(moved(issuer, pinned));
        }
        if internal(issuer) && !internal(server) && !self.configured(issuer) {
            return Err(unauthorized(format!(
                "the server names the authorization server `{}`, at a loopback or private address while the server is not: not contacted (OAuthClient::trusted_origin allows an origin)",
                excerpt(issuer)
            )));
        }
        Ok(())
    }
}

/// Checks `issuer` against the pin (set meanwhile by another flow, maybe), and pins it when
/// none is and the client has credentials of its `own` to protect.
pub(super) fn pin(pinned: &mut Option<String>, issuer: &str, own: bool) -> Result<(), ClientError> {
    match pinned {
        Some(p) if p != issuer => Err(moved(issuer, p)),
        None if own => {
            *pinned = Some(issuer.to_owned());
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The refusal of an authorization server that is not the pinned one.
fn moved(issuer: &str, pinned: &str) -> ClientError {
    unauthorized(format!(
        "the server names the authorization server `{}`, but this client's credentials belong to `{pinned}`: nothing is sent to `{}` (if the server has moved, configure its issuer)",
        excerpt(issuer),
        excerpt(issuer)
    ))
}

/// Discovers where `server`'s tokens come from, after its challenge.
pub(super) async fn discover(
    http: &reqwest::Client,
    server: &str,
    challenge: &Challenge,
    trust: &Trust<'_>,
) -> Result<Discovered, ClientError> {
    let urls = match challenge.get("resource_metadata") {
        Some(url) => {
            trust.resource_metadata(url, server)?;
            vec![url.to_owned()]
        }
        None => protected_resource_urls(server),
    };
    let mut prm: Option<ResourceMetadata> = None;
    for url in &urls {
        if !url.starts_with("https://") && !url.starts_with("http://") {
            return Err(unauthorized(format!(
                "the resource metadata address `{}` is not an http(s) URL",
                excerpt(url)
            )));
        }
        if let Some(found) = fetch::json(http.get(url), url, true)
            .await
            .map_err(fetch_error)?
        {
            prm = Some(found);
            break;
        }
    }
    let legacy = prm.is_none();
    let (resource, issuer, scopes_supported) = match prm {
        Some(prm) => {
            if !resource_covers(&prm.resource, server) {
                return Err(unauthorized(format!(
                    "the server's resource metadata names the resource `{}`, which is not `{}`: no token is asked for it",
                    prm.resource, server
                )));
            }
            let Some(issuer) = prm.authorization_servers.first() else {
                return Err(unauthorized(
                    "the server's resource metadata names no authorization server",
                ));
            };
            (prm.resource.clone(), issuer.clone(), prm.scopes_supported)
        }
        // No resource metadata: a server of 2025-03-26, whose origin is its
        // authorization server.
        None => (
            server.to_owned(),
            origin_and_path(server).0.to_owned(),
            None,
        ),
    };
    if !issuer.starts_with("https://") && !issuer.starts_with("http://") {
        return Err(unauthorized(format!(
            "the authorization server `{}` is not an http(s) URL",
            excerpt(&issuer)
        )));
    }
    trust.authorization_server(&issuer, server)?;
    let (metadata, documented) = match discover_authorization_server(http, &issuer).await {
        Ok(metadata) => (metadata, true),
        // Only a server of 2025-03-26 (no resource metadata) may have an authorization server
        // without metadata: one a resource names must publish its own.
        Err(MetadataError::Missing(..)) if legacy => {
            // 2025-03-26's default endpoints, at the issuer's origin.
            let origin = origin_and_path(&issuer).0;
            (
                AuthServerMetadata {
                    issuer: issuer.clone(),
                    authorization_endpoint: Some(format!("{origin}/authorize")),
                    token_endpoint: Some(format!("{origin}/token")),
                    registration_endpoint: Some(format!("{origin}/register")),
                    ..AuthServerMetadata::default()
                },
                false,
            )
        }
        Err(e) => return Err(unauthorized(e.to_string())),
    };
    Ok(Discovered {
        resource,
        issuer,
        metadata,
        documented,
        scopes_supported,
    })
}

#[cfg(test)]
mod tests {
    use super::{Trust, internal, resource_covers};

    #[test]
    fn internal_addresses_are_told_apart() {
        for url in [
            "http://127.0.0.1:8080/x",
            "http://10.1.2.3/",
            "http://172.16.0.1/",
            "http://192.168.1.1/",
            "http://169.254.169.254/latest/meta-data",
            "http://100.64.0.1/",
            "http://0.0.0.0/",
            "http://[::1]:9/",
            "http://[fd00::1]/",
            "http://[fe80::1]/",
            "http://[::ffff:10.0.0.1]/",
            "http://localhost:3000/",
            "http://api.localhost/",
        ] {
            assert!(internal(url), "{url}");
        }
        for url in [
            "https://auth.example.com/",
            "http://8.8.8.8/",
            "http://[2001:db8::1]/",
            "http://172.32.0.1/",
        ] {
            assert!(!internal(url), "{url}");
        }
    }

    #[test]
    fn discovery_reaches_only_the_origins_it_may() {
        let none = Trust {
            issuer: None,
            origins: &[],
        };
        let server = "https://mcp.example.com/mcp";
        let ok = |t: &Trust<'_>, url: &str| t.resource_metadata(url, server).is_ok();
        assert!(ok(&none, "https://mcp.example.com:443/.well-known/x"));
        assert!(!ok(&none, "https://other.example.com/.well-known/x"));
        assert!(!ok(&none, "http://169.254.169.254/latest"));
        assert!(!ok(&none, "file:///etc/passwd"));
        let trusted = ["https://other.example.com".to_owned()];
        let some = Trust {
            issuer: Some("https://auth.example.com"),
            origins: &trusted,
        };
        assert!(ok(&some, "https://other.example.com/.well-known/x"));
        assert!(ok(&some, "https://auth.example.com/.well-known/x"));
        // An authorization server at an internal address: only for a server at one, or
        // configured; and with an issuer pinned, only that one.
        assert!(
            none.authorization_server("http://10.0.0.1", server)
                .is_err()
        );
        assert!(
            none.authorization_server("http://127.0.0.1:9/as", "http://127.0.0.1:8/mcp")
                .is_ok()
        );
        assert!(
            none.authorization_server("https://auth.example.com", server)
                .is_ok()
        );
        assert!(
            some.authorization_server("https://auth.example.com", server)
                .is_ok()
        );
        let e = some
            .authorization_server("https://evil.example.com", server)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("https://evil.example.com") && e.contains("https://auth.example.com"),
            "{e}"
        );
    }

    #[test]
    fn a_resource_covers_its_own_url_and_those_under_it() {
        assert!(resource_covers("http://h:1/mcp", "http://h:1/mcp"));
        assert!(resource_covers("http://h:1", "http://h:1/mcp"));
        assert!(resource_covers("http://h:1/", "http://h:1/mcp"));
        assert!(resource_covers("HTTPS://H/mcp", "https://h:443/mcp/"));
        assert!(!resource_covers("http://h:1/mcp", "http://h:1/mcpx"));
        assert!(!resource_covers("http://h:1/other", "http://h:1/mcp"));
        assert!(!resource_covers("http://h:2/mcp", "http://h:1/mcp"));
        assert!(!resource_covers(
            "https://evil.example.com/mcp",
            "http://h:1/mcp"
        ));
    }
}
