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

use super::{fetch_error, unauthorized};

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

/// Discovers where `server`'s tokens come from, after its challenge.
pub(super) async fn discover(
    http: &reqwest::Client,
    server: &str,
    challenge: &Challenge,
) -> Result<Discovered, ClientError> {
    let urls = match challenge.get("resource_metadata") {
        Some(url) => vec![url.to_owned()],
        None => protected_resource_urls(server),
    };
    let mut prm: Option<ResourceMetadata> = None;
    for url in &urls {
        if !url.starts_with("https://") && !url.starts_with("http://") {
            return Err(unauthorized(format!(
                "the resource metadata address `{url}` is not an http(s) URL"
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
            "the authorization server `{issuer}` is not an http(s) URL"
        )));
    }
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
    use super::resource_covers;

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
